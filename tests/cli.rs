//! The runner as a user meets it: every test is one command line and what it
//! should print. Bad input gets a clear message and exit status 2, never a panic.

mod common;

use common::vcsim;
use std::path::PathBuf;

const GOOD: &str = r#"name = "small"
duration_days = 2
[host]
ncpus = 2
cpu_flops = 1e9
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 1
[[project.app]]
name = "main"
flops_estimate = 3.6e12
flops_mean = 3.6e12
"#;

/// Writes a scenario into a fresh temporary directory.
fn scenario_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vcsim-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_missing_scenario_file_is_named() {
    vcsim(&["run", "no/such/file.toml"])
        .run()
        .fails_with(2, &["no/such/file.toml", "cannot read"]);
}

#[test]
fn an_unknown_key_names_the_file_the_key_and_the_line() {
    let p = scenario_file("unknown", &GOOD.replace("ncpus = 2", "ncpus = 2\nncpu = 4"));
    let path = p.display().to_string();
    vcsim(&["run", &path])
        .run()
        .fails_with(2, &[&format!("{path}:5"), "unknown field `ncpu`"]);
}

#[test]
fn a_negative_share_names_its_key_and_line() {
    let p = scenario_file(
        "negative",
        &GOOD.replace("resource_share = 100", "resource_share = -1"),
    );
    vcsim(&["run", p.to_str().unwrap()])
        .run()
        .fails_with(2, &[":8", "project.0.resource_share", "positive"]);
}

#[test]
fn zero_cpus_are_refused() {
    let p = scenario_file("zero", &GOOD.replace("ncpus = 2", "ncpus = 0"));
    vcsim(&["check", p.to_str().unwrap()])
        .run()
        .fails_with(2, &[":4", "host.ncpus", "at least 1"]);
}

#[test]
fn a_toml_syntax_error_gives_the_line() {
    let p = scenario_file("syntax", &GOOD.replace("name = \"A\"", "name = \"A"));
    vcsim(&["run", p.to_str().unwrap()])
        .run()
        .fails_with(2, &[":7"]);
}

#[test]
fn a_value_of_the_wrong_type_gives_the_line() {
    let p = scenario_file(
        "type",
        &GOOD.replace("cpu_flops = 1e9", "cpu_flops = \"fast\""),
    );
    vcsim(&["run", p.to_str().unwrap()])
        .run()
        .fails_with(2, &[":5", "invalid type"]);
}

#[test]
fn an_unknown_policy_lists_the_known_ones() {
    vcsim(&["run", "scenarios/paper-base.toml", "--policy", "CS9"])
        .run()
        .fails_with(2, &["no cpu policy named `cs9`", "cs1, cs2"]);
    vcsim(&["run", "scenarios/paper-base.toml", "--policy", "XYZ"])
        .run()
        .fails_with(2, &["not CSn"]);
}

#[test]
fn a_bad_flag_is_a_usage_error() {
    vcsim(&["run", "--nonsense"])
        .run()
        .fails_with(2, &["--nonsense"]);
}

#[test]
fn check_accepts_every_shipped_scenario() {
    for e in std::fs::read_dir("scenarios").unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let r = vcsim(&["check", p.to_str().unwrap()]).run();
            assert_eq!(r.status(), 0, "{}: {}", p.display(), r.stderr());
            assert!(r.stdout().contains("is valid"));
        }
    }
}

#[test]
fn list_shows_every_built_in_by_family() {
    let out = vcsim(&["list"]).run().stdout();
    for name in [
        "cs1", "cs2", "wf1", "wf2", "ws1", "ws2", "jc1", "jc2", "none",
    ] {
        assert!(
            out.contains(&format!("  {name} ")),
            "{name} missing from:\n{out}"
        );
    }
    assert!(out.find("cpu:").unwrap() < out.find("fetch:").unwrap());
}

#[test]
fn no_arguments_compares_the_paper_policies_where_they_differ_in_100_columns() {
    let r = vcsim::<&str>(&[]).run();
    assert_eq!(r.status(), 0, "{}", r.stderr());
    let out = r.stdout();
    assert!(
        out.starts_with("scenario mix-5-slack-5 · 5 replications"),
        "{out}"
    );
    for p in [
        "CS2_WF2_WS2_JC2",
        "CS1_WF2_WS2_JC2",
        "CS2_WF1_WS2_JC2",
        "CS2_WF2_WS1_JC2",
        "CS2_WF2_WS2_JC1",
    ] {
        assert!(out.contains(p), "{p}");
    }
    // The policies differ there: CS1 wastes where CS2 does not.
    assert!(out.contains("worse"), "{out}");
    for line in out.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    // It ends with what to try next, on two lines.
    let last: Vec<&str> = out.lines().rev().take(2).collect();
    assert!(last[1].starts_with("try: vcsim compare"), "{out}");
    assert!(last[0].contains("vcsim list"), "{out}");
}

#[test]
fn compare_tables_of_five_long_specs_stay_within_100_columns() {
    let mut args = vec![
        "compare",
        "scenarios/two-deadlines.toml",
        "--replications",
        "2",
    ];
    for p in [
        "cpu=cs2,fetch=gpu,send=gpu,estimate=jc2,disk=none",
        "cpu=cs1,fetch=wf2,send=ws1,estimate=jc1,disk=share",
        "CS3_WF3_WS3_JC3",
        "cpu=cs3-intended,fetch=wf3-intended,send=ws3,estimate=jc3-uncorrected",
        "CS2_WF1_WS2_JC2",
    ] {
        args.extend(["--policy", p]);
    }
    let out = vcsim(&args).stdout();
    for line in out.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    // The tables name the policies by their labels; the legend under them
    // names in full those whose label is not their spec.
    let header = out.lines().find(|l| l.starts_with("| metric")).unwrap();
    for label in [
        "CS2_gpu_gpu_JC2",
        "CS1_WF2_WS1_JC1+share",
        "CS3_WF3_WS3_JC3",
        "CS3-INTENDED_WF3-INTENDED_WS3_JC3-UNCORRECTED",
    ] {
        assert!(out.contains(label), "{label}: {out}");
    }
    assert!(header.contains("CS2_gpu_gpu_JC2"), "{header}");
    assert!(
        out.ends_with(concat!(
            "\n\nCS2_gpu_gpu_JC2: cpu=cs2,fetch=gpu,send=gpu,estimate=jc2,disk=none\n",
            "CS1_WF2_WS1_JC1+share: cpu=cs1,fetch=wf2,send=ws1,estimate=jc1,disk=share\n",
        )),
        "{out}"
    );
}

#[test]
fn a_run_is_byte_identical_twice() {
    let a = vcsim(&["run", "scenarios/mix-5-slack-5.toml", "--format", "json"]).run();
    let b = vcsim(&["run", "scenarios/mix-5-slack-5.toml", "--format", "json"]).run();
    assert_eq!(a.status(), 0, "{}", a.stderr());
    assert_eq!(a.stdout(), b.stdout());
}

#[test]
fn a_comparison_does_not_depend_on_the_number_of_threads() {
    let args = |j: &'static str| {
        [
            "compare",
            "scenarios/outages.toml",
            "--policy",
            "CS2_WF2_WS2_JC2",
            "--policy",
            "CS1_WF1_WS1_JC1",
            "--replications",
            "4",
            "--format",
            "json",
            "--jobs",
            j,
        ]
    };
    let one = vcsim(&args("1")).run();
    let three = vcsim(&args("3")).run();
    assert_eq!(one.status(), 0, "{}", one.stderr());
    assert_eq!(one.stdout(), three.stdout());
}

#[test]
fn jumping_between_events_agrees_with_visiting_every_step_on_the_base_scenario() {
    for policy in ["CS2_WF2_WS2_JC2", "CS1_WF1_WS1_JC1"] {
        let jump = vcsim(&[
            "run",
            "scenarios/paper-base.toml",
            "--policy",
            policy,
            "--format",
            "json",
        ])
        .run();
        let step = vcsim(&[
            "run",
            "scenarios/paper-base.toml",
            "--policy",
            policy,
            "--format",
            "json",
            "--fixed-step",
        ])
        .run();
        assert_eq!(jump.status(), 0, "{}", jump.stderr());
        assert_eq!(jump.stdout(), step.stdout(), "{policy}");
    }
}

#[test]
fn a_seed_override_changes_the_run_and_is_reported() {
    let a = vcsim(&[
        "run",
        "scenarios/outages.toml",
        "--seed",
        "11",
        "--format",
        "json",
    ])
    .run()
    .stdout();
    let b = vcsim(&["run", "scenarios/outages.toml", "--format", "json"])
        .run()
        .stdout();
    assert!(a.contains("\"seed\": 11"));
    assert_ne!(a, b);
}

#[test]
fn the_timeline_csv_lists_what_ran_where() {
    let dir = std::env::temp_dir().join(format!("vcsim-tl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("t.csv");
    let r = vcsim(&[
        "run",
        "scenarios/initial-queue.toml",
        "--timeline",
        p.to_str().unwrap(),
    ])
    .run();
    assert_eq!(r.status(), 0, "{}", r.stderr());
    let csv = std::fs::read_to_string(&p).unwrap();
    assert!(csv.starts_with(
        "job,project,resource,cpus,gpus,start_s,end_s,deadline_s,deadline_mode,late,cpus_held,reported\n"
    ));
    assert!(csv.lines().count() > 10);
    assert!(csv.contains(",climate,cpu,") && csv.contains(",proteins,cpu,"));
}

#[test]
fn run_and_compare_csv_carry_the_jsons_digits() {
    // They wrote the tables' 4 significant digits (0.007937 for the
    // JSON's 0.00793651).
    let json = vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--set",
        "duration_days=3",
        "--format",
        "json",
    ])
    .run()
    .succeeds();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rpj = v["metrics"]["rpcs_per_job"].as_f64().unwrap();
    assert!(
        rpj.to_string().len() > 5,
        "{rpj}: pick a metric with more digits"
    );
    let csv = vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--set",
        "duration_days=3",
        "--format",
        "csv",
    ])
    .run()
    .succeeds();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = head.iter().position(|h| *h == "rpcs_per_job").unwrap();
    assert_eq!(row[i], rpj.to_string());
    let csv = vcsim(&[
        "compare",
        "scenarios/paper-base.toml",
        "--set",
        "duration_days=3",
        "--policy",
        "CS2_WF2_WS2_JC2",
        "--format",
        "csv",
    ])
    .run()
    .succeeds();
    let line = csv.lines().find(|l| l.contains(",rpcs_per_job,")).unwrap();
    assert!(line.contains(&format!(",rpcs_per_job,{rpj},")), "{line}");
}
