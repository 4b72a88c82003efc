//! How a CPU script is called and what its job-picking helpers answer, on a
//! hand-made host: project A has a running job, a preempted one and three
//! queued ones (deadlines 30, 10, 10 days); project B has one queued job.

use std::sync::Arc;
use vcsim_framework::testing::{add_job, state, JobSpec};
use vcsim_framework::{AnyPolicy, ClientState, CpuScheduler, Family, JobState, RunList, View};
use vcsim_script::Script;

const HOST: &str = r#"
name = "hooks"
duration_days = 1
[host]
ncpus = 8
cpu_flops = 1e9
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 40
[[project.app]]
name = "a"
cpus = 1
flops_estimate = 1e12
flops_mean = 1e12
[[project.app]]
name = "a3"
cpus = 3
flops_estimate = 1e12
flops_mean = 1e12
[[project]]
name = "B"
resource_share = 100
latency_bound_days = 40
[[project.app]]
name = "b"
cpus = 3
flops_estimate = 1e12
flops_mean = 1e12
"#;

const DAY: f64 = 86400.0;

/// The host of the module comment; job ids are 0..6 in arrival order:
/// A's queued (30 d), running, queued (10 d), preempted, queued (10 d); B's queued.
fn host() -> ClientState {
    let mut st = state(HOST);
    add_job(&mut st, JobSpec::queued(0, 1e12, 30.0 * DAY));
    add_job(&mut st, JobSpec::queued(0, 1e12, 40.0 * DAY).running(0.5));
    add_job(&mut st, JobSpec::queued(0, 1e12, 10.0 * DAY));
    let pre = add_job(&mut st, JobSpec::queued(0, 1e12, 20.0 * DAY));
    add_job(&mut st, JobSpec::queued(0, 1e12, 10.0 * DAY));
    add_job(&mut st, JobSpec::queued(1, 1e12, 5.0 * DAY));
    st.jobs[pre as usize].state = JobState::Preempted;
    st
}

fn cpu(text: &str) -> Box<dyn CpuScheduler> {
    let s = Arc::new(Script::compile("test.rhai", text).unwrap());
    match s.make(Family::Cpu).unwrap() {
        AnyPolicy::Cpu(p) => p,
        _ => unreachable!(),
    }
}

/// The ids a call returns, or its error.
fn call(p: &mut Box<dyn CpuScheduler>, st: &ClientState) -> Result<Vec<u64>, String> {
    let v = View::new(st, &vcsim_builtin::jc::Jc1, st.now);
    let mut out = RunList::default();
    p.schedule(&v, &mut out).map_err(|e| e.message)?;
    Ok(out.jobs.iter().map(|(id, _)| *id).collect())
}

#[test]
fn next_runnable_lists_running_then_preempted_then_queued_by_deadline() {
    let mut p = cpu("fn schedule(v) { v.next_runnable(0) }");
    // Running 1, preempted 3, then queued by deadline: 2 and 4 (10 d, in
    // arrival order), then 0 (30 d).
    assert_eq!(call(&mut p, &host()).unwrap(), vec![1, 3, 2, 4, 0]);
}

#[test]
fn a_projects_jobs_are_its_own_in_arrival_order() {
    let mut p = cpu("fn schedule(v) { v.project(1).jobs + v.project(0).jobs }");
    assert_eq!(call(&mut p, &host()).unwrap(), vec![5, 0, 1, 2, 3, 4]);
}

#[test]
fn take_next_follows_the_same_order_and_skips_what_is_taken() {
    let mut p = cpu(r#"
        fn schedule(v) {
            let cap = v.capacity();
            let first = v.jobs[2];
            cap.take(first);
            let out = [first];
            loop {
                let j = cap.take_next(0);
                if j == () { break; }
                out += j;
            }
            out
        }"#);
    // Job 2 was taken by hand, so the queued ones go 4 then 0.
    assert_eq!(call(&mut p, &host()).unwrap(), vec![2, 1, 3, 4, 0]);
}

#[test]
fn take_next_passes_over_a_job_that_does_not_fit() {
    // A also gets a 3-CPU job due in one day (id 6): first among its queued.
    let mut st = host();
    let mut big = JobSpec::queued(0, 1e12, DAY);
    big.app = 1;
    add_job(&mut st, big);
    // Three more of B's 3-CPU jobs (7, 8, 9) to fill the host with: a job
    // is taken once.
    for _ in 0..3 {
        add_job(&mut st, JobSpec::queued(1, 1e12, 5.0 * DAY));
    }
    let mut p = cpu(r#"
        fn schedule(v) {
            let cap = v.capacity();
            for k in [5, 7, 8, 9] { cap.take(v.jobs[k]); }   // B's 4 x 3 CPUs: 12 of 8
            if cap.take_next(0) != () { throw "nothing fits in -4 CPUs"; }
            for k in [5, 7] { cap.give(v.jobs[k]); }         // 2 CPUs free
            let out = [];
            out += cap.take_next(0);                 // running 1
            if cap.free(0) != 1.0 { throw `free: ${cap.free(0)}`; }
            out += cap.take_next(0);                 // preempted 3
            if cap.take_next(0) != () { throw "no CPU left"; }
            cap.give(v.jobs[8]);                     // 3 CPUs free
            out += cap.take_next(0);                 // the 3-CPU job 6 fits now
            out
        }"#);
    assert_eq!(call(&mut p, &st).unwrap(), vec![1, 3, 6]);
    // Two CPUs free: the running and the preempted job, then nothing fits.
    let mut p = cpu(r#"
        fn schedule(v) {
            let cap = v.capacity();
            for k in [5, 7] { cap.take(v.jobs[k]); }   // 6 of 8 CPUs
            let out = [];
            loop {
                let j = cap.take_next(0);
                if j == () { break; }
                out += j;
            }
            out
        }"#);
    assert_eq!(call(&mut p, &st).unwrap(), vec![1, 3]);
    let mut p = cpu(r#"
        fn schedule(v) {
            let cap = v.capacity();
            for k in [5, 7] { cap.take(v.jobs[k]); }
            cap.take(v.jobs[1]);
            cap.take(v.jobs[3]);
            cap.give(v.jobs[5]);                     // 3 free; 1 and 3 taken
            cap.take(v.jobs[0]);                     // 6 of 8 in use
            // BOINC over-commits the CPUs by one job: the 3-CPU job 6 (the
            // earliest deadline) is admitted with 6 in use, and then 9 are
            // in use and no other CPU job is.
            let first = cap.take_next(0);
            if cap.take_next(0) != () { throw "9 of 8 in use: nothing more"; }
            [first]
        }"#);
    assert_eq!(call(&mut p, &st).unwrap(), vec![6]);
}

#[test]
fn this_persists_between_calls_and_after_a_failed_call() {
    let mut p = cpu(r#"
        fn init() { #{ n: 0 } }
        fn schedule(v) {
            this.n += 1;
            if this.n == 2 { throw "the second call fails"; }
            v.jobs.extract(0, this.n)
        }"#);
    let st = host();
    assert_eq!(call(&mut p, &st).unwrap(), vec![0]);
    let err = call(&mut p, &st).unwrap_err();
    assert!(
        err.contains("test.rhai:5:") && err.contains("the second call fails"),
        "{err}"
    );
    assert_eq!(call(&mut p, &st).unwrap(), vec![0, 1, 2]);
}

#[test]
fn a_state_with_a_function_pointer_named_like_the_hook_still_calls_the_hook() {
    // `this.schedule(v)` would call the pointer: the hook must run instead.
    let mut p = cpu(r#"
        fn init() { #{ schedule: Fn("other"), k: 0 } }
        fn other(v) { throw "not this one"; }
        fn schedule(v) {
            this.k += 1;
            v.jobs.extract(0, this.k)
        }"#);
    let st = host();
    assert_eq!(call(&mut p, &st).unwrap(), vec![0]);
    assert_eq!(call(&mut p, &st).unwrap(), vec![0, 1]);
}

#[test]
fn an_error_inside_a_helper_names_the_hook_that_called_it() {
    let mut p = cpu(r#"
        fn helper(x) {
            x / 0
        }
        fn schedule(v) {
            helper(1);
            []
        }"#);
    let err = call(&mut p, &host()).unwrap_err();
    assert!(
        err.starts_with("test.rhai:3:") && err.contains("`helper` (called from `schedule`)"),
        "{err}"
    );
}

#[test]
fn capacity_honours_max_concurrent_and_scripts_can_read_the_caps() {
    // A's 1-CPU app `a` capped at 2 jobs at once: of its five jobs (running
    // 1, preempted 3, queued 2, 4, 0 in the v4 order) only two are taken,
    // though 8 CPUs are free.
    let text = HOST.replacen(
        "name = \"a\"\ncpus = 1",
        "name = \"a\"\ncpus = 1\nmax_concurrent = 2",
        1,
    );
    assert_ne!(text, HOST);
    let mut st = state(&text);
    for (d, running) in [(30.0, false), (40.0, true), (10.0, false)] {
        let s = JobSpec::queued(0, 1e12, d * DAY);
        add_job(&mut st, if running { s.running(0.5) } else { s });
    }
    let mut p = cpu(r#"
        fn schedule(v) {
            if v.jobs[0].app_max_concurrent != 2 { throw "the cap"; }
            if v.project(0).max_concurrent != 0 { throw "no project cap"; }
            let cap = v.capacity();
            let out = [];
            loop {
                let j = cap.take_next(0);
                if j == () { break; }
                out += j;
            }
            out
        }"#);
    assert_eq!(call(&mut p, &st).unwrap(), vec![1, 2]);
}
