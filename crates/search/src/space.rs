//! A search space: the base scenario and the parameters that may vary,
//! each over an inclusive range (integers stay integers), with the dotted
//! paths and knobs of sweeps.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;
use vcsim_framework::input;
use vcsim_framework::Scenario;
use vcsim_sweep::knobs::{apply_all, Param, Setting};

/// The range one parameter may take, both ends included.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    Int(i64, i64),
    Float(f64, f64),
}

/// A parameter that may vary.
#[derive(Debug, Clone, PartialEq)]
pub struct Dim {
    pub param: Param,
    pub range: Range,
}

/// A loaded, checked space.
#[derive(Debug, Clone)]
pub struct Space {
    pub name: String,
    /// Where the base scenario was read from (for the comment of the result).
    pub scenario_path: PathBuf,
    pub base: Scenario,
    pub dims: Vec<Dim>,
}

/// A space file that cannot be used, and where the fault is: the file,
/// the key, its line and what is wrong, as for a sweep file (whose loader
/// shares the same dotted paths and spans).
pub type SpaceError = vcsim_sweep::SweepError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpace {
    name: Spanned<String>,
    #[serde(default)]
    #[allow(dead_code)] // read so that a description is allowed
    description: String,
    scenario: Spanned<String>,
    vary: Spanned<BTreeMap<String, Spanned<toml::Value>>>,
}

/// Whether TOML text is a search space rather than a scenario or a sweep:
/// it has a `[vary]` table (they have none), or, lacking one, names its
/// `scenario` as a sweep does but has no `policies` or `[[axis]]` (a
/// scenario has no `scenario` key): a space whose `[vary]` is missing is
/// told so, not read as a scenario.
pub fn is_space_text(text: &str) -> bool {
    text.parse::<toml::Table>()
        .map(|t| {
            t.contains_key("vary")
                || (t.get("scenario").is_some_and(toml::Value::is_str)
                    && !t.contains_key("policies")
                    && !t.contains_key("axis"))
        })
        .unwrap_or_else(|_| text.lines().any(|l| l.trim() == "[vary]"))
}

impl Space {
    pub fn load(path: &Path) -> Result<Space, SpaceError> {
        let text = input::read_text(path, input::MAX_TEXT_BYTES).map_err(|e| SpaceError {
            file: path.to_path_buf(),
            key: None,
            line: None,
            message: format!("cannot read it: {e}"),
        })?;
        Space::from_str(&text, path)
    }

    /// Parses a space file; `scenario` is relative to the file, as in sweeps.
    pub fn from_str(text: &str, path: &Path) -> Result<Space, SpaceError> {
        let line_of =
            |span: std::ops::Range<usize>| vcsim_framework::scenario::line_col(text, span.start).0;
        let err = |key: &str, span: Option<std::ops::Range<usize>>, message: String| SpaceError {
            file: path.to_path_buf(),
            key: (!key.is_empty()).then(|| key.to_string()),
            line: span.map(line_of),
            message,
        };
        let raw: RawSpace = toml::from_str(text).map_err(|e| {
            let f = vcsim_sweep::TomlFault::of(text, &e);
            SpaceError {
                file: path.to_path_buf(),
                key: f.key,
                line: f.line,
                message: f.message,
            }
        })?;
        // The name goes into `worst.toml`'s comment (a line break there
        // would start live TOML lines) and onto terminals, as a scenario's
        // and a sweep's do.
        if let Some(m) = vcsim_framework::scenario::name_fault("name", raw.name.get_ref()) {
            return Err(err("name", Some(raw.name.span()), m));
        }
        // A path goes into messages, which keep line breaks: a line break
        // in one could forge a line of them.
        if raw.scenario.get_ref().contains('\n') {
            return Err(err(
                "scenario",
                Some(raw.scenario.span()),
                format!(
                    "`{}` holds a line break: rename the file",
                    vcsim_framework::text::escape_controls(raw.scenario.get_ref())
                ),
            ));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let scenario_path = dir.join(raw.scenario.get_ref());
        let base = Scenario::load(&scenario_path)
            .map_err(|e| err("scenario", Some(raw.scenario.span()), e.to_string()))?;
        let mut dims = Vec::new();
        for (k, v) in raw.vary.get_ref() {
            let key = format!("vary.{k}");
            let param = Param::parse(k).map_err(|m| err(&key, Some(v.span()), m))?;
            if let Some(m) = set_by_the_search(&param) {
                return Err(err(&key, Some(v.span()), m));
            }
            let range = range_of(v.get_ref()).map_err(|m| err(&key, Some(v.span()), m))?;
            dims.push((Dim { param, range }, key, v.span()));
        }
        // Each range is checked at both ends as the search applies it:
        // after `mix` (which makes the projects; at its fewest, so that a
        // path into a project every point has is taken), as sweeps apply
        // settings whatever the file's order.
        let mix = dims
            .iter()
            .find(|(d, _, _)| matches!(d.param, Param::Mix))
            .map(|(d, _, _)| (d, d.ends()[0]));
        for (dim, key, span) in &dims {
            for end in dim.ends() {
                let mut at = vec![(dim, end)];
                let with_mix = mix.filter(|_| !matches!(dim.param, Param::Mix));
                at.extend(with_mix);
                scenario_at(&base, &at).map_err(|m| {
                    // A float end makes the range a float range, which a
                    // whole-number key cannot take.
                    let hint =
                        if m.contains("floating point") || m.contains("must be a whole number") {
                            " (give both ends as integers for a whole-number parameter)"
                        } else {
                            ""
                        };
                    let mixed = with_mix
                        .map(|(_, n)| format!(" (with mix = {}, its fewest projects)", n.text()))
                        .unwrap_or_default();
                    err(
                        key,
                        Some(span.clone()),
                        format!("at {}{mixed}: {m}{hint}", end.text()),
                    )
                })?;
            }
        }
        let mut dims: Vec<Dim> = dims.into_iter().map(|(d, _, _)| d).collect();
        if dims.is_empty() {
            return Err(err(
                "vary",
                Some(raw.vary.span()),
                "nothing varies: give at least one parameter and its range, as `\"host.ncpus\" = [1, 16]`".into(),
            ));
        }
        // A dimension that another overwrites in full would change nothing.
        let params: Vec<&Param> = dims.iter().map(|d| &d.param).collect();
        if let Some((i, _, m)) = vcsim_sweep::knobs::overridden(&params) {
            let k = params[i].name();
            let span = raw.vary.get_ref().get(k).map(|v| v.span());
            return Err(err(&format!("vary.{k}"), span, m));
        }
        // Knobs apply in their order (mix first), whatever the file's order.
        dims.sort_by_key(|d| d.param.order());
        Ok(Space {
            name: raw.name.into_inner(),
            scenario_path,
            base,
            dims,
        })
    }

    /// The space searched when none is given: a population of BOINC hosts
    /// around `base` (1 to 16 CPUs, slack 1 to 20, 1 to 6 projects, on 30%
    /// to 100% of the time, a buffer of 0.1 to 24 hours).
    pub fn around(base: Scenario, scenario_path: PathBuf) -> Space {
        let dim = |p: &str, range| Dim {
            param: Param::parse(p).expect("a known parameter"),
            range,
        };
        let mut dims = vec![
            dim("mix", Range::Int(1, 6)),
            dim("host.ncpus", Range::Int(1, 16)),
            dim("host.availability.fraction", Range::Float(0.3, 1.0)),
            dim("buffer_hours", Range::Float(0.1, 24.0)),
            dim("slack", Range::Float(1.0, 20.0)),
        ];
        dims.sort_by_key(|d| d.param.order());
        Space {
            name: format!("around-{}", base.name),
            scenario_path,
            base,
            dims,
        }
    }

    /// SHA-256 of the base scenario as read (written as TOML, before the
    /// search sets its run length): what a shard records, so that `vcsim
    /// merge` can tell the scenario changed, whatever file or BOINC
    /// directory it came from. Comments and layout do not count.
    pub fn base_sha256(&self) -> Result<String, String> {
        toml::to_string(&self.base)
            .map(|t| vcsim_sweep::sha256_hex(t.as_bytes()))
            .map_err(|e| format!("cannot write the base scenario: {e}"))
    }

    /// The resources any scenario of the space can have: the CPU, then the
    /// base host's GPU kinds. Exact, not a guess: a range takes numbers
    /// (never a GPU's kind), a dotted path sets only an entry the base
    /// already has, and shrinking only removes GPUs.
    pub fn resources(&self) -> Vec<String> {
        std::iter::once("cpu".to_string())
            .chain(self.base.host.gpus.iter().map(|g| g.kind.clone()))
            .collect()
    }
}

/// Why the search itself sets `param` at every point, so that a range of
/// it would change nothing or mislead: each run lasts `--days` (and
/// shrinking's shorter runs) whatever the scenario says; the seeds are the
/// search's pairing of the two policies, and a range of them would shop
/// for the window of seeds where the difference looks largest.
fn set_by_the_search(param: &Param) -> Option<String> {
    let first = param.name().split('.').next().unwrap_or("");
    match first {
        "duration_days" => Some("the search sets the run length itself (`--days`, default the scenario's, at most 20; shrinking tries shorter runs): a range of it would change nothing; give `--days N` instead".to_string()),
        "seed" => Some("the search runs every point on the same seeds (the scenario's `seed`, `seed + 1`... for `--seeds`): a range of them would search for lucky seeds, not for a host or workload where a policy loses; give more `--seeds` instead".to_string()),
        _ => None,
    }
}

/// A number of a range as it was written, short (`1e300`, not 301 digits).
fn short(x: f64) -> String {
    Value::Float(x).text()
}

fn range_of(v: &toml::Value) -> Result<Range, String> {
    let bad = || "a range is two numbers, `[low, high]` (integers give integer ranges)".to_string();
    let a = v.as_array().ok_or_else(bad)?;
    if a.len() != 2 {
        return Err(bad());
    }
    match (&a[0], &a[1]) {
        (toml::Value::Integer(lo), toml::Value::Integer(hi)) => {
            if lo > hi {
                return Err(format!("the low end {lo} is above the high end {hi}"));
            }
            Ok(Range::Int(*lo, *hi))
        }
        (lo, hi) => {
            let num = |x: &toml::Value| match x {
                toml::Value::Integer(i) => Some(*i as f64),
                toml::Value::Float(f) => Some(*f),
                _ => None,
            };
            let (Some(lo), Some(hi)) = (num(lo), num(hi)) else {
                return Err(bad());
            };
            if !(lo.is_finite() && hi.is_finite()) {
                return Err("the ends must be finite numbers".into());
            }
            if lo > hi {
                return Err(format!(
                    "the low end {} is above the high end {}",
                    short(lo),
                    short(hi)
                ));
            }
            Ok(Range::Float(lo, hi))
        }
    }
}

/// A value of one parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
}

impl Value {
    pub fn text(self) -> String {
        match self {
            Value::Int(i) => i.to_string(),
            Value::Float(f) => vcsim_sweep::value_label(&serde_json::Value::from(f)),
        }
    }
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Float(f) => f,
        }
    }
    fn json(self) -> serde_json::Value {
        match self {
            Value::Int(i) => serde_json::Value::from(i),
            Value::Float(f) => serde_json::Value::from(f),
        }
    }
}

impl Dim {
    /// `name low..high`, for messages.
    pub fn describe(&self) -> String {
        let [lo, hi] = self.ends();
        format!("{} {}..{}", self.param.name(), lo.text(), hi.text())
    }

    /// The range's two ends.
    pub fn ends(&self) -> [Value; 2] {
        match self.range {
            Range::Int(lo, hi) => [Value::Int(lo), Value::Int(hi)],
            Range::Float(lo, hi) => [Value::Float(lo), Value::Float(hi)],
        }
    }
    /// `x` brought into the range (rounded for an integer range).
    pub fn clamp(&self, x: f64) -> Value {
        match self.range {
            Range::Int(lo, hi) => Value::Int((x.round() as i64).clamp(lo, hi)),
            Range::Float(lo, hi) => Value::Float(x.clamp(lo, hi)),
        }
    }
    pub fn width(&self) -> f64 {
        match self.range {
            Range::Int(lo, hi) => (hi - lo) as f64,
            Range::Float(lo, hi) => hi - lo,
        }
    }
    pub fn low(&self) -> f64 {
        self.ends()[0].as_f64()
    }
}

/// The base scenario with these parameters set.
pub fn scenario_at(base: &Scenario, values: &[(&Dim, Value)]) -> Result<Scenario, String> {
    let settings: Vec<Setting> = values
        .iter()
        .map(|(d, v)| Setting {
            param: d.param.clone(),
            value: v.json(),
        })
        .collect();
    let scn = apply_all(base, &settings).map_err(|(i, f)| {
        format!(
            "{} = {}: {}",
            settings[i].param.name(),
            values[i].1.text(),
            f.message()
        )
    })?;
    scn.validate().map_err(|(k, m)| format!("key `{k}`: {m}"))?;
    Ok(scn)
}
