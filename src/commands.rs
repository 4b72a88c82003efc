//! The subcommands.

use crate::compare;
use crate::extensions::registry_for;
use crate::output;
use crate::{Cli, Command, Failure, Format};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use vcsim_framework::{run_spec, Family, PolicySpec, Registry, Scenario, SimOptions, Stepping};
use vcsim_sweep::MAX_REPLICATIONS;

/// The base scenario, built in so that `vcsim` alone has something to run.
/// What `vcsim` with no arguments compares the paper's policies on: five
/// projects at slack 5, where they differ (on the paper's base scenario
/// they all give the same figures).
pub const DEFAULT_SCENARIO: &str = include_str!("../scenarios/mix-5-slack-5.toml");

/// The default comparison: the paper's combinations, one family changed at a time.
pub const DEFAULT_POLICIES: [&str; 5] = [
    "CS2_WF2_WS2_JC2",
    "CS1_WF2_WS2_JC2",
    "CS2_WF1_WS2_JC2",
    "CS2_WF2_WS1_JC2",
    "CS2_WF2_WS2_JC1",
];

pub fn dispatch(cli: Cli) -> Result<(), Failure> {
    let plugins = cli.plugin.clone();
    match cli.command {
        None => {
            let scn = Scenario::from_toml_str(
                DEFAULT_SCENARIO,
                Path::new("<built-in mix-5-slack-5.toml>"),
            )
            .map_err(|e| Failure::input(e.to_string()))?;
            let specs = crate::extensions::parse_specs(&DEFAULT_POLICIES.map(String::from))?;
            let reg = registry_for(&plugins, &specs)?;
            let c = run_comparison(&scn, &reg, &specs, 5, None, None)?;
            output::emit(&output::compare_table(&c))?;
            output::emit(concat!(
                "\ntry: vcsim compare scenarios/mix-5-slack-5.toml --policy CS3_WF3_WS3_JC3 --policy CS2\n",
                "     vcsim list (every policy) · vcsim run SCENARIO --timeline t.html (what ran where)\n",
            ))?;
            c.failure().map_or(Ok(()), Err)
        }
        Some(Command::List) => {
            let reg = registry_for(&plugins, &[])?;
            output::emit(&list(&reg))
        }
        Some(Command::Run {
            scenario,
            policy,
            seed,
            set,
            format,
            timeline,
            fixed_step,
            trace,
        }) => {
            if let Some(path) = &timeline {
                output::check_timeline_path(path)?;
                output::check_writable(path, "--timeline")?;
            }
            if let Some(path) = &trace {
                output::check_writable(path, "--trace")?;
            }
            let outputs: Vec<(&str, &std::path::Path)> =
                [("--timeline", &timeline), ("--trace", &trace)]
                    .into_iter()
                    .filter_map(|(f, p)| p.as_deref().map(|p| (f, p)))
                    .collect();
            output::check_distinct(&outputs, &[("the scenario", scenario.as_path())])?;
            crate::import_cmd::seed_given_once(
                seed.is_some(),
                &crate::import_cmd::flagged("--set", &set),
            )?;
            let scn = crate::import_cmd::load_scenario_with(&scenario, &set)?;
            let policy =
                policy.unwrap_or_else(|| crate::extensions::default_spec(&scn).to_string());
            let specs = crate::extensions::parse_specs(&[policy])?;
            let reg = registry_for(&plugins, &specs)?;
            // Again, now that every input is read (scripts, BOINC files
            // beside the one named): an output must replace none of them.
            output::check_distinct(&outputs, &[])?;
            let opts = SimOptions {
                stepping: if fixed_step {
                    Stepping::FixedStep
                } else {
                    Stepping::EventDriven
                },
                timeline: timeline.is_some(),
                seed,
                trace: trace.is_some(),
                // The HTML timeline shows each decision's reason on hover.
                explain: timeline.as_ref().is_some_and(|p| output::is_html(p)),
                snapshot_at: None,
                stop_after: None,
                keep_from: None,
                bounds: Default::default(),
            };
            // A failed run's log lines are printed above its error: what
            // a script logged on the way there is what its author needs.
            let out = match vcsim_framework::run_spec_keeping(&scn, &reg, &specs[0], opts) {
                Ok(out) => out,
                Err((e, kept)) => {
                    output::print_log(&kept.log);
                    return Err(Failure::running(e));
                }
            };
            if let Some(path) = &trace {
                let mut text = out.trace.join("\n");
                text.push('\n');
                output::write_output(path, "--trace", text)?;
            }
            if let (Some(path), Some(tl)) = (&timeline, &out.timeline) {
                crate::output::write_timeline(path, tl, &out.report, out.explanation.as_ref())?;
            }
            output::print_log(&out.log);
            for w in &out.warnings {
                output::note(&format!("warning: {}", output::printable(w)));
            }
            output::emit(&match format {
                Format::Table => output::run_table(&out.report, &specs[0]),
                Format::Json => output::run_json(&out.report, &specs[0]),
                Format::Csv => output::run_csv(&out.report, &specs[0]),
            })
        }
        Some(Command::Compare {
            scenario,
            policy,
            replications,
            seed,
            set,
            format,
            jobs,
            watch,
        }) => {
            if !(1..=MAX_REPLICATIONS).contains(&replications) {
                return Err(Failure::input(format!(
                    "--replications must be from 1 to {MAX_REPLICATIONS} (as in a sweep), found {replications}"
                )));
            }
            // Every run's figures are kept until the table: as many runs as a sweep's.
            let runs = policy.len() as u64 * replications as u64;
            if runs > vcsim_sweep::MAX_RUNS {
                return Err(Failure::input(format!(
                    "{} policies x {replications} replications is {runs} runs; a comparison makes at most {} (as a sweep process does)",
                    policy.len(),
                    vcsim_sweep::MAX_RUNS
                )));
            }
            let show = |c: &compare::Comparison| match format {
                Format::Table => output::compare_table(c),
                Format::Json => output::compare_json(c),
                Format::Csv => output::compare_csv(c),
            };
            crate::import_cmd::seed_given_once(
                seed.is_some(),
                &crate::import_cmd::flagged("--set", &set),
            )?;
            let once = || -> Result<compare::Comparison, Failure> {
                let scn = crate::import_cmd::load_scenario_with(&scenario, &set)?;
                let specs = crate::extensions::parse_specs(&policy)?;
                let reg = registry_for(&plugins, &specs)?;
                run_comparison(&scn, &reg, &specs, replications, seed, jobs)
            };
            if watch {
                return crate::watch::watch(&scenario, &policy, once, show);
            }
            let c = once()?;
            output::emit(&show(&c))?;
            c.failure().map_or(Ok(()), Err)
        }
        Some(Command::Sweep {
            sweep,
            out,
            jobs,
            shard,
        }) => crate::sweep_cmd::sweep(&sweep, &out, jobs, shard.as_deref(), &plugins),
        Some(Command::Explain {
            scenario,
            policy,
            seed,
            set,
            from,
            to,
            format,
        }) => crate::explain_cmd::explain(&crate::explain_cmd::ExplainArgs {
            scenario: &scenario,
            policy,
            seed,
            set: &set,
            from,
            to,
            format,
            plugins: &plugins,
        }),
        Some(Command::Diverge {
            scenario,
            policy,
            seed,
            set,
            set_b,
            threshold,
            format,
            timeline,
        }) => crate::explain_cmd::diverge(&crate::explain_cmd::DivergeArgs {
            scenario: &scenario,
            policies: &policy,
            seeds: &seed,
            set: &set,
            set_b: &set_b,
            threshold,
            format,
            timeline: timeline.as_deref(),
            plugins: &plugins,
        }),
        Some(Command::Merge { dirs, out, jobs }) => {
            // A plugin that cannot load is its own error, not a shard's.
            crate::extensions::load_plugins_first(&plugins)?;
            if crate::search_cmd::is_search_merge(&dirs)? {
                crate::search_cmd::merge(&dirs, &out, jobs, &plugins)
            } else {
                if jobs == Some(0) {
                    return Err(Failure::input("--jobs must be at least 1"));
                }
                crate::sweep_cmd::merge(&dirs, &out)
            }
        }
        Some(Command::Search {
            policy,
            metric,
            space,
            scenario,
            budget,
            seeds,
            seed,
            days,
            jobs,
            shard,
            out,
        }) => crate::search_cmd::search(
            &crate::search_cmd::Args {
                policies: &policy,
                metric: &metric,
                space: space.as_deref(),
                scenario: scenario.as_deref(),
                budget,
                seeds,
                seed,
                days,
                jobs,
                shard: shard.as_deref(),
                out: &out,
            },
            &plugins,
        ),
        Some(Command::Import { input, out }) => crate::import_cmd::import(&input, out.as_deref()),
        Some(Command::Check { file }) => check(&file, &plugins),
    }
}

/// Runs every policy on seeds seed, seed+1, ... in parallel on `jobs`
/// threads (see `vcsim_sweep::threads::count`); the result does not depend
/// on the number of threads. Two different policies of one label are
/// refused before any run (an input error): they could not be told apart.
pub fn run_comparison(
    scn: &Scenario,
    reg: &Registry,
    specs: &[PolicySpec],
    replications: u32,
    seed: Option<u64>,
    jobs: Option<usize>,
) -> Result<compare::Comparison, Failure> {
    // One policy twice would be compared with itself as if with another
    // (a sweep refuses the same).
    for (i, s) in specs.iter().enumerate() {
        if specs[..i].iter().any(|o| o.display() == s.display()) {
            return Err(Failure::input(format!(
                "--policy: `{}` is listed twice",
                crate::output::name(&s.display())
            )));
        }
    }
    vcsim_framework::registry::check_labels(specs).map_err(|(_, e)| Failure::input(e))?;
    let base = seed.unwrap_or(scn.seed);
    if base
        .checked_add(u64::from(replications).saturating_sub(1))
        .is_none()
    {
        let from = match seed {
            Some(_) => format!("--seed {base}"),
            None => format!("the scenario's `seed`, {base},"),
        };
        return Err(Failure::input(format!(
            "{from} with {replications} replications: the seeds would pass {} (the largest); give a smaller --seed or fewer --replications",
            u64::MAX
        )));
    }
    let seeds: Vec<u64> = (0..replications as u64).map(|i| base + i).collect();
    let cells: Vec<(usize, u64)> = (0..specs.len())
        .flat_map(|i| seeds.iter().map(move |s| (i, *s)))
        .collect();
    let pool = vcsim_sweep::threads::pool(jobs, cells.len()).map_err(Failure::input)?;
    // Each report is cut to its figures as its run ends: with many projects
    // a report is hundreds of KB, and a comparison makes up to a million.
    let shapes = compare::Shapes::default();
    let results: Vec<Result<(compare::Sample, Vec<String>), String>> = pool.install(|| {
        cells
            .par_iter()
            .map(|&(i, s)| {
                let opts = SimOptions {
                    seed: Some(s),
                    ..Default::default()
                };
                run_spec(scn, reg, &specs[i], opts).map(|o| (shapes.sample(&o.report), o.warnings))
            })
            .collect()
    });
    let mut runs: Vec<Vec<compare::Sample>> = vec![Vec::new(); specs.len()];
    let mut errors: Vec<Option<String>> = vec![None; specs.len()];
    let mut warned: Vec<String> = Vec::new();
    for ((i, _), r) in cells.iter().zip(results) {
        match r {
            Ok((report, warnings)) => {
                for w in warnings {
                    let w = format!("{}: {w}", specs[*i].label());
                    if !warned.contains(&w) {
                        warned.push(w);
                    }
                }
                runs[*i].push(report);
            }
            // The first failure of a policy (the lowest seed) names it.
            Err(e) => {
                errors[*i].get_or_insert(e);
            }
        }
    }
    for w in &warned {
        output::note(&format!("warning: {}", output::printable(w)));
    }
    let mut names: Vec<String> = Vec::new();
    let mut whole: Vec<String> = Vec::new();
    let mut ran: Vec<Vec<compare::Sample>> = Vec::new();
    let mut failed: Vec<compare::FailedPolicy> = Vec::new();
    for ((spec, r), e) in specs.iter().zip(runs).zip(errors) {
        match e {
            None => {
                names.push(spec.label());
                whole.push(spec.display());
                ran.push(r);
            }
            Some(error) => failed.push(compare::FailedPolicy {
                policy: spec.label(),
                spec: spec.display(),
                error,
            }),
        }
    }
    // With every policy failed too, the comparison is printed (an empty
    // table and a `policy P failed: no results` line each, the JSON with
    // its `failed` list, the CSV header) before the failure is reported.
    let mut c = compare::summarize(&scn.name, &seeds, &names, &whole, ran);
    c.failed = failed;
    Ok(c)
}

/// What `vcsim list` prints.
fn list(reg: &Registry) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    // One column for every name, as wide as the longest (up to a line's
    // width: a longer name pushes its summary along, and a width past
    // 65,535 would not format at all).
    let width = reg
        .entries()
        .map(|e| output::name(&e.name).chars().count())
        .max()
        .unwrap_or(0)
        .min(60);
    for f in Family::ALL {
        let _ = writeln!(out, "{f}:");
        for e in reg.entries().filter(|e| e.family == f) {
            let default = if e.name == f.default_name() {
                " (default)"
            } else {
                ""
            };
            let origin = if e.origin == "built-in" {
                String::new()
            } else {
                format!(" [{}]", e.origin)
            };
            let _ = writeln!(
                out,
                "  {:<width$} {}{default}{}",
                output::name(&e.name),
                output::name(&e.summary),
                output::name(&origin)
            );
        }
    }
    out
}

/// `1 project`, `2 projects`.
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn check(file: &Path, plugins: &[PathBuf]) -> Result<(), Failure> {
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    // BOINC's files first, as `run` tells them: a directory, `.xml`, or
    // text that starts with `<` whatever its name.
    let boinc = vcsim_import::is_boinc_path(file);
    match ext {
        // Without an extension (`check <(generate)`), a scenario, as `run` takes it.
        "toml" | "" if !boinc => {
            let text =
                vcsim_framework::input::read_text(file, vcsim_framework::input::MAX_TEXT_BYTES)
                    .map_err(|e| Failure::input(format!("{}: cannot read: {e}", file.display())))?;
            if vcsim_sweep::is_sweep_text(&text) {
                return crate::sweep_cmd::check_sweep(file, plugins);
            }
            if vcsim_search::space::is_space_text(&text) {
                return crate::search_cmd::check_space(file);
            }
            // From the text already read: a pipe (`<(generate)`) reads once.
            let scn = vcsim_framework::Scenario::from_toml_str(&text, file)
                .map_err(|e| Failure::input(e.to_string()))?;
            let _ = registry_for(plugins, &[])?;
            for w in scn.warnings() {
                output::note(&format!("warning: {}", output::printable(&w)));
            }
            output::emitln(&format!(
                "{}: scenario `{}` is valid ({}, {} days)",
                output::name(&file.display().to_string()),
                output::name(&scn.name),
                count(scn.projects.len(), "project"),
                scn.duration_days
            ))
        }
        "rhai" => crate::scripts::check_script(file),
        _ if boinc => match crate::import_cmd::load_boinc(file) {
            Some(Ok(scn)) => {
                for w in scn.warnings() {
                    output::note(&format!("warning: {}", output::printable(&w)));
                }
                output::emitln(&format!(
                    "{}: BOINC input, imports as scenario `{}` ({})",
                    output::name(&file.display().to_string()),
                    output::name(&scn.name),
                    count(scn.projects.len(), "project")
                ))
            }
            Some(Err(e)) => Err(e),
            None => Err(Failure::input(format!(
                "{}: not BOINC input vcsim can read",
                file.display()
            ))),
        },
        "so" | "dylib" | "dll" => crate::dylibs::check_plugin(file),
        _ => {
            // A file that cannot be read (a pipe no program writes to, read
            // once already when it was sniffed) is said to be so.
            if let Err(e) =
                vcsim_framework::input::read_bounded(file, vcsim_framework::input::MAX_IMPORT_BYTES)
            {
                return Err(Failure::input(format!(
                    "{}: {e}",
                    output::name(&file.display().to_string())
                )));
            }
            Err(Failure::input(format!(
                "{}: cannot tell what this is; `check` takes a scenario, sweep or search space (.toml), a script (.rhai) or a plugin (.so)",
                output::name(&file.display().to_string())
            )))
        }
    }
}
