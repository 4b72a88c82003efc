//! Properties over random small scenarios: every built-in combination runs
//! without breaking the simulator's invariants (resources never
//! over-committed, accounting that adds up, jobs reported once: checked by
//! the simulator after every step in debug builds), the debts keep the sums
//! the documents imply, and back-off stays within its bounds.

use proptest::prelude::*;
use rand::SeedableRng;
use vcsim_blocks::debt::{LongTermDebt, ShortTermDebt};
use vcsim_builtin::jc::Jc1;
use vcsim_framework::rpc::{RpcState, MASTER_FETCH_INTERVAL, SCHED_RETRY_DELAY_MAX};
use vcsim_framework::testing::{add_job, state, JobSpec};
use vcsim_framework::{run_spec, PolicySpec, Registry, Scenario, SimOptions, View};

#[derive(Debug, Clone)]
struct P {
    share: f64,
    latency_days: f64,
    job_hours: f64,
    stddev: f64,
    up: f64,
}

fn scenario(ncpus: u32, avail: f64, ps: &[P], seed: u64) -> Scenario {
    let mut s = format!(
        "name = \"prop\"\nseed = {seed}\nduration_days = 3\n[host]\nncpus = {ncpus}\ncpu_flops = 1e9\n[host.availability]\nfraction = {avail}\nmean_on_seconds = 3000\n"
    );
    for (i, p) in ps.iter().enumerate() {
        let f = p.job_hours * 3.6e12;
        s += &format!(
            "[[project]]\nname = \"P{i}\"\nresource_share = {}\nlatency_bound_days = {}\navailability = {{ fraction = {}, mean_up_hours = 2 }}\n[[project.app]]\nname = \"main\"\nflops_estimate = {f}\nflops_mean = {f}\nflops_stddev = {}\n",
            p.share,
            p.latency_days,
            p.up,
            p.stddev * f
        );
    }
    Scenario::from_toml_str(&s, std::path::Path::new("prop.toml")).unwrap()
}

fn project() -> impl Strategy<Value = P> {
    (
        1.0..100.0f64,
        0.2..5.0f64,
        0.2..10.0f64,
        0.0..0.5f64,
        prop_oneof![Just(1.0), 0.3..1.0f64],
    )
        .prop_map(|(share, latency_days, job_hours, stddev, up)| P {
            share,
            latency_days,
            job_hours,
            stddev,
            up,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    #[test]
    fn no_policy_breaks_the_simulators_invariants(
        ncpus in 1u32..4,
        avail in prop_oneof![Just(1.0), 0.5..1.0f64],
        ps in prop::collection::vec(project(), 1..4),
        seed in 0u64..1000,
    ) {
        let scn = scenario(ncpus, avail, &ps, seed);
        let reg = Registry::builtins().unwrap();
        for spec in ["CS1_WF1_WS1_JC1", "CS2_WF2_WS2_JC2", "CS1_WF2_WS1_JC2", "CS2_WF1_WS2_JC1"] {
            let spec = PolicySpec::parse(spec).unwrap();
            let out = run_spec(&scn, &reg, &spec, SimOptions::default());
            prop_assert!(out.is_ok(), "{spec}: {:?}", out.err());
            let m = out.unwrap().report.metrics;
            prop_assert!((0.0..=1.0).contains(&m.idleness) && (0.0..=1.0).contains(&m.waste));
        }
    }

    #[test]
    fn short_term_debts_of_runnable_projects_sum_to_zero(
        shares in prop::collection::vec(1.0..10.0f64, 2..5),
        running in prop::collection::vec(any::<bool>(), 5),
        dt in 1.0..7000.0f64,
    ) {
        let toml = shares.iter().enumerate().fold(
            "name = \"t\"\nduration_days = 1\n[host]\nncpus = 8\ncpu_flops = 1e9\n".to_string(),
            |s, (i, sh)| s + &format!("[[project]]\nname = \"P{i}\"\nresource_share = {sh}\nlatency_bound_days = 1\n[[project.app]]\nname = \"a\"\nflops_estimate = 1e12\nflops_mean = 1e12\n"),
        );
        let mut st = state(&toml);
        let n = shares.len();
        for (p, run) in running.iter().take(n).enumerate() {
            let spec = JobSpec::queued(p, 1e13, 86400.0);
            add_job(&mut st, if *run { spec.running(0.0) } else { spec });
        }
        let runnable = vec![true; n];
        let mut std = ShortTermDebt::default();
        std.update(&View::new(&st, &Jc1, 0.0), &runnable);
        std.update(&View::new(&st, &Jc1, dt), &runnable);
        prop_assert!(std.std.iter().sum::<f64>().abs() < 1e-6, "{:?}", std.std);
        let mut ltd = LongTermDebt::default();
        ltd.update(&View::new(&st, &Jc1, 0.0));
        ltd.update(&View::new(&st, &Jc1, dt));
        prop_assert!(ltd.ltd.iter().sum::<f64>().abs() < 1e-6, "{:?}", ltd.ltd);
    }

    #[test]
    fn backoff_never_exceeds_its_maximum(events in prop::collection::vec(0u8..4, 1..80), seed in 0u64..100) {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let mut st = RpcState::default();
        let mut now = 0.0;
        for e in events {
            match e {
                0 | 1 => st.backoff(now, &mut rng),
                2 => st.succeeded(now, 0.0),
                _ => st.master_fetched(e % 2 == 0),
            }
            prop_assert!(st.min_rpc_time - now <= SCHED_RETRY_DELAY_MAX.max(MASTER_FETCH_INTERVAL));
            now += 30.0;
        }
    }
}
