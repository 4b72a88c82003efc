//! `vcsim import`, and BOINC files accepted where a scenario is expected
//! (issue 9). The reading itself is in the `vcsim-import` crate.

use crate::Failure;
use std::path::Path;
use vcsim_framework::Scenario;
use vcsim_sweep::knobs::Param;
use vcsim_sweep::Setting;

fn print_warnings(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {}", crate::output::printable(w));
    }
}

/// Reads BOINC's files at `input` and writes the scenario (TOML) to `out`,
/// or to standard output. Warnings go to standard error.
pub fn import(input: &Path, out: Option<&Path>) -> Result<(), Failure> {
    if let Some(path) = out {
        crate::output::check_writable(path, "--out")?;
        crate::output::check_distinct(&[("--out", path)], &[("the input", input)])?;
    }
    let imp = vcsim_import::import_path(input).map_err(|e| Failure::input(e.to_string()))?;
    if let Some(path) = out {
        // The files read beside the input (`global_prefs.xml`, ...) too.
        crate::output::not_an_input(path, "--out")?;
    }
    print_warnings(&imp.warnings);
    print_warnings(&imp.scenario.warnings());
    match out {
        Some(path) => {
            crate::output::write_output(path, "--out", &imp.toml)?;
            eprintln!(
                "wrote {} ({} projects, {} jobs on the host)",
                path.display(),
                imp.scenario.projects.len(),
                imp.scenario
                    .projects
                    .iter()
                    .map(|p| p.jobs.len())
                    .sum::<usize>()
            );
        }
        None => crate::output::emit(&imp.toml)?,
    }
    Ok(())
}

/// A BOINC file or directory given where a scenario is expected; None if
/// `path` is not one (then it is read as a vcsim TOML scenario).
pub fn load_boinc(path: &Path) -> Option<Result<Scenario, Failure>> {
    if !vcsim_import::is_boinc_path(path) {
        return None;
    }
    Some(match vcsim_import::import_path(path) {
        Ok(imp) => {
            print_warnings(&imp.warnings);
            Ok(imp.scenario)
        }
        Err(e) => Err(Failure::input(e.to_string())),
    })
}

/// A vcsim scenario (TOML), or BOINC's own files (see [`load_boinc`]).
pub fn load_scenario(path: &Path) -> Result<Scenario, Failure> {
    if let Some(r) = load_boinc(path) {
        return r;
    }
    Scenario::load(path).map_err(|e| Failure::input(e.to_string()))
}

/// [`crate::import_cmd::load_scenario`], then the `--set PATH=VALUE` changes, applied as a
/// sweep's `[set]` applies them (`vcsim_sweep::knobs`). A path or a value
/// that does not fit, or a scenario the changes make invalid, is an input
/// error naming the `--set` at fault.
pub fn load_scenario_with(path: &Path, set: &[String]) -> Result<Scenario, Failure> {
    load_scenario_flagged(path, &flagged("--set", set))
}

/// Command-line changes, each with the flag that gave it.
pub fn flagged<'a>(flag: &'a str, set: &'a [String]) -> Vec<(&'a str, &'a str)> {
    set.iter().map(|a| (flag, a.as_str())).collect()
}

/// Refuses a `--set seed=N` (or `--set-b`) given with `--seed`, which
/// gives the runs' seeds whatever the scenario says: the change would be
/// silently overridden, as a setting that later ones overwrite in full.
pub fn seed_given_once(seed_flag: bool, set: &[(&str, &str)]) -> Result<(), Failure> {
    if !seed_flag {
        return Ok(());
    }
    match set
        .iter()
        .find(|(_, a)| a.split_once('=').is_some_and(|(k, _)| k.trim() == "seed"))
    {
        Some((flag, a)) => Err(Failure::input(format!(
            "{flag} {}: --seed gives the runs' seeds and overrides the scenario's; give the seed once, with --seed or with {flag} seed=N",
            crate::output::name(a)
        ))),
        None => Ok(()),
    }
}

/// [`load_scenario_with`], each change with the flag that gave it (`--set`,
/// `diverge`'s `--set-b`), which its error names.
pub fn load_scenario_flagged(path: &Path, set: &[(&str, &str)]) -> Result<Scenario, Failure> {
    let scn = crate::import_cmd::load_scenario(path)?;
    if set.is_empty() {
        return Ok(scn);
    }
    let settings = set
        .iter()
        .map(|(flag, a)| {
            Setting::parse_assignment(a)
                .map_err(|e| Failure::input(format!("{flag} {}: {e}", crate::output::name(a))))
        })
        .collect::<Result<Vec<Setting>, Failure>>()?;
    // A change that later ones of its flag overwrite in full is refused (a
    // repeated key keeps its last value, as a command line's options do;
    // `diverge`'s `--set-b` is meant to change what `--set` set).
    for (flag, _) in set {
        let ours: Vec<usize> = (0..set.len()).filter(|&i| set[i].0 == *flag).collect();
        let params: Vec<&Param> = ours.iter().map(|&i| &settings[i].param).collect();
        if let Some((i, _, m)) = vcsim_sweep::knobs::overridden(&params) {
            let a = set[ours[i]].1;
            return Err(Failure::input(format!(
                "{flag} {}: {m}",
                crate::output::name(a)
            )));
        }
    }
    let scn = vcsim_sweep::knobs::apply_all(&scn, &settings).map_err(|(i, f)| {
        let (flag, a) = set[i];
        Failure::input(format!(
            "{flag} {}: {}",
            crate::output::name(a),
            f.message()
        ))
    })?;
    scn.validate().map_err(|(k, m)| {
        Failure::input(format!(
            "{}: the scenario is then invalid: key `{k}`: {m}",
            set.iter()
                .map(|(flag, a)| format!("{flag} {}", crate::output::name(a)))
                .collect::<Vec<_>>()
                .join(" ")
        ))
    })?;
    Ok(scn)
}
