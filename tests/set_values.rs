//! `run --set` and `compare --set`: a change given on the command line
//! gives the output the same change made in the scenario file gives, with
//! the paths and knobs of a sweep's `[set]` (issue 16, item 6).

mod common;

use common::{root, temp_dir, vcsim};
use std::path::PathBuf;

fn base() -> String {
    std::fs::read_to_string(root().join("scenarios/paper-base.toml")).unwrap()
}

/// The base scenario with `edits` (old text, new text) made, in a file.
fn edited(name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = base();
    for (old, new) in edits {
        assert!(text.contains(old), "paper-base.toml lacks {old:?}");
        text = text.replacen(old, new, 1);
    }
    let p = temp_dir(&format!("set-{name}")).join("paper-base.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// `slack = 5` as the sweeps' knob computes it for the base scenario's
/// one project: the latency bound is 5 mean run times on one CPU.
fn slack_5_days() -> f64 {
    5.0 * 1.3e13 / 1e9 / 86400.0
}

#[test]
fn run_set_is_the_same_edit_in_the_file() {
    let by_set = vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--set",
        "duration_days=10",
        "--set",
        "host.ncpus=4",
        "--set",
        "slack=5",
        "--format",
        "json",
    ])
    .stdout();
    let file = edited(
        "run",
        &[
            ("duration_days = 100", "duration_days = 10"),
            ("ncpus = 2", "ncpus = 4"),
            (
                "latency_bound_days = 9",
                &format!("latency_bound_days = {}", slack_5_days()),
            ),
        ],
    );
    let by_file = vcsim(&["run", file.to_str().unwrap(), "--format", "json"]).stdout();
    assert_eq!(by_set, by_file);
    // And it is a change: without --set the output differs.
    let plain = vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--set",
        "duration_days=10",
        "--format",
        "json",
    ])
    .stdout();
    assert_ne!(by_set, plain);
}

#[test]
fn compare_set_is_the_same_edit_in_the_file() {
    let args = |scenario: &str, set: &[&str]| {
        let mut a: Vec<String> = [
            "compare",
            scenario,
            "--policy",
            "CS1_WF2_WS2_JC2",
            "--policy",
            "CS2_WF2_WS2_JC2",
            "--replications",
            "2",
            "--format",
            "json",
        ]
        .map(String::from)
        .to_vec();
        for s in set {
            a.push("--set".into());
            a.push(s.to_string());
        }
        a
    };
    let by_set = vcsim(&args(
        "scenarios/paper-base.toml",
        &[
            "duration_days=10",
            "buffer_hours=6",
            "project.*.resource_share=50",
        ],
    ))
    .stdout();
    let file = edited(
        "compare",
        &[
            ("duration_days = 100", "duration_days = 10"),
            ("work_buf_min_days = 0.1", "work_buf_min_days = 0.25"),
            (
                "work_buf_additional_days = 0.25",
                "work_buf_additional_days = 0",
            ),
            ("resource_share = 100", "resource_share = 50"),
        ],
    );
    let by_file = vcsim(&args(file.to_str().unwrap(), &[])).stdout();
    assert_eq!(by_set, by_file);
}

#[test]
fn knobs_apply_in_the_sweeps_order() {
    // `slack` after `mix` whatever the order given: every project of the
    // mix has a slack of 5 (project i runs i times longer).
    let out = vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--set",
        "slack=5",
        "--set",
        "mix=2",
        "--set",
        "duration_days=5",
        "--format",
        "json",
    ])
    .stdout();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let projects = v["projects"].as_array().expect("projects");
    assert_eq!(projects.len(), 2, "{out}");
    assert_eq!(projects[1]["name"], "P2");
}

#[test]
fn a_bad_set_names_its_key_and_exits_2() {
    let run = |set: &str| vcsim(&["run", "scenarios/paper-base.toml", "--set", set]).run();
    run("host.ncpu=4").fails_with(2, &["--set host.ncpu=4", "`host.ncpu`", "no key `ncpu`"]);
    run("hots.ncpus=4").fails_with(2, &["`hots.ncpus`", "unknown parameter"]);
    run("host.ncpus=four").fails_with(2, &["--set host.ncpus=four", "`host.ncpus`"]);
    run("host.ncpus=0").fails_with(2, &["--set host.ncpus=0", "key `host.ncpus`", "at least 1"]);
    run("slack=x").fails_with(2, &["--set slack=x", "must be a number"]);
    run("slack").fails_with(2, &["`slack` is not PATH=VALUE"]);
    run("project.3.resource_share=1").fails_with(2, &["out of range"]);
    vcsim(&[
        "compare",
        "scenarios/paper-base.toml",
        "--policy",
        "CS2",
        "--set",
        "host=1",
    ])
    .run()
    .fails_with(2, &["--set host=1", "`host` is a table"]);
}
