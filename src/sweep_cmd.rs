//! `vcsim sweep` and `vcsim merge`: glue between the command line and
//! `vcsim-sweep`.

use crate::Failure;
use std::path::{Path, PathBuf};
use vcsim_sweep::{RunOptions, Shard, Sweep};

fn load(file: &Path, plugins: &[PathBuf]) -> Result<(Sweep, vcsim_framework::Registry), Failure> {
    crate::extensions::load_plugins_first(plugins)?;
    let sweep = Sweep::load_with(file, &crate::extensions::parse_spec)
        .map_err(|e| Failure::input(e.to_string()))?;
    let reg = match crate::extensions::registry_for(plugins, &sweep.specs) {
        Ok(r) => r,
        Err(f) => {
            // Name the line of the first policy that does not resolve.
            let at = (0..sweep.specs.len())
                .find(|&i| crate::extensions::registry_for(plugins, &sweep.specs[i..=i]).is_err())
                .map(|i| format!(":{}: key `policies`", sweep.policy_lines[i]))
                .unwrap_or_default();
            return Err(Failure::input(format!(
                "{}{at}: {}",
                file.display(),
                f.message
            )));
        }
    };
    Ok((sweep, reg))
}

fn outcome(out: &Path, runs: usize, failed: usize) -> Result<(), Failure> {
    if failed > 0 {
        return Err(Failure::running(format!(
            "{failed} of {runs} runs failed; the others are written to {} (see the `status` and `error` columns of results.csv)",
            crate::output::path(out)
        )));
    }
    crate::output::note(&format!(
        "{runs} runs written to {}",
        crate::output::path(out)
    ));
    Ok(())
}

pub fn sweep(
    file: &Path,
    out: &Path,
    jobs: Option<usize>,
    shard: Option<&str>,
    plugins: &[PathBuf],
) -> Result<(), Failure> {
    let shard = shard
        .map(Shard::parse)
        .transpose()
        .map_err(Failure::input)?;
    if jobs == Some(0) {
        // Also refused by the thread pool; said here before any file is read.
        return Err(Failure::input("--jobs must be at least 1"));
    }
    let (sweep, reg) = load(file, plugins)?;
    vcsim_sweep::runs_within_bound(&sweep, shard)
        .map_err(|m| Failure::input(format!("{}: {m}", file.display())))?;
    let opts = RunOptions {
        jobs,
        shard,
        progress: true,
    };
    // An output directory that cannot be written is found before the
    // first run, not after the last.
    vcsim_sweep::prepare_dir(out).map_err(Failure::input)?;
    let rows = vcsim_sweep::run(&sweep, &reg, opts).map_err(Failure::input)?;
    let man = vcsim_sweep::write_outputs(out, &sweep.manifest(opts.shard), &rows)
        .map_err(|e| Failure::running(format!("cannot write the results: {e}")))?;
    if sweep.def.axes.is_empty() {
        crate::output::note("note: the sweep has no axis, so no plots; summary.csv has each policy's mean, interval and paired difference");
    }
    outcome(out, man.runs, man.failed_runs)
}

pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<(), Failure> {
    let man = vcsim_sweep::merge(dirs, out).map_err(|e| Failure::input(e.to_string()))?;
    outcome(out, man.runs, man.failed_runs)
}

/// `vcsim check` on a sweep file: the file, its scenario, its policies and
/// every cell's scenario.
pub fn check_sweep(file: &Path, plugins: &[PathBuf]) -> Result<(), Failure> {
    let (sweep, _) = load(file, plugins)?;
    let bad: Vec<&str> = sweep
        .cells
        .iter()
        .filter_map(|c| c.scenario.as_ref().err().map(String::as_str))
        .collect();
    if let Some(first) = bad.first() {
        return Err(Failure::input(format!(
            "{}: {} of {} cells cannot run; the first: {first}",
            file.display(),
            bad.len(),
            sweep.cells.len()
        )));
    }
    crate::output::emitln(&format!(
        "{}: sweep `{}` is valid ({} cells x {} policies x {} replications = {} runs)",
        file.display(),
        crate::output::name(&sweep.def.name),
        sweep.cells.len(),
        sweep.specs.len(),
        sweep.def.replications,
        sweep.cells.len() * sweep.specs.len() * sweep.def.replications as usize
    ))?;
    if let Err(m) = vcsim_sweep::runs_within_bound(&sweep, None) {
        crate::output::note(&format!("note: {m}"));
    }
    Ok(())
}
