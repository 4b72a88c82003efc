//! Hostile search inputs and shard directories (the fifth hostile probe):
//! a merge into one of its shards, shards whose trail, space or scenario
//! changed, outputs that cannot be written, control characters in a space's
//! name, a range of what the search sets itself, confusing messages and
//! counts. One test per finding, each asserting the exit status, the
//! message and that the command ends within a few seconds.

mod common;

use common::{dir_with_base, timed, vcsim, Run, HOSTILE_BOUND};
use std::path::{Path, PathBuf};

/// A directory with `base.toml` (the paper's base scenario) and
/// `space.toml`: slack, CPUs and mix around it.
fn search_dir(name: &str) -> PathBuf {
    let dir = dir_with_base(name);
    write_space(&dir, "\"s\"", "");
    dir
}

fn write_space(dir: &Path, name: &str, more: &str) {
    std::fs::write(
        dir.join("space.toml"),
        format!(
            "name = {name}\nscenario = \"base.toml\"\n[vary]\nslack = [1.0, 3.0]\n\"host.ncpus\" = [1, 2]\nmix = [2, 4]\n{more}"
        ),
    )
    .unwrap();
}

/// `vcsim search` of CS1 against CS2 on waste in `space.toml`: 1-day runs
/// on two seeds, within `budget` runs, then `rest`.
fn search<'a>(budget: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    common::search_args("CS1", "waste", budget, rest)
}

/// Shards 1/2 and 2/2 of a search of 16 runs (two points each) in
/// `DIR/L1` and `DIR/L2`.
fn two_shards(dir: &Path) {
    for (k, out) in [("1/2", "L1"), ("2/2", "L2")] {
        timed(vcsim(&search("16", &["--shard", k, "--out", out])).cwd(dir)).succeeds();
    }
}

fn merge(dir: &Path, args: &[&str]) -> Run {
    let mut a = vec!["merge"];
    a.extend_from_slice(args);
    timed(vcsim(&a).cwd(dir))
}

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn sha256(text: &str) -> String {
    vcsim_sweep::sha256_hex(text.as_bytes())
}

// ---- Finding 1: a merge into one of its shards ----

#[test]
fn merge_refuses_an_out_that_is_one_of_its_shards() {
    // `merge L1 L2 --out L1` deleted L1/search.json and replaced its
    // trail, exit 0: the shard was lost.
    let dir = search_dir("hostile-search-out-is-shard");
    two_shards(&dir);
    let (man, trail) = (
        read(dir.join("L1/search.json")),
        read(dir.join("L1/trail.csv")),
    );
    std::os::unix::fs::symlink(dir.join("L1"), dir.join("link")).unwrap();
    for out in ["L1", "./L1/", "link", "L2"] {
        merge(&dir, &["L1", "L2", "--out", out]).fails_with(
            2,
            &["is also the --out directory; merge into a new directory"],
        );
    }
    assert_eq!(read(dir.join("L1/search.json")), man);
    assert_eq!(read(dir.join("L1/trail.csv")), trail);
    merge(&dir, &["L1", "L2", "--out", "M"]).succeeds();
}

// ---- Finding 4: a shard is verified against its manifest ----

/// `merge L1 L2 --out M` after `edit` changed the directory; the shards are
/// made again first.
fn merge_after(dir: &Path, edit: impl FnOnce(&Path)) -> Run {
    let _ = std::fs::remove_dir_all(dir.join("M"));
    two_shards(dir);
    edit(dir);
    merge(dir, &["L1", "L2", "--out", "M"])
}

/// L1's trail with `f` applied to its lines, and its manifest's checksum
/// made to agree (a forged shard: only the rows' own checks can see it).
fn forge_trail(dir: &Path, f: impl FnOnce(&mut Vec<String>)) {
    let mut lines: Vec<String> = read(dir.join("L1/trail.csv"))
        .lines()
        .map(String::from)
        .collect();
    f(&mut lines);
    let text = lines.join("\n") + "\n";
    std::fs::write(dir.join("L1/trail.csv"), &text).unwrap();
    edit_manifest(dir, |m| m["trail_sha256"] = sha256(&text).into());
}

fn edit_manifest(dir: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let p = dir.join("L1/search.json");
    let mut m: serde_json::Value = serde_json::from_str(&read(&p)).unwrap();
    f(&mut m);
    std::fs::write(&p, m.to_string()).unwrap();
}

/// Column `name` of line `line` (1: the header) of `lines` set to `value`.
fn set_cell(lines: &mut [String], line: usize, name: &str, value: &str) {
    let k = lines[0].split(',').position(|h| h == name).unwrap();
    let mut row: Vec<&str> = lines[line - 1].split(',').collect();
    row[k] = value;
    lines[line - 1] = row.join(",");
}

#[test]
fn merge_refuses_a_shard_whose_trail_is_not_the_one_its_search_wrote() {
    let dir = search_dir("hostile-search-verify");
    let mismatch = [
        "L1/trail.csv: does not match L1/search.json (SHA-256 ",
        "it was changed or cut short after the search wrote it; make shard 1/2 again",
    ];
    // A row edited to a huge loss; a row outside the space; rows added; a
    // header-only trail: each merged silently, with a wrong summary.
    type Edit = fn(&mut String);
    let edits: [(&str, Edit); 4] = [
        ("huge loss", |t| {
            let mut l: Vec<String> = t.lines().map(String::from).collect();
            set_cell(&mut l, 2, "loss", "1000000");
            *t = l.join("\n") + "\n";
        }),
        ("mix=999", |t| {
            let mut l: Vec<String> = t.lines().map(String::from).collect();
            set_cell(&mut l, 2, "mix", "999");
            *t = l.join("\n") + "\n";
        }),
        ("more rows", |t| {
            let row = t.lines().nth(1).unwrap().to_string();
            for _ in 0..1000 {
                t.push_str(&row);
                t.push('\n');
            }
        }),
        ("header only", |t| {
            *t = t.lines().next().unwrap().to_string() + "\n";
        }),
    ];
    for (what, edit) in edits {
        let r = merge_after(&dir, |d| {
            let p = d.join("L1/trail.csv");
            let mut t = read(&p);
            edit(&mut t);
            std::fs::write(&p, t).unwrap();
        });
        r.fails_with(2, &mismatch);
        assert!(!dir.join("M").exists(), "{what}: nothing was written");
    }
    // Forged: the checksum made to agree. The rows' own checks still see it.
    for (name, value, needle) in [
        (
            "loss",
            "NaN",
            "L1/trail.csv: line 2: loss `NaN` is not a finite number",
        ),
        (
            "mix",
            "999",
            "L1/trail.csv: line 2: `mix` = 999 is outside the space's range 2..4",
        ),
        (
            "significant",
            "true",
            "L1/trail.csv: line 2: significant `true`, but the interval",
        ),
    ] {
        merge_after(&dir, |d| {
            forge_trail(d, |l| {
                set_cell(l, 2, name, value);
                if name == "significant" {
                    set_cell(l, 2, "ci_low", "-1");
                    set_cell(l, 2, "loss", "0");
                    set_cell(l, 2, "ci_high", "1");
                }
            })
        })
        .fails_with(2, &[needle]);
    }
    merge_after(&dir, |d| forge_trail(d, |l| l.truncate(2))).fails_with(
        2,
        &[
            "L1/trail.csv: 1 rows spending ",
            "but L1/search.json records 2 points and ",
        ],
    );
    // A manifest's count is bounded by its budget: a shard of 8 runs at 4
    // runs a point makes 2 points, not 192,009.
    merge_after(&dir, |d| edit_manifest(d, |m| m["points"] = 192_009.into())).fails_with(
        2,
        &["L1/search.json: key `points`: 192009, but shard 1/2 of a 16-run search at 4 runs a point makes 2"],
    );
    // A shard of an older vcsim records no checksum.
    merge_after(&dir, |d| edit_manifest(d, |m| m["vcsim_search"] = 1.into())).fails_with(
        2,
        &[
            "L1/search.json: key `vcsim_search`: format 1",
            "make the shard again",
        ],
    );
}

#[test]
fn merge_refuses_a_space_or_scenario_changed_since_the_shards() {
    let dir = search_dir("hostile-search-changed");
    merge_after(&dir, |d| {
        write_space(d, "\"s\"", "\"host.availability.fraction\" = [0.5, 1.0]\n")
    })
    .fails_with(
        2,
        &[
            "L1/search.json: key `space`: space.toml has changed since the shards were made",
            "make the shards again, or restore it",
        ],
    );
    merge_after(&dir, |d| {
        let p = d.join("base.toml");
        std::fs::write(&p, read(&p).replace("ncpus = 2", "ncpus = 3")).unwrap();
    })
    .fails_with(
        2,
        &[
            "L1/search.json: key `scenario_sha256`: the base scenario",
            "has changed since the shards were made",
        ],
    );
    // A policy's script edited between the shards and the merge.
    std::fs::copy(common::root().join("policies/cs2.rhai"), dir.join("s.rhai")).unwrap();
    for (k, out) in [("1/2", "S1"), ("2/2", "S2")] {
        let mut args = search("16", &["--shard", k, "--out", out]);
        args[4] = "cpu=s.rhai";
        timed(vcsim(&args).cwd(&dir)).succeeds();
    }
    let p = dir.join("s.rhai");
    std::fs::write(&p, read(&p) + "// edited\n").unwrap();
    merge(&dir, &["S1", "S2", "--out", "SM"]).fails_with(
        2,
        &["S1/search.json: key `scripts`: the script s.rhai (relative to the directory `vcsim search` ran in) has changed since the shards were made"],
    );
    // A comment is no change of the scenario.
    std::fs::copy(
        common::root().join("scenarios/paper-base.toml"),
        dir.join("base.toml"),
    )
    .unwrap();
    merge_after(&dir, |d| {
        let p = d.join("base.toml");
        std::fs::write(&p, format!("# a comment\n{}", read(&p))).unwrap();
    })
    .succeeds();
}

// ---- Finding 5: outputs that cannot be written ----

/// `vcsim ARGS` from `dir`, killed if it has not ended within the hostile
/// bound (a FIFO hung `search` forever): its status and standard error.
fn bounded(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_vcsim"))
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while t.elapsed() < HOSTILE_BOUND {
        if let Some(s) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            return (s.code(), err);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    (None, "it did not end: killed".into())
}

#[test]
fn outputs_that_cannot_be_written_are_refused_before_the_first_run() {
    // Found after the whole search, exit 1, partial outputs left; a FIFO
    // hung the search forever.
    let dir = search_dir("hostile-search-outputs");
    for name in ["trail.csv", "best.svg", "worst.toml", "search.json"] {
        let out = dir.join("o");
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(out.join(name)).unwrap();
        timed(vcsim(&search("400", &["--out", "o"])).cwd(&dir)).fails_with(
            2,
            &[&format!(
                "o/{name}: cannot write the search's `{name}` there: it is a directory"
            )],
        );
        let written: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
        assert_eq!(written.len(), 1, "{name}: nothing was written");
    }
    for (name, shard) in [
        ("trail.csv", false),
        ("trail.csv", true),
        ("search.json", true),
    ] {
        let out = dir.join("f");
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        let fifo = out.join(name);
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let mut args = search("16", &["--out", "f"]);
        if shard {
            args.extend(["--shard", "1/2"]);
        }
        let (code, err) = bounded(&dir, &args);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains("it is not a regular file (a FIFO"), "{err}");
    }
    // merge: its --out checked before the shrinking.
    two_shards(&dir);
    std::fs::create_dir_all(dir.join("MJ/trail.csv")).unwrap();
    merge(&dir, &["L1", "L2", "--out", "MJ"]).fails_with(
        2,
        &["MJ/trail.csv: cannot write the search's `trail.csv` there: it is a directory"],
    );
    assert!(!dir.join("MJ/best.svg").exists());
}

// ---- Findings 2 and 3: the space file ----

#[test]
fn control_characters_in_a_space_name_are_refused() {
    // `worst.toml`'s comment broke into live TOML lines; a BEL went raw.
    let dir = search_dir("hostile-search-name");
    for (name, c) in [
        ("\"x\\ny = 1\\n[evil]\"", "'\\n'"),
        ("\"x\\u0007y\"", "'\\u{7}'"),
    ] {
        write_space(&dir, name, "");
        for args in [vec!["check", "space.toml"], search("16", &["--out", "o"])] {
            timed(vcsim(&args).cwd(&dir)).fails_with(
                2,
                &[
                    "space.toml:1: key `name`",
                    &format!("holds the control character {c}"),
                ],
            );
        }
        assert!(!dir.join("o").exists(), "nothing was written");
    }
}

#[test]
fn a_range_of_what_the_search_sets_itself_is_refused() {
    // A range `vary` refused by `check` and `search` alike, with nothing
    // written.
    let refused = |name: &str, vary: &str, needles: &[&str]| {
        let dir = search_dir(name);
        write_space(&dir, "\"s\"", vary);
        for args in [vec!["check", "space.toml"], search("16", &["--out", "o"])] {
            timed(vcsim(&args).cwd(&dir)).fails_with(2, needles);
        }
        assert!(!dir.join("o").exists(), "nothing was written");
    };
    // Every run lasted --days; the trail had two contradictory
    // `duration_days` columns.
    refused(
        "hostile-search-duration",
        "duration_days = [0.001, 2.0]\n",
        &[
            "space.toml:7: key `vary.duration_days`",
            "the search sets the run length itself (`--days`",
            "give `--days N` instead",
        ],
    );
    // A range of seeds searched for lucky seeds: "worse by 0.5962 at
    // seed=811", where the scenario's own seeds gave 0.4964.
    refused(
        "hostile-search-seed",
        "seed = [1, 1000]\n",
        &[
            "space.toml:7: key `vary.seed`",
            "a range of them would search for lucky seeds",
            "give more `--seeds` instead",
        ],
    );
}

// ---- Finding 6: messages ----

#[test]
fn merge_names_the_directory_that_is_no_search_shard() {
    // It said `L1: cannot read manifest.json`: the good shard, and a
    // sweep's file.
    let dir = search_dir("hostile-search-no-manifest");
    two_shards(&dir);
    std::fs::create_dir_all(dir.join("P5")).unwrap();
    let r = merge(&dir, &["L1", "P5", "--out", "M"]);
    r.fails_with(2, &["P5: not a search shard: it has no search.json"]);
    assert!(!r.stderr().contains("L1"), "{}", r.stderr());
    assert!(!r.stderr().contains("manifest.json:"), "{}", r.stderr());
    merge(&dir, &["L1", "P6", "--out", "M"]).fails_with(2, &["P6: no such directory"]);
}

#[test]
fn merge_finds_the_space_from_another_directory_or_says_where_it_looked() {
    // Run from another directory, it failed `loc.toml: cannot read it`
    // without a word that the path came from search.json.
    let top = search_dir("hostile-search-elsewhere");
    let dir = top.join("mg");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::rename(top.join("base.toml"), dir.join("base.toml")).unwrap();
    std::fs::rename(top.join("space.toml"), dir.join("loc.toml")).unwrap();
    for (k, out) in [("1/2", "L1"), ("2/2", "L2")] {
        let mut args = search("16", &["--shard", k, "--out", out]);
        args[8] = "loc.toml";
        timed(vcsim(&args).cwd(&dir)).succeeds();
    }
    let there = merge(&dir, &["L1", "L2", "--out", "M"]).succeeds();
    let here = merge(&top, &["mg/L1", "mg/L2", "--out", "M"]).succeeds();
    assert_eq!(read(dir.join("M/trail.csv")), read(top.join("M/trail.csv")));
    assert!(there.contains("trail: M/trail.csv") && here.contains("trail: M/trail.csv"));
    // Gone: the message says where the path came from and where it looked.
    std::fs::rename(dir.join("loc.toml"), dir.join("moved.toml")).unwrap();
    let r = merge(&top, &["mg/L1", "mg/L2", "--out", "M2"]);
    r.fails_with(
        2,
        &[
            "mg/L1/search.json: key `space`: cannot find loc.toml, the path `vcsim search` was given (relative to the directory it ran in); nor as ",
            "mg/loc.toml, where it was from the shard's directory",
        ],
    );
}

// ---- Finding 7: counts ----

#[test]
fn runs_that_failed_are_counted_and_a_shrink_too_small_to_run_is_said() {
    // A policy that always fails: `(20 points, 0 runs)` although every run
    // was made.
    let dir = search_dir("hostile-search-counts");
    let cs2 = read(common::root().join("policies/cs2.rhai"));
    let bad = cs2.replacen(
        "fn schedule(v) {\n",
        "fn schedule(v) {\n    throw \"planted failure\";\n",
        1,
    );
    std::fs::write(dir.join("bad.rhai"), bad).unwrap();
    let mut args = search("8", &["--out", "o"]);
    args[2] = "cpu=bad.rhai";
    let text = timed(vcsim(&args).cwd(&dir)).succeeds();
    assert!(
        text.contains("trail: o/trail.csv (2 points, 8 runs)"),
        "{text}"
    );
    // Shrinking's 12 runs (half the budget) pay for no batch of variants:
    // it printed `shrunk: by ...` at the very point found.
    let text = timed(vcsim(&search("24", &["--out", "s"])).cwd(&dir)).succeeds();
    assert!(text.contains("found: "), "{text}");
    assert!(
        text.contains("not shrunk: shrinking may spend 12 runs (half the budget of 24), less than its first batch of variants needs ("),
        "{text}"
    );
    assert!(!text.contains("shrunk: by"), "{text}");
    let worst = read(dir.join("s/worst.toml"));
    assert!(
        worst.contains("Not shrunk (its budget was less than one batch of variants)"),
        "{worst}"
    );
}

// ---- Finding 8: a policy twice; numbers in messages ----

#[test]
fn a_policy_twice_is_refused_and_extreme_numbers_print_short() {
    let dir = search_dir("hostile-search-twice");
    let mut args = search("16", &["--out", "o"]);
    args[2] = "CS2";
    args[4] = "CS2_WF2_WS2_JC2";
    timed(vcsim(&args).cwd(&dir)).fails_with(2, &["--policy: `CS2_WF2_WS2_JC2` is listed twice"]);
    assert!(!dir.join("o").exists(), "nothing was run");
    for (days, shown) in [("1e308", "found 1e308"), ("1e-320", "found 1e-320")] {
        let mut args = search("16", &["--out", "o"]);
        args[14] = days;
        let r = timed(vcsim(&args).cwd(&dir));
        r.fails_with(2, &["--days must be 1 to 36500", shown]);
        assert!(r.stderr().len() < 200, "{}", r.stderr());
    }
    write_space(&dir, "\"s\"", "buffer_hours = [1e300, 1e-300]\n");
    let r = timed(vcsim(&["check", "space.toml"]).cwd(&dir));
    r.fails_with(2, &["the low end 1e300 is above the high end 1e-300"]);
    assert!(r.stderr().len() < 200, "{}", r.stderr());
}
