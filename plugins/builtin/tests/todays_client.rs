//! Today's client (cs3, wf3, ws3, jc3), worked by hand: REC after a known
//! history, the priority bump per job, a fetch decision with hysteresis, the
//! emulator server's deadline check.

use vcsim_blocks::list_sim::{ListSim, ProjectOrder};
use vcsim_blocks::rec::RecPriority;
use vcsim_builtin::jc::Jc3;
use vcsim_builtin::wf3::Wf3;
use vcsim_builtin::ws3::Ws3;
/// Today's estimator, before any job finished.
static JC3: Jc3 = Jc3 {
    server_corrects: true,
    correction: Vec::new(),
};

use std::path::Path;
use vcsim_framework::testing::{add_job, set_now, set_rec, state, JobSpec};
use vcsim_framework::{
    run_spec, Candidate, PolicySpec, Registry, RscRequest, RunOutput, Scenario, ServerRequest,
    SimOptions, Verdict, View, WorkFetcher, WorkRequest, WorkSender, CPU,
};

/// Runs `CS3_WF3_WS3_JC3` on a scenario given as TOML text.
fn run_today(text: &str, opts: SimOptions) -> RunOutput {
    vcsim_builtin::link();
    let scn = Scenario::from_toml_str(text, Path::new("test.toml")).unwrap();
    let reg = Registry::builtins().unwrap();
    let spec = PolicySpec::parse("CS3_WF3_WS3_JC3").unwrap();
    run_spec(&scn, &reg, &spec, opts).unwrap()
}

/// One CPU of 1 GFLOPS; projects A and B with equal shares and 1-hour jobs
/// due in a day; BOINC's buffer of 0.1 days plus 0.25.
const TWO: &str = r#"
name = "two"
duration_days = 10
[host]
ncpus = 1
cpu_flops = 1e9
[client]
work_buf_min_days = 0.1
work_buf_additional_days = 0.25
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 1
[[project.app]]
name = "a"
flops_estimate = 3.6e12
flops_mean = 3.6e12
[[project]]
name = "B"
resource_share = 100
latency_bound_days = 1
[[project.app]]
name = "b"
flops_estimate = 3.6e12
flops_mean = 3.6e12
"#;

#[test]
fn rec_after_a_day_of_one_gflops_is_200_times_one_minus_two_to_the_minus_a_tenth() {
    // A computes on the 1-GFLOPS CPU for a day: 200 credits. With a 10-day
    // half-life, REC (credits a day) = 200 x (1 - 2^(-1/10)) = 13.39.
    let mut st = state(TWO);
    add_job(
        &mut st,
        JobSpec::queued(0, 1e15, 86400.0 * 9.0).running(0.0),
    );
    let v = View::new(&st, &JC3, 86400.0);
    let want = 200.0 * (1.0 - 2f64.powf(-0.1));
    assert!((v.rec(0) - want).abs() < 1e-9, "{} vs {want}", v.rec(0));
    assert!((want - 13.39).abs() < 0.01);
    // B did not compute: no credit.
    assert_eq!(v.rec(1), 0.0);
    // A day later with nothing running, A's REC has decayed by 2^(-1/10).
    let mut st = state(TWO);
    set_rec(&mut st, 0, 100.0);
    let v = View::new(&st, &JC3, 86400.0);
    assert!((v.rec(0) - 100.0 * 2f64.powf(-0.1)).abs() < 1e-9);
}

#[test]
fn each_job_chosen_raises_its_projects_rec_by_a_24th_of_the_sum() {
    // REC: A 100, B 50; sum 150; shares 1/2 each. Priority = -(REC/sum)/share:
    // A -4/3, B -2/3 (B is owed).
    let mut st = state(TWO);
    set_rec(&mut st, 0, 100.0);
    set_rec(&mut st, 1, 50.0);
    add_job(&mut st, JobSpec::queued(0, 3.6e12, 86400.0));
    let b = add_job(&mut st, JobSpec::queued(1, 3.6e12, 86400.0));
    let v = View::new(&st, &JC3, 0.0);
    let mut prio = RecPriority::default();
    prio.init(&v, |_| true);
    assert!((prio.prio[0] + 4.0 / 3.0).abs() < 1e-12);
    assert!((prio.prio[1] + 2.0 / 3.0).abs() < 1e-12);
    // Choosing B's 1-CPU job (the whole host's peak FLOPS) adds 150 / 24 =
    // 6.25 to B's temporary REC: 56.25 of 150, priority -0.75.
    prio.bump(&v, v.job(b).unwrap());
    assert!((prio.rec_temp[1] - 56.25).abs() < 1e-12);
    assert!((prio.prio[1] + 0.75).abs() < 1e-12);
    // Eight more picks and B has passed A: projects interleave.
    for _ in 0..8 {
        prio.bump(&v, v.job(b).unwrap());
    }
    assert!(prio.prio[1] < prio.prio[0]);
}

#[test]
fn work_is_fetched_only_once_the_cpu_is_saturated_for_less_than_the_minimum_buffer() {
    // The minimum buffer is 0.1 days = 8,640 s, the whole one 30,240 s.
    // A runs a job with 3 hours left: the CPU is saturated for 10,800 s,
    // more than the minimum: no fetch, although the buffer is not full.
    let mut st = state(TWO);
    set_rec(&mut st, 0, 10.0);
    add_job(
        &mut st,
        JobSpec::queued(0, 4.32e13, 86400.0 * 3.0).running(1.0 - 10800.0 / 43200.0),
    );
    let wf = Wf3::default();
    let v = View::new(&st, &JC3, 0.0);
    let mut sim = ListSim::default();
    sim.simulate(&v, ProjectOrder::AsBuilt).unwrap();
    assert!((sim.saturated_time[CPU] - 10800.0).abs() < 1e-6);
    assert_eq!(wf.request(&v).unwrap(), None);
    // Two hours later 1 hour is left: 3,600 s < 8,640 s, so the client
    // fetches, and asks for the whole shortfall to the full buffer:
    // 30,240 - 3,600 = 26,640 s. B (REC 0, priority 0) is asked: it is owed
    // more than A (REC 10 of 10: priority -2).
    let v = v.at(7200.0);
    let req = wf.request(&v).unwrap().expect("a request");
    assert_eq!(req.project, 1);
    assert!((req.rsc[CPU].req_seconds - 26640.0).abs() < 1e-6, "{req:?}");
    // And for its share of the instances less what its jobs hold: 0.5 - 0.
    assert_eq!(req.rsc[CPU].req_ninstances, 0.5);
    assert_eq!(req.work_req_seconds, req.rsc[CPU].req_seconds);
    assert_eq!(req.rsc[CPU].estimated_delay, 0.0);
}

#[test]
fn the_emulators_server_sends_while_the_reply_alone_meets_the_latency_bound() {
    // A request for 10 hours on 1 CPU; 4-hour jobs due in 9 hours; no delay
    // told. The first job: 0 + 4 <= 9; the second: 4 + 4 <= 9; the third
    // would wait 8 hours: 8 + 4 > 9, refused.
    let st = state(TWO);
    let request = ten_hours_of_cpu();
    let req = server_request(&st, &request, 9.0 * 3600.0);
    let cand = Candidate {
        app: 0,
        rsc: CPU,
        cpus: 1.0,
        gpu_count: 0.0,
        flops_estimate: 1.44e13,
        est_seconds: 4.0 * 3600.0,
        deadline: 9.0 * 3600.0,
    };
    let mut ws = Ws3::default();
    let mut sent = Vec::new();
    assert_eq!(ws.consider(&req, &sent, &cand).unwrap(), Verdict::Send);
    sent.push(cand.clone());
    assert_eq!(ws.consider(&req, &sent, &cand).unwrap(), Verdict::Send);
    sent.push(cand.clone());
    assert_eq!(ws.consider(&req, &sent, &cand).unwrap(), Verdict::Skip);
    // A delay told by the client counts too: with 6 hours of it, the first
    // job already fails (6 + 4 > 9).
    let mut request2 = request.clone();
    request2.rsc[CPU].estimated_delay = 6.0 * 3600.0;
    let req2 = ServerRequest {
        request: &request2,
        now: 1.0,
        ..req.clone()
    };
    let cand2 = Candidate {
        deadline: 1.0 + 9.0 * 3600.0,
        ..cand.clone()
    };
    assert_eq!(ws.consider(&req2, &[], &cand2).unwrap(), Verdict::Skip);
}

#[test]
fn a_job_that_overruns_its_estimate_switches_to_the_dynamic_estimate() {
    // Static estimate 1 hour; the job really takes 2. Half an hour in (25%
    // done), today's client says 0.75 x 3,600 = 2,700 s are left; after 1.5
    // hours (75% done) it has overrun: 5,400 x 0.25 / 0.75 = 1,800 s.
    let mut st = state(TWO);
    let mut s = JobSpec::queued(0, 7.2e12, 86400.0).running(0.0);
    s.flops_estimate = 3.6e12;
    let id = add_job(&mut st, s);
    set_now(&mut st, 0.0);
    let v = View::new(&st, &JC3, 0.0);
    let j = v.job(id).unwrap();
    let at = |t: f64| v.at(t).remaining_seconds(j).unwrap();
    assert!((at(1800.0) - 2700.0).abs() < 1e-6);
    assert!((at(5400.0) - 1800.0).abs() < 1e-6);
}

/// Today's client scales a GPU job by the fraction of time GPU computing is
/// allowed (`overall_gpu_frac`), a CPU job by the CPU's: with GPU
/// computing allowed half the time, a GPU job of an hour keeps the GPU
/// saturated for two, and the CPU's job of an hour for one. (Both were
/// scaled by the CPU's fraction: the GPU queue looked half as long.)
#[test]
fn a_gpu_job_runs_at_the_learned_gpu_fraction_in_the_simulation() {
    let text = "name = \"g\"\nduration_days = 10\n\
                [host]\nncpus = 1\ncpu_flops = 1e9\n\
                [[host.gpu]]\nkind = \"nvidia\"\ncount = 1\nflops = 1e9\n\
                [client]\nlearn_availability = true\n\
                [[project]]\nname = \"A\"\nresource_share = 100\nlatency_bound_days = 5\n\
                [[project.app]]\nname = \"c\"\nflops_estimate = 3.6e12\nflops_mean = 3.6e12\n\
                [[project.app]]\nname = \"g\"\ncpus = 0\ngpu = { kind = \"nvidia\", count = 1 }\n\
                flops_estimate = 3.6e12\nflops_mean = 3.6e12\n";
    let mut st = state(text);
    st.observed_gpu_fraction = 0.5;
    let mut cpu_job = JobSpec::queued(0, 3.6e12, 86400.0 * 5.0);
    cpu_job.app = 0;
    let mut gpu_job = JobSpec::queued(0, 3.6e12, 86400.0 * 5.0);
    gpu_job.app = 1;
    add_job(&mut st, cpu_job);
    add_job(&mut st, gpu_job);
    let v = View::new(&st, &JC3, 0.0);
    assert_eq!((v.on_fraction_of(CPU), v.on_fraction_of(1)), (1.0, 0.5));
    let mut sim = ListSim::default();
    sim.simulate(&v, ProjectOrder::AsBuilt).unwrap();
    assert!(
        (sim.saturated_time[CPU] - 3600.0).abs() < 1e-6,
        "{:?}",
        sim.saturated_time
    );
    assert!(
        (sim.saturated_time[1] - 7200.0).abs() < 1e-6,
        "{:?}",
        sim.saturated_time
    );
}

/// One CPU of 1 GFLOPS and one GPU of 10. A's GPU job holds half a CPU, B's
/// job a whole one: 1.5 CPUs in use, so B's job computes at half speed.
const OVER_COMMITTED: &str = r#"
name = "gh"
seed = 1
duration_days = 0.1
[host]
ncpus = 1
cpu_flops = 1e9
[[host.gpu]]
kind = "nvidia"
count = 1
flops = 1e10
[client]
work_buf_min_days = 0.001
work_buf_additional_days = 0
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 5
[[project.app]]
name = "g"
cpus = 0.5
gpu = { kind = "nvidia", count = 1 }
flops_estimate = 3.6e13
flops_mean = 3.6e13
[[project.job]]
app = "g"
deadline_days = 3
[[project]]
name = "B"
resource_share = 100
latency_bound_days = 5
[[project.app]]
name = "b"
flops_estimate = 3.6e12
flops_mean = 3.6e12
[[project.job]]
app = "b"
deadline_days = 3
"#;

#[test]
fn rec_credits_the_cpus_a_job_holds_even_while_over_commitment_slows_it() {
    // A's GPU job earns the GPU's 10 GFLOPS plus its half CPU's 0.5; B's
    // job holds a whole CPU, slowed to half by the over-commitment, and
    // earns 1 GFLOPS, not 0.5 (BOINC's `accumulate_inst_sec` counts
    // `avg_ncpus`; the slowing is the emulator's speed, not REC's). From
    // nothing, a steady 1 GFLOPS for t seconds gives REC 200 (1 - 2^(-t/h)).
    let out = run_today(
        OVER_COMMITTED,
        SimOptions {
            explain: true,
            snapshot_at: Some((usize::MAX, 1800.0)),
            ..SimOptions::default()
        },
    );
    let st = out.explanation.unwrap().snapshot.expect("a snapshot");
    let v = View::new(&st, &JC3, 1800.0);
    let one_gflops = 200.0 * (1.0 - 2f64.powf(-1800.0 / (10.0 * 86400.0)));
    assert!(
        (v.rec(1) / one_gflops - 1.0).abs() < 1e-9,
        "B: {}",
        v.rec(1)
    );
    assert!(
        (v.rec(0) / one_gflops - 10.5).abs() < 1e-9,
        "A: {}",
        v.rec(0)
    );
    // So the priorities (REC fraction over share fraction) are -2/11.5 for
    // B and -21/11.5 for A: -0.1739 and -1.8261.
    let mut prio = RecPriority::default();
    prio.init(&v, |_| true);
    assert!((prio.prio[1] + 2.0 / 11.5).abs() < 1e-9, "{:?}", prio.prio);
    assert!((prio.prio[0] + 21.0 / 11.5).abs() < 1e-9, "{:?}", prio.prio);
}

/// One CPU; A has 1-hour jobs due in 5 days (`c`) and 1-hour jobs due in
/// 28.8 minutes (`short`), which the server's check always refuses.
const REFUSED_APP: &str = r#"
name = "ws"
seed = 1
duration_days = 0.01
[host]
ncpus = 1
cpu_flops = 1e9
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 5
[[project.app]]
name = "c"
flops_estimate = 3.6e12
flops_mean = 3.6e12
[[project.app]]
name = "short"
latency_bound_days = 0.02
flops_estimate = 3.6e12
flops_mean = 3.6e12
"#;

#[test]
fn a_refused_app_is_not_drawn_again_and_the_reply_is_filled_with_the_others() {
    // The first request asks for 8.4 hours (the whole buffer, 0.1 + 0.25
    // days). Once `short` is refused, the server draws only `c`, as the
    // emulator's `dont_use` does, until the request is covered: 9 one-hour
    // jobs (over-filled by one), whatever the draws.
    for seed in 1..=8 {
        let out = run_today(
            REFUSED_APP,
            SimOptions {
                seed: Some(seed),
                explain: true,
                stop_after: Some(0.0),
                ..SimOptions::default()
            },
        );
        let ex = out.explanation.unwrap();
        let first = ex
            .records
            .iter()
            .find(|r| r.decision.starts_with("A replied with"))
            .expect("a reply");
        assert_eq!(first.decision, "A replied with 9 jobs", "seed {seed}");
    }
}

#[test]
fn a_refusal_in_one_reply_does_not_carry_into_the_next_reply_of_the_same_step() {
    // Reply 1 refuses a 4-hour job of app 1 due in 3 hours. Reply 2, at the
    // same time to the same project, offers app 1 with a deadline it meets:
    // it is sent (the emulator clears `dont_use` at each RPC).
    let st = state(TWO);
    let request = ten_hours_of_cpu();
    let req = server_request(&st, &request, 86400.0);
    let late = Candidate {
        app: 1,
        rsc: CPU,
        cpus: 1.0,
        gpu_count: 0.0,
        flops_estimate: 1.44e13,
        est_seconds: 4.0 * 3600.0,
        deadline: 3.0 * 3600.0,
    };
    let mut ws = Ws3::default();
    assert_eq!(ws.consider(&req, &[], &late).unwrap(), Verdict::Skip);
    let on_time = Candidate {
        deadline: 86400.0,
        ..late.clone()
    };
    assert_eq!(ws.consider(&req, &[], &on_time).unwrap(), Verdict::Send);
}

/// One CPU and one GPU; A may run one job at a time (`max_concurrent = 1`,
/// BOINC's `project_max_concurrent`) and holds a 1-hour GPU job (0.01 CPU)
/// and a 1-hour CPU job. Buffer 0.01 + 0.01 days (1,728 s).
const PROJECT_CAP: &str = r#"
name = "pmc"
duration_days = 0.3
[host]
ncpus = 1
cpu_flops = 1e9
[[host.gpu]]
kind = "nvidia"
count = 1
flops = 1e10
[client]
work_buf_min_days = 0.01
work_buf_additional_days = 0.01
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 5
max_concurrent = 1
[[project.app]]
name = "g"
cpus = 0.01
gpu = { kind = "nvidia", count = 1 }
flops_estimate = 3.6e13
flops_mean = 3.6e13
[[project.app]]
name = "c"
flops_estimate = 3.6e12
flops_mean = 3.6e12
"#;

#[test]
fn a_project_cap_reached_by_its_gpu_job_keeps_its_cpu_job_out_of_the_simulation() {
    // GPUs are picked first: A's GPU job takes A's one slot. BOINC's code
    // (as built) tests the cap only after adding a job, so it adds A's CPU
    // job too, which the scheduler will not run: the CPU looks full. The
    // intended rule keeps it out: the CPU is idle but for the GPU job's
    // 0.01 for the first hour (0.99 instances idle now, 0.99 x 1,728 s of
    // shortfall in the buffer); A's CPU job runs in the second hour, once
    // the GPU job is done, so the CPU's last busy interval ends at 7,200 s.
    let mut st = state(PROJECT_CAP);
    let mut gpu_job = JobSpec::queued(0, 3.6e13, 3.0 * 86400.0);
    gpu_job.app = 0;
    let mut cpu_job = JobSpec::queued(0, 3.6e12, 3.0 * 86400.0);
    cpu_job.app = 1;
    add_job(&mut st, cpu_job);
    add_job(&mut st, gpu_job);
    let v = View::new(&st, &JC3, 0.0);
    let mut sim = ListSim::default();
    sim.simulate(&v, ProjectOrder::AsBuilt).unwrap();
    assert!(sim.nidle_now[CPU] < 1e-9, "{:?}", sim.nidle_now);
    sim.simulate(&v, ProjectOrder::Intended).unwrap();
    assert!(
        (sim.nidle_now[CPU] - 0.99).abs() < 1e-9,
        "{:?}",
        sim.nidle_now
    );
    assert!(
        (sim.shortfall[CPU] - 0.99 * 1728.0).abs() < 1e-6,
        "{:?}",
        sim.shortfall
    );
    assert!((sim.saturated_time[CPU] - 7200.0).abs() < 1e-6);
    // A's jobs meet its cap on the CPU at every pick: the first keeps its
    // CPU job out, the second (at 3,600 s) runs it, alone.
    assert_eq!(sim.last_mc_limit_reltime(0, CPU), 3600.0);
}

/// A request for 10 hours of CPU work from project 0.
fn ten_hours_of_cpu() -> WorkRequest {
    WorkRequest {
        project: 0,
        work_req_seconds: 36000.0,
        rsc: vec![RscRequest {
            req_seconds: 36000.0,
            req_ninstances: 0.0,
            estimated_delay: 0.0,
        }],
    }
}

/// What the server of project 0 (`A`) sees of `request` at time 0.
fn server_request<'a>(
    st: &'a vcsim_framework::ClientState,
    request: &'a WorkRequest,
    latency_bound: f64,
) -> ServerRequest<'a> {
    ServerRequest {
        now: 0.0,
        project: 0,
        project_name: "A",
        latency_bound,
        host: &st.host,
        request,
        dcf: 1.0,
        work_buf_min: 8640.0,
        on_fraction: 1.0,
        workload: &[],
        free_bytes: [1e12; 3],
        explaining: false,
    }
}
