//! Scenario files: the host, the client's preferences and the projects, as in
//! `interface.md`. Every number carries its unit in its key; unknown keys are
//! errors. Loading never panics: a bad file becomes a [`ScenarioError`] that
//! names the file, the key and the line.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Any u64: above TOML's largest integer (i64), written as a string
    /// of digits (`seed = "18446744073709551615"`), as `--seed` takes it.
    #[serde(default = "defaults::seed", with = "seed_field")]
    pub seed: u64,
    pub duration_days: f64,
    /// The paper's delta: the client's poll interval; every decision falls on
    /// a multiple of it.
    #[serde(default = "defaults::step_seconds")]
    pub step_seconds: f64,
    pub host: Host,
    #[serde(default)]
    pub client: Client,
    #[serde(rename = "project", default)]
    pub projects: Vec<Project>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Host {
    pub ncpus: u32,
    pub cpu_flops: f64,
    #[serde(default = "defaults::disk_gb")]
    pub disk_gb: f64,
    /// Disk used by other programs (BOINC's `d_total - d_free - boinc usage`).
    #[serde(default)]
    pub non_boinc_used_gb: f64,
    #[serde(default)]
    pub connection_interval_days: f64,
    #[serde(default)]
    pub availability: HostAvailability,
    #[serde(rename = "gpu", default)]
    pub gpus: Vec<GpuType>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostAvailability {
    #[serde(default = "defaults::one")]
    pub fraction: f64,
    #[serde(default = "defaults::mean_on_seconds")]
    pub mean_on_seconds: f64,
    /// Of the on-time, the fraction in which computing is allowed (BOINC's
    /// `active_frac`: the user is away, or prefers so).
    #[serde(default = "defaults::one")]
    pub active_fraction: f64,
    /// Of the on-time, the fraction in which GPU computing is allowed
    /// (BOINC's `gpu_active_frac`); at most `active_fraction`, which it
    /// takes when left out (see [`HostAvailability::gpu_active`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_active_fraction: Option<f64>,
}

impl Default for HostAvailability {
    fn default() -> Self {
        HostAvailability {
            fraction: 1.0,
            mean_on_seconds: defaults::mean_on_seconds(),
            active_fraction: 1.0,
            gpu_active_fraction: None,
        }
    }
}

impl HostAvailability {
    /// The fraction of on-time in which GPU computing is allowed:
    /// `gpu_active_fraction`, or `active_fraction` when it is left out.
    pub fn gpu_active(&self) -> f64 {
        self.gpu_active_fraction.unwrap_or(self.active_fraction)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GpuType {
    pub kind: String,
    pub count: u32,
    pub flops: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Client {
    #[serde(default = "defaults::sched_period_minutes")]
    pub sched_period_minutes: f64,
    #[serde(default = "defaults::work_buf_min_days")]
    pub work_buf_min_days: f64,
    #[serde(default = "defaults::work_buf_additional_days")]
    pub work_buf_additional_days: f64,
    /// false: the client's estimates assume the host is always available
    /// (BOINC's 2007 simulator, which reproduces the paper).
    #[serde(default)]
    pub learn_availability: bool,
    /// Percentage of the host's CPUs the client may use (BOINC's `max_ncpus_pct`).
    #[serde(default = "defaults::hundred")]
    pub max_ncpus_pct: f64,
    #[serde(default = "defaults::disk_max_used_gb")]
    pub disk_max_used_gb: f64,
    #[serde(default = "defaults::disk_max_used_pct")]
    pub disk_max_used_pct: f64,
    #[serde(default = "defaults::one")]
    pub disk_min_free_gb: f64,
    /// The half-life of recent estimated credit (BOINC's `rec_half_life_days`,
    /// cc_config.xml), which today's client (`cs3`, `wf3`) ranks projects by.
    #[serde(default = "defaults::rec_half_life_days")]
    pub rec_half_life_days: f64,
}

impl Default for Client {
    fn default() -> Self {
        Client {
            sched_period_minutes: defaults::sched_period_minutes(),
            work_buf_min_days: defaults::work_buf_min_days(),
            work_buf_additional_days: defaults::work_buf_additional_days(),
            learn_availability: false,
            max_ncpus_pct: 100.0,
            disk_max_used_gb: defaults::disk_max_used_gb(),
            disk_max_used_pct: defaults::disk_max_used_pct(),
            disk_min_free_gb: 1.0,
            rec_half_life_days: defaults::rec_half_life_days(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Project {
    pub name: String,
    pub resource_share: f64,
    pub latency_bound_days: f64,
    #[serde(default = "defaults::deletion_policy")]
    pub deletion_policy: String,
    #[serde(default)]
    pub delete_from_self: bool,
    /// Up/down process of the project's servers (master and schedulers alike).
    #[serde(default)]
    pub availability: ServerAvailability,
    /// The server's `<request_delay>`: the least gap it asks between RPCs.
    #[serde(default)]
    pub request_delay_seconds: f64,
    /// The server answers per resource with the three states proposed in
    /// `work-fetch-and-gpus` ("work returned", "no work but supported", "not
    /// supported"); by default it says nothing beyond the jobs it sends.
    #[serde(default)]
    pub reports_resource_support: bool,
    /// At most this many of the project's jobs run at once (app_config.xml's
    /// `project_max_concurrent`); 0: no cap.
    #[serde(default)]
    pub max_concurrent: u32,
    /// Scheduler URLs, tried in order; each has its own up/down process on top
    /// of the project's. None listed: one scheduler that is up with the project.
    #[serde(rename = "scheduler", default)]
    pub schedulers: Vec<Scheduler>,
    #[serde(rename = "app", default)]
    pub apps: Vec<App>,
    /// Jobs already on the host when the run starts.
    #[serde(rename = "job", default)]
    pub jobs: Vec<InitialJob>,
    /// Sticky files the project keeps on the host when the run starts.
    #[serde(rename = "sticky", default)]
    pub sticky: Vec<StickyFile>,
}

/// A file a project keeps on the host (`[[project.sticky]]`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StickyFile {
    #[serde(default)]
    pub name: String,
    pub size_mb: f64,
    /// Deletion priority: 1 (P_LOW) to 5 (P_HIGH).
    #[serde(default = "defaults::priority")]
    pub priority: u8,
    /// Days from its download after which it has expired.
    #[serde(default = "defaults::expiry_days")]
    pub expiry_days: f64,
    /// Downloaded, and last used, this many days before the run starts.
    #[serde(default)]
    pub age_days: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerAvailability {
    #[serde(default = "defaults::one")]
    pub fraction: f64,
    #[serde(default = "defaults::mean_up_hours")]
    pub mean_up_hours: f64,
}

impl Default for ServerAvailability {
    fn default() -> Self {
        ServerAvailability {
            fraction: 1.0,
            mean_up_hours: defaults::mean_up_hours(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scheduler {
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub availability: ServerAvailability,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct App {
    pub name: String,
    #[serde(default = "defaults::one")]
    pub cpus: f64,
    #[serde(default)]
    pub gpu: Option<AppGpu>,
    pub flops_estimate: f64,
    pub flops_mean: f64,
    #[serde(default)]
    pub flops_stddev: f64,
    #[serde(default)]
    pub input_mb: f64,
    #[serde(default)]
    pub output_mb: f64,
    /// Relative weight of this app when the server picks a job to send.
    #[serde(default = "defaults::one")]
    pub weight: f64,
    /// Probability that a job of this app fails (crashes) part-way.
    #[serde(default)]
    pub failure_fraction: f64,
    /// The job's input files stay on the host after it is reported (BOINC's
    /// `<sticky/>`), with this deletion priority and expiry.
    #[serde(default)]
    pub sticky_input: bool,
    #[serde(default = "defaults::priority")]
    pub sticky_priority: u8,
    #[serde(default = "defaults::expiry_days")]
    pub sticky_expiry_days: f64,
    /// This app's latency bound, overriding the project's.
    #[serde(default)]
    pub latency_bound_days: Option<f64>,
    /// At most this many of the app's jobs run at once (app_config.xml's
    /// `max_concurrent`); 0: no cap.
    #[serde(default)]
    pub max_concurrent: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppGpu {
    pub kind: String,
    #[serde(default = "defaults::one")]
    pub count: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InitialJob {
    pub app: String,
    /// The project's estimate; defaults to the app's.
    #[serde(default)]
    pub flops_estimate: Option<f64>,
    /// What the job really takes; defaults to the app's mean.
    #[serde(default)]
    pub flops: Option<f64>,
    /// Deadline, in days from the start of the run.
    pub deadline_days: f64,
    /// Fraction already computed.
    #[serde(default)]
    pub fraction_done: f64,
}

/// A seed as a TOML integer, or as a string of digits for the seeds above
/// TOML's largest integer.
mod seed_field {
    use serde::{de, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(seed: &u64, s: S) -> Result<S::Ok, S::Error> {
        match i64::try_from(*seed) {
            Ok(i) => s.serialize_i64(i),
            Err(_) => s.serialize_str(&seed.to_string()),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        struct Seed;
        impl de::Visitor<'_> for Seed {
            type Value = u64;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number from 0 to 18446744073709551615 (above 9223372036854775807, TOML's largest integer, as a string: \"18446744073709551615\")")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
                u64::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
                Ok(v)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
                v.parse()
                    .map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }
        d.deserialize_any(Seed)
    }
}

mod defaults {
    pub fn seed() -> u64 {
        1
    }
    pub fn step_seconds() -> f64 {
        60.0
    }
    pub fn one() -> f64 {
        1.0
    }
    pub fn hundred() -> f64 {
        100.0
    }
    pub fn disk_gb() -> f64 {
        100.0
    }
    pub fn mean_on_seconds() -> f64 {
        1000.0
    }
    pub fn mean_up_hours() -> f64 {
        24.0
    }
    pub fn sched_period_minutes() -> f64 {
        60.0
    }
    pub fn work_buf_min_days() -> f64 {
        0.1
    }
    pub fn rec_half_life_days() -> f64 {
        10.0
    }
    pub fn work_buf_additional_days() -> f64 {
        0.25
    }
    pub fn disk_max_used_gb() -> f64 {
        50.0
    }
    pub fn disk_max_used_pct() -> f64 {
        90.0
    }
    pub fn deletion_policy() -> String {
        "lru".into()
    }
    pub fn priority() -> u8 {
        1
    }
    pub fn expiry_days() -> f64 {
        60.0
    }
}

/// A scenario file that could not be used, with where the fault is.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub file: PathBuf,
    /// Dotted path of the offending key, when known (`project.0.resource_share`).
    pub key: Option<String>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": ")?;
        if let Some(k) = &self.key {
            write!(f, "key `{k}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl Scenario {
    /// Reads and validates a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = crate::input::read_text(path, crate::input::MAX_TEXT_BYTES).map_err(|e| {
            ScenarioError {
                file: path.to_path_buf(),
                key: None,
                line: None,
                column: None,
                message: format!("cannot read the file: {e}"),
            }
        })?;
        Scenario::from_toml_str(&text, path)
    }

    /// Parses and validates scenario text; `file` only names it in errors.
    pub fn from_toml_str(text: &str, file: &Path) -> Result<Scenario, ScenarioError> {
        let scenario: Scenario = toml::from_str(text).map_err(|e| {
            let (line, column) = match e.span() {
                Some(span) => {
                    let (l, c) = line_col(text, span.start);
                    (Some(l), Some(c))
                }
                None => (None, None),
            };
            ScenarioError {
                file: file.to_path_buf(),
                key: None,
                line,
                column,
                message: toml_message(text, &e),
            }
        })?;
        if let Err((key, message)) = scenario.validate() {
            let (line, column) =
                locate_key(text, &key).map_or((None, None), |(l, c)| (Some(l), Some(c)));
            return Err(ScenarioError {
                file: file.to_path_buf(),
                key: Some(key),
                line,
                column,
                message,
            });
        }
        Ok(scenario)
    }

    /// The user's limit on BOINC's disk usage, in bytes (BOINC's
    /// `allowed_disk_usage`): the least of `disk_max_used_gb`,
    /// `disk_max_used_pct` of the disk, and the disk less non-BOINC usage
    /// less `disk_min_free_gb`; never negative.
    pub fn disk_limit_bytes(&self) -> f64 {
        let gb = 1e9;
        let (h, c) = (&self.host, &self.client);
        let abs = c.disk_max_used_gb * gb;
        let pct = h.disk_gb * gb * c.disk_max_used_pct / 100.0;
        let min_free = (h.disk_gb - h.non_boinc_used_gb - c.disk_min_free_gb) * gb;
        abs.min(pct).min(min_free).max(0.0)
    }

    /// What is valid but almost surely not meant, naming the key: `check`
    /// prints it, and every run carries it in its warnings.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        // A run lasts a whole number of steps (the simulator decides at
        // step boundaries only): say where that goes past the duration.
        let (duration, dt) = (self.duration_days * 86400.0, self.step_seconds);
        let steps = (duration / dt).ceil().max(1.0);
        let past = steps * dt - duration;
        if past > 1e-6 * dt {
            out.push(format!(
                "duration_days = {} is not a whole number of steps of step_seconds = {dt}: the run lasts {steps} steps, {} s, {} s past it",
                self.duration_days,
                steps * dt,
                past
            ));
        }
        // A disk preference that leaves BOINC no room starves every job with
        // files, without an error: say which preference does it.
        let files = self
            .projects
            .iter()
            .any(|p| p.apps.iter().any(|a| a.input_mb > 0.0 || a.output_mb > 0.0));
        if files && self.disk_limit_bytes() <= 0.0 {
            let (c, h) = (&self.client, &self.host);
            let why = if h.disk_gb - h.non_boinc_used_gb - c.disk_min_free_gb <= 0.0 {
                format!(
                    "client.disk_min_free_gb = {} keeps free all that other programs leave of host.disk_gb = {} (host.non_boinc_used_gb = {})",
                    num(c.disk_min_free_gb),
                    num(h.disk_gb),
                    num(h.non_boinc_used_gb)
                )
            } else if c.disk_max_used_gb <= 0.0 {
                "client.disk_max_used_gb = 0".to_string()
            } else {
                "client.disk_max_used_pct = 0".to_string()
            };
            out.push(format!(
                "{why}: BOINC may use no disk, so no job with input or output files can be downloaded"
            ));
        }
        // BOINC computes on GPUs only in their allowed time: at 0, a GPU app
        // never runs, and a project with GPU apps only never gets work done.
        let av = &self.host.availability;
        if av.gpu_active() == 0.0 && !self.host.gpus.is_empty() {
            let gpu_apps: Vec<&str> = self
                .projects
                .iter()
                .filter(|p| p.apps.iter().any(|a| a.gpu.is_some()))
                .map(|p| p.name.as_str())
                .collect();
            if !gpu_apps.is_empty() {
                let key = if av.gpu_active_fraction.is_some() {
                    "host.availability.gpu_active_fraction"
                } else {
                    "host.availability.active_fraction"
                };
                out.push(format!(
                    "{key} = 0: the GPUs never compute, so the GPU apps of {} never run",
                    gpu_apps
                        .iter()
                        .map(|n| format!("project `{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        out
    }

    /// Checks every value that the types alone do not; returns the dotted key
    /// and what is wrong with it.
    pub fn validate(&self) -> Result<(), (String, String)> {
        // (A value derived by a knob or an import may overflow to infinity:
        // the message says what is wrong with it, not only the range.)
        fn finite(key: impl std::fmt::Display, v: f64) -> Result<(), (String, String)> {
            if v.is_finite() {
                Ok(())
            } else {
                Err((
                    key.to_string(),
                    format!("must be a finite number, found {v}"),
                ))
            }
        }
        fn positive(key: impl std::fmt::Display, v: f64) -> Result<(), (String, String)> {
            finite(&key, v)?;
            if v > 0.0 {
                Ok(())
            } else {
                Err((
                    key.to_string(),
                    format!("must be a positive number, found {v}"),
                ))
            }
        }
        fn named(key: impl std::fmt::Display, v: &str) -> Result<(), (String, String)> {
            match name_fault("name", v) {
                Some(m) => Err((key.to_string(), m)),
                None => Ok(()),
            }
        }
        // A job computes at its share of its devices: at least a slow
        // device's speed, or its estimates overflow (as a slower device's would).
        fn job_speed(
            key: impl std::fmt::Display,
            n: f64,
            flops: f64,
            what: &str,
        ) -> Result<(), (String, String)> {
            if n * flops >= bounds::MIN_FLOPS_PER_SECOND {
                return Ok(());
            }
            Err((
                key.to_string(),
                format!(
                    "{n:e} {what} per job compute at {:e} FLOPS, less than {:e}: give at least {:e}",
                    n * flops,
                    bounds::MIN_FLOPS_PER_SECOND,
                    bounds::MIN_FLOPS_PER_SECOND / flops
                ),
            ))
        }
        fn at_once(
            key: impl std::fmt::Display,
            width: f64,
            instances: f64,
            what: &str,
        ) -> Result<(), (String, String)> {
            let n = instances / width;
            if n <= bounds::MAX_JOBS_AT_ONCE {
                return Ok(());
            }
            Err((
                key.to_string(),
                format!(
                    "{width} {what} per job lets {} jobs run at once on the host's {instances} {what}; vcsim simulates at most {} at once on one resource (its work per event grows with them): give at least {}",
                    n.floor(),
                    bounds::MAX_JOBS_AT_ONCE,
                    instances / bounds::MAX_JOBS_AT_ONCE
                ),
            ))
        }
        fn non_negative(key: impl std::fmt::Display, v: f64) -> Result<(), (String, String)> {
            finite(&key, v)?;
            if v >= 0.0 {
                Ok(())
            } else {
                Err((key.to_string(), format!("must be zero or more, found {v}")))
            }
        }
        fn fraction(
            key: impl std::fmt::Display,
            v: f64,
            allow_zero: bool,
        ) -> Result<(), (String, String)> {
            if v.is_finite() && v <= 1.0 && (v > 0.0 || (allow_zero && v == 0.0)) {
                Ok(())
            } else {
                Err((
                    key.to_string(),
                    format!("must be a fraction in (0, 1], found {v}"),
                ))
            }
        }
        fn at_most(
            key: impl std::fmt::Display,
            v: f64,
            max: f64,
            unit: &str,
        ) -> Result<(), (String, String)> {
            if v <= max {
                Ok(())
            } else {
                let unit = if unit.is_empty() {
                    String::new()
                } else {
                    format!(" {unit}")
                };
                Err((
                    key.to_string(),
                    format!("must be at most {max:e}{unit}, found {v:e}"),
                ))
            }
        }
        fn at_least(
            key: impl std::fmt::Display,
            v: f64,
            min: f64,
            unit: &str,
        ) -> Result<(), (String, String)> {
            if v >= min {
                Ok(())
            } else {
                // A value that rounds to the bound is shown in full, so
                // that it visibly breaks it (59.99999999999996 s, not 60).
                let shown = if num(v) == num(min) {
                    format!("{v}")
                } else {
                    num(v)
                };
                Err((
                    key.to_string(),
                    format!(
                        "is {} {}; it must be at least {} {unit}",
                        shown,
                        unit.split(' ').next().unwrap_or(""),
                        num(min)
                    ),
                ))
            }
        }
        // A span of time, so that times built from it stay finite.
        fn span(
            key: impl std::fmt::Display,
            v: f64,
            per_day: f64,
            unit: &str,
        ) -> Result<(), (String, String)> {
            at_most(&key, v.abs(), bounds::MAX_SPAN_DAYS * per_day, unit)
        }
        fn priority(key: impl std::fmt::Display, v: u8) -> Result<(), (String, String)> {
            if (1..=5).contains(&v) {
                Ok(())
            } else {
                Err((
                    key.to_string(),
                    format!("must be a priority from 1 (P_LOW) to 5 (P_HIGH), found {v}"),
                ))
            }
        }
        positive("duration_days", self.duration_days)?;
        at_most(
            "duration_days",
            self.duration_days,
            bounds::MAX_DAYS,
            "days",
        )?;
        positive("step_seconds", self.step_seconds)?;
        let run = self.duration_days * 86400.0;
        if self.step_seconds > run {
            return Err((
                "step_seconds".into(),
                format!(
                    "one step ({} s) is longer than the run ({} s)",
                    num(self.step_seconds),
                    num(run)
                ),
            ));
        }
        if run / self.step_seconds > bounds::MAX_STEPS {
            return Err((
                "step_seconds".into(),
                format!(
                    "is too small for the duration: {:.3e} steps, at most {:.0e}",
                    run / self.step_seconds,
                    bounds::MAX_STEPS
                ),
            ));
        }
        if self.host.ncpus == 0 {
            return Err(("host.ncpus".into(), "must be at least 1".into()));
        }
        if self.host.ncpus > bounds::MAX_NCPUS {
            return Err((
                "host.ncpus".into(),
                format!(
                    "{} CPUs; vcsim simulates at most {}",
                    self.host.ncpus,
                    bounds::MAX_NCPUS
                ),
            ));
        }
        positive("host.cpu_flops", self.host.cpu_flops)?;
        at_least(
            "host.cpu_flops",
            self.host.cpu_flops,
            bounds::MIN_FLOPS_PER_SECOND,
            "FLOPS",
        )?;
        at_most(
            "host.cpu_flops",
            self.host.cpu_flops,
            bounds::MAX_FLOPS_PER_SECOND,
            "FLOPS",
        )?;
        positive("host.disk_gb", self.host.disk_gb)?;
        at_most("host.disk_gb", self.host.disk_gb, bounds::MAX_DISK_GB, "GB")?;
        non_negative("host.non_boinc_used_gb", self.host.non_boinc_used_gb)?;
        if self.host.non_boinc_used_gb > self.host.disk_gb {
            return Err((
                "host.non_boinc_used_gb".into(),
                format!(
                    "must be at most host.disk_gb ({} GB), found {} GB",
                    num(self.host.disk_gb),
                    num(self.host.non_boinc_used_gb)
                ),
            ));
        }
        non_negative(
            "host.connection_interval_days",
            self.host.connection_interval_days,
        )?;
        span(
            "host.connection_interval_days",
            self.host.connection_interval_days,
            1.0,
            "days",
        )?;
        span(
            "host.availability.mean_on_seconds",
            self.host.availability.mean_on_seconds,
            86400.0,
            "seconds",
        )?;
        span(
            "client.sched_period_minutes",
            self.client.sched_period_minutes,
            1440.0,
            "minutes",
        )?;
        span(
            "client.work_buf_min_days",
            self.client.work_buf_min_days,
            1.0,
            "days",
        )?;
        span(
            "client.work_buf_additional_days",
            self.client.work_buf_additional_days,
            1.0,
            "days",
        )?;
        span(
            "client.rec_half_life_days",
            self.client.rec_half_life_days,
            1.0,
            "days",
        )?;
        fraction(
            "host.availability.fraction",
            self.host.availability.fraction,
            false,
        )?;
        positive(
            "host.availability.mean_on_seconds",
            self.host.availability.mean_on_seconds,
        )?;
        // A period shorter than a step would flip more often than the run
        // has steps (the sampler draws every period).
        at_least(
            "host.availability.mean_on_seconds",
            self.host.availability.mean_on_seconds,
            self.step_seconds,
            "seconds (one step)",
        )?;
        let av = &self.host.availability;
        fraction(
            "host.availability.active_fraction",
            av.active_fraction,
            false,
        )?;
        if let Some(g) = av.gpu_active_fraction {
            fraction("host.availability.gpu_active_fraction", g, true)?;
        }
        if av.gpu_active() > av.active_fraction {
            return Err((
                "host.availability.gpu_active_fraction".into(),
                format!(
                    "must be at most active_fraction ({}): GPU computing is allowed only when computing is, found {}",
                    av.active_fraction,
                    av.gpu_active()
                ),
            ));
        }
        named("name", &self.name)?;
        for (i, g) in self.host.gpus.iter().enumerate() {
            named(format!("host.gpu.{i}.kind"), &g.kind)?;
            if g.kind.trim().is_empty() || g.kind == "cpu" {
                return Err((
                    format!("host.gpu.{i}.kind"),
                    "must name a coprocessor type other than `cpu`".into(),
                ));
            }
            if self.host.gpus[..i].iter().any(|o| o.kind == g.kind) {
                return Err((
                    format!("host.gpu.{i}.kind"),
                    format!("`{}` is listed twice", g.kind),
                ));
            }
            if g.count == 0 {
                return Err((format!("host.gpu.{i}.count"), "must be at least 1".into()));
            }
            if g.count > bounds::MAX_GPUS {
                return Err((
                    format!("host.gpu.{i}.count"),
                    format!(
                        "{} GPUs; vcsim simulates at most {} of a kind",
                        g.count,
                        bounds::MAX_GPUS
                    ),
                ));
            }
            positive(format!("host.gpu.{i}.flops"), g.flops)?;
            at_least(
                format!("host.gpu.{i}.flops"),
                g.flops,
                bounds::MIN_FLOPS_PER_SECOND,
                "FLOPS",
            )?;
            at_most(
                format!("host.gpu.{i}.flops"),
                g.flops,
                bounds::MAX_FLOPS_PER_SECOND,
                "FLOPS",
            )?;
        }
        let c = &self.client;
        positive("client.sched_period_minutes", c.sched_period_minutes)?;
        positive("client.rec_half_life_days", c.rec_half_life_days)?;
        non_negative("client.work_buf_min_days", c.work_buf_min_days)?;
        non_negative(
            "client.work_buf_additional_days",
            c.work_buf_additional_days,
        )?;
        if !(c.max_ncpus_pct > 0.0 && c.max_ncpus_pct <= 100.0) {
            return Err((
                "client.max_ncpus_pct".into(),
                format!("must be in (0, 100], found {}", c.max_ncpus_pct),
            ));
        }
        non_negative("client.disk_max_used_gb", c.disk_max_used_gb)?;
        at_most(
            "client.disk_max_used_gb",
            c.disk_max_used_gb,
            bounds::MAX_DISK_GB,
            "GB",
        )?;
        if !(c.disk_max_used_pct >= 0.0 && c.disk_max_used_pct <= 100.0) {
            return Err((
                "client.disk_max_used_pct".into(),
                format!("must be in [0, 100], found {}", c.disk_max_used_pct),
            ));
        }
        non_negative("client.disk_min_free_gb", c.disk_min_free_gb)?;
        at_most(
            "client.disk_min_free_gb",
            c.disk_min_free_gb,
            bounds::MAX_DISK_GB,
            "GB",
        )?;
        if self.projects.is_empty() {
            return Err((
                "project".into(),
                "the scenario needs at least one [[project]]".into(),
            ));
        }
        if self.projects.len() > bounds::MAX_PROJECTS {
            return Err((
                "project".into(),
                format!(
                    "{} projects; vcsim simulates at most {} (a BOINC host is attached to a few dozen)",
                    self.projects.len(),
                    bounds::MAX_PROJECTS
                ),
            ));
        }
        let mut queued = 0;
        for (i, p) in self.projects.iter().enumerate() {
            queued += p.jobs.len();
            if queued > bounds::MAX_QUEUED_JOBS {
                return Err((
                    format!("project.{i}.job"),
                    format!(
                        "more than {} jobs queued at the start; vcsim takes at most that many (the simulator's work per step grows with the queue)",
                        bounds::MAX_QUEUED_JOBS
                    ),
                ));
            }
        }
        // The first project whose name an earlier one has, found by sorting
        // (the framework keeps no hashed state; a pairwise test was
        // quadratic in the projects, a tree of names costly per cell of a
        // sweep of 1,000 projects). Reported in its turn, after the earlier
        // projects' other keys.
        let first_repeat = {
            let mut names: Vec<(&str, usize)> = self
                .projects
                .iter()
                .enumerate()
                .map(|(i, p)| (p.name.as_str(), i))
                .collect();
            names.sort_unstable();
            names
                .windows(2)
                .filter(|w| w[0].0 == w[1].0)
                .map(|w| w[1].1)
                .min()
        };
        let mut sticky_gb = 0.0;
        for (i, p) in self.projects.iter().enumerate() {
            let k = |s: &str| format!("project.{i}.{s}");
            // Written only if an error needs it: a scenario of 1,000
            // projects or 100,000 jobs has many keys to check.
            let lk = |s: &'static str| LazyKey(move |f| write!(f, "project.{i}.{s}"));
            if p.name.trim().is_empty() {
                return Err((k("name"), "must not be empty".into()));
            }
            named(lk("name"), &p.name)?;
            if first_repeat == Some(i) {
                return Err((k("name"), format!("project `{}` is listed twice", p.name)));
            }
            positive(lk("resource_share"), p.resource_share)?;
            // Shares far apart in magnitude make fractions meaningless.
            at_most(
                lk("resource_share"),
                p.resource_share,
                bounds::MAX_SHARE,
                "",
            )?;
            if p.resource_share < bounds::MIN_SHARE {
                return Err((
                    k("resource_share"),
                    format!(
                        "must be at least {:e}, found {:e}",
                        bounds::MIN_SHARE,
                        p.resource_share
                    ),
                ));
            }
            positive(lk("latency_bound_days"), p.latency_bound_days)?;
            at_least(
                lk("latency_bound_days"),
                p.latency_bound_days * 86400.0,
                self.step_seconds,
                "seconds (one step): a job's deadline would fall within the step it arrives in",
            )?;
            if !["lru", "priority", "expire"].contains(&p.deletion_policy.as_str()) {
                return Err((
                    k("deletion_policy"),
                    format!(
                        "must be lru, priority or expire, found `{}`",
                        p.deletion_policy
                    ),
                ));
            }
            if p.availability.fraction == 0.0 {
                return Err((
                    k("availability.fraction"),
                    format!("0: the servers of project `{}` are never up, so it could never be contacted (remove the project instead)", p.name),
                ));
            }
            fraction(lk("availability.fraction"), p.availability.fraction, true)?;
            positive(
                lk("availability.mean_up_hours"),
                p.availability.mean_up_hours,
            )?;
            at_least(
                lk("availability.mean_up_hours"),
                p.availability.mean_up_hours * 3600.0,
                self.step_seconds,
                "seconds (one step)",
            )?;
            non_negative(lk("request_delay_seconds"), p.request_delay_seconds)?;
            span(
                lk("request_delay_seconds"),
                p.request_delay_seconds,
                86400.0,
                "seconds",
            )?;
            span(lk("latency_bound_days"), p.latency_bound_days, 1.0, "days")?;
            span(
                lk("availability.mean_up_hours"),
                p.availability.mean_up_hours,
                24.0,
                "hours",
            )?;
            for (j, s) in p.schedulers.iter().enumerate() {
                fraction(
                    k(&format!("scheduler.{j}.availability.fraction")),
                    s.availability.fraction,
                    true,
                )?;
                positive(
                    k(&format!("scheduler.{j}.availability.mean_up_hours")),
                    s.availability.mean_up_hours,
                )?;
                span(
                    k(&format!("scheduler.{j}.availability.mean_up_hours")),
                    s.availability.mean_up_hours,
                    24.0,
                    "hours",
                )?;
                at_least(
                    k(&format!("scheduler.{j}.availability.mean_up_hours")),
                    s.availability.mean_up_hours * 3600.0,
                    self.step_seconds,
                    "seconds (one step)",
                )?;
            }
            if p.apps.is_empty() {
                return Err((
                    k("app"),
                    format!("project `{}` needs at least one [[project.app]]", p.name),
                ));
            }
            for (j, a) in p.apps.iter().enumerate() {
                let ka = |s: &str| k(&format!("app.{j}.{s}"));
                let lka = |s: &'static str| LazyKey(move |f| write!(f, "project.{i}.app.{j}.{s}"));
                named(lka("name"), &a.name)?;
                if p.apps[..j].iter().any(|o| o.name == a.name) {
                    return Err((ka("name"), format!("app `{}` is listed twice", a.name)));
                }
                non_negative(lka("cpus"), a.cpus)?;
                if a.cpus > self.host.ncpus as f64 {
                    return Err((
                        ka("cpus"),
                        format!(
                            "{} CPUs per job is more than the host's {}",
                            a.cpus, self.host.ncpus
                        ),
                    ));
                }
                // The user's limit is the one strict cap: a wider job never runs.
                if a.cpus > self.usable_cpus() as f64 {
                    return Err((
                        ka("cpus"),
                        format!(
                            "{} CPUs per job is more than the {} the client may use (client.max_ncpus_pct = {} of {}): its jobs could never run",
                            a.cpus,
                            self.usable_cpus(),
                            self.client.max_ncpus_pct,
                            self.host.ncpus
                        ),
                    ));
                }
                match &a.gpu {
                    None => {
                        if a.cpus <= 0.0 {
                            return Err((ka("cpus"), "a CPU app needs more than 0 CPUs".into()));
                        }
                        job_speed(lka("cpus"), a.cpus, self.host.cpu_flops, "CPUs")?;
                        at_once(lka("cpus"), a.cpus, self.host.ncpus as f64, "CPUs")?;
                    }
                    // A project may have apps for a GPU this host lacks: the server never sends them.
                    Some(g) => {
                        positive(lka("gpu.count"), g.count)?;
                        // A job must fit on the host's GPUs of its kind, as
                        // a CPU job must fit on its CPUs.
                        if let Some(t) = self.host.gpus.iter().find(|t| t.kind == g.kind) {
                            job_speed(lka("gpu.count"), g.count, t.flops, "GPUs")?;
                            at_once(lka("gpu.count"), g.count, t.count as f64, "GPUs")?;
                            if g.count > t.count as f64 {
                                return Err((
                                    ka("gpu.count"),
                                    format!(
                                        "{} {} GPUs per job is more than the host's {}",
                                        g.count, g.kind, t.count
                                    ),
                                ));
                            }
                        }
                    }
                }
                positive(lka("flops_estimate"), a.flops_estimate)?;
                positive(lka("flops_mean"), a.flops_mean)?;
                non_negative(lka("flops_stddev"), a.flops_stddev)?;
                non_negative(lka("input_mb"), a.input_mb)?;
                at_most(lka("input_mb"), a.input_mb, bounds::MAX_DISK_GB * 1e3, "MB")?;
                non_negative(lka("output_mb"), a.output_mb)?;
                at_most(
                    lka("output_mb"),
                    a.output_mb,
                    bounds::MAX_DISK_GB * 1e3,
                    "MB",
                )?;
                non_negative(lka("weight"), a.weight)?;
                at_most(lka("weight"), a.weight, bounds::MAX_WEIGHT, "")?;
                if !(0.0..1.0).contains(&a.failure_fraction) {
                    return Err((
                        ka("failure_fraction"),
                        format!("must be in [0, 1), found {}", a.failure_fraction),
                    ));
                }
                priority(lka("sticky_priority"), a.sticky_priority)?;
                positive(lka("sticky_expiry_days"), a.sticky_expiry_days)?;
                span(lka("sticky_expiry_days"), a.sticky_expiry_days, 1.0, "days")?;
                if let Some(d) = a.latency_bound_days {
                    span(lka("latency_bound_days"), d, 1.0, "days")?;
                }
                if let Some(d) = a.latency_bound_days {
                    positive(lka("latency_bound_days"), d)?;
                    at_least(
                        lka("latency_bound_days"),
                        d * 86400.0,
                        self.step_seconds,
                        "seconds (one step): a job's deadline would fall within the step it arrives in",
                    )?;
                }
                for (key, v) in [
                    ("flops_estimate", a.flops_estimate),
                    ("flops_mean", a.flops_mean),
                    ("flops_stddev", a.flops_stddev),
                ] {
                    at_most(lka(key), v, bounds::MAX_JOB_FLOPS, "FLOPs")?;
                }
            }
            for (j, f) in p.sticky.iter().enumerate() {
                let kf = |s: &str| k(&format!("sticky.{j}.{s}"));
                non_negative(kf("size_mb"), f.size_mb)?;
                priority(kf("priority"), f.priority)?;
                positive(kf("expiry_days"), f.expiry_days)?;
                non_negative(kf("age_days"), f.age_days)?;
                span(kf("expiry_days"), f.expiry_days, 1.0, "days")?;
                span(kf("age_days"), f.age_days, 1.0, "days")?;
            }
            // The files exist on the host from the start: they must fit on
            // its disk, as every later file must (a write that cannot fails).
            for (j, f) in p.sticky.iter().enumerate() {
                sticky_gb += f.size_mb / 1e3;
                let room = self.host.disk_gb - self.host.non_boinc_used_gb;
                if sticky_gb > room {
                    return Err((
                        k(&format!("sticky.{j}.size_mb")),
                        format!(
                            "the projects' sticky files take {} GB up to this one, more than the {} GB the disk has for BOINC (host.disk_gb less host.non_boinc_used_gb)",
                            (sticky_gb * 1e3).round() / 1e3,
                            (room * 1e3).round() / 1e3
                        ),
                    ));
                }
            }
            if p.apps.iter().all(|a| a.weight == 0.0) {
                return Err((k("app"), "at least one app needs a positive weight".into()));
            }
            for (j, job) in p.jobs.iter().enumerate() {
                let kj = |s: &str| k(&format!("job.{j}.{s}"));
                let lkj = |s: &'static str| LazyKey(move |f| write!(f, "project.{i}.job.{j}.{s}"));
                if !p.apps.iter().any(|a| a.name == job.app) {
                    return Err((
                        kj("app"),
                        format!("no app `{}` in project `{}`", job.app, p.name),
                    ));
                }
                if let Some(f) = job.flops_estimate {
                    positive(lkj("flops_estimate"), f)?;
                }
                if let Some(f) = job.flops {
                    positive(lkj("flops"), f)?;
                }
                if !job.deadline_days.is_finite() {
                    return Err((kj("deadline_days"), "must be a number".into()));
                }
                span(lkj("deadline_days"), job.deadline_days, 1.0, "days")?;
                if !(0.0..1.0).contains(&job.fraction_done) {
                    return Err((
                        kj("fraction_done"),
                        format!("must be in [0, 1), found {}", job.fraction_done),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Usable CPUs: BOINC's `max_ncpus_pct` applied to the host, at least one.
    pub fn usable_cpus(&self) -> u32 {
        ((self.host.ncpus as f64 * self.client.max_ncpus_pct / 100.0).floor() as u32).max(1)
    }
}

/// A `Display` written by a closure: `validate`'s keys, formatted only
/// when an error names one.
struct LazyKey<F: Fn(&mut std::fmt::Formatter<'_>) -> std::fmt::Result>(F);

impl<F: Fn(&mut std::fmt::Formatter<'_>) -> std::fmt::Result> std::fmt::Display for LazyKey<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (self.0)(f)
    }
}

/// Why `v`, a name or a label (`what`), cannot serve as one, if it
/// cannot: a control character would act on a terminal (clear a screen) or
/// break a CSV file, a plot (XML forbids them) or a TOML comment; a long
/// name is copied into every decision an explained run records. Scenarios,
/// sweeps and search spaces give the same message.
pub fn name_fault(what: &str, v: &str) -> Option<String> {
    if let Some(c) = v.chars().find(|c| c.is_control()) {
        return Some(format!(
            "holds the control character {c:?}: a {what} must be printable"
        ));
    }
    let n = v.chars().count();
    (n > bounds::MAX_NAME_CHARS).then(|| {
        format!(
            "is {n} characters long: a {what} has at most {}",
            bounds::MAX_NAME_CHARS
        )
    })
}

/// The message of a TOML reader's error on `text`, never empty: the reader
/// gives none for a control character in a comment.
pub fn toml_message(text: &str, e: &toml::de::Error) -> String {
    let m = e.message().trim();
    if m.contains("number too large to fit in target type") {
        // Only a seed may be past TOML's integers (as a string of digits).
        let key = e.span().and_then(|span| key_before(text, span.start));
        let hint = match key {
            Some("seed") => " (a larger `seed` is written as a string of digits: `seed = \"18446744073709551615\"`)".to_string(),
            Some(k) => format!(" (`{k}` is a whole number within that range)"),
            None => String::new(),
        };
        return format!(
            "{m}: TOML integers range from -9223372036854775808 to 9223372036854775807{hint}"
        );
    }
    // serde names the type (`expected u32`), not the key or the range.
    if let (Some(max), Some(span)) = (whole_number_max(m), e.span()) {
        let value = text.get(span.clone()).unwrap_or("").trim();
        let what = key_before(text, span.start).map_or(String::new(), |k| format!("`{k}` "));
        return format!("{what}must be a whole number from 0 to {max}, found {value}");
    }
    if !m.is_empty() {
        return m.to_string();
    }
    let at = e
        .span()
        .and_then(|s| text.get(s.start..))
        .and_then(|t| t.chars().next());
    match at {
        Some(c) if c.is_control() => format!(
            "the control character {c:?} is not allowed in TOML, not even in a comment (tab is the only one)"
        ),
        Some(c) => format!("unexpected {c:?}"),
        None => "not valid TOML".into(),
    }
}

/// The largest whole number serde's message means by "expected u32" (u8,
/// u16, u32, u64, usize), if it says so: the range a key's value must be in.
pub fn whole_number_max(serde_message: &str) -> Option<u64> {
    [
        ("u8", u8::MAX as u64),
        ("u16", u16::MAX as u64),
        ("u32", u32::MAX as u64),
        ("u64", u64::MAX),
        ("usize", usize::MAX as u64),
    ]
    .into_iter()
    .find(|(t, _)| serde_message.ends_with(&format!("expected {t}")))
    .map(|(_, max)| max)
}

/// The key written before the value at byte `at` on its line (`ncpus` of
/// `ncpus = 5000000000`), if it is a plain one (not in an inline table).
fn key_before(text: &str, at: usize) -> Option<&str> {
    let at = at.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text.get(line_start..at)?
        .trim_end()
        .strip_suffix('=')
        .map(str::trim)
        .filter(|k| !k.is_empty() && !k.contains(['{', ',']))
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(offset, |i| offset - i - 1) + 1;
    (line, col)
}

/// Finds the line and column of a dotted key (`project.1.app.0.cpus`) in TOML
/// text, walking arrays of tables by index; falls back to the deepest parent
/// that exists.
pub fn locate_key(text: &str, dotted: &str) -> Option<(usize, usize)> {
    use toml_edit::{Item, Value};
    enum Node<'a> {
        Item(&'a Item),
        Table(&'a toml_edit::Table),
        Value(&'a Value),
    }
    let doc = text.parse::<toml_edit::ImDocument<String>>().ok()?;
    let mut node = Node::Item(doc.as_item());
    let mut best = None;
    for seg in dotted.split('.') {
        let index = seg.parse::<usize>().ok();
        let (span, next) = match (&node, index) {
            (Node::Item(Item::ArrayOfTables(a)), Some(i)) => match a.get(i) {
                Some(t) => (t.span(), Node::Table(t)),
                None => break,
            },
            (Node::Item(Item::Value(Value::Array(a))), Some(i))
            | (Node::Value(Value::Array(a)), Some(i)) => match a.get(i) {
                Some(v) => (v.span(), Node::Value(v)),
                None => break,
            },
            (_, _) => {
                let table: Option<&dyn toml_edit::TableLike> = match &node {
                    Node::Item(it) => it.as_table_like(),
                    Node::Table(t) => Some(*t as &dyn toml_edit::TableLike),
                    Node::Value(Value::InlineTable(t)) => Some(t as &dyn toml_edit::TableLike),
                    Node::Value(_) => None,
                };
                match table.and_then(|t| t.get_key_value(seg)) {
                    Some((k, it)) => (k.span().or_else(|| it.span()), Node::Item(it)),
                    None => break,
                }
            }
        };
        if let Some(s) = span {
            best = Some(s.start);
        }
        node = next;
    }
    best.map(|o| line_col(text, o))
}

/// A number as a person reads it: plain, or in exponent form when tiny or huge.
fn num(v: f64) -> String {
    // To 12 significant digits: a value made from another (days to
    // seconds, or seconds to days and back) shows as 0.864, not
    // 0.8640000000000001, and as 1, not 1.00000000000224.
    let v = format!("{v:.11e}").parse::<f64>().unwrap_or(v);
    if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e9) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// What the simulator can represent and run in bounded time: every
/// quantity of a scenario is checked against these (the book's scenario
/// page lists them).
pub mod bounds {
    /// A run of at most 100 years.
    pub const MAX_DAYS: f64 = 36_500.0;
    /// Any other span of time (a latency bound, a buffer, a delay, a
    /// period): at most 10 million days, so that times built from it stay
    /// finite and ordered.
    pub const MAX_SPAN_DAYS: f64 = 1e7;
    /// At most this many steps in a run.
    pub const MAX_STEPS: f64 = 1e8;
    /// CPUs of a host (a 100-day run of the base scenario at 256 CPUs takes
    /// about 8 s: see the book's "Big hosts").
    pub const MAX_NCPUS: u32 = 256;
    /// Projects a host is attached to, as many as the `mix` knob makes (the
    /// work per event grows with them: 1,000 projects on 4 CPUs take about
    /// 3 s for 2 days, 2,000 take 13 s).
    pub const MAX_PROJECTS: usize = 1000;
    /// Jobs queued at the start, all projects together: the work per step
    /// grows with the queue (on 4 CPUs, 100,000 take 2.2 s for 2 days,
    /// 300,000 took 9 s), and an imported 200 MB `client_state.xml` holds
    /// some 100,000 results.
    pub const MAX_QUEUED_JOBS: usize = 100_000;
    /// GPUs of one kind.
    pub const MAX_GPUS: u32 = 64;
    /// Jobs of one app that can run at once on one resource (its instances
    /// over the job's share of one): as many as CPUs, for the same reason.
    /// The simulations' work per event grows with the jobs running: 6,400
    /// GPU jobs of 0.01 GPU on 64 GPUs took 12 s for 0.2 days; 256 take
    /// 2.6 s a day under today's client (CS3), which simulates as BOINC's
    /// does, passing over every running job at each event.
    pub const MAX_JOBS_AT_ONCE: f64 = 256.0;
    /// FLOPS of one CPU or GPU (an exaFLOPS).
    pub const MAX_FLOPS_PER_SECOND: f64 = 1e18;
    /// FLOPS of one CPU or GPU at least (a kiloFLOPS): a job of the most
    /// FLOPs then takes 10^27 s, which times and estimates still hold.
    pub const MIN_FLOPS_PER_SECOND: f64 = 1e3;
    /// FLOPs of one job.
    pub const MAX_JOB_FLOPS: f64 = 1e30;
    /// A project's resource share, at most and at least (shares 10^24
    /// apart still give fractions that mean something; a subnormal share,
    /// 1e-310, gave two equal projects 0.94 and 0.06 of the work).
    pub const MAX_SHARE: f64 = 1e12;
    pub const MIN_SHARE: f64 = 1e-12;
    /// A disk, a disk preference or a file, in GB: a zettabyte (`import`
    /// writes BOINC's "no limit", 0, as 10^12 GB; sums of files stay
    /// finite).
    pub const MAX_DISK_GB: f64 = 1e12;
    /// An app's weight (the server's draw sums them: they must stay finite).
    pub const MAX_WEIGHT: f64 = 1e12;
    /// Characters of a name (of a scenario, project, app, GPU kind, sweep
    /// or search space) or a sweep's label, as BOINC's database holds an
    /// app's: an explained run copies names into its records, and 1,000
    /// projects of 10 kB names made gigabytes of them.
    pub const MAX_NAME_CHARS: usize = 254;
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
name = "t"
duration_days = 1
[host]
ncpus = 1
cpu_flops = 1e9
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 1
[[project.app]]
name = "main"
flops_estimate = 1e12
flops_mean = 1e12
"#;

    #[test]
    fn a_repeated_project_name_is_found_at_its_second_use_in_its_turn() {
        let project = |name: &str, share: f64| {
            let mut p = Scenario::from_toml_str(MINIMAL, Path::new("x.toml"))
                .unwrap()
                .projects[0]
                .clone();
            p.name = name.into();
            p.resource_share = share;
            p
        };
        let mut s = Scenario::from_toml_str(MINIMAL, Path::new("x.toml")).unwrap();
        s.projects = vec![
            project("B", 1.0),
            project("A", 1.0),
            project("C", 1.0),
            project("A", 1.0),
            project("B", 1.0),
        ];
        let e = s.validate().unwrap_err();
        assert_eq!(e.0, "project.3.name");
        assert!(e.1.contains("project `A` is listed twice"), "{e:?}");
        // An earlier project's other fault is said first.
        s.projects[2].resource_share = -1.0;
        assert_eq!(s.validate().unwrap_err().0, "project.2.resource_share");
    }

    #[test]
    fn a_control_character_in_a_comment_gets_a_message() {
        // The TOML reader's own message for it is empty.
        let text = format!("# bad \u{7} comment\n{MINIMAL}");
        let e = Scenario::from_toml_str(&text, Path::new("x.toml")).unwrap_err();
        assert_eq!((e.line, e.column), (Some(1), Some(7)));
        assert!(
            e.message
                .contains("the control character '\\u{7}' is not allowed in TOML"),
            "{e}"
        );
    }

    #[test]
    fn numbers_in_messages_show_no_rounding_noise() {
        assert_eq!(num(1e-5 * 86400.0), "0.864");
        // 12 digits: an import's 1 s made days and back is 1.
        assert_eq!(num(1.00000000000224), "1");
        assert_eq!(num(59.9999999), "59.9999999");
        assert_eq!(num(1e300), "1e300");
    }

    #[test]
    fn more_jobs_queued_at_the_start_than_the_bound_are_refused() {
        // A TOML file of 100,001 jobs is 5 MB: built here instead.
        let mut s = Scenario::from_toml_str(MINIMAL, Path::new("t.toml")).unwrap();
        let job = InitialJob {
            app: "main".into(),
            flops_estimate: None,
            flops: None,
            deadline_days: 1.0,
            fraction_done: 0.0,
        };
        s.projects[0].jobs = vec![job.clone(); bounds::MAX_QUEUED_JOBS];
        assert_eq!(s.validate(), Ok(()));
        s.projects[0].jobs.push(job);
        let (key, message) = s.validate().unwrap_err();
        assert_eq!(key, "project.0.job");
        assert!(
            message.starts_with("more than 100000 jobs queued at the start"),
            "{message}"
        );
    }

    /// The key and message of the error `MINIMAL`, edited, gives.
    fn refused(edit: impl Fn(&str) -> String) -> (String, String) {
        let e = Scenario::from_toml_str(&edit(MINIMAL), Path::new("t.toml")).unwrap_err();
        (e.key.clone().unwrap_or_default(), e.to_string())
    }

    #[test]
    fn a_job_too_narrow_to_compute_or_too_wide_to_ever_run_is_refused() {
        // A job on 1e-308 CPUs computes at 1e-299 FLOPS: its estimate is
        // infinite (the run then failed, blaming the estimator).
        let (k, m) =
            refused(|t| t.replace("flops_mean = 1e12", "flops_mean = 1e12\ncpus = 1e-308"));
        assert_eq!(k, "project.0.app.0.cpus");
        assert!(m.contains("less than 1e3: give at least 1e-6"), "{m}");
        let (k, m) = refused(|t| {
            t.replace(
                "cpu_flops = 1e9",
                "cpu_flops = 1e9\n[[host.gpu]]\nkind = \"nvidia\"\ncount = 1\nflops = 1e12",
            )
            .replace(
                "flops_mean = 1e12",
                "flops_mean = 1e12\ncpus = 0.1\ngpu = { kind = \"nvidia\", count = 1e-300 }",
            )
        });
        assert_eq!(k, "project.0.app.0.gpu.count");
        assert!(m.contains("GPUs per job compute at"), "{m}");
        // The user's CPU limit is strict: a 2-CPU job on 1 usable CPU never runs.
        let (k, m) = refused(|t| {
            t.replace("ncpus = 1", "ncpus = 4")
                .replace("flops_mean = 1e12", "flops_mean = 1e12\ncpus = 2")
                .replace("[[project]]", "[client]\nmax_ncpus_pct = 25\n[[project]]")
        });
        assert_eq!(k, "project.0.app.0.cpus");
        assert!(
            m.contains("2 CPUs per job is more than the 1 the client may use (client.max_ncpus_pct = 25 of 4)"),
            "{m}"
        );
    }

    #[test]
    fn a_minimal_scenario_takes_the_documented_defaults() {
        let s = Scenario::from_toml_str(MINIMAL, Path::new("t.toml")).unwrap();
        assert_eq!(s.seed, 1);
        assert_eq!(s.step_seconds, 60.0);
        assert_eq!(s.client.sched_period_minutes, 60.0);
        assert_eq!(s.client.work_buf_min_days, 0.1);
        assert_eq!(s.host.availability.fraction, 1.0);
        assert_eq!(s.projects[0].apps[0].cpus, 1.0);
    }

    #[test]
    fn gpu_computing_is_allowed_whenever_computing_is_unless_said() {
        let text = MINIMAL.replace(
            "cpu_flops = 1e9",
            "cpu_flops = 1e9\n[host.availability]\nactive_fraction = 0.5",
        );
        let s = Scenario::from_toml_str(&text, Path::new("t.toml")).unwrap();
        assert_eq!(s.host.availability.gpu_active(), 0.5);
        let text = text.replace(
            "active_fraction = 0.5",
            "active_fraction = 0.5\ngpu_active_fraction = 0.6",
        );
        let e = Scenario::from_toml_str(&text, Path::new("t.toml")).unwrap_err();
        assert_eq!(
            e.key.as_deref(),
            Some("host.availability.gpu_active_fraction")
        );
    }

    #[test]
    fn a_job_wider_than_the_hosts_gpus_is_refused() {
        let text = MINIMAL
            .replace(
                "cpu_flops = 1e9",
                "cpu_flops = 1e9\n[[host.gpu]]\nkind = \"nvidia\"\ncount = 1\nflops = 1e12",
            )
            .replace(
                "name = \"main\"",
                "name = \"main\"\ncpus = 0.5\ngpu = { kind = \"nvidia\", count = 2 }",
            );
        let e = Scenario::from_toml_str(&text, Path::new("x.toml")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("project.0.app.0.gpu.count"));
        assert!(
            e.to_string()
                .contains("2 nvidia GPUs per job is more than the host's 1"),
            "{e}"
        );
        // One that fits is taken.
        let ok = text.replace("count = 2 }", "count = 1 }");
        assert!(Scenario::from_toml_str(&ok, Path::new("x.toml")).is_ok());
    }

    #[test]
    fn an_unknown_key_names_file_key_and_line() {
        let text = MINIMAL.replace("ncpus = 1", "ncpus = 1\nncpu = 2");
        let e = Scenario::from_toml_str(&text, Path::new("x.toml")).unwrap_err();
        assert_eq!(e.line, Some(6));
        assert!(e.to_string().contains("x.toml:6"), "{e}");
        assert!(e.to_string().contains("ncpu"), "{e}");
    }

    #[test]
    fn a_negative_share_is_located_by_its_key() {
        let text = MINIMAL.replace("resource_share = 100", "resource_share = -5");
        let e = Scenario::from_toml_str(&text, Path::new("x.toml")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("project.0.resource_share"));
        assert_eq!(e.line, Some(9));
    }

    #[test]
    fn sticky_files_take_their_defaults_and_a_bad_priority_is_located() {
        let text = format!("{MINIMAL}[[project.sticky]]\nsize_mb = 10\n");
        let s = Scenario::from_toml_str(&text, Path::new("x.toml")).unwrap();
        let f = &s.projects[0].sticky[0];
        assert_eq!((f.priority, f.expiry_days, f.age_days), (1, 60.0, 0.0));
        assert!(!s.projects[0].apps[0].sticky_input);
        let text = format!("{text}priority = 6\n");
        let e = Scenario::from_toml_str(&text, Path::new("x.toml")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("project.0.sticky.0.priority"));
        let line = text.lines().position(|l| l == "priority = 6").unwrap() + 1;
        assert_eq!(e.line, Some(line));
        let text = MINIMAL.replace(
            "flops_mean = 1e12",
            "flops_mean = 1e12\nsticky_priority = 0",
        );
        let e = Scenario::from_toml_str(&text, Path::new("x.toml")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("project.0.app.0.sticky_priority"));
    }

    #[test]
    fn a_key_in_the_second_app_of_the_second_project_is_found() {
        let text = format!("{MINIMAL}[[project]]\nname = \"B\"\nresource_share = 1\nlatency_bound_days = 1\n[[project.app]]\nname = \"a\"\nflops_estimate = 1\nflops_mean = 1\n[[project.app]]\nname = \"b\"\nflops_estimate = 1\nflops_mean = 1\ncpus = 9\n");
        let e = Scenario::from_toml_str(&text, Path::new("x.toml")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("project.1.app.1.cpus"));
        let line = text.lines().position(|l| l == "cpus = 9").unwrap() + 1;
        assert_eq!(e.line, Some(line));
    }
}
