//! When the client reports finished jobs and how many RPCs it makes a
//! step, as BOINC 2007's client (the v4 policies) and today's (`wf3`) do:
//! the examples of the book's pages "RPC timing" and "Today's BOINC
//! client".

mod common;

use common::{temp_dir, vcsim};
use std::path::{Path, PathBuf};

/// One CPU, project A of 1-hour jobs; `extra` is appended (jobs, apps).
fn scenario(d: &Path, name: &str, head: &str, extra: &str) -> PathBuf {
    let p = d.join(format!("{name}.toml"));
    let toml = format!(
        "name = \"{name}\"\nseed = 1\n{head}\n\
         [[project]]\nname = \"A\"\nresource_share = 100\nlatency_bound_days = 9\n\
         [[project.app]]\nname = \"main\"\nflops_estimate = 3.6e12\nflops_mean = 3.6e12\n{extra}"
    );
    std::fs::write(&p, toml).unwrap();
    p
}

/// The times (seconds) of the RPCs in a run's trace.
fn rpc_times(scn: &Path, policy: &str) -> Vec<(f64, String)> {
    let trace = scn.with_extension("trace");
    vcsim(&[
        "run",
        scn.to_str().unwrap(),
        "--policy",
        policy,
        "--trace",
        trace.to_str().unwrap(),
    ])
    .run()
    .succeeds();
    std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter(|l| l.contains(" rpc "))
        .map(|l| {
            let t = l.split_whitespace().next().unwrap();
            let t: f64 = t.trim_start_matches("t=").parse().unwrap();
            let p = l.split(" p=").nth(1).unwrap().split(' ').next().unwrap();
            (t, p.to_string())
        })
        .collect()
}

#[test]
fn boinc_2007_reports_a_finished_job_strictly_after_a_day_or_the_deadline_cushion() {
    // A fetcher that never asks for work, so that only reports make RPCs.
    // Job 0 finishes at 1:00 and is due at 1.5 days: overdue once now >
    // 1.5 d - 1 d = 12:00, so at the step after, 12:01.
    let d = temp_dir("reporting-2007");
    let script = d.join("nofetch.rhai");
    std::fs::write(&script, "fn request(v) {\n    ()\n}\n").unwrap();
    let policy = format!("cpu=cs2,fetch={},send=ws1,estimate=jc2", script.display());
    let jobs = |a: f64, b: f64| {
        format!(
            "[[project.job]]\napp = \"main\"\ndeadline_days = {a}\n\
             [[project.job]]\napp = \"main\"\ndeadline_days = {b}\n"
        )
    };
    let head = "duration_days = 3\n[host]\nncpus = 1\ncpu_flops = 1e9";
    let near = scenario(&d, "near", head, &jobs(1.5, 2.5));
    assert_eq!(rpc_times(&near, &policy)[0].0, 12.0 * 3600.0 + 60.0);
    // Deadlines far off: overdue once now > 1:00 + 1 day, at 1d 01:01.
    let far = scenario(&d, "far", head, &jobs(8.0, 9.0));
    assert_eq!(rpc_times(&far, &policy)[0].0, 86400.0 + 3600.0 + 60.0);
}

#[test]
fn todays_client_reports_within_an_hour_of_finishing() {
    // Eight queued 1-hour jobs and a buffer they fill: wf3 asks for no
    // work for hours. Today's client reports a job once it has waited an
    // hour (`MAX_REPORT_DELAY`): job 0 ends at 1:00 and is reported at
    // 2:01 (strictly after 2:00), job 2 (ends 3:00) at 4:01, each report
    // asking for the buffer's top-up.
    let head = "duration_days = 0.25\n[host]\nncpus = 1\ncpu_flops = 1e9\n\
                [client]\nwork_buf_min_days = 0.05\nwork_buf_additional_days = 0.1";
    let jobs = "[[project.job]]\napp = \"main\"\ndeadline_days = 5\n".repeat(8);
    let scn = scenario(&temp_dir("reporting-hour"), "hour", head, &jobs);
    let times: Vec<f64> = rpc_times(&scn, "CS3_WF3_WS3_JC3")
        .into_iter()
        .map(|x| x.0)
        .collect();
    assert_eq!(&times[..2], [7260.0, 14460.0], "{times:?}");
}

#[test]
fn todays_client_reports_at_64_finished_jobs_without_waiting() {
    // 70 CPUs, 140 half-hour jobs: the first 70 end at 0:30 while the
    // second wave keeps every CPU busy past the buffer. 64 waiting jobs
    // are reported at once (`RESULT_REPORT_IF_AT_LEAST_N`), not an hour
    // later.
    let head = "duration_days = 0.05\n[host]\nncpus = 70\ncpu_flops = 1e9\n\
                [client]\nwork_buf_min_days = 0\nwork_buf_additional_days = 0";
    let jobs = "[[project.job]]\napp = \"main\"\ndeadline_days = 9\n".repeat(140);
    let scn = scenario(&temp_dir("reporting-ready"), "ready", head, &jobs);
    let scn_text = std::fs::read_to_string(&scn).unwrap().replace(
        "flops_estimate = 3.6e12\nflops_mean = 3.6e12",
        "flops_estimate = 1.8e12\nflops_mean = 1.8e12",
    );
    std::fs::write(&scn, scn_text).unwrap();
    let times = rpc_times(&scn, "CS3_WF3_WS3_JC3");
    assert_eq!(times[0].0, 1800.0, "{times:?}");
}

#[test]
fn todays_client_makes_one_rpc_a_step_and_backs_off_an_empty_reply_at_once() {
    // A's server refuses every job (1-hour jobs, a 28.8-minute latency
    // bound); B can supply work. BOINC's emulator makes one RPC a step,
    // and its first empty reply backs A's CPU off (its clock starts far
    // above 0): A at 0:00, B at 0:01.
    let head = "duration_days = 0.2\n[host]\nncpus = 1\ncpu_flops = 1e9";
    let b = "[[project]]\nname = \"B\"\nresource_share = 100\nlatency_bound_days = 9\n\
             [[project.app]]\nname = \"main\"\nflops_estimate = 3.6e12\nflops_mean = 3.6e12\n";
    let scn = scenario(&temp_dir("reporting-refused"), "refused", head, b);
    let text = std::fs::read_to_string(&scn).unwrap().replacen(
        "latency_bound_days = 9",
        "latency_bound_days = 0.02",
        1,
    );
    std::fs::write(&scn, text).unwrap();
    let rpcs = rpc_times(&scn, "CS3_WF3_WS3_JC3");
    assert_eq!(
        rpcs[..2],
        [(0.0, "0".to_string()), (60.0, "1".to_string())],
        "{rpcs:?}"
    );
}
