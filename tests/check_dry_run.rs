//! `vcsim check` on a script runs it for five simulated days, so that the
//! mistakes that only show when a hook is called are caught before a real
//! run, each with a hint.

mod common;

use common::vcsim;

fn script(name: &str, body: &str) -> String {
    let dir = std::env::temp_dir().join(format!("vcsim-dry-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.to_string_lossy().into_owned()
}

/// A CPU scheduler whose first statement is `first`, otherwise CS-like.
fn scheduler(first: &str) -> String {
    format!(
        "//! A test scheduler.\nfn schedule(v) {{\n    {first}\n    let cap = v.capacity();\n    let out = [];\n    for j in v.runnable_jobs {{ if cap.fits(j) {{ cap.take(j); out.push(round_robin(j)); }} }}\n    out\n}}\n"
    )
}

#[test]
fn calling_a_property_as_a_method_is_caught_with_its_line_and_a_hint() {
    let p = script("now.rhai", &scheduler("let t = v.now();"));
    let r = vcsim(&["check", &p]).run();
    assert_eq!(r.status(), 2);
    let e = r.stderr();
    assert!(e.contains(&format!("{p}:3:")), "{e}");
    assert!(e.contains("5-day dry run"), "{e}");
    assert!(
        e.contains("hint: `v.now` is a property, not a method"),
        "{e}"
    );
}

#[test]
fn a_float_range_is_caught_with_a_hint() {
    let p = script("range.rhai", &scheduler("for i in 0..v.host.ncpus { }"));
    let e = vcsim(&["check", &p]).run().stderr();
    assert!(e.contains("hint: a range needs integers"), "{e}");
}

#[test]
fn state_used_before_init_is_caught_with_a_hint() {
    let p = script("this.rhai", &scheduler("this.count += 1;"));
    let e = vcsim(&["check", &p]).run().stderr();
    assert!(e.contains("hint: `()` is an unset value"), "{e}");
    // With the state made by init(), the same script passes.
    let ok = script(
        "this_ok.rhai",
        &format!(
            "fn init() {{ #{{ count: 0 }} }}\n{}",
            scheduler("this.count += 1;")
        ),
    );
    let out = vcsim(&["check", &ok]).stdout();
    assert!(
        out.contains("a 5-day dry run calls its hooks without error"),
        "{out}"
    );
}

#[test]
fn every_family_a_script_serves_is_dry_run() {
    // An estimator that fails only when asked about a running job.
    let p = script(
        "est.rhai",
        "//! A bad estimator.\nfn remaining(v, job) {\n    if job.fraction_done > 0.0 { job.nope } else { 1000.0 }\n}\n",
    );
    let e = vcsim(&["check", &p]).run().stderr();
    assert!(e.contains("as the estimate policy"), "{e}");
    assert!(e.contains(&format!("{p}:3:")), "{e}");
}

#[test]
fn a_slow_script_s_dry_run_stops_at_its_budget_and_says_how_far_it_went() {
    // 5,000 operations per estimate: five days took 105 s to check.
    let p = script(
        "slow.rhai",
        "fn remaining(v, job) { let x = 0; for i in 0..5000 { x += 1; } job.estimated_seconds * (1.0 - job.fraction_done) }\n",
    );
    let t = std::time::Instant::now();
    let r = vcsim(&["check", &p]).run();
    r.succeeds();
    let out = r.stdout();
    assert!(
        out.contains("a dry run calls its hooks without error until 0d ")
            && out.contains("(as the estimate policy), where `check` stopped it")
            && out.contains("50,000,000 operations, a hook call counting 100"),
        "{out}"
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        t.elapsed()
    );
}

/// The dry run writes files, so that a disk manager's `make_room` is
/// called: one that always fails was said to run "without error", and
/// failed every real run at its first file.
#[test]
fn a_disk_managers_make_room_is_dry_run() {
    let head = "fn enforces() { true }\nfn free_space(v, p) { 1e12 }\n";
    let p = script(
        "room_throws.rhai",
        &format!("{head}fn make_room(v, p, bytes) {{\n    throw \"boom\";\n}}\n"),
    );
    vcsim(&["check", &p]).run().fails_with(
        2,
        &[
            "5-day dry run",
            "room_throws.rhai:4:5: in function `make_room`: boom",
        ],
    );
}

/// The plan the disk-script page shows, with ids the dry run's host has
/// none of left out, is one a run accepts (the page showed a `fits` key
/// that every run refused).
#[test]
fn the_disk_pages_plan_is_accepted() {
    let page = std::fs::read_to_string(common::root().join("book/src/scripting-disk.md")).unwrap();
    let plans = &page[page.find("## Plans").expect("a Plans section")..];
    let plan = plans
        .lines()
        .find(|l| l.starts_with("#{"))
        .expect("the page's plan");
    // Its ids are examples: no such file is on the dry run's host.
    let plan = plan.replace("[3, 7]", "[]");
    let p = script(
        "page_plan.rhai",
        &format!(
            "fn enforces() {{ true }}\nfn free_space(v, p) {{ 1e12 }}\nfn make_room(v, p, bytes) {{\n    {plan}\n}}\nfn poll(v) {{\n    {plan}\n}}\n"
        ),
    );
    let out = vcsim(&["check", &p]).run().succeeds();
    assert!(
        out.contains("a 5-day dry run calls its hooks without error"),
        "{out}"
    );
}

#[test]
fn a_function_named_like_a_hook_is_a_warning() {
    // `fn int()` for `init`: vcsim calls hooks by name, so the state was
    // never made, and `check` said nothing.
    let p = script(
        "near_miss.rhai",
        &format!("fn int() {{ #{{ n: 0 }} }}\n{}", scheduler("let x = 1;")),
    );
    let r = vcsim(&["check", &p]).run();
    let out = r.succeeds();
    assert!(out.contains("valid rhai policy for cpu"), "{out}");
    assert!(
        r.stderr().contains("warning: ")
            && r.stderr()
                .contains("`int` is not a hook; did you mean `init`?"),
        "{}",
        r.stderr()
    );
    // The shipped scripts' helpers draw no warning.
    for f in [
        "cs1",
        "cs2",
        "jc2",
        "ws1",
        "wf1_v4",
        "disk_lru",
        "least_slack",
    ] {
        let r = vcsim(&["check", &format!("policies/{f}.rhai")]).run();
        r.succeeds();
        assert!(!r.stderr().contains("warning"), "{f}: {}", r.stderr());
    }
    // `run` says it too.
    let spec = format!("cpu={p},estimate=jc2");
    let r = vcsim(&[
        "run",
        "scenarios/paper-base.toml",
        "--policy",
        &spec,
        "--set",
        "duration_days=1",
    ])
    .run();
    r.succeeds();
    assert_eq!(
        r.stderr()
            .matches("`int` is not a hook; did you mean `init`?")
            .count(),
        1,
        "{}",
        r.stderr()
    );
}
