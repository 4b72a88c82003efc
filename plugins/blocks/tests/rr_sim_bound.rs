//! The bounds of BOINC's simulation that spare its runs.
//!
//! - What WF2 relies on to certify a quiet stretch (`quiet_until`): the
//!   simulation with fresh rates and less work (`rr_sim::lower_bound`)
//!   bounds BOINC's simulation. Every job finishes no later, the shortfall
//!   is no less, and each project's deficit is no less than its shortfall.
//!   BOINC's own simulation is not monotone in the work: a longer job can
//!   make another finish sooner (the last test finds such a case), because
//!   its rates are recomputed only when a project runs out of jobs.
//! - What CS2 relies on to skip the simulation (`rr_sim::count_misses`):
//!   no job finishes after its bound from `rr_sim::finish_bounds`, so the
//!   misses counted are the simulation's.

use proptest::prelude::*;
use vcsim_blocks::rr_sim::{
    bounds_hold, count_misses, finish_bounds, lower_bound, simulate, simulate_with, RrResult,
};
use vcsim_framework::testing::{add_job, state, JobSpec};
use vcsim_framework::{policy::StaticEstimate, ClientState, View};

/// A host of `ncpus` CPUs and projects of the given shares; project p's
/// single app has `cpus[p]` CPUs per job and max_concurrent `cap[p]` (0: none).
fn host(ncpus: u32, shares: &[f64], cpus: &[f64], caps: &[u32]) -> ClientState {
    let mut text =
        format!("name = \"m\"\nduration_days = 10\n[host]\nncpus = {ncpus}\ncpu_flops = 1e9\n");
    for (p, share) in shares.iter().enumerate() {
        text += &format!(
            "[[project]]\nname = \"P{p}\"\nresource_share = {share}\nlatency_bound_days = 3\n[[project.app]]\nname = \"a\"\ncpus = {}\nmax_concurrent = {}\nflops_estimate = 1e12\nflops_mean = 1e12\n",
            cpus[p].min(ncpus as f64),
            caps[p]
        );
    }
    state(&text)
}

#[derive(Debug, Clone)]
struct Case {
    ncpus: u32,
    shares: Vec<f64>,
    cpus: Vec<f64>,
    caps: Vec<u32>,
    /// (project, remaining seconds, deadline seconds) per job, in arrival order.
    jobs: Vec<(usize, f64, f64)>,
    /// Per job, the fraction of its remaining time the bound runs with.
    less: Vec<f64>,
    /// The on fraction the client has learnt (1: it learns none).
    ocf: f64,
}

fn case(
    projects: std::ops::RangeInclusive<usize>,
    widths: Vec<f64>,
    caps: Vec<u32>,
) -> impl Strategy<Value = Case> {
    (1u32..=4, projects).prop_flat_map(move |(ncpus, np)| {
        (
            Just(ncpus),
            prop::collection::vec(1.0f64..400.0, np),
            prop::collection::vec(prop::sample::select(widths.clone()), np),
            prop::collection::vec(prop::sample::select(caps.clone()), np),
            prop::collection::vec((0..np, 60.0f64..40_000.0, 3_000.0f64..300_000.0), 1..14),
            prop::collection::vec(prop::sample::select(vec![1.0, 0.999, 0.9, 0.5, 0.0]), 14),
            prop::sample::select(vec![1.0, 0.8, 0.3]),
        )
            .prop_map(|(ncpus, shares, cpus, caps, jobs, less, ocf)| Case {
                ncpus,
                shares,
                cpus,
                caps,
                jobs,
                less,
                ocf,
            })
    })
}

fn setup(c: &Case) -> ClientState {
    let mut st = host(c.ncpus, &c.shares, &c.cpus, &c.caps);
    for &(p, _, deadline) in &c.jobs {
        add_job(&mut st, JobSpec::queued(p, 1e12, deadline));
    }
    if c.ocf < 1.0 {
        st.prefs.learn_availability = true;
        st.observed_on_fraction = c.ocf;
    }
    st
}

/// Where a job of BOINC's simulation finishes after its bound, if one
/// does; how many bounds were given (0 where they do not hold).
fn finish_after_bound(c: &Case) -> (Option<String>, usize) {
    let st = setup(c);
    let rem: Vec<f64> = c.jobs.iter().map(|j| j.1).collect();
    let s = boinc(&st, &rem);
    let v = View::new(&st, &StaticEstimate, 0.0);
    let mut bounds = Vec::new();
    if !finish_bounds(&v, 0, &rem, &mut Vec::new(), |i, b| {
        bounds.push((i, b));
        true
    }) {
        return (None, 0);
    }
    for (&(i, b), js) in bounds.iter().zip(&s.jobs) {
        assert_eq!(i, js.index, "bounds come in list order");
        if js.finish > b * (1.0 + 1e-12) + 1e-6 {
            return (
                Some(format!(
                    "job {i} finishes at {} after its bound {b}",
                    js.finish
                )),
                bounds.len(),
            );
        }
    }
    (None, bounds.len())
}

/// The misses CS2 counts, and those of a full simulation.
fn misses_both_ways(c: &Case) -> (Vec<u32>, Vec<u32>) {
    let st = setup(c);
    let v = View::new(&st, &StaticEstimate, 0.0);
    let mut counted = vec![0; c.shares.len()];
    count_misses(&v, 0, 30_000.0, &mut RrResult::default(), &mut counted).unwrap();
    let mut out = RrResult::default();
    simulate(&v, 0, 30_000.0, &mut out).unwrap();
    (counted, out.projects.iter().map(|p| p.misses).collect())
}

fn boinc(st: &ClientState, rem: &[f64]) -> RrResult {
    let v = View::new(st, &StaticEstimate, 0.0);
    let mut out = RrResult::default();
    simulate_with(&v, 0, 30_000.0, rem, &mut out);
    out
}

fn bound(st: &ClientState, rem: &[f64]) -> RrResult {
    let v = View::new(st, &StaticEstimate, 0.0);
    let mut out = RrResult::default();
    assert!(
        lower_bound(&v, 0, 30_000.0, rem, &mut out),
        "the bound holds here"
    );
    out
}

/// Where the bound fails to bound, if it does.
fn violation(c: &Case) -> Option<String> {
    let st = setup(c);
    let rem: Vec<f64> = c.jobs.iter().map(|j| j.1).collect();
    let less: Vec<f64> = rem.iter().zip(&c.less).map(|(r, f)| r * f).collect();
    let (b, s) = (bound(&st, &less), boinc(&st, &rem));
    let tol = 1e-6;
    if b.shortfall + tol < s.shortfall {
        return Some(format!("shortfall {} below {}", b.shortfall, s.shortfall));
    }
    for (p, (pb, ps)) in b.projects.iter().zip(&s.projects).enumerate() {
        if pb.deficit + tol < ps.shortfall {
            return Some(format!(
                "P{p} deficit {} below shortfall {}",
                pb.deficit, ps.shortfall
            ));
        }
    }
    for (jb, js) in b.jobs.iter().zip(&s.jobs) {
        if jb.finish > js.finish * (1.0 + 1e-12) + tol {
            return Some(format!(
                "job {} finishes at {} after {}",
                jb.index, jb.finish, js.finish
            ));
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn less_work_and_fresh_rates_bound_the_simulation(
        c in case(1..=6, vec![1.0, 0.5, 2.0, 3.0], vec![0])
    ) {
        let st = setup(&c);
        let v = View::new(&st, &StaticEstimate, 0.0);
        prop_assume!(bounds_hold(&v, 0));
        prop_assert_eq!(violation(&c), None);
    }

    #[test]
    fn no_job_finishes_after_its_bound(
        c in case(1..=6, vec![1.0, 0.5, 2.0, 3.0], vec![0])
    ) {
        let (violation, given) = finish_after_bound(&c);
        prop_assert_eq!(violation, None);
        let st = setup(&c);
        let v = View::new(&st, &StaticEstimate, 0.0);
        prop_assert_eq!(given > 0, bounds_hold(&v, 0));
    }

    #[test]
    fn cs2_counts_the_simulations_misses(
        c in case(1..=4, vec![1.0, 2.0], vec![0, 0, 1])
    ) {
        let (counted, simulated) = misses_both_ways(&c);
        prop_assert_eq!(counted, simulated);
    }

    #[test]
    fn the_bound_is_not_claimed_under_max_concurrent_caps(
        c in case(1..=3, vec![1.0, 2.0], vec![0, 1])
    ) {
        // (Each project here has one app, so one width: only caps matter.)
        let st = setup(&c);
        let v = View::new(&st, &StaticEstimate, 0.0);
        prop_assert_eq!(bounds_hold(&v, 0), c.caps.iter().all(|k| *k == 0));
    }
}

#[test]
fn boincs_simulation_is_not_monotone_in_the_work() {
    // Job 3 of P1 taking 3000 s longer lets job 5 of P2 finish sooner: P1
    // now runs out of jobs after P2's first job is done, so that the rates
    // recomputed then give P2's last job the boost of a project with fewer
    // jobs than CPUs, which it otherwise waits for until P0 runs out.
    let c = Case {
        ncpus: 2,
        shares: vec![265.744, 320.960, 206.524],
        cpus: vec![1.0; 3],
        caps: vec![0; 3],
        jobs: vec![
            (2, 20016.73, 3000.0),
            (0, 36761.32, 3000.0),
            (0, 60.0, 3000.0),
            (1, 29008.20, 3000.0),
            (1, 60.0, 3000.0),
            (2, 33011.99, 3000.0),
        ],
        less: vec![1.0; 6],
        ocf: 1.0,
    };
    let st = setup(&c);
    let rem: Vec<f64> = c.jobs.iter().map(|j| j.1).collect();
    let mut more = rem.clone();
    more[3] += 3000.0;
    let (a, b) = (boinc(&st, &rem), boinc(&st, &more));
    assert!(
        b.jobs[5].finish < a.jobs[5].finish - 100.0,
        "{} vs {}",
        b.jobs[5].finish,
        a.jobs[5].finish
    );
    // The bound, run with the shorter work, is below both.
    let lb = bound(&st, &rem);
    assert!(lb.jobs[5].finish <= b.jobs[5].finish);
}

#[test]
fn far_deadlines_are_certain_and_near_ones_are_simulated() {
    // One CPU, two jobs of an hour: due in ten days they cannot miss; due
    // in 90 minutes the bound (an hour's wait, then an hour) cannot say.
    let mut c = Case {
        ncpus: 1,
        shares: vec![100.0],
        cpus: vec![1.0],
        caps: vec![0],
        jobs: vec![(0, 3600.0, 864_000.0), (0, 3600.0, 864_000.0)],
        less: vec![1.0; 2],
        ocf: 1.0,
    };
    let st = setup(&c);
    let v = View::new(&st, &StaticEstimate, 0.0);
    let rem = [3600.0, 3600.0];
    let mut bounds = Vec::new();
    assert!(finish_bounds(&v, 0, &rem, &mut Vec::new(), |_, b| {
        bounds.push(b);
        true
    }));
    assert_eq!(bounds, vec![3600.0, 7200.0]);
    assert_eq!(misses_both_ways(&c), (vec![0], vec![0]));
    c.jobs[1].2 = 5400.0;
    // The second finishes at 7200 s, after 0.9 of the 5400 s less the
    // buffer minimum and the scheduling period: a miss, found by simulating.
    assert_eq!(misses_both_ways(&c), (vec![1], vec![1]));
}
