//! `vcsim search`: glue between the command line and `vcsim-search`.

use crate::{output, Failure};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use vcsim_framework::{registry::check_labels, Metrics, PolicySpec, Registry};
use vcsim_search::{Contest, Space};

pub struct Args<'a> {
    pub policies: &'a [String],
    pub metric: &'a str,
    pub space: Option<&'a Path>,
    pub scenario: Option<&'a Path>,
    pub budget: u64,
    pub seeds: u32,
    pub seed: u64,
    pub days: Option<f64>,
    pub jobs: Option<usize>,
    /// Run only part K of N (`--shard 2/4`): an independent search of
    /// budget / N runs, merged by `vcsim merge`.
    pub shard: Option<&'a str>,
    pub out: &'a Path,
}

/// What a shard writes beside its trail (`search.json`), so that `vcsim
/// merge` can check that the shards belong together, that each trail is
/// the one its search wrote, and that the space is still the one searched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Manifest {
    /// The format: [`FORMAT`].
    vcsim_search: u32,
    policies: Vec<String>,
    metric: String,
    seeds: u32,
    seed: u64,
    days: Option<f64>,
    budget: u64,
    /// As `vcsim search` was given them (relative to where it ran).
    space: Option<PathBuf>,
    scenario: Option<PathBuf>,
    shard: [usize; 2],
    /// The space file (or, without one, the scenario file) relative to this
    /// directory, so that a merge run elsewhere finds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    input_from_shard: Option<String>,
    /// SHA-256 of the space file's bytes (with `--space`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    space_sha256: Option<String>,
    /// SHA-256 of the base scenario as read ([`Space::base_sha256`]).
    #[serde(default)]
    scenario_sha256: String,
    /// The policies' script files and their SHA-256.
    #[serde(default)]
    scripts: Vec<vcsim_sweep::Input>,
    /// Rows of `trail.csv` (points), the runs they spent, and its SHA-256.
    #[serde(default)]
    points: usize,
    #[serde(default)]
    runs: u64,
    #[serde(default)]
    trail_sha256: String,
}

/// The format of `search.json` this vcsim writes and reads: 2 records the
/// checksums `merge` verifies (format 1, before them, is refused).
const FORMAT: u32 = 2;

const MANIFEST: &str = "search.json";

/// What a search writes, and what a shard writes, in its `--out`.
const OUTPUTS: [&str; 4] = ["trail.csv", "best.svg", "worst.toml", MANIFEST];
const SHARD_OUTPUTS: [&str; 3] = ["trail.csv", "worst.toml", MANIFEST];

/// The run length a search uses unless told (`--days`): long enough for
/// the paper's effects to show, short enough for thousands of runs.
const DEFAULT_MAX_DAYS: f64 = 20.0;

/// The largest budget a search takes: about a day of runs of the base
/// scenario on one core.
const MAX_BUDGET: u64 = 10_000_000;

/// The most shards a search is cut into: the bound sweeps use, so that a
/// merge counts shards up to it and never further.
const MAX_SHARDS: usize = vcsim_sweep::MAX_CELLS;

/// Where a search's arguments came from, for its errors: the command line,
/// or a shard's `search.json` read by `vcsim merge` (whose user gave no flag).
#[derive(Clone, Copy)]
enum Source<'a> {
    Flags,
    Manifest(&'a Path),
}

impl Source<'_> {
    /// `--seeds`, or `DIR/search.json: key `seeds`:`.
    fn key(self, key: &str) -> String {
        match self {
            Source::Flags => format!("--{key}"),
            Source::Manifest(p) => format!("{}: key `{key}`:", p.display()),
        }
    }
}

fn check(a: &Args, from: Source) -> Result<(), Failure> {
    if a.policies.len() != 2 {
        let head = match from {
            Source::Flags => String::new(),
            Source::Manifest(_) => format!("{} ", from.key("policies")),
        };
        return Err(Failure::input(format!(
            "{head}give two policies, A then B (--policy A --policy B): the search looks for where A is worse than B; got {}",
            a.policies.len()
        )));
    }
    let known = Metrics::NAMES.contains(&a.metric)
        || a.metric
            .strip_prefix("idleness.")
            .is_some_and(|r| !r.is_empty());
    if !known {
        return Err(Failure::input(format!(
            "{} {}: not a metric; use one of {} (or idleness.RESOURCE, like idleness.nvidia)",
            from.key("metric"),
            output::name(a.metric),
            Metrics::NAMES.join(", ")
        )));
    }
    if !(2..=1000).contains(&a.seeds) {
        return Err(Failure::input(format!(
            "{} must be 2 to 1000, found {}: a loss counts only when its paired interval excludes zero",
            from.key("seeds"),
            a.seeds
        )));
    }
    let per = 2 * a.seeds as u64;
    if a.budget < per || a.budget > MAX_BUDGET {
        return Err(Failure::input(format!(
            "{} must be {per} to {MAX_BUDGET} runs, found {} (a point costs 2 x seeds = {per} runs)",
            from.key("budget"),
            a.budget
        )));
    }
    if let Some(d) = a.days {
        if !(d.is_finite() && (1.0..=36_500.0).contains(&d)) {
            return Err(Failure::input(format!(
                "{} must be 1 to 36500, found {}",
                from.key("days"),
                short(d)
            )));
        }
    }
    if a.jobs == Some(0) {
        return Err(Failure::input("--jobs must be at least 1"));
    }
    Ok(())
}

/// A number for a message, short: `1e308`, not 309 digits.
fn short(x: f64) -> String {
    if x.is_finite() {
        vcsim_sweep::value_label(&serde_json::Value::from(x))
    } else {
        x.to_string()
    }
}

/// Refuses a per-resource metric (`idleness.nvidia`) that no scenario of
/// the space can have: every point would fail, after all its runs.
fn check_resource(a: &Args, from: Source, space: &Space) -> Result<(), Failure> {
    let Some((_, want)) = a.metric.split_once('.') else {
        return Ok(());
    };
    let have = space.resources();
    if have.iter().any(|r| r == want) {
        return Ok(());
    }
    let have: Vec<String> = have.iter().map(|r| output::name(r)).collect();
    Err(Failure::input(format!(
        "{} {}: no scenario of this search has the resource `{}`: the host of scenario `{}` has {} only, and a space varies numbers, so it adds no GPU",
        from.key("metric"),
        output::name(a.metric),
        output::name(want),
        output::name(&space.base.name),
        have.join(", ")
    )))
}

fn load_space(a: &Args) -> Result<Space, Failure> {
    match (a.space, a.scenario) {
        (Some(_), Some(_)) => Err(Failure::input(
            "give --space FILE or --scenario FILE, not both (a space names its own scenario)",
        )),
        (Some(f), None) => Space::load(f).map_err(|e| Failure::input(e.to_string())),
        (None, Some(s)) => {
            let base = crate::import_cmd::load_scenario(s)?;
            Ok(Space::around(base, s.to_path_buf()))
        }
        (None, None) => Err(Failure::input(
            "give --space FILE (a base scenario and the ranges that may vary) or --scenario FILE (a default space of BOINC hosts around it)",
        )),
    }
}

/// What a search runs: the space (with the run length of `--days`), the
/// policies and their registry, and the fingerprints a shard records.
struct Setup {
    space: Space,
    specs: Vec<PolicySpec>,
    reg: Registry,
    /// SHA-256 of the space file's bytes, with `--space`.
    space_sha256: Option<String>,
    /// [`Space::base_sha256`], before the run length is set.
    scenario_sha256: String,
    scripts: Vec<vcsim_sweep::Input>,
}

/// The script files of `specs` (paths ending `.rhai`, as given) and the
/// SHA-256 of each, sorted by path; a script that cannot be read has
/// an empty checksum (loading it says why).
fn scripts_of(specs: &[PolicySpec]) -> Vec<vcsim_sweep::Input> {
    let mut paths: Vec<&str> = specs
        .iter()
        .flat_map(|s| vcsim_framework::Family::ALL.map(|f| s.name(f)))
        .filter(|n| n.ends_with(".rhai"))
        .collect();
    paths.sort_unstable();
    paths.dedup();
    paths
        .into_iter()
        .map(|p| vcsim_sweep::Input {
            path: p.to_string(),
            sha256: vcsim_framework::input::read_bounded(
                Path::new(p),
                vcsim_framework::input::MAX_TEXT_BYTES,
            )
            .map(|b| vcsim_sweep::sha256_hex(&b))
            .unwrap_or_default(),
        })
        .collect()
}

fn setup(a: &Args, from: Source, plugins: &[PathBuf]) -> Result<Setup, Failure> {
    crate::extensions::load_plugins_first(plugins)?;
    check(a, from)?;
    // A policy read from a manifest names its scripts as `vcsim search`
    // was given them: say so if one cannot be found.
    let ctx = |f: Failure| {
        match from {
        Source::Flags => f,
        Source::Manifest(_) => Failure {
            status: f.status,
            message: format!(
                "{} {} (a script's path is relative to the directory `vcsim search` ran in: run merge from there)",
                from.key("policies"),
                f.message
            ),
        },
    }
    };
    let specs = crate::extensions::parse_specs(a.policies).map_err(ctx)?;
    // One policy twice would be searched against itself (`compare`
    // refuses the same).
    if specs[0].display() == specs[1].display() {
        let head = match from {
            Source::Flags => "--policy:".to_string(),
            Source::Manifest(_) => from.key("policies"),
        };
        return Err(Failure::input(format!(
            "{head} `{}` is listed twice: a search looks for where policy A is worse than another policy B",
            output::name(&specs[0].display())
        )));
    }
    check_labels(&specs).map_err(|(_, e)| Failure::input(e))?;
    let mut space = load_space(a)?;
    let space_sha256 = a.space.map(file_sha256).transpose()?;
    check_resource(a, from, &space)?;
    // Each point runs on the base's seed + r for r below --seeds, as
    // `vcsim compare --replications` would (which refuses the same).
    let seed = space.base.seed;
    if seed.checked_add(u64::from(a.seeds) - 1).is_none() {
        let file = a.space.or(a.scenario).unwrap_or(Path::new(""));
        return Err(Failure::input(format!(
            "{}: the scenario's `seed`, {seed}, with {} {}: the seeds would pass {} (the largest); give the scenario a smaller `seed`, or fewer seeds",
            file.display(),
            from.key("seeds"),
            a.seeds,
            u64::MAX
        )));
    }
    let scenario_sha256 = space.base_sha256().map_err(Failure::input)?;
    let full = space.base.duration_days;
    let days = a.days.unwrap_or(full.min(DEFAULT_MAX_DAYS));
    if a.days.is_none() && days < full {
        output::note(&format!(
            "note: searching with {days}-day runs (the scenario has {full}); --days {full} searches at full length"
        ));
    }
    space.base.duration_days = days;
    space
        .base
        .validate()
        .map_err(|(k, m)| Failure::input(format!("--days {days}: key `{k}`: {m}")))?;
    let scripts = scripts_of(&specs);
    let reg = crate::extensions::registry_for(plugins, &specs).map_err(ctx)?;
    Ok(Setup {
        space,
        specs,
        reg,
        space_sha256,
        scenario_sha256,
        scripts,
    })
}

/// SHA-256 of a space file's bytes (read as the space loader reads it).
fn file_sha256(f: &Path) -> Result<String, Failure> {
    vcsim_framework::input::read_bounded(f, vcsim_framework::input::MAX_TEXT_BYTES)
        .map(|b| vcsim_sweep::sha256_hex(&b))
        .map_err(|e| Failure::input(format!("{}: cannot read it: {e}", f.display())))
}

fn contest<'r>(a: &Args, specs: &[PolicySpec], reg: &'r Registry) -> Contest<'r> {
    Contest {
        registry: reg,
        policies: [specs[0].clone(), specs[1].clone()],
        metric: a.metric.to_string(),
        seeds: a.seeds,
    }
}

fn progress_bar(total: u64) -> indicatif::ProgressBar {
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(total);
    b.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {elapsed} elapsed")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    b
}

fn write(out: &Path, name: &str, text: &str) -> Result<(), Failure> {
    let p = out.join(name);
    vcsim_sweep::output::write_output(&p, text)
        .map_err(|e| Failure::running(format!("cannot write {}: {e}", p.display())))
}

/// `file` relative to the directory `dir` (both exist), through their
/// real paths: `../space.toml`. None if they share no root.
fn relative_to(dir: &Path, file: &Path) -> Option<String> {
    let d = std::fs::canonicalize(dir).ok()?;
    let f = std::fs::canonicalize(file).ok()?;
    let dc: Vec<_> = d.components().collect();
    let fc: Vec<_> = f.components().collect();
    let common = dc.iter().zip(&fc).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return None;
    }
    let mut rel = PathBuf::new();
    for _ in common..dc.len() {
        rel.push("..");
    }
    for c in &fc[common..] {
        rel.push(c);
    }
    rel.to_str().map(String::from)
}

pub fn search(a: &Args, plugins: &[PathBuf]) -> Result<(), Failure> {
    let shard = a
        .shard
        .map(vcsim_sweep::Shard::parse)
        .transpose()
        .map_err(Failure::input)?;
    if let Some(s) = shard.filter(|s| s.n > MAX_SHARDS) {
        return Err(Failure::input(format!(
            "--shard {}/{}: a search is cut into at most {MAX_SHARDS} shards",
            s.k, s.n
        )));
    }
    let set = setup(a, Source::Flags, plugins)?;
    let space = &set.space;
    let contest = contest(a, &set.specs, &set.reg);
    let per = contest.runs_per_point();
    let budget = match shard {
        Some(s) if a.budget / (s.n as u64) < per => {
            return Err(Failure::input(format!(
                "--budget {} cut into {} shards leaves less than one point ({per} runs) a shard",
                a.budget, s.n
            )))
        }
        Some(s) => a.budget / s.n as u64,
        None => a.budget,
    };
    // Every output can be written: found before the first run, not after
    // the last.
    let outputs: &[&str] = if shard.is_some() {
        &SHARD_OUTPUTS
    } else {
        &OUTPUTS
    };
    vcsim_search::output::prepare_out(a.out, outputs).map_err(Failure::input)?;
    let pool =
        vcsim_sweep::threads::pool(a.jobs, (budget / 2).max(1) as usize).map_err(Failure::input)?;
    let Some(shard) = shard else {
        let bar = progress_bar(budget + budget / 2);
        let found = pool.install(|| {
            vcsim_search::run(space, &contest, budget, a.seed, &|r| bar.set_position(r))
        });
        bar.finish_and_clear();
        // A stale manifest would make this directory look like a shard.
        let _ = std::fs::remove_file(a.out.join(MANIFEST));
        return finish(a, space, &contest, &found, plugins);
    };
    let bar = progress_bar(budget);
    let trail = pool.install(|| {
        vcsim_search::search_part(space, &contest, budget, a.seed, shard.k as u64, &|r| {
            bar.set_position(r)
        })
    });
    bar.finish_and_clear();
    let csv = vcsim_search::output::trail_csv(space, &trail).map_err(Failure::running)?;
    // The manifest of an earlier shard goes first: a directory without one
    // is no shard, never one whose trail is not its own.
    let _ = std::fs::remove_file(a.out.join(MANIFEST));
    write(a.out, "trail.csv", &csv)?;
    let _ = std::fs::remove_file(a.out.join("worst.toml"));
    let input = a.space.or(a.scenario);
    let runs = trail.last().map_or(0, |v| v.runs);
    let man = Manifest {
        vcsim_search: FORMAT,
        policies: a.policies.to_vec(),
        metric: a.metric.to_string(),
        seeds: a.seeds,
        seed: a.seed,
        days: a.days,
        budget: a.budget,
        space: a.space.map(Path::to_path_buf),
        scenario: a.scenario.map(Path::to_path_buf),
        shard: [shard.k, shard.n],
        input_from_shard: input.and_then(|f| relative_to(a.out, f)),
        space_sha256: set.space_sha256.clone(),
        scenario_sha256: set.scenario_sha256.clone(),
        scripts: set.scripts.clone(),
        points: trail.len(),
        runs,
        trail_sha256: vcsim_sweep::sha256_hex(csv.as_bytes()),
    };
    let json = serde_json::to_string_pretty(&man).map_err(|e| Failure::running(e.to_string()))?;
    write(a.out, MANIFEST, &json)?;
    output::emit(&format!(
        "shard {}/{}: {} points, {} runs written to {}; join the shards with `vcsim merge DIR... --out DIR`\n",
        shard.k,
        shard.n,
        trail.len(),
        runs,
        output::path(a.out)
    ))
}

/// Whether `vcsim merge` of `dirs` is a merge of a search's shards. A
/// directory holding only a `search.json` makes it one (a sweep shard
/// among them is then named as such); one holding only a sweep's
/// `manifest.json` makes it a sweep's. A directory holding both (a shard
/// made where another command's shard was: neither removes the other's
/// files) is taken as the kind the others are; if none says, that
/// directory and both its files are named.
pub fn is_search_merge(dirs: &[PathBuf]) -> Result<bool, Failure> {
    let has = |d: &PathBuf| {
        (
            d.join("manifest.json").is_file(),
            d.join(MANIFEST).is_file(),
        )
    };
    if dirs.iter().any(|d| has(d) == (false, true)) {
        return Ok(true);
    }
    if dirs.iter().any(|d| has(d) == (true, false)) {
        return Ok(false);
    }
    if let Some(d) = dirs.iter().find(|d| has(d) == (true, true)) {
        return Err(Failure::input(format!(
            "{}: holds both a sweep's shard ({}) and a search's ({}), and no other directory says which this merge joins: remove the one an earlier command left, or name a shard of the same kind beside it",
            output::path(d),
            output::path(&d.join("manifest.json")),
            output::path(&d.join(MANIFEST))
        )));
    }
    Ok(false)
}

/// `vcsim merge` of a search's shards: their trails joined in shard order,
/// the worst loss among them shrunk as one search's would be. Each shard is
/// verified first: its manifest's bounds, its trail against the checksum
/// and counts the manifest records, and the space and scripts against
/// theirs.
pub fn merge(
    dirs: &[PathBuf],
    out: &Path,
    jobs: Option<usize>,
    plugins: &[PathBuf],
) -> Result<(), Failure> {
    if dirs.is_empty() {
        return Err(Failure::input("name the shard directories to merge"));
    }
    // Writing into a shard directory would replace the shard with the
    // merged result; refuse rather than lose it (a sweep's merge does too).
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    if let Some(d) = dirs
        .iter()
        .find(|d| canon(d).is_some() && canon(d) == canon(out))
    {
        return Err(Failure::input(format!(
            "{}: is also the --out directory; merge into a new directory (the merged trail would replace this shard's)",
            d.display()
        )));
    }
    let mut mans: Vec<Manifest> = Vec::new();
    for d in dirs {
        mans.push(read_manifest(dirs, d)?);
    }
    let first = &mans[0];
    let first_p = dirs[0].join(MANIFEST);
    let n = first.shard[1];
    for (d, m) in dirs.iter().zip(&mans) {
        if m.shard[1] != n {
            return Err(Failure::input(format!(
                "{}: is shard {}/{}, but {} is one of {n} shards",
                d.display(),
                m.shard[0],
                m.shard[1],
                dirs[0].display()
            )));
        }
        let differ = differences(first, m);
        if !differ.is_empty() {
            return Err(Failure::input(format!(
                "{}: a shard of another search: its {} differ{} from {}'s",
                d.display(),
                differ.join(", "),
                if differ.len() == 1 { "s" } else { "" },
                dirs[0].display()
            )));
        }
    }
    check_shard_set(dirs, &mans, n)?;
    let input = resolve_input(dirs, &mans)?;
    let mut a = args_of(first, out);
    a.jobs = jobs;
    if first.space.is_some() {
        a.space = Some(&input);
    } else {
        a.scenario = Some(&input);
    }
    let set = setup(&a, Source::Manifest(&first_p), plugins)?;
    if set.scenario_sha256 != first.scenario_sha256 {
        return Err(Failure::input(format!(
            "{}: key `scenario_sha256`: the base scenario {} has changed since the shards were made (SHA-256 {}, recorded {}): merge shrinks in the space the shards searched; make the shards again, or restore it",
            first_p.display(),
            output::name(&set.space.scenario_path.display().to_string()),
            set.scenario_sha256,
            first.scenario_sha256
        )));
    }
    if set.scripts != first.scripts {
        // The first script whose checksum is not the recorded one (a list
        // of other paths is an edit of the manifest).
        let now = set.scripts.iter().find(|x| !first.scripts.contains(x));
        let what = match now {
            Some(x) => {
                let then = first.scripts.iter().find(|y| y.path == x.path);
                format!(
                    "the script {} (relative to the directory `vcsim search` ran in) has changed since the shards were made (SHA-256 {}, recorded {})",
                    output::name(&x.path),
                    if x.sha256.is_empty() { "none: it cannot be read" } else { &x.sha256 },
                    then.map_or("none", |t| t.sha256.as_str())
                )
            }
            None => "it lists scripts the policies do not name".to_string(),
        };
        return Err(Failure::input(format!(
            "{}: key `scripts`: {what}: merge runs the policies the shards ran; make the shards again, or restore it",
            first_p.display()
        )));
    }
    let space = &set.space;
    let contest = contest(&a, &set.specs, &set.reg);
    let per = contest.runs_per_point();
    let mut order: Vec<usize> = (0..dirs.len()).collect();
    order.sort_by_key(|&i| mans[i].shard[0]);
    let mut trail = Vec::new();
    let mut runs = 0;
    for i in order {
        let part = read_shard_trail(&dirs[i], &mans[i], space, per)?;
        let last = part.last().map_or(0, |v| v.runs);
        trail.extend(part.into_iter().map(|mut v| {
            v.runs += runs;
            v
        }));
        runs += last;
    }
    vcsim_search::output::prepare_out(out, &OUTPUTS).map_err(Failure::input)?;
    let pool = vcsim_sweep::threads::pool(a.jobs, (a.budget / 2).max(1) as usize)
        .map_err(Failure::input)?;
    let bar = progress_bar(runs + a.budget / 2);
    let found = pool.install(|| {
        vcsim_search::shrink_worst(space, &contest, trail, a.budget / 2, &|r| {
            bar.set_position(r)
        })
    });
    bar.finish_and_clear();
    let _ = std::fs::remove_file(out.join(MANIFEST));
    finish(&a, space, &contest, &found, plugins)
}

/// `dir/search.json`, read and bounded like the flags it records; a
/// directory without one is named, and said to be a sweep's shard if it
/// is one.
fn read_manifest(dirs: &[PathBuf], d: &Path) -> Result<Manifest, Failure> {
    let p = d.join(MANIFEST);
    if !d.is_dir() {
        return Err(Failure::input(format!(
            "{}: {}",
            d.display(),
            if d.exists() {
                "not a directory: merge joins shard directories"
            } else {
                "no such directory"
            }
        )));
    }
    if std::fs::metadata(&p).is_err() {
        // A search's shard: one without a sweep's manifest beside, if any.
        let search = dirs
            .iter()
            .find(|x| x.join(MANIFEST).is_file() && !x.join("manifest.json").is_file())
            .or_else(|| dirs.iter().find(|x| x.join(MANIFEST).is_file()));
        let sweep = d.join("manifest.json").is_file();
        return Err(Failure::input(match (sweep, search) {
            (true, Some(s)) => format!(
                "{}: is a sweep's shard (it has manifest.json), but {} is a search's (it has search.json): merge joins the shards of one sweep, or of one search",
                d.display(),
                s.display()
            ),
            _ => format!(
                "{}: not a search shard: it has no search.json (`vcsim search --shard K/N --out DIR` writes one beside trail.csv){}",
                d.display(),
                if sweep { "" } else { ", nor is it a sweep's shard (no manifest.json)" }
            ),
        }));
    }
    let text = vcsim_framework::input::read_text(&p, vcsim_framework::input::MAX_TEXT_BYTES)
        .map_err(|e| Failure::input(format!("{}: cannot read it: {e}", p.display())))?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| {
        Failure::input(format!(
            "{}: not a search shard's manifest: {e}",
            p.display()
        ))
    })?;
    if m.vcsim_search != FORMAT {
        return Err(Failure::input(format!(
            "{}: key `vcsim_search`: format {}, but this vcsim reads format {FORMAT}, whose shards record the checksums merge verifies; make the shard again with this vcsim",
            p.display(),
            m.vcsim_search
        )));
    }
    // A manifest is input like a flag: bounded before anything is
    // counted or allocated by it, and its errors name this file.
    check(&args_of(&m, d), Source::Manifest(&p))?;
    check_shard(&m, &p)?;
    let per = 2 * m.seeds as u64;
    let want = (m.budget / m.shard[1] as u64 / per).max(1) as usize;
    if m.points != want {
        return Err(Failure::input(format!(
            "{}: key `points`: {}, but shard {}/{} of a {}-run search at {per} runs a point makes {want}",
            p.display(),
            m.points,
            m.shard[0],
            m.shard[1],
            m.budget
        )));
    }
    let hex = |h: &str| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit());
    for (key, sum) in [
        ("trail_sha256", Some(&m.trail_sha256)),
        ("scenario_sha256", Some(&m.scenario_sha256)),
        ("space_sha256", m.space_sha256.as_ref()),
    ] {
        if sum.is_some_and(|h| !hex(h)) {
            return Err(Failure::input(format!(
                "{}: key `{key}`: not a SHA-256 (64 hexadecimal digits)",
                p.display()
            )));
        }
    }
    Ok(m)
}

/// The keys two shards' manifests differ by, of those one search's shards
/// share (the paths may differ where the checksums agree: a shard made
/// from another directory).
fn differences(a: &Manifest, b: &Manifest) -> Vec<&'static str> {
    [
        ("policies", a.policies != b.policies),
        ("metric", a.metric != b.metric),
        ("seeds", a.seeds != b.seeds),
        ("seed", a.seed != b.seed),
        ("days", a.days != b.days),
        ("budget", a.budget != b.budget),
        (
            "space",
            a.space.is_some() != b.space.is_some() || a.space_sha256 != b.space_sha256,
        ),
        ("base scenario", a.scenario_sha256 != b.scenario_sha256),
        ("scripts", a.scripts != b.scripts),
    ]
    .into_iter()
    .filter(|(_, d)| *d)
    .map(|(k, _)| k)
    .collect()
}

/// `p` with its `..` and `.` taken away lexically (`p` is a real path, so
/// no link lies under a `..`).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The space file (or scenario) the shards searched: the path `vcsim
/// search` was given, from here, or else from each shard's directory where
/// it was relative to it; the first whose checksum is the recorded one.
fn resolve_input(dirs: &[PathBuf], mans: &[Manifest]) -> Result<PathBuf, Failure> {
    let first = &mans[0];
    let p = dirs[0].join(MANIFEST);
    let (key, given) = match (&first.space, &first.scenario) {
        (Some(s), _) => ("space", s),
        (None, Some(s)) => ("scenario", s),
        (None, None) => {
            return Err(Failure::input(format!(
                "{}: key `space`: neither a space nor a scenario is named",
                p.display()
            )))
        }
    };
    let mut candidates = vec![given.clone()];
    for (d, m) in dirs.iter().zip(mans) {
        let from_shard = m
            .input_from_shard
            .as_ref()
            .and_then(|r| Some(lexical(&std::fs::canonicalize(d).ok()?.join(r))));
        if let Some(c) = from_shard.filter(|c| !candidates.contains(c)) {
            candidates.push(c);
        }
    }
    let recorded = match key {
        "space" => first.space_sha256.clone().unwrap_or_default(),
        _ => first.scenario_sha256.clone(),
    };
    let fingerprint = |c: &Path| -> Result<String, String> {
        if key == "space" {
            vcsim_framework::input::read_bounded(c, vcsim_framework::input::MAX_TEXT_BYTES)
                .map(|b| vcsim_sweep::sha256_hex(&b))
                .map_err(|e| e.to_string())
        } else {
            let base = crate::import_cmd::load_scenario(c).map_err(|f| f.message)?;
            Space::around(base, c.to_path_buf()).base_sha256()
        }
    };
    let mut changed = None;
    let mut unreadable = None;
    for c in &candidates {
        if std::fs::metadata(c).is_err() {
            continue;
        }
        match fingerprint(c) {
            Ok(f) if f == recorded => return Ok(c.clone()),
            Ok(f) => {
                changed.get_or_insert((c.clone(), f));
            }
            Err(e) => {
                unreadable.get_or_insert((c.clone(), e));
            }
        }
    }
    let shown = |c: &Path| output::name(&c.display().to_string());
    let elsewhere = if candidates.len() > 1 {
        format!(
            "; nor as {}, where it was from the shard's directory",
            candidates[1..]
                .iter()
                .map(|c| shown(c))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        String::new()
    };
    Err(Failure::input(match (changed, unreadable) {
        (Some((c, f)), _) => format!(
            "{}: key `{key}`: {} has changed since the shards were made (SHA-256 {f}, recorded {recorded}): merge shrinks in the space the shards searched; make the shards again, or restore it",
            p.display(),
            shown(&c)
        ),
        (None, Some((c, e))) => format!(
            "{}: key `{key}`: cannot read {}: {}",
            p.display(),
            shown(&c),
            output::name(&e)
        ),
        (None, None) => format!(
            "{}: key `{key}`: cannot find {}, the path `vcsim search` was given (relative to the directory it ran in){elsewhere}; run merge from that directory",
            p.display(),
            shown(given)
        ),
    }))
}

/// A shard's `trail.csv`, verified: the bytes its manifest's checksum
/// says, then every row ([`vcsim_search::output::read_trail`]), then the
/// points and runs the manifest counts.
fn read_shard_trail(
    d: &Path,
    m: &Manifest,
    space: &Space,
    per: u64,
) -> Result<Vec<vcsim_search::Visit>, Failure> {
    let p = d.join("trail.csv");
    let [k, n] = m.shard;
    let again = format!("make shard {k}/{n} again (`vcsim search ... --shard {k}/{n}`)");
    let bytes = vcsim_framework::input::read_bounded(&p, vcsim_framework::input::MAX_RESULTS_BYTES)
        .map_err(|e| Failure::input(format!("{}: cannot read it: {e}; {again}", p.display())))?;
    let sum = vcsim_sweep::sha256_hex(&bytes);
    if sum != m.trail_sha256 {
        return Err(Failure::input(format!(
            "{}: does not match {} (SHA-256 {sum}, recorded {}): it was changed or cut short after the search wrote it; {again}",
            p.display(),
            d.join(MANIFEST).display(),
            m.trail_sha256
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| Failure::input(format!("{}: not UTF-8: {e}", p.display())))?;
    let part = vcsim_search::output::read_trail(space, &text, per, false)
        .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
    let runs = part.last().map_or(0, |v| v.runs);
    if part.len() != m.points || runs != m.runs {
        return Err(Failure::input(format!(
            "{}: {} rows spending {runs} runs, but {} records {} points and {} runs; {again}",
            p.display(),
            part.len(),
            d.join(MANIFEST).display(),
            m.points,
            m.runs
        )));
    }
    Ok(part)
}

/// The arguments a shard's manifest records, as the command line gives them.
fn args_of<'m>(m: &'m Manifest, out: &'m Path) -> Args<'m> {
    Args {
        policies: &m.policies,
        metric: &m.metric,
        space: m.space.as_deref(),
        scenario: m.scenario.as_deref(),
        budget: m.budget,
        seeds: m.seeds,
        seed: m.seed,
        days: m.days,
        jobs: None,
        shard: None,
        out,
    }
}

/// A manifest's `shard` [K, N] within the bounds `--shard` has (its seeds
/// and budget already checked): merge counts the shards up to N.
fn check_shard(m: &Manifest, p: &Path) -> Result<(), Failure> {
    let [k, n] = m.shard;
    if k == 0 || k > n || n > MAX_SHARDS {
        return Err(Failure::input(format!(
            "{}: key `shard`: [{k}, {n}] is not a shard: a search is cut into 1 to {MAX_SHARDS} shards, numbered from 1",
            p.display()
        )));
    }
    let per = 2 * m.seeds as u64;
    if m.budget / (n as u64) < per {
        return Err(Failure::input(format!(
            "{}: key `shard`: a budget of {} runs cut into {n} shards leaves less than one point ({per} runs) a shard",
            p.display(),
            m.budget
        )));
    }
    Ok(())
}

/// At most ten of `items`, then how many more: a message stays short
/// however many there are.
fn listed(items: impl Iterator<Item = String>, count: usize) -> String {
    const LISTED: usize = 10;
    let mut parts: Vec<String> = items.take(LISTED).collect();
    if count > LISTED {
        parts.push(format!("and {} more", count - LISTED));
    }
    parts.join(", ")
}

/// Each of shards 1..=N given once (all are of N, N bounded). Counted on
/// the sorted shard numbers, never by building 1..=N.
fn check_shard_set(dirs: &[PathBuf], mans: &[Manifest], n: usize) -> Result<(), Failure> {
    if dirs.len() > n {
        return Err(Failure::input(format!(
            "{} shards given, but the search was cut into {n} (see {})",
            dirs.len(),
            dirs[0].join(MANIFEST).display()
        )));
    }
    let mut ks: Vec<(usize, &PathBuf)> = mans.iter().map(|m| m.shard[0]).zip(dirs).collect();
    ks.sort_unstable();
    if let Some(w) = ks.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(Failure::input(format!(
            "shard {}/{n} is given twice ({} and {})",
            w[0].0,
            w[0].1.display(),
            w[1].1.display()
        )));
    }
    let count = n - ks.len();
    if count == 0 {
        return Ok(());
    }
    let given: Vec<usize> = ks.iter().map(|&(k, _)| k).collect();
    // Sorted and distinct, so the missing ones are found by a binary search;
    // the walk stops after the few named.
    let mut missing = (1..=n).filter(|k| given.binary_search(k).is_err());
    let first = missing.next().unwrap_or(n);
    let rest = std::iter::once(first)
        .chain(missing)
        .map(|k| format!("{k}/{n}"));
    Err(Failure::input(format!(
        "the search was cut into {n} shards; these are shards [{}]: give each once; {}; make it with `vcsim search`, the same arguments and `--shard {first}/{n}`",
        listed(given.iter().map(|k| k.to_string()), given.len()),
        if count == 1 {
            format!("shard {first}/{n} is missing")
        } else {
            format!("{count} missing: {}", listed(rest, count))
        }
    )))
}

/// Writes a finished search's outputs and says what it found.
fn finish(
    a: &Args,
    space: &Space,
    contest: &Contest,
    found: &vcsim_search::Found,
    plugins: &[PathBuf],
) -> Result<(), Failure> {
    let trail = vcsim_search::output::trail_csv(space, &found.trail).map_err(Failure::running)?;
    write(a.out, "trail.csv", &trail)?;
    let best = a.out.join("best.svg");
    vcsim_sweep::output::unlink_if_symlink(&best)
        .map_err(|e| Failure::running(format!("cannot write {}: {e}", best.display())))?;
    vcsim_search::output::best_svg(contest, &found.trail, &best).map_err(Failure::running)?;
    let worst_path = a.out.join("worst.toml");
    let [la, lb] = [contest.policies[0].label(), contest.policies[1].label()];
    let evaluated = found.trail.iter().filter(|v| v.scored.is_ok()).count();
    let tried = found.trail.len();
    let failed = tried - evaluated;
    let mut text = String::new();
    // Shrinking whose budget could not pay for its first batch of variants
    // tried none: the runs that batch needed.
    let unshrunk = found
        .shrinking
        .filter(|s| s.tried == 0)
        .and_then(|s| s.first_batch_runs);
    match &found.shrunk {
        Some((i, scn)) => {
            let v = &found.trail[*i];
            let toml = vcsim_search::output::worst_toml(
                space,
                contest,
                scn,
                v,
                a.budget,
                &worst_path,
                plugins,
                unshrunk.is_none(),
            )
            .map_err(Failure::running)?;
            write(a.out, "worst.toml", &toml)?;
            let o = v.scored.as_ref().expect("a shrunk point ran");
            let w = found.worst.map(|w| &found.trail[w]);
            if let Some(Ok(wo)) = w.map(|w| &w.scored) {
                text.push_str(&format!(
                    "found: {la} is worse than {lb} on {} by {:.4} [{:.4}, {:.4}] at {}\n",
                    a.metric,
                    wo.mean,
                    wo.low,
                    wo.high,
                    w.map_or(String::new(), |w| w.point.describe(space))
                ));
            }
            match unshrunk {
                Some(need) => text.push_str(&format!(
                    "not shrunk: shrinking may spend {} runs (half the budget of {}), less than its first batch of variants needs ({need} runs); with a budget of {} or more it shrinks\n",
                    found.shrink_budget,
                    a.budget,
                    2 * need
                )),
                None => text.push_str(&format!(
                    "shrunk: by {:.4} [{:.4}, {:.4}] at {}\n",
                    o.mean,
                    o.low,
                    o.high,
                    v.point.describe(space)
                )),
            }
            text.push_str(&format!("written: {}\n", output::path(&worst_path)));
        }
        None => {
            // A stale result from an earlier search must not be taken for this one's.
            let _ = std::fs::remove_file(&worst_path);
            // Counted truthfully: a point that could not run says nothing
            // of the loss, so it is not among the points "tried" for it.
            text.push_str(&if evaluated == 0 {
                format!(
                    "no loss measured: none of the {tried} points tried gave a value of {} for both {la} and {lb}\n",
                    a.metric
                )
            } else if failed == 0 {
                format!(
                    "no significant loss: {la} is not worse than {lb} on {} at any of the {evaluated} points tried\n",
                    a.metric
                )
            } else {
                format!(
                    "no significant loss: {la} is not worse than {lb} on {} at any of the {evaluated} points measured ({tried} tried)\n",
                    a.metric
                )
            });
        }
    }
    if let Some(Err(e)) = found.trail.iter().map(|v| &v.scored).find(|s| s.is_err()) {
        text.push_str(&format!(
            "{failed} of the {tried} points tried could not be measured (an invalid scenario, a failed run or no value of the metric; the first: {}): see the `error` column of trail.csv\n",
            output::name(e)
        ));
    }
    text.push_str(&format!(
        "trail: {} ({} points, {} runs); plot: {}\n",
        output::path(&a.out.join("trail.csv")),
        found.trail.len(),
        found.trail.last().map_or(0, |v| v.runs),
        output::path(&a.out.join("best.svg"))
    ));
    output::emit(&text)
}

/// `vcsim check` on a space file: the file, its scenario and both ends of
/// every range.
pub fn check_space(file: &Path) -> Result<(), Failure> {
    let space = Space::load(file).map_err(|e| Failure::input(e.to_string()))?;
    let dims: Vec<String> = space.dims.iter().map(|d| d.describe()).collect();
    output::emitln(&format!(
        "{}: search space `{}` is valid: {} around scenario `{}`",
        output::name(&file.display().to_string()),
        output::name(&space.name),
        dims.join(", "),
        output::name(&space.base.name)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_says_which_shard_is_a_sweeps() {
        // A sweep shard beside a search shard was named as lacking
        // manifest.json (a sweep's file) when the search shard came first.
        let dir = std::env::temp_dir().join(format!("vcsim-search-mixed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (l1, w1) = (dir.join("L1"), dir.join("W1"));
        std::fs::create_dir_all(&l1).unwrap();
        std::fs::create_dir_all(&w1).unwrap();
        std::fs::write(l1.join(MANIFEST), "{}").unwrap();
        std::fs::write(w1.join("manifest.json"), "{}").unwrap();
        let dirs = [l1.clone(), w1.clone()];
        assert!(is_search_merge(&dirs).unwrap());
        let e = read_manifest(&dirs, &w1).unwrap_err();
        assert_eq!(e.status, 2);
        assert!(
            e.message.ends_with(&format!(
                "W1: is a sweep's shard (it has manifest.json), but {} is a search's (it has search.json): merge joins the shards of one sweep, or of one search",
                l1.display()
            )),
            "{}",
            e.message
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
