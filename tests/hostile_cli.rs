//! Hostile and extreme input to the command line (issue 19, items 5 and 6):
//! one case per finding, each asserting the exit status, the message and
//! that the command ends within a few seconds.

mod common;

use common::{dir_with_base, temp_dir, timed, vcsim};
use std::path::{Path, PathBuf};

fn s(p: &Path) -> String {
    p.to_str().expect("a UTF-8 path").to_string()
}

/// A two-day copy of a repository scenario, with `edit` applied to its text.
fn short_scenario(dir: &Path, from: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let text = std::fs::read_to_string(common::root().join(from)).unwrap();
    let text = text.replacen("duration_days = 30", "duration_days = 2", 1);
    let p = dir.join("scenario.toml");
    std::fs::write(&p, edit(text)).unwrap();
    p
}

/// A directory with `base.toml` (the base scenario) and `sweep.toml`: two
/// days, two cells, one policy, `metrics` as given.
fn sweep_dir(name: &str, metrics: &str, duration_days: u32) -> PathBuf {
    let dir = dir_with_base(name);
    std::fs::write(
        dir.join("sweep.toml"),
        format!(
            "name = \"hostile\"\nscenario = \"base.toml\"\npolicies = [\"CS2_WF2_WS2_JC2\"]\n\
             metrics = {metrics}\n[set]\nduration_days = {duration_days}\n\
             [[axis]]\nparam = \"host.ncpus\"\nvalues = [1, 2]\n"
        ),
    )
    .unwrap();
    dir
}

// ---- Threads (item 5) ----

#[test]
fn threads_that_cannot_start_are_an_error_with_status_2_not_a_panic() {
    // A stack of a petabyte cannot be mapped: every thread fails to start,
    // as under `ulimit -u` (which does not bind root).
    let r = timed(
        vcsim(&[
            "compare",
            "scenarios/outages.toml",
            "--policy",
            "CS2_WF2_WS2_JC2",
            "--policy",
            "CS1_WF2_WS2_JC2",
        ])
        .env("RUST_MIN_STACK", "1000000000000000")
        .env("RUST_BACKTRACE", "0"),
    );
    r.fails_with(2, &["cannot start", "worker thread", "--jobs", "ulimit -u"]);
    assert!(r.stdout().is_empty(), "{}", r.stdout());
}

#[test]
fn a_script_that_nests_arrays_deeper_and_deeper_fails_without_aborting() {
    // rhai walks, copies and drops nested arrays recursively: on a worker
    // thread's default 2 MB stack this aborted `compare` (signal 6).
    let dir = temp_dir("nesting");
    let script = dir.join("nest.rhai");
    std::fs::write(
        &script,
        "fn schedule(v) { let a = []; loop { a = [[[[[[[[[[[[[[[[a]]]]]]]]]]]]]]]]; } }\n",
    )
    .unwrap();
    let r = timed(vcsim(&[
        "compare",
        "scenarios/paper-base.toml",
        "--policy",
        &s(&script),
        "--policy",
        "CS2_WF2_WS2_JC2",
        "--set",
        "duration_days=0.01",
        "--replications",
        "2",
    ]));
    r.fails_with(1, &["nest.rhai", "schedule"]);
}

#[test]
fn a_huge_jobs_is_capped_at_the_number_of_runs() {
    let dir = temp_dir("hostile-jobs");
    let scn = short_scenario(&dir, "scenarios/outages.toml", |t| t);
    // 100,000 threads for 2 runs would take seconds and gigabytes; capped,
    // 2 threads start and the output is that of one thread.
    let args = |jobs: &str| {
        vec![
            "compare".to_string(),
            s(&scn),
            "--policy".into(),
            "CS2_WF2_WS2_JC2".into(),
            "--policy".into(),
            "CS1_WF2_WS2_JC2".into(),
            "--format".into(),
            "json".into(),
            "--jobs".into(),
            jobs.into(),
        ]
    };
    let huge = timed(vcsim(&args("100000")));
    let one = timed(vcsim(&args("1")));
    assert_eq!(huge.succeeds(), one.succeeds());
    timed(vcsim(&args("0"))).fails_with(2, &["--jobs must be at least 1"]);
}

// ---- merge (item 6) ----

#[test]
fn merge_refuses_a_shard_whose_results_are_truncated_or_garbage() {
    let dir = sweep_dir("hostile-merge", "[\"waste\"]", 1);
    for k in ["1/2", "2/2"] {
        let out = format!("part{}", &k[..1]);
        timed(vcsim(&["sweep", "sweep.toml", "--shard", k, "--out", &out]).cwd(&dir)).succeeds();
    }
    timed(vcsim(&["merge", "part1", "part2", "--out", "ok"]).cwd(&dir)).succeeds();
    let results = dir.join("part2/results.csv");
    let good = std::fs::read_to_string(&results).unwrap();
    let header_only = good.lines().next().unwrap().to_string() + "\n";
    let cut = &good[..good.len() - 10];
    let edited = good.replacen(",ok,", ",ok,0", 1);
    for (what, text, needle) in [
        (
            "header only",
            header_only.as_str(),
            "the file is incomplete",
        ),
        ("cut mid-row", cut, "cut short"),
        ("garbage", "\u{0}\u{1}garbage\n", "results.csv:1"),
        ("edited", edited.as_str(), "results.csv"),
    ] {
        std::fs::write(&results, text).unwrap();
        let out = format!("merged-{}", what.replace(' ', "-"));
        let r = timed(vcsim(&["merge", "part1", "part2", "--out", &out]).cwd(&dir));
        r.fails_with(2, &["part2", needle]);
        assert!(!r.stderr().contains("runs written"), "{what}");
        assert!(!dir.join(&out).join("manifest.json").exists(), "{what}");
    }
}

// ---- compare with a failing policy (item 6) ----

#[test]
fn compare_with_one_failing_policy_prints_the_others_and_names_it() {
    let dir = temp_dir("hostile-compare-fail");
    let scn = short_scenario(&dir, "scenarios/outages.toml", |t| t);
    let bad = dir.join("boom.rhai");
    std::fs::write(
        &bad,
        "fn init() { #{} }\nfn schedule(v) { throw \"boom\"; }\n",
    )
    .unwrap();
    let bad_spec = format!("cpu={}", s(&bad));
    let r = timed(vcsim(&[
        "compare",
        &s(&scn),
        "--policy",
        "CS2_WF2_WS2_JC2",
        "--policy",
        &bad_spec,
        "--policy",
        "CS1_WF2_WS2_JC2",
    ]));
    r.fails_with(
        1,
        &[
            "policy `cpu=",
            "boom.rhai",
            "failed",
            "boom",
            "2 of 3 policies ran",
        ],
    );
    let out = r.stdout();
    assert!(
        out.contains("CS2_WF2_WS2_JC2") && out.contains("CS1_WF2_WS2_JC2"),
        "{out}"
    );
    assert!(
        out.contains("idleness") && out.contains("boom.rhai"),
        "{out}"
    );
    // JSON lists the failure too.
    let r = timed(vcsim(&[
        "compare",
        &s(&scn),
        "--policy",
        &bad_spec,
        "--policy",
        "CS2_WF2_WS2_JC2",
        "--format",
        "json",
    ]));
    r.fails_with(1, &["boom.rhai", "1 of 2 policies ran"]);
    assert!(r.stdout().contains("\"failed\""), "{}", r.stdout());
    // Every policy failing: nothing to show, the failure named.
    timed(vcsim(&["compare", &s(&scn), "--policy", &bad_spec]))
        .fails_with(1, &["boom.rhai", "boom"]);
}

// ---- --watch (item 6) ----

#[test]
fn watch_errors_go_to_stderr_with_status_2() {
    // Without a terminal the watch goes on until its run limit.
    let r = timed(
        vcsim(&[
            "compare",
            "no/such/scenario.toml",
            "--policy",
            "CS2_WF2_WS2_JC2",
            "--watch",
        ])
        .env("VCSIM_WATCH_MAX_RUNS", "1"),
    );
    r.fails_with(2, &["no/such/scenario.toml", "cannot read"]);
    assert!(!r.stdout().contains("error"), "{}", r.stdout());
    // The same for a scenario that does not validate.
    let dir = temp_dir("hostile-watch");
    let scn = short_scenario(&dir, "scenarios/outages.toml", |t| {
        t.replacen("ncpus = 2", "ncpus = 0", 1)
    });
    let r = timed(
        vcsim(&[
            "compare",
            &s(&scn),
            "--policy",
            "CS2_WF2_WS2_JC2",
            "--watch",
        ])
        .env("VCSIM_WATCH_MAX_RUNS", "1"),
    );
    r.fails_with(2, &["host.ncpus"]);
    assert!(!r.stdout().contains("error"), "{}", r.stdout());
}

// ---- sweep output (item 6) ----

#[test]
fn an_unwritable_sweep_out_is_refused_before_the_first_run() {
    // A long sweep: had a run started, the time bound would fail.
    let dir = sweep_dir("hostile-unwritable", "[\"waste\"]", 3000);
    std::fs::write(dir.join("a-file"), "").unwrap();
    for out in ["a-file", "a-file/below"] {
        let r = timed(vcsim(&["sweep", "sweep.toml", "--out", out]).cwd(&dir));
        r.fails_with(2, &[out, "cannot write the outputs there"]);
    }
}

#[test]
fn an_unwritable_timeline_trace_or_import_out_is_refused_before_the_run() {
    let dir = temp_dir("hostile-unwritable-file");
    std::fs::write(dir.join("a-file"), "").unwrap();
    let below = s(&dir.join("a-file/below.html"));
    let a_dir = dir.join("a-dir.html");
    std::fs::create_dir(&a_dir).unwrap();
    // A run of years on 64 CPUs: had it started, the time bound would fail.
    let long = ["--set", "duration_days=3000", "--set", "host.ncpus=64"];
    let m = "scenarios/paper-base.toml";
    let cases: [(&[&str], &str); 5] = [
        (&["run", m, "--timeline", &below], "--timeline"),
        (&["run", m, "--trace", &below], "--trace"),
        (&["run", m, "--timeline", &s(&a_dir)], "--timeline"),
        (
            &[
                "diverge",
                m,
                "--policy",
                "CS1",
                "--policy",
                "CS2",
                "--timeline",
                &below,
            ],
            "--timeline",
        ),
        (
            &[
                "import",
                "tests/fixtures/boinc/sim2007/sim_projects.xml",
                "--out",
                &below,
            ],
            "--out",
        ),
    ];
    for (args, flag) in cases {
        let mut args = args.to_vec();
        if args[0] != "import" {
            args.extend(long);
        }
        let r = timed(vcsim(&args));
        r.fails_with(2, &[flag, "cannot be written there"]);
        assert!(r.stdout().is_empty(), "nothing ran: {}", r.stdout());
    }
}

#[test]
fn a_reused_sweep_directory_is_cleared_of_vcsims_files_only() {
    let dir = sweep_dir("hostile-reuse", "[\"waste\"]", 1);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // A stale plot and summary of an earlier sweep, and a file of the user.
    std::fs::write(out.join("idleness.svg"), "<svg/>").unwrap();
    std::fs::write(out.join("monotony.svg"), "<svg/>").unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    timed(vcsim(&["sweep", "sweep.toml", "--out", "out"]).cwd(&dir)).succeeds();
    assert!(!out.join("idleness.svg").exists());
    assert!(!out.join("monotony.svg").exists());
    assert!(out.join("waste.svg").exists());
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
}

// ---- long names ----

#[test]
fn names_longer_than_boinc_holds_are_refused_with_the_bound() {
    // An explained run copies names into its records: 1,000 projects of
    // 10 kB names made gigabytes of them.
    let long = "x".repeat(255);
    let dir = temp_dir("hostile-long-names");
    let scn = short_scenario(&dir, "scenarios/outages.toml", |t| {
        t.replacen("name = \"A\"", &format!("name = \"{long}\""), 1)
    });
    timed(vcsim(&["check", &s(&scn)])).fails_with(
        2,
        &[
            "project.0.name",
            "is 255 characters long: a name has at most 254",
        ],
    );
    let set = format!("name={long}");
    timed(vcsim(&["run", "scenarios/outages.toml", "--set", &set]))
        .fails_with(2, &["key `name`", "at most 254"]);
    // 254 is allowed.
    let set = format!("name={}", "x".repeat(254));
    timed(vcsim(&[
        "run",
        "scenarios/outages.toml",
        "--set",
        &set,
        "--set",
        "duration_days=1",
    ]))
    .succeeds();
}

// ---- names with control characters (item 6) ----

#[test]
fn names_with_control_characters_are_refused_and_paths_printed_escaped() {
    let dir = temp_dir("hostile-names");
    let scn = short_scenario(&dir, "scenarios/outages.toml", |t| {
        t.replacen("name = \"A\"", "name = \"A\\u001b[31m\\r\\u0007\"", 1)
    });
    let scn = s(&scn);
    // A name goes to terminals, CSV and SVG: with an escape sequence, it is
    // refused (`run --format csv` printed it raw), and the message escapes it.
    for args in [
        vec!["run", &scn, "--format", "csv"],
        vec!["check", &scn],
        vec!["compare", &scn, "--policy", "CS2_WF2_WS2_JC2"],
    ] {
        let r = timed(vcsim(&args));
        r.fails_with(
            2,
            &["project.0.name", "holds the control character '\\u{1b}'"],
        );
        for text in [&r.stdout(), &r.stderr()] {
            assert!(
                !text.contains(['\u{1b}', '\r', '\u{7}']),
                "vcsim {:?} printed a raw control character: {text:?}",
                r.args
            );
        }
    }
    // So is one set from the command line, and the scenario's own name.
    let r = timed(vcsim(&[
        "run",
        "scenarios/outages.toml",
        "--set",
        "name=out\u{1b}[2Jages",
    ]));
    r.fails_with(2, &["key `name`", "control character"]);
    assert!(!r.stderr().contains('\u{1b}'), "{:?}", r.stderr());
    // A path is not refused: in an error message it is escaped.
    let bad = dir.join("a\u{1b}[31mb.rhai");
    std::fs::write(
        &bad,
        "fn init() { #{} }\nfn schedule(v) { throw \"boom\"; }\n",
    )
    .unwrap();
    let r = timed(vcsim(&[
        "run",
        "scenarios/outages.toml",
        "--set",
        "duration_days=2",
        "--policy",
        &format!("cpu={}", s(&bad)),
    ]));
    r.fails_with(1, &["a\\u{1b}[31mb.rhai"]);
    assert!(!r.stderr().contains('\u{1b}'), "{:?}", r.stderr());
}

#[test]
fn a_name_cannot_break_the_table_or_reorder_the_terminal() {
    // A `|` would end a Markdown cell; U+202E (right-to-left override) and
    // U+200B (zero width space) would make the terminal show other text.
    let dir = temp_dir("hostile-name-table");
    let scn = short_scenario(&dir, "scenarios/outages.toml", |t| {
        t.replacen("name = \"A\"", "name = \"A|fake \\u202Eevil\\u200Bx\"", 1)
    });
    let out = timed(vcsim(&["run", &s(&scn)])).succeeds();
    assert!(!out.contains(['\u{202e}', '\u{200b}']), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("| A"))
        .unwrap_or_else(|| panic!("no row of A in {out}"));
    assert!(
        row.starts_with("| A\\|fake \\u{202e}evil\\u{200b}x |"),
        "{row}"
    );
    let header = out.lines().find(|l| l.starts_with("| project")).unwrap();
    assert_eq!(
        row.matches(" | ").count(),
        header.matches(" | ").count(),
        "one cell per column"
    );
}

#[test]
fn two_outputs_on_one_file_or_an_output_on_the_input_are_refused() {
    let dir = temp_dir("hostile-same-file");
    let scn = dir.join("base.toml");
    std::fs::copy(common::root().join("scenarios/paper-base.toml"), &scn).unwrap();
    let before = std::fs::read(&scn).unwrap();
    let one = s(&dir.join("out.csv"));
    // The same file spelled another way is the same file.
    let again = s(&dir.join(".").join("out.csv"));
    let cases: [(&[&str], &[&str]); 3] = [
        (
            &["run", &s(&scn), "--trace", &one, "--timeline", &again],
            &["--trace and --timeline name the same file"],
        ),
        (
            &["run", &s(&scn), "--trace", &s(&dir.join("./base.toml"))],
            &["--trace and the scenario (which it reads) name the same file"],
        ),
        (
            &[
                "import",
                "tests/fixtures/boinc/sim2007/sim_projects.xml",
                "--out",
                "tests/fixtures/boinc/sim2007/sim_projects.xml",
            ],
            &["--out and the input (which it reads) name the same file"],
        ),
    ];
    for (args, msg) in cases {
        let mut args = args.to_vec();
        if args[0] == "run" {
            // Years of run: had it started, the time bound would fail.
            args.extend(["--set", "duration_days=3000"]);
        }
        timed(vcsim(&args)).fails_with(2, msg);
    }
    assert_eq!(
        std::fs::read(&scn).unwrap(),
        before,
        "the scenario is intact"
    );
    assert!(!dir.join("out.csv").exists());
}

#[test]
fn compare_refuses_one_policy_twice_and_seeds_past_the_largest() {
    let m = "scenarios/paper-base.toml";
    let r = timed(vcsim(&[
        "compare",
        m,
        "--policy",
        "CS1",
        "--policy",
        "cpu=cs1,fetch=wf2,send=ws2,estimate=jc2",
    ]));
    r.fails_with(2, &["--policy: `CS1_WF2_WS2_JC2` is listed twice"]);
    let r = timed(vcsim(&[
        "compare",
        m,
        "--policy",
        "CS2",
        "--seed",
        "18446744073709551615",
        "--replications",
        "3",
    ]));
    r.fails_with(2, &["the seeds would pass 18446744073709551615"]);
}

#[test]
fn explain_refuses_a_time_past_the_longest_run_and_a_window_after_the_end() {
    let m = "scenarios/paper-base.toml";
    let r = timed(vcsim(&["explain", m, "--to", "1e308"]));
    r.fails_with(
        2,
        &["`1e308`: a time is at most 36500 days, the longest run"],
    );
    let r = timed(vcsim(&[
        "explain",
        m,
        "--set",
        "duration_days=1",
        "--from",
        "2d",
        "--to",
        "3d",
    ]));
    r.fails_with(
        2,
        &["--from 2d 00:00:00: after the run's end (1d 00:00:00)"],
    );
}

#[test]
fn diverge_names_set_b_in_its_errors() {
    let r = timed(vcsim(&[
        "diverge",
        "scenarios/paper-base.toml",
        "--policy",
        "CS2",
        "--set",
        "duration_days=2",
        "--set-b",
        "host.ncpus=0",
    ]));
    r.fails_with(
        2,
        &["--set duration_days=2 --set-b host.ncpus=0: the scenario is then invalid"],
    );
    let r = timed(vcsim(&[
        "diverge",
        "scenarios/paper-base.toml",
        "--policy",
        "CS2",
        "--set-b",
        "bogus=1",
    ]));
    r.fails_with(2, &["--set-b bogus=1"]);
}

#[test]
fn diverge_keeps_one_clock_for_both_runs() {
    // The runs are compared step by step: B may not have another clock.
    for key in ["duration_days=1", "step_seconds=120"] {
        let r = timed(vcsim(&[
            "diverge",
            "scenarios/paper-base.toml",
            "--policy",
            "CS2",
            "--set",
            "duration_days=2",
            "--set-b",
            key,
        ]));
        let name = key.split('=').next().unwrap();
        r.fails_with(
            2,
            &[
                &format!("--set-b {name}: diverge compares the two runs step by step"),
                "--set",
            ],
        );
    }
}

#[test]
fn a_seed_set_with_seed_is_refused_it_would_be_overridden() {
    // `--seed` gives the runs' seeds: `--set seed=5` beside it changed
    // nothing, and diverge's header named both.
    let m = "scenarios/mix-5-slack-5.toml";
    for (cmd, extra) in [
        ("run", vec!["--set", "seed=5"]),
        ("compare", vec!["--policy", "CS2", "--set", "seed=5"]),
        ("explain", vec!["--set", "seed=5"]),
        ("diverge", vec!["--policy", "CS2", "--set-b", "seed=5"]),
    ] {
        let mut args = vec![cmd, m, "--seed", "3", "--set", "duration_days=1"];
        args.extend(extra);
        let flag = if cmd == "diverge" { "--set-b" } else { "--set" };
        timed(vcsim(&args)).fails_with(
            2,
            &[
                &format!("{flag} seed=5: --seed gives the runs' seeds"),
                "give the seed once",
            ],
        );
    }
    // Without --seed, a set seed is the scenario's, and used.
    let a = timed(vcsim(&[
        "run",
        m,
        "--set",
        "seed=5",
        "--set",
        "duration_days=1",
        "--format",
        "json",
    ]))
    .succeeds();
    let b = timed(vcsim(&[
        "run",
        m,
        "--seed",
        "5",
        "--set",
        "duration_days=1",
        "--format",
        "json",
    ]))
    .succeeds();
    assert_eq!(a, b);
}

#[test]
fn a_flag_value_clap_refuses_is_quoted_with_its_control_characters_escaped() {
    // clap's text dropped the bell and the escape sequence: the error
    // quoted `1h`, a valid time; a carriage return went raw.
    let r = timed(vcsim(&[
        "explain",
        "scenarios/paper-base.toml",
        "--from",
        "1\u{7}h\u{1b}[31m\r",
    ]));
    r.fails_with(
        2,
        &["invalid value '1\\u{7}h\\u{1b}[31m\\r' for '--from <FROM>'"],
    );
    assert!(
        !r.stderr().contains(['\u{7}', '\u{1b}', '\r']),
        "{:?}",
        r.stderr()
    );
}

#[test]
fn diverge_names_the_run_that_failed() {
    let dir = temp_dir("diverge-b-fails");
    let bad = dir.join("bad.rhai");
    std::fs::write(
        &bad,
        "fn schedule(v) {\n    throw \"no schedule today\";\n}\n",
    )
    .unwrap();
    let r = timed(vcsim(&[
        "diverge",
        "scenarios/paper-base.toml",
        "--policy",
        "CS2",
        "--policy",
        &format!("cpu={}", s(&bad)),
        "--set",
        "duration_days=1",
    ]));
    r.fails_with(1, &["run B (", "no schedule today"]);
    assert!(!r.stderr().contains("run A"), "{}", r.stderr());
    // A threshold out of range prints short, not 309 digits.
    let r = timed(vcsim(&[
        "diverge",
        "scenarios/paper-base.toml",
        "--policy",
        "CS2",
        "--threshold",
        "1e308",
    ]));
    r.fails_with(2, &["--threshold", "found 1.000e308"]);
    assert!(r.stderr().len() < 200, "{}", r.stderr());
}

// ---- --timeline (item 6) ----

#[test]
fn an_unknown_timeline_extension_is_an_error_naming_it() {
    let dir = temp_dir("hostile-timeline");
    for name in ["x.txt", "x.HTML.bak", "noext"] {
        let p = dir.join(name);
        let r = timed(vcsim(&[
            "run",
            "scenarios/outages.toml",
            "--timeline",
            &s(&p),
        ]));
        let want = match p.extension() {
            Some(e) => format!("`.{}`", e.to_string_lossy()),
            None => "needs an extension".into(),
        };
        r.fails_with(2, &[name, "--timeline", &want, ".html", ".csv"]);
        assert!(!p.exists(), "{name} was written");
        assert!(r.stdout().is_empty(), "nothing ran: {}", r.stdout());
    }
    // The known ones, whatever their case.
    let p = dir.join("ok.CSV");
    let scn = short_scenario(&dir, "scenarios/outages.toml", |t| t);
    timed(vcsim(&["run", &s(&scn), "--timeline", &s(&p)])).succeeds();
    assert!(std::fs::read_to_string(&p).unwrap().starts_with("job,"));
}

#[test]
fn a_billion_replications_is_refused_with_the_bound() {
    let r = timed(vcsim(&[
        "compare",
        "scenarios/paper-base.toml",
        "--policy",
        "CS1",
        "--policy",
        "CS2",
        "--replications",
        "1000000000",
    ]));
    r.fails_with(
        2,
        &["--replications", "from 1 to 100000", "found 1000000000"],
    );
    assert!(r.stdout().is_empty(), "nothing ran: {}", r.stdout());
    // Within the bound per policy, but two million runs in all.
    let mut args = vec!["compare", "scenarios/paper-base.toml"];
    let labels: Vec<String> = (0..20).map(|i| format!("CS1,label=p{i}")).collect();
    for l in &labels {
        args.extend(["--policy", l]);
    }
    args.extend(["--replications", "100000"]);
    let r = timed(vcsim(&args));
    r.fails_with(
        2,
        &[
            "20 policies x 100000 replications is 2000000 runs",
            "at most 1000000",
        ],
    );
}

#[test]
fn nan_and_infinity_in_set_say_a_finite_number_is_needed() {
    for (value, shown) in [("nan", "NaN"), ("inf", "inf"), ("-inf", "-inf")] {
        let set = format!("host.cpu_flops={value}");
        let r = timed(vcsim(&["run", "scenarios/paper-base.toml", "--set", &set]));
        r.fails_with(
            2,
            &[
                &set,
                "`host.cpu_flops`",
                &format!("{shown} is not a scenario value"),
                "finite number",
            ],
        );
    }
    // In a sweep's axis, with the file, key and line.
    let dir = sweep_dir("hostile-nan-axis", "[\"waste\"]", 2);
    let sweep = dir.join("sweep.toml");
    let text = std::fs::read_to_string(&sweep).unwrap();
    std::fs::write(&sweep, text.replace("values = [1, 2]", "values = [1, nan]")).unwrap();
    let r = timed(vcsim(&["sweep", &s(&sweep), "--out", &s(&dir.join("out"))]));
    r.fails_with(
        2,
        &[
            "sweep.toml",
            "axis.0.values.1",
            "NaN is not a scenario value",
        ],
    );
}

#[test]
fn a_knob_that_overflows_names_the_knob_or_the_infinite_value() {
    let r = timed(vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--set",
        "flops_error_factor=0",
    ]));
    r.fails_with(2, &["flops_error_factor=0", "a positive number, found 0"]);
    let r = timed(vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--set",
        "flops_stddev_factor=1e300",
    ]));
    r.fails_with(
        2,
        &[
            "`project.0.app.0.flops_stddev`",
            "must be a finite number, found inf",
        ],
    );
}

/// `check` of a scenario, a run with a script policy and an import, each
/// given the special file of its kind (`[toml, rhai, xml]`), fail naming
/// the file with `text` (`xml_text` for the import).
fn each_input_refused(files: [&str; 3], text: &str, xml_text: &str) {
    let name = |f: &str| {
        Path::new(f)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string()
    };
    let [toml, rhai, xml] = files;
    timed(vcsim(&["check", toml])).fails_with(2, &[&name(toml), text]);
    let spec = format!("cpu={rhai}");
    timed(vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--policy",
        &spec,
    ]))
    .fails_with(2, &[&name(rhai), text]);
    timed(vcsim(&["import", xml])).fails_with(2, &[&name(xml), xml_text]);
}

#[cfg(unix)]
#[test]
fn an_endless_input_is_refused_at_its_size_bound() {
    // `/dev/zero` under every name a user could give it: each read stops at
    // the bound, within the time bound, instead of filling memory.
    let dir = temp_dir("hostile-endless");
    let named = |ext: &str| {
        let p = dir.join(format!("zero.{ext}"));
        let _ = std::fs::remove_file(&p);
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
        s(&p)
    };
    let (toml, rhai, xml) = (named("toml"), named("rhai"), named("xml"));
    let text = "larger than 16 MB, the most vcsim reads of such a file";
    timed(vcsim(&["run", "/dev/zero"])).fails_with(2, &["/dev/zero", text]);
    timed(vcsim(&["sweep", &toml])).fails_with(2, &["zero.toml", text]);
    each_input_refused([&toml, &rhai, &xml], text, "larger than 256 MB");
    // A shard whose manifest never ends.
    let shard = dir.join("shard");
    std::fs::create_dir_all(&shard).unwrap();
    let _ = std::fs::remove_file(shard.join("manifest.json"));
    std::os::unix::fs::symlink("/dev/zero", shard.join("manifest.json")).unwrap();
    let out = s(&dir.join("merged"));
    timed(vcsim(&["merge", &s(&shard), "--out", &out])).fails_with(2, &["manifest.json", text]);
}

#[cfg(unix)]
#[test]
fn a_named_pipe_no_program_writes_to_is_refused_not_waited_for() {
    // Opening a pipe waits for a writer: `run` on a named pipe no one
    // writes to used to wait for ever. It is refused after 2 s; a pipe whose
    // writer is already there (bash's `<(...)`) is read as a file.
    let dir = temp_dir("hostile-fifo-no-writer");
    let fifo = |name: &str| {
        let p = dir.join(name);
        let _ = std::fs::remove_file(&p);
        let made = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap();
        assert!(made.success());
        s(&p)
    };
    let (toml, rhai, xml) = (fifo("s.toml"), fifo("p.rhai"), fifo("c.xml"));
    let text = "an empty pipe that no program writes to (vcsim reads a pipe once, and waits 2 s at most for a writer)";
    timed(vcsim(&["run", &toml])).fails_with(2, &["s.toml", text]);
    each_input_refused([&toml, &rhai, &xml], text, text);
    // A pipe of no known extension is sniffed for BOINC's `<`: `check`
    // said it could not tell what it was; it is the same empty pipe.
    let bare = fifo("p.fifo");
    let r = timed(vcsim(&["check", &bare]));
    r.fails_with(2, &["p.fifo", text]);

    let bin = env!("CARGO_BIN_EXE_vcsim");
    let out = std::process::Command::new("bash")
        .current_dir(common::root())
        .arg("-c")
        .arg(format!(
            "'{bin}' check <(sed 's/^seed = .*/seed = 7/' scenarios/paper-base.toml)"
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_sweep_of_more_runs_than_one_process_makes_is_refused_before_running() {
    // 11 cells x 1 policy x 100,000 replications: 1.1 million runs, whose
    // rows would stay in memory; it used to start them (and a sweep of 3e10
    // runs filled 5 GB in 20 s).
    let dir = sweep_dir("hostile-many-runs", "[\"waste\"]", 1);
    let sweep = dir.join("sweep.toml");
    let text = std::fs::read_to_string(&sweep)
        .unwrap()
        .replace(
            "values = [1, 2]",
            "values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]",
        )
        .replacen("metrics =", "replications = 100000\nmetrics =", 1);
    std::fs::write(&sweep, text).unwrap();
    let out = dir.join("out");
    let r = timed(vcsim(&["sweep", &s(&sweep), "--out", &s(&out)]));
    r.fails_with(
        2,
        &[
            "1100000 runs (11 cells x 1 policies x 100000 replications)",
            "at most 1000000",
            "--shard K/2",
        ],
    );
    assert!(!out.exists(), "nothing was written");
    // `check` calls the definition valid (shards can run it) and says so.
    let r = timed(vcsim(&["check", &s(&sweep)]));
    r.succeeds();
    assert!(r.stderr().contains("note: 1100000 runs"), "{}", r.stderr());
}

/// A policy's reason is text it chose: a line break in it cannot forge a
/// record in `explain`'s one-record-per-line output.
#[test]
fn a_reason_with_a_line_break_stays_on_its_record_line() {
    let dir = temp_dir("hostile-reason-newline");
    let script = dir.join("liar.rhai");
    std::fs::write(
        &script,
        "fn schedule(v) {\n    let out = [];\n    for j in v.runnable_jobs {\n        if out.len < v.host.ncpus {\n            out.push(#{ job: j, reason: \"fine\\n0d 00:00:00  cpu      FORGED\\u2028too\" });\n        }\n    }\n    out\n}\n",
    )
    .unwrap();
    let r = timed(vcsim(&[
        "explain",
        "scenarios/paper-base.toml",
        "--set",
        "duration_days=1",
        "--policy",
        &format!("cpu={}", s(&script)),
        "--to",
        "1h",
    ]));
    let out = r.succeeds();
    assert!(
        out.contains("fine\\n0d 00:00:00  cpu      FORGED\\u{2028}too"),
        "{out}"
    );
    assert!(
        !out.lines()
            .any(|l| l.starts_with("0d 00:00:00  cpu      FORGED")),
        "{out}"
    );
}

#[test]
fn a_script_past_its_size_bound_is_refused_and_a_byte_order_mark_ignored() {
    // 100,000 `let`s (1.6 MB) took 53 s to compile: refused at once, with
    // the bound. A file that a Windows editor saved starts with U+FEFF,
    // which rhai refused as an unexpected character.
    let dir = temp_dir("hostile-script-size");
    let big = dir.join("lets.rhai");
    let lets: String = (0..100_000).map(|i| format!("let a{i} = {i};\n")).collect();
    std::fs::write(&big, format!("{lets}fn schedule(v) {{\n    []\n}}\n")).unwrap();
    timed(vcsim(&["check", &s(&big)])).fails_with(
        2,
        &["lets.rhai: ", "bytes, more than a script's 32768", "square"],
    );
    let bom = dir.join("bom.rhai");
    std::fs::write(
        &bom,
        "\u{feff}//! Saved by a Windows editor.\nfn schedule(v) {\n    v.runnable_jobs.filter(|j| j.is_running)\n}\n",
    )
    .unwrap();
    let out = timed(vcsim(&["check", &s(&bom)])).succeeds();
    assert!(
        out.contains("valid rhai policy for cpu (Saved by a Windows editor.)"),
        "{out}"
    );
}

// ---- Outputs that are not regular files ----

/// Makes a FIFO at `path`; false, said on standard error, where the machine
/// has no `mkfifo` (the test then skips its FIFO case).
fn made_fifo(path: &Path) -> bool {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    let ok = made.is_ok_and(|s| s.success());
    if !ok {
        eprintln!("no mkfifo on this machine: the FIFO case skipped");
    }
    ok
}

#[test]
fn a_timeline_written_to_a_fifo_reaches_its_reader() {
    // The check of the output before the run opened and closed the FIFO:
    // its reader saw the end of its input, and the page, written after the
    // run, then waited for a reader for ever.
    let dir = temp_dir("hostile-fifo");
    let fifo = dir.join("page.html");
    let _ = std::fs::remove_file(&fifo);
    if !made_fifo(&fifo) {
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(&fifo).unwrap())
    };
    let scn = short_scenario(&dir, "scenarios/paper-base.toml", |t| {
        t.replacen("duration_days = 100", "duration_days = 1", 1)
    });
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_vcsim"))
        .args(["run", &s(&scn), "--timeline", &s(&fifo)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if start.elapsed() > common::HOSTILE_BOUND * 3 {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // A reader that still waits (vcsim ended without opening the FIFO) is
    // let go by a writer of nothing; one that has ended needs none, and
    // this writer then waits, detached, until the test ends.
    if !reader.is_finished() {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::OpenOptions::new().write(true).open(fifo));
    }
    let page = reader.join().unwrap();
    assert!(status.is_some(), "vcsim waited for ever on the FIFO");
    assert!(status.unwrap().success());
    let page = String::from_utf8_lossy(&page);
    assert!(
        page.contains("<html"),
        "the reader got {} bytes",
        page.len()
    );
}

// ---- BOINC input through a pipe or a FIFO ----

/// `vcsim import ARGS` with `input` written to its standard input through a
/// pipe; its output, killed past the hostile bound.
fn import_piped(args: &[&str], input: Vec<u8>) -> std::process::Output {
    use std::io::Write as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_vcsim"))
        .arg("import")
        .args(args)
        .current_dir(common::root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || stdin.write_all(&input));
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > common::HOSTILE_BOUND * 3 {
            child.kill().unwrap();
            panic!("vcsim import {args:?} waited for ever");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_boinc_file_read_through_a_pipe_or_fifo_is_read_once() {
    // The input's kind was told by reading it, then it was read again: a
    // pipe had nothing left ("no root element"), a FIFO waited for ever.
    let state =
        std::fs::read(common::root().join("tests/fixtures/boinc/today/client_state.xml")).unwrap();
    let out = import_piped(&["/dev/stdin"], state.clone());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("[[project]]"));
    // A FIFO beside a client_state.xml is read, not skipped: the override's
    // preferences were dropped without a word.
    let dir = temp_dir("hostile-import-fifo");
    let host = common::root().join("tests/fixtures/boinc/host");
    for f in ["client_state.xml", "global_prefs.xml"] {
        std::fs::copy(host.join(f), dir.join(f)).unwrap();
    }
    let fifo = dir.join("global_prefs_override.xml");
    if !made_fifo(&fifo) {
        return;
    }
    let text = std::fs::read(host.join("global_prefs_override.xml")).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, text))
    };
    let r = timed(vcsim(&["import", &s(&dir)]));
    let toml = r.succeeds();
    writer.join().unwrap().unwrap();
    assert!(
        toml.contains("global_prefs_override.xml line"),
        "the override was not read: {toml}"
    );
}

// ---- A policy's error names the step it was met at, in either mode ----

#[test]
fn a_fetchers_error_names_the_same_time_in_both_modes() {
    // The event-driven mode asks a fetcher at the steps ahead of the state's
    // (a fixed-step run asks it there too); its error named the state's
    // time, an hour earlier than the fixed-step run's.
    let dir = temp_dir("hostile-fetch-error-time");
    let script = dir.join("late_error.rhai");
    std::fs::write(
        &script,
        "fn request(v) {\n    if v.now > 7000.0 { throw \"met at \" + v.now; }\n    ()\n}\n",
    )
    .unwrap();
    let scn = short_scenario(&dir, "scenarios/paper-base.toml", |t| {
        t.replacen("duration_days = 100", "duration_days = 1", 1)
    });
    let policy = format!("fetch={}", s(&script));
    let events = timed(vcsim(&["run", &s(&scn), "--policy", &policy]));
    let fixed = timed(vcsim(&[
        "run",
        &s(&scn),
        "--policy",
        &policy,
        "--fixed-step",
    ]));
    events.fails_with(
        1,
        &["at simulated time 0d 01:57:00 (t=7020s)", "met at 7020"],
    );
    assert_eq!(events.stderr(), fixed.stderr());
}

// ---- Inputs read once, and never written over (a ninth probe) ----

/// `script` run by bash from the repository's root, with `$V` the binary.
#[cfg(unix)]
fn bash(script: &str) -> std::process::Output {
    std::process::Command::new("bash")
        .current_dir(common::root())
        .env("V", env!("CARGO_BIN_EXE_vcsim"))
        .arg("-c")
        .arg(script)
        .output()
        .unwrap()
}

#[cfg(unix)]
#[test]
fn every_input_through_a_pipe_is_read_once() {
    // Each of these read its input twice (to tell its kind, then to load
    // it); the second read of a pipe is empty ("missing field `name`").
    let dir = dir_with_base("hostile-pipes");
    let sweep = sweep_dir("hostile-pipes-sweep", "[\"waste\"]", 1).join("sweep.toml");
    let text = std::fs::read_to_string(&sweep).unwrap().replace(
        "scenario = \"base.toml\"",
        &format!("scenario = \"{}\"", s(&dir.join("base.toml"))),
    );
    std::fs::write(&sweep, text).unwrap();
    let space = dir.join("space.toml");
    let text =
        std::fs::read_to_string(common::root().join("scenarios/spaces/where-cs1-loses.toml"))
            .unwrap();
    let text = text
        .lines()
        .map(|l| {
            if l.starts_with("scenario =") {
                format!("scenario = \"{}\"", s(&dir.join("base.toml")))
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&space, text).unwrap();
    for (script, says) in [
        (format!("$V check <(cat '{}')", s(&sweep)), "sweep `hostile` is valid"),
        (format!("$V check <(cat '{}')", s(&space)), "search space `where-cs1-loses` is valid"),
        (
            "$V diverge <(cat scenarios/paper-base.toml) --policy CS1 --policy CS2 --set duration_days=1"
                .to_string(),
            "A: CS1_WF2_WS2_JC2",
        ),
        (
            format!(
                "ln -sf /dev/stdin '{0}/stdin.rhai' && cat policies/least_slack.rhai | \
                 $V run scenarios/paper-base.toml --set duration_days=1 --policy '{0}/stdin.rhai'",
                s(&dir)
            ),
            "policy stdin_WF2_WS2_JC2",
        ),
    ] {
        let out = bash(&script);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{script}: {stderr}");
        assert!(stdout.contains(says), "{script}: {stdout}");
    }
}

#[cfg(unix)]
#[test]
fn an_output_at_a_file_the_command_reads_is_refused_by_any_name() {
    let dir = temp_dir("hostile-overwrite");
    let copy = |from: &str, to: &str| {
        let p = dir.join(to);
        std::fs::copy(common::root().join(from), &p).unwrap();
        s(&p)
    };
    // The script a policy names.
    let script = copy("policies/least_slack.rhai", "my.rhai");
    let spec = format!("cpu={script}");
    timed(vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--set",
        "duration_days=1",
        "--policy",
        &spec,
        "--trace",
        &script,
    ]))
    .fails_with(
        2,
        &["--trace and", "my.rhai (which it reads) name the same file"],
    );
    let kept = std::fs::read_to_string(&script).unwrap();
    assert!(kept.starts_with("//! Least slack first"), "{kept}");
    // A hard link to the scenario.
    let scn = copy("scenarios/paper-base.toml", "s.toml");
    let hard = dir.join("hard.csv");
    std::fs::hard_link(&scn, &hard).unwrap();
    timed(vcsim(&[
        "run",
        &scn,
        "--set",
        "duration_days=1",
        "--timeline",
        &s(&hard),
    ]))
    .fails_with(2, &["hard.csv: --timeline and", "s.toml (which it reads)"]);
    // A BOINC file read beside the one named.
    let boinc = dir.join("boinc");
    std::fs::create_dir_all(&boinc).unwrap();
    for f in ["client_state.xml", "global_prefs.xml"] {
        std::fs::copy(
            common::root().join("tests/fixtures/boinc/emulator").join(f),
            boinc.join(f),
        )
        .unwrap();
    }
    let prefs = s(&boinc.join("global_prefs.xml"));
    let before = std::fs::read_to_string(&prefs).unwrap();
    timed(vcsim(&["import", &s(&boinc), "--out", &prefs]))
        .fails_with(2, &["--out and", "global_prefs.xml (which it reads)"]);
    timed(vcsim(&[
        "run",
        &s(&boinc),
        "--set",
        "duration_days=1",
        "--trace",
        &prefs,
    ]))
    .fails_with(2, &["--trace and", "global_prefs.xml (which it reads)"]);
    assert_eq!(std::fs::read_to_string(&prefs).unwrap(), before);
    // A search's output linked to its base scenario, refused before running.
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let space = copy("scenarios/spaces/where-cs1-loses.toml", "space.toml");
    let text = std::fs::read_to_string(&space).unwrap();
    let base = copy("scenarios/paper-base.toml", "paper-base.toml");
    let text: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("scenario =") {
                format!("scenario = \"{base}\"")
            } else {
                l.into()
            }
        })
        .collect();
    std::fs::write(&space, text.join("\n")).unwrap();
    std::os::unix::fs::symlink(&base, out.join("worst.toml")).unwrap();
    timed(vcsim(&[
        "search",
        "--policy",
        "CS1",
        "--policy",
        "CS2",
        "--metric",
        "waste",
        "--space",
        &space,
        "--budget",
        "200",
        "--days",
        "5",
        "--out",
        &s(&out),
    ]))
    .fails_with(2, &["worst.toml", "which this command reads"]);
    let kept = std::fs::read_to_string(&base).unwrap();
    assert!(kept.contains("name = \"paper-base\""), "{kept}");
}

#[cfg(unix)]
#[test]
fn a_boinc_file_there_but_unreadable_is_an_error_not_absent() {
    // A directory or a link loop where a beside-file is: taken as absent,
    // it gave vcsim's defaults without a word.
    let dir = temp_dir("hostile-beside");
    let (a, b) = (dir.join("a"), dir.join("b"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::copy(
            common::root().join("tests/fixtures/boinc/emulator/client_state.xml"),
            d.join("client_state.xml"),
        )
        .unwrap();
    }
    std::fs::create_dir(a.join("global_prefs.xml")).unwrap();
    std::os::unix::fs::symlink("gp", b.join("global_prefs.xml")).unwrap();
    std::os::unix::fs::symlink("global_prefs.xml", b.join("gp")).unwrap();
    timed(vcsim(&["import", &s(&a)])).fails_with(
        2,
        &[
            "global_prefs.xml",
            "it is a directory, where BOINC keeps a file",
        ],
    );
    timed(vcsim(&["import", &s(&b)])).fails_with(2, &["global_prefs.xml", "cannot read the file"]);
    let c = dir.join("c");
    std::fs::create_dir_all(c.join("client_state.xml")).unwrap();
    timed(vcsim(&["import", &s(&c)])).fails_with(2, &["client_state.xml", "it is a directory"]);
}

#[cfg(unix)]
#[test]
fn sweep_and_merge_outputs_are_checked_before_the_first_run() {
    let dir = sweep_dir("hostile-sweep-outputs", "[\"waste\"]", 1);
    let sweep = s(&dir.join("sweep.toml"));
    let fifo = |p: &Path| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap()
            .success());
    };
    fifo(&dir.join("a/summary.csv"));
    timed(vcsim(&["sweep", &sweep, "--out", &s(&dir.join("a"))]))
        .fails_with(2, &["summary.csv", "it is not a regular file"]);
    std::fs::create_dir_all(dir.join("c/results.csv")).unwrap();
    timed(vcsim(&["sweep", &sweep, "--out", &s(&dir.join("c"))]))
        .fails_with(2, &["results.csv", "it is a directory"]);
    for (i, shard) in ["1/2", "2/2"].iter().enumerate() {
        let out = s(&dir.join(format!("s{i}")));
        vcsim(&["sweep", &sweep, "--shard", shard, "--out", &out])
            .run()
            .succeeds();
    }
    fifo(&dir.join("m/results.csv"));
    timed(vcsim(&[
        "merge",
        &s(&dir.join("s0")),
        &s(&dir.join("s1")),
        "--out",
        &s(&dir.join("m")),
    ]))
    .fails_with(2, &["results.csv", "it is not a regular file"]);
}

#[test]
fn a_byte_that_is_not_utf8_is_named_by_its_line() {
    let dir = temp_dir("hostile-utf8");
    let base = std::fs::read(common::root().join("scenarios/paper-base.toml")).unwrap();
    let mut text = b"# caf\xe9\n".to_vec();
    text.extend(base);
    let p = dir.join("s.toml");
    std::fs::write(&p, text).unwrap();
    timed(vcsim(&["check", &s(&p)])).fails_with(
        2,
        &["s.toml", "not UTF-8 text: byte 0xe9 at line 1, column 6"],
    );
}

#[test]
fn a_watch_limit_that_is_not_a_number_is_refused() {
    // Ignored, it left a watch meant to end running for ever.
    for bad in ["abc", "-1", "0"] {
        timed(
            vcsim(&[
                "compare",
                "scenarios/paper-base.toml",
                "--policy",
                "CS2_WF2_WS2_JC2",
                "--watch",
            ])
            .env("VCSIM_WATCH_MAX_RUNS", bad),
        )
        .fails_with(
            2,
            &["VCSIM_WATCH_MAX_RUNS", "must be a positive whole number"],
        );
    }
}

#[cfg(unix)]
#[test]
fn a_plugin_that_is_a_pipe_is_refused_not_waited_for() {
    let dir = temp_dir("hostile-plugin-fifo");
    let p = dir.join("lib.so");
    assert!(std::process::Command::new("mkfifo")
        .arg(&p)
        .status()
        .unwrap()
        .success());
    timed(vcsim(&["--plugin", &s(&p), "list"])).fails_with(
        2,
        &["lib.so", "not a loadable library: it is not a regular file"],
    );
}

/// `run` and `compare --format csv` printed a script's path raw, escape
/// sequences and all (a path could clear the terminal), where the tables
/// and the messages escape it: the CSV escapes it too.
#[test]
fn a_script_path_s_control_characters_are_escaped_in_csv_too() {
    let dir = temp_dir("csv-control-char");
    let script = dir.join("red\u{1b}[31m.rhai");
    std::fs::copy(common::root().join("policies/least_slack.rhai"), &script).unwrap();
    let spec = format!("cpu={}", script.display());
    let short = ["--set", "duration_days=0.5", "--format", "csv"];
    let mut run = vec!["run", "scenarios/paper-base.toml", "--policy", &spec];
    run.extend(short);
    let mut compare = vec![
        "compare",
        "scenarios/paper-base.toml",
        "--policy",
        "CS2_WF2_WS2_JC2",
        "--policy",
        &spec,
    ];
    compare.extend(short);
    for args in [run, compare] {
        let out = vcsim(&args).stdout();
        assert!(!out.contains('\u{1b}'), "{args:?}: a raw escape character");
        assert!(out.contains("red\\u{1b}[31m"), "{args:?}: {out}");
    }
}

/// `compare`'s table was laid out by trying every width from all the
/// policies down, a render each: 500 policies took minutes, printing
/// nothing. Each table now takes as many policies as fit at once, and
/// every line stays within the width.
#[test]
fn a_compare_of_500_policies_prints_its_tables_in_bounded_time() {
    let mut args = vec![
        "compare".to_string(),
        "scenarios/paper-base.toml".into(),
        "--set".into(),
        "duration_days=0.01".into(),
    ];
    for i in 1..=500 {
        args.push("--policy".into());
        args.push(format!("CS2_WF2_WS2_JC2,label=p{i}"));
    }
    let out = timed(vcsim(&args)).succeeds();
    assert!(
        out.lines().all(|l| l.chars().count() <= 100),
        "a line wider than 100"
    );
    // Every policy is in a table of means and (but the first) of differences.
    for i in [1, 250, 500] {
        let cell = format!("| p{i} ");
        assert!(
            out.matches(&cell).count() >= if i == 1 { 1 } else { 2 },
            "p{i}"
        );
    }
}

/// A CPU script may name its ranking anew at each call, each name within
/// the string limit: the page joined every name into the plot's label (a
/// 353 MB page for 5 days; 7 days aborted with status 134). The label has
/// the first five names, cut, and how many more; the run keeps 200
/// characters of each.
#[test]
fn a_ranking_named_anew_at_each_call_keeps_the_page_small() {
    let dir = temp_dir("rank-names");
    std::fs::write(
        dir.join("rk.rhai"),
        "fn schedule(v) {\n  let cap = v.capacity(); let out = [];\n  for j in v.jobs_by_deadline { if cap.fits(j) { cap.take(j); out.push(j); } }\n  let name = `${v.now}`;\n  name.pad(60000, \"y\");\n  #{ run: out, ranking: #{ name: name, values: [1.0] } }\n}\n",
    )
    .unwrap();
    let scn = common::root().join("scenarios/paper-base.toml");
    timed(
        vcsim(&[
            "run",
            scn.to_str().unwrap(),
            "--policy",
            "cpu=rk.rhai",
            "--set",
            "duration_days=2",
            "--set",
            "client.sched_period_minutes=1",
            "--timeline",
            "t.html",
        ])
        .cwd(&dir),
    )
    .succeeds();
    let page = std::fs::read_to_string(dir.join("t.html")).unwrap();
    assert!(page.len() < 5_000_000, "a page of {} bytes", page.len());
    assert!(
        page.contains(" more\""),
        "the label says how many more names"
    );
}

/// A script's text with control characters: what `log` writes from a hook
/// without a view (`init`) went raw to standard error, and a thrown error
/// raw into a sweep's `results.csv`, where the notes and the messages on
/// the terminal escape them. Both are escaped now.
#[test]
fn a_script_s_control_characters_reach_neither_the_terminal_nor_results_csv_raw() {
    let dir = temp_dir("script-control-chars");
    std::fs::write(
        dir.join("esc.rhai"),
        "fn init() { log(\"from init: \\u001b[2J\\u0007\"); #{} }\n\
         fn schedule(v) {\n    if v.now > 3600.0 { throw \"bad\\u001b[31m\" }\n    \
         let cap = v.capacity(); let out = [];\n    \
         for j in v.jobs_by_deadline { if cap.fits(j) { cap.take(j); out.push(j); } }\n    out\n}\n",
    )
    .unwrap();
    let scn = common::root().join("scenarios/paper-base.toml");
    std::fs::write(
        dir.join("sw.toml"),
        format!(
            "name = \"esc\"\nscenario = \"{}\"\npolicies = [\"CS2_WF2_WS2_JC2\", \"cpu=esc.rhai\"]\nreplications = 1\n[set]\nduration_days = 1\n",
            scn.display()
        ),
    )
    .unwrap();
    let r = timed(vcsim(&["sweep", "sw.toml", "--out", "out"]).cwd(&dir));
    assert_eq!(r.status(), 1, "{}", r.stderr());
    let err = r.stderr();
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{7}'),
        "raw control characters: {err:?}"
    );
    assert!(err.contains("from init: \\u{1b}[2J\\u{7}"), "{err}");
    let csv = std::fs::read_to_string(dir.join("out/results.csv")).unwrap();
    assert!(!csv.contains('\u{1b}'), "raw escape in results.csv");
    assert!(csv.contains("bad\\u{1b}[31m"), "{csv}");
}
