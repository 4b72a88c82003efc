//! What an axis value does to a scenario: a dotted path into the scenario
//! (`host.ncpus`, `project.0.resource_share`, `project.*.latency_bound_days`)
//! or one of the derived knobs of `interface.md`.

use vcsim_framework::Scenario;

/// A parameter an axis (or `[set]`) may vary.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    /// M projects; project i (1..M) has i x the base FLOPs, latency bound and share.
    Mix,
    /// Every project's latency bound = slack x its mean job run time on one CPU.
    Slack,
    /// work_buf_min = this many hours, work_buf_additional = 0.
    BufferHours,
    /// flops_estimate = flops_mean / f.
    FlopsErrorFactor,
    /// flops_stddev = s x flops_mean.
    FlopsStddevFactor,
    /// A dotted path into the scenario as its TOML names it.
    Path(String),
}

const TOP_KEYS: [&str; 8] = [
    "name",
    "description",
    "seed",
    "duration_days",
    "step_seconds",
    "host",
    "client",
    "project",
];

impl Param {
    pub fn parse(s: &str) -> Result<Param, String> {
        Ok(match s {
            "mix" => Param::Mix,
            "slack" => Param::Slack,
            "buffer_hours" => Param::BufferHours,
            "flops_error_factor" => Param::FlopsErrorFactor,
            "flops_stddev_factor" => Param::FlopsStddevFactor,
            p => {
                let first = p.split('.').next().unwrap_or("");
                if !TOP_KEYS.contains(&first) || p.split('.').any(|seg| seg.is_empty()) {
                    return Err(format!(
                        "unknown parameter `{p}`: use a dotted path into the scenario (like `host.ncpus`, \
                         `project.0.resource_share`, `project.*.latency_bound_days`) or a derived knob \
                         (mix, slack, buffer_hours, flops_error_factor, flops_stddev_factor)"
                    ));
                }
                Param::Path(p.to_string())
            }
        })
    }

    pub fn name(&self) -> &str {
        match self {
            Param::Mix => "mix",
            Param::Slack => "slack",
            Param::BufferHours => "buffer_hours",
            Param::FlopsErrorFactor => "flops_error_factor",
            Param::FlopsStddevFactor => "flops_stddev_factor",
            Param::Path(p) => p,
        }
    }

    /// Whether applying the parameter reads or writes the projects (a
    /// check may then apply the others to a scenario without them).
    pub fn reaches_projects(&self) -> bool {
        match self {
            Param::Mix | Param::Slack | Param::FlopsErrorFactor | Param::FlopsStddevFactor => true,
            Param::BufferHours => false,
            Param::Path(p) => p.split('.').next() == Some("project"),
        }
    }

    /// The order settings apply in: `mix` makes the projects first, paths
    /// and buffers next, and the knobs that derive from a project's job size
    /// (slack, the FLOPs factors) last, so they see the final sizes.
    pub fn order(&self) -> u8 {
        match self {
            Param::Mix => 0,
            Param::Path(_) | Param::BufferHours => 1,
            Param::Slack | Param::FlopsErrorFactor | Param::FlopsStddevFactor => 2,
        }
    }
}

impl Param {
    /// The paths whose values the parameter's value decides (`*`: every
    /// index): what a later setting may overwrite. None for `mix`, which
    /// makes the projects (and applies first).
    fn decides(&self) -> Vec<Vec<String>> {
        let path = |p: &str| p.split('.').map(normal_segment).collect::<Vec<_>>();
        match self {
            Param::Mix => vec![],
            Param::Slack => vec![path("project.*.latency_bound_days")],
            // (`work_buf_additional_days` it sets to 0, whatever its value.)
            Param::BufferHours => vec![path("client.work_buf_min_days")],
            Param::FlopsErrorFactor => vec![path("project.*.app.*.flops_estimate")],
            Param::FlopsStddevFactor => vec![path("project.*.app.*.flops_stddev")],
            Param::Path(p) => vec![path(p)],
        }
    }

    /// The paths the parameter writes.
    fn writes(&self) -> Vec<Vec<String>> {
        let mut w = self.decides();
        if *self == Param::BufferHours {
            w.push(vec!["client".into(), "work_buf_additional_days".into()]);
        }
        w
    }

    /// What the parameter sets, in words, for a message.
    fn what(&self) -> String {
        match self {
            Param::Slack => "every project's `latency_bound_days`".into(),
            Param::BufferHours => {
                "`client.work_buf_min_days` (and `work_buf_additional_days`)".into()
            }
            Param::FlopsErrorFactor => "every app's `flops_estimate`".into(),
            Param::FlopsStddevFactor => "every app's `flops_stddev`".into(),
            Param::Mix | Param::Path(_) => format!("`{}`", self.name()),
        }
    }
}

/// `0`, `00` and `+0` name one index (a path's index is checked as digits
/// when it is applied).
fn normal_segment(seg: &str) -> String {
    match seg.parse::<usize>() {
        Ok(i) if seg.bytes().all(|b| b.is_ascii_digit()) => i.to_string(),
        _ => seg.to_string(),
    }
}

/// Whether a write to `later` overwrites every value `earlier` names.
fn covers(later: &[String], earlier: &[String]) -> bool {
    later.len() == earlier.len() && later.iter().zip(earlier).all(|(l, e)| l == "*" || l == e)
}

/// A setting that changes nothing, because settings applied after it (in
/// [`apply_all`]'s order: by [`Param::order`], then as given) overwrite
/// every value it sets: `project.0.latency_bound_days` next to `slack`,
/// `client.work_buf_min_days` before `buffer_hours`. Its index, the index
/// of a setting that overwrites it, and a message naming both. Two
/// settings of the same parameter are left to the caller (a command line
/// keeps the last of a repeated `--set`; a sweep refuses a key set twice).
pub fn overridden(params: &[&Param]) -> Option<(usize, usize, String)> {
    let at = |i: usize| (params[i].order(), i);
    for (i, p) in params.iter().enumerate() {
        let decides = p.decides();
        if decides.is_empty() {
            continue;
        }
        let mut by = None;
        let dead = decides.iter().all(|d| {
            let j = (0..params.len()).find(|&j| {
                params[j] != *p && at(j) > at(i) && params[j].writes().iter().any(|w| covers(w, d))
            });
            by = by.or(j);
            j.is_some()
        });
        if let (true, Some(j)) = (dead, by) {
            let q = params[j];
            return Some((
                i,
                j,
                format!(
                    "`{}` changes nothing: `{}`, applied after it, sets {} again (mix first, then paths and `buffer_hours`, then `slack` and the FLOPs factors); drop one of the two",
                    p.name(),
                    q.name(),
                    p.what()
                ),
            ));
        }
    }
    None
}

/// A parameter and the value it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub param: Param,
    pub value: serde_json::Value,
}

impl Setting {
    /// `PATH=VALUE` as `vcsim run --set` takes it: the parameter as an axis
    /// names it, the value in TOML's syntax (`4`, `0.5`, `true`,
    /// `"text"`); a value that is not TOML is taken as text (`name=x`).
    pub fn parse_assignment(s: &str) -> Result<Setting, String> {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| format!("`{s}` is not PATH=VALUE (like `host.ncpus=4` or `slack=5`)"))?;
        let (k, v) = (k.trim(), v.trim());
        let param = Param::parse(k).map_err(|m| format!("`{k}`: {m}"))?;
        if v.is_empty() {
            return Err(format!("`{k}`: no value after `=`"));
        }
        // A seed is a u64: one above TOML's largest integer is written as a
        // string in a scenario file, and taken as that string here.
        if k == "seed" && v.parse::<i64>().is_err() && v.parse::<u64>().is_ok() {
            return Ok(Setting {
                param,
                value: serde_json::Value::String(v.to_string()),
            });
        }
        if k == "seed"
            && !v.is_empty()
            && v.bytes().all(|b| b.is_ascii_digit())
            && v.parse::<u64>().is_err()
        {
            return Err(format!(
                "`{k}`: {v} is out of range: a seed is a whole number from 0 to {}",
                u64::MAX
            ));
        }
        // Digits that TOML cannot hold are a number out of range, not text.
        let digits = v.strip_prefix(['+', '-']).unwrap_or(v);
        if !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
            && v.parse::<i64>().is_err()
            && format!("v = {v}").parse::<toml::Table>().is_err()
        {
            return Err(format!(
                "`{k}`: {v} is out of range: a whole number is from {} to {}",
                i64::MIN,
                i64::MAX
            ));
        }
        let value = match format!("v = {v}").parse::<toml::Table>() {
            Ok(mut t) => {
                let tv = t.remove("v").unwrap_or(toml::Value::String(v.to_string()));
                toml_to_json(&tv).map_err(|m| format!("`{k}`: {m}"))?
            }
            Err(_) => serde_json::Value::String(v.to_string()),
        };
        Ok(Setting { param, value })
    }
}

/// Applies settings in the order of their parameters (see
/// [`Param::order`]; settings of the same order keep theirs). The error
/// names the index in `settings` of the one at fault.
pub fn apply_all(scn: &Scenario, settings: &[Setting]) -> Result<Scenario, (usize, Fault)> {
    let mut order: Vec<usize> = (0..settings.len()).collect();
    order.sort_by_key(|&i| settings[i].param.order());
    let mut scn = scn.clone();
    for i in order {
        scn = apply(&scn, &settings[i]).map_err(|f| (i, f))?;
    }
    Ok(scn)
}

fn number(v: &serde_json::Value) -> Result<f64, String> {
    v.as_f64()
        .ok_or_else(|| format!("must be a number, found {v}"))
}

/// Applies one setting. An error here is about the sweep file (a path that
/// does not exist, a value of the wrong kind); values the scenario rejects
/// are left for [`Scenario::validate`].
pub fn apply(scn: &Scenario, s: &Setting) -> Result<Scenario, Fault> {
    apply_inner(scn, s)
}

/// What is wrong with a setting: its parameter (a path that does not
/// exist) or its value (of the wrong kind).
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    Param(String),
    Value(String),
}

impl Fault {
    pub fn message(&self) -> &str {
        match self {
            Fault::Param(m) | Fault::Value(m) => m,
        }
    }
}

fn apply_inner(scn: &Scenario, s: &Setting) -> Result<Scenario, Fault> {
    let v = Fault::Value;
    let mut scn = scn.clone();
    match &s.param {
        Param::Mix => {
            let m = number(&s.value).map_err(v)?;
            let max = vcsim_framework::scenario::bounds::MAX_PROJECTS;
            if m.fract() != 0.0 || !(1.0..=max as f64).contains(&m) {
                return Err(v(format!(
                    "the mix is a whole number of projects from 1 to {max}, found {m}"
                )));
            }
            let base = scn
                .projects
                .first()
                .cloned()
                .ok_or_else(|| v("the scenario has no project".into()))?;
            scn.projects = (1..=m as usize)
                .map(|i| {
                    let f = i as f64;
                    let mut p = base.clone();
                    p.name = format!("P{i}");
                    p.resource_share *= f;
                    p.latency_bound_days *= f;
                    for a in &mut p.apps {
                        a.flops_mean *= f;
                        a.flops_estimate *= f;
                        a.flops_stddev *= f;
                        // An app's own bound scales as the project's, so
                        // that its jobs keep their slack.
                        if let Some(d) = &mut a.latency_bound_days {
                            *d *= f;
                        }
                    }
                    if i > 1 {
                        p.jobs.clear();
                    }
                    p
                })
                .collect();
        }
        Param::Slack => {
            let slack = number(&s.value).map_err(v)?;
            let cpu = scn.host.cpu_flops;
            for p in &mut scn.projects {
                let w: f64 = p.apps.iter().map(|a| a.weight).sum();
                let mean_flops = if w > 0.0 {
                    p.apps.iter().map(|a| a.weight * a.flops_mean).sum::<f64>() / w
                } else {
                    p.apps.iter().map(|a| a.flops_mean).sum::<f64>() / p.apps.len().max(1) as f64
                };
                p.latency_bound_days = slack * mean_flops / cpu / 86400.0;
                // An app with its own bound gets the slack of its own jobs.
                for a in &mut p.apps {
                    if let Some(d) = &mut a.latency_bound_days {
                        *d = slack * a.flops_mean / cpu / 86400.0;
                    }
                }
            }
        }
        Param::BufferHours => {
            let h = number(&s.value).map_err(v)?;
            scn.client.work_buf_min_days = h / 24.0;
            scn.client.work_buf_additional_days = 0.0;
        }
        Param::FlopsErrorFactor => {
            let f = number(&s.value).map_err(v)?;
            if !(f.is_finite() && f > 0.0) {
                return Err(v(format!(
                    "the error factor divides the FLOPs: a positive number, found {f}"
                )));
            }
            for a in scn.projects.iter_mut().flat_map(|p| p.apps.iter_mut()) {
                a.flops_estimate = a.flops_mean / f;
            }
        }
        Param::FlopsStddevFactor => {
            let f = number(&s.value).map_err(v)?;
            for a in scn.projects.iter_mut().flat_map(|p| p.apps.iter_mut()) {
                a.flops_stddev = f * a.flops_mean;
            }
        }
        Param::Path(path) => {
            let mut doc = serde_json::to_value(&scn).map_err(|e| v(e.to_string()))?;
            let segs: Vec<&str> = path.split('.').collect();
            set_path(&mut doc, &segs, &s.value, path).map_err(Fault::Param)?;
            scn = serde_json::from_value(doc).map_err(|e| {
                let leaf = segs.last().copied().unwrap_or_default();
                if e.to_string()
                    .starts_with(&format!("unknown field `{leaf}`"))
                {
                    Fault::Param(format!(
                        "unknown parameter `{path}`: the scenario has no key `{leaf}` there"
                    ))
                } else {
                    v(format!(
                        "cannot set `{path}`: {}",
                        whole_number_message(&e.to_string())
                    ))
                }
            })?;
        }
    }
    Ok(scn)
}

/// serde's "expected u32" said as the range of whole numbers it means.
fn whole_number_message(m: &str) -> String {
    match vcsim_framework::scenario::whole_number_max(m) {
        Some(max) => {
            let found = m
                .split('`')
                .nth(1)
                .map_or(String::new(), |x| format!(", found {x}"));
            format!("must be a whole number from 0 to {max}{found}")
        }
        None => m.to_string(),
    }
}

fn set_path(
    node: &mut serde_json::Value,
    segs: &[&str],
    value: &serde_json::Value,
    whole: &str,
) -> Result<(), String> {
    let Some((seg, rest)) = segs.split_first() else {
        if (node.is_object() || node.is_array()) && value.is_object() {
            // `[set.host] ncpus = 2`: TOML's tables for a dotted path.
            return Err(format!(
                "`{whole}` is a table, not a value: name each parameter by its dotted path, in quotes (`\"{whole}.KEY\" = ...`)"
            ));
        }
        if node.is_object() || node.is_array() {
            return Err(format!("`{whole}` is a table, not a value"));
        }
        *node = value.clone();
        return Ok(());
    };
    match node {
        serde_json::Value::Array(items) => {
            if *seg == "*" {
                if items.is_empty() {
                    return Err(format!("`{whole}`: the list is empty"));
                }
                for it in items.iter_mut() {
                    set_path(it, rest, value, whole)?;
                }
                Ok(())
            } else {
                // Digits only: `+0` and ` 0` would parse, but are not indices.
                let digits = !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit());
                let i: usize = seg.parse().ok().filter(|_| digits).ok_or_else(|| {
                    format!("`{whole}`: `{seg}` must be an index (0, 1, ...) or `*`")
                })?;
                let n = items.len();
                let it = items.get_mut(i).ok_or_else(|| {
                    format!("`{whole}`: index {i} is out of range (the list has {n})")
                })?;
                set_path(it, rest, value, whole)
            }
        }
        serde_json::Value::Object(map) => {
            // A value the scenario leaves out (`gpu_active_fraction`, whose
            // default follows another key) is added; the scenario's reader,
            // which refuses unknown keys, then says whether it is one.
            if rest.is_empty() && !map.contains_key(*seg) {
                map.insert(seg.to_string(), value.clone());
                return Ok(());
            }
            let it = map.get_mut(*seg).ok_or_else(|| {
                format!("unknown parameter `{whole}`: the scenario has no key `{seg}` there")
            })?;
            if it.is_null() {
                return Err(format!(
                    "`{whole}`: `{seg}` is not set in the scenario, so it cannot be varied"
                ));
            }
            set_path(it, rest, value, whole)
        }
        _ => Err(format!(
            "unknown parameter `{whole}`: `{seg}` goes below a value"
        )),
    }
}

/// A TOML value as the JSON the settings are applied to (None for a
/// date, which no setting takes).
pub(crate) fn toml_to_json(v: &toml::Value) -> Result<serde_json::Value, String> {
    Ok(match v {
        toml::Value::String(s) => serde_json::Value::String(s.clone()),
        toml::Value::Integer(i) => serde_json::Value::from(*i),
        toml::Value::Float(f) => serde_json::Value::from(
            serde_json::Number::from_f64(*f)
                .ok_or_else(|| format!("{f} is not a scenario value: give a finite number"))?,
        ),
        toml::Value::Boolean(b) => serde_json::Value::Bool(*b),
        toml::Value::Array(a) => {
            serde_json::Value::Array(a.iter().map(toml_to_json).collect::<Result<_, _>>()?)
        }
        toml::Value::Table(t) => serde_json::Value::Object(
            t.iter()
                .map(|(k, v)| Ok((k.clone(), toml_to_json(v)?)))
                .collect::<Result<_, String>>()?,
        ),
        toml::Value::Datetime(_) => return Err("dates are not scenario values".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_overwritten_in_full_by_a_later_one_is_found() {
        let p = |s: &str| Param::parse(s).unwrap();
        let dead = |ps: &[&str]| {
            let ps: Vec<Param> = ps.iter().map(|s| p(s)).collect();
            let refs: Vec<&Param> = ps.iter().collect();
            overridden(&refs).map(|(i, j, _)| (i, j))
        };
        // A knob of a later rank, whatever the order given.
        assert_eq!(
            dead(&["slack", "project.0.latency_bound_days"]),
            Some((1, 0))
        );
        assert_eq!(
            dead(&["project.*.latency_bound_days", "slack"]),
            Some((0, 1))
        );
        assert_eq!(
            dead(&["project.00.app.1.flops_stddev", "flops_stddev_factor"]),
            Some((0, 1))
        );
        // Of one rank, the later given.
        assert_eq!(
            dead(&["project.0.resource_share", "project.*.resource_share"]),
            Some((0, 1))
        );
        assert_eq!(
            dead(&["project.*.resource_share", "project.0.resource_share"]),
            None
        );
        assert_eq!(
            dead(&["client.work_buf_min_days", "buffer_hours"]),
            Some((0, 1))
        );
        assert_eq!(
            dead(&["buffer_hours", "client.work_buf_min_days"]),
            Some((0, 1))
        );
        // `buffer_hours`'s 0 for the additional buffer is no value of its own.
        assert_eq!(
            dead(&["buffer_hours", "client.work_buf_additional_days"]),
            None
        );
        assert_eq!(
            dead(&["client.work_buf_additional_days", "buffer_hours"]),
            Some((0, 1))
        );
        // Reading a value is not writing it; mix makes the projects first.
        assert_eq!(dead(&["host.cpu_flops", "slack", "mix"]), None);
        assert_eq!(
            dead(&["project.1.resource_share", "project.10.resource_share"]),
            None
        );
    }
    use std::path::Path;

    fn base() -> Scenario {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/paper-base.toml"
        ))
        .unwrap();
        Scenario::from_toml_str(&text, Path::new("paper-base.toml")).unwrap()
    }
    fn set(p: &str, v: serde_json::Value) -> Setting {
        Setting {
            param: Param::parse(p).unwrap(),
            value: v,
        }
    }

    #[test]
    fn digits_beyond_a_whole_number_are_out_of_range_not_text() {
        assert_eq!(
            Setting::parse_assignment("seed=18446744073709551616").unwrap_err(),
            "`seed`: 18446744073709551616 is out of range: a seed is a whole number from 0 to 18446744073709551615"
        );
        for a in [
            "mix=-99999999999999999999",
            "host.ncpus=1_000_000_000_000_000_000_000",
        ] {
            let e = Setting::parse_assignment(a).unwrap_err();
            assert!(e.contains("is out of range: a whole number is from -9223372036854775808 to 9223372036854775807"), "{a}: {e}");
        }
        // A seed is a u64: above TOML's largest integer it is the string a
        // scenario file would hold.
        assert_eq!(
            Setting::parse_assignment("seed=18446744073709551615")
                .unwrap()
                .value,
            serde_json::json!("18446744073709551615")
        );
        // Within range, or text, as before.
        assert_eq!(
            Setting::parse_assignment("seed=9223372036854775807")
                .unwrap()
                .value,
            serde_json::json!(9223372036854775807i64)
        );
        assert_eq!(
            Setting::parse_assignment("name=123abc").unwrap().value,
            serde_json::json!("123abc")
        );
    }

    #[test]
    fn mix_scales_size_bound_and_share() {
        let s = apply(&base(), &set("mix", 3.into())).unwrap();
        assert_eq!(s.projects.len(), 3);
        assert_eq!(s.projects[2].resource_share, 300.0);
        assert_eq!(s.projects[2].latency_bound_days, 27.0);
        assert_eq!(s.projects[2].apps[0].flops_mean, 3.9e13);
        assert!(apply(&base(), &set("mix", 2.5.into())).is_err());
    }

    #[test]
    fn slack_is_bound_over_run_time() {
        let s = apply(&base(), &set("slack", 2.into())).unwrap();
        assert!((s.projects[0].latency_bound_days * 86400.0 - 2.0 * 13000.0).abs() < 1e-6);
    }

    #[test]
    fn an_apps_own_bound_follows_mix_and_slack() {
        // An app's own bound was left as it was: under `slack = 5` its jobs
        // kept another slack, and under `mix` P2's twice longer jobs half it.
        let mut scn = base();
        let mut short = scn.projects[0].apps[0].clone();
        short.name = "short".into();
        short.flops_mean /= 2.0;
        short.latency_bound_days = Some(0.5);
        scn.projects[0].apps.push(short);
        let s = apply(&scn, &set("mix", 2.into())).unwrap();
        assert_eq!(s.projects[1].apps[1].latency_bound_days, Some(1.0));
        let s = apply(&scn, &set("slack", 5.into())).unwrap();
        let run_time = s.projects[0].apps[1].flops_mean / s.host.cpu_flops;
        let bound = s.projects[0].apps[1].latency_bound_days.unwrap() * 86400.0;
        assert!((bound - 5.0 * run_time).abs() < 1e-6, "{bound} {run_time}");
    }

    #[test]
    fn buffer_and_factors() {
        let s = apply(&base(), &set("buffer_hours", 6.into())).unwrap();
        assert_eq!(s.client.work_buf_min_days, 0.25);
        assert_eq!(s.client.work_buf_additional_days, 0.0);
        let s = apply(&base(), &set("flops_error_factor", 4.into())).unwrap();
        assert_eq!(s.projects[0].apps[0].flops_estimate, 1.3e13 / 4.0);
        let s = apply(&base(), &set("flops_stddev_factor", 0.5.into())).unwrap();
        assert_eq!(s.projects[0].apps[0].flops_stddev, 0.65e13);
    }

    /// `[set.host] ncpus = 2` is told how to name the parameter.
    #[test]
    fn a_table_of_values_is_told_to_use_a_dotted_path() {
        let e = apply(&base(), &set("host", serde_json::json!({"ncpus": 2}))).unwrap_err();
        assert!(
            e.message().contains("in quotes (`\"host.KEY\" = ...`)"),
            "{e:?}"
        );
    }

    /// A key the scenario leaves out, whose default follows another key,
    /// is set as the others are; a key no scenario has is still unknown.
    #[test]
    fn a_key_left_out_of_the_scenario_can_be_set() {
        let s = apply(
            &base(),
            &set("host.availability.gpu_active_fraction", 0.5.into()),
        )
        .unwrap();
        assert_eq!(s.host.availability.gpu_active_fraction, Some(0.5));
        let e = apply(&base(), &set("host.availability.gpu_fraction", 0.5.into())).unwrap_err();
        assert_eq!(
            e,
            Fault::Param(
                "unknown parameter `host.availability.gpu_fraction`: the scenario has no key `gpu_fraction` there".into()
            )
        );
        let m = apply(&base(), &set("mix", 2.into())).unwrap();
        let e = apply(&m, &set("project.*.nosuch", 1.into())).unwrap_err();
        assert!(matches!(e, Fault::Param(_)), "{e:?}");
    }

    #[test]
    fn dotted_paths_and_wildcards() {
        let s = apply(&base(), &set("host.ncpus", 4.into())).unwrap();
        assert_eq!(s.host.ncpus, 4);
        let m = apply(&base(), &set("mix", 2.into())).unwrap();
        let s = apply(&m, &set("project.*.latency_bound_days", 3.into())).unwrap();
        assert!(s.projects.iter().all(|p| p.latency_bound_days == 3.0));
        assert!(apply(&base(), &set("host.ncpu", 4.into()))
            .unwrap_err()
            .message()
            .contains("ncpu"));
        assert!(matches!(
            apply(&base(), &set("host.ncpus", 2.5.into())),
            Err(Fault::Value(_))
        ));
        assert!(apply(&base(), &set("project.3.resource_share", 1.into()))
            .unwrap_err()
            .message()
            .contains("out of range"));
        // An index is digits: `+0` parses as a number but names nothing.
        assert!(apply(&base(), &set("project.+0.resource_share", 1.into()))
            .unwrap_err()
            .message()
            .contains("`+0` must be an index"));
        assert!(Param::parse("hots.ncpus").is_err());
    }

    #[test]
    fn assignments_parse_toml_values_and_apply_in_order() {
        let a = |s: &str| Setting::parse_assignment(s);
        assert_eq!(a("host.ncpus=4").unwrap(), set("host.ncpus", 4.into()));
        assert_eq!(a(" slack = 0.5 ").unwrap(), set("slack", 0.5.into()));
        assert_eq!(a("name=x y").unwrap(), set("name", "x y".into()));
        assert_eq!(a("name=\"q\"").unwrap(), set("name", "q".into()));
        assert!(a("host.ncpus").unwrap_err().contains("PATH=VALUE"));
        assert!(a("hots.ncpus=1").unwrap_err().contains("`hots.ncpus`"));
        assert!(a("slack=").unwrap_err().contains("no value"));
        // `slack` applies after `mix`, whatever the order given.
        let both = [a("slack=2").unwrap(), a("mix=2").unwrap()];
        let s = apply_all(&base(), &both).unwrap();
        let want = apply(&apply(&base(), &both[1]).unwrap(), &both[0]).unwrap();
        assert_eq!(s.projects.len(), 2);
        assert_eq!(
            s.projects[1].latency_bound_days,
            want.projects[1].latency_bound_days
        );
        let bad = [a("slack=2").unwrap(), a("host.ncpus=x").unwrap()];
        assert!(matches!(
            apply_all(&base(), &bad),
            Err((1, Fault::Value(_)))
        ));
    }
}
