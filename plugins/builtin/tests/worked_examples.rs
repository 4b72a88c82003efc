//! The documents' own examples, worked by hand.

use vcsim_blocks::{debt::LongTermDebt, rr_sim};
use vcsim_builtin::jc::Jc1;
use vcsim_builtin::{cs2::Cs2, wf1, wf1_v4, ws::Ws2};
use vcsim_framework::testing::{add_job, set_now, state, JobSpec};
use vcsim_framework::{CpuScheduler, RunList, RunMode, View, WorkFetcher, WorkSender};

fn scenario(ncpus: u32, shares: &[f64], buf_min_days: f64, buf_add_days: f64) -> String {
    let mut s = format!(
        "name = \"t\"\nduration_days = 1\n[host]\nncpus = {ncpus}\ncpu_flops = 1e9\n[client]\nwork_buf_min_days = {buf_min_days}\nwork_buf_additional_days = {buf_add_days}\n"
    );
    for (i, sh) in shares.iter().enumerate() {
        s += &format!(
            "[[project]]\nname = \"P{i}\"\nresource_share = {sh}\nlatency_bound_days = 10\n[[project.app]]\nname = \"main\"\nflops_estimate = 1e12\nflops_mean = 1e12\n"
        );
    }
    s
}

const HOUR: f64 = 3600.0;
const DAY: f64 = 86400.0;

#[test]
fn ettprc_of_three_queued_jobs_worked_by_hand() {
    // One project, two CPUs: min_results = ceil(2 x 1) = 2, avg_proc_rate = 2.
    let mut st = state(&scenario(2, &[100.0], 0.125, 0.125));
    // Estimates 1 h, 2 h, 3 h (1 GFLOPS CPUs) with deadlines in 3, 1 and 2 days.
    add_job(&mut st, JobSpec::queued(0, 3.6e12, 3.0 * DAY));
    add_job(&mut st, JobSpec::queued(0, 7.2e12, 1.0 * DAY));
    add_job(&mut st, JobSpec::queued(0, 10.8e12, 2.0 * DAY));
    let v = View::new(&st, &Jc1, 0.0);
    assert_eq!(wf1_v4::min_results(&v, 0), 2);
    assert_eq!(wf1_v4::avg_proc_rate(&v, 0), 2.0);
    // Decreasing deadline: 1 h (day 3), 3 h (day 2), 2 h (day 1); the first
    // min_results - 1 = 1 is skipped: (3 h + 2 h) / 2 = 2.5 h.
    assert_eq!(wf1_v4::ettprc(&v, 0, 1).unwrap(), 2.5 * HOUR);
    // 2.5 h is below the low-water mark of 3 h: work is needed, enough to
    // reach the high-water mark of 6 h at 2 CPU-seconds a second.
    let per = wf1_v4::Wf1V4::compute(&v).unwrap();
    assert_eq!(per[0].0, wf1_v4::Urgency::NeedWork);
    assert_eq!(per[0].2, (6.0 - 2.5) * HOUR * 2.0);
}

#[test]
fn round_robin_shortfall_for_two_projects_and_three_jobs() {
    // Two CPUs, equal shares, a 3-hour buffer. A has two 1-hour jobs, B one
    // 2-hour job. A's jobs run at rate 1/2 each, B's at 1 (one job, so x N/a):
    // all three end at 2 h; then both CPUs are idle for the last hour.
    let mut st = state(&scenario(2, &[1.0, 1.0], 0.0625, 0.0625));
    add_job(&mut st, JobSpec::queued(0, 3.6e12, 10.0 * DAY));
    add_job(&mut st, JobSpec::queued(0, 3.6e12, 10.0 * DAY));
    add_job(&mut st, JobSpec::queued(1, 7.2e12, 10.0 * DAY));
    let v = View::new(&st, &Jc1, 0.0);
    let mut rr = rr_sim::RrResult::default();
    rr_sim::simulate(&v, 0, 3.0 * HOUR, &mut rr).unwrap();
    assert_eq!(rr.shortfall, 2.0 * HOUR, "two CPUs idle for the last hour");
    assert_eq!(
        rr.projects[0].shortfall, HOUR,
        "A lacks its one CPU for an hour"
    );
    assert_eq!(rr.projects[1].shortfall, HOUR);
    assert!(rr.jobs.iter().all(|j| j.finish == 2.0 * HOUR && !j.missed));
    assert_eq!(rr.first_idle, 2.0 * HOUR);
}

#[test]
fn an_ltd_update_for_two_projects() {
    // Two CPUs, equal shares. Over 1000 s A's job holds one CPU and B, which
    // has never had a job, runs nothing but may be contacted: both earn
    // 1/2 of the 1000 s of work done; A did it all: A -500, B +500 (mean 0).
    let mut st = state(&scenario(2, &[1.0, 1.0], 0.1, 0.25));
    add_job(&mut st, JobSpec::queued(0, 1e13, 10.0 * DAY).running(0.0));
    let mut ltd = LongTermDebt::default();
    ltd.update(&View::new(&st, &Jc1, 0.0));
    ltd.update(&View::new(&st, &Jc1, 1000.0));
    assert_eq!(ltd.ltd, vec![-500.0, 500.0]);
}

#[test]
fn a_project_that_never_had_a_job_earns_long_term_debt_until_backed_off() {
    // One CPU; shares 1, 1, 2; A computes for an hour. Everyone may be
    // contacted: the 3600 s of work are earned 1/4, 1/4, 1/2:
    // A 900 - 3600 = -2700, B +900, C +1800 (mean 0).
    let mut st = state(&scenario(1, &[1.0, 1.0, 2.0], 0.1, 0.25));
    add_job(&mut st, JobSpec::queued(0, 1e13, 10.0 * DAY).running(0.0));
    let mut ltd = LongTermDebt::default();
    ltd.update(&View::new(&st, &Jc1, 0.0));
    ltd.update(&View::new(&st, &Jc1, HOUR));
    assert_eq!(ltd.ltd, vec![-2700.0, 900.0, 1800.0]);
    // Another hour with C backed off (not potentially runnable): A and B
    // earn half each, C nothing: A -2700 - 1800, B +900 + 1800, C +1800;
    // the mean is still 0.
    st.projects[2].rpc.min_rpc_time = 10.0 * DAY;
    ltd.update(&View::new(&st, &Jc1, 2.0 * HOUR));
    assert_eq!(ltd.ltd, vec![-4500.0, 2700.0, 1800.0]);
}

#[test]
fn the_papers_wf1_asks_for_the_difference_to_its_share_of_the_buffer() {
    // Two CPUs, shares 3:1, buffer 0.1 + 0.15 days = 6 h. A keeps
    // 2 x 6 h x 3/4 = 9 h queued, B 2 x 6 h x 1/4 = 3 h. A has 8 h of work
    // (5 h + 3 h), B 1 h: both are short, by 1 h and 2 h; with no debt or
    // shortfall yet, the tie goes to the later project, B, for 2 h.
    let mut st = state(&scenario(2, &[3.0, 1.0], 0.1, 0.15));
    add_job(&mut st, JobSpec::queued(0, 18e12, 10.0 * DAY));
    add_job(&mut st, JobSpec::queued(0, 10.8e12, 10.0 * DAY));
    add_job(&mut st, JobSpec::queued(1, 3.6e12, 10.0 * DAY));
    let v = View::new(&st, &Jc1, 0.0);
    assert_eq!(wf1::target(&v, 0), 9.0 * HOUR);
    assert_eq!(wf1::target(&v, 1), 3.0 * HOUR);
    let f = wf1::Wf1::default();
    let r = f.request(&v).unwrap().expect("work is needed");
    assert_eq!((r.project, r.work_req_seconds), (1, 2.0 * HOUR));
    // A's difference is what it asks for when contacted anyway.
    let r = f.piggyback(&v, 0).unwrap().expect("A is short too");
    assert_eq!(r.work_req_seconds, HOUR);
    // With 9 h queued, A asks for nothing: no hysteresis, no more.
    add_job(&mut st, JobSpec::queued(0, 3.6e12, 10.0 * DAY));
    let v = View::new(&st, &Jc1, 0.0);
    assert!(f.piggyback(&v, 0).unwrap().is_none());
}

/// One CPU, two projects with equal shares; A's 1-hour job runs, B's 1-hour
/// job waits with deadline `b_deadline`. The round-robin simulation runs both
/// at rate 1/2, so B's job ends at 2 h. With no buffer minimum and a 1-hour
/// period its computation deadline is `b_deadline - 1 h`, and it misses when
/// 2 h > 0.9 (b_deadline - 1 h), i.e. when b_deadline < 2 h / 0.9 + 1 h.
fn cs2_with_b_deadline(b_deadline: f64) -> RunList {
    let mut st = state(&scenario(1, &[1.0, 1.0], 0.0, 0.0));
    set_now(&mut st, 0.0);
    add_job(&mut st, JobSpec::queued(0, 3.6e12, 10.0 * DAY).running(0.0));
    add_job(&mut st, JobSpec::queued(1, 3.6e12, b_deadline));
    let v = View::new(&st, &Jc1, 0.0);
    let mut out = RunList::default();
    Cs2::default().schedule(&v, &mut out).unwrap();
    out
}

#[test]
fn cs2_switches_to_deadline_mode_exactly_when_the_simulation_shows_a_miss() {
    let threshold = 2.0 * HOUR / 0.9 + HOUR;
    // Just after the threshold: no miss; A's job has not had its slice, so it keeps the CPU.
    let out = cs2_with_b_deadline(threshold + 60.0);
    assert_eq!(out.jobs, vec![(0, RunMode::RoundRobin)]);
    // Just before it: B's job misses, runs earliest-deadline-first, and A's job is preempted.
    let out = cs2_with_b_deadline(threshold - 60.0);
    assert_eq!(out.jobs, vec![(1, RunMode::Deadline)]);
}

fn ws2_on(workload_deadline: f64, cand_seconds: f64, cand_deadline: f64) -> bool {
    use vcsim_framework::{Candidate, ReportedJob, ServerRequest, WorkRequest};
    let st = state(&scenario(1, &[1.0], 0.0, 0.0));
    let workload = [ReportedJob {
        project: 0,
        rsc: 0,
        cpus: 1.0,
        gpu_count: 0.0,
        deadline: workload_deadline,
        remaining_seconds: 5000.0,
    }];
    let request = WorkRequest::seconds(0, 1e6, 1);
    let req = ServerRequest {
        now: 0.0,
        project: 0,
        project_name: "P0",
        latency_bound: 1e6,
        host: &st.host,
        request: &request,
        dcf: 1.0,
        work_buf_min: 0.0,
        on_fraction: 1.0,
        workload: &workload,
        free_bytes: [1e12; 3],
        explaining: false,
    };
    let cand = Candidate {
        app: 0,
        rsc: 0,
        cpus: 1.0,
        gpu_count: 0.0,
        flops_estimate: 0.0,
        est_seconds: cand_seconds,
        deadline: cand_deadline,
    };
    Ws2::default().consider(&req, &[], &cand).unwrap() == vcsim_framework::Verdict::Send
}

#[test]
fn ws2_refuses_a_job_that_would_push_a_queued_job_past_its_deadline() {
    // The host has a 5000 s job due at 10000 s.
    // A 4000 s job due at 20000 s runs after it: both on time.
    assert!(ws2_on(10_000.0, 4000.0, 20_000.0));
    // A 4000 s job due at 8000 s runs first (EDF) and ends at 4000; the queued job at 9000: fine.
    assert!(ws2_on(10_000.0, 4000.0, 8000.0));
    // A 6000 s job due at 9000 s runs first, and the queued job would end at 11000 > 10000: refused.
    assert!(!ws2_on(10_000.0, 6000.0, 9000.0));
    // A job that cannot meet its own deadline is refused too.
    assert!(!ws2_on(10_000.0, 6000.0, 5000.0));
}
