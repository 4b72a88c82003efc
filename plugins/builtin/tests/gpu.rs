//! The GPU-aware work fetch of `work-fetch-and-gpus`: the seed's example
//! and two variants, worked by hand, and the parts of the design one by one.
//!
//! Tolerance: jobs are one hour long and the runs last 60 days (1440
//! GPU-hours), so the fetch can be at most a job or two off the target at any
//! time; with the first hours' transient (before the flags D(P, R) are set)
//! that is well under 2 points of GPU usage. We allow 0.02.

use std::path::Path;
use vcsim_builtin::gpu::{GpuFetch, GpuSend, RSC_BACKOFF_MAX, RSC_BACKOFF_MIN};
use vcsim_builtin::jc::Jc1;
use vcsim_framework::testing::state;
use vcsim_framework::{
    run_spec, Candidate, PolicySpec, Registry, RpcReply, RscRequest, RscStatus, Scenario,
    ServerRequest, SimOptions, Verdict, View, WorkFetcher, WorkRequest, WorkSender,
};

const TOL: f64 = 0.02;

/// Per project, the usage of (cpu, nvidia).
fn usage(scenario: &str, policy: &str) -> Vec<(f64, f64)> {
    vcsim_builtin::link();
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(scenario);
    let scn = Scenario::load(&p).unwrap();
    let reg = Registry::builtins().unwrap();
    let out = run_spec(
        &scn,
        &reg,
        &PolicySpec::parse(policy).unwrap(),
        SimOptions::default(),
    )
    .unwrap();
    out.report
        .projects
        .iter()
        .map(|p| {
            (
                p.usage["cpu"].as_f64().unwrap(),
                p.usage["nvidia"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= TOL
}

const GPU: &str = "cpu=cs2,fetch=gpu,send=gpu";

#[test]
fn the_seeds_example_gives_the_cpu_to_b_and_three_quarters_of_the_gpu_to_a() {
    // Equal shares of 1 CPU (speed 1) + 1 GPU (speed 2) = 3: 1.5 each.
    // A can only use the GPU: 1.5 / 2 = 75% of it. B: the CPU and 25%.
    let u = usage("gpu-seed-example.toml", GPU);
    assert!(close(u[0].0, 0.0) && close(u[1].0, 1.0), "cpu {u:?}");
    assert!(close(u[0].1, 0.75) && close(u[1].1, 0.25), "gpu {u:?}");
}

#[test]
fn a_gpu_three_times_the_cpu_goes_two_thirds_to_a() {
    // 1 + 3 = 4, 2 each: A gets 2 / 3 of the GPU; B the CPU (1) and 1/3 of the GPU (1).
    let u = usage("gpu-speed-3.toml", GPU);
    assert!(close(u[1].0, 1.0), "cpu {u:?}");
    assert!(
        close(u[0].1, 2.0 / 3.0) && close(u[1].1, 1.0 / 3.0),
        "gpu {u:?}"
    );
}

#[test]
fn shares_one_to_two_split_the_gpu_in_half() {
    // 3 units; A's third is 1 = half the GPU; B's two thirds: the CPU and the other half.
    let u = usage("gpu-unequal-shares.toml", GPU);
    assert!(close(u[1].0, 1.0), "cpu {u:?}");
    assert!(close(u[0].1, 0.5) && close(u[1].1, 0.5), "gpu {u:?}");
}

#[test]
fn the_v4_fetcher_misses_the_target_the_design_exists_for() {
    // WF2 only asks for CPU seconds, so the GPU-only project A is never asked
    // and B's GPU jobs come only as a side effect: A gets none of the GPU.
    let u = usage("gpu-seed-example.toml", "CS2_WF2_WS2_JC2");
    assert!(u[0].1 < 0.5, "A's GPU usage {u:?}");
    assert!(!close(u[0].1, 0.75));
}

fn seed_state() -> vcsim_framework::ClientState {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/gpu-seed-example.toml"),
    )
    .unwrap();
    state(&text)
}

#[test]
fn fair_shares_of_the_seeds_example() {
    let st = seed_state();
    let v = View::new(&st, &Jc1, 0.0);
    // A supplies the GPU only, B both.
    let s = GpuFetch::fair_shares(&v, &[vec![false, true], vec![true, true]]);
    assert_eq!(s[0], vec![0.0, 0.75]);
    assert_eq!(s[1], vec![1.0, 0.25]);
    // With A and a CPU-only project, neither can take the other's resource:
    // each keeps its own, and nobody earns on a resource it cannot use.
    let s = GpuFetch::fair_shares(&v, &[vec![false, true], vec![true, false]]);
    assert_eq!(s, vec![vec![0.0, 1.0], vec![1.0, 0.0]]);
}

#[test]
fn an_idle_gpu_is_asked_for_first_with_its_instances() {
    // Nothing on the host: the GPU is idle, so the request names one GPU
    // instance and the GPU's shortfall, and no CPU seconds.
    let st = seed_state();
    let v = View::new(&st, &Jc1, 0.0);
    let mut f = GpuFetch::default();
    f.account(&v).unwrap();
    let r = f.request(&v).unwrap().expect("a request");
    assert_eq!(r.rsc[1].req_ninstances, 1.0);
    assert!(r.rsc[1].req_seconds > 0.0);
    assert_eq!(
        r.rsc[0].req_seconds, 0.0,
        "the CPU shortfall is zeroed when a GPU is idle"
    );
    assert_eq!(
        r.work_req_seconds, r.rsc[1].req_seconds,
        "the old field is the largest request"
    );
}

fn reply(project: usize, req: &WorkRequest, jobs: Vec<u32>, status: RscStatus) -> RpcReply {
    RpcReply {
        project,
        request: req.clone(),
        reached: true,
        jobs,
        rsc_status: vec![status; 2],
    }
}

#[test]
fn resource_back_off_doubles_to_a_day_and_clears_when_a_job_comes() {
    let st = seed_state();
    let v = View::new(&st, &Jc1, 0.0);
    let mut f = GpuFetch::default();
    f.account(&v).unwrap();
    let req = WorkRequest {
        project: 0,
        work_req_seconds: 10.0,
        rsc: vec![
            RscRequest::default(),
            RscRequest {
                req_seconds: 10.0,
                req_ninstances: 1.0,
                estimated_delay: 0.0,
            },
        ],
    };
    let mut intervals = vec![];
    for _ in 0..14 {
        f.on_reply(&v, &reply(0, &req, vec![0, 0], RscStatus::Unknown))
            .unwrap();
        intervals.push(f.data[0][1].backoff_interval);
    }
    assert_eq!(
        &intervals[..3],
        &[
            RSC_BACKOFF_MIN,
            2.0 * RSC_BACKOFF_MIN,
            4.0 * RSC_BACKOFF_MIN
        ]
    );
    assert_eq!(*intervals.last().unwrap(), RSC_BACKOFF_MAX);
    assert!(intervals
        .windows(2)
        .all(|w| w[1] >= w[0] && w[1] <= RSC_BACKOFF_MAX));
    assert!(
        f.backed_off(0, 1, 0.0) && !f.backed_off(0, 0, 0.0),
        "only the GPU is backed off"
    );
    assert!(
        !f.data[0][1].accrues,
        "D(P, R) is false after a request that brought nothing"
    );
    f.on_reply(&v, &reply(0, &req, vec![0, 1], RscStatus::Unknown))
        .unwrap();
    assert_eq!(f.data[0][1].backoff_until, 0.0);
    assert!(f.data[0][1].accrues);
}

#[test]
fn the_three_state_answer_keeps_or_drops_the_debt_flag() {
    let st = seed_state();
    let v = View::new(&st, &Jc1, 0.0);
    let mut f = GpuFetch::default();
    f.account(&v).unwrap();
    let req = WorkRequest {
        project: 1,
        work_req_seconds: 10.0,
        rsc: vec![
            RscRequest {
                req_seconds: 10.0,
                req_ninstances: 0.0,
                estimated_delay: 0.0,
            },
            RscRequest::default(),
        ],
    };
    f.data[1][0].accrues = true;
    f.on_reply(
        &v,
        &reply(1, &req, vec![0, 0], RscStatus::NoWorkButSupported),
    )
    .unwrap();
    assert!(f.data[1][0].accrues, "supported: keeps accruing, backs off");
    assert!(f.backed_off(1, 0, 0.0));
    f.on_reply(&v, &reply(1, &req, vec![0, 0], RscStatus::NotSupported))
        .unwrap();
    assert!(!f.data[1][0].accrues);
    assert_eq!(f.data[1][0].backoff_until, RSC_BACKOFF_MAX);
}

#[test]
fn the_server_sends_only_what_each_resource_asks_for() {
    let st = seed_state();
    let workload = [];
    let cpu_only = WorkRequest {
        project: 1,
        work_req_seconds: 7200.0,
        rsc: vec![
            RscRequest {
                req_seconds: 7200.0,
                req_ninstances: 0.0,
                estimated_delay: 0.0,
            },
            RscRequest::default(),
        ],
    };
    let req = ServerRequest {
        now: 0.0,
        project: 1,
        project_name: "B",
        latency_bound: 1e6,
        host: &st.host,
        request: &cpu_only,
        dcf: 1.0,
        work_buf_min: 0.0,
        on_fraction: 1.0,
        workload: &workload,
        free_bytes: [1e12; 3],
        explaining: false,
    };
    let cpu = Candidate {
        app: 0,
        rsc: 0,
        cpus: 1.0,
        gpu_count: 0.0,
        flops_estimate: 3.6e12,
        est_seconds: 3600.0,
        deadline: 1e6,
    };
    let gpu = Candidate {
        app: 1,
        rsc: 1,
        cpus: 0.0,
        gpu_count: 1.0,
        flops_estimate: 7.2e12,
        est_seconds: 3600.0,
        deadline: 1e6,
    };
    let mut s = GpuSend;
    // `send_only_cpu`: a GPU job is never sent, CPU jobs until 2 h are covered.
    assert_eq!(s.consider(&req, &[], &gpu).unwrap(), Verdict::Skip);
    assert_eq!(s.consider(&req, &[], &cpu).unwrap(), Verdict::Send);
    assert_eq!(
        s.consider(&req, std::slice::from_ref(&cpu), &cpu).unwrap(),
        Verdict::Send
    );
    assert_eq!(
        s.consider(&req, &[cpu.clone(), cpu.clone()], &cpu).unwrap(),
        Verdict::Stop
    );
    // Both asked: a satisfied resource is skipped while the other still needs jobs.
    let both = WorkRequest {
        project: 1,
        work_req_seconds: 3600.0,
        rsc: vec![
            RscRequest {
                req_seconds: 3600.0,
                req_ninstances: 0.0,
                estimated_delay: 0.0,
            },
            RscRequest {
                req_seconds: 0.0,
                req_ninstances: 1.0,
                estimated_delay: 0.0,
            },
        ],
    };
    let req2 = ServerRequest {
        request: &both,
        ..req.clone()
    };
    assert_eq!(
        s.consider(&req2, std::slice::from_ref(&cpu), &cpu).unwrap(),
        Verdict::Skip
    );
    assert_eq!(
        s.consider(&req2, std::slice::from_ref(&cpu), &gpu).unwrap(),
        Verdict::Send
    );
}

#[test]
fn debt_accounting_charges_each_project_its_fair_part_per_resource() {
    use vcsim_framework::testing::{add_job, JobSpec};
    // The seed's example for 1000 s: A's GPU job holds the GPU, B runs nothing.
    let mut st = seed_state();
    add_job(&mut st, JobSpec::queued(0, 7.2e12, 1e6).running(0.0));
    let mut f = GpuFetch::default();
    f.account(&View::new(&st, &Jc1, 0.0)).unwrap();
    f.data[1][0].accrues = true;
    f.data[1][1].accrues = true;
    f.account(&View::new(&st, &Jc1, 1000.0)).unwrap();
    // Fair parts: A 0.75 GPU; B the CPU and 0.25 GPU.
    assert_eq!(
        (f.data[0][1].share, f.data[1][0].share, f.data[1][1].share),
        (0.75, 1.0, 0.25)
    );
    // GPU: A earned 750 and used 1000: -250; B earned 250: +250 (mean 0).
    assert_eq!((f.data[0][1].ltd, f.data[1][1].ltd), (-250.0, 250.0));
    // CPU: only B takes part; its 1000 earned less its mean is 0.
    assert_eq!(f.data[1][0].ltd, 0.0);
    // Overall, weighted by speed (GPU twice the CPU), in CPU seconds.
    let v = View::new(&st, &Jc1, 1000.0);
    assert_eq!(
        (f.overall_ltd(&v, 0), f.overall_ltd(&v, 1)),
        (-500.0, 500.0)
    );
}
