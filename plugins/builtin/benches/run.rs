//! One 100-day run of the paper's base scenario, and of the paper's mix of
//! 20 and of 80 projects, under the default policy (`CS2_WF2_WS2_JC2`) and
//! the paper's CS1/WF1 alternatives. Targets (release, one core), for the
//! default policy: base under 20 ms, mix-20 under 100 ms, mix-80 under
//! 500 ms (the round-robin simulation is O(J log P) a call, so a 4x mix
//! costs about 4 to 5x, not 16x). Explained runs (`vcsim explain`) cost at
//! most twice a plain run.

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::Path;
use vcsim_framework::{run_spec, PolicySpec, Registry, Scenario, SimOptions};

fn base() -> Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/paper-base.toml");
    Scenario::load(&p).expect("paper-base.toml")
}

/// The paper's mix of M: project i has i x the base FLOPs, latency bound and share.
pub fn mix(m: usize) -> Scenario {
    let mut s = base();
    let p0 = s.projects[0].clone();
    s.name = format!("mix-{m}");
    s.projects = (1..=m)
        .map(|i| {
            let mut p = p0.clone();
            let f = i as f64;
            p.name = format!("P{i}");
            p.resource_share *= f;
            p.latency_bound_days *= f;
            for a in &mut p.apps {
                a.flops_estimate *= f;
                a.flops_mean *= f;
            }
            p
        })
        .collect();
    s
}

fn bench(c: &mut Criterion) {
    vcsim_builtin::link();
    let reg = Registry::builtins().expect("built-ins");
    let base = base();
    let mix20 = mix(20);
    let mix80 = mix(80);
    let mut g = c.benchmark_group("100-day run");
    g.sample_size(20);
    for spec in ["CS2_WF2_WS2_JC2", "CS1_WF1_WS1_JC1", "CS3_WF3_WS3_JC3"] {
        let s = PolicySpec::parse(spec).expect("spec");
        g.bench_function(format!("paper-base {spec}"), |b| {
            b.iter(|| run_spec(&base, &reg, &s, SimOptions::default()).expect("runs"))
        });
        g.bench_function(format!("mix-20 {spec}"), |b| {
            b.iter(|| run_spec(&mix20, &reg, &s, SimOptions::default()).expect("runs"))
        });
        g.bench_function(format!("mix-80 {spec}"), |b| {
            b.iter(|| run_spec(&mix80, &reg, &s, SimOptions::default()).expect("runs"))
        });
    }
    g.finish();
    // The same runs explained (every decision recorded with its reason, as
    // `vcsim explain` runs them): at most twice the cost of the plain run.
    let mut g = c.benchmark_group("100-day run, explained");
    g.sample_size(10);
    let explained = || SimOptions {
        explain: true,
        ..SimOptions::default()
    };
    for spec in ["CS2_WF2_WS2_JC2", "CS1_WF1_WS1_JC1"] {
        let s = PolicySpec::parse(spec).expect("spec");
        g.bench_function(format!("paper-base {spec}"), |b| {
            b.iter(|| run_spec(&base, &reg, &s, explained()).expect("runs"))
        });
        g.bench_function(format!("mix-20 {spec}"), |b| {
            b.iter(|| run_spec(&mix20, &reg, &s, explained()).expect("runs"))
        });
    }
    g.finish();
    // A big host: the base scenario on 256 CPUs for 10 days (0.9 s on the
    // development machine; 100 days take about 8 s). It makes about 850
    // RPCs a day, one to three jobs each, and every RPC runs the round-robin
    // simulation of some 600 jobs: see the book's "Big hosts".
    let mut big = base.clone();
    big.host.ncpus = 256;
    big.duration_days = 10.0;
    let s = PolicySpec::parse("CS2_WF2_WS2_JC2").expect("spec");
    let mut g = c.benchmark_group("10-day run, 256 CPUs");
    g.sample_size(10);
    g.bench_function("paper-base CS2_WF2_WS2_JC2", |b| {
        b.iter(|| run_spec(&big, &reg, &s, SimOptions::default()).expect("runs"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
