//! `vcsim sweep` and `vcsim merge` as a user runs them: a small sweep's
//! summary, shards merged into the same bytes, a failing cell that does not
//! lose the others, and the same output whatever `--jobs` is.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

/// `vcsim ARGS` run in `cwd` (through `common::vcsim`).
fn vcsim(args: &[&str], cwd: &Path) -> Output {
    common::vcsim(args).cwd(cwd).run().out
}

/// A fresh directory holding the base scenario (`base.toml`) and a sweep
/// file (`sweep.toml`) with the given text.
fn workdir(name: &str, sweep: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sweep-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let base = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/paper-base.toml"),
    )
    .unwrap();
    std::fs::write(dir.join("base.toml"), base).unwrap();
    std::fs::write(dir.join("sweep.toml"), sweep).unwrap();
    dir
}

/// Two days, a mix of 1 and 3 projects at slack 3, both CPU schedulers.
const SMALL: &str = r#"
name = "small"
scenario = "base.toml"
policies = ["CS1_WF2_WS2_JC2", "CS2_WF2_WS2_JC2"]
replications = 2
metrics = ["waste", "idleness"]

[set]
duration_days = 2
slack = 3

[[axis]]
param = "mix"
values = [1, 3]
"#;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_small_sweep_writes_results_summary_plots_and_manifest() {
    let dir = workdir("small", SMALL);
    let out = vcsim(&["sweep", "sweep.toml", "--out", "out"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let o = dir.join("out");
    let results = read(&o.join("results.csv"));
    assert_eq!(results.lines().count(), 1 + 2 * 2 * 2, "{results}");
    assert!(results.starts_with("cell,mix,policy,spec,replication,seed,status,idleness,waste,"));
    insta::assert_snapshot!("small_summary", read(&o.join("summary.csv")));
    for m in ["waste", "idleness"] {
        let svg = read(&o.join(format!("{m}.svg")));
        assert!(
            svg.starts_with("<svg") && svg.contains("CS1_WF2_WS2_JC2") && svg.contains("<polyline"),
            "{m}.svg"
        );
    }
    let man: serde_json::Value = serde_json::from_str(&read(&o.join("manifest.json"))).unwrap();
    assert_eq!(man["seeds"], serde_json::json!([1, 2]));
    assert_eq!(man["shard"], serde_json::Value::Null);
    assert_eq!(man["runs"], 8);
    assert_eq!(man["inputs"][0]["path"], "sweep.toml");
    assert_eq!(man["inputs"][1]["path"], "base.toml");
    assert_eq!(man["inputs"][1]["sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn merged_shards_are_byte_identical_to_one_run() {
    let sweep = SMALL.replace("values = [1, 3]", "values = [1, 2, 3]");
    let dir = workdir("shards", &sweep);
    assert!(vcsim(&["sweep", "sweep.toml", "--out", "whole"], &dir)
        .status
        .success());
    for k in 1..=2 {
        let s = format!("{k}/2");
        let o = format!("shard{k}");
        let out = vcsim(&["sweep", "sweep.toml", "--out", &o, "--shard", &s], &dir);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Shard 1 of 2 holds cells 0 and 2; shard 2 holds cell 1.
    assert_eq!(
        read(&dir.join("shard2/results.csv")).lines().count(),
        1 + 2 * 2
    );
    // The order of the directories does not matter.
    let out = vcsim(&["merge", "shard2", "shard1", "--out", "merged"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(files(&dir.join("whole")), files(&dir.join("merged")));
    // A missing shard is refused.
    let out = vcsim(&["merge", "shard1", "--out", "partial"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("shard 2/2 is missing"));
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for (name, bytes) in files(from) {
        std::fs::write(to.join(name), bytes).unwrap();
    }
}

/// `vcsim merge` that must refuse: exit 2, a message naming `culprit` and
/// saying `what`, and nothing written.
fn merge_refused(dir: &Path, args: &[&str], culprit: &str, what: &str) {
    let _ = std::fs::remove_dir_all(dir.join("merged"));
    let mut all = vec!["merge"];
    all.extend(args);
    all.extend(["--out", "merged"]);
    let out = vcsim(&all, dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.contains(culprit) && err.contains(what),
        "{args:?}: want `{culprit}` and `{what}` in: {err}"
    );
    assert!(!dir.join("merged").exists(), "{args:?}: nothing is written");
}

#[test]
fn merge_refuses_damaged_foreign_duplicate_and_missing_shards() {
    let sweep = SMALL.replace("values = [1, 3]", "values = [1, 2, 3]");
    let dir = workdir("merge-checks", &sweep);
    for k in 1..=2 {
        let (s, o) = (format!("{k}/2"), format!("shard{k}"));
        let out = vcsim(&["sweep", "sweep.toml", "--out", &o, "--shard", &s], &dir);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let man: serde_json::Value =
        serde_json::from_str(&read(&dir.join("shard1/manifest.json"))).unwrap();
    assert_eq!(man["cell_ids"], serde_json::json!([0, 2]));
    assert_eq!(man["runs"], 8);
    let results = std::fs::read(dir.join("shard1/results.csv")).unwrap();
    assert_eq!(
        man["results_sha256"].as_str().unwrap(),
        vcsim_sweep::sha256_hex(&results),
        "the manifest holds the SHA-256 of results.csv"
    );
    let text = String::from_utf8(results.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();

    // results.csv cut at a line boundary, cut inside a line, emptied, garbage.
    let damage = |name: &str, bytes: &[u8]| {
        copy_dir(&dir.join("shard1"), &dir.join(name));
        std::fs::write(dir.join(name).join("results.csv"), bytes).unwrap();
    };
    damage("cut", format!("{}\n", lines[..5].join("\n")).as_bytes());
    merge_refused(&dir, &["cut", "shard2"], "cut", "4 of the 8 runs");
    damage("cut-mid-line", &results[..results.len() - 40]);
    merge_refused(
        &dir,
        &["cut-mid-line", "shard2"],
        "cut-mid-line",
        "columns, expected",
    );
    damage("empty", b"");
    merge_refused(&dir, &["empty", "shard2"], "empty", "results.csv is empty");
    damage("garbage", b"\x00\x01garbage\nnot,a,sweep\n");
    merge_refused(&dir, &["garbage", "shard2"], "garbage", "results.csv:1");
    // A number changed: the rows are complete, only the checksum tells.
    let mut fields: Vec<&str> = lines[1].split(',').collect();
    let at = fields.iter().position(|f| *f == "ok").unwrap() + 1;
    fields[at] = if fields[at] == "0.25" { "0.5" } else { "0.25" };
    let mut changed = lines.clone();
    let line = fields.join(",");
    changed[1] = &line;
    damage("changed", format!("{}\n", changed.join("\n")).as_bytes());
    merge_refused(
        &dir,
        &["changed", "shard2"],
        "changed",
        "does not match manifest.json",
    );
    // A row removed and the manifest made to agree: the missing run shows.
    copy_dir(&dir.join("shard1"), &dir.join("short"));
    let short = format!("{}\n{}\n", lines[..3].join("\n"), lines[4..].join("\n"));
    std::fs::write(dir.join("short/results.csv"), &short).unwrap();
    let mut m = man.clone();
    m["runs"] = 7.into();
    m["results_sha256"] = vcsim_sweep::sha256_hex(short.as_bytes()).into();
    std::fs::write(dir.join("short/manifest.json"), m.to_string()).unwrap();
    merge_refused(
        &dir,
        &["short", "shard2"],
        "short",
        "replication 0); the file is incomplete",
    );
    // A manifest from before the checksum.
    copy_dir(&dir.join("shard1"), &dir.join("old"));
    let mut m = man.clone();
    m.as_object_mut().unwrap().remove("results_sha256");
    std::fs::write(dir.join("old/manifest.json"), m.to_string()).unwrap();
    merge_refused(&dir, &["old", "shard2"], "old", "no `results_sha256`");
    // No manifest at all.
    copy_dir(&dir.join("shard1"), &dir.join("nomanifest"));
    std::fs::remove_file(dir.join("nomanifest/manifest.json")).unwrap();
    merge_refused(
        &dir,
        &["nomanifest", "shard2"],
        "nomanifest",
        "cannot read manifest.json",
    );

    // A shard of another sweep (3 replications instead of 2).
    std::fs::write(
        dir.join("other.toml"),
        sweep.replace("replications = 2", "replications = 3"),
    )
    .unwrap();
    let out = vcsim(
        &["sweep", "other.toml", "--out", "other2", "--shard", "2/2"],
        &dir,
    );
    assert!(out.status.success());
    merge_refused(
        &dir,
        &["shard1", "other2"],
        "other2",
        "not a shard of the same sweep",
    );
    // The same shard twice, under two names or one.
    copy_dir(&dir.join("shard1"), &dir.join("again"));
    merge_refused(
        &dir,
        &["shard1", "again"],
        "again",
        "shard 1/2 is given twice (also as shard1)",
    );
    merge_refused(
        &dir,
        &["shard1", "shard1", "shard2"],
        "shard1",
        "given twice",
    );
    merge_refused(&dir, &["shard2"], "", "shard 1/2 is missing");
    // Into one of the shards.
    let out = vcsim(&["merge", "shard1", "shard2", "--out", "shard1"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is also the --out directory"));
    assert_eq!(
        std::fs::read(dir.join("shard1/results.csv")).unwrap(),
        results
    );
    // And the intact shards still merge.
    let out = vcsim(&["merge", "shard1", "shard2", "--out", "merged"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("12 runs written"));
}

/// SMALL without its axis: plain replications of one scenario.
fn no_axis() -> String {
    let i = SMALL.find("[[axis]]").unwrap();
    SMALL[..i].replace("replications = 2", "replications = 3")
}

#[test]
fn a_sweep_without_an_axis_runs_its_replications() {
    let dir = workdir("no-axis", &no_axis());
    let out = vcsim(&["check", "sweep.toml"], &dir);
    let msg = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        msg.contains("(1 cells x 2 policies x 3 replications = 6 runs)"),
        "{msg}"
    );
    let out = vcsim(&["sweep", "sweep.toml", "--out", "out"], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("no axis, so no plots") && err.contains("6 runs written"),
        "{err}"
    );
    let o = dir.join("out");
    let results = read(&o.join("results.csv"));
    assert!(
        results.starts_with("cell,policy,spec,replication,seed,status,"),
        "{results}"
    );
    assert_eq!(results.lines().count(), 1 + 2 * 3, "{results}");
    assert!(
        results.lines().skip(1).all(|l| l.starts_with("0,")),
        "{results}"
    );
    let summary = read(&o.join("summary.csv"));
    assert!(
        summary.starts_with("cell,policy,spec,metric,n,mean,"),
        "{summary}"
    );
    assert!(
        summary
            .lines()
            .any(|l| l.starts_with("0,CS2_WF2_WS2_JC2,CS2_WF2_WS2_JC2,waste,3,")),
        "{summary}"
    );
    let names: Vec<String> = files(&o).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        ["manifest.json", "results.csv", "summary.csv"],
        "no plots"
    );
    let man: serde_json::Value = serde_json::from_str(&read(&o.join("manifest.json"))).unwrap();
    assert_eq!(
        (man["cells"].clone(), man["runs"].clone()),
        (1.into(), 6.into())
    );
    assert_eq!(man["sweep"]["axes"], serde_json::json!([]));
    // It shards (the second of two shards holds no cell) and merges.
    for k in 1..=2 {
        let (s, o) = (format!("{k}/2"), format!("shard{k}"));
        let out = vcsim(&["sweep", "sweep.toml", "--out", &o, "--shard", &s], &dir);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = vcsim(&["merge", "shard1", "shard2", "--out", "merged"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(files(&o), files(&dir.join("merged")));
    // A third axis is still refused.
    let three = format!(
        "{SMALL}\n[[axis]]\nparam = \"slack\"\nvalues = [1]\n[[axis]]\nparam = \"host.ncpus\"\nvalues = [1]\n"
    );
    let dir = workdir("three-axes", &three);
    let out = vcsim(&["sweep", "sweep.toml", "--out", "out"], &dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at most two [[axis]] tables"));
}

#[test]
fn a_failing_cell_does_not_lose_the_others() {
    let sweep = SMALL
        .replace("param = \"mix\"", "param = \"host.ncpus\"")
        .replace("values = [1, 3]", "values = [2, 0, 1]");
    let dir = workdir("failing", &sweep);
    let out = vcsim(&["sweep", "sweep.toml", "--out", "out"], &dir);
    assert_eq!(out.status.code(), Some(1), "some runs failed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("4 of 12 runs failed"), "{err}");
    let results = read(&dir.join("out/results.csv"));
    let ok = results.lines().filter(|l| l.contains(",ok,")).count();
    let failed: Vec<&str> = results.lines().filter(|l| l.contains(",failed,")).collect();
    assert_eq!((ok, failed.len()), (8, 4), "{results}");
    assert!(
        failed
            .iter()
            .all(|l| l.starts_with("1,0,") && l.contains("host.ncpus")),
        "{results}"
    );
    let summary = read(&dir.join("out/summary.csv"));
    assert!(
        summary
            .lines()
            .any(|l| l.starts_with("1,0,CS2_WF2_WS2_JC2,CS2_WF2_WS2_JC2,waste,0,,,")),
        "{summary}"
    );
    assert!(dir.join("out/waste.svg").exists());
}

#[test]
fn an_output_directory_that_cannot_be_written_is_found_before_any_run() {
    // Cell 1 fails (host.ncpus = 0): had the runs started, the exit status
    // would be 1 and stderr would count failed runs.
    let sweep = SMALL
        .replace("param = \"mix\"", "param = \"host.ncpus\"")
        .replace("values = [1, 3]", "values = [2, 0]");
    let dir = workdir("unwritable", &sweep);
    for out_dir in ["base.toml/out", "base.toml"] {
        let out = vcsim(&["sweep", "sweep.toml", "--out", out_dir], &dir);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{out_dir}: {err}");
        assert!(
            err.contains(&format!("{out_dir}: cannot write the outputs there")),
            "{err}"
        );
        assert!(!err.contains("runs failed"), "{err}");
    }
    // A directory without write permission (not a test as root, who may
    // write anyway).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let ro = dir.join("read-only");
        std::fs::create_dir_all(&ro).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        if std::fs::write(ro.join("probe"), b"").is_err() {
            let out = vcsim(&["sweep", "sweep.toml", "--out", "read-only"], &dir);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{err}");
            assert!(
                err.contains("read-only: cannot write the outputs there"),
                "{err}"
            );
        } else {
            eprintln!("running as root: the read-only directory case is skipped");
        }
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // The same for merge.
    let out = vcsim(&["sweep", "sweep.toml", "--out", "whole"], &dir);
    assert_eq!(out.status.code(), Some(1));
    let out = vcsim(&["merge", "whole", "--out", "base.toml/merged"], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("base.toml/merged: cannot write the outputs there"),
        "{err}"
    );
}

#[test]
fn a_reused_output_directory_keeps_no_stale_outputs() {
    let dir = workdir("reuse", SMALL);
    assert!(vcsim(&["sweep", "sweep.toml", "--out", "out"], &dir)
        .status
        .success());
    assert!(dir.join("out/idleness.svg").exists());
    std::fs::write(dir.join("out/notes.txt"), "mine").unwrap();
    // The sweep no longer plots idleness.
    std::fs::write(
        dir.join("sweep.toml"),
        SMALL.replace("[\"waste\", \"idleness\"]", "[\"waste\"]"),
    )
    .unwrap();
    assert!(vcsim(&["sweep", "sweep.toml", "--out", "out"], &dir)
        .status
        .success());
    assert!(vcsim(&["sweep", "sweep.toml", "--out", "fresh"], &dir)
        .status
        .success());
    let mut want = files(&dir.join("fresh"));
    want.push(("notes.txt".into(), b"mine".to_vec()));
    want.sort();
    assert_eq!(
        files(&dir.join("out")),
        want,
        "vcsim's own files are replaced, stale ones removed, others kept"
    );
    assert!(!dir.join("out/idleness.svg").exists());
    // merge clears its --out the same way.
    std::fs::write(dir.join("fresh/monotony.svg"), "<svg/>").unwrap();
    let out = vcsim(&["merge", "out", "--out", "fresh"], &dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.join("fresh/monotony.svg").exists());
}

#[test]
fn the_number_of_threads_does_not_change_the_output() {
    let dir = workdir("jobs", SMALL);
    assert!(
        vcsim(&["sweep", "sweep.toml", "--out", "j1", "--jobs", "1"], &dir)
            .status
            .success()
    );
    assert!(
        vcsim(&["sweep", "sweep.toml", "--out", "j2", "--jobs", "2"], &dir)
            .status
            .success()
    );
    assert_eq!(files(&dir.join("j1")), files(&dir.join("j2")));
}

#[test]
fn bad_sweep_files_name_the_file_key_and_line() {
    let cases = [
        (
            SMALL.replace("param = \"mix\"", "param = \"host.ncpu\""),
            "sweep.toml:13",
            "axis.0.param",
        ),
        (
            SMALL.replace("param = \"mix\"", "param = \"speed\""),
            "sweep.toml:13",
            "unknown parameter `speed`",
        ),
        (
            SMALL.replace("values = [1, 3]", "values = [1, \"many\"]"),
            "sweep.toml:14",
            "axis.0.values.1",
        ),
        (
            SMALL.replace("slack = 3", "slack = \"tight\""),
            "sweep.toml:10",
            "set.slack",
        ),
        (
            SMALL.replace("replications = 2", "replications = 2\nreplicas = 3"),
            "sweep.toml:6",
            "replicas",
        ),
        (
            SMALL.replace("\"waste\", \"idleness\"", "\"waste\", \"speed\""),
            "sweep.toml:6",
            "no metric `speed`",
        ),
        (SMALL.replace("CS1_WF2", "CS9_WF2"), "sweep.toml:4", "cs9"),
    ];
    for (text, at, what) in cases {
        let dir = workdir("bad", &text);
        let out = vcsim(&["sweep", "sweep.toml", "--out", "out"], &dir);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(at) && err.contains(what),
            "want {at} and {what} in: {err}"
        );
        assert!(
            !dir.join("out").exists(),
            "nothing is written for bad input"
        );
    }
    let dir = workdir("bad-shard", SMALL);
    let out = vcsim(&["sweep", "sweep.toml", "--shard", "3/2"], &dir);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_paper_sweeps_are_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for e in std::fs::read_dir(root.join("scenarios/paper")).unwrap() {
        let p = e.unwrap().path();
        let text = read(&p);
        if !text.contains("policies = ") {
            continue;
        }
        n += 1;
        let out = vcsim(&["check", p.to_str().unwrap()], root);
        assert!(
            out.status.success(),
            "{}: {}",
            p.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(n >= 6, "the paper's six experiments");
}
