//! `vcsim search`: glue between the command line and `vcsim-search`.

use crate::{output, Failure};
use std::path::{Path, PathBuf};
use vcsim_framework::{registry::check_labels, Metrics};
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
    pub out: &'a Path,
}

/// The run length a search uses unless told (`--days`): long enough for
/// the paper's effects to show, short enough for thousands of runs.
const DEFAULT_MAX_DAYS: f64 = 20.0;

/// The largest budget a search takes: about a day of runs of the base
/// scenario on one core.
const MAX_BUDGET: u64 = 10_000_000;

fn check(a: &Args) -> Result<(), Failure> {
    if a.policies.len() != 2 {
        return Err(Failure::input(format!(
            "give two policies, A then B (--policy A --policy B): the search looks for where A is worse than B; got {}",
            a.policies.len()
        )));
    }
    let known = Metrics::NAMES.contains(&a.metric)
        || a.metric
            .strip_prefix("idleness.")
            .is_some_and(|r| !r.is_empty());
    if !known {
        return Err(Failure::input(format!(
            "--metric {}: not a metric; use one of {} (or idleness.RESOURCE, like idleness.nvidia)",
            output::name(a.metric),
            Metrics::NAMES.join(", ")
        )));
    }
    if !(2..=1000).contains(&a.seeds) {
        return Err(Failure::input(
            "--seeds must be 2 to 1000: a loss counts only when its paired interval excludes zero",
        ));
    }
    let per = 2 * a.seeds as u64;
    if a.budget < per || a.budget > MAX_BUDGET {
        return Err(Failure::input(format!(
            "--budget must be {per} to {MAX_BUDGET} runs (a point costs 2 x --seeds = {per} runs)"
        )));
    }
    if let Some(d) = a.days {
        if !(d.is_finite() && (1.0..=36_500.0).contains(&d)) {
            return Err(Failure::input("--days must be 1 to 36500"));
        }
    }
    if a.jobs == Some(0) {
        return Err(Failure::input("--jobs must be at least 1"));
    }
    Ok(())
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

pub fn search(a: &Args, plugins: &[PathBuf]) -> Result<(), Failure> {
    check(a)?;
    let mut space = load_space(a)?;
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
    vcsim_sweep::prepare_dir(a.out).map_err(Failure::input)?;
    let contest = Contest {
        registry: &reg,
        policies: [specs[0].clone(), specs[1].clone()],
        metric: a.metric.to_string(),
        seeds: a.seeds,
    };
    let pool = vcsim_sweep::threads::pool(a.jobs, (a.budget / 2).max(1) as usize)
        .map_err(Failure::input)?;
    let total = a.budget + a.budget / 2;
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let b = indicatif::ProgressBar::new(total);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} runs (search, then shrinking), {elapsed} elapsed",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let found = pool.install(|| {
        vcsim_search::run(&space, &contest, a.budget, a.seed, &|r| bar.set_position(r))
    });
    bar.finish_and_clear();
    let write = |name: &str, text: &str| {
        let p = a.out.join(name);
        std::fs::write(&p, text)
            .map_err(|e| Failure::running(format!("cannot write {}: {e}", p.display())))
    };
    let trail = vcsim_search::output::trail_csv(&space, &found.trail).map_err(Failure::running)?;
    write("trail.csv", &trail)?;
    vcsim_search::output::best_svg(&contest, &found.trail, &a.out.join("best.svg"))
        .map_err(Failure::running)?;
    let worst_path = a.out.join("worst.toml");
    let [la, lb] = [specs[0].label(), specs[1].label()];
    let evaluated = found.trail.iter().filter(|v| v.scored.is_ok()).count();
    let failed = found.trail.len() - evaluated;
    let mut text = String::new();
    match &found.shrunk {
        Some((i, scn)) => {
            let v = &found.trail[*i];
            let toml = vcsim_search::output::worst_toml(&space, &contest, scn, v, a.budget)
                .map_err(Failure::running)?;
            write("worst.toml", &toml)?;
            let o = v.scored.as_ref().expect("a shrunk point ran");
            let w = found.worst.map(|w| &found.trail[w]);
            if let Some(Ok(wo)) = w.map(|w| &w.scored) {
                text.push_str(&format!(
                    "found: {la} is worse than {lb} on {} by {:.4} [{:.4}, {:.4}] at {}\n",
                    a.metric,
                    wo.mean,
                    wo.low,
                    wo.high,
                    w.map_or(String::new(), |w| w.point.describe(&space))
                ));
            }
            text.push_str(&format!(
                "shrunk: by {:.4} [{:.4}, {:.4}] at {}\n",
                o.mean,
                o.low,
                o.high,
                v.point.describe(&space)
            ));
            text.push_str(&format!("written: {}\n", worst_path.display()));
        }
        None => {
            // A stale result from an earlier search must not be taken for this one's.
            let _ = std::fs::remove_file(&worst_path);
            text.push_str(&format!(
                "no significant loss: {la} is not worse than {lb} on {} at any of the {evaluated} points tried\n",
                a.metric
            ));
        }
    }
    if failed > 0 {
        text.push_str(&format!(
            "{failed} points gave no loss (an invalid scenario, a failed run or no value of the metric: see the `error` column of trail.csv)\n"
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
