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

use vcsim_framework::testing::{add_job, set_now, set_rec, state, JobSpec};
use vcsim_framework::{
    Candidate, RscRequest, ServerRequest, Verdict, View, WorkFetcher, WorkRequest, WorkSender, CPU,
};

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
    let request = WorkRequest {
        project: 0,
        work_req_seconds: 36000.0,
        rsc: vec![RscRequest {
            req_seconds: 36000.0,
            req_ninstances: 0.0,
            estimated_delay: 0.0,
        }],
    };
    let req = ServerRequest {
        now: 0.0,
        project: 0,
        project_name: "A",
        latency_bound: 9.0 * 3600.0,
        host: &st.host,
        request: &request,
        dcf: 1.0,
        work_buf_min: 8640.0,
        on_fraction: 1.0,
        workload: &[],
        free_bytes: [1e12; 3],
        explaining: false,
    };
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
