//! The event-driven mode is exact: on generated scenarios (1–6 projects,
//! 1–4 CPUs, GPUs whose jobs hold part of a CPU, host availability and
//! computing-allowed time, server outages, disk limits, estimate errors,
//! max_concurrent caps, per-app deadlines, jobs queued at the start) and
//! every built-in combination, a run that jumps between events gives the
//! same report, timeline, log and trace, to the bit, as one that visits
//! every step. A failure shrinks to a small scenario and prints it as TOML.
//!
//! CI runs a few dozen scenarios; `cargo test --release --test exactness --
//! --ignored` runs a few hundred.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use vcsim_framework::{run_spec, PolicySpec, Registry, Scenario, SimOptions, Stepping};

/// One generated app.
#[derive(Debug, Clone)]
struct App {
    /// CPUs per job; with a GPU, the part of a CPU the job holds.
    cpus: f64,
    gpu: Option<f64>,
    /// Hours a job takes on its resource.
    hours: f64,
    /// The project's estimate is the real size divided by this.
    error: f64,
    stddev: f64,
    latency_days: Option<f64>,
    max_concurrent: u32,
    input_mb: f64,
}

#[derive(Debug, Clone)]
struct Project {
    share: f64,
    latency_days: f64,
    up_fraction: f64,
    max_concurrent: u32,
    apps: Vec<App>,
    /// Jobs queued at the start: (app, deadline days, fraction done).
    queued: Vec<(usize, f64, f64)>,
}

#[derive(Debug, Clone)]
struct Case {
    seed: u64,
    days: f64,
    ncpus: u32,
    gpus: u32,
    on_fraction: f64,
    active_fraction: f64,
    gpu_active_fraction: f64,
    buffer_days: (f64, f64),
    learn_availability: bool,
    disk_gb: Option<f64>,
    projects: Vec<Project>,
}

fn app(gpus: u32) -> impl Strategy<Value = App> {
    let gpu = if gpus > 0 {
        prop_oneof![3 => Just(None), 1 => Just(Some(1.0)), 1 => Just(Some(0.5))].boxed()
    } else {
        Just(None).boxed()
    };
    (
        gpu,
        prop_oneof![Just(1.0), Just(1.0), Just(2.0), Just(0.5)],
        prop_oneof![Just(0.01), Just(0.5), Just(1.0)],
        0.2f64..12.0,
        prop_oneof![3 => Just(1.0), 1 => 0.25f64..4.0],
        prop_oneof![2 => Just(0.0), 1 => 0.0f64..0.5],
        prop_oneof![3 => Just(None), 1 => (0.2f64..4.0).prop_map(Some)],
        prop_oneof![4 => Just(0u32), 1 => 1u32..3],
        prop_oneof![2 => Just(0.0), 1 => 10.0f64..400.0],
    )
        .prop_map(
            |(
                gpu,
                cpu_cpus,
                gpu_cpus,
                hours,
                error,
                stddev,
                latency_days,
                max_concurrent,
                input_mb,
            )| App {
                cpus: if gpu.is_some() { gpu_cpus } else { cpu_cpus },
                gpu,
                hours,
                error,
                stddev,
                latency_days,
                max_concurrent,
                input_mb,
            },
        )
}

fn project(gpus: u32) -> impl Strategy<Value = Project> {
    (
        prop_oneof![Just(100.0), 1.0f64..500.0],
        0.3f64..10.0,
        prop_oneof![3 => Just(1.0), 1 => 0.3f64..1.0],
        prop_oneof![4 => Just(0u32), 1 => 1u32..3],
        prop::collection::vec(app(gpus), 1..=2),
        prop::collection::vec(
            (0usize..2, 0.1f64..5.0, prop_oneof![Just(0.0), 0.0f64..0.9]),
            0..3,
        ),
    )
        .prop_map(
            |(share, latency_days, up_fraction, max_concurrent, apps, queued)| Project {
                share,
                latency_days,
                up_fraction,
                max_concurrent,
                queued: queued
                    .into_iter()
                    .map(|(a, d, f)| (a % apps.len(), d, f))
                    .collect(),
                apps,
            },
        )
}

fn case() -> impl Strategy<Value = Case> {
    (0u32..=2).prop_flat_map(|gpus| {
        (
            (0u64..1000, 1.0f64..4.0, 1u32..=4, Just(gpus)),
            (
                prop_oneof![Just(1.0), 0.4f64..1.0],
                prop_oneof![3 => Just(1.0), 1 => 0.5f64..1.0],
                prop_oneof![3 => Just(1.0), 1 => 0.3f64..1.0],
            ),
            (
                prop_oneof![Just((0.1, 0.25)), (0.01f64..0.5, 0.0f64..0.5)],
                any::<bool>(),
            ),
            prop_oneof![3 => Just(None), 1 => (0.5f64..3.0).prop_map(Some)],
            prop::collection::vec(project(gpus), 1..=6),
        )
            .prop_map(
                |(
                    (seed, days, ncpus, gpus),
                    (on, active, gpu_active),
                    (buffer_days, learn),
                    disk_gb,
                    projects,
                )| Case {
                    seed,
                    days,
                    ncpus,
                    gpus,
                    on_fraction: on,
                    active_fraction: active,
                    gpu_active_fraction: gpu_active.min(active),
                    buffer_days,
                    learn_availability: learn,
                    disk_gb,
                    projects,
                },
            )
    })
}

/// The case as a scenario file.
fn toml(c: &Case) -> String {
    let mut t = format!(
        "name = \"generated\"\nseed = {}\nduration_days = {}\nstep_seconds = 60\n\n[host]\nncpus = {}\ncpu_flops = 1e9\n",
        c.seed, c.days, c.ncpus
    );
    if c.gpus > 0 {
        t += &format!(
            "[[host.gpu]]\nkind = \"nvidia\"\ncount = {}\nflops = 3e9\n",
            c.gpus
        );
    }
    t += &format!(
        "[host.availability]\nfraction = {}\nmean_on_seconds = 4000\nactive_fraction = {}\ngpu_active_fraction = {}\n",
        c.on_fraction, c.active_fraction, c.gpu_active_fraction
    );
    t += &format!(
        "[client]\nwork_buf_min_days = {}\nwork_buf_additional_days = {}\nlearn_availability = {}\n",
        c.buffer_days.0, c.buffer_days.1, c.learn_availability
    );
    if let Some(gb) = c.disk_gb {
        t += &format!("disk_max_used_gb = {gb}\n");
    }
    for (i, p) in c.projects.iter().enumerate() {
        t += &format!(
            "\n[[project]]\nname = \"P{i}\"\nresource_share = {}\nlatency_bound_days = {}\nmax_concurrent = {}\n",
            p.share, p.latency_days, p.max_concurrent
        );
        if p.up_fraction < 1.0 {
            t += &format!(
                "availability = {{ fraction = {}, mean_up_hours = 6 }}\n",
                p.up_fraction
            );
        }
        for (k, a) in p.apps.iter().enumerate() {
            let flops = a.hours * 3600.0 * if a.gpu.is_some() { 3e9 } else { 1e9 };
            t += &format!(
                "[[project.app]]\nname = \"a{k}\"\ncpus = {}\nflops_estimate = {}\nflops_mean = {}\nflops_stddev = {}\nmax_concurrent = {}\ninput_mb = {}\n",
                // (A job fits on the host.)
                a.cpus.min(f64::from(c.ncpus)),
                flops / a.error,
                flops,
                flops * a.stddev,
                a.max_concurrent,
                a.input_mb
            );
            if let Some(g) = a.gpu {
                t += &format!("gpu = {{ kind = \"nvidia\", count = {g} }}\n");
            }
            if let Some(d) = a.latency_days {
                t += &format!("latency_bound_days = {d}\n");
            }
        }
        for &(a, deadline, done) in &p.queued {
            t += &format!(
                "[[project.job]]\napp = \"a{a}\"\ndeadline_days = {deadline}\nfraction_done = {done}\n"
            );
        }
    }
    t
}

/// Every built-in combination: CPU scheduler, fetcher, sender, estimator,
/// disk manager.
fn combinations() -> Vec<String> {
    let mut all = Vec::new();
    for cpu in ["cs1", "cs2", "cs3"] {
        for fetch in ["wf1", "wf2", "gpu", "wf3"] {
            for send in ["ws1", "ws2", "gpu", "ws3"] {
                for estimate in ["jc1", "jc2", "jc3"] {
                    for disk in ["none", "share"] {
                        all.push(format!(
                            "cpu={cpu},fetch={fetch},send={send},estimate={estimate},disk={disk}"
                        ));
                    }
                }
            }
        }
    }
    all
}

/// Everything a run writes, as text (floats as Rust prints them: exactly).
fn everything(scn: &Scenario, reg: &Registry, spec: &PolicySpec, stepping: Stepping) -> String {
    let opts = SimOptions {
        stepping,
        timeline: true,
        trace: true,
        ..SimOptions::default()
    };
    match run_spec(scn, reg, spec, opts) {
        Ok(out) => format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            out.report, out.timeline, out.log, out.trace, out.warnings
        ),
        Err(e) => format!("error: {e}"),
    }
}

/// Both modes under the given combinations; where they differ, if they do.
fn differs(c: &Case, specs: &[String]) -> Result<(), TestCaseError> {
    let text = toml(c);
    let scn = Scenario::from_toml_str(&text, std::path::Path::new("generated.toml"))
        .map_err(|e| TestCaseError::reject(format!("not a valid scenario: {e}")))?;
    let reg = Registry::builtins().expect("built-ins");
    for s in specs {
        let spec = PolicySpec::parse(s).expect("spec");
        let jump = everything(&scn, &reg, &spec, Stepping::EventDriven);
        let step = everything(&scn, &reg, &spec, Stepping::FixedStep);
        if jump != step {
            let at = jump
                .bytes()
                .zip(step.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(jump.len().min(step.len()));
            let from = at.saturating_sub(200);
            return Err(TestCaseError::fail(format!(
                "{s}: the modes differ at byte {at}:\n  jumping: ...{}\n  stepping: ...{}\nscenario:\n{text}",
                &jump[from..(at + 200).min(jump.len())],
                &step[from..(at + 200).min(step.len())],
            )));
        }
    }
    Ok(())
}

fn check(cases: u32, specs_per_case: usize) {
    vcsim_builtin::link();
    let all = combinations();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    // Each case runs a window of the combinations, which moves from case to
    // case so that all of them are covered.
    let next = std::cell::Cell::new(0usize);
    let result = runner.run(&case(), |c| {
        let start = next.get();
        next.set(start + specs_per_case);
        let specs: Vec<String> = (0..specs_per_case)
            .map(|i| all[(start + i) % all.len()].clone())
            .collect();
        differs(&c, &specs)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn jumping_between_events_gives_the_bytes_of_stepping() {
    // 288 windows: every combination once.
    check(36, 8);
}

#[test]
#[ignore = "a few hundred scenarios: run with --release --ignored"]
fn jumping_between_events_gives_the_bytes_of_stepping_on_many_scenarios() {
    check(400, 72);
}

/// Everything two runs of `spec` on `scn` write, jumping and stepping.
fn both_modes(scn: &Scenario, reg: &Registry, spec: &str) -> (String, String) {
    let spec = PolicySpec::parse(spec).expect("spec");
    (
        everything(scn, reg, &spec, Stepping::EventDriven),
        everything(scn, reg, &spec, Stepping::FixedStep),
    )
}

/// The repository's files of `dir` with extension `ext`, sorted.
fn shipped_files(dir: &str, ext: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<std::path::PathBuf> =
        std::fs::read_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == ext))
            .collect();
    files.sort();
    files
}

fn shipped(name: &str, days: f64) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    let mut s = Scenario::load(&path).expect("a shipped scenario");
    s.duration_days = days;
    s
}

/// The shipped scripts certify no quiet stretch, so the simulator asks them
/// at every step: they jump as they step, log lines included. A fetcher
/// that logs at every call, and whose answer changes between events (at a
/// time of day), is among them, so that a line written twice (or from a
/// projected time) shows.
#[test]
fn the_shipped_scripts_jump_as_they_step() {
    vcsim_builtin::link();
    let dir = std::env::temp_dir().join(format!("vcsim-exactness-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let chatty = dir.join("chatty.rhai");
    std::fs::write(
        &chatty,
        "//! Every day at 03:00, asks the first contactable project for an hour of work; says so at every call.\n\
         fn request(v) {\n\
             let hour = (v.now % 86400.0) / 3600.0;\n\
             log(`asked at hour ${hour}`);\n\
             if hour < 3.0 || hour >= 3.05 { return (); }\n\
             for p in 0..v.nprojects { if v.contactable(p) { return work_request(p, 3600.0); } }\n\
             ()\n\
         }\n",
    )
    .unwrap();
    let mut scripts = shipped_files("policies", "rhai");
    scripts.push(chatty);
    let scenarios = [
        shipped("scenarios/mix-5-slack-5.toml", 8.0),
        shipped("scenarios/outages.toml", 8.0),
    ];
    for script in &scripts {
        let path = script.to_str().unwrap();
        let loaded = vcsim_script::Script::load(script).expect("the script loads");
        for family in loaded.families() {
            let mut reg = Registry::builtins().expect("built-ins");
            vcsim_script::register(&mut reg, family, path).expect("registers");
            let spec = format!("{}={path}", family.key());
            for scn in &scenarios {
                let (jump, step) = both_modes(scn, &reg, &spec);
                assert!(!jump.starts_with("error"), "{spec}: {jump}");
                assert!(jump == step, "{spec} on {}: the modes differ", scn.name);
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Every shipped scenario, under the paper's two combinations and the
/// GPU-aware one with the disk manager, gives the same bytes in both modes.
#[test]
fn every_shipped_scenario_runs_the_same_in_both_modes() {
    vcsim_builtin::link();
    let reg = Registry::builtins().expect("built-ins");
    let names = shipped_files("scenarios", "toml");
    assert!(names.len() >= 10, "the shipped scenarios are found");
    for path in &names {
        let scn = Scenario::load(path).expect("a shipped scenario");
        for spec in [
            "CS2_WF2_WS2_JC2",
            "CS1_WF1_WS1_JC1",
            "CS3_WF3_WS3_JC3",
            "cpu=cs2,fetch=gpu,send=gpu,estimate=jc2,disk=share",
        ] {
            let (jump, step) = both_modes(&scn, &reg, spec);
            assert!(
                jump == step,
                "{} under {spec}: the modes differ",
                path.display()
            );
        }
    }
}
