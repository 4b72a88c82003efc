//! Today's BOINC client (`CS3_WF3_WS3_JC3`) as users run it: the figures
//! the book's page "Today's BOINC client" gives, and its members combined
//! with the v4 ones (`tests/book_commands.rs` runs the page's commands).

mod common;

use common::{root, vcsim};
use serde_json::Value;

fn run_json(scenario: &str, policy: &str) -> Value {
    let out = vcsim(&["run", scenario, "--policy", policy, "--format", "json"]).stdout();
    serde_json::from_str(&out).expect("JSON")
}

fn num(v: &Value, path: &[&str]) -> f64 {
    let mut x = v;
    for k in path {
        x = &x[*k];
    }
    x.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number in {v}"))
}

#[test]
fn on_the_seed_gpu_example_with_001_cpu_gpu_jobs_cpu_and_gpu_stay_busy_and_flops_balance() {
    let r = run_json("scenarios/gpu-fractional-cpu.toml", "CS3_WF3_WS3_JC3");
    assert!(num(&r, &["resources", "cpu", "idleness"]) <= 0.02, "{r}");
    assert!(num(&r, &["resources", "nvidia", "idleness"]) <= 0.02, "{r}");
    for p in 0..2 {
        let f = r["projects"][p]["flops_fraction"].as_f64().unwrap();
        assert!((f - 0.5).abs() <= 0.05, "project {p}: {f}");
    }
    // REC balances total FLOPs: A takes about 3/4 of the GPU, B the CPU and
    // the rest of the GPU (the seed's target).
    let a_gpu = r["projects"][0]["usage"]["nvidia"].as_f64().unwrap();
    assert!((a_gpu - 0.75).abs() < 0.05, "{a_gpu}");
}

#[test]
fn on_the_four_project_host_todays_client_wastes_at_most_015_a_third_of_2007s() {
    let s = "scenarios/today-four-projects.toml";
    let today = run_json(s, "CS3_WF3_WS3_JC3");
    let old = run_json(s, "CS2_WF2_WS1_JC2");
    let (w3, w2) = (
        num(&today, &["metrics", "waste"]),
        num(&old, &["metrics", "waste"]),
    );
    assert!(w3 <= 0.15 && w3 < 0.5 * w2, "{w3} vs {w2}");
    assert!(num(&today, &["metrics", "rpcs_per_job"]) <= 4.0);
    assert!(num(&today, &["metrics", "share_violation"]) < 0.05);
}

#[test]
fn each_member_combines_with_the_v4_policies() {
    for spec in [
        "CS3_WF2_WS2_JC2",
        "CS2_WF3_WS1_JC1",
        "CS1_WF1_WS3_JC2",
        "CS2_WF2_WS2_JC3",
        "cpu=cs3-intended,fetch=wf3-intended,send=ws3,estimate=jc3",
        "cpu=cs3,fetch=gpu,send=ws3,estimate=jc3",
        "cpu=cs3,fetch=wf3,send=ws3,estimate=jc3-uncorrected",
    ] {
        for s in [
            "scenarios/mix-5-slack-5.toml",
            "scenarios/gpu-half-cpu.toml",
        ] {
            let r = run_json(s, spec);
            assert!(num(&r, &["metrics", "jobs_on_time"]) > 0.0, "{spec} on {s}");
        }
    }
}

#[test]
fn the_servers_correction_keeps_underestimated_jobs_on_time() {
    // The paper's base host; jobs take 3 times their estimate, slack 5.
    // Without any correction the client fetches and the server sends three
    // times too much, and almost every job is late.
    let dir = std::env::temp_dir().join(format!("vcsim-jc3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = dir.join("under.toml");
    std::fs::write(
        &s,
        r#"name = "under"
duration_days = 60
[host]
ncpus = 2
cpu_flops = 1e9
[host.availability]
fraction = 0.8
mean_on_seconds = 1000
[client]
learn_availability = true
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 0.75
[[project.app]]
name = "a"
flops_estimate = 4.33e12
flops_mean = 1.3e13
"#,
    )
    .unwrap();
    let p = s.to_str().unwrap();
    let with = num(&run_json(p, "CS3_WF3_WS3_JC3"), &["metrics", "waste"]);
    let without = num(
        &run_json(p, "cpu=cs3,fetch=wf3,send=ws3,estimate=jc3-uncorrected"),
        &["metrics", "waste"],
    );
    assert!(with < 0.1 && without > 0.5, "{with} {without}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn max_concurrent_holds_under_todays_client() {
    // A's app is capped at 2 of the 4 CPUs: B fills the other two.
    let r = run_json("scenarios/max-concurrent-app.toml", "CS3_WF3_WS3_JC3");
    let a = r["projects"][0]["usage"]["cpu"].as_f64().unwrap();
    assert!((a - 0.5).abs() < 0.01, "{a}");
    assert!(num(&r, &["metrics", "idleness"]) < 0.01);
}

#[test]
fn the_rec_half_life_is_a_scenario_key() {
    let dir = std::env::temp_dir().join(format!("vcsim-rec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = std::fs::read_to_string(root().join("scenarios/gpu-fractional-cpu.toml")).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        base.replace("[host]", "[client]\nrec_half_life_days = -1\n\n[host]"),
    )
    .unwrap();
    let r = vcsim(&["check", bad.to_str().unwrap()]).run();
    assert_eq!(r.status(), 2);
    assert!(
        r.stderr().contains("client.rec_half_life_days"),
        "{}",
        r.stderr()
    );
    // A shorter half-life reacts faster: the figures move, the run stays valid.
    let short = dir.join("short.toml");
    std::fs::write(
        &short,
        base.replace("[host]", "[client]\nrec_half_life_days = 0.5\n\n[host]"),
    )
    .unwrap();
    let a = run_json(short.to_str().unwrap(), "CS3_WF3_WS3_JC3");
    let b = run_json("scenarios/gpu-fractional-cpu.toml", "CS3_WF3_WS3_JC3");
    assert_ne!(a["metrics"], b["metrics"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// A resource backed off for a project still rides along in its request,
/// as in BOINC ("request even if backed off"), but with no fetchable share
/// of it: it asks for the idle instances only. B's GPU jobs are refused by
/// its server (a latency bound too short for them), so B's GPU backs off;
/// A's job holds the one GPU. B asked for 1 instance of it ("1 idle
/// instances"), its share among the projects not backed off.
#[test]
fn a_backed_off_gpu_rides_along_for_the_idle_instances_only() {
    // B's GPU app is the second `gpu` app of the file.
    let text = std::fs::read_to_string(root().join("scenarios/gpu-fractional-cpu.toml")).unwrap();
    let app = "name = \"gpu\"\n";
    let at = text.rfind(app).unwrap() + app.len();
    let text = format!("{}latency_bound_days = 0.02\n{}", &text[..at], &text[at..]);
    let dir = common::temp_dir("backed-off-ride-along");
    let path = dir.join("s.toml");
    std::fs::write(&path, text).unwrap();
    let out = vcsim(&[
        "explain",
        path.to_str().unwrap(),
        "--policy",
        "CS3_WF3_WS3_JC3",
        "--set",
        "duration_days=3",
        "--from",
        "0",
        "--to",
        "259200",
    ])
    .stdout();
    // Today's client reports within the hour: B is contacted every hour to
    // report, and its GPU, refused and so backed off, rides along on those
    // reports, asking for its idle instances only.
    let to_b: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("fetch    RPC to B") && l.contains("nvidia"))
        .collect();
    assert!(
        to_b.iter()
            .any(|l| l.contains("nvidia: ") && l.contains(" and 0 instances")),
        "{to_b:?}"
    );
    assert!(!to_b.iter().any(|l| l.contains("(1 instance)")), "{to_b:?}");
}
