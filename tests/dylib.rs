//! Compiled policy plugins (dylibs): the example plugin against a built-in,
//! and the ways a library is refused or a plugin fails.
//!
//! The cdylibs are built by the first test that needs them, with the same
//! cargo, profile and target directory as this test binary (found from
//! `CARGO_BIN_EXE_vcsim`), so that they are built by the same `rustc` — the
//! host refuses a plugin built by another.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use vcsim_framework::model::ClientState;
use vcsim_framework::{
    run_spec, AnyPolicy, CompletionEstimator, Family, PolicySpec, Registry, RunReport, Scenario,
    SimOptions, Stepping, View,
};

const PLUGIN_CRATES: [&str; 5] = [
    "vcsim-dylib-example",
    "vcsim-fixture-dylib-wrong-abi",
    "vcsim-fixture-dylib-newer-minor",
    "vcsim-fixture-dylib-panics",
    "vcsim-fixture-dylib-dup",
];

/// The directory the test binary's artifacts are in (`target/debug`).
fn profile_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_vcsim"))
        .parent()
        .expect("the binary is in a directory")
        .to_path_buf()
}

/// Builds the plugin crates once; returns the directory they are in.
fn plugins_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = profile_dir();
        let target = dir.parent().expect("a target directory").to_path_buf();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
            .arg("build")
            .arg("--quiet")
            .env("CARGO_TARGET_DIR", &target);
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        for c in PLUGIN_CRATES {
            cmd.args(["-p", c]);
        }
        let out = cmd.output().expect("cargo runs");
        assert!(
            out.status.success(),
            "building the plugins failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

fn lib(krate: &str) -> PathBuf {
    let file = format!(
        "{}{}{}",
        std::env::consts::DLL_PREFIX,
        krate.replace('-', "_"),
        std::env::consts::DLL_SUFFIX
    );
    plugins_dir().join(file)
}

fn example() -> PathBuf {
    lib("vcsim-dylib-example")
}

/// `vcsim ARGS` (through `common::vcsim`).
fn vcsim(args: &[&str]) -> Output {
    common::vcsim(args).run().out
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn scenario(name: &str, days: f64) -> Scenario {
    let mut s = Scenario::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(name),
    )
    .expect("a shipped scenario");
    s.duration_days = days;
    s
}

/// The built-in policies (linked in by naming their crate).
fn builtins() -> Registry {
    vcsim_builtin::link();
    Registry::builtins().unwrap()
}

fn run(reg: &Registry, scn: &Scenario, spec: &str) -> Result<RunReport, String> {
    let spec = PolicySpec::parse(spec)?;
    run_spec(scn, reg, &spec, SimOptions::default()).map(|o| o.report)
}

/// The figures a snapshot keeps (rounded, so that it reads well).
fn summary(r: &RunReport) -> String {
    let m = &r.metrics;
    let mut s = format!(
        "{}\n  idleness {:.5}  waste {:.5}  share_violation {:.5}  monotony {:.5}\n  rpcs {}  on time {}  late {}\n",
        r.policy, m.idleness, m.waste, m.share_violation, m.monotony, m.rpcs, m.jobs_on_time, m.jobs_late
    );
    for p in &r.projects {
        s += &format!(
            "  {:<3} flops_fraction {:.4}  on time {:>3}  late {:>3}  rpcs {:>3}\n",
            p.name, p.flops_fraction, p.jobs_on_time, p.jobs_late, p.rpcs
        );
    }
    s
}

#[test]
fn list_shows_the_plugin_policies_with_their_origin() {
    let ex = example();
    let o = vcsim(&["--plugin", ex.to_str().unwrap(), "list"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let lsf = out
        .lines()
        .find(|l| l.trim_start().starts_with("lsf "))
        .expect(&out);
    assert!(lsf.contains("least slack first"), "{lsf}");
    assert!(lsf.contains(ex.to_str().unwrap()), "{lsf}");
    assert!(out.contains("least-queued"), "{out}");
    assert!(out.contains("cs2"), "the built-ins stay: {out}");
}

#[test]
fn check_describes_a_plugin() {
    let ex = example();
    let o = vcsim(&["check", ex.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("vcsim plugin vcsim-dylib-example"), "{out}");
    assert!(out.contains("ABI version 2"), "{out}");
    assert!(out.contains("2 policies"), "{out}");
    assert!(out.contains("cpu      lsf"), "{out}");
    assert!(out.contains("fetch    least-queued"), "{out}");
}

#[test]
fn the_example_runs_through_the_cli() {
    let ex = example();
    let o = vcsim(&[
        "--plugin",
        ex.to_str().unwrap(),
        "run",
        "scenarios/paper-base.toml",
        "--policy",
        "cpu=lsf,fetch=least-queued",
        "--format",
        "json",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("cpu=lsf,fetch=least-queued"), "{out}");
}

/// The example against the built-ins on a shipped scenario (snapshot).
#[test]
fn the_example_against_the_builtins_on_mix_5_slack_5() {
    let mut reg = builtins();
    vcsim_dylib_host::register(&mut reg, &[example()]).unwrap();
    let scn = scenario("mix-5-slack-5.toml", 100.0);
    let mut snap = String::new();
    for spec in [
        "CS2_WF2_WS2_JC2",
        "cpu=lsf",
        "fetch=least-queued",
        "cpu=lsf,fetch=least-queued",
    ] {
        snap += &summary(&run(&reg, &scn, spec).unwrap());
    }
    insta::assert_snapshot!("example_vs_builtin_mix_5_slack_5", snap);
}

/// The example's policies (which certify no quiet stretch) give the same
/// report, timeline, log and trace whether the simulator jumps between
/// events or visits every step.
#[test]
fn the_example_jumps_as_it_steps() {
    let mut reg = builtins();
    vcsim_dylib_host::register(&mut reg, &[example()]).unwrap();
    for (name, days) in [
        ("mix-5-slack-5.toml", 20.0),
        ("outages.toml", 20.0),
        ("gpu-half-cpu.toml", 10.0),
    ] {
        let scn = scenario(name, days);
        for spec in [
            "cpu=lsf",
            "fetch=least-queued",
            "cpu=lsf,fetch=least-queued",
        ] {
            let spec = PolicySpec::parse(spec).unwrap();
            let both: Vec<String> = [Stepping::EventDriven, Stepping::FixedStep]
                .into_iter()
                .map(|stepping| {
                    let opts = SimOptions {
                        stepping,
                        timeline: true,
                        trace: true,
                        ..SimOptions::default()
                    };
                    let o = run_spec(&scn, &reg, &spec, opts).unwrap();
                    format!(
                        "{:?}\n{:?}\n{:?}\n{:?}",
                        o.report, o.timeline, o.log, o.trace
                    )
                })
                .collect();
            assert!(both[0] == both[1], "{name} under {spec}: the modes differ");
        }
    }
}

/// Ports of `ws1`, `jc1` and `none` through the ABI give the built-ins'
/// numbers exactly: the views and decisions cross the boundary intact, and
/// all five families can be exported (with the example's two).
#[test]
fn ports_of_builtins_through_the_abi_match_them_exactly() {
    let mut reg = builtins();
    vcsim_dylib_host::register(&mut reg, &[lib("vcsim-fixture-dylib-dup")]).unwrap();
    let scn = scenario("mix-5-slack-5.toml", 30.0);
    let a = run(
        &reg,
        &scn,
        "cpu=cs2,fetch=wf2,send=ws1,estimate=jc1,disk=none",
    )
    .unwrap();
    let b = run(
        &reg,
        &scn,
        "cpu=cs2,fetch=wf2,send=ws1-port,estimate=jc1-port,disk=none-port",
    )
    .unwrap();
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(a.projects, b.projects);
}

#[test]
fn a_file_that_is_not_a_library_is_refused() {
    let dir = std::env::temp_dir().join(format!("vcsim-dylib-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("notaplugin.so");
    std::fs::write(&f, "this is not a shared library\n").unwrap();
    let o = vcsim(&["check", f.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not a loadable library"), "{err}");
    let o = vcsim(&["--plugin", f.to_str().unwrap(), "list"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_library_that_is_not_a_plugin_is_refused() {
    // The wrong-ABI fixture's dependency-free sibling would do too; a std
    // dylib of the toolchain is a real library with no vcsim symbols.
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc runs");
    let lib_dir = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim()).join("lib");
    let Some(std_lib) = std::fs::read_dir(&lib_dir).ok().and_then(|d| {
        d.filter_map(Result::ok).map(|e| e.path()).find(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with(&format!("{}std-", std::env::consts::DLL_PREFIX))
                    && n.ends_with(std::env::consts::DLL_SUFFIX)
            })
        })
    }) else {
        eprintln!("no std dylib in {}: skipped", lib_dir.display());
        return;
    };
    let e = vcsim_dylib_host::load(&std_lib).err().expect("refused");
    assert!(e.contains("not a vcsim plugin"), "{e}");
    assert!(e.contains("vcsim_plugin_cpu_v2"), "{e}");
}

#[test]
fn a_plugin_built_for_abi_1_is_refused_before_any_call() {
    let f = lib("vcsim-fixture-dylib-wrong-abi");
    let shown = f.to_str().unwrap();
    // The fixture's table getter aborts the process if it is ever called.
    let o = vcsim(&["check", shown]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "`{shown}` was built for vcsim's plugin ABI 1; this vcsim speaks ABI 2: rebuild it \
             against vcsim-dylib-sdk {} (see the changelog)",
            vcsim_dylib_host::abi::SDK_VERSION
        )),
        "{err}"
    );
    let o = vcsim(&["--plugin", shown, "list"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("plugin ABI 1"), "{err}");
}

#[test]
fn a_plugin_of_a_newer_minor_version_is_refused_before_any_call() {
    let f = lib("vcsim-fixture-dylib-newer-minor");
    let shown = f.to_str().unwrap();
    let minor = vcsim_dylib_host::abi::ABI_MINOR;
    // The fixture's table getter aborts the process if it is ever called.
    let o = vcsim(&["check", shown]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "`{shown}` was built for vcsim's plugin ABI 2.{}, newer than this vcsim's ABI 2.{minor}",
            minor + 1
        )),
        "{err}"
    );
    assert!(err.contains("rebuild it against vcsim-dylib-sdk"), "{err}");
    let e = vcsim_dylib_host::load(&f).err().expect("refused");
    assert!(e.contains(&format!("ABI 2.{}", minor + 1)), "{e}");
}

#[test]
fn a_panicking_policy_is_an_error_naming_the_plugin_and_the_call() {
    let f = lib("vcsim-fixture-dylib-panics");
    let o = vcsim(&[
        "--plugin",
        f.to_str().unwrap(),
        "run",
        "scenarios/paper-base.toml",
        "--policy",
        "cpu=panicky",
    ]);
    let (_, err) = text(&o);
    // An error of the run (status 1), not an abort.
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(f.to_str().unwrap()), "{err}");
    assert!(err.contains("cpu policy `panicky`"), "{err}");
    assert!(err.contains("panicked in `schedule`"), "{err}");
    assert!(err.contains("deliberate panic at t ="), "{err}");

    let mut reg = builtins();
    vcsim_dylib_host::register(&mut reg, std::slice::from_ref(&f)).unwrap();
    let scn = scenario("paper-base.toml", 3.0);
    let e = run(&reg, &scn, "fetch=no-create").unwrap_err();
    assert!(e.contains("fetch policy `no-create`"), "{e}");
    assert!(e.contains("could not create it"), "{e}");
    assert!(e.contains("deliberate panic in the constructor"), "{e}");
    // The process is still fine: the same plugin runs again.
    let e = run(&reg, &scn, "cpu=panicky").unwrap_err();
    assert!(e.contains("panicked in `schedule`"), "{e}");
}

#[test]
fn a_panic_in_correction_fails_the_run_at_that_step() {
    let f = lib("vcsim-fixture-dylib-panics");
    let o = vcsim(&[
        "--plugin",
        f.to_str().unwrap(),
        "run",
        "scenarios/paper-base.toml",
        "--policy",
        "estimate=bad-correction",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("at simulated time 0d 00:00:00"), "{err}");
    assert!(err.contains("estimate policy `bad-correction`"), "{err}");
    assert!(err.contains("panicked in `correction`"), "{err}");
    assert!(err.contains("deliberate panic in correction(0)"), "{err}");
    assert!(!err.contains("warning"), "one error, no warnings: {err}");
}

#[test]
fn an_error_of_a_disk_call_fails_the_run() {
    let mut reg = builtins();
    vcsim_dylib_host::register(&mut reg, &[lib("vcsim-fixture-dylib-panics")]).unwrap();
    let scn = scenario("disk-tight.toml", 5.0);
    let e = run(
        &reg,
        &scn,
        "cpu=cs2,fetch=wf2,send=ws1,estimate=jc1,disk=bad-disk",
    )
    .unwrap_err();
    assert!(e.contains("disk policy `bad-disk`"), "{e}");
    assert!(e.contains("libvcsim_fixture_dylib_panics"), "{e}");
    assert!(
        e.contains("`make_room`: deliberate error in make_room("),
        "{e}"
    );
}

#[test]
fn two_plugins_exporting_the_same_name_are_refused() {
    let ex = example();
    let dup = lib("vcsim-fixture-dylib-dup");
    let o = vcsim(&[
        "--plugin",
        ex.to_str().unwrap(),
        "--plugin",
        dup.to_str().unwrap(),
        "list",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("two cpu policies are named `lsf`"), "{err}");
    assert!(err.contains(ex.to_str().unwrap()), "{err}");
    assert!(err.contains(dup.to_str().unwrap()), "{err}");
}

#[test]
fn loading_twice_reuses_the_loaded_library() {
    let a = vcsim_dylib_host::load(&example()).unwrap();
    let b = vcsim_dylib_host::load(&example()).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
}

/// `--plugin P --plugin P` (or P and a link to it) registers P's policies
/// once: no clash of a library's names with themselves.
#[test]
fn a_library_given_twice_registers_its_policies_once() {
    let dir = std::env::temp_dir().join(format!("vcsim-dylib-twice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("again.so");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(example(), &link).unwrap();
    let mut reg = builtins();
    let loaded = vcsim_dylib_host::register(&mut reg, &[example(), example(), link]).unwrap();
    assert_eq!(loaded.len(), 1);
    assert!(reg.get(vcsim_framework::Family::Cpu, "lsf").is_some());
}

/// A disk manager through the ABI: `poll` and `make_room` delete files
/// (the files in the view and the plan buffers cross intact, or vcsim
/// refuses the plan), and `project_limit` reaches the report.
#[test]
fn a_disk_manager_deletes_files_through_the_abi() {
    let mut reg = builtins();
    vcsim_dylib_host::register(&mut reg, &[lib("vcsim-fixture-dylib-dup")]).unwrap();
    let scn = scenario("disk-tight.toml", 5.0);
    let r = run(
        &reg,
        &scn,
        "cpu=cs2,fetch=wf2,send=ws1,estimate=jc1,disk=tidy",
    )
    .unwrap();
    let d = r
        .disk
        .as_ref()
        .expect("an enforcing manager reports its disk");
    assert!(d.bytes_deleted > 0.0, "{d:?}");
    assert!(
        r.projects.iter().all(|p| p.disk_limit_gb.is_some()),
        "project_limit reaches the report"
    );
}

/// The plugin estimator `random-dcf` of the dup fixture returns a draw of
/// `View::rng("dcf")` as its correction.
fn random_dcf() -> Box<dyn CompletionEstimator> {
    let p = vcsim_dylib_host::load(&lib("vcsim-fixture-dylib-dup")).unwrap();
    let e = p
        .entries()
        .into_iter()
        .find(|e| e.family == Family::Estimate && e.name == "random-dcf")
        .expect("the fixture exports random-dcf");
    match e.make().unwrap() {
        AnyPolicy::Estimate(e) => e,
        _ => unreachable!("an estimator"),
    }
}

/// A plugin's random stream depends on the run's seed and the view's step
/// only: the same view draws the same numbers (so a pure method may draw),
/// another seed or another step others.
#[test]
fn a_plugin_s_random_stream_follows_the_seed_and_the_step() {
    let est = random_dcf();
    let scn = scenario("paper-base.toml", 3.0);
    let draw = |seed: u64, t: f64| {
        let mut st = ClientState::new(&scn);
        st.seed = seed;
        let v = View::new(&st, est.as_ref(), t);
        est.correction(&v, 0).unwrap()
    };
    let a = draw(1, 0.0);
    assert!((0.5..2.0).contains(&a), "{a}");
    assert_eq!(a.to_bits(), draw(1, 0.0).to_bits(), "same seed, same draw");
    assert_ne!(a.to_bits(), draw(2, 0.0).to_bits(), "another seed");
    let step = scn.step_seconds;
    assert_ne!(a.to_bits(), draw(1, 5.0 * step).to_bits(), "another step");
    // Two runs of one seed are identical; the draws reach the run.
    let mut reg = builtins();
    let dup = vcsim_dylib_host::load(&lib("vcsim-fixture-dylib-dup")).unwrap();
    for e in dup
        .entries()
        .into_iter()
        .filter(|e| e.family != Family::Cpu)
    {
        reg.add(e).unwrap();
    }
    let r1 = run(&reg, &scn, "estimate=random-dcf").unwrap();
    let r2 = run(&reg, &scn, "estimate=random-dcf").unwrap();
    assert_eq!(r1.metrics, r2.metrics);
}

/// The most jobs of project `p` the timeline shows running at once.
fn most_running_at_once(t: &vcsim_framework::timeline::Timeline, p: usize) -> usize {
    let segs: Vec<_> = t.segments.iter().filter(|s| s.project == p).collect();
    segs.iter()
        .map(|a| {
            segs.iter()
                .filter(|b| b.start <= a.start && a.start < b.end)
                .count()
        })
        .max()
        .unwrap_or(0)
}

/// The example's `lsf` reads `max_concurrent` of projects and apps from the
/// view and runs no more of their jobs at once.
#[test]
fn the_example_honours_max_concurrent() {
    let mut reg = builtins();
    vcsim_dylib_host::register(&mut reg, &[example()]).unwrap();
    let mut scn = scenario("mix-5-slack-5.toml", 20.0);
    let spec = PolicySpec::parse("cpu=lsf").unwrap();
    let opts = || SimOptions {
        timeline: true,
        ..SimOptions::default()
    };
    let free = run_spec(&scn, &reg, &spec, opts()).unwrap();
    let t = free.timeline.expect("a timeline");
    assert!(
        most_running_at_once(&t, 3) > 1 && most_running_at_once(&t, 4) > 1,
        "without caps, P4 and P5 run two jobs at once at times"
    );
    scn.projects[4].max_concurrent = 1;
    scn.projects[3].apps[0].max_concurrent = 1;
    let capped = run_spec(&scn, &reg, &spec, opts()).unwrap();
    let t = capped.timeline.expect("a timeline");
    assert_eq!(most_running_at_once(&t, 4), 1, "P5's max_concurrent");
    assert_eq!(most_running_at_once(&t, 3), 1, "P4's app's max_concurrent");
    assert!(most_running_at_once(&t, 2) >= 1);
}

/// An explained run of the example with `lsf` and `least-queued`, as a
/// plugin of ABI minor `minor` (its own, 3, or an older one).
fn explained_example(minor: u32) -> vcsim_framework::RunOutput {
    let p = vcsim_dylib_host::load(&example()).unwrap();
    let mut reg = builtins();
    for e in p.entries_as_minor(minor) {
        reg.add(e).unwrap();
    }
    let scn = scenario("mix-5-slack-5.toml", 20.0);
    let spec = PolicySpec::parse("cpu=lsf,fetch=least-queued").unwrap();
    let opts = SimOptions {
        explain: true,
        ..SimOptions::default()
    };
    run_spec(&scn, &reg, &spec, opts).unwrap()
}

fn records_of(
    o: &vcsim_framework::RunOutput,
    family: Family,
) -> Vec<vcsim_framework::explain::Record> {
    let ex = o.explanation.as_ref().expect("an explained run");
    ex.records
        .iter()
        .filter(|r| r.source == vcsim_framework::explain::Source::Policy(family))
        .cloned()
        .collect()
}

/// ABI 2.3 and 2.4: the example's reasons, its run list's own included,
/// reach an explained run's records.
#[test]
fn an_explained_run_carries_the_example_plugin_s_reasons() {
    use vcsim_framework::Datum;
    let o = explained_example(vcsim_dylib_host::abi::ABI_MINOR);
    let cpu = records_of(&o, Family::Cpu);
    let starts: Vec<_> = cpu
        .iter()
        .filter(|r| r.decision.starts_with("start"))
        .collect();
    assert!(starts.len() > 10, "{cpu:#?}");
    // `lsf` says why of every job it starts.
    for r in &starts {
        assert!(
            r.reason.text.starts_with("least slack: "),
            "{}: {:?}",
            r.decision,
            r.reason
        );
        let Some(Datum::Number(slack)) = r.reason.get("slack_s") else {
            panic!("no slack in {:?}", r.reason)
        };
        assert!(matches!(r.reason.get("rank"), Some(Datum::Number(x)) if *x >= 1.0));
        // Deadline mode exactly when the slack is negative.
        assert_eq!(
            r.decision.starts_with("start (deadline mode)"),
            *slack < 0.0,
            "{r:?}"
        );
        assert_eq!(
            r.reason.text.contains("negative: deadline mode"),
            *slack < 0.0,
            "{r:?}"
        );
    }
    // The jobs it preempts have the run list's reason (ABI 2.4).
    let preempts: Vec<_> = cpu
        .iter()
        .filter(|r| r.decision.starts_with("preempt"))
        .collect();
    assert!(!preempts.is_empty(), "{cpu:#?}");
    for r in preempts {
        assert!(
            r.reason
                .text
                .starts_with("least slack first: the jobs that run have less (up to "),
            "{r:?}"
        );
        assert!(r.reason.get("last_slack_s").is_some(), "{r:?}");
    }
    // `least-queued` says why of every request for work.
    let fetch = records_of(&o, Family::Fetch);
    let asks: Vec<_> = fetch
        .iter()
        .filter(|r| !r.decision.ends_with("no work"))
        .collect();
    assert!(!asks.is_empty(), "{fetch:#?}");
    for r in asks {
        assert!(
            r.reason.text.contains("has the least work per share"),
            "{}: {:?}",
            r.decision,
            r.reason
        );
        assert!(r.reason.get("held_s").is_some(), "{:?}", r.reason);
    }
}

/// A plugin of ABI 2.2 (the example, read as one) still loads and runs in
/// an explained run, decides the same, and gives no reasons: the host
/// neither offers it room nor reads fields it does not know.
#[test]
fn a_plugin_of_abi_2_2_runs_explained_with_no_reasons() {
    let new = explained_example(vcsim_dylib_host::abi::ABI_MINOR);
    let old = explained_example(2);
    // The plugin's reasons (the simulator adds its own to some records:
    // a report-result session's).
    let plugin_s = |r: &vcsim_framework::explain::Record| {
        ["least slack", "least work per share"]
            .iter()
            .any(|t| r.reason.text.contains(t))
            || ["slack_s", "rank", "held_s"]
                .iter()
                .any(|k| r.reason.get(k).is_some())
    };
    for family in [Family::Cpu, Family::Fetch] {
        let (a, b) = (records_of(&new, family), records_of(&old, family));
        assert!(!b.is_empty(), "{family}");
        assert_eq!(a.len(), b.len(), "{family}");
        assert!(
            a.iter().zip(&b).all(|(x, y)| x.same_decision(y)),
            "{family}"
        );
        assert!(
            a.iter().any(plugin_s),
            "{family}: the 2.3 plugin gives reasons"
        );
        assert!(
            !b.iter().any(plugin_s),
            "{family}: {:#?}",
            b.iter().find(|r| plugin_s(r))
        );
    }
    // The CPU scheduler's records have no reason but the plugin's.
    assert!(records_of(&old, Family::Cpu)
        .iter()
        .all(|r| r.reason.text.is_empty() && r.reason.data.is_empty()));
    assert_eq!(new.report.metrics, old.report.metrics);
}

/// A library not built with the SDK, written in C, as `variant` of it
/// (`-D` names): its descriptors are what the host reads first. Built with
/// the C compiler every Rust build has for its linker (`cc`).
fn c_plugin(variant: &str) -> PathBuf {
    const C: &str = r#"
#include <stdint.h>
#include <stddef.h>
typedef struct { const uint8_t *ptr; size_t len; } StaticStr;
typedef struct { uint32_t abi_version, abi_minor, size; StaticStr rustc, plugin; size_t count; const void *(*table)(size_t); } Export;
typedef struct { uint8_t *ptr; size_t cap, len; } ErrBuf;
typedef struct { uint32_t size; StaticStr name, summary; void *(*create)(ErrBuf *); void (*destroy)(void *);
                 uint32_t (*schedule)(void *, const void *, void *, ErrBuf *); } CpuTable;
#define SS(s) {(const uint8_t *)(s), sizeof(s) - 1}
static int state;
static void *create(ErrBuf *e) { (void)e; return &state; }
static void destroy(void *s) { (void)s; }
static uint32_t schedule(void *s, const void *v, void *o, ErrBuf *e) { (void)s; (void)v; (void)o; (void)e; return 0; }
#ifdef NULL_NAME
static CpuTable T = {sizeof(CpuTable), {NULL, 5}, SS("s"), create, destroy, schedule};
#else
static CpuTable T = {sizeof(CpuTable), SS("hostile"), SS("s"), create, destroy, schedule};
#endif
static const void *table(size_t i) { (void)i; return &T; }
#ifdef MANY
static Export E = {2, 4, sizeof(Export), SS("rustc"), SS("hostile 0.1"), SIZE_MAX, table};
#else
static Export E = {2, 4, sizeof(Export), SS("rustc"), SS("hostile 0.1"), 1, table};
#endif
const Export *vcsim_plugin_cpu_v2(void) { return &E; }
#ifdef MIXED
static const void *none(size_t i) { (void)i; return NULL; }
static Export S = {2, 1, sizeof(Export), SS("rustc"), SS("hostile 0.1"), 1, none};
const Export *vcsim_plugin_send_v2(void) { return &S; }
#endif
"#;
    let dir = std::env::temp_dir().join(format!("vcsim-dylib-c-{}-{variant}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("hostile.c");
    std::fs::write(&src, C).unwrap();
    let lib = dir.join("libhostile.so");
    let built = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", &format!("-D{variant}"), "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .expect("cc, the linker of every Rust build");
    assert!(built.success());
    lib
}

/// A descriptor string with a null pointer crashed `check` and `list`
/// (status 139); a count read as garbage collected tables until memory
/// ran out (134); exports of one library built for different minor
/// versions got the first's (a 2.4 sender was offered no reason buffer).
/// Each is refused with status 2, naming what is wrong.
#[test]
fn a_hand_made_library_s_bad_descriptors_are_refused() {
    for (variant, said) in [
        ("NULL_NAME", "a null pointer as a cpu name"),
        ("MANY", "its cpu export lists 18446744073709551615 policies, more than the 1024 one export may"),
        ("MIXED", "its exports were built for different minor versions of the plugin ABI (2.4 and 2.1 for send)"),
    ] {
        let lib = c_plugin(variant);
        let out = Command::new(env!("CARGO_BIN_EXE_vcsim"))
            .args(["--plugin", lib.to_str().unwrap(), "list"])
            .env("VCSIM_PLUGIN_ANY_RUSTC", "1")
            .output()
            .unwrap();
        let (_, err) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{variant}: {err}");
        assert!(err.contains(said), "{variant}: {err}");
    }
}
