//! The built-in policies' reasons in explained runs, as examples: each
//! decision carries the reason its policy's own computation gives, with the
//! data a program can check (debts, finish times, deadlines, shortfalls).

use std::path::Path;
use vcsim_builtin::jc::Jc1;
use vcsim_builtin::{cs1::Cs1, cs2::Cs2, wf2::Wf2, ws::Ws2};
use vcsim_framework::explain::{Datum, Source};
use vcsim_framework::testing::{add_job, set_now, state, JobSpec};
use vcsim_framework::{
    run_spec, Candidate, CpuScheduler, Family, PolicySpec, Reason, Registry, ReportedJob, RunList,
    RunMode, Scenario, ServerRequest, SimOptions, Verdict, View, WorkFetcher, WorkRequest,
    WorkSender,
};

const HOUR: f64 = 3600.0;
const DAY: f64 = 86400.0;

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

fn num(r: &Reason, key: &str) -> f64 {
    match r.get(key) {
        Some(Datum::Number(x)) => *x,
        other => panic!("{key}: {other:?} in {r:?}"),
    }
}

fn text(r: &Reason, key: &str) -> String {
    match r.get(key) {
        Some(Datum::Text(s)) => s.clone(),
        other => panic!("{key}: {other:?} in {r:?}"),
    }
}

#[test]
fn a_cs1_start_names_the_highest_debt_and_the_preempted_job_the_lower_one() {
    // One CPU, equal shares. P0's job ran for the first hour, P1's waited:
    // P0's debt is 1800 - 3600 = -1800 s, P1's +1800 s. P1 gets the CPU.
    let mut st = state(&scenario(1, &[1.0, 1.0], 0.0, 0.0));
    let a = add_job(&mut st, JobSpec::queued(0, 1e13, 10.0 * DAY).running(0.0));
    let b = add_job(&mut st, JobSpec::queued(1, 1e13, 10.0 * DAY));
    let mut cs1 = Cs1::default();
    cs1.schedule(&View::new(&st, &Jc1, 0.0), &mut RunList::default())
        .unwrap();
    let v = View::new(&st, &Jc1, HOUR);
    let mut out = RunList::default();
    cs1.schedule(&v, &mut out).unwrap();
    assert_eq!(out.jobs, vec![(b, RunMode::RoundRobin)]);

    let start = cs1.explain(&v, &out, b).unwrap().expect("a reason");
    assert!(start.text.starts_with("highest debt"), "{}", start.text);
    assert_eq!(num(&start, "debt_s"), 1800.0);
    assert_eq!(text(&start, "project"), "P1");

    let preempt = cs1.explain(&v, &out, a).unwrap().expect("a reason");
    assert!(
        preempt.text.contains("below those chosen"),
        "{}",
        preempt.text
    );
    assert_eq!(num(&preempt, "debt_s"), -1800.0);
    assert_eq!(num(&preempt, "lowest_chosen_debt_s"), 1800.0);

    let ranking = cs1.ranking(&v).unwrap().expect("a ranking");
    assert_eq!(ranking.values, vec![-1800.0, 1800.0]);
}

#[test]
fn a_cs2_edf_start_finishes_after_its_deadline_and_preempts_for_deadline_trouble() {
    // One CPU, equal shares; P0's 1-hour job runs, P1's 1-hour job is due
    // in 1.5 h. The round-robin simulation runs both at rate 1/2: P1's job
    // ends at 2 h, after its deadline. It runs EDF; P0's job, inside its
    // time slice, gives up its CPU because P1 is in deadline trouble.
    let mut st = state(&scenario(1, &[1.0, 1.0], 0.0, 0.0));
    set_now(&mut st, 0.0);
    let a = add_job(&mut st, JobSpec::queued(0, 3.6e12, 10.0 * DAY).running(0.0));
    let b = add_job(&mut st, JobSpec::queued(1, 3.6e12, 1.5 * HOUR));
    let v = View::new(&st, &Jc1, 0.0);
    let mut cs2 = Cs2::default();
    let mut out = RunList::default();
    cs2.schedule(&v, &mut out).unwrap();
    assert_eq!(out.jobs, vec![(b, RunMode::Deadline)]);

    let start = cs2.explain(&v, &out, b).unwrap().expect("a reason");
    assert_eq!(text(&start, "mode"), "deadline");
    assert_eq!(num(&start, "finish_s"), 2.0 * HOUR);
    assert_eq!(num(&start, "deadline_s"), 1.5 * HOUR);
    assert!(num(&start, "finish_s") > num(&start, "deadline_s"));
    assert_eq!(
        start.text,
        "EDF: the round-robin simulation finishes job 1 at 0d 02:00:00, after its deadline 0d 01:30:00"
    );

    let preempt = cs2.explain(&v, &out, a).unwrap().expect("a reason");
    assert_eq!(num(&preempt, "preempted_by"), b as f64);
    assert_eq!(preempt.get("deadline_trouble"), Some(&Datum::Flag(true)));
    assert!(preempt.text.contains("deadline miss"), "{}", preempt.text);
}

#[test]
fn a_wf2_request_names_the_shortfall_it_asks_for_and_why_not_the_others() {
    // Two CPUs, a 6-hour buffer, no jobs: the CPU shortfall is 12 h. P1 is
    // backed off for a day, so P0, alone among contactable projects, is
    // asked for all of it.
    let mut st = state(&scenario(2, &[1.0, 1.0], 0.125, 0.125));
    st.projects[1].rpc.min_rpc_time = DAY;
    let v = View::new(&st, &Jc1, 0.0);
    let wf2 = Wf2::default();
    let req = wf2.request(&v).unwrap().expect("work is needed");
    assert_eq!(req.project, 0);
    let r = wf2.explain_request(&v, &req).unwrap().expect("a reason");
    assert_eq!(num(&r, "shortfall_s"), 12.0 * HOUR);
    assert_eq!(num(&r, "req_seconds"), req.work_req_seconds);
    assert_eq!(num(&r, "shortfall_s"), req.work_req_seconds);
    assert_eq!(text(&r, "urgency"), "need immediately");
    assert!(r.text.starts_with("CPU shortfall 12 h"), "{}", r.text);
    assert!(
        r.text.contains("P0 has the largest long-term debt"),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("P1 backed off until 1d 00:00:00"),
        "{}",
        r.text
    );
}

fn ws2_verdict(cand_seconds: f64, cand_deadline: f64) -> (Verdict, Reason) {
    // One CPU; the host has a 5000 s job due at 10000 s.
    let st = state(&scenario(1, &[1.0], 0.0, 0.0));
    let workload = [ReportedJob {
        project: 0,
        rsc: 0,
        cpus: 1.0,
        gpu_count: 0.0,
        deadline: 10_000.0,
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
        explaining: true,
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
    let mut ws2 = Ws2::default();
    let verdict = ws2.consider(&req, &[], &cand).unwrap();
    let reason = ws2
        .explain_verdict(&req, &[], &cand, verdict)
        .unwrap()
        .expect("a reason");
    (verdict, reason)
}

#[test]
fn ws2_explains_its_edf_check_by_finish_times_and_deadlines() {
    // A 4000 s job due at 20000 s runs after the host's job: it ends at 9000 s.
    let (verdict, r) = ws2_verdict(4000.0, 20_000.0);
    assert_eq!(verdict, Verdict::Send);
    assert_eq!(num(&r, "finish_s"), 9000.0);
    assert!(num(&r, "finish_s") <= num(&r, "deadline_s"));
    assert!(r
        .text
        .starts_with("sent: EDF with the job finishes it at 0d 02:30:00, before its deadline"));
    // A job that cannot meet its own deadline: it would end at 6000 s, due at 5000 s.
    let (verdict, r) = ws2_verdict(6000.0, 5000.0);
    assert_eq!(verdict, Verdict::Stop);
    assert_eq!(text(&r, "check"), "candidate late");
    assert_eq!(num(&r, "finish_s"), 6000.0);
    assert!(num(&r, "finish_s") > num(&r, "deadline_s"));
    assert!(r.text.starts_with("refused:"), "{}", r.text);
    // A 6000 s job due at 9000 s runs first and pushes the host's job to
    // 11000 s, past its deadline of 10000 s.
    let (verdict, r) = ws2_verdict(6000.0, 9000.0);
    assert_eq!(verdict, Verdict::Stop);
    assert_eq!(text(&r, "check"), "other job made late");
    assert_eq!(num(&r, "finish_s"), 11_000.0);
    assert_eq!(num(&r, "finish_without_s"), 5000.0);
    assert_eq!(num(&r, "deadline_s"), 10_000.0);
}

fn scenario_file(name: &str, days: u32) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for l in &mut lines {
        if l.starts_with("duration_days") {
            *l = format!("duration_days = {days}");
        }
    }
    Scenario::from_toml_str(&lines.join("\n"), &path).unwrap()
}

/// Runs `spec` on `scn` explained and not: the decisions must be the same.
fn explained(scn: &Scenario, spec: &str) -> vcsim_framework::explain::Explanation {
    let reg = Registry::builtins().unwrap();
    let spec = PolicySpec::parse(spec).unwrap();
    let plain = run_spec(scn, &reg, &spec, SimOptions::default()).unwrap();
    let opts = SimOptions {
        explain: true,
        ..Default::default()
    };
    let out = run_spec(scn, &reg, &spec, opts).unwrap();
    assert_eq!(
        format!("{:?}", plain.report),
        format!("{:?}", out.report),
        "explaining changed the run"
    );
    out.explanation.expect("an explanation")
}

fn policy_records(
    ex: &vcsim_framework::explain::Explanation,
    f: Family,
) -> Vec<&vcsim_framework::explain::Record> {
    ex.records
        .iter()
        .filter(|r| r.source == Source::Policy(f))
        .collect()
}

#[test]
fn every_decision_of_the_papers_policies_has_a_reason() {
    let scn = scenario_file("disk-tight.toml", 3);
    let ex = explained(&scn, "CS2_WF2_WS2_JC2");
    for f in [Family::Cpu, Family::Fetch, Family::Send] {
        let recs = policy_records(&ex, f);
        assert!(!recs.is_empty(), "no {f} decisions");
        for r in recs {
            assert!(!r.reason.text.is_empty(), "{r}");
        }
    }
    // The debt pass names the short-term debt of the job's project.
    let debt_starts = ex
        .records
        .iter()
        .filter(|r| r.decision.starts_with("start job") && r.reason.get("mode").is_some())
        .filter(|r| text(&r.reason, "mode") == "round-robin")
        .count();
    assert!(debt_starts > 0);
    assert!(ex
        .rankings
        .iter()
        .all(|(_, r)| r.name == "short-term debt (s)"));
    // Every WF2 request is the larger of its project's own shortfall and
    // its share of the CPU shortfall: never less than its own shortfall.
    let mut requests = 0;
    for r in policy_records(&ex, Family::Fetch) {
        if r.reason.get("project_shortfall_s").is_some() {
            requests += 1;
            let own = num(&r.reason, "project_shortfall_s");
            let asked = num(&r.reason, "req_seconds");
            assert!(asked + 1e-6 >= own, "{r}");
        }
    }
    assert!(requests > 0);
}

#[test]
fn todays_client_explains_its_edf_priority_and_fetch() {
    let scn = scenario_file("today-four-projects.toml", 3);
    let ex = explained(&scn, "cpu=cs3,fetch=wf3,send=ws3,estimate=jc3");
    let cpu = policy_records(&ex, Family::Cpu);
    assert!(cpu.iter().all(|r| !r.reason.text.is_empty()));
    // A priority start names the REC priority it was chosen with.
    assert!(cpu
        .iter()
        .any(|r| r.reason.text.contains("highest REC priority")
            && r.reason.get("priority").is_some()));
    let fetch = policy_records(&ex, Family::Fetch);
    assert!(!fetch.is_empty());
    for r in fetch {
        if r.reason.text.contains("saturated for") {
            // Work is fetched only below the minimum buffer.
            assert!(
                num(&r.reason, "saturated_s") < num(&r.reason, "min_buffer_s"),
                "{r}"
            );
        }
    }
    assert!(policy_records(&ex, Family::Send)
        .iter()
        .all(|r| !r.reason.text.is_empty()));
}

#[test]
fn the_gpu_fetch_names_the_step_and_resource_that_chose() {
    let scn = scenario_file("gpu-seed-example.toml", 2);
    let ex = explained(&scn, "cpu=cs2,fetch=gpu,send=gpu,estimate=jc2");
    let fetch = policy_records(&ex, Family::Fetch);
    assert!(!fetch.is_empty());
    for r in &fetch {
        if r.reason.get("rsc").is_some() {
            let rsc = text(&r.reason, "rsc");
            // Chosen for idle instances or for a shortfall of that resource.
            let idle = r.reason.get("idle") == Some(&Datum::Flag(true));
            if idle {
                assert!(num(&r.reason, "nidle") > 0.0, "{r}");
            } else {
                assert!(num(&r.reason, "shortfall_s") > 0.0, "{r}");
            }
            assert!(r.reason.text.contains(&rsc), "{r}");
        }
    }
    assert!(policy_records(&ex, Family::Send)
        .iter()
        .all(|r| !r.reason.text.is_empty()));
}

#[test]
fn cs1_and_wf1_runs_explain_every_decision() {
    let scn = scenario_file("two-deadlines.toml", 3);
    for spec in [
        "CS1_WF1_WS1_JC1",
        "cpu=cs1,fetch=wf1-v4,send=ws3,estimate=jc1",
    ] {
        let ex = explained(&scn, spec);
        for f in [Family::Cpu, Family::Fetch, Family::Send] {
            let recs = policy_records(&ex, f);
            assert!(!recs.is_empty(), "{spec}: no {f} decisions");
            assert!(recs.iter().all(|r| !r.reason.text.is_empty()), "{spec}");
        }
        // A CS1 start's debt is the greatest of the ranking at its time.
        for r in policy_records(&ex, Family::Cpu) {
            if r.decision.starts_with("start")
                && r.reason.get("instances_before") == Some(&Datum::Number(0.0))
            {
                let (_, ranking) = ex
                    .rankings
                    .iter()
                    .rev()
                    .find(|(t, _)| *t <= r.time)
                    .expect("a ranking");
                let p = r.project.unwrap();
                assert_eq!(num(&r.reason, "debt_s"), ranking.values[p], "{r}");
            }
        }
    }
}

#[test]
fn the_share_disk_manager_names_the_offender() {
    let scn = scenario_file("disk-tight.toml", 5);
    let ex = explained(&scn, "CS2_WF2_WS2_JC2,disk=share");
    let disk = policy_records(&ex, Family::Disk);
    for r in &disk {
        assert!(!r.reason.text.is_empty(), "{r}");
        if r.reason.get("offender").is_some() {
            assert!(num(&r.reason, "excess_bytes") > 0.0, "{r}");
            assert!(r.reason.text.contains("is an offender"), "{r}");
        }
    }
}

#[test]
fn a_fetch_between_schedulings_reads_the_debt_of_its_own_time() {
    // One CPU, shares 1 : 3, 2-hour jobs. At 2:00 the CPU scheduler starts
    // B's job, B's long-term debt then +30 min. B computes alone until the
    // fetch at 2:43: 2007's client charges those 43 minutes before it
    // decides (`adjust_debts` opens `compute_work_requests`), so B's debt
    // is 1800 + 3/4 x 2580 - 2580 = 1155 s, not the 1800 s of 2:00.
    let toml = "name = \"ltd-now\"\nseed = 1\nduration_days = 0.125\n\
        [host]\nncpus = 1\ncpu_flops = 1e9\n\
        [client]\nwork_buf_min_days = 0.1\nwork_buf_additional_days = 0.25\n\
        [[project]]\nname = \"A\"\nresource_share = 100\nlatency_bound_days = 9\n\
        [[project.app]]\nname = \"main\"\nflops_estimate = 7.2e12\nflops_mean = 7.2e12\n\
        [[project]]\nname = \"B\"\nresource_share = 300\nlatency_bound_days = 9\n\
        [[project.app]]\nname = \"main\"\nflops_estimate = 7.2e12\nflops_mean = 7.2e12\n";
    let scn = Scenario::from_toml_str(toml, Path::new("ltd-now.toml")).unwrap();
    let ex = explained(&scn, "CS2_WF2_WS2_JC2");
    let fetch = policy_records(&ex, Family::Fetch)
        .into_iter()
        .find(|r| r.time == 2.0 * HOUR + 43.0 * 60.0)
        .expect("a fetch at 2:43");
    assert_eq!(text(&fetch.reason, "project"), "B");
    let ltd = num(&fetch.reason, "ltd_s");
    assert!((ltd - 1155.0).abs() < 1e-6, "B's LTD at 2:43: {ltd} s");
}
