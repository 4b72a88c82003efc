//! A shortfall is idle instance-time, and rounding is not idleness: when the
//! queued work fills the buffer exactly, the last finishes are computed an
//! ulp or so before the horizon's end, which left shortfalls of 1e-11 s that
//! a fetcher asked for at every step. The simulation reports none.

use vcsim_blocks::rr_sim::{simulate_with, RrResult};
use vcsim_framework::testing::{add_job, set_now, state, JobSpec};
use vcsim_framework::{policy::StaticEstimate, View};

/// `ncpus` CPUs and projects of `shares`, each with queued jobs of
/// `remaining` seconds each, from `now`, simulated over `buffer` seconds.
fn simulate(
    ncpus: u32,
    shares: &[f64],
    jobs: &[usize],
    remaining: f64,
    now: f64,
    buffer: f64,
) -> RrResult {
    let mut text =
        format!("name = \"m\"\nduration_days = 10\n[host]\nncpus = {ncpus}\ncpu_flops = 1e9\n");
    for (p, s) in shares.iter().enumerate() {
        text += &format!(
            "[[project]]\nname = \"P{p}\"\nresource_share = {s}\nlatency_bound_days = 30\n\
             [[project.app]]\nname = \"a\"\nflops_estimate = 1e12\nflops_mean = 1e12\n"
        );
    }
    let mut st = state(&text);
    set_now(&mut st, now);
    let mut rem = Vec::new();
    for (p, &k) in jobs.iter().enumerate() {
        for _ in 0..k {
            add_job(&mut st, JobSpec::queued(p, 1e12, now + 1e7));
            rem.push(remaining);
        }
    }
    let v = View::new(&st, &StaticEstimate, 0.0);
    let mut out = RrResult::default();
    simulate_with(&v, 0, buffer, &rem, &mut out);
    out
}

#[test]
fn work_that_fills_the_buffer_exactly_leaves_no_shortfall() {
    // 4 CPUs shared 40/40/20 over 8.4 hours, jobs of 288 s: the projects'
    // queues reach past the horizon. Without the noise floor the first
    // project's shortfall was 4.4e-12 s and the total 7.3e-12 s.
    for now in [19_860.0, 143_400.0, 537_600.0, 589_380.0] {
        let out = simulate(
            4,
            &[40.0, 40.0, 20.0],
            &[169, 169, 85],
            288.0,
            now,
            30_240.0,
        );
        let each: Vec<f64> = out.projects.iter().map(|p| p.shortfall).collect();
        assert_eq!(out.shortfall, 0.0, "now {now}");
        assert_eq!(each, [0.0; 3], "now {now}");
    }
}

#[test]
fn a_real_shortfall_of_a_second_still_counts() {
    // One job a second short of the buffer, on one CPU.
    let out = simulate(1, &[100.0], &[1], 30_239.0, 143_400.0, 30_240.0);
    assert!((out.shortfall - 1.0).abs() < 1e-6, "{}", out.shortfall);
    assert!((out.projects[0].shortfall - 1.0).abs() < 1e-6);
}

/// A GPU's simulation activates jobs while the instances in use are fewer
/// than the count, as BOINC's `RR_SIM::pick_jobs_to_run` does, so the last
/// may over-commit (the scheduler never does): jobs of 0.33 of one GPU run
/// four at a time here, and the GPU is busy through the buffer. (Counting
/// only the three that fit would leave 0.01 of it idle in every
/// simulation, a shortfall no job can fill; see gpu.md.)
#[test]
fn a_gpus_simulation_activates_jobs_while_fewer_instances_than_its_count_are_used() {
    let text = "name = \"g\"\nduration_days = 10\n[host]\nncpus = 1\ncpu_flops = 1e9\n\
                [[host.gpu]]\nkind = \"amd\"\ncount = 1\nflops = 3e9\n\
                [[project]]\nname = \"M\"\nresource_share = 100\nlatency_bound_days = 30\n\
                [[project.app]]\nname = \"g\"\ncpus = 0\ngpu = { kind = \"amd\", count = 0.33 }\n\
                flops_estimate = 3.6e12\nflops_mean = 3.6e12\n";
    let mut st = state(text);
    set_now(&mut st, 0.0);
    for _ in 0..8 {
        add_job(&mut st, JobSpec::queued(0, 3.6e12, 1e7));
    }
    let v = View::new(&st, &StaticEstimate, 0.0);
    let mut out = RrResult::default();
    simulate_with(&v, 1, 3000.0, &[1000.0; 8], &mut out);
    let finishes: Vec<f64> = out.jobs.iter().map(|j| j.finish).collect();
    assert_eq!(
        finishes,
        [1000.0, 1000.0, 1000.0, 1000.0, 2000.0, 2000.0, 2000.0, 2000.0]
    );
    assert_eq!(out.nidle, 0.0);
}
