//! The eighteenth hostile probe, on sweeps, searches, merges and compare:
//! outputs through symbolic links, names printed with control characters,
//! seeds past the largest, plugins, shard directories of two kinds, missing
//! keys and dotted keys, compare with every policy failed, log-scale tick
//! labels. One test per finding, each asserting the exit status and the
//! message.

mod common;

use common::{dir_with_base, timed, vcsim, Run};
use std::path::Path;

/// A search of CS1 against CS2 on waste in `space.toml` (slack and CPUs
/// around `base.toml`): 1-day runs on two seeds, 16 runs, then `rest`.
fn search<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    common::search_args("CS1", "waste", "16", rest)
}

fn write_space(dir: &Path) {
    std::fs::write(
        dir.join("space.toml"),
        "name = \"s\"\nscenario = \"base.toml\"\n[vary]\nslack = [1.0, 3.0]\n\"host.ncpus\" = [1, 2]\n",
    )
    .unwrap();
}

/// A sweep file `sweep.toml` beside `base.toml`: CS2, a run of an hour,
/// then `rest`.
fn write_sweep(dir: &Path, rest: &str) {
    std::fs::write(
        dir.join("sweep.toml"),
        format!(
            "name = \"t\"\nscenario = \"base.toml\"\npolicies = [\"CS2\"]\n\
             [set]\nduration_days = 0.04\n{rest}"
        ),
    )
    .unwrap();
}

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn run_in(dir: &Path, args: &[&str]) -> Run {
    timed(vcsim(args).cwd(dir))
}

// ---- Finding 6: search and merge wrote through a symbolic link ----

#[cfg(unix)]
#[test]
fn search_and_merge_replace_a_symbolic_link_never_write_through_it() {
    let dir = dir_with_base("probe18-symlink");
    write_space(&dir);
    std::fs::write(dir.join("precious.txt"), "mine\n").unwrap();
    let link = |out: &str, name: &str| {
        std::fs::create_dir_all(dir.join(out)).unwrap();
        std::os::unix::fs::symlink("../precious.txt", dir.join(out).join(name)).unwrap();
    };
    // A whole search: trail.csv and best.svg.
    link("so", "trail.csv");
    link("so", "best.svg");
    run_in(&dir, &search(&["--out", "so"])).succeeds();
    // Shards, then their merge into a directory whose outputs are links.
    for (k, out) in [("1/2", "h1"), ("2/2", "h2")] {
        link(out, "trail.csv");
        link(out, "search.json");
        run_in(&dir, &search(&["--shard", k, "--out", out])).succeeds();
    }
    for name in ["trail.csv", "best.svg", "worst.toml", "search.json"] {
        link("hm", name);
    }
    run_in(&dir, &["merge", "h1", "h2", "--out", "hm"]).succeeds();
    assert_eq!(read(dir.join("precious.txt")), "mine\n");
    for p in [
        "so/trail.csv",
        "so/best.svg",
        "h1/trail.csv",
        "h2/search.json",
        "hm/trail.csv",
        "hm/best.svg",
    ] {
        let m = std::fs::symlink_metadata(dir.join(p)).unwrap();
        assert!(m.file_type().is_file(), "{p} is the output, not a link");
    }
    assert!(read(dir.join("hm/trail.csv")).starts_with("index,"));
}

// ---- Findings 2 and 3: a sweep's seed as a string; seeds past the largest ----

#[test]
fn a_sweep_seed_takes_a_string_of_digits_as_a_scenario_does() {
    let dir = dir_with_base("probe18-seed-string");
    write_sweep(&dir, "");
    let text = read(dir.join("sweep.toml")).replace(
        "policies = [\"CS2\"]\n",
        "policies = [\"CS2\"]\nseed = \"18446744073709551614\"\nreplications = 2\n",
    );
    std::fs::write(dir.join("sweep.toml"), text).unwrap();
    run_in(&dir, &["sweep", "sweep.toml", "--out", "o"]).succeeds();
    let csv = read(dir.join("o/results.csv"));
    assert!(
        csv.contains(",18446744073709551614,") && csv.contains(",18446744073709551615,"),
        "{csv}"
    );
    // Anything else is refused as a scenario's seed is.
    std::fs::write(
        dir.join("bad.toml"),
        "name = \"t\"\nscenario = \"base.toml\"\npolicies = [\"CS2\"]\nseed = -5\n",
    )
    .unwrap();
    run_in(&dir, &["sweep", "bad.toml", "--out", "o"]).fails_with(
        2,
        &[
            "bad.toml:4: key `seed`",
            "a whole number from 0 to 18446744073709551615",
        ],
    );
}

#[test]
fn seeds_past_the_largest_are_refused_by_sweep_search_and_compare() {
    let dir = dir_with_base("probe18-seed-wrap");
    let base =
        read(dir.join("base.toml")).replace("\nseed = 1\n", "\nseed = \"18446744073709551615\"\n");
    assert!(base.contains("18446744073709551615"));
    std::fs::write(dir.join("base.toml"), base).unwrap();
    write_sweep(&dir, "");
    let text = read(dir.join("sweep.toml")).replace(
        "policies = [\"CS2\"]\n",
        "policies = [\"CS2\"]\nreplications = 3\n",
    );
    std::fs::write(dir.join("sweep.toml"), text).unwrap();
    run_in(&dir, &["sweep", "sweep.toml", "--out", "o"]).fails_with(
        2,
        &[
            "sweep.toml:4: key `replications`",
            "the seed of `base.toml`, 18446744073709551615, with 3 replications",
            "would pass 18446744073709551615",
        ],
    );
    assert!(
        !dir.join("o/results.csv").exists(),
        "refused before any run"
    );
    // compare does not blame a --seed it was not given.
    let r = run_in(
        &dir,
        &[
            "compare",
            "base.toml",
            "--policy",
            "CS2",
            "--replications",
            "3",
        ],
    );
    r.fails_with(
        2,
        &["the scenario's `seed`, 18446744073709551615, with 3 replications"],
    );
    assert!(
        !r.stderr().contains("--seed 18446744073709551615"),
        "{}",
        r.stderr()
    );
    run_in(
        &dir,
        &[
            "compare",
            "base.toml",
            "--policy",
            "CS2",
            "--replications",
            "3",
            "--seed",
            "18446744073709551614",
        ],
    )
    .fails_with(2, &["--seed 18446744073709551614 with 3 replications"]);
    write_space(&dir);
    run_in(&dir, &search(&["--out", "so"])).fails_with(
        2,
        &[
            "space.toml: the scenario's `seed`, 18446744073709551615, with --seeds 2",
            "would pass",
        ],
    );
}

// ---- Finding 11: a path into a project that `mix` makes ----

#[test]
fn a_space_may_vary_a_project_that_its_mix_makes_at_every_point() {
    let dir = dir_with_base("probe18-space-mix");
    let space = |mix: &str| {
        format!("name = \"m\"\nscenario = \"base.toml\"\n[vary]\nmix = {mix}\n\"project.1.resource_share\" = [10, 1000]\n")
    };
    std::fs::write(dir.join("space.toml"), space("[2, 4]")).unwrap();
    let out = run_in(&dir, &["check", "space.toml"]).succeeds();
    assert!(out.contains("is valid"), "{out}");
    run_in(
        &dir,
        &common::search_args("CS1", "share_violation", "16", &["--out", "so"]),
    )
    .succeeds();
    // With a mix of one project somewhere, project 1 is missing there.
    std::fs::write(dir.join("space.toml"), space("[1, 4]")).unwrap();
    run_in(&dir, &["check", "space.toml"]).fails_with(
        2,
        &[
            "space.toml:5: key `vary.project.1.resource_share`",
            "with mix = 1",
            "index 1 is out of range",
        ],
    );
}

// ---- Finding 8: compare with every policy failed printed nothing ----

#[test]
fn compare_with_every_policy_failed_prints_the_empty_comparison() {
    let dir = dir_with_base("probe18-compare-all-fail");
    std::fs::write(
        dir.join("bad.rhai"),
        "fn schedule(v) {\n    if v.now > 2000.0 { throw \"boom\"; }\n    []\n}\n",
    )
    .unwrap();
    let compare = |format: &str| {
        let r = run_in(
            &dir,
            &[
                "compare",
                "base.toml",
                "--policy",
                "bad.rhai",
                "--replications",
                "2",
                "--set",
                "duration_days=0.1",
                "--format",
                format,
            ],
        );
        r.fails_with(1, &["policy `cpu=bad.rhai", "boom"]);
        r.stdout()
    };
    let table = compare("table");
    assert!(
        table.contains("policy bad_WF2_WS2_JC2 failed: no results"),
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&compare("json")).expect("a JSON document");
    assert_eq!(json["policies"], serde_json::json!([]));
    assert_eq!(json["failed"][0]["policy"], "bad_WF2_WS2_JC2");
    assert!(json["failed"][0]["error"]
        .as_str()
        .unwrap()
        .contains("boom"));
    assert_eq!(compare("csv").lines().next(), Some("scenario,policy,spec,metric,mean,ci_low,ci_high,diff_mean,diff_ci_low,diff_ci_high,verdict"));
}

// ---- Finding 14: log-scale tick labels in full digits ----

#[test]
fn log_scale_tick_labels_are_short() {
    let dir = dir_with_base("probe18-log-ticks");
    write_sweep(
        &dir,
        "[[axis]]\nparam = \"project.0.app.0.flops_mean\"\nvalues = [1e12, 1e14, 1e16, 1e18, 1e20]\n",
    );
    run_in(&dir, &["sweep", "sweep.toml", "--out", "o"]).succeeds();
    let svg = read(dir.join("o/waste.svg"));
    assert!(svg.contains("log scale"), "a log axis");
    for t in ["1e12", "1e15", "1e20"] {
        assert!(
            svg.contains(&format!("\n{t}\n")) || svg.contains(&format!(">{t}<")),
            "tick {t}: {svg}"
        );
    }
    assert!(!svg.contains("100000000000000000000"), "{svg}");
    assert!(!svg.contains("1000000000000"), "{svg}");
}

// ---- Finding 1: control characters of --out printed raw on success ----

#[test]
fn an_out_with_control_characters_is_printed_escaped() {
    let dir = dir_with_base("probe18-out-controls");
    write_sweep(&dir, "");
    write_space(&dir);
    let out = "o\u{1b}[31mRED";
    let shown = "o\\u{1b}[31mRED";
    let r = run_in(&dir, &["sweep", "sweep.toml", "--out", out]);
    r.succeeds();
    assert!(
        r.stderr().contains(&format!("1 runs written to {shown}")),
        "{}",
        r.stderr()
    );
    let r = run_in(&dir, &["merge", out, "--out", "m\u{7}"]);
    r.succeeds();
    assert!(
        r.stderr().contains("1 runs written to m\\u{7}"),
        "{}",
        r.stderr()
    );
    let r = run_in(&dir, &search(&["--out", out]));
    let text = r.succeeds() + &r.stderr();
    assert!(
        text.contains(&format!("trail: {shown}/trail.csv")) && !text.contains('\u{1b}'),
        "{text}"
    );
}

#[test]
fn a_line_break_in_an_argument_or_a_named_path_is_refused() {
    // Messages keep their line breaks: one in a path they quote went out
    // raw and could forge a line ("error: ..."). It is refused, escaped.
    let dir = dir_with_base("probe27-line-breaks");
    write_sweep(&dir, "");
    write_space(&dir);
    let out = "o\nerror: FAKE";
    for args in [
        vec!["sweep", "sweep.toml", "--out", out],
        vec!["merge", out, "--out", "m"],
        search(&["--out", out]),
    ] {
        let r = run_in(&dir, &args);
        r.fails_with(2, &["o\\nerror: FAKE", "holds a line break"]);
        assert!(!r.stderr().contains("\nerror: FAKE"), "{}", r.stderr());
    }
    std::fs::write(
        dir.join("bad.toml"),
        "name = \"b\"\nscenario = \"a\\nb.toml\"\npolicies = [\"CS2\"]\n",
    )
    .unwrap();
    run_in(&dir, &["check", "bad.toml"]).fails_with(
        2,
        &[
            "bad.toml:2",
            "`scenario`",
            "`a\\nb.toml` holds a line break",
        ],
    );
}

// ---- Findings 12 and 10: a bad --plugin; merge's --jobs ----

#[test]
fn a_plugin_that_cannot_load_is_its_own_error() {
    let dir = dir_with_base("probe18-plugin");
    write_sweep(&dir, "[[axis]]\nparam = \"slack\"\nvalues = [2, 3]\n");
    write_space(&dir);
    for (k, out) in [("1/2", "w1"), ("2/2", "w2")] {
        run_in(&dir, &["sweep", "sweep.toml", "--shard", k, "--out", out]).succeeds();
    }
    for (k, out) in [("1/2", "h1"), ("2/2", "h2")] {
        run_in(&dir, &search(&["--shard", k, "--out", out])).succeeds();
    }
    for args in [
        vec!["sweep", "sweep.toml", "--out", "o"],
        vec!["check", "sweep.toml"],
        vec!["merge", "w1", "w2", "--out", "wm"],
        vec!["merge", "h1", "h2", "--out", "hm"],
    ] {
        let mut a = args.clone();
        a.extend(["--plugin", "nonexist.so"]);
        let r = run_in(&dir, &a);
        r.fails_with(2, &["nonexist.so: cannot open plugin"]);
        let err = r.stderr();
        assert!(
            !err.contains("policies")
                && !err.contains("search.json")
                && !err.contains("sweep.toml"),
            "{args:?}: {err}"
        );
    }
    assert!(!dir.join("wm/manifest.json").exists());
}

#[test]
fn merge_of_search_shards_takes_jobs() {
    let dir = dir_with_base("probe18-merge-jobs");
    write_space(&dir);
    for (k, out) in [("1/2", "h1"), ("2/2", "h2")] {
        run_in(&dir, &search(&["--shard", k, "--out", out])).succeeds();
    }
    let one = run_in(&dir, &["merge", "h1", "h2", "--out", "m1", "--jobs", "1"]);
    one.succeeds();
    run_in(&dir, &["merge", "h1", "h2", "--out", "m3", "--jobs", "3"]).succeeds();
    assert_eq!(
        read(dir.join("m1/trail.csv")),
        read(dir.join("m3/trail.csv"))
    );
    run_in(&dir, &["merge", "h1", "h2", "--out", "m0", "--jobs", "0"])
        .fails_with(2, &["--jobs must be at least 1"]);
    let help = run_in(&dir, &["merge", "--help"]).succeeds();
    for h in ["--jobs", "The shard directories", "The directory written"] {
        assert!(help.contains(h), "{help}");
    }
}

// ---- Finding 4: a shard directory holding both kinds of manifest ----

#[test]
fn a_shard_beside_a_stale_manifest_of_the_other_kind_is_merged_as_its_kind() {
    let dir = dir_with_base("probe18-both-manifests");
    write_sweep(&dir, "[[axis]]\nparam = \"slack\"\nvalues = [2, 3, 4]\n");
    write_space(&dir);
    // d1 held a search shard first; then the sweep's shards were made.
    run_in(&dir, &search(&["--shard", "1/2", "--out", "d1"])).succeeds();
    for (k, out) in [("1/2", "d1"), ("2/2", "d2")] {
        run_in(&dir, &["sweep", "sweep.toml", "--shard", k, "--out", out]).succeeds();
    }
    assert!(dir.join("d1/search.json").is_file() && dir.join("d1/manifest.json").is_file());
    for (a, b, out) in [("d1", "d2", "m12"), ("d2", "d1", "m21")] {
        run_in(&dir, &["merge", a, b, "--out", out]).succeeds();
        assert!(dir.join(out).join("results.csv").is_file());
    }
    // With every directory holding both, nothing says which: both named.
    std::fs::copy(dir.join("d1/search.json"), dir.join("d2/search.json")).unwrap();
    run_in(&dir, &["merge", "d1", "d2", "--out", "m"]).fails_with(
        2,
        &["d1: holds both a sweep's shard (d1/manifest.json) and a search's (d1/search.json)"],
    );
}

// ---- Findings 13 and 7: a missing key; an unquoted dotted key ----

#[test]
fn a_missing_key_is_named_without_a_line_and_a_space_without_vary_is_a_space() {
    let dir = dir_with_base("probe18-missing-key");
    std::fs::write(
        dir.join("nopol.toml"),
        "name = \"np\"\nscenario = \"base.toml\"\n[[axis]]\nparam = \"slack\"\nvalues = [1, 2]\n",
    )
    .unwrap();
    let r = run_in(&dir, &["sweep", "nopol.toml", "--out", "o"]);
    r.fails_with(2, &["nopol.toml: the key `policies` is missing"]);
    assert!(
        !r.stderr().contains("key `name`") && !r.stderr().contains(":1:"),
        "{}",
        r.stderr()
    );
    std::fs::write(
        dir.join("space.toml"),
        "scenario = \"base.toml\"\nname = \"e\"\n",
    )
    .unwrap();
    for args in [vec!["check", "space.toml"], search(&["--out", "so"])] {
        let r = run_in(&dir, &args);
        r.fails_with(2, &["space.toml: the key `vary` is missing"]);
        assert!(
            !r.stderr().contains("unknown field `scenario`"),
            "{}",
            r.stderr()
        );
    }
}

#[test]
fn an_unquoted_dotted_key_is_told_to_be_quoted() {
    let dir = dir_with_base("probe18-dotted-key");
    write_sweep(&dir, "host.ncpus = 2\n");
    let r = run_in(&dir, &["sweep", "sweep.toml", "--out", "o"]);
    r.fails_with(
        2,
        &[
            "sweep.toml:6: key `set.host.ncpus`",
            "quote it, as in `\"host.ncpus\" = ...`",
        ],
    );
    assert!(!r.stderr().contains("borrowed"), "{}", r.stderr());
    std::fs::write(
        dir.join("space.toml"),
        "name = \"s\"\nscenario = \"base.toml\"\n[vary]\nhost.ncpus = [1, 4]\n",
    )
    .unwrap();
    for args in [vec!["check", "space.toml"], search(&["--out", "so"])] {
        run_in(&dir, &args).fails_with(2, &["space.toml:4: key `vary.host.ncpus`", "quote it"]);
    }
}
