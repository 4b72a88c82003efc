//! `vcsim import`, and BOINC files accepted where a scenario is expected
//! (issue 9). The reading itself is in the `vcsim-import` crate.

use crate::Failure;
use std::path::Path;
use vcsim_framework::Scenario;

fn print_warnings(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {}", crate::output::printable(w));
    }
}

/// Reads BOINC's files at `input` and writes the scenario (TOML) to `out`,
/// or to standard output. Warnings go to standard error.
pub fn import(input: &Path, out: Option<&Path>) -> Result<(), Failure> {
    let imp = vcsim_import::import_path(input).map_err(|e| Failure::input(e.to_string()))?;
    print_warnings(&imp.warnings);
    match out {
        Some(path) => {
            std::fs::write(path, &imp.toml)
                .map_err(|e| Failure::running(format!("{}: cannot write: {e}", path.display())))?;
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
