//! Runs a scenario under policies and prints the aggregate metrics, one line
//! each: `cargo run --release -p vcsim-builtin --example quickrun -- SCENARIO POLICY...`.
//! Set `FIXED=1` to visit every step, `EXPLAIN=1` to record every decision
//! with its reason (what `vcsim explain` costs), `TRACE=1` to print the
//! simulator's trace (a line per RPC, with the request and the queue).

use std::path::Path;
use vcsim_framework::{run_spec, PolicySpec, Registry, Scenario, SimOptions, Stepping};

fn main() {
    vcsim_builtin::link();
    let args: Vec<String> = std::env::args().collect();
    let scn = Scenario::load(Path::new(&args[1])).unwrap_or_else(|e| panic!("{e}"));
    let reg = Registry::builtins().expect("built-ins");
    for p in &args[2..] {
        let spec = PolicySpec::parse(p).expect("policy");
        let mut o = SimOptions::default();
        if std::env::var("FIXED").is_ok() {
            o.stepping = Stepping::FixedStep;
        }
        o.explain = std::env::var("EXPLAIN").is_ok();
        o.trace = std::env::var("TRACE").is_ok();
        let t = std::time::Instant::now();
        let out = run_spec(&scn, &reg, &spec, o).unwrap_or_else(|e| panic!("{e}"));
        println!(
            "{spec} {:?} steps={} {:?}",
            out.report.metrics,
            out.steps_visited,
            t.elapsed()
        );
        for line in &out.trace {
            println!("{line}");
        }
        if std::env::var("USAGE").is_ok() {
            for p in &out.report.projects {
                println!("  {} usage {:?}", p.name, p.usage);
            }
        }
    }
}
