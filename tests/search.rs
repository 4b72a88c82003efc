//! `vcsim search`: it finds a planted weakness and shrinks it to the
//! minimal scenario that shows it; its outputs are what the book says;
//! bad arguments are refused.

mod common;

use common::{root, temp_dir, vcsim};
use std::path::{Path, PathBuf};
use vcsim_framework::Scenario;

/// The shipped scripted CS2 with a weakness planted: on exactly 3 CPUs,
/// with a job whose slack (latency bound over its run time on one CPU) is
/// under 2, it runs nothing. Elsewhere it is CS2, to the bit.
fn planted(dir: &Path) -> PathBuf {
    let cs2 = std::fs::read_to_string(root().join("policies/cs2.rhai")).unwrap();
    let weak = cs2.replacen(
        "fn schedule(v) {\n",
        "fn schedule(v) {
    if v.host.ncpus == 3.0 {
        for j in v.jobs {
            if j.latency_bound / (j.flops_estimate / v.host.cpu_flops) < 2.0 {
                return [];
            }
        }
    }
",
        1,
    );
    assert_ne!(weak, cs2, "policies/cs2.rhai has no `fn schedule(v)`");
    let path = dir.join("planted.rhai");
    std::fs::write(&path, weak).unwrap();
    path
}

/// A space around a 3-day base scenario whose host is always on and whose
/// buffer is small, so that slack under 2 still lets CS2 meet deadlines.
fn space(dir: &Path) -> PathBuf {
    let base = std::fs::read_to_string(root().join("scenarios/paper-base.toml"))
        .unwrap()
        .replace("duration_days = 100", "duration_days = 3")
        .replace("fraction = 0.8", "fraction = 1.0")
        .replace("work_buf_min_days = 0.1", "work_buf_min_days = 0.01");
    std::fs::write(dir.join("base.toml"), base).unwrap();
    let path = dir.join("space.toml");
    std::fs::write(
        &path,
        "name = \"planted\"\nscenario = \"base.toml\"\n[vary]\n\"host.ncpus\" = [1, 6]\nslack = [1.0, 3.0]\nmix = [1, 3]\n",
    )
    .unwrap();
    path
}

/// `vcsim search --policy A --policy B --metric M --space SPACE --out OUT`
/// and `rest`, which must succeed: its standard output.
fn search(a: &str, b: &str, metric: &str, space: &Path, out: &Path, rest: &[&str]) -> String {
    let mut args = vec![
        "search",
        "--policy",
        a,
        "--policy",
        b,
        "--metric",
        metric,
        "--space",
        space.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(rest);
    vcsim(&args).run().succeeds()
}

#[test]
fn search_finds_a_planted_weakness_and_shrinks_it_to_three_cpus_and_one_project() {
    let dir = temp_dir("search-planted");
    // A file name a shell would run a command from, were it not quoted.
    let script = dir.join("it's $(touch INJECTED).rhai");
    std::fs::rename(planted(&dir), &script).unwrap();
    let out = dir.join("out");
    let policy_a = format!("cpu={},label=planted_WF2_WS2_JC2", script.display());
    let text = search(
        &policy_a,
        "CS2",
        "idleness",
        &space(&dir),
        &out,
        &["--budget", "480", "--seeds", "3"],
    );
    assert!(
        text.contains("found: planted_WF2_WS2_JC2 is worse than CS2_WF2_WS2_JC2 on idleness"),
        "{text}"
    );
    let worst = out.join("worst.toml");
    let scn = Scenario::load(&worst).unwrap();
    assert_eq!(scn.host.ncpus, 3, "{text}");
    assert_eq!(scn.projects.len(), 1, "{text}");
    let p = &scn.projects[0];
    let run_time = p.apps[0].flops_estimate / scn.host.cpu_flops;
    let slack = p.latency_bound_days * 86400.0 / run_time;
    assert!(slack < 2.0, "slack {slack}: {text}");
    // Parameters the weakness does not need are back to the base's, and
    // what is left is round.
    assert!(text.contains("shrunk: "), "{text}");
    let shrunk = text.lines().find(|l| l.starts_with("shrunk: ")).unwrap();
    assert!(!shrunk.contains("mix="), "{shrunk}");
    assert!(shrunk.contains("host.ncpus=3"), "{shrunk}");
    // What the comment block says to run shows the same loss, run as
    // written by a shell, and runs nothing else.
    let toml = std::fs::read_to_string(&worst).unwrap();
    assert!(toml.starts_with("# Found by `vcsim search`"), "{toml}");
    let command = toml
        .lines()
        .skip_while(|l| *l != "# Check it with:")
        .nth(1)
        .and_then(|l| l.strip_prefix("#   vcsim "))
        .unwrap_or_else(|| panic!("no command in {toml}"));
    let bin = env!("CARGO_BIN_EXE_vcsim");
    let shell = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("'{bin}' {command} --format json"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(shell.status.success(), "{command}: {shell:?}");
    assert!(!dir.join("INJECTED").exists(), "{command}");
    let c = String::from_utf8(shell.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(&c).unwrap();
    let d = v["differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["metric"] == "idleness")
        .unwrap();
    assert_eq!(d["verdict"], "worse", "{c}");
    // The trail has every point, the plot is drawn.
    let trail = std::fs::read_to_string(out.join("trail.csv")).unwrap();
    assert!(
        trail.starts_with("index,phase,mix,host.ncpus,slack,duration_days,projects,no_gpu,runs,loss,ci_low,ci_high,significant,error\n"),
        "{trail}"
    );
    assert!(trail.contains(",shrink,"), "{trail}");
    let svg = std::fs::read_to_string(out.join("best.svg")).unwrap();
    assert!(svg.contains("runs spent"), "{svg}");
}

#[test]
fn a_search_is_the_same_on_any_number_of_threads() {
    let dir = temp_dir("search-threads");
    let space = space(&dir);
    let mut trails = Vec::new();
    for jobs in ["1", "2"] {
        let out = dir.join(format!("out-{jobs}"));
        search(
            "CS1",
            "CS2",
            "waste",
            &space,
            &out,
            &["--budget", "96", "--seeds", "2", "--jobs", jobs],
        );
        trails.push(std::fs::read_to_string(out.join("trail.csv")).unwrap());
    }
    assert_eq!(trails[0], trails[1]);
}

#[test]
fn no_loss_is_said_and_exits_zero() {
    let dir = temp_dir("search-none");
    let out = dir.join("out");
    // The same policy under another label (the same policy twice is refused).
    let text = search(
        "CS2",
        "CS2,label=again",
        "waste",
        &space(&dir),
        &out,
        &["--budget", "48", "--seeds", "2"],
    );
    assert!(text.contains("no significant loss: CS2_WF2_WS2_JC2 is not worse than again on waste at any of the 12 points tried"), "{text}");
    assert!(!out.join("worst.toml").exists());
    assert!(out.join("trail.csv").exists());
}

#[test]
fn bad_searches_are_refused_naming_the_problem() {
    let dir = temp_dir("search-bad");
    let space = space(&dir);
    let s = space.to_str().unwrap();
    let base = ["search", "--policy", "CS1", "--policy", "CS2"];
    let with = |rest: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(rest);
        vcsim(&a).run()
    };
    with(&["--metric", "speed", "--space", s]).fails_with(2, &["--metric speed: not a metric"]);
    with(&["--metric", "waste"]).fails_with(2, &["give --space FILE"]);
    with(&["--metric", "waste", "--space", s, "--seeds", "1"])
        .fails_with(2, &["--seeds must be 2 to 1000"]);
    with(&["--metric", "waste", "--space", s, "--budget", "3"])
        .fails_with(2, &["--budget must be 10 to"]);
    vcsim(&[
        "search", "--policy", "CS1", "--metric", "waste", "--space", s,
    ])
    .run()
    .fails_with(2, &["give two policies"]);
    let bad = dir.join("bad-space.toml");
    std::fs::write(
        &bad,
        "name = \"x\"\nscenario = \"base.toml\"\n[vary]\n\"host.ncpus\" = [8, 2]\n",
    )
    .unwrap();
    with(&["--metric", "waste", "--space", bad.to_str().unwrap()]).fails_with(
        2,
        &["bad-space.toml:4: key `vary.host.ncpus`: the low end 8 is above the high end 2"],
    );
    std::fs::write(
        &bad,
        "name = \"x\"\nscenario = \"base.toml\"\n[vary]\n\"host.ncpus\" = [1, 100000]\n",
    )
    .unwrap();
    with(&["--metric", "waste", "--space", bad.to_str().unwrap()])
        .fails_with(2, &["bad-space.toml:4: key `vary.host.ncpus`: at 100000:"]);
    // `check` knows space files, good and bad.
    vcsim(&["check", bad.to_str().unwrap()])
        .run()
        .fails_with(2, &["bad-space.toml:4: key `vary.host.ncpus`: at 100000:"]);
    // A float end on a whole-number key says to give integers; an extreme
    // end prints as written, not as 300 digits.
    for (range, want) in [
        ("\"host.ncpus\" = [1, 1e300]", "give both ends as integers"),
        (
            "slack = [1e-300, 5.0]",
            "key `vary.slack`: at 1e-300: key `project.0.latency_bound_days`",
        ),
    ] {
        std::fs::write(
            &bad,
            format!("name = \"x\"\nscenario = \"base.toml\"\n[vary]\n{range}\n"),
        )
        .unwrap();
        with(&["--metric", "waste", "--space", bad.to_str().unwrap()]).fails_with(2, &[want]);
    }
    let ok = vcsim(&["check", s]).stdout();
    assert!(
        ok.ends_with("space.toml: search space `planted` is valid: mix 1..3, host.ncpus 1..6, slack 1..3 around scenario `paper-base`\n"),
        "{ok}"
    );
}

#[test]
fn a_search_cut_into_shards_is_merged_and_shrunk() {
    let dir = temp_dir("search-shards");
    let space = space(&dir);
    let shard = |k: &str, out: &str, metric: &str| {
        let out = dir.join(out);
        let text = search(
            "CS1",
            "CS2",
            metric,
            &space,
            &out,
            &["--budget", "96", "--seeds", "2", "--shard", k],
        );
        assert!(
            text.starts_with(&format!("shard {k}: 12 points, ")),
            "{text}"
        );
        out
    };
    let (a, b) = (shard("1/2", "a", "waste"), shard("2/2", "b", "waste"));
    let merged = dir.join("merged");
    let text = vcsim(&[
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ])
    .run()
    .succeeds();
    assert!(text.contains("trail: "), "{text}");
    // The merged trail is the shards' points in shard order, then shrinking's.
    let rows = |p: &Path| -> Vec<String> {
        std::fs::read_to_string(p.join("trail.csv"))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split(',').skip(1).take(5).collect::<Vec<_>>().join(","))
            .collect()
    };
    let (ra, rb, rm) = (rows(&a), rows(&b), rows(&merged));
    assert_eq!(rm[..ra.len()], ra[..]);
    assert_eq!(rm[ra.len()..ra.len() + rb.len()], rb[..]);
    assert!(!merged.join("search.json").exists());
    // Shards of another search, or a shard missing, are refused.
    let other = shard("2/2", "other", "idleness");
    vcsim(&[
        "merge",
        a.to_str().unwrap(),
        other.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ])
    .run()
    .fails_with(2, &["a shard of another search"]);
    vcsim(&[
        "merge",
        a.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ])
    .run()
    .fails_with(2, &["cut into 2 shards; these are shards [1]"]);
}
