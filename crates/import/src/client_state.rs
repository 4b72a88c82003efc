//! A client's `client_state.xml` (a real client's, or the BOINC client
//! emulator's input with its extra tags) with its preferences.

use crate::emit::{num, Section, Val};
use crate::xml::{child, elems, tag, Src, Unmodelled};
use crate::{prefs, scenario_head, ImportError, Input};
use roxmltree::Node;
use std::collections::HashMap;

/// The emulator's defaults where an app says nothing (BOINC `client/sim.cpp`,
/// `get_app_params`).
const DEFAULT_FPOPS_EST: f64 = 3600e9;
const DEFAULT_LATENCY_S: f64 = 86400.0;
/// vcsim's default mean available period (the paper's lambda_avail), used
/// where the file has no `*_lambda`.
const DEFAULT_LAMBDA_S: f64 = 1000.0;
/// Days simulated: BOINC's files do not say; the emulator's default
/// `--duration` is one day.
pub const DEFAULT_DURATION_DAYS: f64 = 1.0;

struct Gpu {
    kind: String,
    count: u32,
    flops: Option<f64>,
    from: String,
}

/// A BOINC app version, the newest of its plan class.
struct Version<'a, 'i> {
    plan_class: String,
    version_num: i64,
    cpus: f64,
    cpus_from: String,
    gpu: Option<(String, f64)>,
    flops: Option<f64>,
    node: Node<'a, 'i>,
}

struct ProjectNodes<'a, 'i> {
    node: Node<'a, 'i>,
    apps: Vec<Node<'a, 'i>>,
    versions: Vec<Node<'a, 'i>>,
    wus: Vec<Node<'a, 'i>>,
    results: Vec<Node<'a, 'i>>,
}

/// What the import of one vcsim app (a BOINC app on one kind of processor) needs.
struct VApp {
    name: String,
    boinc_app: String,
    plan_class: String,
    version_num: i64,
    cpus: f64,
    cpus_from: String,
    gpu: Option<(String, f64)>,
    /// vcsim's speed for a job / the app version's `<flops>`.
    scale: f64,
    scale_note: String,
    weight: f64,
    weight_from: String,
    input_mb: Option<f64>,
    output_mb: Option<f64>,
}

fn gpu_kind(t: &str) -> String {
    match t.to_ascii_lowercase().as_str() {
        "cuda" | "nvidia" | "coproc_cuda" => "nvidia".into(),
        "ati" | "amd" | "cal" | "coproc_ati" => "amd".into(),
        "intel_gpu" | "intel" | "coproc_intel_gpu" => "intel".into(),
        "apple_gpu" | "coproc_apple_gpu" => "apple".into(),
        other => other.to_string(),
    }
}

pub fn import(inp: &Input) -> Result<crate::Imported, ImportError> {
    let (state_path, state_text) = &inp.main;
    let src = Src::parse(state_path, state_text)?;
    let mut un = Unmodelled::default();
    let mut warnings: Vec<String> = Vec::new();
    let root = src.root();
    if tag(root) != "client_state" {
        return Err(src.err(
            root,
            format!(
                "expected <client_state> as the root element, found <{}>",
                tag(root)
            ),
        ));
    }

    // Sort the top level: apps, versions, workunits and results belong to the
    // <project> before them, as in BOINC's state file.
    let mut host_info = None;
    let mut time_stats = None;
    let mut projects: Vec<ProjectNodes> = Vec::new();
    let mut files: HashMap<String, f64> = HashMap::new();
    let mut boinc_bytes = 0.0;
    let mut active: HashMap<(String, String), (f64, Node)> = HashMap::new();
    for n in elems(root) {
        let t = tag(n);
        match t {
            "host_info" => host_info = Some(n),
            "time_stats" => time_stats = Some(n),
            "project" => projects.push(ProjectNodes {
                node: n,
                apps: vec![],
                versions: vec![],
                wus: vec![],
                results: vec![],
            }),
            "app" | "app_version" | "workunit" | "result" => {
                let Some(p) = projects.last_mut() else {
                    return Err(src.err(n, format!("<{t}> comes before any <project>")));
                };
                match t {
                    "app" => p.apps.push(n),
                    "app_version" => p.versions.push(n),
                    "workunit" => p.wus.push(n),
                    _ => p.results.push(n),
                }
            }
            "file_info" | "file" => {
                let name = child(n, "name").map(|c| src.text(c)).unwrap_or_default();
                let bytes = match child(n, "nbytes") {
                    Some(c) => src.non_negative(c)?,
                    None => 0.0,
                };
                boinc_bytes += bytes;
                if let Some(p) = projects.last() {
                    let url = child(p.node, "master_url")
                        .map(|c| src.text(c))
                        .unwrap_or_default();
                    files.insert(format!("{url}\u{0}{name}"), bytes);
                }
                un.rest(&src, t, n, &["name", "nbytes"]);
            }
            "active_task_set" => {
                for at in elems(n) {
                    if tag(at) != "active_task" {
                        un.add(&src, "active_task_set", tag(at));
                        continue;
                    }
                    let url = child(at, "project_master_url")
                        .map(|c| src.text(c))
                        .unwrap_or_default();
                    let rname = child(at, "result_name")
                        .map(|c| src.text(c))
                        .unwrap_or_default();
                    let fd = match child(at, "fraction_done") {
                        Some(c) => {
                            let v = src.non_negative(c)?;
                            if v > 1.0 {
                                return Err(src.err(c, format!("must be in [0, 1], found {v}")));
                            }
                            v
                        }
                        None => 0.0,
                    };
                    active.insert((url, rname), (fd, at));
                    un.rest(
                        &src,
                        "active_task",
                        at,
                        &["project_master_url", "result_name", "fraction_done"],
                    );
                }
            }
            _ => un.add(&src, "client_state", t),
        }
    }

    // ---- host ----
    let Some(hi) = host_info else {
        return Err(src.err(root, "no <host_info>: the host's CPUs are unknown"));
    };
    let ncpus_n =
        child(hi, "p_ncpus").ok_or_else(|| src.err(hi, "no <p_ncpus> (the number of CPUs)"))?;
    let ncpus = src.whole(ncpus_n, 1)?;
    let fpops_n =
        child(hi, "p_fpops").ok_or_else(|| src.err(hi, "no <p_fpops> (FLOPS per CPU)"))?;
    let cpu_flops = src.positive(fpops_n)?;
    let d_total = match child(hi, "d_total") {
        Some(c) => Some((src.non_negative(c)?, c)),
        None => None,
    };
    let d_free = match child(hi, "d_free") {
        Some(c) => Some((src.non_negative(c)?, c)),
        None => None,
    };
    if let Some(m) = child(hi, "m_nbytes") {
        let v = src.non_negative(m)?;
        warnings.push(format!(
            "{}: <m_nbytes> {:.1} GB of memory: vcsim does not model memory",
            src.name(),
            v / 1e9
        ));
    }
    let mut gpus: Vec<Gpu> = Vec::new();
    if let Some(cp) = child(hi, "coprocs") {
        for c in elems(cp) {
            let t = tag(c);
            let kind = match t {
                "coproc_cuda" | "coproc_ati" | "coproc_intel_gpu" | "coproc_apple_gpu" => {
                    gpu_kind(t)
                }
                "coproc" => match child(c, "type") {
                    Some(ty) => gpu_kind(&src.text(ty)),
                    None => return Err(src.err(c, "a <coproc> needs a <type>")),
                },
                _ => {
                    un.add(&src, "coprocs", t);
                    continue;
                }
            };
            let count = match child(c, "count") {
                Some(n) => src.whole(n, 0)?,
                None => 1,
            };
            let flops = match child(c, "peak_flops") {
                Some(n) => Some(src.positive(n)?),
                None => None,
            };
            un.rest(&src, t, c, &["type", "count", "peak_flops"]);
            if count == 0 {
                warnings.push(format!(
                    "{}: <{t}> line {} has <count>0</count>: left out",
                    src.name(),
                    src.line(c)
                ));
                continue;
            }
            if gpus.iter().any(|g| g.kind == kind) {
                warnings.push(format!(
                    "{}: a second `{kind}` coprocessor at line {}: left out (vcsim has one entry per kind)",
                    src.name(),
                    src.line(c)
                ));
                continue;
            }
            gpus.push(Gpu {
                kind,
                count,
                flops,
                from: format!("<{t}>, {} line {}", src.name(), src.line(c)),
            });
        }
    }
    un.rest(
        &src,
        "host_info",
        hi,
        &[
            "p_ncpus", "p_fpops", "d_total", "d_free", "m_nbytes", "coprocs",
        ],
    );

    // ---- time stats: availability and the reference time ----
    let ts_num = |name: &str| -> Result<Option<(f64, Node)>, ImportError> {
        match time_stats.and_then(|t| child(t, name)) {
            Some(c) => Ok(Some((src.num(c)?, c))),
            None => Ok(None),
        }
    };
    let frac = |name: &str| -> Result<Option<(f64, Node)>, ImportError> {
        match time_stats.and_then(|t| child(t, name)) {
            Some(c) => Ok(Some((src.fraction(c)?, c))),
            None => Ok(None),
        }
    };
    let lambda = |name: &str| -> Result<Option<(f64, Node)>, ImportError> {
        match time_stats.and_then(|t| child(t, name)) {
            Some(c) => Ok(Some((src.positive(c)?, c))),
            None => Ok(None),
        }
    };
    let on = frac("on_frac")?;
    let act = frac("active_frac")?;
    let on_l = lambda("on_lambda")?;
    let act_l = lambda("active_lambda")?;
    if let Some((v, c)) = ts_num("connected_frac")? {
        if (0.0..1.0).contains(&v) {
            warnings.push(format!(
                "{}: <connected_frac> {v} at line {}: vcsim does not model random disconnection; the host is taken as always connected (set host.connection_interval_days for periodic connection)",
                src.name(),
                src.line(c)
            ));
        } else if v > 1.0 {
            return Err(src.err(c, format!("must be a fraction in [0, 1] or -1, found {v}")));
        }
    }
    if let Some((v, c)) = frac("gpu_active_frac")? {
        if v < 1.0 {
            warnings.push(format!(
                "{}: <gpu_active_frac> {v} at line {}: vcsim has one availability for the whole host; GPUs follow the CPUs' <on_frac> x <active_frac>",
                src.name(),
                src.line(c)
            ));
        }
    }
    for l in ["connected_lambda", "gpu_active_lambda"] {
        if let Some((v, c)) = lambda(l)? {
            warnings.push(format!(
                "{}: <{l}> {v} at line {}: not modelled (see the warning on the matching fraction)",
                src.name(),
                src.line(c)
            ));
        }
    }
    let ts_used = [
        "on_frac",
        "active_frac",
        "connected_frac",
        "gpu_active_frac",
        "on_lambda",
        "active_lambda",
        "connected_lambda",
        "gpu_active_lambda",
        "now",
        "last_update",
    ];
    if let Some(t) = time_stats {
        un.rest(&src, "time_stats", t, &ts_used);
    }

    // The run starts at the state's current time.
    let mut t0 = (
        0.0,
        String::from("no <now>, <last_update> or <received_time>: 0"),
    );
    if let Some((v, c)) = ts_num("now")?.filter(|(v, _)| *v > 0.0) {
        t0 = (v, src.at(c));
    } else if let Some((v, c)) = ts_num("last_update")?.filter(|(v, _)| *v > 0.0) {
        t0 = (v, src.at(c));
    } else {
        let mut newest: Option<(f64, Node)> = None;
        for p in &projects {
            for r in &p.results {
                if let Some(c) = child(*r, "received_time") {
                    let v = src.num(c)?;
                    if !matches!(newest, Some((b, _)) if v <= b) {
                        newest = Some((v, c));
                    }
                }
            }
        }
        if let Some((v, c)) = newest {
            t0 = (v, format!("the newest {}", src.at(c)));
        }
    }

    // ---- projects ----
    let mut sections: Vec<Section> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut njobs_total = 0usize;
    let mut finished = 0usize;
    let mut overdue = 0usize;
    let mut gpu_apps_missing: Vec<String> = Vec::new();
    for (pi, p) in projects.iter().enumerate() {
        let pn = p.node;
        let url = child(pn, "master_url")
            .map(|c| src.text(c))
            .unwrap_or_default();
        let (mut name, name_from) = match child(pn, "project_name") {
            Some(c) if !src.text(c).is_empty() => (src.text(c), src.at(c)),
            _ => match child(pn, "master_url") {
                Some(c) if !src.text(c).is_empty() => (src.text(c), src.at(c)),
                _ => (
                    format!("project{}", pi + 1),
                    format!(
                        "no <project_name> or <master_url> in <project> at line {}",
                        src.line(pn)
                    ),
                ),
            },
        };
        if names.contains(&name) {
            let new = format!("{name} ({})", pi + 1);
            warnings.push(format!(
                "{}: a second project named `{name}` at line {}: renamed `{new}`",
                src.name(),
                src.line(pn)
            ));
            name = new;
        }
        let mut skip = None;
        for f in ["non_cpu_intensive", "ended"] {
            if let Some(c) = child(pn, f) {
                if src.flag(c)? {
                    skip = Some(f);
                }
            }
        }
        if let Some(f) = skip {
            warnings.push(format!(
                "{}: project `{name}` is <{f}>: left out, with its jobs",
                src.name()
            ));
            continue;
        }
        for f in [
            "suspended_via_gui",
            "dont_request_more_work",
            "detach_when_done",
        ] {
            if let Some(c) = child(pn, f) {
                if src.flag(c)? {
                    warnings.push(format!(
                        "{}: project `{name}` has <{f}>: not modelled, imported as an active project",
                        src.name()
                    ));
                }
            }
        }
        let (mut share, share_from) = match child(pn, "resource_share") {
            Some(c) => (src.non_negative(c)?, src.at(c)),
            None => (100.0, "no <resource_share>: BOINC's default".to_string()),
        };
        let share_from = if share == 0.0 {
            share = 0.01;
            warnings.push(format!(
                "{}: project `{name}` has resource share 0 (a backup project), which vcsim does not model: given share 0.01",
                src.name()
            ));
            format!("0 (backup project) in {share_from}; vcsim needs a positive share")
        } else {
            share_from
        };
        let mut avail = None;
        if let Some(a) = child(pn, "available") {
            let f = child(a, "frac")
                .map(|c| {
                    src.num(c).and_then(|v| {
                        if (0.0..=1.0).contains(&v) {
                            Ok(v)
                        } else {
                            Err(src.err(c, format!("must be in [0, 1], found {v}")))
                        }
                    })
                })
                .transpose()?
                .unwrap_or(1.0);
            let l = child(a, "lambda").map(|c| src.positive(c)).transpose()?;
            un.rest(&src, "project><available", a, &["frac", "lambda"]);
            avail = Some((f, l, src.line(a)));
        }
        let scheds: Vec<(String, usize)> = elems(pn)
            .filter(|c| tag(*c) == "scheduler_url")
            .map(|c| (src.text(c), src.line(c)))
            .collect();
        un.rest(
            &src,
            "project",
            pn,
            &[
                "master_url",
                "project_name",
                "resource_share",
                "available",
                "scheduler_url",
                "non_cpu_intensive",
                "ended",
                "suspended_via_gui",
                "dont_request_more_work",
                "detach_when_done",
            ],
        );

        // Workunits by name.
        let mut wus: HashMap<String, Node> = HashMap::new();
        for w in &p.wus {
            let wn = child(*w, "name")
                .map(|c| src.text(c))
                .ok_or_else(|| src.err(*w, "a <workunit> needs a <name>"))?;
            wus.insert(wn, *w);
            un.rest(
                &src,
                "workunit",
                *w,
                &[
                    "name",
                    "app_name",
                    "version_num",
                    "rsc_fpops_est",
                    "file_ref",
                ],
            );
        }
        let file_mb = |n: Node| -> Option<f64> {
            let mut total = 0.0;
            let mut any = false;
            for fr in elems(n).filter(|c| tag(*c) == "file_ref") {
                if let Some(fname) = child(fr, "file_name") {
                    if let Some(b) = files.get(&format!("{url}\u{0}{}", src.text(fname))) {
                        total += b;
                        any = true;
                    }
                }
            }
            any.then_some(total / 1e6)
        };

        // Apps, each split by processor type into vcsim apps.
        let mut vapps: Vec<VApp> = Vec::new();
        let mut latencies: Vec<(f64, String, String)> = Vec::new();
        // (boinc app) -> (estimate, mean, note) before scaling
        let mut sizes: HashMap<String, (f64, f64, f64, String, String, String)> = HashMap::new();
        for a in &p.apps {
            let an = child(*a, "name")
                .map(|c| src.text(c))
                .filter(|s| !s.is_empty())
                .ok_or_else(|| src.err(*a, "an <app> needs a <name>"))?;
            let mut ignore = false;
            for f in ["non_cpu_intensive", "ignore"] {
                if let Some(c) = child(*a, f) {
                    if src.flag(c)? {
                        warnings.push(format!(
                            "{}: app `{an}` of `{name}` has <{f}>: left out, with its jobs",
                            src.name()
                        ));
                        ignore = true;
                    }
                }
            }
            if let Some(c) = child(*a, "max_concurrent") {
                let v = src.non_negative(c)?;
                warnings.push(format!(
                    "{}: app `{an}` of `{name}`: <max_concurrent> {v} is not modelled: vcsim runs as many as fit",
                    src.name()
                ));
            }
            un.rest(
                &src,
                "app",
                *a,
                &[
                    "name",
                    "non_cpu_intensive",
                    "ignore",
                    "max_concurrent",
                    "latency_bound",
                    "fpops_est",
                    "fpops",
                    "weight",
                ],
            );
            if ignore {
                continue;
            }
            // Versions of this app: the newest of each plan class.
            let mut versions: Vec<Version> = Vec::new();
            for v in &p.versions {
                if child(*v, "app_name").map(|c| src.text(c)).as_deref() != Some(an.as_str()) {
                    continue;
                }
                let plan = child(*v, "plan_class")
                    .map(|c| src.text(c))
                    .unwrap_or_default();
                let vnum = match child(*v, "version_num") {
                    Some(c) => src.num(c)? as i64,
                    None => 0,
                };
                let (cpus, cpus_from) = match child(*v, "avg_ncpus") {
                    Some(c) => (src.non_negative(c)?, src.at(c)),
                    None => (1.0, "no <avg_ncpus>: BOINC's default".into()),
                };
                let gpu = match child(*v, "coproc") {
                    Some(c) => {
                        let ty = child(c, "type")
                            .map(|t| src.text(t))
                            .ok_or_else(|| src.err(c, "a <coproc> needs a <type>"))?;
                        let count = match child(c, "count") {
                            Some(n) => src.positive(n)?,
                            None => 1.0,
                        };
                        un.rest(&src, "app_version><coproc", c, &["type", "count"]);
                        Some((gpu_kind(&ty), count))
                    }
                    None => None,
                };
                let flops = child(*v, "flops").map(|c| src.positive(c)).transpose()?;
                un.rest(
                    &src,
                    "app_version",
                    *v,
                    &[
                        "app_name",
                        "version_num",
                        "plan_class",
                        "avg_ncpus",
                        "coproc",
                        "flops",
                    ],
                );
                let new = Version {
                    plan_class: plan,
                    version_num: vnum,
                    cpus,
                    cpus_from,
                    gpu,
                    flops,
                    node: *v,
                };
                match versions.iter_mut().find(|o| o.plan_class == new.plan_class) {
                    Some(o) => {
                        if new.version_num >= o.version_num {
                            *o = new;
                        }
                    }
                    None => versions.push(new),
                }
            }
            if versions.is_empty() {
                warnings.push(format!(
                    "{}: app `{an}` of `{name}` has no <app_version>: left out, with its jobs",
                    src.name()
                ));
                continue;
            }

            // Job sizes: the emulator's tags, else the app's workunits.
            let app_wus: Vec<Node> = p
                .wus
                .iter()
                .copied()
                .filter(|w| {
                    child(*w, "app_name").map(|c| src.text(c)).as_deref() == Some(an.as_str())
                })
                .collect();
            let (est, est_from) = match child(*a, "fpops_est") {
                Some(c) => (src.positive(c)?, src.at(c)),
                None => {
                    let mut sum = 0.0;
                    let mut n = 0;
                    for w in &app_wus {
                        if let Some(c) = child(*w, "rsc_fpops_est") {
                            sum += src.positive(c)?;
                            n += 1;
                        }
                    }
                    if n > 0 {
                        (
                            sum / n as f64,
                            format!("mean <rsc_fpops_est> of {n} workunit(s) of app `{an}`"),
                        )
                    } else {
                        (
                            DEFAULT_FPOPS_EST,
                            "no <fpops_est> or workunit: the BOINC emulator's default 3600e9"
                                .into(),
                        )
                    }
                }
            };
            let (mean, mean_from, sd, sd_from) = match child(*a, "fpops") {
                Some(f) => {
                    let m = match child(f, "mean") {
                        Some(c) => (src.positive(c)?, src.at(c)),
                        None => (est, "no <mean>: the estimate".into()),
                    };
                    let s = match child(f, "std_dev").or_else(|| child(f, "stdev")) {
                        Some(c) => (src.non_negative(c)?, src.at(c)),
                        None => (0.0, "no <std_dev>: 0".into()),
                    };
                    un.rest(&src, "app><fpops", f, &["mean", "std_dev", "stdev"]);
                    (m.0, m.1, s.0, s.1)
                }
                None => (
                    est,
                    "no <fpops> mean: the estimate is taken as right".into(),
                    0.0,
                    "no <fpops> std_dev: 0".into(),
                ),
            };
            sizes.insert(an.clone(), (est, mean, sd, est_from, mean_from, sd_from));
            // Latency bound: the emulator's tag, else report_deadline - received_time.
            match child(*a, "latency_bound") {
                Some(c) => latencies.push((src.positive(c)?, an.clone(), src.at(c))),
                None => {
                    let mut best: Option<(f64, Node)> = None;
                    for r in &p.results {
                        let Some(wn) = child(*r, "wu_name").map(|c| src.text(c)) else {
                            continue;
                        };
                        let Some(w) = wus.get(&wn) else { continue };
                        if child(*w, "app_name").map(|c| src.text(c)).as_deref()
                            != Some(an.as_str())
                        {
                            continue;
                        }
                        if let (Some(d), Some(rt)) =
                            (child(*r, "report_deadline"), child(*r, "received_time"))
                        {
                            let l = src.num(d)? - src.num(rt)?;
                            if l > 0.0 && !matches!(best, Some((b, _)) if l <= b) {
                                best = Some((l, *r));
                            }
                        }
                    }
                    if let Some((l, r)) = best {
                        latencies.push((
                            l,
                            an.clone(),
                            format!(
                                "<report_deadline> - <received_time> of the <result> at {} line {}",
                                src.name(),
                                src.line(r)
                            ),
                        ));
                    }
                }
            }
            let (weight, weight_from) = match child(*a, "weight") {
                Some(c) => (src.non_negative(c)?, src.at(c)),
                None => (1.0, String::new()),
            };

            let single = versions.len() == 1;
            for v in &versions {
                let vname = if single || v.plan_class.is_empty() {
                    an.clone()
                } else {
                    format!("{an}/{}", v.plan_class)
                };
                let mut cpus = v.cpus;
                let mut cpus_from = v.cpus_from.clone();
                if v.gpu.is_none() && cpus <= 0.0 {
                    warnings.push(format!(
                        "{}: app version at line {} uses no CPU and no GPU: taken as 1 CPU",
                        src.name(),
                        src.line(v.node)
                    ));
                    cpus = 1.0;
                    cpus_from = format!("<avg_ncpus> 0 at line {}: taken as 1", src.line(v.node));
                }
                if cpus > ncpus as f64 {
                    warnings.push(format!(
                        "{}: app version at line {} uses {cpus} CPUs, more than the host's {ncpus}: capped",
                        src.name(),
                        src.line(v.node)
                    ));
                    cpus_from = format!("{cpus_from}, capped at the host's {ncpus}");
                    cpus = ncpus as f64;
                }
                let speed = match &v.gpu {
                    Some((k, c)) => match gpus.iter().find(|g| &g.kind == k) {
                        Some(g) => g.flops.map(|f| f * c),
                        None => {
                            gpu_apps_missing.push(format!("`{vname}` of `{name}` ({k})"));
                            None
                        }
                    },
                    None => Some(cpus * cpu_flops),
                };
                let (scale, scale_note) = match (speed, v.flops) {
                    (Some(s), Some(f)) if (s / f - 1.0).abs() > 1e-9 => (
                        s / f,
                        format!(
                            " x {} (vcsim runs it at {} FLOPS, the app version's <flops> at line {} is {}: the run time is kept)",
                            num(s / f),
                            num(s),
                            src.line(v.node),
                            num(f)
                        ),
                    ),
                    _ => (1.0, String::new()),
                };
                let input_mb = {
                    let v: Vec<f64> = app_wus.iter().filter_map(|w| file_mb(*w)).collect();
                    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
                };
                let output_mb = {
                    let v: Vec<f64> = p
                        .results
                        .iter()
                        .filter(|r| {
                            child(**r, "wu_name")
                                .and_then(|c| wus.get(&src.text(c)))
                                .and_then(|w| child(*w, "app_name"))
                                .map(|c| src.text(c))
                                .as_deref()
                                == Some(an.as_str())
                        })
                        .filter_map(|r| file_mb(*r))
                        .filter(|m| *m > 0.0)
                        .collect();
                    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
                };
                vapps.push(VApp {
                    name: vname,
                    boinc_app: an.clone(),
                    plan_class: v.plan_class.clone(),
                    version_num: v.version_num,
                    cpus,
                    cpus_from,
                    gpu: v.gpu.clone(),
                    scale,
                    scale_note,
                    weight,
                    weight_from: weight_from.clone(),
                    input_mb,
                    output_mb,
                });
            }
        }
        if vapps.is_empty() {
            warnings.push(format!(
                "{}: project `{name}` has no usable app: left out, with its jobs",
                src.name()
            ));
            continue;
        }
        // vcsim app names must be unique in the project.
        for i in 0..vapps.len() {
            if vapps[..i].iter().any(|o| o.name == vapps[i].name) {
                vapps[i].name = format!("{}#{}", vapps[i].name, i + 1);
            }
        }

        // Project table.
        let mut ps = Section::new("[[project]]");
        ps.put("name", Val::S(name.clone()), name_from);
        ps.put("resource_share", Val::F(share), share_from);
        let (lat, lat_from) = if latencies.is_empty() {
            (
                DEFAULT_LATENCY_S,
                "no <latency_bound> and no job with <received_time>: the BOINC emulator's default 1 day".to_string(),
            )
        } else {
            let (l, a, f) = latencies
                .iter()
                .min_by(|x, y| x.0.total_cmp(&y.0))
                .cloned()
                .unwrap_or((DEFAULT_LATENCY_S, String::new(), String::new()));
            if latencies.iter().any(|o| (o.0 - l).abs() > 1e-6) {
                let all: Vec<String> = latencies
                    .iter()
                    .map(|(v, a, _)| format!("`{a}` {:.3} days", v / 86400.0))
                    .collect();
                warnings.push(format!(
                    "{}: project `{name}`: apps have different latency bounds ({}); vcsim has one per project: the shortest is used",
                    src.name(),
                    all.join(", ")
                ));
            }
            (l, format!("{} s of app `{a}`: {f}", num(l)))
        };
        ps.put("latency_bound_days", Val::F(lat / 86400.0), lat_from);
        if let Some((f, l, line)) = avail {
            let from = format!("<available> of the project, {} line {line}", src.name());
            ps.put(
                "availability",
                Val::Inline(vec![
                    ("fraction", Val::F(f)),
                    ("mean_up_hours", Val::F(l.unwrap_or(86400.0) / 3600.0)),
                ]),
                if l.is_some() {
                    format!("<frac>, <lambda> / 3600 of {from}")
                } else {
                    format!("<frac> of {from}; no <lambda>: vcsim's default 24 h")
                },
            );
        }
        if !url.is_empty() {
            ps.note(format!("{name}: <master_url> {url}"));
        }
        sections.push(ps);
        for (u, line) in &scheds {
            let mut s = Section::new("[[project.scheduler]]");
            s.put(
                "url",
                Val::S(u.clone()),
                format!(
                    "<scheduler_url>, {} line {line}; always up with the project",
                    src.name()
                ),
            );
            sections.push(s);
        }
        for va in &vapps {
            let (est, mean, sd, est_from, mean_from, sd_from) = &sizes[&va.boinc_app];
            let mut s = Section::new("[[project.app]]");
            s.put(
                "name",
                Val::S(va.name.clone()),
                format!(
                    "<app> `{}`{}{}",
                    va.boinc_app,
                    if va.version_num > 0 {
                        format!(", version {}", va.version_num)
                    } else {
                        String::new()
                    },
                    if va.plan_class.is_empty() {
                        String::new()
                    } else {
                        format!(" of plan class `{}`", va.plan_class)
                    }
                ),
            );
            s.put("cpus", Val::F(va.cpus), va.cpus_from.clone());
            if let Some((k, c)) = &va.gpu {
                s.put(
                    "gpu",
                    Val::Inline(vec![("kind", Val::S(k.clone())), ("count", Val::F(*c))]),
                    "<coproc> <type>, <count> of the app version",
                );
            }
            s.put(
                "flops_estimate",
                Val::F(est * va.scale),
                format!("{}{}", est_from, va.scale_note),
            );
            s.put(
                "flops_mean",
                Val::F(mean * va.scale),
                format!(
                    "{}{}",
                    mean_from,
                    if va.scale != 1.0 {
                        ", x the same factor"
                    } else {
                        ""
                    }
                ),
            );
            s.put(
                "flops_stddev",
                Val::F(sd * va.scale),
                format!(
                    "{}{}",
                    sd_from,
                    if va.scale != 1.0 {
                        ", x the same factor"
                    } else {
                        ""
                    }
                ),
            );
            match va.input_mb {
                Some(m) => s.put(
                    "input_mb",
                    Val::F(m),
                    "mean <nbytes> of the workunits' input files",
                ),
                None => s.put(
                    "input_mb",
                    Val::F(0.0),
                    "no input file sizes in the file: 0",
                ),
            };
            match va.output_mb {
                Some(m) => s.put(
                    "output_mb",
                    Val::F(m),
                    "mean <nbytes> of the results' output files",
                ),
                None => s.put(
                    "output_mb",
                    Val::F(0.0),
                    "no output file sizes in the file: 0",
                ),
            };
            if !va.weight_from.is_empty() {
                s.put("weight", Val::F(va.weight), va.weight_from.clone());
            }
            sections.push(s);
        }

        // Jobs on the host.
        for r in &p.results {
            let rname = child(*r, "name").map(|c| src.text(c)).unwrap_or_default();
            un.rest(
                &src,
                "result",
                *r,
                &[
                    "name",
                    "wu_name",
                    "report_deadline",
                    "received_time",
                    "state",
                    "ready_to_report",
                    "got_server_ack",
                    "plan_class",
                    "version_num",
                    "file_ref",
                ],
            );
            let mut done = false;
            for f in ["ready_to_report", "got_server_ack"] {
                if let Some(c) = child(*r, f) {
                    done |= src.flag(c)?;
                }
            }
            if let Some(c) = child(*r, "state") {
                let st = src.whole(c, 0)?;
                // 3: compute error, 4: uploading, 5: uploaded, 6: aborted, 7: upload failed.
                done |= st >= 3;
            }
            if done {
                finished += 1;
                continue;
            }
            let wn = child(*r, "wu_name")
                .map(|c| src.text(c))
                .ok_or_else(|| src.err(*r, format!("<result> `{rname}` has no <wu_name>")))?;
            let w = *wus.get(&wn).ok_or_else(|| {
                src.err(
                    *r,
                    format!(
                        "<result> `{rname}` names workunit `{wn}`, which is not in its project"
                    ),
                )
            })?;
            let an = child(w, "app_name")
                .map(|c| src.text(c))
                .ok_or_else(|| src.err(w, format!("<workunit> `{wn}` has no <app_name>")))?;
            let plan = child(*r, "plan_class").map(|c| src.text(c));
            let vnum = child(*r, "version_num").map(|c| src.num(c)).transpose()?;
            let mine: Vec<&VApp> = vapps.iter().filter(|v| v.boinc_app == an).collect();
            if mine.is_empty() {
                warnings.push(format!(
                    "{}: job `{rname}` (line {}) of app `{an}`, which was left out: left out",
                    src.name(),
                    src.line(*r)
                ));
                continue;
            }
            let va = match &plan {
                Some(pc) => mine.iter().find(|v| &v.plan_class == pc),
                None => vnum
                    .and_then(|n| mine.iter().find(|v| v.version_num == n as i64))
                    .or_else(|| mine.iter().find(|v| v.plan_class.is_empty())),
            }
            .copied()
            .unwrap_or(mine[0]);
            let (est_app, mean_app, ..) = &sizes[&an];
            let (est, est_from) = match child(w, "rsc_fpops_est") {
                Some(c) => (src.positive(c)?, "<rsc_fpops_est>"),
                None => (*est_app, "no <rsc_fpops_est>: the app's estimate"),
            };
            let est_v = est * va.scale;
            let real_v = est_v * mean_app / est_app;
            let (deadline, dl_from) = match child(*r, "report_deadline") {
                Some(c) => (
                    (src.num(c)? - t0.0) / 86400.0,
                    "(<report_deadline> - start) / 86400",
                ),
                None => (lat / 86400.0, "no <report_deadline>: the latency bound"),
            };
            if deadline < 0.0 {
                overdue += 1;
            }
            let fd = match active.get(&(url.clone(), rname.clone())) {
                Some((f, _)) if *f >= 1.0 => 0.999999,
                Some((f, _)) => *f,
                None => 0.0,
            };
            let mut s = Section::new("[[project.job]]");
            s.note(format!(
                "<result> `{rname}`, {} line {}; <workunit> `{wn}`",
                src.name(),
                src.line(*r)
            ));
            s.put("app", Val::S(va.name.clone()), "");
            s.put(
                "flops_estimate",
                Val::F(est_v),
                format!(
                    "{est_from}{}",
                    if va.scale != 1.0 {
                        ", x the app's factor"
                    } else {
                        ""
                    }
                ),
            );
            s.put(
                "flops",
                Val::F(real_v),
                if (mean_app / est_app - 1.0).abs() > 1e-12 {
                    "the estimate x the app's flops_mean / flops_estimate"
                } else {
                    "the estimate: BOINC does not know a job's true size"
                },
            );
            s.put("deadline_days", Val::F(deadline), dl_from);
            if fd > 0.0 {
                s.put(
                    "fraction_done",
                    Val::F(fd),
                    "<fraction_done> of its <active_task>",
                );
            }
            sections.push(s);
            njobs_total += 1;
        }
        names.push(name);
    }
    if names.is_empty() {
        return Err(src.err(root, "no project with a usable app: nothing to simulate"));
    }
    if finished > 0 {
        warnings.push(format!(
            "{}: {finished} result(s) already computed (or aborted) and waiting to be reported: left out",
            src.name()
        ));
    }
    if overdue > 0 {
        warnings.push(format!(
            "{}: {overdue} job(s) are already past their deadline at the start",
            src.name()
        ));
    }
    for m in &gpu_apps_missing {
        warnings.push(format!(
            "{}: app {m} needs a GPU the host lacks: kept, but never run",
            src.name()
        ));
    }
    let _ = njobs_total;

    // GPUs without <peak_flops>: the fastest app version for them.
    let mut gpu_secs = Vec::new();
    for g in &gpus {
        let (flops, from) = match g.flops {
            Some(f) => (f, format!("<peak_flops> of {}", g.from)),
            None => {
                return Err(ImportError {
                    file: state_path.clone(),
                    line: None,
                    element: Some("peak_flops".into()),
                    message: format!(
                        "the `{}` coprocessor ({}) has no <peak_flops>",
                        g.kind, g.from
                    ),
                });
            }
        };
        let mut s = Section::new("[[host.gpu]]");
        s.put("kind", Val::S(g.kind.clone()), g.from.clone());
        s.put("count", Val::I(g.count as u64), "<count>");
        s.put("flops", Val::F(flops), from);
        gpu_secs.push(s);
    }

    // ---- host tables ----
    let mut host = Section::new("[host]");
    host.put("ncpus", Val::I(ncpus as u64), src.at(ncpus_n));
    host.put("cpu_flops", Val::F(cpu_flops), src.at(fpops_n));
    match d_total {
        Some((t, tn)) if t > 0.0 => {
            host.put("disk_gb", Val::F(t / 1e9), format!("{} / 1e9", src.at(tn)));
            if let Some((f, fnode)) = d_free {
                let other = (t - f - boinc_bytes).max(0.0);
                host.put(
                    "non_boinc_used_gb",
                    Val::F(other / 1e9),
                    format!(
                        "(<d_total> - {} - {} GB of BOINC's files) / 1e9",
                        src.at(fnode),
                        num(boinc_bytes / 1e9)
                    ),
                );
            }
        }
        _ => {
            host.put("disk_gb", Val::F(100.0), "no <d_total>: vcsim's default");
        }
    }
    host.put(
        "connection_interval_days",
        Val::F(0.0),
        "always connected (see the warnings on <connected_frac>)",
    );
    let mut av = Section::new("[host.availability]");
    let on_v = on.map_or(1.0, |x| x.0);
    let act_v = act.map_or(1.0, |x| x.0);
    let frac_from = match (&on, &act) {
        (None, None) => "no <on_frac> or <active_frac>: always available".to_string(),
        _ => format!(
            "<on_frac> {} x <active_frac> {} in <time_stats>",
            num(on_v),
            num(act_v)
        ),
    };
    av.put("fraction", Val::F(on_v * act_v), frac_from);
    let lam = |x: &Option<(f64, Node)>| x.map(|v| v.0);
    let (mean_on, mean_from) = match (on_v < 1.0, act_v < 1.0) {
        (true, true) => {
            let a = lam(&on_l).unwrap_or(DEFAULT_LAMBDA_S);
            let b = lam(&act_l).unwrap_or(DEFAULT_LAMBDA_S);
            (
                1.0 / (1.0 / a + 1.0 / b),
                format!(
                    "both on and active: 1 / (1/{} + 1/{}) from <on_lambda>, <active_lambda>{}",
                    num(a),
                    num(b),
                    if on_l.is_none() || act_l.is_none() {
                        " (missing ones: vcsim's default 1000 s)"
                    } else {
                        ""
                    }
                ),
            )
        }
        (true, false) => match on_l {
            Some((v, c)) => (v, src.at(c)),
            None => (DEFAULT_LAMBDA_S, "no <on_lambda>: vcsim's default".into()),
        },
        (false, true) => match act_l {
            Some((v, c)) => (v, src.at(c)),
            None => (
                DEFAULT_LAMBDA_S,
                "no <active_lambda>: vcsim's default".into(),
            ),
        },
        (false, false) => match on_l.or(act_l) {
            Some((v, c)) => (v, format!("{} (unused: always available)", src.at(c))),
            None => (
                DEFAULT_LAMBDA_S,
                "vcsim's default (unused: always available)".into(),
            ),
        },
    };
    av.put("mean_on_seconds", Val::F(mean_on), mean_from);

    // ---- preferences ----
    let mut pr = prefs::Prefs::default();
    let mut pref_names = Vec::new();
    for (path, text) in inp.prefs.iter().chain(inp.override_prefs.iter()) {
        let ps = Src::parse(path, text)?;
        prefs::read(&ps, &mut pr, &mut un, &mut warnings)?;
        pref_names.push(ps.name());
    }
    let silent = if pref_names.is_empty() {
        "no global_prefs.xml".to_string()
    } else {
        format!("not in {}", pref_names.join(" or "))
    };
    let client = prefs::section(
        &pr,
        ncpus,
        (
            true,
            "BOINC's client scales its estimates by <on_frac> x <active_frac>",
        ),
        &silent,
    );

    let mut inputs = vec![src.name()];
    inputs.extend(pref_names);
    let stem = state_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "client_state".into());
    let top = scenario_head(
        &stem,
        &format!("Imported by vcsim from {}", inputs.join(", ")),
        &format!(
            "start (time 0) = {}; deadlines are days from it",
            describe_t0(&t0)
        ),
    );
    let mut all = vec![top, host, av];
    all.extend(gpu_secs);
    all.push(client);
    all.extend(sections);
    warnings.extend(un.warnings());
    crate::finish(state_path, &inputs, all, warnings)
}

fn describe_t0(t0: &(f64, String)) -> String {
    format!("{} ({})", num(t0.0), t0.1)
}
