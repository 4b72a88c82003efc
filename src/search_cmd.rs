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
/// merge` can check that the shards belong together and shrink their worst.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Manifest {
    vcsim_search: u32,
    policies: Vec<String>,
    metric: String,
    seeds: u32,
    seed: u64,
    days: Option<f64>,
    budget: u64,
    space: Option<PathBuf>,
    scenario: Option<PathBuf>,
    shard: [usize; 2],
}

const MANIFEST: &str = "search.json";

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
                "{} must be 1 to 36500, found {d}",
                from.key("days")
            )));
        }
    }
    if a.jobs == Some(0) {
        return Err(Failure::input("--jobs must be at least 1"));
    }
    Ok(())
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

/// The space (with the run length of `--days`), the policies and their
/// registry of a search.
fn setup(
    a: &Args,
    from: Source,
    plugins: &[PathBuf],
) -> Result<(Space, Vec<PolicySpec>, Registry), Failure> {
    check(a, from)?;
    let mut space = load_space(a)?;
    check_resource(a, from, &space)?;
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
    let specs = crate::extensions::parse_specs(a.policies)?;
    check_labels(&specs).map_err(|(_, e)| Failure::input(e))?;
    let reg = crate::extensions::registry_for(plugins, &specs)?;
    Ok((space, specs, reg))
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
    std::fs::write(&p, text)
        .map_err(|e| Failure::running(format!("cannot write {}: {e}", p.display())))
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
    let (space, specs, reg) = setup(a, Source::Flags, plugins)?;
    let contest = contest(a, &specs, &reg);
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
    vcsim_sweep::prepare_dir(a.out).map_err(Failure::input)?;
    let pool =
        vcsim_sweep::threads::pool(a.jobs, (budget / 2).max(1) as usize).map_err(Failure::input)?;
    let Some(shard) = shard else {
        let bar = progress_bar(budget + budget / 2);
        let found = pool.install(|| {
            vcsim_search::run(&space, &contest, budget, a.seed, &|r| bar.set_position(r))
        });
        bar.finish_and_clear();
        // A stale manifest would make this directory look like a shard.
        let _ = std::fs::remove_file(a.out.join(MANIFEST));
        return finish(a, &space, &contest, &found, plugins);
    };
    let bar = progress_bar(budget);
    let trail = pool.install(|| {
        vcsim_search::search_part(&space, &contest, budget, a.seed, shard.k as u64, &|r| {
            bar.set_position(r)
        })
    });
    bar.finish_and_clear();
    let csv = vcsim_search::output::trail_csv(&space, &trail).map_err(Failure::running)?;
    write(a.out, "trail.csv", &csv)?;
    let _ = std::fs::remove_file(a.out.join("worst.toml"));
    let man = Manifest {
        vcsim_search: 1,
        policies: a.policies.to_vec(),
        metric: a.metric.to_string(),
        seeds: a.seeds,
        seed: a.seed,
        days: a.days,
        budget: a.budget,
        space: a.space.map(Path::to_path_buf),
        scenario: a.scenario.map(Path::to_path_buf),
        shard: [shard.k, shard.n],
    };
    let json = serde_json::to_string_pretty(&man).map_err(|e| Failure::running(e.to_string()))?;
    write(a.out, MANIFEST, &json)?;
    output::emit(&format!(
        "shard {}/{}: {} points, {} runs written to {}; join the shards with `vcsim merge DIR... --out DIR`\n",
        shard.k,
        shard.n,
        trail.len(),
        trail.last().map_or(0, |v| v.runs),
        a.out.display()
    ))
}

/// Whether `dir` holds a shard of a search (rather than of a sweep).
pub fn is_search_shard(dir: &Path) -> bool {
    dir.join(MANIFEST).is_file()
}

/// `vcsim merge` of a search's shards: their trails joined in shard order,
/// the worst loss among them shrunk as one search's would be.
pub fn merge(dirs: &[PathBuf], out: &Path, plugins: &[PathBuf]) -> Result<(), Failure> {
    let mut mans: Vec<Manifest> = Vec::new();
    for d in dirs {
        let p = d.join(MANIFEST);
        let text = vcsim_framework::input::read_text(&p, vcsim_framework::input::MAX_TEXT_BYTES)
            .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
        let m: Manifest = serde_json::from_str(&text).map_err(|e| {
            Failure::input(format!(
                "{}: not a search shard's manifest: {e}",
                p.display()
            ))
        })?;
        // A manifest is input like a flag: bounded before anything is
        // counted or allocated by it, and its errors name this file.
        check(&args_of(&m, out), Source::Manifest(&p))?;
        check_shard(&m, &p)?;
        mans.push(m);
    }
    let first = &mans[0];
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
        let same = Manifest {
            shard: first.shard,
            ..m.clone()
        };
        if same != *first {
            return Err(Failure::input(format!(
                "{}: a shard of another search (its policies, metric, seeds, budget or space differ from {}'s)",
                d.display(),
                dirs[0].display()
            )));
        }
    }
    check_shard_set(dirs, &mans, n)?;
    let a = args_of(first, out);
    let (space, specs, reg) = setup(&a, Source::Manifest(&dirs[0].join(MANIFEST)), plugins)?;
    let contest = contest(&a, &specs, &reg);
    let mut order: Vec<usize> = (0..dirs.len()).collect();
    order.sort_by_key(|&i| mans[i].shard[0]);
    let mut trail = Vec::new();
    let mut runs = 0;
    for i in order {
        let p = dirs[i].join("trail.csv");
        let text = vcsim_framework::input::read_text(&p, vcsim_framework::input::MAX_RESULTS_BYTES)
            .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
        let part = vcsim_search::output::read_trail(&space, &text)
            .map_err(|e| Failure::input(format!("{}: {e}", p.display())))?;
        let last = part.last().map_or(0, |v| v.runs);
        trail.extend(part.into_iter().map(|mut v| {
            v.runs += runs;
            v
        }));
        runs += last;
    }
    vcsim_sweep::prepare_dir(out).map_err(Failure::input)?;
    let pool =
        vcsim_sweep::threads::pool(None, (a.budget / 2).max(1) as usize).map_err(Failure::input)?;
    let bar = progress_bar(runs + a.budget / 2);
    let found = pool.install(|| {
        vcsim_search::shrink_worst(&space, &contest, trail, a.budget / 2, &|r| {
            bar.set_position(r)
        })
    });
    bar.finish_and_clear();
    let _ = std::fs::remove_file(out.join(MANIFEST));
    finish(&a, &space, &contest, &found, plugins)
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
    vcsim_search::output::best_svg(contest, &found.trail, &a.out.join("best.svg"))
        .map_err(Failure::running)?;
    let worst_path = a.out.join("worst.toml");
    let [la, lb] = [contest.policies[0].label(), contest.policies[1].label()];
    let evaluated = found.trail.iter().filter(|v| v.scored.is_ok()).count();
    let tried = found.trail.len();
    let failed = tried - evaluated;
    let mut text = String::new();
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
            text.push_str(&format!(
                "shrunk: by {:.4} [{:.4}, {:.4}] at {}\n",
                o.mean,
                o.low,
                o.high,
                v.point.describe(space)
            ));
            text.push_str(&format!("written: {}\n", worst_path.display()));
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
        a.out.join("trail.csv").display(),
        found.trail.len(),
        found.trail.last().map_or(0, |v| v.runs),
        a.out.join("best.svg").display()
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
