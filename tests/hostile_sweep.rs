//! Hostile sweep files and shard directories: every bound holds before
//! anything is built from it. One case per finding, each asserting the exit
//! status, the message and that the command ends within a few seconds.

mod common;

use common::{dir_with_base, timed, vcsim, Run};
use std::path::{Path, PathBuf};

/// A directory with `base.toml` (the paper's base scenario) and
/// `sweep.toml`: one policy, a run of an hour, then `rest` (its axes).
fn sweep_dir(name: &str, rest: &str) -> PathBuf {
    let dir = dir_with_base(name);
    write_sweep(&dir, "\"t\"", rest);
    dir
}

fn write_sweep(dir: &Path, name: &str, rest: &str) {
    std::fs::write(
        dir.join("sweep.toml"),
        format!(
            "name = {name}\nscenario = \"base.toml\"\npolicies = [\"CS2_WF2_WS2_JC2\"]\n\
             [set]\nduration_days = 0.04\n{rest}"
        ),
    )
    .unwrap();
}

/// `n` distinct values from `from` by `step`, as a TOML list.
fn values(n: usize, from: f64, step: f64) -> String {
    let v: Vec<String> = (0..n)
        .map(|i| format!("{}", from + i as f64 * step))
        .collect();
    format!("[{}]", v.join(", "))
}

// ---- Seeds are the sweep's ----

#[test]
fn a_seed_in_set_or_as_an_axis_is_refused_the_sweep_gives_the_seeds() {
    // Every run took its seed from the sweep's `seed` and `replications`:
    // four cells over `seed` ran on one seed and gave one result.
    for (name, rest, key) in [
        (
            "hostile-sweep-seed-axis",
            "[[axis]]\nparam = \"seed\"\nvalues = [1, 2, 3]\n",
            "axis.0.param",
        ),
        ("hostile-sweep-seed-set", "seed = 5\n", "set.seed"),
    ] {
        let dir = sweep_dir(name, rest);
        for args in [
            vec!["check", "sweep.toml"],
            vec!["sweep", "sweep.toml", "--out", "out"],
        ] {
            timed(vcsim(&args).cwd(&dir)).fails_with(
                2,
                &[
                    &format!("key `{key}`"),
                    "a sweep gives every run its seed",
                    "`replications`",
                ],
            );
        }
        assert!(!dir.join("out").exists(), "nothing was written");
    }
}

// ---- The size of a sweep (findings 1 and 2) ----

#[test]
fn two_huge_axes_are_refused_before_a_cell_is_built() {
    // 10,000 x 10,000 values in 150 KB: a hundred million cells, whose
    // scenarios were all built first (an abort asking for 30 GB).
    let dir = sweep_dir(
        "hostile-sweep-huge",
        &format!(
            "[[axis]]\nparam = \"slack\"\nvalues = {}\n[[axis]]\nparam = \"buffer_hours\"\nvalues = {}\n",
            values(10_000, 1.0, 0.001),
            values(10_000, 0.1, 0.001)
        ),
    );
    let needles = [
        "sweep.toml:",
        "key `axis`",
        "10000 x 10000 cells",
        "at most 1000000",
    ];
    timed(vcsim(&["check", "sweep.toml"]).cwd(&dir)).fails_with(2, &needles);
    for shard in [None, Some("1/1000")] {
        let mut args = vec!["sweep", "sweep.toml", "--out", "out"];
        args.extend(shard.map(|s| ["--shard", s]).iter().flatten());
        timed(vcsim(&args).cwd(&dir)).fails_with(2, &needles);
        assert!(!dir.join("out").exists(), "nothing was written");
    }
}

#[test]
fn a_big_fixed_mix_is_applied_once_not_once_per_cell() {
    // `mix = 1000` made every cell build 1000 projects and write them to
    // JSON and back (for `duration_days`) before its own value: 2000 cells
    // took 40 s. Now the fixed settings are applied once.
    let dir = dir_with_base("hostile-sweep-mix");
    std::fs::write(
        dir.join("sweep.toml"),
        format!(
            "name = \"t\"\nscenario = \"base.toml\"\npolicies = [\"CS2_WF2_WS2_JC2\"]\n\
             [set]\nduration_days = 0.01\nmix = 1000\n\
             [[axis]]\nparam = \"slack\"\nvalues = {}\n",
            values(500, 2.0, 0.01)
        ),
    )
    .unwrap();
    let r = timed(vcsim(&["check", "sweep.toml"]).cwd(&dir));
    assert!(
        r.succeeds()
            .contains("valid (500 cells x 1 policies x 1 replications = 500 runs)"),
        "{}",
        r.stdout()
    );
}

// ---- Shards (finding 3) ----

#[test]
fn more_shards_than_a_sweep_may_have_cells_are_refused() {
    // `--shard 1/1000000000000` of three cells ran, and its merge then
    // asked for 8 TB. Shards beyond the cells hold none (a job array of a
    // fixed size), up to the bound on cells.
    let dir = sweep_dir(
        "hostile-sweep-shards",
        "[[axis]]\nparam = \"slack\"\nvalues = [2, 3, 5]\n",
    );
    for n in ["1000001", "1000000000000"] {
        let shard = format!("1/{n}");
        timed(vcsim(&["sweep", "sweep.toml", "--shard", &shard, "--out", "p"]).cwd(&dir))
            .fails_with(
                2,
                &[
                    &format!("--shard 1/{n}"),
                    "at most 1000000 shards",
                    "this one has 3",
                ],
            );
        assert!(!dir.join("p").exists(), "nothing was written");
    }
    timed(vcsim(&["sweep", "sweep.toml", "--shard", "4/4", "--out", "p"]).cwd(&dir)).succeeds();
}

#[test]
fn merge_bounds_the_shard_count_of_a_manifest_before_allocating() {
    let dir = sweep_dir(
        "hostile-sweep-merge-n",
        "[[axis]]\nparam = \"slack\"\nvalues = [2, 3, 5]\n",
    );
    timed(vcsim(&["sweep", "sweep.toml", "--shard", "1/3", "--out", "p"]).cwd(&dir)).succeeds();
    let man = dir.join("p/manifest.json");
    let good = std::fs::read_to_string(&man).unwrap();
    // The shard's results are untouched (their SHA-256 still matches): only
    // the count of shards is edited, which merge used to allocate 8 TB for.
    let edit = |k: &str, n: &str| {
        let edited = good
            .replace("\"k\": 1", &format!("\"k\": {k}"))
            .replace("\"n\": 3", &format!("\"n\": {n}"));
        assert_ne!(edited, good);
        std::fs::write(&man, edited).unwrap();
        timed(vcsim(&["merge", "p", "--out", "m"]).cwd(&dir))
    };
    for (k, n) in [("1", "1000000000000"), ("0", "3"), ("4", "3")] {
        edit(k, n).fails_with(
            2,
            &[
                "manifest.json",
                &format!("shard {k}/{n}"),
                "1 to 1000000 shards",
            ],
        );
    }
    // Within the bound, the message names a few missing shards, not a
    // million (it was 16 MB).
    let r = edit("1", "1000000");
    r.fails_with(2, &["shard 2/1000000 is missing", "and 999989 more"]);
    assert!(r.stderr().len() < 1000, "{}", r.stderr());
}

#[test]
fn merge_names_a_few_missing_shards_and_counts_the_rest() {
    // 30 cells in 30 shards, of which one is given: the message used to
    // list every missing shard (16 MB for a million).
    let dir = sweep_dir(
        "hostile-sweep-missing",
        &format!(
            "[[axis]]\nparam = \"slack\"\nvalues = {}\n",
            values(30, 2.0, 1.0)
        ),
    );
    timed(vcsim(&["sweep", "sweep.toml", "--shard", "1/30", "--out", "p"]).cwd(&dir)).succeeds();
    let r = timed(vcsim(&["merge", "p", "--out", "m"]).cwd(&dir));
    r.fails_with(
        2,
        &[
            "shard 2/30 is missing",
            "29 missing: 2/30, 3/30,",
            "11/30, and 19 more",
            "--shard 2/30",
        ],
    );
    assert!(!r.stderr().contains("12/30"), "{}", r.stderr());
}

// ---- Control characters (finding 6) ----

#[test]
fn control_characters_in_the_name_or_a_string_value_are_refused() {
    // They went raw into the plots' titles (invalid XML) and the CSV files.
    let dir = sweep_dir(
        "hostile-sweep-ctl",
        "[[axis]]\nparam = \"slack\"\nvalues = [2, 3]\n",
    );
    write_sweep(
        &dir,
        "\"a\\u001b[2Jb\\u0007\"",
        "[[axis]]\nparam = \"slack\"\nvalues = [2, 3]\n",
    );
    for cmd in ["check", "sweep"] {
        timed(vcsim(&[cmd, "sweep.toml"]).cwd(&dir)).fails_with(
            2,
            &["sweep.toml:1: key `name`", "control character '\\u{1b}'"],
        );
    }
    write_sweep(
        &dir,
        "\"t\"",
        "[[axis]]\nparam = \"project.0.name\"\nvalues = [\"ab\", \"c\\u0007d\"]\n",
    );
    timed(vcsim(&["sweep", "sweep.toml", "--out", "o"]).cwd(&dir)).fails_with(
        2,
        &[
            "sweep.toml:8: key `axis.0.values.1`",
            "control character '\\u{7}'",
        ],
    );
    assert!(!dir.join("o").exists(), "nothing was written");
}

// ---- Smaller faults of a sweep file (findings 8 and 9) ----

#[test]
fn a_value_repeated_on_an_axis_is_refused() {
    let dir = sweep_dir(
        "hostile-sweep-repeat",
        "[[axis]]\nparam = \"slack\"\nvalues = [2, 3, 2.0]\n",
    );
    timed(vcsim(&["check", "sweep.toml"]).cwd(&dir)).fails_with(
        2,
        &[
            "sweep.toml:8: key `axis.0.values.2`",
            "`2` is listed twice in the values of `slack`",
        ],
    );
}

#[test]
fn an_axis_that_a_later_knob_overwrites_is_refused() {
    // `slack` sets every project's latency bound after the paths: an axis
    // over one project's bound made cells that differed only in their labels.
    let dir = sweep_dir(
        "hostile-sweep-overridden",
        "slack = 3\n[[axis]]\nparam = \"project.0.latency_bound_days\"\nvalues = [1, 2]\n",
    );
    let needles = [
        "sweep.toml:8: key `axis.0.param`",
        "`project.0.latency_bound_days` changes nothing: `slack`, applied after it",
    ];
    timed(vcsim(&["check", "sweep.toml"]).cwd(&dir)).fails_with(2, &needles);
    // The same pair on a command line; a repeated key keeps its last value.
    let set = |a: &str, b: &str| {
        timed(
            vcsim(&[
                "run",
                "base.toml",
                "--set",
                "duration_days=0.04",
                "--set",
                a,
                "--set",
                b,
            ])
            .cwd(&dir),
        )
    };
    set("client.work_buf_min_days=1", "buffer_hours=2").fails_with(
        2,
        &["--set client.work_buf_min_days=1: `client.work_buf_min_days` changes nothing: `buffer_hours`"],
    );
    set("host.ncpus=3", "host.ncpus=4").succeeds();
    // Partly overwritten is not nothing: every project's bound, then one's.
    set(
        "project.*.latency_bound_days=3",
        "project.0.latency_bound_days=4",
    )
    .succeeds();
    // And in a search space.
    std::fs::write(
        dir.join("space.toml"),
        "name = \"s\"\nscenario = \"base.toml\"\n[vary]\n\"project.*.app.*.flops_estimate\" = [1e12, 1e13]\nflops_error_factor = [0.5, 2.0]\n",
    )
    .unwrap();
    timed(vcsim(&["check", "space.toml"]).cwd(&dir)).fails_with(
        2,
        &[
            "space.toml:4: key `vary.project.*.app.*.flops_estimate`",
            "changes nothing: `flops_error_factor`",
        ],
    );
}

#[test]
fn replications_and_seed_of_the_wrong_kind_name_their_key() {
    let dir = sweep_dir("hostile-sweep-kinds", "");
    for (line, key, needle) in [
        (
            "replications = 1.5",
            "replications",
            "whole number, found 1.5",
        ),
        ("seed = 18446744073709551615", "seed", "too large"),
        ("seed = \"one\"", "seed", "whole number"),
    ] {
        let text = std::fs::read_to_string(dir.join("sweep.toml")).unwrap();
        std::fs::write(
            dir.join("bad.toml"),
            text.replacen("[set]", &format!("{line}\n[set]"), 1),
        )
        .unwrap();
        timed(vcsim(&["check", "bad.toml"]).cwd(&dir))
            .fails_with(2, &[&format!("bad.toml:4: key `{key}`"), needle]);
    }
}

#[test]
fn a_third_axis_is_refused_at_its_line() {
    let axis = |p: &str| format!("[[axis]]\nparam = \"{p}\"\nvalues = [1, 2]\n");
    let dir = sweep_dir(
        "hostile-sweep-axes",
        &[axis("slack"), axis("buffer_hours"), axis("host.ncpus")].concat(),
    );
    timed(vcsim(&["check", "sweep.toml"]).cwd(&dir)).fails_with(
        2,
        &[
            "sweep.toml:13: key `axis`",
            "at most two [[axis]] tables, found 3",
        ],
    );
}

#[test]
fn merge_refuses_a_metric_that_is_not_a_finite_number() {
    // Even with the checksum recomputed, as an editor of the file would.
    let dir = sweep_dir(
        "hostile-sweep-nan",
        "[[axis]]\nparam = \"slack\"\nvalues = [2, 3]\n",
    );
    timed(vcsim(&["sweep", "sweep.toml", "--out", "p"]).cwd(&dir)).succeeds();
    let results = dir.join("p/results.csv");
    let man = dir.join("p/manifest.json");
    let good = std::fs::read_to_string(&results).unwrap();
    let good_man = std::fs::read_to_string(&man).unwrap();
    let sum = vcsim_sweep::sha256_hex(good.as_bytes());
    for bad in ["nan", "inf", "1e999"] {
        // The first metric of the first row (idleness) becomes `bad`.
        let mut lines: Vec<String> = good.lines().map(String::from).collect();
        let mut cols: Vec<String> = lines[1].split(',').map(String::from).collect();
        let k = good
            .lines()
            .next()
            .unwrap()
            .split(',')
            .position(|h| h == "idleness")
            .unwrap();
        cols[k] = bad.to_string();
        lines[1] = cols.join(",");
        let text = lines.join("\n") + "\n";
        std::fs::write(&results, &text).unwrap();
        std::fs::write(
            &man,
            good_man.replace(&sum, &vcsim_sweep::sha256_hex(text.as_bytes())),
        )
        .unwrap();
        timed(vcsim(&["merge", "p", "--out", "m"]).cwd(&dir))
            .fails_with(2, &["results.csv:2: bad idleness", bad]);
        assert!(!dir.join("m/manifest.json").exists(), "{bad}");
    }
}

// ---- Search shards and metrics (findings 3, 8 and 9) ----

/// A directory with `base.toml` (the paper's base scenario, no GPU) and
/// `space.toml` (slack 1 to 3 around it).
fn search_dir(name: &str) -> PathBuf {
    let dir = dir_with_base(name);
    std::fs::write(
        dir.join("space.toml"),
        "name = \"s\"\nscenario = \"base.toml\"\n[vary]\nslack = [1.0, 3.0]\n",
    )
    .unwrap();
    dir
}

/// `vcsim search` of policy A against CS2 on `metric` in `space.toml`: two
/// points of 1-day runs on two seeds, then `rest`.
fn small_search<'a>(a: &'a str, metric: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    common::search_args(a, metric, "8", rest)
}

/// A search shard 1/1 in `DIR/sq`, its `search.json` kept as `DIR/good.json`.
fn search_shard(name: &str) -> PathBuf {
    let dir = search_dir(name);
    timed(
        vcsim(&small_search(
            "CS1",
            "waste",
            &["--shard", "1/1", "--out", "sq"],
        ))
        .cwd(&dir),
    )
    .succeeds();
    std::fs::copy(dir.join("sq/search.json"), dir.join("good.json")).unwrap();
    dir
}

/// `vcsim merge sq` after its `search.json` is the good one with `edit`.
fn merge_edited(dir: &Path, edit: impl Fn(&mut serde_json::Value)) -> Run {
    let good = std::fs::read_to_string(dir.join("good.json")).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&good).unwrap();
    edit(&mut m);
    std::fs::write(dir.join("sq/search.json"), m.to_string()).unwrap();
    timed(vcsim(&["merge", "sq", "--out", "m"]).cwd(dir))
}

#[test]
fn merge_bounds_the_shard_count_of_a_search_manifest_before_allocating() {
    // `"shard": [1, 1000000000000]` made merge build 1..=N: 8 TB, exit 134.
    let dir = search_shard("hostile-search-merge-n");
    for [k, n] in [[1, 1_000_000_000_000u64], [0, 1], [2, 1], [1, 1_000_001]] {
        merge_edited(&dir, |m| m["shard"] = serde_json::json!([k, n])).fails_with(
            2,
            &[
                "sq/search.json: key `shard`",
                &format!("[{k}, {n}] is not a shard"),
                "1 to 1000000 shards",
            ],
        );
    }
    // Within the bound, a few missing shards are named and the rest counted.
    let r = merge_edited(&dir, |m| {
        m["shard"] = serde_json::json!([1, 1_000_000]);
        m["budget"] = serde_json::json!(10_000_000);
    });
    r.fails_with(
        2,
        &[
            "cut into 1000000 shards; these are shards [1]",
            "999999 missing: 2/1000000, 3/1000000,",
            "11/1000000, and 999989 more",
            "--shard 2/1000000",
        ],
    );
    assert!(r.stderr().len() < 1000, "{}", r.stderr());
    assert!(!dir.join("m").exists(), "nothing was written");
    // `search --shard` has the same bound, so that its shards can be merged.
    timed(
        vcsim(&[
            "search",
            "--policy",
            "CS1",
            "--policy",
            "CS2",
            "--metric",
            "waste",
            "--space",
            "space.toml",
            "--budget",
            "10000000",
            "--seeds",
            "2",
            "--shard",
            "1/1000001",
            "--out",
            "p",
        ])
        .cwd(&dir),
    )
    .fails_with(2, &["--shard 1/1000001", "at most 1000000 shards"]);
}

#[test]
fn merge_names_the_search_manifest_and_key_of_a_bad_value() {
    // These said `--seeds must be 2 to 1000`, a flag the user never gave.
    let dir = search_shard("hostile-search-merge-keys");
    for (key, value, needle) in [
        ("seeds", serde_json::json!(0), "must be 2 to 1000, found 0"),
        (
            "days",
            serde_json::json!(0.0),
            "must be 1 to 36500, found 0",
        ),
        (
            "budget",
            serde_json::json!(0),
            "must be 4 to 10000000 runs, found 0",
        ),
    ] {
        let r = merge_edited(&dir, |m| m[key] = value.clone());
        r.fails_with(2, &[&format!("sq/search.json: key `{key}`: {needle}")]);
        assert!(!r.stderr().contains(&format!("--{key}")), "{}", r.stderr());
    }
}

#[test]
fn a_metric_of_a_resource_no_host_of_the_space_has_is_refused() {
    // It ran every point, each failing with "the run has no metric", then
    // said it found nothing "at any of the 0 points tried".
    let dir = search_dir("hostile-search-resource");
    let r = timed(vcsim(&small_search("CS1", "idleness.nvidia", &["--out", "o"])).cwd(&dir));
    r.fails_with(
        2,
        &[
            "--metric idleness.nvidia: no scenario of this search has the resource `nvidia`",
            "`paper-base` has cpu only",
        ],
    );
    assert!(!dir.join("o").exists(), "nothing was run");
    timed(vcsim(&small_search("CS1", "idleness.cpu", &["--out", "o"])).cwd(&dir)).succeeds();
    // A shard's manifest edited to such a metric is refused by merge, by key.
    let dir = search_shard("hostile-search-resource-merge");
    merge_edited(&dir, |m| m["metric"] = serde_json::json!("idleness.nvidia")).fails_with(
        2,
        &["sq/search.json: key `metric`: idleness.nvidia: no scenario"],
    );
}

#[test]
fn a_search_whose_points_all_fail_does_not_count_them_as_tried_for_a_loss() {
    // A policy whose script always fails: every point is tried, none gives
    // a loss, and the summary says so rather than "0 points tried".
    let dir = search_dir("hostile-search-all-fail");
    let cs2 = std::fs::read_to_string(common::root().join("policies/cs2.rhai")).unwrap();
    let bad = cs2.replacen(
        "fn schedule(v) {\n",
        "fn schedule(v) {\n    throw \"planted failure\";\n",
        1,
    );
    assert_ne!(bad, cs2, "policies/cs2.rhai has no `fn schedule(v)`");
    std::fs::write(dir.join("bad.rhai"), bad).unwrap();
    let r = timed(vcsim(&small_search("cpu=bad.rhai", "waste", &["--out", "o"])).cwd(&dir));
    let text = r.succeeds();
    for needle in [
        "no loss measured: none of the 2 points tried gave a value of waste",
        "2 of the 2 points tried could not be measured",
        "planted failure",
    ] {
        assert!(text.contains(needle), "lacks {needle:?}: {text}");
    }
    assert!(!text.contains("0 points tried"), "{text}");
}

// ---- Names from files in the outputs ----

/// A script whose path holds an escape character wrote it raw into every
/// plot's legend and `<title>`: XML allows it not even as a reference, so
/// no SVG viewer opened the plots. It is written as Rust escapes it.
#[test]
fn a_control_character_in_a_script_s_path_leaves_the_plots_well_formed() {
    let dir = dir_with_base("svg-control-char");
    std::fs::copy(
        common::root().join("policies/least_slack.rhai"),
        dir.join("e\u{1b}x.rhai"),
    )
    .unwrap();
    std::fs::write(
        dir.join("sweep.toml"),
        "name = \"c\"\nscenario = \"base.toml\"\npolicies = [\"CS2_WF2_WS2_JC2\", \"cpu=e\\u001bx.rhai\"]\n\
         [set]\nduration_days = 0.5\n[[axis]]\nparam = \"slack\"\nvalues = [2, 5]\n",
    )
    .unwrap();
    let out = dir.join("out");
    timed(vcsim(&["sweep", "sweep.toml", "--out", out.to_str().unwrap()]).cwd(&dir)).succeeds();
    let svg = std::fs::read_to_string(out.join("waste.svg")).unwrap();
    assert!(
        !svg.chars().any(|c| c.is_control() && c != '\n'),
        "a raw control character in the SVG"
    );
    assert!(svg.contains("e\\u{1b}x"), "the name is not shown escaped");
}
