//! What vcsim infers from a policy spec: a script named without its family
//! (`--policy x.rhai`) takes the family its hooks implement, and a name no
//! policy has is refused with the names the family knows (issue 16, item 4);
//! the label outputs show it by (`least_slack_WF2_WS2_JC2`, or the
//! `label=NAME` given), with the whole spec in a legend, a CSV column or a
//! JSON field (issue 16, item 3).

mod common;

use common::{temp_dir, vcsim};

/// A short run: the base scenario for five days.
const SHORT: [&str; 2] = ["--set", "duration_days=5"];

/// A sweep file in `dir` over the base scenario: `name`, `scenario` and
/// then `rest`.
fn write_sweep(dir: &std::path::Path, rest: &str) -> std::path::PathBuf {
    let sweep = dir.join("sweep.toml");
    let scenario = common::root().join("scenarios/paper-base.toml");
    let text = format!(
        "name = \"s\"\nscenario = {:?}\n{rest}",
        scenario.to_str().unwrap()
    );
    std::fs::write(&sweep, text).unwrap();
    sweep
}

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
    let sweep = write_sweep(
        &dir,
        "policies = [\"CS2\", \"policies/least_slack.rhai\"]\n",
    );
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

// ---- Labels: the short names outputs show (issue 16, item 3) ----

/// A five-day comparison of `policies` on the base scenario, in `format`.
fn compare(policies: &[&str], format: &str) -> String {
    let mut args = vec!["compare", "scenarios/paper-base.toml", "--format", format];
    for p in policies {
        args.extend(["--policy", p]);
    }
    args.extend(SHORT);
    vcsim(&args).stdout()
}

const SLACK_SPEC: &str = "cpu=policies/least_slack.rhai,fetch=wf2,send=ws2,estimate=jc2,disk=none";

#[test]
fn a_script_is_shown_by_its_stem_with_its_spec_in_a_legend() {
    let out = compare(&["CS2_WF2_WS2_JC2", "policies/least_slack.rhai"], "table");
    // The tables name the script's policy by its label...
    let header = out.lines().find(|l| l.starts_with("| metric")).unwrap();
    assert_eq!(
        header.split('|').map(str::trim).collect::<Vec<_>>(),
        [
            "",
            "metric",
            "CS2_WF2_WS2_JC2",
            "least_slack_WF2_WS2_JC2",
            ""
        ]
    );
    // ... and the legend under them says what it stands for; the paper's
    // notation is its own spec and gets no line.
    let legend: Vec<&str> = out.lines().filter(|l| l.contains(": ")).collect();
    assert_eq!(legend, [format!("least_slack_WF2_WS2_JC2: {SLACK_SPEC}")]);
    assert!(
        out.ends_with(&format!("\n\nleast_slack_WF2_WS2_JC2: {SLACK_SPEC}\n")),
        "{out}"
    );
    // A run says it the same way.
    let run = vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--policy",
        "policies/least_slack.rhai",
        "--set",
        "duration_days=5",
    ])
    .stdout();
    assert!(
        run.starts_with("scenario paper-base · policy least_slack_WF2_WS2_JC2 · seed 1\n"),
        "{run}"
    );
    assert!(
        run.ends_with(&format!("\nleast_slack_WF2_WS2_JC2: {SLACK_SPEC}\n")),
        "{run}"
    );
    // Only the paper's notation: no legend at all.
    let paper = compare(&["CS2_WF2_WS2_JC2", "CS1"], "table");
    assert!(!paper.contains(": "), "{paper}");
}

#[test]
fn label_names_a_policy_in_tables_csv_and_json() {
    let policies = [
        "CS2_WF2_WS2_JC2",
        "CS1,label=old",
        "policies/least_slack.rhai,label=mine",
    ];
    let table = compare(&policies, "table");
    let header = table.lines().find(|l| l.starts_with("| metric")).unwrap();
    assert_eq!(
        header.split('|').map(str::trim).collect::<Vec<_>>(),
        ["", "metric", "CS2_WF2_WS2_JC2", "old", "mine", ""]
    );
    assert!(
        table.contains("\ndifference from CS2_WF2_WS2_JC2 "),
        "{table}"
    );
    assert!(
        table.ends_with(&format!("\n\nold: CS1_WF2_WS2_JC2\nmine: {SLACK_SPEC}\n")),
        "{table}"
    );

    // CSV: the label, then the whole spec (which reads back as the policy).
    let csv = compare(&policies, "csv");
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("scenario,policy,spec,metric,"),
        "{csv}"
    );
    assert!(
        csv.contains("\npaper-base,CS2_WF2_WS2_JC2,CS2_WF2_WS2_JC2,idleness,"),
        "{csv}"
    );
    assert!(
        csv.contains("\npaper-base,old,\"CS1_WF2_WS2_JC2,label=old\",idleness,"),
        "{csv}"
    );
    assert!(
        csv.contains(&format!(
            "\npaper-base,mine,\"{SLACK_SPEC},label=mine\",idleness,"
        )),
        "{csv}"
    );

    // JSON: `policy` is the label, `spec` the whole spec.
    let json: serde_json::Value = serde_json::from_str(&compare(&policies, "json")).unwrap();
    let named: Vec<(&str, &str)> = json["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["policy"].as_str().unwrap(), p["spec"].as_str().unwrap()))
        .collect();
    let mine = format!("{SLACK_SPEC},label=mine");
    assert_eq!(
        named,
        [
            ("CS2_WF2_WS2_JC2", "CS2_WF2_WS2_JC2"),
            ("old", "CS1_WF2_WS2_JC2,label=old"),
            ("mine", mine.as_str()),
        ]
    );
    assert_eq!(json["differences"][0]["policy"], "old");
    assert_eq!(json["differences"][0]["baseline"], "CS2_WF2_WS2_JC2");

    // `run --format json` too; its `spec` given back runs the same policy.
    let run = run_json("policies/least_slack.rhai,label=mine");
    let r: serde_json::Value = serde_json::from_str(&run).unwrap();
    assert_eq!(
        (&r["policy"], &r["spec"]),
        (&"mine".into(), &mine.clone().into())
    );
    assert_eq!(run_json(&mine), run);
}

#[test]
fn two_policies_of_one_label_are_refused_naming_both() {
    // Two scripts of one stem would both be `least_slack_WF2_WS2_JC2`.
    let dir = temp_dir("labels-clash");
    let copy = dir.join("least_slack.rhai");
    std::fs::copy(common::root().join("policies/least_slack.rhai"), &copy).unwrap();
    let copy = copy.to_str().unwrap();
    vcsim(&[
        "compare",
        "scenarios/paper-base.toml",
        "--policy",
        "policies/least_slack.rhai",
        "--policy",
        copy,
    ])
    .run()
    .fails_with(
        2,
        &[
            &format!("policies `{SLACK_SPEC}` and `cpu={copy},"),
            "are both labelled `least_slack_WF2_WS2_JC2`",
            "label=NAME",
        ],
    );
    // So is a label that another policy already has; a label of its own
    // tells them apart.
    vcsim(&[
        "compare",
        "scenarios/paper-base.toml",
        "--policy",
        "CS2",
        "--policy",
        "CS1,label=CS2_WF2_WS2_JC2",
    ])
    .run()
    .fails_with(
        2,
        &["`CS2_WF2_WS2_JC2` and `CS1_WF2_WS2_JC2,label=CS2_WF2_WS2_JC2`"],
    );
    let out = compare(
        &["policies/least_slack.rhai", &format!("{copy},label=copy")],
        "table",
    );
    assert!(out.contains(&format!("\ncopy: cpu={copy},")), "{out}");
    // A sweep refuses them at the line of the second.
    let sweep = write_sweep(
        &dir,
        "policies = [\n  \"CS1,label=a\",\n  \"CS2,label=a\",\n]\n",
    );
    vcsim(&["check", sweep.to_str().unwrap()])
        .run()
        .fails_with(2, &["sweep.toml:5: key `policies`", "both labelled `a`"]);
}

#[test]
fn a_bad_label_is_refused_naming_the_spec() {
    for (spec, why) in [
        ("CS1,label=", "`label=` needs a name"),
        ("CS1,label=a,label=b", "the label is given twice"),
        ("CS1,label=a=b", "holds `,` or `=`"),
        ("CS1,label=x\u{1b}[2J", "holds a control character"),
        (
            "CS1,label=a label of more than forty characters in all",
            "longer than 40 characters",
        ),
    ] {
        vcsim(&["run", "scenarios/paper-base.toml", "--policy", spec])
            .run()
            .fails_with(2, &["policy `CS1,label=", why]);
    }
}

#[test]
fn a_sweep_writes_labels_beside_the_whole_specs() {
    let dir = temp_dir("labels-sweep");
    let sweep = write_sweep(
        &dir,
        "policies = [\"CS2\", \"policies/least_slack.rhai\", \"CS1,label=old\"]\nmetrics = [\"waste\"]\n[set]\nduration_days = 2\n[[axis]]\nparam = \"slack\"\nvalues = [1, 2]\n",
    );
    let out = dir.join("out");
    vcsim(&[
        "sweep",
        sweep.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .run()
    .succeeds();
    let results = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(
        results.starts_with("cell,slack,policy,spec,replication,"),
        "{results}"
    );
    for row in [
        "0,1,CS2_WF2_WS2_JC2,CS2_WF2_WS2_JC2,0,".to_string(),
        format!("0,1,least_slack_WF2_WS2_JC2,\"{SLACK_SPEC}\",0,"),
        "0,1,old,\"CS1_WF2_WS2_JC2,label=old\",0,".to_string(),
    ] {
        assert!(results.contains(&format!("\n{row}")), "{row}: {results}");
    }
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(
        summary.starts_with("cell,slack,policy,spec,metric,"),
        "{summary}"
    );
    // The plot's legend: the labels, the whole specs in <title>s.
    let svg = std::fs::read_to_string(out.join("waste.svg")).unwrap();
    for label in ["CS2_WF2_WS2_JC2", "least_slack_WF2_WS2_JC2", "old"] {
        assert!(
            svg.contains(&format!("\n{label}\n</text>")),
            "{label}: {svg}"
        );
    }
    assert!(
        svg.contains(&format!("<g><title>{SLACK_SPEC}</title><text")),
        "{svg}"
    );
    assert!(!svg.contains("every policy"), "{svg}");
    // The manifest keeps the whole specs, labels given included.
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("\"CS1_WF2_WS2_JC2,label=old\""),
        "{manifest}"
    );
    // Merging reads the rows back by their specs: the same bytes.
    let merged = dir.join("merged");
    vcsim(&[
        "merge",
        out.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ])
    .run()
    .succeeds();
    assert_eq!(
        std::fs::read_to_string(merged.join("results.csv")).unwrap(),
        results
    );
}
