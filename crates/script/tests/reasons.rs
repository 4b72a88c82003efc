//! Reasons returned with decisions (issue 17): each hook's forms carry the
//! script's reason text and data into an explained run's records; a bad
//! reason is an error naming the script, the hook and the key; the forms
//! without a reason decide the same and give none.

use std::path::{Path, PathBuf};
use vcsim_framework::explain::{Datum, Record, Source};
use vcsim_framework::{
    run_spec, AnyPolicy, Family, PolicySpec, Registry, RunOutput, Scenario, SimOptions, View,
};
use vcsim_script::Script;

const TINY: &str = r#"
name = "tiny"
duration_days = 2
[host]
ncpus = 2
cpu_flops = 1e9
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 4
[[project.app]]
name = "a"
cpus = 1
flops_estimate = 1e13
flops_mean = 1e13
[[project]]
name = "B"
resource_share = 50
latency_bound_days = 4
[[project.app]]
name = "b"
cpus = 1
flops_estimate = 2e13
flops_mean = 2e13
"#;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tiny() -> Scenario {
    Scenario::from_toml_str(TINY, Path::new("tiny.toml")).unwrap()
}

/// A script in a temporary directory, named `name`.
fn script(name: &str, text: &str) -> String {
    let d = std::env::temp_dir().join(format!("vcsim-reasons-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// Runs `spec` on `scn` (families given as scripts are registered).
fn run(scn: &Scenario, spec: &str, explain: bool) -> Result<RunOutput, String> {
    vcsim_builtin::link();
    let spec = PolicySpec::parse(spec).unwrap();
    let mut reg = Registry::builtins().unwrap();
    for f in Family::ALL {
        let n = spec.name(f);
        if n.ends_with(".rhai") && reg.get(f, n).is_none() {
            vcsim_script::register(&mut reg, f, n).unwrap();
        }
    }
    let opts = SimOptions {
        explain,
        ..Default::default()
    };
    run_spec(scn, &reg, &spec, opts)
}

/// The records of an explained run by `family`.
fn records(out: &RunOutput, family: Family) -> Vec<Record> {
    let ex = out
        .explanation
        .as_ref()
        .expect("an explained run has records");
    ex.records
        .iter()
        .filter(|r| r.source == Source::Policy(family))
        .cloned()
        .collect()
}

fn number(r: &Record, key: &str) -> f64 {
    match r.reason.get(key) {
        Some(Datum::Number(x)) => *x,
        other => panic!("{key} of {r}: {other:?}"),
    }
}

/// The error of a run that must fail.
fn error(scn: &Scenario, spec: &str, explain: bool) -> String {
    match run(scn, spec, explain) {
        Ok(_) => panic!("{spec} ran without an error"),
        Err(e) => e,
    }
}

fn assert_has(e: &str, parts: &[&str]) {
    for p in parts {
        assert!(e.contains(p), "`{p}` missing from: {e}");
    }
}

#[test]
fn cs2_script_explains_its_jobs_and_ranks_by_debt_deciding_as_the_builtin() {
    let mut scn = Scenario::load(&root().join("scenarios/mix-5-slack-5.toml")).unwrap();
    scn.duration_days = 4.0;
    let cs2 = root().join("policies/cs2.rhai").display().to_string();
    let s = run(&scn, &format!("cpu={cs2}"), true).unwrap();
    let b = run(&scn, "cpu=cs2", true).unwrap();
    // The same decisions as the built-in, explained or not.
    let (rs, rb) = (records(&s, Family::Cpu), records(&b, Family::Cpu));
    assert_eq!(rs.len(), rb.len());
    assert!(rs.iter().zip(&rb).all(|(x, y)| x.same_decision(y)));
    assert_eq!(s.report.metrics, b.report.metrics);
    let plain = run(&scn, &format!("cpu={cs2}"), false).unwrap();
    assert_eq!(plain.report.metrics, s.report.metrics);

    let starts: Vec<&Record> = rs
        .iter()
        .filter(|r| r.decision.starts_with("start"))
        .collect();
    assert!(!starts.is_empty());
    for r in &starts {
        if r.decision.contains("deadline mode") {
            assert!(r.reason.text.starts_with("EDF"), "{r}");
            assert!(number(r, "misses") >= 1.0, "{r}");
            assert!(number(r, "deadline_s") > r.time, "{r}");
        } else {
            assert_eq!(
                r.reason.text, "its project has the largest anticipated short-term debt",
                "{r}"
            );
            assert!(number(r, "debt_s").abs() <= 86400.0, "{r}");
        }
    }
    assert!(starts.iter().any(|r| r.reason.get("debt_s").is_some()));
    // A job preempted takes the run list's own reason.
    let preempts: Vec<&Record> = rs
        .iter()
        .filter(|r| r.decision.starts_with("preempt"))
        .collect();
    assert!(!preempts.is_empty());
    for r in preempts {
        assert!(
            r.reason
                .text
                .starts_with("not listed, or a listed job took"),
            "{r}"
        );
        assert!(r.reason.data.is_empty(), "{r}");
    }
    // The debts as the ranking: one per project, summing to about 0.
    let ex = s.explanation.as_ref().unwrap();
    assert!(ex.rankings.len() > 1);
    for (_, r) in &ex.rankings {
        assert_eq!(r.name, "short-term debt (s)");
        assert_eq!(r.values.len(), scn.projects.len());
        assert!(r.values.iter().sum::<f64>().abs() < 1e-6 * 86400.0, "{r:?}");
    }
    assert!(ex
        .rankings
        .iter()
        .any(|(_, r)| r.values.iter().any(|x| *x != 0.0)));
}

#[test]
fn the_books_example_runs_and_a_bare_run_list_gives_no_reason() {
    let page = vcsim_script::api_reference();
    let start = page
        .find("```rhai\n")
        .expect("the Reasons section has an example")
        + 8;
    let text = &page[start..start + page[start..].find("```").unwrap()];
    let p = script("book_example.rhai", text);
    let out = run(&tiny(), &format!("cpu={p}"), true).unwrap();
    let rs = records(&out, Family::Cpu);
    let start = rs.iter().find(|r| r.decision.starts_with("start")).unwrap();
    assert_eq!(start.reason.text, "earliest deadline first");
    // The first jobs arrive at 0, due 4 days later.
    assert_eq!(number(start, "deadline_s"), 4.0 * 86400.0);

    // The same list, bare: the same decisions, no reason.
    let bare = script(
        "bare.rhai",
        &text
            .replace("#{ job: j, reason: #{ text: \"earliest deadline first\", deadline_s: j.deadline } }", "j")
            .replace("#{ run: run, reason: \"the jobs of earlier deadlines fill the host\" }", "run"),
    );
    let out2 = run(&tiny(), &format!("cpu={bare}"), true).unwrap();
    let rb = records(&out2, Family::Cpu);
    assert_eq!(rb.len(), rs.len());
    assert!(rb.iter().zip(&rs).all(|(x, y)| x.same_decision(y)));
    assert!(rb
        .iter()
        .all(|r| r.reason.text.is_empty() && r.reason.data.is_empty()));
    assert_eq!(out.report.metrics, out2.report.metrics);
}

const FETCH: &str = r#"
fn request(v) {
    for p in 0..v.nprojects {
        let pr = v.project(p);
        if pr.contactable && pr.jobs.len() < 2 {
            return #{
                request: work_request(p, 7200.0),
                reason: #{ text: "fewer than 2 jobs", queued: pr.jobs.len(), urgent: true, who: pr.name }
            };
        }
    }
    ()
}
"#;

#[test]
fn a_request_map_carries_its_reason_into_the_rpc_record() {
    let p = script("fetch.rhai", FETCH);
    let out = run(&tiny(), &format!("fetch={p}"), true).unwrap();
    // (A report-only session for overdue results asks for no work: the
    // simulator's reason.)
    let rs: Vec<Record> = records(&out, Family::Fetch)
        .into_iter()
        .filter(|r| !r.decision.ends_with("asking for no work"))
        .collect();
    assert!(rs.len() >= 2, "{rs:?}");
    for r in &rs {
        assert!(r.decision.starts_with("RPC to "), "{r}");
        assert_eq!(r.reason.text, "fewer than 2 jobs", "{r}");
        assert!(number(r, "queued") < 2.0, "{r}");
        assert_eq!(r.reason.get("urgent"), Some(&Datum::Flag(true)), "{r}");
        let who = ["A", "B"][r.project.unwrap()];
        assert_eq!(r.reason.get("who"), Some(&Datum::Text(who.into())), "{r}");
        // In the map's key order, after the text.
        let keys: Vec<&str> = r.reason.data.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["queued", "urgent", "who"]);
    }
}

const SEND: &str = r#"
fn consider(req, sent, cand) {
    if !req.asks_for(cand.rsc) {
        return #{ verdict: "skip", reason: "not asked for" };
    }
    let left = req.seconds_to_fill(cand.rsc);
    if left > 0.0 {
        #{ verdict: "send", reason: #{ text: "the request is not filled", left_s: left } }
    } else {
        #{ verdict: "stop", reason: #{ text: "the request is filled", sent: sent.len } }
    }
}
"#;

#[test]
fn a_verdict_map_carries_its_reason_and_decides_as_ws1() {
    let p = script("send.rhai", SEND);
    let out = run(&tiny(), &format!("send={p}"), true).unwrap();
    let rs = records(&out, Family::Send);
    let sends: Vec<&Record> = rs.iter().filter(|r| r.decision.contains("sends")).collect();
    assert!(!sends.is_empty());
    for r in &sends {
        assert_eq!(r.reason.text, "the request is not filled", "{r}");
        assert!(number(r, "left_s") > 0.0, "{r}");
    }
    let stops: Vec<&Record> = rs
        .iter()
        .filter(|r| r.decision.contains("ends the reply"))
        .collect();
    assert!(!stops.is_empty());
    for r in &stops {
        assert_eq!(r.reason.text, "the request is filled", "{r}");
        assert!(number(r, "sent") >= 1.0, "{r}");
    }
    let ws1 = run(&tiny(), "send=ws1", true).unwrap();
    assert_eq!(ws1.report.metrics, out.report.metrics);
}

#[test]
fn a_disk_plan_carries_its_reason() {
    let lru = std::fs::read_to_string(root().join("policies/disk_lru.rhai")).unwrap();
    let text = lru
        .replace(
            "#{ delete_files: r[0] }",
            "#{ delete_files: r[0], reason: #{ text: \"least recently used\", needed_bytes: needed } }",
        )
        .replace(
            "#{ delete_files: r[0], suspend: r[1] < over }",
            "#{ delete_files: r[0], suspend: r[1] < over, reason: \"over the limit\" }",
        );
    assert_ne!(text, lru);
    let p = script("disk.rhai", &text);
    let mut scn = Scenario::load(&root().join("scenarios/disk-tight.toml")).unwrap();
    scn.duration_days = 6.0;
    let out = run(&scn, &format!("disk={p}"), true).unwrap();
    let rs = records(&out, Family::Disk);
    assert!(!rs.is_empty());
    for r in &rs {
        assert!(r.decision.starts_with("delete "), "{r}");
        match r.reason.text.as_str() {
            "least recently used" => assert!(number(r, "needed_bytes") > 0.0, "{r}"),
            "over the limit" => assert!(r.reason.data.is_empty(), "{r}"),
            _ => panic!("{r}"),
        }
    }
    // Called directly: the plan's reason, and none once a plan gives none.
    let s = std::sync::Arc::new(Script::compile("d.rhai", &text).unwrap());
    let AnyPolicy::Disk(mut d) = s.make(Family::Disk).unwrap() else {
        unreachable!()
    };
    let st = vcsim_framework::testing::state(TINY);
    let v = View::new(&st, &vcsim_builtin::jc::Jc1, st.now);
    let plan = d.poll(&v).unwrap();
    assert_eq!(d.explain_plan(&v, &plan).unwrap(), None);
    let plan = d.make_room(&v, 0, 1e18).unwrap();
    let r = d
        .explain_plan(&v, &plan)
        .unwrap()
        .expect("make_room's reason");
    assert_eq!(r.text, "least recently used");
    assert!(matches!(r.get("needed_bytes"), Some(Datum::Number(x)) if *x > 1e17));
    let plan = d.make_room(&v, 0, 0.0).unwrap();
    assert_eq!(d.explain_plan(&v, &plan).unwrap(), None);
}

#[test]
fn a_bad_reason_is_an_error_naming_script_hook_and_key_explained_or_not() {
    let nan = script(
        "nan.rhai",
        r#"fn schedule(v) { v.jobs.map(|j| #{ job: j, reason: #{ text: "x", score: sqrt(-1.0) } }) }"#,
    );
    for explain in [false, true] {
        let e = error(&tiny(), &format!("cpu={nan}"), explain);
        assert_has(
            &e,
            &[
                &nan,
                "in function `schedule`",
                "invalid reason for job",
                "`score`",
                "NaN",
                "finite",
            ],
        );
    }
    let inf = script(
        "inf.rhai",
        r#"fn schedule(v) { #{ run: v.jobs, reason: #{ big: 1e300 * 1e300 } } }"#,
    );
    assert_has(
        &error(&tiny(), &format!("cpu={inf}"), true),
        &[&inf, "`schedule`", "`big`", "inf"],
    );
    let nested = script(
        "nested.rhai",
        r#"fn consider(req, sent, cand) { #{ verdict: "send", reason: #{ text: "x", list: [1, 2] } } }"#,
    );
    assert_has(
        &error(&tiny(), &format!("send={nested}"), true),
        &[
            &nested,
            "in function `consider`",
            "invalid reason",
            "`list`",
            "array",
            "numbers, strings or bools",
        ],
    );
    let number = script(
        "number.rhai",
        r#"fn request(v) { if v.project(0).contactable { #{ request: work_request(0, 100.0), reason: 42 } } else { () } }"#,
    );
    assert_has(
        &error(&tiny(), &format!("fetch={number}"), false),
        &[
            &number,
            "in function `request`",
            "a reason must be a string or a map",
            "i64",
        ],
    );
    let text = script(
        "text.rhai",
        r#"fn schedule(v) { #{ run: v.jobs, reason: #{ text: 3 } } }"#,
    );
    assert_has(
        &error(&tiny(), &format!("cpu={text}"), true),
        &[&text, "`text` must be a string"],
    );
    let ranking = script(
        "ranking.rhai",
        r#"fn schedule(v) { #{ run: v.jobs, ranking: #{ name: "x", values: [1.0] } } }"#,
    );
    assert_has(
        &error(&tiny(), &format!("cpu={ranking}"), false),
        &[
            &ranking,
            "in function `schedule`",
            "invalid ranking",
            "1 numbers for 2 projects",
        ],
    );
    let key = script(
        "key.rhai",
        r#"fn consider(req, sent, cand) { #{ verdict: "send", reasons: "typo" } }"#,
    );
    assert_has(
        &error(&tiny(), &format!("send={key}"), true),
        &[&key, "in function `consider`", "unknown key `reasons`"],
    );
}

/// The time of a 100-day base run of a CPU script (`VCSIM_TIME_SCRIPT`,
/// default `policies/cs2.rhai`; `VCSIM_TIME_EXPLAIN` explains it): `cargo
/// test --release -p vcsim-script --test reasons -- --ignored --nocapture`.
#[test]
#[ignore]
fn time_a_base_run() {
    let scn = Scenario::load(&root().join("scenarios/paper-base.toml")).unwrap();
    let path = std::env::var("VCSIM_TIME_SCRIPT")
        .unwrap_or_else(|_| root().join("policies/cs2.rhai").display().to_string());
    let explain = std::env::var("VCSIM_TIME_EXPLAIN").is_ok();
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let out = run(&scn, &format!("cpu={path}"), explain).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
        std::hint::black_box(out);
    }
    println!("{path}: best of 5: {best:.3} s");
}
