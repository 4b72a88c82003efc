//! Policies as rhai scripts: the scripted built-ins give exactly the
//! built-ins' metrics; errors name file, line, column, function and
//! simulated time and never panic; runs are byte-identical across runs and
//! threads; the API reference page is up to date.

use std::path::{Path, PathBuf};
mod common;

use common::{root, vcsim};
use std::process::{Command, Stdio};
use vcsim_framework::{run_spec, Family, PolicySpec, Registry, RunReport, Scenario, SimOptions};

/// The scenarios of `scenarios/`, sorted, at most 15 days long: short
/// enough for a debug build, and the same in a release build, so that the
/// snapshots pin one set of numbers.
fn scenarios() -> Vec<Scenario> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let mut s = Scenario::load(p).unwrap();
            s.duration_days = s.duration_days.min(15.0);
            s
        })
        .collect()
}

fn policy(name: &str) -> String {
    root().join("policies").join(name).display().to_string()
}

/// The built-ins plus every script named in `specs`.
fn registry(specs: &[PolicySpec]) -> Registry {
    vcsim_builtin::link();
    let mut reg = Registry::builtins().unwrap();
    for s in specs {
        for f in Family::ALL {
            let n = s.name(f);
            if n.ends_with(".rhai") && reg.get(f, n).is_none() {
                vcsim_script::register(&mut reg, f, n).unwrap();
            }
        }
    }
    reg
}

fn spec(s: &str) -> PolicySpec {
    PolicySpec::parse(s).unwrap()
}

fn run(scn: &Scenario, reg: &Registry, s: &PolicySpec) -> Result<RunReport, String> {
    run_spec(scn, reg, s, SimOptions::default()).map(|o| o.report)
}

/// Everything but the policy's display name.
fn assert_same(a: &RunReport, b: &RunReport, what: &str) {
    assert_eq!(a.metrics, b.metrics, "{what}: metrics differ");
    assert_eq!(a.projects, b.projects, "{what}: per-project figures differ");
    assert_eq!(
        a.resources, b.resources,
        "{what}: per-resource figures differ"
    );
    assert_eq!(a.disk, b.disk, "{what}: disk figures differ");
}

#[test]
fn scripted_builtins_give_the_builtins_metrics_on_every_scenario() {
    let pairs: Vec<(String, String)> = vec![
        ("cpu=cs1".into(), format!("cpu={}", policy("cs1.rhai"))),
        ("cpu=cs2".into(), format!("cpu={}", policy("cs2.rhai"))),
        (
            "fetch=wf1-v4".into(),
            format!("fetch={}", policy("wf1_v4.rhai")),
        ),
        ("send=ws1".into(), format!("send={}", policy("ws1.rhai"))),
        (
            "estimate=jc2".into(),
            format!("estimate={}", policy("jc2.rhai")),
        ),
        (
            "disk=none".into(),
            format!("disk={}", policy("disk_none.rhai")),
        ),
        (
            "cpu=cs1,fetch=wf1-v4,send=ws1,estimate=jc2,disk=none".into(),
            format!(
                "cpu={},fetch={},send={},estimate={},disk={}",
                policy("cs1.rhai"),
                policy("wf1_v4.rhai"),
                policy("ws1.rhai"),
                policy("jc2.rhai"),
                policy("disk_none.rhai")
            ),
        ),
    ];
    let specs: Vec<PolicySpec> = pairs.iter().flat_map(|(a, b)| [spec(a), spec(b)]).collect();
    let reg = registry(&specs);
    let scns = scenarios();
    assert!(!scns.is_empty());
    for scn in &scns {
        for (b, s) in &pairs {
            let builtin = run(scn, &reg, &spec(b)).unwrap();
            let scripted = run(scn, &reg, &spec(s)).unwrap();
            assert_same(&builtin, &scripted, &format!("{} on {}", s, scn.name));
        }
    }
}

#[test]
fn example_policies_run_on_every_scenario() {
    let specs = [
        spec(&format!("cpu={}", policy("least_slack.rhai"))),
        spec(&format!("fetch={}", policy("least_queued.rhai"))),
    ];
    let reg = registry(&specs);
    for scn in scenarios() {
        let mut table = String::new();
        for (s, label) in specs
            .iter()
            .zip(["cpu=least_slack.rhai", "fetch=least_queued.rhai"])
        {
            let r = run(&scn, &reg, s).unwrap();
            table.push_str(&format!(
                "{label}: {}\n",
                serde_json::to_string(&r.metrics).unwrap()
            ));
        }
        insta::assert_snapshot!(format!("examples-{}", scn.name), table);
    }
}

#[test]
fn the_lru_disk_script_enforces_the_limit_on_disk_tight() {
    let mut scn = Scenario::load(&root().join("scenarios/disk-tight.toml")).unwrap();
    scn.duration_days = 4.0;
    let s = spec(&format!("disk={}", policy("disk_lru.rhai")));
    let reg = registry(std::slice::from_ref(&s));
    let r = run(&scn, &reg, &s).unwrap();
    let json: serde_json::Value = serde_json::to_value(&r).unwrap();
    let disk = json.get("disk").expect("a `disk` part");
    assert!(
        disk["bytes_deleted"].as_f64().unwrap() > 0.0,
        "nothing deleted: {disk}"
    );
    assert!(
        disk["peak_used_gb"].as_f64().unwrap() <= disk["limit_gb"].as_f64().unwrap() + 1e-9,
        "over the limit: {disk}"
    );
    // project_limit: the limit times the share (75/25 of 2 GB).
    let limits: Vec<f64> = json["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["disk_limit_gb"].as_f64().unwrap())
        .collect();
    assert_eq!(limits, vec![1.5, 0.5]);
}

#[test]
fn a_bad_disk_plan_fails_the_run_naming_the_script_function_and_time() {
    // The disk calls return plain values in vcsim's traits: the error is
    // kept and the simulator fails the run after the step.
    let text = std::fs::read_to_string(root().join("scenarios/disk-tight.toml")).unwrap();
    let scn_path = temp_script(
        "disk-tight-short.toml",
        &text.replace("duration_days = 30", "duration_days = 0.5"),
    );
    // A disk script's path, and its run on the short scenario.
    let run_disk = |name: &str, text: &str| {
        let p = temp_script(name, text);
        let policy = format!("disk={p}");
        let out = vcsim(&["run", &scn_path, "--policy", &policy]).run();
        (p, out)
    };
    let head = "fn enforces() { true }\n";
    let free = "fn free_space(v, p) { v.host.disk_bytes }\n";
    for (name, hook, text, msg) in [
        (
            "bad_poll.rhai",
            "poll",
            format!("{head}{free}fn poll(v) {{ #{{ delete_files: \"all\" }} }}\n"),
            "invalid decision: `delete_files` must be an array",
        ),
        (
            "bad_room.rhai",
            "make_room",
            format!("{head}{free}fn make_room(v, p, bytes) {{ #{{ suspend: 1 }} }}\n"),
            "invalid decision: `suspend` must be a bool",
        ),
        (
            "old_room.rhai",
            "make_room",
            format!("{head}{free}fn make_room(v, p, bytes) {{ #{{ fits: true }} }}\n"),
            "invalid decision: a plan has no `fits` any more",
        ),
        (
            "nan_free.rhai",
            "free_space",
            format!("{head}fn free_space(v, p) {{ 0.0 / 0.0 }}\n"),
            "invalid decision: free space NaN bytes",
        ),
        (
            "negative_free.rhai",
            "free_space",
            format!("{head}fn free_space(v, p) {{ -5.0 }}\n"),
            "invalid decision: free space -5 bytes",
        ),
        (
            "bad_free.rhai",
            "free_space",
            format!("{head}fn free_space(v, p) {{ throw \"no disk\" }}\n"),
            "no disk",
        ),
    ] {
        let (p, out) = run_disk(name, &text);
        let err = out.stderr();
        assert_eq!(out.status(), 1, "{err}");
        assert!(err.contains("at simulated time"), "{err}");
        assert!(err.contains(&format!("disk policy `{p}`")), "{err}");
        assert!(err.contains(&format!("in function `{hook}`")), "{err}");
        assert!(err.contains(msg), "{err}");
        assert_eq!(err.lines().count(), 1, "one error line: {err}");
    }
    // A plan the simulator refuses names the hook that made it (there were
    // two, and the message said neither).
    for (name, text, msg) in [
        (
            "gone_file.rhai",
            format!("{head}{free}fn poll(v) {{ #{{ delete_files: [99999] }} }}\n"),
            "invalid decision: `poll`'s plan: file 99999 is not on the host",
        ),
        (
            "gone_job.rhai",
            format!("{head}{free}fn make_room(v, p, bytes) {{ #{{ delete_jobs: [99999] }} }}\n"),
            "invalid decision: `make_room`'s plan: job 99999 is not on the host",
        ),
    ] {
        let (p, out) = run_disk(name, &text);
        out.fails_with(
            1,
            &["at simulated time", &format!("disk policy `{p}`"), msg],
        );
    }
}

#[test]
fn an_error_in_correction_fails_the_run_naming_the_script_and_time() {
    let p = temp_script(
        "bad_correction.rhai",
        "fn remaining(v, job) { job.estimated_seconds }\nfn correction(p) {\n    if v_never() { 1.0 } else { 2.0 }\n}\n",
    );
    let e = run_error("estimate", &p);
    assert!(e.contains("at simulated time 0d 00:00:00"), "{e}");
    assert!(e.contains(&format!("estimate policy `{p}`")), "{e}");
    assert!(e.contains(&format!("{p}:3:")), "{e}");
    assert!(e.contains("in function `correction`"), "{e}");
    // A correction that is not a positive number is an invalid decision.
    let p = temp_script(
        "zero_correction.rhai",
        "fn remaining(v, job) { job.estimated_seconds }\nfn correction(p) { 0.0 }\n",
    );
    let e = run_error("estimate", &p);
    assert!(
        e.contains("in function `correction`: invalid decision: 0 for project 0"),
        "{e}"
    );
}

/// A script in a temporary directory, named `name`.
fn temp_script(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("vcsim-scripts-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn short_base() -> Scenario {
    let mut s = Scenario::load(&root().join("scenarios/paper-base.toml")).unwrap();
    s.duration_days = 2.0;
    s
}

/// The error of a run of `family=script`.
fn run_error(family: &str, path: &str) -> String {
    let s = spec(&format!("{family}={path}"));
    let reg = registry(std::slice::from_ref(&s));
    run(&short_base(), &reg, &s).unwrap_err()
}

#[test]
fn a_syntax_error_is_reported_at_load_with_file_line_and_column() {
    let p = temp_script("syntax.rhai", "fn schedule(v) {\n    let x = ;\n}\n");
    let e = vcsim_script::Script::load(Path::new(&p)).err().unwrap();
    assert!(e.starts_with(&format!("{p}:2:13: syntax error")), "{e}");
    // `vcsim check` says the same, with exit status 2.
    vcsim(&["check", &p])
        .run()
        .fails_with(2, &[&format!("{p}:2:13: syntax error")]);
}

#[test]
fn the_worst_script_within_the_size_bound_compiles_in_seconds() {
    // rhai's optimizer flattens a run of bare blocks one block at a time,
    // rebuilding the list each time: the slowest shape found to compile
    // (1.7 s of CPU in a release build at the bound; 100,000 `let`s of
    // 1.6 MB took 53 s before the bound). Every shipped policy is well
    // within the bound.
    let max = vcsim_script::MAX_SCRIPT_BYTES;
    let text = format!(
        "{}\nfn schedule(v) {{\n    []\n}}\n",
        "{1}".repeat((max - 30) / 3)
    );
    assert!(text.len() <= max);
    let t = std::time::Instant::now();
    vcsim_script::Script::compile("blocks.rhai", &text).unwrap();
    let took = t.elapsed();
    // Room for a loaded machine; a debug build compiles 5 to 10 times slower.
    if !cfg!(debug_assertions) {
        assert!(took < std::time::Duration::from_secs(6), "took {took:?}");
    }
    for entry in std::fs::read_dir(root().join("policies")).unwrap() {
        let p = entry.unwrap().path();
        let n = std::fs::metadata(&p).unwrap().len() as usize;
        assert!(n * 3 < max, "{}: {n} bytes", p.display());
    }
}

#[test]
fn check_accepts_every_shipped_policy() {
    for name in [
        "cs1.rhai",
        "cs2.rhai",
        "wf1_v4.rhai",
        "ws1.rhai",
        "jc2.rhai",
        "disk_none.rhai",
        "disk_lru.rhai",
        "least_slack.rhai",
        "least_queued.rhai",
    ] {
        let text = vcsim(&["check", &policy(name)]).stdout();
        assert!(text.contains("valid rhai policy"), "{text}");
    }
}

#[test]
fn a_runtime_error_names_file_line_column_function_and_simulated_time() {
    let p = temp_script(
        "runtime.rhai",
        "fn schedule(v) {\n    helper(v)\n}\n\nfn helper(v) {\n    let jobs = v.jobs;\n    jobs[1000].id\n}\n",
    );
    let e = run_error("cpu", &p);
    assert!(e.contains("at simulated time 0d 00:00:00"), "{e}");
    assert!(e.contains(&format!("cpu policy `{p}`")), "{e}");
    assert!(e.contains(&format!("{p}:7:")), "{e}");
    assert!(
        e.contains("in function `helper` (called from `schedule`)"),
        "{e}"
    );
}

#[test]
fn an_endless_loop_is_stopped_naming_script_function_and_time() {
    let p = temp_script(
        "endless.rhai",
        "fn request(v) {\n    let i = 0;\n    loop {\n        i += 1;\n    }\n}\n",
    );
    let e = run_error("fetch", &p);
    assert!(e.contains("stopped after"), "{e}");
    assert!(e.contains(&format!("{p}:")), "{e}");
    assert!(e.contains("in function `request`"), "{e}");
    assert!(e.contains("at simulated time"), "{e}");
}

#[test]
fn invalid_decisions_become_errors_naming_the_script() {
    let twice = temp_script(
        "twice.rhai",
        "fn schedule(v) {\n    let j = v.runnable_jobs;\n    if j.len() > 0 { [j[0], j[0]] } else { [] }\n}\n",
    );
    let e = run_error("cpu", &twice);
    assert!(
        e.contains(&format!("cpu policy `{twice}`")) && e.contains("listed twice"),
        "{e}"
    );

    let all = temp_script("all.rhai", "fn schedule(v) {\n    v.runnable_jobs\n}\n");
    let e = run_error("cpu", &all);
    assert!(
        e.contains(&format!("cpu policy `{all}`"))
            && e.contains("more than BOINC would run on 2 CPUs"),
        "{e}"
    );

    let wrong = temp_script("wrong.rhai", "fn schedule(v) {\n    \"everything\"\n}\n");
    let e = run_error("cpu", &wrong);
    assert!(
        e.contains("invalid decision") && e.contains("in function `schedule`"),
        "{e}"
    );

    let ghost = temp_script(
        "ghost.rhai",
        "fn request(v) {\n    work_request(7, 100.0)\n}\n",
    );
    let e = run_error("fetch", &ghost);
    assert!(
        e.contains(&format!("fetch policy `{ghost}`")) && e.contains("project 7 does not exist"),
        "{e}"
    );
}

#[test]
fn the_sandbox_has_no_file_clock_or_eval() {
    for (name, text) in [
        ("import.rhai", "import \"x\" as x;\nfn schedule(v) { [] }\n"),
        ("eval.rhai", "fn schedule(v) { eval(\"[]\") }\n"),
        ("time.rhai", "fn schedule(v) { let t = timestamp(); [] }\n"),
    ] {
        let p = temp_script(name, text);
        let loaded = vcsim_script::Script::load(Path::new(&p));
        let failed = match loaded {
            Err(_) => true,
            Ok(_) => {
                let e = run_error("cpu", &p);
                e.contains(&p)
            }
        };
        assert!(failed, "{name} was accepted");
    }
    // Endless recursion is stopped before the stack runs out.
    let deep = temp_script("deep.rhai", "fn schedule(v) {\n    schedule(v)\n}\n");
    let e = run_error("cpu", &deep);
    assert!(
        e.contains("more than 48 nested calls") && e.contains(&format!("{deep}:2:")),
        "{e}"
    );
    // Strings and arrays are bounded.
    let big = temp_script(
        "big.rhai",
        "fn schedule(v) {\n    let a = [];\n    a.pad(1000000, 0);\n    []\n}\n",
    );
    let e = run_error("cpu", &big);
    assert!(
        e.contains(&format!("{big}:3:")) && e.contains("an array of more than 100000 elements"),
        "{e}"
    );
}

#[test]
fn errors_fail_only_their_own_runs_in_parallel() {
    use rayon::prelude::*;
    let bad = temp_script("bad.rhai", "fn schedule(v) {\n    1 / 0\n}\n");
    let specs = vec![
        spec(&format!("cpu={}", policy("cs1.rhai"))),
        spec(&format!("cpu={bad}")),
        spec("cpu=cs1"),
    ];
    let reg = registry(&specs);
    let scn = short_base();
    let results: Vec<Result<RunReport, String>> =
        specs.par_iter().map(|s| run(&scn, &reg, s)).collect();
    assert!(results[0].is_ok() && results[2].is_ok());
    assert!(results[1]
        .as_ref()
        .unwrap_err()
        .contains(&format!("{bad}:2:")));
    assert_same(
        results[0].as_ref().unwrap(),
        results[2].as_ref().unwrap(),
        "cs1",
    );
}

#[test]
fn script_runs_are_byte_identical_across_runs_and_threads() {
    let s = spec(&format!(
        "cpu={},fetch={},estimate={}",
        policy("least_slack.rhai"),
        policy("wf1_v4.rhai"),
        policy("jc2.rhai")
    ));
    let reg = registry(std::slice::from_ref(&s));
    let mut scn = Scenario::load(&root().join("scenarios/mix-5-slack-5.toml")).unwrap();
    scn.duration_days = 5.0;
    let once = || serde_json::to_string(&run(&scn, &reg, &s).unwrap()).unwrap();
    let first = once();
    assert_eq!(first, once());
    let threaded: Vec<String> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..4).map(|_| sc.spawn(once)).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for t in threaded {
        assert_eq!(first, t);
    }
}

#[test]
fn random_draws_are_reproducible_and_pure() {
    let p = temp_script(
        "random.rhai",
        "fn schedule(v) {\n    let jobs = v.runnable_jobs;\n    let cap = v.capacity();\n    let out = [];\n    while jobs.len() > 0 {\n        let j = jobs.remove(v.random(0, jobs.len()));\n        if cap.fits(j) { cap.take(j); out.push(j); }\n    }\n    out\n}\n",
    );
    let s = spec(&format!("cpu={p}"));
    let reg = registry(std::slice::from_ref(&s));
    let scn = short_base();
    let a = serde_json::to_string(&run(&scn, &reg, &s).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&scn, &reg, &s).unwrap()).unwrap();
    assert_eq!(a, b);
}

#[test]
fn the_api_reference_page_is_up_to_date() {
    let path = root().join("book/src/script-api.md");
    let generated = vcsim_script::api_reference();
    if std::env::var("UPDATE_SCRIPT_API").is_ok() {
        std::fs::write(&path, &generated).unwrap();
    }
    let page = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        page == generated,
        "book/src/script-api.md is out of date: run `UPDATE_SCRIPT_API=1 cargo test --test scripts api_reference`"
    );
}

#[test]
fn compare_watch_reruns_when_a_script_changes() {
    use std::io::{BufRead, BufReader, Write};
    let dir = std::env::temp_dir().join(format!("vcsim-watch-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scn = dir.join("s.toml");
    let base = std::fs::read_to_string(root().join("scenarios/paper-base.toml")).unwrap();
    std::fs::write(
        &scn,
        base.replace("duration_days = 100", "duration_days = 3"),
    )
    .unwrap();
    let script = dir.join("x.rhai");
    std::fs::write(
        &script,
        std::fs::read_to_string(policy("cs1.rhai")).unwrap(),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_vcsim"))
        .args([
            "compare",
            scn.to_str().unwrap(),
            "--policy",
            "CS2_WF2",
            "--policy",
            &format!("cpu={}", script.display()),
            "--watch",
        ])
        .env("VCSIM_WATCH_MAX_RUNS", "2")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    while !seen.contains("watching") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "ended early: {seen}");
        seen.push_str(&line);
    }
    // The least-slack scheduler instead of CS1.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(
        &script,
        std::fs::read_to_string(policy("least_slack.rhai")).unwrap(),
    )
    .unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let status = child.wait().unwrap();
    let _ = child.stdin.take().map(|mut s| s.write_all(b"q\n"));
    assert!(status.success(), "{seen}{rest}");
    assert!(rest.contains("changed: re-running"), "{rest}");
    assert!(rest.contains("changes since the last run:"), "{rest}");
    assert!(rest.contains("idleness"), "{rest}");
}

/// A script's `log` lines and its random draws follow the run: the lines
/// land in the run's log (printed as notes), and the draws depend on the
/// run's seed, so two seeds give two different sequences.
#[test]
fn script_logs_go_to_the_runs_log_and_draws_follow_the_seed() {
    let dir = std::env::temp_dir().join(format!("vcsim-script-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("noisy.rhai");
    std::fs::write(
        &path,
        "fn schedule(v) {\n    if v.now == 0.0 { log(`draw ${v.random()}`); }\n    let cap = v.capacity();\n    let out = [];\n    for j in v.runnable_jobs { if cap.fits(j) { cap.take(j); out.push(round_robin(j)); } }\n    out\n}\n",
    )
    .unwrap();
    let policy = format!("cpu={}", path.display());
    let run = |seed: &str| {
        let out = vcsim(&[
            "run",
            "scenarios/paper-base.toml",
            "--policy",
            &policy,
            "--seed",
            seed,
        ])
        .run();
        out.succeeds();
        out.stderr()
            .lines()
            .find(|l| l.contains("draw "))
            .map(str::to_string)
            .expect("the log line")
    };
    let (a, b, a2) = (run("1"), run("2"), run("1"));
    assert!(
        a.starts_with("note: 0d 00:00:00") && a.contains("noisy.rhai"),
        "{a}"
    );
    assert_eq!(a, a2, "same seed, same draw");
    assert_ne!(a, b, "another seed, another draw");
}

/// A fetcher's `request` is also evaluated at projected future times (to
/// find the step at which work is first needed): its log lines from those
/// evaluations never reach the run's log, which stays in simulated-time
/// order, each line stamped with the step it was written at.
#[test]
fn a_fetchers_log_lines_are_in_time_order_and_none_comes_from_a_projected_time() {
    let dir = common::temp_dir("request-log");
    let path = dir.join("chatty_wf.rhai");
    let wf1 = std::fs::read_to_string(policy("wf1_v4.rhai")).unwrap();
    // wf1_v4.rhai with a line logged at every evaluation of `request`.
    let text = wf1.replacen(
        "fn request(v) {",
        "fn request(v) {\n    log(`asked at ${v.now}`);",
        1,
    );
    assert_ne!(text, wf1, "wf1_v4.rhai defines request(v)");
    std::fs::write(&path, text).unwrap();
    let mut scn = std::fs::read_to_string(root().join("scenarios/paper-base.toml")).unwrap();
    scn = scn.replace("duration_days = 100", "duration_days = 2");
    let scn_path = dir.join("short.toml");
    std::fs::write(&scn_path, scn).unwrap();
    let out = vcsim(&[
        "run",
        scn_path.to_str().unwrap(),
        "--policy",
        &format!("fetch={}", path.display()),
    ])
    .run();
    out.succeeds();
    let mut last = -1.0;
    let mut n = 0;
    for line in out.stderr().lines().filter(|l| l.contains("asked at")) {
        // `note: 0d 00:01:00 (t=60s): <script>: asked at 60`
        let stamp: f64 = line
            .split("(t=")
            .nth(1)
            .and_then(|x| x.split('s').next())
            .and_then(|x| x.parse().ok())
            .expect("a time stamp");
        let asked: f64 = line.rsplit("asked at ").next().unwrap().parse().unwrap();
        assert_eq!(
            stamp, asked,
            "a line from another time than its stamp: {line}"
        );
        assert!(stamp >= last, "out of time order: {line} after t={last}");
        last = stamp;
        n += 1;
    }
    assert!(n > 10, "the fetcher logged {n} lines");
}

/// Handles kept in `this` (the API page's rule): a `View` reads the state
/// of the call that reads it, and a `Job` is looked up again by id, an
/// error at the reading line once the job has left the host.
#[test]
fn handles_kept_in_this_read_the_later_call_and_a_gone_job_is_an_error_at_its_line() {
    let cs1 = std::fs::read_to_string(root().join("policies/cs1.rhai")).unwrap();
    let keep = |name: &str, lines: &str| {
        let text = cs1.replacen(
            "fn schedule(v) {\n",
            &format!("fn schedule(v) {{\n{lines}"),
            1,
        );
        assert_ne!(text, cs1, "the script's schedule hook moved");
        temp_script(name, &text)
    };
    // A kept view: the same decisions as the built-in CS1, as it reads now.
    let view = keep(
        "keeps_view.rhai",
        "    if this.v != () && this.v.now != v.now { throw \"a stale view\"; }\n    this.v = v;\n",
    );
    let run = |policy: &str| {
        vcsim(&[
            "run",
            "scenarios/paper-base.toml",
            "--policy",
            &format!("cpu={policy}"),
            "--set",
            "duration_days=3",
            "--format",
            "json",
        ])
        .run()
    };
    let scripted: serde_json::Value = serde_json::from_str(&run(&view).succeeds()).unwrap();
    let builtin: serde_json::Value = serde_json::from_str(&run("cs1").succeeds()).unwrap();
    assert_eq!(scripted["metrics"], builtin["metrics"]);
    // A kept job, read after it was reported.
    let job = keep(
        "keeps_job.rhai",
        "    if this.j != () { let x = this.j.fraction_done; }\n    if v.jobs.len > 0 { this.j = v.jobs[0]; }\n",
    );
    let line = 2 + cs1.lines().position(|l| l == "fn schedule(v) {").unwrap();
    let at = format!("keeps_job.rhai:{line}:");
    run(&job).fails_with(1, &[&at, "job 0 is no longer on the host"]);
}

#[test]
fn a_jobs_static_estimate_is_a_number() {
    // It leaked a Rust `Result` ("Function not found: * (core::result::
    // Result<f64, ...>, f64)").
    let p = temp_script(
        "static_estimate.rhai",
        "fn schedule(v) {\n    for j in v.jobs {\n        let x = j.static_estimate * 2.0;\n        if type_of(x) != \"f64\" || x <= 0.0 { throw `static_estimate: ${x}`; }\n    }\n    []\n}\n",
    );
    let s = spec(&format!("cpu={p}"));
    let reg = registry(std::slice::from_ref(&s));
    run(&short_base(), &reg, &s).unwrap();
}

#[test]
fn an_optional_hook_with_other_parameters_is_refused_not_skipped() {
    // `fn enforces(v)` was never called, and the manager silently did not
    // enforce; `check` called the script valid.
    let p = temp_script(
        "enforces_v.rhai",
        "fn free_space(v, p) { 1e12 }\nfn enforces(v) { true }\n",
    );
    let e = vcsim_script::check(Path::new(&p)).unwrap_err();
    assert!(
        e.ends_with(
            "`enforces` takes 1 parameter; a disk policy's `enforces` takes 0, and as written it would never be called"
        ),
        "{e}"
    );
    let p = temp_script(
        "correction_vp.rhai",
        "fn remaining(v, job) { job.estimated_seconds }\nfn correction(v, p) { 1.0 }\n",
    );
    let e = vcsim_script::check(Path::new(&p)).unwrap_err();
    assert!(
        e.contains("`correction` takes 2 parameters; an estimate policy's `correction` takes 1"),
        "{e}"
    );
}

#[test]
fn a_capacity_knows_the_jobs_taken() {
    // `give` of a job never taken made 3 CPUs free on 2, and a job taken
    // twice counted twice.
    let check = |name: &str, body: &str| {
        let p = temp_script(
            name,
            &format!("fn schedule(v) {{\n    if v.jobs.is_empty() {{ return []; }}\n    let cap = v.capacity();\n    let j = v.jobs[0];\n{body}\n    []\n}}\n"),
        );
        run_error("cpu", &p)
    };
    let e = check("give_untaken.rhai", "    cap.give(j);");
    assert!(
        e.contains("is not taken: only a job taken can be given back"),
        "{e}"
    );
    assert!(e.contains("give_untaken.rhai:5:"), "{e}");
    let e = check("take_twice.rhai", "    cap.take(j);\n    cap.take(j);");
    assert!(e.contains("is already taken"), "{e}");
    let e = check(
        "fits_taken.rhai",
        "    cap.take(j);\n    if cap.fits(j) { throw \"fits\"; }\n    cap.give(j);\n    if cap.free(0) != v.host.ncpus { throw `free ${cap.free(0)}`; }\n    throw \"ok\";",
    );
    assert!(e.contains("ok"), "{e}");
}

/// `piggyback(v, p)` is asked what to ask p when an RPC goes there anyway:
/// a request to another project was dropped without a word (the RPC asked
/// for nothing). It is an invalid decision, naming both projects.
#[test]
fn a_piggyback_request_to_another_project_is_an_invalid_decision() {
    let wf1 = std::fs::read_to_string(root().join("policies/wf1_v4.rhai")).unwrap();
    let start = wf1.find("fn piggyback").expect("wf1_v4.rhai has piggyback");
    let end = start + wf1[start..].find("\n}\n").unwrap() + 3;
    let text = format!(
        "{}{}fn piggyback(v, p) {{ work_request((p + 1) % v.nprojects, 1000.0) }}\n",
        &wf1[..start],
        &wf1[end..]
    );
    let p = temp_script("piggyback_other.rhai", &text);
    let s = spec(&format!("fetch={p}"));
    let reg = registry(std::slice::from_ref(&s));
    let mut scn = Scenario::load(&root().join("scenarios/today-four-projects.toml")).unwrap();
    scn.duration_days = 1.0;
    let e = run(&scn, &reg, &s).unwrap_err();
    assert!(
        e.contains(
            "invalid decision: `piggyback` for project `A` returned a request to project `B`"
        ),
        "{e}"
    );
}

/// A script's `log` lines were printed only by a run that succeeded: the
/// run that failed, whose author needs them most, printed none. `run` and
/// `explain` print them above the error.
#[test]
fn a_failed_run_prints_the_log_lines_before_its_error() {
    let p = temp_script(
        "log_then_throw.rhai",
        "fn schedule(v) {\n    log(`schedule at ${v.now}`);\n    if v.now > 7200.0 { throw \"boom\"; }\n    let cap = v.capacity(); let out = [];\n    for j in v.jobs_by_deadline { if cap.fits(j) { cap.take(j); out.push(j); } }\n    out\n}\n",
    );
    let spec = format!("cpu={p}");
    for cmd in ["run", "explain"] {
        let r = vcsim(&[
            cmd,
            "scenarios/paper-base.toml",
            "--policy",
            &spec,
            "--set",
            "duration_days=1",
        ])
        .run();
        assert_eq!(r.status(), 1, "{cmd}: {}", r.stderr());
        let err = r.stderr();
        let logged = err
            .find("schedule at 7200")
            .unwrap_or_else(|| panic!("{cmd}: {err}"));
        let failed = err.find("boom").unwrap();
        assert!(logged < failed, "{cmd}: the log comes first: {err}");
    }
}

/// A state over the limits that `init` returns (a map filled by `m[k] = x`)
/// was blamed on the first hook called, which never touched `this`: it is
/// `init`'s error.
#[test]
fn a_state_over_the_limits_from_init_is_init_s_error() {
    let p = temp_script(
        "big_init.rhai",
        "fn init() { let m = #{}; for i in 0..10001 { m[`k${i}`] = i; } m }\n\
         fn schedule(v) { v.jobs_by_deadline }\n",
    );
    let e = run_error("cpu", &p);
    assert!(
        e.contains(
            "in function `init`: the state it returns holds a map of more than 10000 entries"
        ),
        "{e}"
    );
}

/// An estimator that reads its own estimates is refused: the error named
/// no line, and where the script defines `correction`, blamed that
/// constant function. It is at the line of `remaining` that asked.
#[test]
fn an_estimator_reading_its_own_estimates_is_refused_at_that_line() {
    for (name, read) in [
        ("own_remaining.rhai", "job.remaining"),
        ("own_static.rhai", "job.static_estimate"),
    ] {
        let p = temp_script(
            name,
            &format!("fn remaining(v, job) {{\n    let x = 1.0;\n    {read} * x\n}}\nfn correction(p) {{ 2.0 }}\n"),
        );
        let e = run_error("estimate", &p);
        assert!(
            e.contains(&format!("{p}:3:"))
                && e.contains("in function `remaining`: the script was called again while it runs"),
            "{e}"
        );
    }
}

/// A value of the wrong kind is named as scripts know it (`Job`), not by
/// vcsim's Rust type (`vcsim_script::api::JobH`).
#[test]
fn a_returned_handle_of_the_wrong_kind_is_named_as_the_api_names_it() {
    let p = temp_script("returns_job.rhai", "fn remaining(v, job) { job }\n");
    let e = run_error("estimate", &p);
    assert!(e.contains("it must return a number, got Job"), "{e}");
    assert!(!e.contains("vcsim_script::"), "{e}");
}

/// A map without the key that makes it a decision (`job` in a run list's
/// entry, `verdict` of a sender) was reported as "got ()".
#[test]
fn a_decision_map_without_its_key_says_which_key() {
    let p = temp_script("no_job.rhai", "fn schedule(v) { [#{ reason: \"x\" }] }\n");
    let e = run_error("cpu", &p);
    assert!(
        e.contains("an entry of the run list is a map without `job`"),
        "{e}"
    );
    assert!(!e.contains("got ()"), "{e}");
    let p = temp_script(
        "no_verdict.rhai",
        "fn consider(req, sent, cand) { #{ reason: \"x\" } }\n",
    );
    let e = run_error("send", &p);
    assert!(e.contains("the map it returned has no `verdict`"), "{e}");
}

/// A thrown text is the script's: its control characters are escaped in
/// the error wherever it goes (a newline printed raw forged a line of
/// vcsim's own output; an ESC recoloured the terminal).
#[test]
fn a_thrown_text_reaches_no_terminal_with_its_control_characters() {
    let path = temp_script(
        "throws-controls.rhai",
        "fn schedule(v) { throw \"boom\\x1b[31mRED\\nFAKE: forged line\"; }\n",
    );
    let e = run_error("cpu", &path);
    assert!(e.contains("boom\\u{1b}[31mRED"), "{e}");
    assert!(!e.contains(['\u{1b}', '\n']), "{e:?}");
    let r = vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--set",
        "duration_days=1",
        "--policy",
        &format!("cpu={path}"),
    ])
    .run();
    r.fails_with(1, &["boom\\u{1b}[31mRED"]);
    assert!(!r.stderr().contains('\u{1b}'), "{:?}", r.stderr());
    assert!(
        !r.stderr().lines().any(|l| l.starts_with("FAKE")),
        "{:?}",
        r.stderr()
    );
}

/// Runs `vcsim run` of the 1-day scenario of the probes with `script` as
/// its cpu policy: (exit status, standard error), checking that it ended
/// within a few seconds.
fn run_cpu_script(name: &str, text: &str) -> (Option<i32>, String) {
    let p = temp_script(name, text);
    // (One scenario file per script: the tests run in parallel.)
    let scn = temp_script(
        &format!("{name}.toml"),
        "name = \"b\"\nduration_days = 1\n[host]\nncpus = 2\ncpu_flops = 1e9\n[[project]]\nname = \"A\"\nresource_share = 100\nlatency_bound_days = 9\n[[project.app]]\nname = \"main\"\nflops_estimate = 1.3e13\nflops_mean = 1.3e13\n",
    );
    let t = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_vcsim"))
        .args(["run", &scn, "--policy", &p])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let took = t.elapsed();
    assert!(took.as_secs() < 5, "{name} took {took:?}");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_curried_function_pointer_is_held_to_the_size_limits_at_its_line() {
    let big = "    let big = [];\n    big.pad(99999, 0);\n";
    let array = "an array of more than 100000 elements";
    // (script, the line that must be named, the limit).
    let cases = [
        // Padding an array with a pointer that holds a big array.
        (
            format!("fn g(x) {{ 1 }}\nfn schedule(v) {{\n{big}    let f = Fn(\"g\");\n    f = f.curry(big);\n    let a = [];\n    a.pad(99999, f);\n    []\n}}\n"),
            ":8:",
            array,
        ),
        // Currying in a loop (method and function style).
        (
            format!("fn g(x) {{ 1 }}\nfn schedule(v) {{\n{big}    let f = Fn(\"g\");\n    loop {{ f = f.curry(big); }}\n}}\n"),
            ":6:",
            array,
        ),
        (
            "fn g(x) { 1 }\nfn schedule(v) {\n    let f = Fn(\"g\");\n    loop { f = curry(f, f); }\n}\n".to_string(),
            ":4:",
            array,
        ),
        // A map filled by index with such a pointer: each copy counts (the
        // map is over the limit at its next read).
        (
            format!("fn g(x) {{ 1 }}\nfn schedule(v) {{\n{big}    let f = Fn(\"g\").curry(big);\n    let m = #{{}};\n    for i in 0..100000 {{ m[\"k\" + i] = f; }}\n    []\n}}\n"),
            ":7:",
            array,
        ),
        // Literals nesting such pointers (rhai's own check of a literal
        // passes over pointers): ten levels doubled to an abort at 3 GB;
        // the read of the first value over the limit stops it.
        (
            "fn g(x) { 1 }\nfn schedule(v) {\n    let a = [];\n    a.pad(60000, 0);\n    let f = Fn(\"g\").curry(a);\n    let b = [f, f];\n    let c = [b, b];\n    []\n}\n".to_string(),
            ":7:",
            array,
        ),
    ];
    for (i, (text, line, limit)) in cases.iter().enumerate() {
        let name = format!("curried{i}.rhai");
        let (code, err) = run_cpu_script(&name, text);
        assert_eq!(code, Some(1), "{name}: {err}");
        assert!(err.contains(&format!("{name}{line}")), "{name}: {err}");
        assert!(err.contains(limit), "{name}: {err}");
        assert!(err.contains("in function `schedule`"), "{name}: {err}");
    }
    // A curried pointer within the limits works as rhai's own does.
    let (code, err) = run_cpu_script(
        "curry_ok.rhai",
        "fn g(a, b) { a + b }\nfn schedule(v) {\n    let x = 5;\n    let c = |y| x + y;\n    let f = curry(Fn(\"g\"), 1).curry(2);\n    if f.call() != 3 || c.call(1) != 6 { throw \"curry\"; }\n    []\n}\n",
    );
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn a_stop_in_an_empty_loop_names_the_hook_and_the_limit_and_the_book_says_why() {
    for (i, body) in ["loop { }", "while true { }"].iter().enumerate() {
        let name = format!("eloop{i}.rhai");
        let (code, err) = run_cpu_script(
            &name,
            &format!("fn schedule(v) {{\n    let a = 1;\n    {body}\n}}\n"),
        );
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains(&format!("{name}: in function `schedule`: stopped after")),
            "{err}"
        );
    }
    // rhai gives no line for such a stop: the book lists the case.
    let page = std::fs::read_to_string(root().join("book/src/script-api.md")).unwrap();
    assert!(page.contains("a call stopped by its operations or its time while it uses no variable, as an empty loop (`loop { }`"));
}
