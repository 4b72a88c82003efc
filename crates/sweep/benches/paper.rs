//! The whole paper reproduction: the sweeps of `scenarios/paper/` (the six
//! experiments, the mix ones at both slacks), each with its 10 replications,
//! on all cores. Prints the wall time and the cost per run.
//!
//!     cargo bench -p vcsim-sweep --bench paper
//!
//! A plain `harness = false` bench: one pass is tens of seconds, so
//! criterion's repeated sampling would add nothing but waiting.

use std::path::Path;
use std::time::Instant;
use vcsim_framework::Registry;
use vcsim_sweep::{run, RunOptions, Sweep};

fn main() {
    vcsim_builtin::link();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/paper");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("scenarios/paper")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.as_bytes()[0].is_ascii_digit() && n.ends_with(".toml"))
        })
        .collect();
    files.sort();
    let registry = Registry::builtins().expect("built-in policies");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (mut total_runs, mut total_secs) = (0usize, 0f64);
    println!(
        "{:<24} {:>6} {:>9} {:>12}",
        "sweep", "runs", "wall s", "ms/run/core"
    );
    for f in &files {
        let sweep = Sweep::load(f).unwrap_or_else(|e| panic!("{e}"));
        let t = Instant::now();
        let rows = run(&sweep, &registry, RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let secs = t.elapsed().as_secs_f64();
        let failed = rows.iter().filter(|r| r.outcome.is_err()).count();
        assert_eq!(failed, 0, "{}: {failed} runs failed", f.display());
        println!(
            "{:<24} {:>6} {:>9.2} {:>12.1}",
            sweep.def.name,
            rows.len(),
            secs,
            secs * 1000.0 * threads as f64 / rows.len() as f64
        );
        total_runs += rows.len();
        total_secs += secs;
    }
    println!(
        "{:<24} {:>6} {:>9.2} {:>12.1}   ({threads} threads)",
        "all",
        total_runs,
        total_secs,
        total_secs * 1000.0 * threads as f64 / total_runs as f64
    );
}
