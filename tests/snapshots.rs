//! The numbers, pinned: a `run` table and JSON for every scenario in
//! `scenarios/`, and `compare` tables of the paper's combinations. A change
//! that moves a number shows up here as a diff for the reviewer to read.

mod common;

use common::vcsim;

#[test]
fn run_of_every_scenario() {
    insta::glob!("../scenarios", "*.toml", |path| {
        let p = path.to_str().unwrap();
        insta::assert_snapshot!("run_table", vcsim(&["run", p]).stdout());
        insta::assert_snapshot!("run_json", vcsim(&["run", p, "--format", "json"]).stdout());
    });
}

/// Today's BOINC client (`CS3_WF3_WS3_JC3`) on every scenario.
#[test]
fn run_of_every_scenario_under_todays_client() {
    insta::glob!("../scenarios", "*.toml", |path| {
        let p = path.to_str().unwrap();
        insta::assert_snapshot!(
            "run_todays_client",
            vcsim(&["run", p, "--policy", "CS3_WF3_WS3_JC3"]).stdout()
        );
    });
}

/// The paper's combinations: the default and one family changed at a time.
const PAPER: [&str; 5] = [
    "CS2_WF2_WS2_JC2",
    "CS1_WF2_WS2_JC2",
    "CS2_WF1_WS2_JC2",
    "CS2_WF2_WS1_JC2",
    "CS2_WF2_WS2_JC1",
];

fn compare(scenario: &str, replications: &str) -> String {
    let mut args = vec!["compare", scenario, "--replications", replications];
    for p in PAPER {
        args.extend(["--policy", p]);
    }
    vcsim(&args).stdout()
}

#[test]
fn compare_the_paper_combinations_on_the_base_scenario() {
    insta::assert_snapshot!(compare("scenarios/paper-base.toml", "3"));
}

#[test]
fn compare_the_paper_combinations_on_a_mix_of_five() {
    insta::assert_snapshot!(compare("scenarios/mix-5-slack-5.toml", "3"));
}

#[test]
fn compare_every_scenario_as_json() {
    insta::glob!("../scenarios", "*.toml", |path| {
        let p = path.to_str().unwrap();
        insta::assert_snapshot!(vcsim(&[
            "compare",
            p,
            "--policy",
            "CS2_WF2_WS2_JC2",
            "--policy",
            "CS1_WF1_WS1_JC1",
            "--format",
            "json"
        ])
        .stdout());
    });
}

#[test]
fn compare_wf2_and_gpu_on_the_gpu_scenarios() {
    for s in ["gpu-seed-example", "gpu-speed-3", "gpu-unequal-shares"] {
        let path = format!("scenarios/{s}.toml");
        let out = vcsim(&[
            "compare",
            &path,
            "--policy",
            "cpu=cs2,fetch=gpu,send=gpu",
            "--policy",
            "CS2_WF2_WS2_JC2",
        ])
        .stdout();
        insta::assert_snapshot!(format!("gpu_compare_{s}"), out);
    }
}
