//! What vcsim infers from a policy spec: a script named without its family
//! (`--policy x.rhai`) takes the family its hooks implement, and a name no
//! policy has is refused with the names the family knows (issue 16, item 4).

mod common;

use common::{temp_dir, vcsim};

/// A short run: the base scenario for five days.
const SHORT: [&str; 2] = ["--set", "duration_days=5"];

fn run_json(policy: &str) -> String {
    let mut args = vec![
        "run",
        "scenarios/paper-base.toml",
        "--policy",
        policy,
        "--format",
        "json",
    ];
    args.extend(SHORT);
    vcsim(&args).stdout()
}

#[test]
fn a_bare_script_runs_as_the_family_its_hooks_implement() {
    let bare = run_json("policies/least_slack.rhai");
    assert_eq!(bare, run_json("cpu=policies/least_slack.rhai"));
    assert!(
        bare.contains(
            "\"cpu=policies/least_slack.rhai,fetch=wf2,send=ws2,estimate=jc2,disk=none\""
        ),
        "{bare}"
    );
    // A fetcher: the same, in the fetch family.
    assert_eq!(
        run_json("policies/least_queued.rhai"),
        run_json("fetch=policies/least_queued.rhai")
    );
    // An underscore in the name is part of the path, not the paper's notation.
    assert_eq!(
        run_json("policies/wf1_v4.rhai"),
        run_json("fetch=policies/wf1_v4.rhai")
    );
}

#[test]
fn a_bare_script_mixes_with_other_names_separated_by_commas() {
    assert_eq!(
        run_json("CS1,policies/least_queued.rhai,send=ws1"),
        run_json("cpu=cs1,fetch=policies/least_queued.rhai,send=ws1")
    );
    vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--policy",
        "CS1_my_policy.rhai",
    ])
    .run()
    .fails_with(2, &["cannot read", "`CS1,my_policy.rhai`"]);
    vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--policy",
        "fetch=wf1,policies/least_queued.rhai",
    ])
    .run()
    .fails_with(2, &["fetch is given twice"]);
}

#[test]
fn compare_takes_bare_scripts() {
    let out = vcsim(&[
        "compare",
        "scenarios/paper-base.toml",
        "--policy",
        "CS2_WF2_WS2_JC2",
        "--policy",
        "policies/least_slack.rhai",
        "--policy",
        "policies/least_queued.rhai",
        "--set",
        "duration_days=5",
        "--format",
        "csv",
    ])
    .stdout();
    assert!(
        out.contains("cpu=policies/least_slack.rhai,fetch=wf2,")
            && out.contains("cpu=cs2,fetch=policies/least_queued.rhai,"),
        "{out}"
    );
}

#[test]
fn a_sweep_takes_bare_scripts() {
    let dir = temp_dir("inference-sweep");
    let scenario = common::root().join("scenarios/paper-base.toml");
    let sweep = dir.join("sweep.toml");
    std::fs::write(
        &sweep,
        format!(
            "name = \"s\"\nscenario = {:?}\npolicies = [\"CS2\", \"policies/least_slack.rhai\"]\n",
            scenario.display().to_string()
        ),
    )
    .unwrap();
    let out = vcsim(&["check", sweep.to_str().unwrap()]).stdout();
    assert!(
        out.contains("(1 cells x 2 policies x 1 replications = 2 runs)"),
        "{out}"
    );
}

#[test]
fn a_script_of_several_families_or_none_is_refused_with_its_hooks() {
    let dir = temp_dir("inference-scripts");
    let two = dir.join("two.rhai");
    std::fs::write(&two, "fn schedule(v) { [] }\nfn request(v) { #{} }\n").unwrap();
    let none = dir.join("none.rhai");
    std::fs::write(&none, "fn helper(x) { x }\n").unwrap();
    let two = two.display().to_string();
    let none = none.display().to_string();
    vcsim(&["run", "scenarios/paper-base.toml", "--policy", &two])
        .run()
        .fails_with(
            2,
            &["several families (cpu, fetch)", &format!("`cpu={two}`")],
        );
    vcsim(&["run", "scenarios/paper-base.toml", "--policy", &none])
        .run()
        .fails_with(2, &["defines no policy hook", "helper/1"]);
    vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--policy",
        "no/such.rhai",
    ])
    .run()
    .fails_with(2, &["no/such.rhai", "cannot read"]);
}

#[test]
fn an_unknown_name_lists_the_family_and_hints_at_plugins() {
    vcsim(&["run", "scenarios/paper-base.toml", "--policy", "CS9"])
        .run()
        .fails_with(
            2,
            &["no cpu policy named `cs9`", "cs1, cs2", "--plugin LIB"],
        );
    vcsim(&[
        "compare",
        "scenarios/paper-base.toml",
        "--policy",
        "CS2",
        "--policy",
        "fetch=foo",
    ])
    .run()
    .fails_with(
        2,
        &["no fetch policy named `foo`", "wf1", "wf2", "--plugin LIB"],
    );
    vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--policy",
        "cpu=cs2,disk=nope",
    ])
    .run()
    .fails_with(2, &["no disk policy named `nope`", "none", "--plugin LIB"]);
}
