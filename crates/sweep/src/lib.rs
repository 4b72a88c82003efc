//! Parameter sweeps for vcsim: a sweep file names a scenario, policies,
//! replications and up to two axes; every cell (a point of the axes'
//! product) runs every policy on the same seeds (paired), in parallel, and
//! the results become `results.csv`, `summary.csv`, one SVG per metric and
//! `manifest.json`.
//!
//! Architecture invariants: the output depends only on the inputs (never on
//! the number of threads, the shard split, the clock or the output
//! directory); a bad sweep file is a [`SweepError`] naming the file, key and
//! line; a run that fails is a failed row, never a lost sweep.
//!
//! The pieces: [`Sweep::load`] reads and checks a file and every cell's
//! scenario (keeping only whether it is valid; a cell's scenario is built
//! again when it runs); [`prepare_dir`] checks the output directory before the
//! first run; [`run`] runs a shard of the cells; [`write_outputs`] turns rows
//! into the four outputs; [`merge`] joins shard directories by
//! reading them back and calling [`write_outputs`] again, so that merged and
//! unsharded outputs are the same bytes.

#![forbid(unsafe_code)]

pub mod data;
pub mod knobs;
pub mod output;
pub mod plot;
pub mod stats;
pub mod summary;
pub mod threads;

use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::Spanned;
use vcsim_framework::scenario::Project;
use vcsim_framework::{input, Metrics, PolicySpec, Registry, Scenario, SimOptions};

pub use data::{
    sha256_hex, value_label, Axis, Definition, Input, Manifest, Row, Shard, MAX_CELLS,
    MAX_PROCESS_CELLS, MAX_RUNS, VERSION,
};
pub use knobs::{Param, Setting};
pub use output::{merge, prepare_dir, prepare_outputs, write_outputs, MergeError};

/// The most replications a sweep or `vcsim compare` runs per cell and
/// policy: far more than a confidence interval needs.
pub const MAX_REPLICATIONS: u32 = 100_000;

/// The cells of `cells` that `shard` holds (all of them without one).
pub fn cells_in_shard(cells: usize, shard: Option<Shard>) -> usize {
    match shard {
        None => cells,
        Some(s) if s.k > cells => 0,
        Some(s) => (cells - s.k) / s.n + 1,
    }
}

/// The runs a process makes of `sweep` (of `shard`'s cells, if given), or
/// why it may not: more than [`MAX_RUNS`], with the shards it would take,
/// or more shards than cells. Counted, not built: this is cheap.
pub fn runs_within_bound(sweep: &Sweep, shard: Option<Shard>) -> Result<u64, String> {
    process_bound(
        sweep.cells.len(),
        sweep.specs.len(),
        sweep.def.replications,
        shard,
    )
}

/// [`runs_within_bound`] of a sweep of `all_cells` cells, `policies`
/// policies and `replications` replications.
fn process_bound(
    all_cells: usize,
    policies: usize,
    replications: u32,
    shard: Option<Shard>,
) -> Result<u64, String> {
    // Shards beyond the cells hold none (a job array of a fixed size may
    // have more tasks than a small sweep has cells), but `merge` needs
    // every one: their number is bounded as the cells are.
    if let Some(s) = shard.filter(|s| s.n > MAX_CELLS) {
        return Err(format!(
            "--shard {}/{}: a sweep is cut into at most {MAX_CELLS} shards (it has at most {MAX_CELLS} cells; this one has {all_cells})",
            s.k, s.n
        ));
    }
    let cells = cells_in_shard(all_cells, shard) as u64;
    let per_cell = (policies as u64).saturating_mul(u64::from(replications));
    let runs = cells.saturating_mul(per_cell);
    if runs <= MAX_RUNS && cells <= MAX_PROCESS_CELLS as u64 {
        return Ok(runs);
    }
    if runs <= MAX_RUNS {
        let shards = all_cells.div_ceil(MAX_PROCESS_CELLS).max(2);
        return Err(format!(
            "{cells} cells{}; one sweep process runs at most {MAX_PROCESS_CELLS} (each keeps about a kilobyte until the files are written): run it in shards (`--shard K/{shards}` or more, then `vcsim merge`), or with fewer values",
            if shard.is_some() { " in this shard" } else { "" },
        ));
    }
    let all = (all_cells as u64).saturating_mul(per_cell);
    let shards = all.div_ceil(MAX_RUNS).max(2);
    Err(format!(
        "{runs} runs ({cells} cells x {policies} policies x {replications} replications{}); one sweep process makes at most {MAX_RUNS}: run it in shards (`--shard K/{shards}` or more, then `vcsim merge`), or with fewer values or replications",
        if shard.is_some() { " in this shard" } else { "" },
    ))
}

/// How a sweep's policies are parsed: [`PolicySpec::parse`], or a parser
/// that can read a script to find its family.
pub type SpecParser = dyn Fn(&str) -> Result<PolicySpec, String>;

/// A sweep file that cannot be used, and where the fault is.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepError {
    pub file: PathBuf,
    pub key: Option<String>,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for SweepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        write!(f, ": ")?;
        if let Some(k) = &self.key {
            write!(f, "key `{k}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for SweepError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    name: Spanned<String>,
    #[serde(default)]
    description: String,
    scenario: Spanned<String>,
    policies: Spanned<Vec<Spanned<String>>>,
    // Read as any value, so that a wrong kind is refused naming the key.
    replications: Option<Spanned<toml::Value>>,
    seed: Option<Spanned<toml::Value>>,
    metrics: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    set: std::collections::BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    axis: Vec<RawAxis>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAxis {
    param: Spanned<String>,
    values: Spanned<Vec<Spanned<toml::Value>>>,
}

/// A point of the axes' product, and whether its scenario is valid (a
/// value that makes the scenario invalid fails the cell, not the sweep).
/// The scenario itself is built again when the cell runs
/// ([`Sweep::cell_scenario`]): a million of them would not fit in memory.
#[derive(Debug, Clone)]
pub struct Cell {
    pub index: usize,
    /// `Err`: why the cell's scenario is invalid.
    pub scenario: Result<(), String>,
}

/// Where a setting of a cell comes from: `[set]` (its index among the
/// fixed settings) or an axis (the axis and the value's index).
#[derive(Debug, Clone, Copy)]
enum From {
    Set(usize),
    Axis(usize, usize),
}

/// How a cell's scenario is built: the base with the fixed settings that
/// apply before any axis (done once), then the cell's axis values and the
/// fixed settings that must come after them.
#[derive(Debug, Clone)]
struct Plan {
    prefix: Scenario,
    /// The other fixed settings, with their index among the fixed ones.
    late: Vec<(usize, Setting)>,
    axis_params: Vec<Param>,
}

impl Plan {
    /// The scenario of cell `index`, before validation; an error names the
    /// setting at fault (an input error, not the cell's).
    fn build(&self, axes: &[Axis], index: usize) -> Result<Scenario, (From, knobs::Fault)> {
        let idx = data::value_indices(axes, index);
        let mut settings: Vec<(From, Setting)> = self
            .late
            .iter()
            .map(|(i, s)| (From::Set(*i), s.clone()))
            .collect();
        for (a, &j) in idx.iter().enumerate() {
            settings.push((
                From::Axis(a, j),
                Setting {
                    param: self.axis_params[a].clone(),
                    value: axes[a].values[j].clone(),
                },
            ));
        }
        let only: Vec<Setting> = settings.iter().map(|(_, s)| s.clone()).collect();
        knobs::apply_all(&self.prefix, &only).map_err(|(i, f)| (settings[i].0, f))
    }

    /// Whether a cell's scenario is valid; the error names the cell.
    fn check(&self, axes: &[Axis], index: usize, scn: &Scenario) -> Result<(), String> {
        scn.validate().map_err(|(k, m)| {
            let at: Vec<String> = axes
                .iter()
                .zip(data::value_indices(axes, index))
                .map(|(a, j)| format!("{}={}", a.param, value_label(&a.values[j])))
                .collect();
            let at = if at.is_empty() {
                String::new()
            } else {
                format!(" at {}", at.join(", "))
            };
            format!("the scenario{at} is invalid: key `{k}`: {m}")
        })
    }

    /// Every cell checked as [`Plan::build`] and [`Plan::check`] check it,
    /// in cell order, on up to `threads` threads. With two
    /// axes, the settings that apply before the second axis's depend on
    /// one axis only: they are applied once per value of that axis, not
    /// once per cell (a `mix` of 1000 projects took milliseconds per cell
    /// to build, copy and, for a path setting, write to JSON and back).
    fn check_all(&self, axes: &[Axis], threads: usize) -> Vec<Checked> {
        let ncells = axes.iter().map(|a| a.values.len()).product::<usize>();
        let one = |index: usize| -> Checked {
            let scn = self.build(axes, index)?;
            Ok(Cell {
                index,
                scenario: self.check(axes, index, &scn),
            })
        };
        if axes.len() != 2 {
            return map_range(threads, ncells, one);
        }
        // A cell's settings in the order `knobs::apply_all` applies them:
        // by order, the fixed ones before the axes, axis 0 before axis 1.
        let mut seq: Vec<Step> = self
            .late
            .iter()
            .map(|(i, s)| Step::Set(*i, s))
            .chain([Step::Axis(0), Step::Axis(1)])
            .collect();
        seq.sort_by_key(|s| self.param(s).order());
        let at = |a: usize| {
            seq.iter()
                .position(|s| matches!(s, Step::Axis(x) if *x == a))
        };
        let (p0, p1) = (at(0).unwrap_or(0), at(1).unwrap_or(0));
        // `outer`'s value applies first; the other's, from `split` on.
        let (outer, split) = if p0 < p1 { (0, p1) } else { (1, p0) };
        let (head, tail) = seq.split_at(split);
        let cell_of = |o: usize, i: usize| {
            if outer == 0 {
                o * axes[1].values.len() + i
            } else {
                i * axes[1].values.len() + o
            }
        };
        // Settings after the split that neither read nor write the projects
        // can be applied to the scenario without them.
        let spare = tail.iter().all(|s| !self.param(s).reaches_projects());
        let with_path = tail.iter().any(|s| matches!(self.param(s), Param::Path(_)));
        let per_value = |o: usize| -> Vec<(usize, Checked)> {
            let ninner = axes[1 - outer].values.len();
            let pre = match self.apply_steps(axes, self.prefix.clone(), head, o) {
                Ok(s) => s,
                Err(e) => {
                    return (0..ninner)
                        .map(|i| (cell_of(o, i), Err(e.clone())))
                        .collect()
                }
            };
            let mut shell = pre.clone();
            let mut projects = std::mem::take(&mut shell.projects);
            // A path setting writes the whole scenario to JSON and back:
            // apart only if the projects come back the same (a number that
            // is not finite does not, and fails the setting, as it did).
            let apart = spare
                && (!with_path
                    || serde_json::to_value(&projects)
                        .and_then(serde_json::from_value::<Vec<Project>>)
                        .is_ok_and(|back| back == projects));
            (0..ninner)
                .map(|i| {
                    let index = cell_of(o, i);
                    let valid = if apart {
                        self.apply_steps(axes, shell.clone(), tail, i).map(|mut s| {
                            s.projects = std::mem::take(&mut projects);
                            let v = self.check(axes, index, &s);
                            projects = std::mem::take(&mut s.projects);
                            v
                        })
                    } else {
                        self.apply_steps(axes, pre.clone(), tail, i)
                            .map(|s| self.check(axes, index, &s))
                    };
                    (index, valid.map(|scenario| Cell { index, scenario }))
                })
                .collect()
        };
        let mut cells: Vec<Option<Checked>> = vec![None; ncells];
        for (index, c) in map_range(threads, axes[outer].values.len(), per_value)
            .into_iter()
            .flatten()
        {
            cells[index] = Some(c);
        }
        cells.into_iter().flatten().collect()
    }

    fn param<'a>(&'a self, step: &Step<'a>) -> &'a Param {
        match step {
            Step::Set(_, s) => &s.param,
            Step::Axis(a) => &self.axis_params[*a],
        }
    }

    /// `steps` applied to `scn` in turn, an axis's with its value at index
    /// `value`; an error names the setting at fault.
    fn apply_steps(
        &self,
        axes: &[Axis],
        mut scn: Scenario,
        steps: &[Step],
        value: usize,
    ) -> Result<Scenario, (From, knobs::Fault)> {
        for step in steps {
            scn = match step {
                Step::Set(i, s) => knobs::apply(&scn, s).map_err(|f| (From::Set(*i), f))?,
                Step::Axis(a) => {
                    let s = Setting {
                        param: self.axis_params[*a].clone(),
                        value: axes[*a].values[value].clone(),
                    };
                    knobs::apply(&scn, &s).map_err(|f| (From::Axis(*a, value), f))?
                }
            };
        }
        Ok(scn)
    }
}

/// A cell checked: its validity, or the setting that cannot be applied.
type Checked = Result<Cell, (From, knobs::Fault)>;

/// One of a cell's settings: a fixed one (with its index among the fixed
/// ones), or an axis's.
enum Step<'a> {
    Set(usize, &'a Setting),
    Axis(usize),
}

/// `f` of 0..n, in order, on up to `threads` threads (this one among them;
/// on this one alone if the system will not start more). The threads are
/// joined before it returns: a thread that has only been told to end (as a
/// dropped rayon pool's are) keeps its stack mapped for a while, and under a
/// limit on memory the threads of the runs, started next, found no room.
fn map_range<T: Send>(threads: usize, n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let k = threads.min(n);
    if k <= 1 {
        return (0..n).map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut got = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return got;
            }
            got.push((i, f(i)));
        }
    };
    let mut all: Vec<(usize, T)> = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..k)
            .filter_map(|i| {
                std::thread::Builder::new()
                    .name(format!("vcsim-check-{i}"))
                    .stack_size(threads::stack_bytes())
                    .spawn_scoped(s, work)
                    .ok()
            })
            .collect();
        let mut all = work();
        for h in helpers {
            match h.join() {
                Ok(got) => all.extend(got),
                Err(p) => std::panic::resume_unwind(p),
            }
        }
        all
    });
    all.sort_unstable_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, t)| t).collect()
}

/// A loaded, checked sweep.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub path: PathBuf,
    pub def: Definition,
    pub base: Scenario,
    pub seed: u64,
    pub specs: Vec<PolicySpec>,
    /// The line of each policy in the sweep file (for errors found later,
    /// like a name no registry knows).
    pub policy_lines: Vec<usize>,
    pub inputs: Vec<Input>,
    pub cells: Vec<Cell>,
    plan: Plan,
}

/// Why the sweep itself sets `param` in every run, so that setting it in
/// `[set]` or an axis would change nothing: each run's seed is one of the
/// sweep's (`seed`, `seed + 1`... for `replications`, the same in every
/// cell, so that cells are compared on the same seeds).
fn set_by_the_sweep(param: &Param) -> Option<String> {
    (param.name() == "seed").then(|| {
        "a sweep gives every run its seed: `seed`, `seed + 1`... (the sweep file's top-level `seed`, default the scenario's, for its `replications`), the same in every cell: a seed here would change nothing; set the top-level `seed` or more `replications` instead".to_string()
    })
}

/// A TOML reader's error in a sweep or search space file: the key on its
/// line when there is one, the line, and a message that is never empty.
pub struct TomlFault {
    pub key: Option<String>,
    pub line: Option<usize>,
    pub message: String,
}

impl TomlFault {
    pub fn of(text: &str, e: &toml::de::Error) -> TomlFault {
        // A key missing from the file itself: the reader points at the
        // whole document, which is no line and no key of the user's.
        let whole = e.span().is_some_and(|sp| sp.start == 0);
        let missing = e
            .message()
            .strip_prefix("missing field `")
            .and_then(|r| r.split_once('`'))
            .map(|(k, _)| k.to_string());
        if let (true, Some(k)) = (whole, missing) {
            return TomlFault {
                key: None,
                line: None,
                message: format!("the key `{k}` is missing: the file must give it"),
            };
        }
        // `host.ncpus = 2` under [set] or [vary] is, to TOML, a table
        // `host` holding `ncpus`: serde's words for it ("expected a
        // borrowed string") say nothing of the fix.
        if e.message().contains("expected a borrowed string") {
            if let Some(sp) = e.span() {
                let key = key_at(text, sp.start);
                let start = text[..sp.start.min(text.len())]
                    .rfind('\n')
                    .map_or(0, |i| i + 1);
                let written = text[start..]
                    .split_once('=')
                    .map(|(k, _)| k.trim().to_string())
                    .filter(|k| !k.contains('\n'));
                if let Some(path) = written.filter(|k| k.contains('.') && !k.contains('"')) {
                    return TomlFault {
                        key,
                        line: Some(vcsim_framework::scenario::line_col(text, sp.start).0),
                        message: format!(
                            "an unquoted dotted key is read by TOML as tables, not as a parameter's path: quote it, as in `\"{}\" = ...`",
                            vcsim_framework::text::escape_controls(&path)
                        ),
                    };
                }
            }
        }
        TomlFault {
            key: e.span().and_then(|sp| key_at(text, sp.start)),
            line: e
                .span()
                .map(|sp| vcsim_framework::scenario::line_col(text, sp.start).0),
            message: vcsim_framework::scenario::toml_message(text, e),
        }
    }
}

/// The key written on the line of byte `at` (`KEY = ...`), under the
/// table header above it (`[set]` gives `set.KEY`), for errors of the TOML
/// reader that name a line but not its key (a number too large for an
/// integer).
fn key_at(text: &str, at: usize) -> Option<String> {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or("");
    let (k, _) = line.split_once('=')?;
    let k = k.trim();
    let bare = |k: &str| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.\"".contains(c))
    };
    if !bare(k) {
        return None;
    }
    let table = text[..start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    Some(match table {
        Some(t) if bare(&t) => format!("{t}.{k}"),
        _ => k.to_string(),
    })
}

/// Whether TOML text is a sweep file rather than a scenario: it has
/// `policies` or an `[[axis]]` (a scenario has neither). Text that is not
/// TOML is judged by its lines, so that its errors are reported by the
/// reader it was meant for.
pub fn is_sweep_text(text: &str) -> bool {
    match text.parse::<toml::Table>() {
        Ok(t) => t.contains_key("policies") || t.contains_key("axis"),
        Err(_) => text.lines().map(str::trim_start).any(|l| {
            l.starts_with("[[axis]]")
                || l.strip_prefix("policies")
                    .is_some_and(|r| r.trim_start().starts_with('='))
        }),
    }
}

impl Sweep {
    /// Reads a sweep file, its scenario (relative to the sweep file), and
    /// checks every cell's scenario.
    pub fn load(path: &Path) -> Result<Sweep, SweepError> {
        Sweep::load_with(path, &PolicySpec::parse)
    }

    /// [`Sweep::load`] with the policies parsed by `parse` (the runner's
    /// parser knows the family of a script named without one).
    pub fn load_with(path: &Path, parse: &SpecParser) -> Result<Sweep, SweepError> {
        let text = input::read_text(path, input::MAX_TEXT_BYTES).map_err(|e| SweepError {
            file: path.to_path_buf(),
            key: None,
            line: None,
            message: format!("cannot read the file: {e}"),
        })?;
        Sweep::from_str_with(&text, path, parse)
    }

    /// Parses sweep text; `path` names it and anchors the scenario path.
    pub fn from_str(text: &str, path: &Path) -> Result<Sweep, SweepError> {
        Sweep::from_str_with(text, path, &PolicySpec::parse)
    }

    /// [`Sweep::from_str`] with the policies parsed by `parse`.
    pub fn from_str_with(text: &str, path: &Path, parse: &SpecParser) -> Result<Sweep, SweepError> {
        let line_of =
            |span: std::ops::Range<usize>| vcsim_framework::scenario::line_col(text, span.start).0;
        let err = |key: &str, span: Option<std::ops::Range<usize>>, message: String| SweepError {
            file: path.to_path_buf(),
            key: (!key.is_empty()).then(|| key.to_string()),
            line: span.map(line_of),
            message,
        };
        let raw: RawSweep = toml::from_str(text).map_err(|e| {
            let f = TomlFault::of(text, &e);
            SweepError {
                file: path.to_path_buf(),
                key: f.key,
                line: f.line,
                message: f.message,
            }
        })?;
        // The name goes into plot titles and onto terminals.
        if let Some(m) = vcsim_framework::scenario::name_fault("name", raw.name.get_ref()) {
            return Err(err("name", Some(raw.name.span()), m));
        }
        // Paths go into messages, which keep line breaks: a line break in
        // one could forge a line of them.
        let controls = |v: &str| v.contains('\n');
        if controls(raw.scenario.get_ref()) {
            return Err(err(
                "scenario",
                Some(raw.scenario.span()),
                format!(
                    "`{}` holds a line break: rename the file",
                    vcsim_framework::text::escape_controls(raw.scenario.get_ref())
                ),
            ));
        }
        if let Some(p) = raw
            .policies
            .get_ref()
            .iter()
            .find(|p| controls(p.get_ref()))
        {
            return Err(err(
                "policies",
                Some(p.span()),
                format!(
                    "`{}` holds a line break",
                    vcsim_framework::text::escape_controls(p.get_ref())
                ),
            ));
        }
        let dir = path.parent().unwrap_or(Path::new(""));
        let scenario_rel = raw.scenario.get_ref().clone();
        let scenario_path = dir.join(&scenario_rel);
        let scenario_bytes =
            input::read_bounded(&scenario_path, input::MAX_TEXT_BYTES).map_err(|e| {
                err(
                    "scenario",
                    Some(raw.scenario.span()),
                    format!("cannot read `{}`: {e}", scenario_path.display()),
                )
            })?;
        let base =
            Scenario::from_toml_str(&String::from_utf8_lossy(&scenario_bytes), &scenario_path)
                .map_err(|e| err("scenario", Some(raw.scenario.span()), e.to_string()))?;

        let policies: Vec<String> = raw
            .policies
            .get_ref()
            .iter()
            .map(|p| p.get_ref().clone())
            .collect();
        if policies.is_empty() {
            return Err(err(
                "policies",
                Some(raw.policies.span()),
                "name at least one policy".into(),
            ));
        }
        let mut specs = Vec::new();
        for p in raw.policies.get_ref() {
            specs.push(parse(p.get_ref()).map_err(|e| err("policies", Some(p.span()), e))?);
        }
        for (i, s) in specs.iter().enumerate() {
            if specs[..i].iter().any(|o| o.display() == s.display()) {
                let p = &raw.policies.get_ref()[i];
                return Err(err(
                    "policies",
                    Some(p.span()),
                    format!("`{}` is listed twice", s.display()),
                ));
            }
        }
        // Tables and plots name the policies by their labels: one each.
        vcsim_framework::registry::check_labels(&specs)
            .map_err(|(i, e)| err("policies", Some(raw.policies.get_ref()[i].span()), e))?;
        let whole = |key: &str, v: &Spanned<toml::Value>| match v.get_ref() {
            toml::Value::Integer(i) => Ok(*i),
            other => Err(err(
                key,
                Some(v.span()),
                format!("must be a whole number, found {other}"),
            )),
        };
        let replications = match &raw.replications {
            None => 1,
            Some(r) => {
                let v = whole("replications", r)?;
                if !(1..=i64::from(MAX_REPLICATIONS)).contains(&v) {
                    return Err(err(
                        "replications",
                        Some(r.span()),
                        format!("must be from 1 to {MAX_REPLICATIONS}, found {v}"),
                    ));
                }
                v as u32
            }
        };
        // Read as a scenario reads its own `seed` (a string of digits above
        // TOML's largest integer too): set on the base scenario, whose
        // reader checks it.
        let seed = match &raw.seed {
            None => base.seed,
            Some(s) => {
                let bad = |m: &str| {
                    let m = m.strip_prefix("cannot set `seed`: ").unwrap_or(m);
                    err("seed", Some(s.span()), m.to_string())
                };
                let value = knobs::toml_to_json(s.get_ref()).map_err(|m| bad(&m))?;
                let param = Param::parse("seed").map_err(|m| bad(&m))?;
                knobs::apply(&base, &Setting { param, value })
                    .map_err(|f| bad(f.message()))?
                    .seed
            }
        };
        // Replication r runs on seed + r: none may pass the largest seed
        // (`vcsim compare` refuses the same).
        if seed
            .checked_add(u64::from(replications).saturating_sub(1))
            .is_none()
        {
            let (key, span) = match (&raw.seed, &raw.replications) {
                (Some(s), _) => ("seed", s.span()),
                (None, Some(r)) => ("replications", r.span()),
                (None, None) => ("scenario", raw.scenario.span()),
            };
            let from = if raw.seed.is_some() {
                "the sweep's `seed`".to_string()
            } else {
                format!(
                    "the seed of `{}`",
                    vcsim_framework::text::escape_controls(&scenario_rel)
                )
            };
            return Err(err(
                key,
                Some(span),
                format!(
                    "{from}, {seed}, with {replications} replications: the seeds `seed + r` would pass {} (the largest); use a smaller `seed` or fewer `replications`",
                    u64::MAX
                ),
            ));
        }
        let metrics: Vec<String> = match &raw.metrics {
            None => vec![
                "waste".into(),
                "idleness".into(),
                "share_violation".into(),
                "monotony".into(),
            ],
            Some(ms) => {
                let mut out = Vec::new();
                for m in ms.get_ref() {
                    if !Metrics::NAMES.contains(&m.get_ref().as_str()) {
                        return Err(err(
                            "metrics",
                            Some(m.span()),
                            format!(
                                "no metric `{}`; metrics are {}",
                                m.get_ref(),
                                Metrics::NAMES.join(", ")
                            ),
                        ));
                    }
                    out.push(m.get_ref().clone());
                }
                out
            }
        };

        // Fixed settings, then the axes.
        let mut set_json = std::collections::BTreeMap::new();
        let mut fixed: Vec<(Setting, std::ops::Range<usize>)> = Vec::new();
        for (k, v) in &raw.set {
            let key = format!("set.{k}");
            let param = Param::parse(k).map_err(|m| err(&key, Some(v.span()), m))?;
            if let Some(m) = set_by_the_sweep(&param) {
                return Err(err(&key, Some(v.span()), m));
            }
            let json =
                knobs::toml_to_json(v.get_ref()).map_err(|m| err(&key, Some(v.span()), m))?;
            set_json.insert(k.clone(), json.clone());
            fixed.push((Setting { param, value: json }, v.span()));
        }
        if raw.axis.len() > 2 {
            return Err(err(
                "axis",
                Some(raw.axis[2].param.span()),
                format!(
                    "a sweep has at most two [[axis]] tables, found {}",
                    raw.axis.len()
                ),
            ));
        }
        let mut axes = Vec::new();
        let mut axis_params = Vec::new();
        let mut axis_spans = Vec::new();
        let mut axis_param_spans = Vec::new();
        for (i, a) in raw.axis.iter().enumerate() {
            let key = format!("axis.{i}.param");
            let param =
                Param::parse(a.param.get_ref()).map_err(|m| err(&key, Some(a.param.span()), m))?;
            if let Some(m) = set_by_the_sweep(&param) {
                return Err(err(&key, Some(a.param.span()), m));
            }
            if raw.set.contains_key(a.param.get_ref())
                || axes.iter().any(|x: &Axis| &x.param == a.param.get_ref())
            {
                return Err(err(
                    &key,
                    Some(a.param.span()),
                    format!("`{}` is set twice", a.param.get_ref()),
                ));
            }
            if a.values.get_ref().is_empty() {
                return Err(err(
                    &format!("axis.{i}.values"),
                    Some(a.values.span()),
                    "list at least one value".into(),
                ));
            }
            let mut values = Vec::new();
            let mut spans = Vec::new();
            // By label: `2` and `2.0` are one cell in the tables and plots.
            let mut seen = std::collections::HashSet::new();
            for (j, v) in a.values.get_ref().iter().enumerate() {
                let key = format!("axis.{i}.values.{j}");
                let json =
                    knobs::toml_to_json(v.get_ref()).map_err(|m| err(&key, Some(v.span()), m))?;
                // Labels go into CSV files, plots (XML) and terminals.
                if let Some(m) = json
                    .as_str()
                    .and_then(|t| vcsim_framework::scenario::name_fault("value", t))
                {
                    return Err(err(&key, Some(v.span()), m));
                }
                if !seen.insert(value_label(&json)) {
                    return Err(err(
                        &key,
                        Some(v.span()),
                        format!(
                            "`{}` is listed twice in the values of `{}`: each value makes one cell",
                            value_label(&json),
                            a.param.get_ref()
                        ),
                    ));
                }
                values.push(json);
                spans.push(v.span());
            }
            axes.push(Axis {
                param: a.param.get_ref().clone(),
                values,
            });
            axis_params.push(param);
            axis_spans.push(spans);
            axis_param_spans.push(a.param.span());
        }

        // A setting that others, applied after it, overwrite in full would
        // make cells that differ only in their labels.
        let all: Vec<&Param> = fixed
            .iter()
            .map(|(s, _)| &s.param)
            .chain(&axis_params)
            .collect();
        if let Some((i, _, m)) = knobs::overridden(&all) {
            return Err(if i < fixed.len() {
                err(
                    &format!("set.{}", all[i].name()),
                    Some(fixed[i].1.clone()),
                    m,
                )
            } else {
                let a = i - fixed.len();
                err(
                    &format!("axis.{a}.param"),
                    Some(axis_param_spans[a].clone()),
                    m,
                )
            });
        }

        // Every cell's scenario: a value of the wrong kind, or a path that
        // does not exist, is an input error; a value the scenario rejects
        // fails only its cell. Without an axis there is one cell: the
        // scenario with `[set]` applied. The cells are counted before any is
        // built, so that a product of huge axes is refused, not allocated.
        let ncells = axes
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
            .filter(|&n| n <= MAX_CELLS);
        let Some(ncells) = ncells else {
            let sizes: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
            return Err(err(
                "axis",
                axis_param_spans.last().cloned(),
                format!(
                    "the axes make {} cells; a sweep has at most {MAX_CELLS} (one process makes at most {MAX_RUNS} runs, and every shard reads every cell): use fewer values",
                    sizes.join(" x ")
                ),
            ));
        };
        // The fixed settings that apply before every axis (see
        // [`Param::order`]) are applied once, not once per cell.
        let first_axis = axis_params
            .iter()
            .map(Param::order)
            .min()
            .unwrap_or(u8::MAX);
        let (early, late): (Vec<usize>, Vec<usize>) =
            (0..fixed.len()).partition(|&i| fixed[i].0.param.order() <= first_axis);
        let early_settings: Vec<Setting> = early.iter().map(|&i| fixed[i].0.clone()).collect();
        let fault = |from: From, f: knobs::Fault| {
            // The setting at fault (its parameter and value), and the keys
            // and spans of its value and of its parameter.
            let ((param, value), key, span, pkey, pspan) = match from {
                From::Set(i) => {
                    let (s, sp) = &fixed[i];
                    let k = format!("set.{}", s.param.name());
                    ((&s.param, &s.value), k.clone(), sp.clone(), k, sp.clone())
                }
                From::Axis(a, j) => (
                    (&axis_params[a], &axes[a].values[j]),
                    format!("axis.{a}.values.{j}"),
                    axis_spans[a][j].clone(),
                    format!("axis.{a}.param"),
                    axis_param_spans[a].clone(),
                ),
            };
            match f {
                knobs::Fault::Param(m) => err(&pkey, Some(pspan), m),
                knobs::Fault::Value(m) => err(
                    &key,
                    Some(span),
                    format!("{} = {}: {m}", param.name(), value_label(value)),
                ),
            }
        };
        let prefix = knobs::apply_all(&base, &early_settings)
            .map_err(|(i, f)| fault(From::Set(early[i]), f))?;
        let plan = Plan {
            prefix,
            late: late.iter().map(|&i| (i, fixed[i].0.clone())).collect(),
            axis_params: axis_params.clone(),
        };
        // Checked on every core (each scenario is dropped once checked);
        // on one thread if the system will not start more. The first
        // fault in cell order is reported, whatever the threads.
        let cells = plan
            .check_all(&axes, threads::count(None, ncells))
            .into_iter()
            .collect::<Result<Vec<Cell>, _>>()
            .map_err(|(from, f)| fault(from, f))?;

        let file_name = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut inputs = vec![
            Input {
                path: file_name.clone(),
                sha256: sha256_hex(text.as_bytes()),
            },
            Input {
                path: scenario_rel.clone(),
                sha256: sha256_hex(&scenario_bytes),
            },
        ];
        for p in &policies {
            for part in p.split(',') {
                if part
                    .split_once('=')
                    .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("label"))
                {
                    continue;
                }
                let v = part.split_once('=').map_or(part, |(_, v)| v).trim();
                if v.ends_with(".rhai") && !inputs.iter().any(|i| i.path == v) {
                    let bytes = std::fs::read(v).unwrap_or_default();
                    inputs.push(Input {
                        path: v.to_string(),
                        sha256: sha256_hex(&bytes),
                    });
                }
            }
        }
        Ok(Sweep {
            path: path.to_path_buf(),
            def: Definition {
                name: raw.name.get_ref().clone(),
                description: raw.description.clone(),
                file: file_name,
                scenario: scenario_rel,
                policies: specs.iter().map(|s| s.display()).collect(),
                replications,
                metrics,
                set: set_json,
                axes,
            },
            base,
            seed,
            policy_lines: raw
                .policies
                .get_ref()
                .iter()
                .map(|p| line_of(p.span()))
                .collect(),
            specs,
            inputs,
            cells,
            plan,
        })
    }

    /// The scenario of cell `index`, or why it cannot run (as
    /// [`Cell::scenario`] says).
    pub fn cell_scenario(&self, index: usize) -> Result<Scenario, String> {
        let axes = &self.def.axes;
        let scn = self
            .plan
            .build(axes, index)
            .map_err(|(_, f)| f.message().to_string())?;
        self.plan.check(axes, index, &scn)?;
        Ok(scn)
    }

    /// The seeds of the replications: seed, seed+1, ... (paired across policies).
    pub fn seeds(&self) -> Vec<u64> {
        (0..self.def.replications as u64)
            .map(|r| self.seed + r)
            .collect()
    }

    /// The manifest of a run of this sweep.
    pub fn manifest(&self, shard: Option<Shard>) -> Manifest {
        Manifest {
            vcsim_version: VERSION.to_string(),
            sweep: self.def.clone(),
            inputs: self.inputs.clone(),
            seeds: self.seeds(),
            cells: self.cells.len(),
            shard,
            cell_ids: (0..self.cells.len())
                .filter(|&c| shard.is_none_or(|s| s.contains(c)))
                .collect(),
            runs: 0,
            failed_runs: 0,
            results_sha256: String::new(),
        }
    }
}

/// How to run a sweep.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Worker threads (see [`threads::count`]); `None`: the available
    /// cores. The output does not depend on it.
    pub jobs: Option<usize>,
    pub shard: Option<Shard>,
    /// Show a progress bar on standard error (only drawn on a terminal).
    pub progress: bool,
}

/// Runs the cells of `opts.shard` (all cells without one): every policy on
/// every seed. Rows come in (cell, policy, replication) order whatever the
/// number of threads. The error: more than [`MAX_RUNS`], or the worker
/// threads could not be started (nothing ran).
pub fn run(sweep: &Sweep, registry: &Registry, opts: RunOptions) -> Result<Vec<Row>, String> {
    use rayon::prelude::*;
    runs_within_bound(sweep, opts.shard)?;
    let seeds = sweep.seeds();
    let tasks: Vec<(usize, usize, usize)> = sweep
        .cells
        .iter()
        .filter(|c| opts.shard.is_none_or(|s| s.contains(c.index)))
        .flat_map(|c| {
            let np = sweep.specs.len();
            let nr = seeds.len();
            (0..np).flat_map(move |p| (0..nr).map(move |r| (c.index, p, r)))
        })
        .collect();
    let bar = if opts.progress && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let b = indicatif::ProgressBar::new(tasks.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} runs, {elapsed} elapsed, ~{eta} left",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let one = |&(c, p, r): &(usize, usize, usize)| -> Row {
        let seed = seeds[r];
        // Built per run (microseconds, against a run's milliseconds) so
        // that no more scenarios are in memory than there are threads.
        // (Load checked it: it is not validated again.)
        let outcome = match sweep.cells[c].scenario.clone().and_then(|()| {
            sweep
                .plan
                .build(&sweep.def.axes, c)
                .map_err(|(_, f)| f.message().to_string())
        }) {
            Err(e) => Err(e),
            Ok(scn) => {
                let go = || {
                    vcsim_framework::run_spec(
                        &scn,
                        registry,
                        &sweep.specs[p],
                        SimOptions {
                            seed: Some(seed),
                            ..Default::default()
                        },
                    )
                };
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(go)) {
                    Ok(Ok(out)) => Ok(Metrics::NAMES
                        .iter()
                        .map(|m| out.report.metrics.get(m).unwrap_or(f64::NAN))
                        .collect()),
                    Ok(Err(e)) => Err(e),
                    Err(p) => Err(format!(
                        "the run panicked: {}",
                        p.downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default()
                    )),
                }
            }
        };
        bar.inc(1);
        Row {
            cell: c,
            labels: sweep.def.cell_labels(c),
            policy: sweep.def.policies[p].clone(),
            replication: r as u32,
            seed,
            outcome,
        }
    };
    let pool = threads::pool(opts.jobs, tasks.len())?;
    let rows = pool.install(|| tasks.par_iter().map(one).collect());
    bar.finish_and_clear();
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_runs_at_most_half_a_million_cells() {
        // 600,000 cells of one run each: over the cells one process keeps
        // (each about a kilobyte), though under the million runs.
        let e = process_bound(600_000, 1, 1, None).unwrap_err();
        assert!(
            e.contains("600000 cells; one sweep process runs at most 500000"),
            "{e}"
        );
        assert!(e.contains("`--shard K/2`"), "{e}");
        let half = Shard { k: 1, n: 2 };
        assert_eq!(process_bound(600_000, 1, 1, Some(half)), Ok(300_000));
        // The runs' bound still counts runs: 200,000 cells x 10 runs.
        let e = process_bound(200_000, 2, 5, None).unwrap_err();
        assert!(e.contains("at most 1000000"), "{e}");
    }

    /// Each cell's check, built cell by cell as a run builds it.
    fn one_by_one(sweep: &Sweep) -> Vec<Checked> {
        let axes = &sweep.def.axes;
        (0..sweep.def.cell_count())
            .map(|index| {
                let scn = sweep.plan.build(axes, index)?;
                let scenario = sweep.plan.check(axes, index, &scn);
                Ok(Cell { index, scenario })
            })
            .collect()
    }

    #[test]
    fn checking_per_value_finds_what_checking_per_cell_finds() {
        // Project 1's app takes 2 CPUs, so 1 CPU fails the cell: a fault of
        // the combination of the axes. Both axis orders, a setting after the
        // split that reaches the projects (slack) and ones that do not.
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/t.toml"));
        let mix = "[[axis]]\nparam = \"mix\"\nvalues = [2, 3, 5]\n";
        let cpus = "[[axis]]\nparam = \"host.ncpus\"\nvalues = [1, 2, 300]\n";
        let buffer = "[[axis]]\nparam = \"buffer_hours\"\nvalues = [1, -2]\n";
        let slack = "[[axis]]\nparam = \"slack\"\nvalues = [1e-9, 2]\n";
        let cases = [
            ("", format!("{mix}{cpus}")),
            ("", format!("{cpus}{mix}")),
            ("slack = 0.5\n", format!("{mix}{cpus}")),
            ("", format!("{mix}{buffer}")),
            ("", format!("{buffer}{mix}")),
            ("\"host.ncpus\" = 1\n", format!("{mix}{slack}")),
        ];
        for (n, (set, axes)) in cases.iter().enumerate() {
            let text = format!(
                "name = \"t\"\nscenario = \"../../scenarios/paper-base.toml\"\n\
                 policies = [\"CS1\"]\n[set]\n\"project.1.app.0.cpus\" = 2\n{set}{axes}"
            );
            let sweep = Sweep::from_str(&text, path).unwrap_or_else(|e| panic!("case {n}: {e}"));
            let per_cell = one_by_one(&sweep);
            assert!(
                per_cell
                    .iter()
                    .any(|c| c.as_ref().is_ok_and(|c| c.scenario.is_err())),
                "case {n} has an invalid cell to find"
            );
            for threads in [1, 2, 3] {
                let fast = sweep.plan.check_all(&sweep.def.axes, threads);
                assert_eq!(format!("{fast:?}"), format!("{per_cell:?}"), "case {n}");
            }
        }
    }

    #[test]
    fn sweep_files_are_told_from_scenarios() {
        assert!(is_sweep_text(
            "name = \"r\"\nscenario = \"s.toml\"\npolicies = [\"CS1\"]\n"
        ));
        assert!(is_sweep_text("[[axis]]\nparam = \"mix\"\nvalues = [1]\n"));
        assert!(!is_sweep_text(
            "name = \"s\"\nseed = 1\n[host]\nncpus = 2\n"
        ));
        // Not TOML: judged by its lines.
        assert!(is_sweep_text("policies = [\"CS1\"\n"));
        assert!(!is_sweep_text("[host\nncpus = 2\n"));
    }
}
