//! What WS2 relies on to skip its EDF schedules (`ws::all_on_time`): when
//! the linear bound says every job meets its deadline, the EDF check
//! passes too, so the server sends what it would have sent.

use proptest::prelude::*;
use vcsim_builtin::ws::{all_on_time, Ws2};
use vcsim_framework::testing::state;
use vcsim_framework::{Candidate, ReportedJob, ServerRequest, WorkRequest};

/// A workload and a candidate: (remaining seconds, deadline) per job on
/// the host, per job already sent, and of the candidate; the check runs at
/// `now` on `ncpus` CPUs with the buffer minimum `bmin`.
#[derive(Debug, Clone)]
struct Case {
    ncpus: u32,
    now: f64,
    bmin: f64,
    workload: Vec<(f64, f64)>,
    sent: Vec<(f64, f64)>,
    cand: (f64, f64),
}

fn case() -> impl Strategy<Value = Case> {
    let job = || (0.0f64..50_000.0, 0.0f64..400_000.0);
    (
        1u32..=8,
        0.0f64..20_000.0,
        prop::sample::select(vec![0.0, 8_640.0]),
        prop::collection::vec(job(), 0..24),
        prop::collection::vec(job(), 0..4),
        job(),
    )
        .prop_map(|(ncpus, now, bmin, workload, sent, cand)| Case {
            ncpus,
            now,
            bmin,
            workload,
            sent,
            cand,
        })
}

fn candidate((est_seconds, deadline): (f64, f64)) -> Candidate {
    Candidate {
        app: 0,
        rsc: 0,
        cpus: 1.0,
        gpu_count: 0.0,
        flops_estimate: est_seconds * 1e9,
        est_seconds,
        deadline,
    }
}

/// (The shortcut says every job is on time, the full check's verdict.)
fn both(c: &Case) -> (bool, bool) {
    let st = state(&format!(
        "name = \"w\"\nduration_days = 10\n[host]\nncpus = {}\ncpu_flops = 1e9\n[[project]]\nname = \"P\"\nresource_share = 100\nlatency_bound_days = 3\n[[project.app]]\nname = \"a\"\nflops_estimate = 1e12\nflops_mean = 1e12\n",
        c.ncpus
    ));
    let workload: Vec<ReportedJob> = c
        .workload
        .iter()
        .map(|&(remaining_seconds, deadline)| ReportedJob {
            project: 0,
            rsc: 0,
            cpus: 1.0,
            gpu_count: 0.0,
            deadline,
            remaining_seconds,
        })
        .collect();
    let request = WorkRequest::seconds(0, 1e9, 1);
    let req = ServerRequest {
        now: c.now,
        project: 0,
        project_name: "P",
        latency_bound: 259_200.0,
        host: &st.host,
        request: &request,
        dcf: 1.0,
        work_buf_min: c.bmin,
        on_fraction: 1.0,
        workload: &workload,
        free_bytes: [1e12; 3],
        explaining: false,
    };
    let sent: Vec<Candidate> = c.sent.iter().map(|&j| candidate(j)).collect();
    let cand = candidate(c.cand);
    (
        all_on_time(&req, &sent, &cand),
        Ws2::default().check(&req, &sent, &cand),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn all_on_time_only_where_the_check_passes(c in case()) {
        let (sure, checked) = both(&c);
        prop_assert!(!sure || checked, "the bound says on time, the check refuses");
    }
}

#[test]
fn the_bound_decides_roomy_hosts_and_leaves_tight_ones_to_the_check() {
    // Four CPUs, eight jobs of an hour and a candidate of an hour: the
    // bound is (9 h - 1 h) / 4 + 1 h = 3 h, within a day.
    let roomy = Case {
        ncpus: 4,
        now: 0.0,
        bmin: 0.0,
        workload: vec![(3600.0, 86_400.0); 8],
        sent: vec![],
        cand: (3600.0, 86_400.0),
    };
    assert_eq!(both(&roomy), (true, true));
    // Eight jobs due at 2 h fill the four CPUs to 2 h: a candidate due at
    // 2.5 h ends at 3 h, late.
    let tight = Case {
        workload: vec![(3600.0, 7_200.0); 8],
        cand: (3600.0, 9_000.0),
        ..roomy.clone()
    };
    assert_eq!(both(&tight), (false, false));
    // Due at 2.5 h, with the others due in a day: EDF runs it first and it
    // passes, though the bound (3 h) cannot tell.
    let early = Case {
        cand: (3600.0, 9_000.0),
        ..roomy
    };
    assert_eq!(both(&early), (false, true));
}
