//! Disk as a constraint: the `share` manager on the disk scenarios, its JSON,
//! suspension when nothing can be freed, and the new scenario keys' errors.

mod common;

use common::vcsim;
use std::path::PathBuf;

/// Runs `vcsim args`, demands success; (stdout, stderr).
fn ok(args: &[&str]) -> (String, String) {
    let r = vcsim(args).run();
    r.succeeds();
    (r.stdout(), r.stderr())
}

fn scenario_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vcsim-disk-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// One project whose jobs bring 50 MB inputs, on a disk BOINC may use 2 GB
/// of, for a quarter of a day: for disk managers that delete queued jobs.
fn queued_inputs(name: &str) -> PathBuf {
    scenario_file(
        name,
        &format!(
            "name = \"{name}\"\nduration_days = 0.25\n[host]\nncpus = 2\ncpu_flops = 1e9\ndisk_gb = 100\n\
             [client]\ndisk_max_used_gb = 2\n[[project]]\nname = \"A\"\nresource_share = 100\n\
             latency_bound_days = 5\n[[project.app]]\nname = \"main\"\ncpus = 1\n\
             flops_estimate = 2.6e13\nflops_mean = 2.6e13\ninput_mb = 50\n"
        ),
    )
}

const SHARE: &str = "disk=share";
const NONE: &str = "CS2_WF2_WS2_JC2";

#[test]
fn compare_on_disk_tight() {
    let (out, _) = ok(&[
        "compare",
        "scenarios/disk-tight.toml",
        "--policy",
        NONE,
        "--policy",
        SHARE,
        "--replications",
        "3",
    ]);
    insta::assert_snapshot!(out);
}

#[test]
fn compare_on_disk_passes() {
    let (out, _) = ok(&[
        "compare",
        "scenarios/disk-passes.toml",
        "--policy",
        NONE,
        "--policy",
        SHARE,
        "--replications",
        "3",
    ]);
    insta::assert_snapshot!(out);
}

fn json(scenario: &str) -> serde_json::Value {
    let (out, _) = ok(&["run", scenario, "--policy", SHARE, "--format", "json"]);
    serde_json::from_str(&out).expect("json")
}

#[test]
fn the_share_manager_reports_disk_metrics_and_project_limits() {
    for s in ["scenarios/disk-tight.toml", "scenarios/disk-passes.toml"] {
        let v = json(s);
        insta::assert_json_snapshot!(
            format!("share_disk_{}", s.trim_start_matches("scenarios/")),
            serde_json::json!({ "disk": v["disk"], "projects": v["projects"] })
        );
        let d = &v["disk"];
        let limit = d["limit_gb"].as_f64().unwrap();
        assert!(
            d["peak_used_gb"].as_f64().unwrap() <= limit + 1e-9,
            "{s}: {d}"
        );
        assert!(d["bytes_deleted"].as_f64().unwrap() > 0.0, "{s}: {d}");
        assert!(d["jobs_refused"].as_u64().unwrap() > 0, "{s}: {d}");
        for p in v["projects"].as_array().unwrap() {
            assert!(p["disk_limit_gb"].is_number() && p["disk_peak_gb"].is_number());
        }
    }
}

#[test]
fn the_none_manager_adds_no_disk_fields() {
    let (out, _) = ok(&["run", "scenarios/disk-tight.toml", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("disk").is_none(), "{out}");
    assert!(
        !out.contains("disk_limit_gb") && !out.contains("disk_peak_gb"),
        "{out}"
    );
}

#[test]
fn jumping_between_events_agrees_with_visiting_every_step_on_disk_passes() {
    let a = ok(&[
        "run",
        "scenarios/disk-passes.toml",
        "--policy",
        SHARE,
        "--format",
        "json",
    ]);
    let b = ok(&[
        "run",
        "scenarios/disk-passes.toml",
        "--policy",
        SHARE,
        "--format",
        "json",
        "--fixed-step",
    ]);
    assert_eq!(a, b);
}

const TOO_BIG: &str = r#"
name = "too-big"
duration_days = 2
[host]
ncpus = 1
cpu_flops = 1e9
[client]
disk_max_used_gb = 1
[[project]]
name = "A"
resource_share = 1
latency_bound_days = 3
[[project.app]]
name = "main"
flops_estimate = 3.6e12
flops_mean = 3.6e12
output_mb = 10
[[project.job]]
app = "main"
deadline_days = 2
[[project.sticky]]
name = "held"
size_mb = 995
"#;

#[test]
fn when_nothing_can_be_freed_computation_is_suspended_and_the_user_told() {
    // A started job's input (10 MB) is more than the user allows (5 MB):
    // the file is referenced and the job cannot be deleted.
    let text = TOO_BIG
        .replace("disk_max_used_gb = 1", "disk_max_used_gb = 0.005")
        .replace("output_mb = 10", "input_mb = 10")
        .replace(
            "deadline_days = 2",
            "deadline_days = 2\nfraction_done = 0.1",
        )
        .replace("[[project.sticky]]\nname = \"held\"\nsize_mb = 995\n", "");
    let p = scenario_file("too-big", &text);
    let (out, err) = ok(&[
        "run",
        p.to_str().unwrap(),
        "--policy",
        SHARE,
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(err.contains("computation suspended"), "{err}");
    // Suspended from the start to the end: nothing ever ran.
    assert_eq!(v["disk"]["suspended_hours"].as_f64(), Some(48.0), "{out}");
    assert_eq!(v["metrics"]["jobs_on_time"].as_u64(), Some(0), "{out}");
}

#[test]
fn the_poll_deletes_a_sticky_file_to_stay_within_the_limit() {
    let p = scenario_file("sticky", TOO_BIG);
    let (out, err) = ok(&[
        "run",
        p.to_str().unwrap(),
        "--policy",
        SHARE,
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(!err.contains("suspended"), "{err}");
    assert_eq!(v["disk"]["bytes_deleted"].as_f64(), Some(995e6), "{out}");
}

#[test]
fn a_bad_sticky_priority_names_its_key_and_line() {
    let text = TOO_BIG.replace("size_mb = 995", "size_mb = 995\npriority = 9");
    let p = scenario_file("bad-priority", &text);
    let out = vcsim(&["run", p.to_str().unwrap()]).run();
    assert_eq!(out.status(), 2);
    let err = out.stderr();
    let line = text.lines().position(|l| l == "priority = 9").unwrap() + 1;
    assert!(
        err.contains("project.0.sticky.0.priority") && err.contains(&format!(":{line}")),
        "{err}"
    );
    assert!(err.contains("from 1 (P_LOW) to 5 (P_HIGH)"), "{err}");
}

#[test]
fn a_negative_sticky_size_and_a_zero_expiry_are_refused() {
    let text = TOO_BIG.replace("size_mb = 995", "size_mb = -1");
    let p = scenario_file("bad-size", &text);
    vcsim(&["run", p.to_str().unwrap()])
        .run()
        .fails_with(2, &["project.0.sticky.0.size_mb"]);
    let text = TOO_BIG.replace("output_mb = 10", "output_mb = 10\nsticky_expiry_days = 0");
    let p = scenario_file("bad-expiry", &text);
    vcsim(&["run", p.to_str().unwrap()])
        .run()
        .fails_with(2, &["project.0.app.0.sticky_expiry_days"]);
}

#[test]
fn the_poll_deletes_a_queued_result_and_keeps_the_started_one() {
    // Two jobs bring 10 MB each; the user allows 15 MB. The started one stays.
    let text = TOO_BIG
        .replace("disk_max_used_gb = 1", "disk_max_used_gb = 0.015")
        .replace("output_mb = 10", "input_mb = 10")
        .replace(
            "deadline_days = 2",
            "deadline_days = 2\nfraction_done = 0.1\n[[project.job]]\napp = \"main\"\ndeadline_days = 2",
        )
        .replace("[[project.sticky]]\nname = \"held\"\nsize_mb = 995\n", "");
    let p = scenario_file("queued", &text);
    let (out, err) = ok(&[
        "run",
        p.to_str().unwrap(),
        "--policy",
        SHARE,
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(err.contains("deleted queued job 1 of project `A`"), "{err}");
    assert!(!err.contains("suspended"), "{err}");
    assert_eq!(v["disk"]["bytes_deleted"].as_f64(), Some(10e6), "{out}");
    assert!(v["metrics"]["jobs_on_time"].as_u64().unwrap() >= 1, "{out}");
}

#[test]
fn a_disk_manager_that_suspends_within_the_limit_is_not_said_to_be_over_it() {
    // The script suspends at every poll though nothing is over the limit:
    // the note says who decided, not that the user's limit was passed.
    let dir = std::env::temp_dir().join(format!("vcsim-disk-{}-suspender", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("suspender.rhai");
    std::fs::write(
        &script,
        "fn free_space(v, p) { 1e9 }\nfn enforces() { true }\nfn poll(v) { #{ suspend: true } }\n",
    )
    .unwrap();
    let (_, err) = ok(&[
        "run",
        "scenarios/disk-tight.toml",
        "--policy",
        &format!("disk={}", script.display()),
        "--set",
        "duration_days=1",
    ]);
    assert!(
        err.contains("the disk manager suspends computation (BOINC uses"),
        "{err}"
    );
    assert!(!err.contains("more than the"), "{err}");
}

/// BOINC deletes a file that no job references and that is not sticky
/// (its garbage collection). A disk manager that deletes queued jobs but
/// not their files left those files on the host for ever: a day of this
/// one piled 6,912 GB on a 100 GB disk and took 13 s; each file is now
/// deleted with its job.
#[test]
fn the_files_of_jobs_a_disk_manager_deletes_go_with_them_unless_sticky() {
    let scn = queued_inputs("orphans");
    let script = scn.with_file_name("delete_queued.rhai");
    std::fs::write(
        &script,
        "fn free_space(v, p) { 1e9 }\nfn enforces() { true }\n\
         fn poll(v) { let ids = []; for j in v.jobs { if j.deletable { ids.push(j); } } #{ delete_jobs: ids, delete_files: [] } }\n",
    )
    .unwrap();
    let t = std::time::Instant::now();
    let policy = format!("disk={}", script.display());
    let (out, _) = ok(&[
        "run",
        scn.to_str().unwrap(),
        "--policy",
        &policy,
        "--format",
        "json",
    ]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let disk = &j["disk"];
    assert!(disk["peak_used_gb"].as_f64().unwrap() <= 2.0, "{disk}");
    assert!(disk["bytes_deleted"].as_f64().unwrap() > 0.0, "{disk}");
    assert!(t.elapsed() < common::HOSTILE_BOUND, "{:?}", t.elapsed());
}

/// `make_room` is called for an arriving job's input, that job already
/// queued: a plan that deleted it left its input written for a job no
/// longer on the host (`file.job` naming it), and disk usage grew while
/// "deleting to free space". It is an invalid decision, naming the job.
#[test]
fn make_room_cannot_delete_the_job_it_makes_room_for() {
    let scn = queued_inputs("self-delete");
    let script = scn.with_file_name("delete_all_queued.rhai");
    std::fs::write(
        &script,
        "fn free_space(v, p) { 1e9 }\nfn enforces() { true }\n\
         fn make_room(v, p, bytes) { let ids = []; for j in v.jobs { if j.deletable { ids.push(j.id); } } #{ delete_jobs: ids } }\n",
    )
    .unwrap();
    let policy = format!("disk={}", script.display());
    vcsim(&["run", scn.to_str().unwrap(), "--policy", &policy])
        .run()
        .fails_with(
            1,
            &[
                "delete_all_queued.rhai",
                "invalid decision: `make_room`'s plan: job 0 is the one whose file the room is for",
            ],
        );
}

/// The disk manager keeps its own limits, but not the disk's size: a
/// manager that reports more free space than there is (here, a petabyte
/// on a 5 GB disk) gets jobs whose files cannot be written. As on a real
/// host, such a download fails, and the job with it; an output that does
/// not fit fails its job too. The files never take more than the disk less
/// the non-BOINC usage (before: 3,687 GB "used" on this disk's 100 GB,
/// in a run that slowed as it went).
#[test]
fn a_file_that_does_not_fit_on_the_disk_fails_its_job_whatever_the_manager_says() {
    let dir = scenario_file("liar", "");
    let script = dir.with_file_name("liar.rhai");
    std::fs::write(
        &script,
        "fn enforces() { true }\nfn free_space(v, p) { 1e15 }\n",
    )
    .unwrap();
    let policy = format!("disk={}", script.display());
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "scenarios/disk-tight.toml",
            "--policy",
            &policy,
            "--set",
            "host.disk_gb=25",
            "--format",
            "json",
        ];
        args.extend(extra);
        ok(&args)
    };
    let t = std::time::Instant::now();
    let (out, err) = run(&[]);
    assert!(t.elapsed() < common::HOSTILE_BOUND, "{:?}", t.elapsed());
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let disk = &j["disk"];
    // 25 GB less 20 GB of non-BOINC files.
    assert_eq!(disk["peak_used_gb"].as_f64(), Some(5.0), "{disk}");
    let full = disk["jobs_failed_disk_full"].as_u64().unwrap();
    assert!(full > 0, "{disk}");
    let failed: u64 = j["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["jobs_failed"].as_u64().unwrap())
        .sum();
    // The scenario's jobs never crash: every failure reported is a full
    // disk's (both count jobs as they are reported).
    assert_eq!(failed, full);
    // The first failure is said with its sizes, the count once at the end.
    assert!(
        err.contains("failed: its input file (100 MB) does not fit on the disk (5 of the 5 GB BOINC's files can take are used"),
        "{err}"
    );
    // The files that did not fit, counted when they did not: the jobs of
    // the last few were not reported by the end.
    let files: u64 = err
        .split(" files in all did not fit on the disk, and failed their jobs")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        files >= full && files - full < 50,
        "{files} files, {full} jobs"
    );
    assert_eq!(err.matches("does not fit on the disk").count(), 1, "{err}");
    // Visiting every step agrees to the byte.
    let (stepped, _) = run(&["--fixed-step"]);
    assert_eq!(stepped, out);
}

/// Files that cannot be on the disk at the start are a scenario error,
/// named by the key that overflows it; so is more non-BOINC usage than disk.
#[test]
fn sticky_files_larger_than_the_disk_are_refused() {
    let host = "[host]\nncpus = 1\ncpu_flops = 1e9\ndisk_gb = 10\n";
    let project = "[[project]]\nname = \"A\"\nresource_share = 1\nlatency_bound_days = 5\n[[project.app]]\nname = \"main\"\n\
                   flops_estimate = 1e12\nflops_mean = 1e12\n";
    let scn = scenario_file(
        "sticky-over",
        &format!(
            "name = \"sticky-over\"\nduration_days = 1\n{host}non_boinc_used_gb = 4\n{project}\
             [[project.sticky]]\nsize_mb = 5000\n[[project.sticky]]\nsize_mb = 2000\n"
        ),
    );
    vcsim(&["check", scn.to_str().unwrap()]).run().fails_with(
        2,
        &[
            "project.0.sticky.1.size_mb",
            "the projects' sticky files take 7 GB up to this one, more than the 6 GB the disk has for BOINC",
        ],
    );
    let scn = scenario_file(
        "non-boinc-over",
        &format!(
            "name = \"non-boinc-over\"\nduration_days = 1\n{host}non_boinc_used_gb = 11\n{project}"
        ),
    );
    vcsim(&["check", scn.to_str().unwrap()]).run().fails_with(
        2,
        &[
            "host.non_boinc_used_gb",
            "must be at most host.disk_gb (10 GB), found 11 GB",
        ],
    );
}

/// A job withheld for lack of space is explained by its space, not by the
/// sender's reason to send it (it read "withholds ...: sent: EDF with the
/// job finishes it ...").
#[test]
fn a_withheld_job_is_explained_by_the_space_it_lacks() {
    let (out, _) = ok(&[
        "explain",
        "scenarios/disk-passes.toml",
        "--policy",
        SHARE,
        "--to",
        "0",
        "--format",
        "json",
    ]);
    let withheld: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &serde_json::Value| r["decision"].as_str().unwrap().contains("withholds"))
        .collect();
    assert!(!withheld.is_empty(), "{out}");
    for r in &withheld {
        let reason = &r["reason"];
        let text = reason["text"].as_str().unwrap();
        assert!(text.starts_with("its input and output take "), "{r}");
        assert!(!text.contains("EDF"), "{r}");
        let (job, held, free) = (
            reason["job_bytes"].as_f64().unwrap(),
            reason["reply_bytes"].as_f64().unwrap(),
            reason["free_bytes"].as_f64().unwrap(),
        );
        assert!(job + held > free, "{r}");
    }
}
