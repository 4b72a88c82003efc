//! What scripts read of today's client (REC, its list simulation, a
//! request's `estimated_delay`, the server request's `on_fraction`), checked
//! against the Rust side on a hand-made host: 2 CPUs and a GPU; project A
//! runs a CPU job and has GPU jobs queued, B has more 1-hour CPU jobs than
//! the CPUs can finish by their deadlines.

use std::sync::Arc;
use vcsim_blocks::list_sim::{ListSim, ProjectOrder};
use vcsim_builtin::jc::Jc3;

/// Today's estimator, before any job finished.
static JC3: Jc3 = Jc3 {
    server_corrects: true,
    correction: Vec::new(),
};
use vcsim_framework::testing::{add_job, set_rec, state, JobSpec};
use vcsim_framework::{
    AnyPolicy, Candidate, ClientState, Family, RscRequest, ServerRequest, Verdict, View,
    WorkFetcher, WorkRequest, CPU,
};
use vcsim_script::Script;

const HOST: &str = r#"
name = "todays-client"
duration_days = 10
[host]
ncpus = 2
cpu_flops = 1e9
[[host.gpu]]
kind = "nvidia"
count = 1
flops = 2e9
[client]
work_buf_min_days = 0.1
work_buf_additional_days = 0.25
rec_half_life_days = 5
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 1
[[project.app]]
name = "cpu"
flops_estimate = 3.6e12
flops_mean = 3.6e12
[[project.app]]
name = "gpu"
cpus = 0.01
gpu = { kind = "nvidia", count = 1 }
flops_estimate = 7.2e12
flops_mean = 7.2e12
[[project]]
name = "B"
resource_share = 50
latency_bound_days = 1
[[project.app]]
name = "b"
flops_estimate = 3.6e12
flops_mean = 3.6e12
"#;

const GPU: usize = 1;

/// The host of the module comment: REC A 100, B 30 as of time 0.
fn host() -> ClientState {
    let mut st = state(HOST);
    set_rec(&mut st, 0, 100.0);
    set_rec(&mut st, 1, 30.0);
    add_job(&mut st, JobSpec::queued(0, 3.6e13, 86400.0).running(0.5));
    for _ in 0..3 {
        let mut g = JobSpec::queued(0, 7.2e12, 3.0 * 3600.0);
        g.app = 1;
        add_job(&mut st, g);
    }
    for _ in 0..6 {
        add_job(&mut st, JobSpec::queued(1, 3.6e12, 3.0 * 3600.0));
    }
    st
}

fn fetcher(text: &str) -> Box<dyn WorkFetcher> {
    let s = Arc::new(Script::compile("test.rhai", text).unwrap());
    match s.make(Family::Fetch).unwrap() {
        AnyPolicy::Fetch(p) => p,
        _ => unreachable!(),
    }
}

/// The value of a script expression over the view `v`, carried out as the
/// seconds of a request.
fn value(v: &View, expr: &str) -> f64 {
    let f = fetcher(&format!("fn request(v) {{ work_request(0, {expr}) }}"));
    let req = f
        .request(v)
        .unwrap_or_else(|e| panic!("{expr}: {}", e.message));
    req.expect("a request").work_req_seconds
}

#[test]
fn rec_and_its_half_life_are_the_view_s() {
    let st = host();
    // An hour on: A's REC has decayed and grown with its running job; B's
    // only decayed.
    let v = View::new(&st, &JC3, 3600.0);
    for p in 0..2 {
        let want = v.rec(p);
        assert_eq!(value(&v, &format!("v.rec({p})")), want);
        assert_eq!(value(&v, &format!("v.project({p}).rec")), want);
    }
    assert!(v.rec(0) != 100.0 && v.rec(1) < 30.0 && v.rec(1) > 0.0);
    assert_eq!(value(&v, "v.prefs.rec_half_life"), 5.0 * 86400.0);
    assert_eq!(v.prefs().rec_half_life, 5.0 * 86400.0);
    let e = fetcher("fn request(v) { work_request(0, v.rec(2)) }")
        .request(&v)
        .unwrap_err();
    assert!(
        e.message.contains("project 2 does not exist"),
        "{}",
        e.message
    );
}

#[test]
fn list_sim_is_today_s_client_s_simulation_as_built() {
    let st = host();
    let v = View::new(&st, &JC3, 0.0);
    let mut sim = ListSim::default();
    sim.simulate(&v, ProjectOrder::AsBuilt).unwrap();
    for r in [CPU, GPU] {
        for (name, want) in [
            ("shortfall", sim.shortfall[r]),
            ("saturated_time", sim.saturated_time[r]),
            ("nidle_now", sim.nidle_now[r]),
            ("busy_time", sim.busy_time[r]),
        ] {
            let got = value(&v, &format!("v.list_sim().{name}({r})"));
            assert_eq!(got, want, "{name}({r})");
        }
        for p in 0..2 {
            let got = value(
                &v,
                &format!("float(v.list_sim().deadlines_missed({p}, {r}))"),
            );
            assert_eq!(
                got,
                sim.deadlines_missed(p, r) as f64,
                "deadlines_missed({p}, {r})"
            );
        }
    }
    // The host is busy enough that the values say something.
    assert!(sim.saturated_time[CPU] > 0.0 && sim.shortfall[CPU] > 0.0);
    assert!(sim.deadlines_missed(1, CPU) > 0 && sim.busy_time[CPU] > 0.0);
    // Job by job, as the simulation's misses.
    let missed = value(
        &v,
        "{ let s = v.list_sim(); let n = 0; for j in v.jobs { if s.missed(j) { n += 1; } } float(n) }",
    );
    assert_eq!(missed, sim.misses.iter().filter(|m| **m).count() as f64);
    // A bad resource or project is an error naming it.
    for (expr, msg) in [
        ("v.list_sim().shortfall(2)", "resource 2 does not exist"),
        (
            "float(v.list_sim().deadlines_missed(5, 0))",
            "project 5 does not exist",
        ),
    ] {
        let e = fetcher(&format!("fn request(v) {{ work_request(0, {expr}) }}"))
            .request(&v)
            .unwrap_err();
        assert!(e.message.contains(msg), "{expr}: {}", e.message);
    }
}

#[test]
fn a_fetch_script_tells_the_estimated_delay_per_resource() {
    let st = host();
    let v = View::new(&st, &JC3, 0.0);
    let f = fetcher(
        "fn request(v) {
            let s = v.list_sim();
            work_request(1, 100.0).with_rsc(0, 100.0, 1.0, s.busy_time(0)).with_rsc(1, 50.0, 1.0)
        }",
    );
    let req = f.request(&v).unwrap().unwrap();
    let mut sim = ListSim::default();
    sim.simulate(&v, ProjectOrder::AsBuilt).unwrap();
    assert_eq!(req.rsc[CPU].estimated_delay, sim.busy_time[CPU]);
    assert!(req.rsc[CPU].estimated_delay > 0.0);
    // Not told: 0.
    assert_eq!(req.rsc[GPU].estimated_delay, 0.0);
    assert_eq!(req.rsc[GPU].req_seconds, 50.0);
    // Read back from the request.
    assert_eq!(
        value(
            &v,
            "work_request(0, 1.0).with_rsc(1, 5.0, 1.0, 42.0).rsc_estimated_delay(1)"
        ),
        42.0
    );
    assert_eq!(
        value(&v, "work_request(0, 1.0).rsc_estimated_delay(0)"),
        0.0
    );
    // A negative delay is refused.
    let e = fetcher("fn request(v) { work_request(0, 1.0).with_rsc(0, 5.0, 1.0, -1.0) }")
        .request(&v)
        .unwrap_err();
    assert!(e.message.contains("estimated_delay -1"), "{}", e.message);
}

#[test]
fn a_send_script_reads_the_delay_and_the_on_fraction() {
    let st = host();
    let s = Arc::new(
        Script::compile(
            "send.rhai",
            r#"fn consider(req, sent, cand) {
                if req.on_fraction == 0.75 && req.estimated_delay(1) == 42.0
                    && req.request.rsc_estimated_delay(1) == 42.0
                    && req.estimated_delay(0) == 0.0 {
                    "send"
                } else {
                    "skip"
                }
            }"#,
        )
        .unwrap(),
    );
    let mut ws = match s.make(Family::Send).unwrap() {
        AnyPolicy::Send(p) => p,
        _ => unreachable!(),
    };
    let rsc = |d: f64| RscRequest {
        req_seconds: 3600.0,
        req_ninstances: 1.0,
        estimated_delay: d,
    };
    let request = WorkRequest {
        project: 0,
        work_req_seconds: 3600.0,
        rsc: vec![rsc(0.0), rsc(42.0)],
    };
    let req = ServerRequest {
        now: 0.0,
        project: 0,
        project_name: "A",
        latency_bound: 86400.0,
        host: &st.host,
        request: &request,
        dcf: 1.0,
        work_buf_min: 8640.0,
        on_fraction: 0.75,
        workload: &[],
        free_bytes: [1e12; 3],
        explaining: false,
    };
    let cand = Candidate {
        app: 1,
        rsc: GPU,
        cpus: 0.01,
        gpu_count: 1.0,
        flops_estimate: 7.2e12,
        est_seconds: 3600.0,
        deadline: 86400.0,
    };
    assert_eq!(ws.consider(&req, &[], &cand).unwrap(), Verdict::Send);
    let other = ServerRequest {
        on_fraction: 0.5,
        ..req.clone()
    };
    assert_eq!(ws.consider(&other, &[], &cand).unwrap(), Verdict::Skip);
    let request2 = WorkRequest {
        rsc: vec![rsc(0.0), rsc(0.0)],
        ..request.clone()
    };
    let untold = ServerRequest {
        request: &request2,
        ..req.clone()
    };
    assert_eq!(ws.consider(&untold, &[], &cand).unwrap(), Verdict::Skip);
    // A resource the host does not have is an error at its line, as in
    // `req.seconds_to_fill(r)`, not 0.
    let s = Arc::new(
        Script::compile(
            "send7.rhai",
            "fn consider(req, sent, cand) {\n    if req.estimated_delay(7) == 0.0 { \"send\" } else { \"skip\" }\n}\n",
        )
        .unwrap(),
    );
    let mut ws = match s.make(Family::Send).unwrap() {
        AnyPolicy::Send(p) => p,
        _ => unreachable!(),
    };
    let e = ws.consider(&req, &[], &cand).unwrap_err();
    assert!(
        e.message
            .starts_with("send7.rhai:2:12: in function `consider`: resource 7 does not exist"),
        "{}",
        e.message
    );
}
