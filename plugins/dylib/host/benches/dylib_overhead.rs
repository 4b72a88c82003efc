//! The cost of a policy behind the plugin ABI.
//!
//! - A 100-day run of the base scenario (and of `mix-5-slack-5`) with the
//!   example plugin's `lsf` scheduler loaded from its cdylib, against the
//!   same algorithm compiled into the binary (a port below, checked to give
//!   the same numbers). Target: within 1.2x.
//! - The per-call overhead: the time difference divided by the number of
//!   calls, for `schedule` (which ships a whole view) and for the
//!   estimator's `remaining_seconds` and `correction` (the smallest, most
//!   frequent calls: `jc1-port` of the dup fixture against the built-in
//!   `jc1`).
//!
//! Run: `cargo bench -p vcsim-dylib-host --bench dylib_overhead`. It builds
//! the plugins with the same cargo and target directory first.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use vcsim_framework::{
    run_spec, AnyPolicy, CompletionEstimator, CpuScheduler, Entry, Family, Job, PolicyResult,
    PolicySpec, Registry, RunList, RunMode, Scenario, SimOptions, View,
};

/// The example plugin's `lsf`, compiled in (same algorithm, vcsim's types).
#[derive(Default)]
struct NativeLsf {
    order: Vec<(f64, u64, usize)>,
    free: Vec<f64>,
    per_project: Vec<u32>,
    /// Per app, all projects' apps in order; `first_app[p]` is project p's first.
    per_app: Vec<u32>,
    first_app: Vec<usize>,
}

impl CpuScheduler for NativeLsf {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        let now = v.now();
        let bonus = v.prefs().sched_period;
        self.order.clear();
        for (k, j) in v.jobs().iter().enumerate() {
            if !j.is_runnable() {
                continue;
            }
            let mut slack = j.deadline - now - v.remaining_seconds(j)?;
            if j.state == vcsim_framework::JobState::Running {
                slack += bonus;
            }
            self.order.push((slack, j.id, k));
        }
        self.order
            .sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let h = v.host();
        self.free.clear();
        self.free.extend((0..h.nrsc()).map(|r| h.ninstances(r)));
        self.per_project.clear();
        self.per_project.resize(v.projects().len(), 0);
        self.first_app.clear();
        let mut napps = 0;
        for p in v.projects() {
            self.first_app.push(napps);
            napps += p.apps.len();
        }
        self.per_app.clear();
        self.per_app.resize(napps, 0);
        const EPS: f64 = 1e-9;
        for &(slack, id, k) in &self.order {
            let j = &v.jobs()[k];
            let fits =
                j.cpus <= self.free[0] + EPS && j.gpu.is_none_or(|(r, n)| n <= self.free[r] + EPS);
            if !fits {
                continue;
            }
            let p = v.project(j.project);
            let a = self.first_app[j.project] + j.app;
            let capped = |cap: u32, n: u32| cap > 0 && n >= cap;
            if capped(p.max_concurrent, self.per_project[j.project])
                || capped(p.apps[j.app].max_concurrent, self.per_app[a])
            {
                continue;
            }
            self.per_project[j.project] += 1;
            self.per_app[a] += 1;
            self.free[0] -= j.cpus;
            if let Some((r, n)) = j.gpu {
                self.free[r] -= n;
            }
            let mode = if slack < 0.0 {
                RunMode::Deadline
            } else {
                RunMode::RoundRobin
            };
            out.push(id, mode);
            if self.free.iter().all(|f| *f <= EPS) {
                break;
            }
        }
        Ok(())
    }
}

struct CountCpu(Box<dyn CpuScheduler>, Arc<AtomicU64>);
impl CpuScheduler for CountCpu {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        self.1.fetch_add(1, Ordering::Relaxed);
        self.0.schedule(v, out)
    }
}

/// Counts calls: `remaining_seconds` and `correction` in the two counters.
struct CountEst(Box<dyn CompletionEstimator>, Arc<[AtomicU64; 2]>);
impl CompletionEstimator for CountEst {
    fn remaining_seconds(&self, v: &View, job: &Job) -> PolicyResult<f64> {
        self.1[0].fetch_add(1, Ordering::Relaxed);
        self.0.remaining_seconds(v, job)
    }
    fn correction(&self, v: &View, p: usize) -> PolicyResult<f64> {
        self.1[1].fetch_add(1, Ordering::Relaxed);
        self.0.correction(v, p)
    }
    fn on_job_finished(&mut self, v: &View, job: &Job) -> PolicyResult<()> {
        self.0.on_job_finished(v, job)
    }
}

fn build_plugins() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<bench>
    let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let target = profile_dir.parent().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--quiet", "-p", "vcsim-dylib-example"])
        .args(["-p", "vcsim-fixture-dylib-dup"])
        .env("CARGO_TARGET_DIR", target);
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    assert!(cmd.status().unwrap().success(), "building the plugins");
    profile_dir
}

fn lib(dir: &Path, krate: &str) -> PathBuf {
    dir.join(format!(
        "{}{}{}",
        std::env::consts::DLL_PREFIX,
        krate.replace('-', "_"),
        std::env::consts::DLL_SUFFIX
    ))
}

fn scenario(name: &str) -> Scenario {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../scenarios");
    Scenario::load(&root.join(name)).unwrap()
}

/// Median wall times of `n` runs of `a` and of `b`, alternated so that a
/// busy machine slows both alike; and the last metrics of each.
fn time2(
    reg: &Registry,
    scn: &Scenario,
    a: &str,
    b: &str,
    n: usize,
) -> (Duration, Duration, String, String) {
    let specs = [PolicySpec::parse(a).unwrap(), PolicySpec::parse(b).unwrap()];
    let mut times = [Vec::new(), Vec::new()];
    let mut last = [String::new(), String::new()];
    for i in 0..n + 2 {
        for k in 0..2 {
            let t = Instant::now();
            let out = run_spec(scn, reg, &specs[k], SimOptions::default()).unwrap();
            if i >= 2 {
                times[k].push(t.elapsed());
            }
            last[k] = format!("{:?}", out.report.metrics);
        }
    }
    for t in &mut times {
        t.sort();
    }
    let [la, lb] = last;
    (times[0][n / 2], times[1][n / 2], la, lb)
}

/// Runs `spec` once.
fn once(reg: &Registry, scn: &Scenario, spec: &str) {
    let spec = PolicySpec::parse(spec).unwrap();
    run_spec(scn, reg, &spec, SimOptions::default()).unwrap();
}

fn main() {
    let dir = build_plugins();
    vcsim_builtin::link();
    let mut reg = Registry::builtins().unwrap();
    vcsim_dylib_host::register(
        &mut reg,
        &[
            lib(&dir, "vcsim-dylib-example"),
            // Its `lsf` clashes with the example's: register only the rest.
        ],
    )
    .unwrap();
    let dup = vcsim_dylib_host::load(&lib(&dir, "vcsim-fixture-dylib-dup")).unwrap();
    for e in dup
        .entries()
        .into_iter()
        .filter(|e| e.family != Family::Cpu)
    {
        reg.add(e).unwrap();
    }
    let cpu_calls = Arc::new(AtomicU64::new(0));
    let est_calls = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let c = cpu_calls.clone();
    reg.add(Entry::new(Family::Cpu, "lsf-native", "", "bench", || {
        Ok(AnyPolicy::Cpu(Box::<NativeLsf>::default()))
    }))
    .unwrap();
    reg.add(Entry::new(
        Family::Cpu,
        "lsf-counted",
        "",
        "bench",
        move || {
            Ok(AnyPolicy::Cpu(Box::new(CountCpu(
                Box::<NativeLsf>::default(),
                c.clone(),
            ))))
        },
    ))
    .unwrap();
    let jc1 = reg.get(Family::Estimate, "jc1").unwrap().clone();
    let c = est_calls.clone();
    reg.add(Entry::new(
        Family::Estimate,
        "jc1-counted",
        "",
        "bench",
        move || match jc1.make()? {
            AnyPolicy::Estimate(e) => Ok(AnyPolicy::Estimate(Box::new(CountEst(e, c.clone())))),
            _ => Err("not an estimator".into()),
        },
    ))
    .unwrap();

    let n = 31;
    println!("100-day runs, median of {n}:");
    for name in ["paper-base.toml", "mix-5-slack-5.toml"] {
        let scn = scenario(name);
        cpu_calls.store(0, Ordering::Relaxed);
        once(&reg, &scn, "cpu=lsf-counted");
        let calls = cpu_calls.load(Ordering::Relaxed);
        let (td, tn, md, mn) = time2(&reg, &scn, "cpu=lsf", "cpu=lsf-native", n);
        assert_eq!(md, mn, "the dylib and the built-in port differ on {name}");
        let per_call = (td.as_secs_f64() - tn.as_secs_f64()) / calls as f64 * 1e9;
        println!(
            "  {name:<20} lsf dylib {:>8.2} ms  built in {:>8.2} ms  ratio {:.3}  ({calls} schedule calls, {per_call:.0} ns overhead per call incl. the view snapshot)",
            td.as_secs_f64() * 1e3,
            tn.as_secs_f64() * 1e3,
            td.as_secs_f64() / tn.as_secs_f64(),
        );
    }
    let scn = scenario("mix-5-slack-5.toml");
    for c in est_calls.iter() {
        c.store(0, Ordering::Relaxed);
    }
    once(&reg, &scn, "estimate=jc1-counted");
    let [remaining, correction] = [0, 1].map(|i| est_calls[i].load(Ordering::Relaxed));
    let calls = remaining + correction;
    let (td, tn, md, mn) = time2(&reg, &scn, "estimate=jc1-port", "estimate=jc1", n);
    assert_eq!(md, mn, "jc1-port and jc1 differ");
    println!(
        "  estimator, mix-5-slack-5: jc1-port dylib {:.2} ms  jc1 built in {:.2} ms  ratio {:.3}  ({remaining} remaining_seconds and {correction} correction calls, {:.0} ns overhead per call)",
        td.as_secs_f64() * 1e3,
        tn.as_secs_f64() * 1e3,
        td.as_secs_f64() / tn.as_secs_f64(),
        (td.as_secs_f64() - tn.as_secs_f64()) / calls as f64 * 1e9
    );
}
