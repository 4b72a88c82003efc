//! Write a vcsim policy as a compiled plugin (a `cdylib`).
//!
//! Implement the ordinary safe trait of the family — [`CpuScheduler`],
//! [`WorkFetcher`], [`WorkSender`], [`CompletionEstimator`] or
//! [`DiskManager`], which mirror vcsim's own — for a type that is `Default`,
//! and export it with one macro per family:
//!
//! ```ignore
//! use vcsim_dylib_sdk::*;
//!
//! #[derive(Default)]
//! pub struct MyScheduler;
//!
//! impl CpuScheduler for MyScheduler {
//!     fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
//!         for j in v.jobs().iter().filter(|j| j.is_runnable()).take(v.host().ncpus as usize) {
//!             out.push(j.id, RunMode::RoundRobin);
//!         }
//!         Ok(())
//!     }
//! }
//!
//! export_cpu!(MyScheduler => "my-scheduler", "runs the first jobs that arrived");
//! ```
//!
//! with `crate-type = ["cdylib"]` in the plugin's `Cargo.toml`. Each
//! `export_*!` macro is used at most once per library and takes one or more
//! `Type => "name", "summary"` items separated by `;`.
//!
//! The plugin never sees vcsim's Rust types: the host hands it `#[repr(C)]`
//! views (see `vcsim-dylib-abi`), which this crate wraps into safe,
//! borrowed snapshot types ([`View`], [`EstimateView`], [`ServerRequest`],
//! [`DiskView`]). Arrays of the host come as [`Strided`] (a slice whose
//! elements may be longer than this SDK knows, when a newer vcsim passes
//! them): index them, `get`, `iter` them as slices.
//! Times are in simulated seconds; projects and resources are indices.
//!
//! Every method may fail: an error ([`PolicyError::new`]) or a panic ends
//! the run with a message naming the plugin, the policy, the call and the
//! simulated time. A policy that draws at random takes its numbers from
//! [`View::rng`] (named streams of the run's seed), so that runs stay
//! reproducible and a pure method (`request`, `remaining_seconds`) draws
//! the same numbers for the same view.
//!
//! This SDK speaks ABI version [`abi::ABI_VERSION`].[`abi::ABI_MINOR`]; a
//! vcsim of the same major version and the same or a later minor loads
//! its plugins.
//!
//! # Safety
//!
//! This crate denies unsafe code except in the module of [`Strided`] (reads
//! of the host's arrays and strings) and in its hidden `__shims` module: the
//! generic `extern "C"` functions the export macros instantiate, which turn
//! the host's pointers into views, catch every panic and write decisions
//! into the host's buffers. Authors write no unsafe code.

#![deny(unsafe_code)]

pub use rand::Rng;
pub use vcsim_dylib_abi as abi;
pub use vcsim_dylib_abi::{
    Candidate, File, Host, Job, Prefs, ProjectRsc, ReportedJob, RscInfo, RscRequest, FILE_INPUT,
    FILE_OUTPUT, FILE_STICKY, JOB_FINISHED, JOB_PREEMPTED, JOB_QUEUED, JOB_RUNNING, NO_JOB,
};
pub use vcsim_rng::SimRng;

#[allow(unsafe_code)]
mod strided;
mod view;

pub use strided::{Iter, Strided};
pub use view::{App, DeletionPolicy, DiskView, EstimateView, Project, ServerRequest, View};

use std::fmt;

/// An error raised by a policy: it ends the run, with its message.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyError {
    pub message: String,
}

impl PolicyError {
    pub fn new(message: impl Into<String>) -> PolicyError {
        PolicyError {
            message: message.into(),
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PolicyError {}

impl From<String> for PolicyError {
    fn from(s: String) -> Self {
        PolicyError::new(s)
    }
}

impl From<&str> for PolicyError {
    fn from(s: &str) -> Self {
        PolicyError::new(s)
    }
}

pub type PolicyResult<T> = Result<T, PolicyError>;

/// Why a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    RoundRobin,
    Deadline,
}

/// The jobs a CPU scheduler wants running; everything else is preempted.
#[derive(Debug, Clone, Default)]
pub struct RunList {
    pub jobs: Vec<(u64, RunMode)>,
}

impl RunList {
    pub fn push(&mut self, job: u64, mode: RunMode) {
        self.jobs.push((job, mode));
    }
    pub fn contains(&self, job: u64) -> bool {
        self.jobs.iter().any(|(j, _)| *j == job)
    }
    pub fn clear(&mut self) {
        self.jobs.clear();
    }
    pub fn len(&self) -> usize {
        self.jobs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}

/// A scheduler request's work part.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkRequest {
    pub project: usize,
    pub work_req_seconds: f64,
    /// Per resource; all zero for an old-style request.
    pub rsc: Vec<RscRequest>,
}

impl WorkRequest {
    pub fn seconds(project: usize, seconds: f64, nrsc: usize) -> WorkRequest {
        WorkRequest {
            project,
            work_req_seconds: seconds,
            rsc: vec![RscRequest::default(); nrsc],
        }
    }
    pub fn report_only(project: usize, nrsc: usize) -> WorkRequest {
        WorkRequest::seconds(project, 0.0, nrsc)
    }
    pub fn per_resource(&self) -> bool {
        self.rsc
            .iter()
            .any(|r| r.req_seconds > 0.0 || r.req_ninstances > 0.0)
    }
    pub fn asks_for(&self, r: usize) -> bool {
        if self.per_resource() {
            self.rsc
                .get(r)
                .is_some_and(|x| x.req_seconds > 0.0 || x.req_ninstances > 0.0)
        } else {
            self.work_req_seconds > 0.0
        }
    }
    pub fn wants_work(&self) -> bool {
        self.work_req_seconds > 0.0 || self.per_resource()
    }
}

/// The server's three-state answer per resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RscStatus {
    Unknown,
    WorkReturned,
    NoWorkButSupported,
    NotSupported,
}

/// The outcome of one scheduler RPC.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcReply {
    pub project: usize,
    pub request: WorkRequest,
    pub reached: bool,
    /// Jobs received, per resource.
    pub jobs: Vec<u32>,
    pub rsc_status: Vec<RscStatus>,
}

impl RpcReply {
    pub fn njobs(&self) -> u32 {
        self.jobs.iter().sum()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Send,
    /// Not this one; the server may look at another.
    Skip,
    /// The reply is complete.
    Stop,
}

/// Deletions a disk manager asks for (vcsim's `DiskPlan`). vcsim refuses,
/// as an invalid decision, a file that is referenced or a job that has
/// started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskPlan {
    /// Queued jobs to delete, by id.
    pub delete_jobs: Vec<u64>,
    /// Files to delete, by id (after the jobs).
    pub delete_files: Vec<u64>,
    /// `poll`: usage is over the limit and nothing more can be freed:
    /// suspend computation until it is not.
    pub suspend: bool,
}

/// Which jobs run now (vcsim's `CpuScheduler`).
pub trait CpuScheduler: Send + 'static {
    /// Called when a job finishes, new jobs arrive, or a scheduling period
    /// has passed. `out` starts empty.
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()>;
}

/// When to ask which project for how much work (vcsim's `WorkFetcher`).
pub trait WorkFetcher: Send + 'static {
    /// Debt accounting: called whenever the CPU scheduler runs and before
    /// an RPC.
    fn account(&mut self, _v: &View) -> PolicyResult<()> {
        Ok(())
    }
    /// The RPC to make now for work, if any. Must depend only on the view:
    /// it is asked at projected future times.
    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>>;
    /// The amount to ask of `project` when an RPC goes to it anyway.
    fn piggyback(&self, _v: &View, _project: usize) -> PolicyResult<Option<WorkRequest>> {
        Ok(None)
    }
    /// After every RPC, reached or not.
    fn on_reply(&mut self, _v: &View, _reply: &RpcReply) -> PolicyResult<()> {
        Ok(())
    }
    /// Whether a request for work that brings none backs the whole project
    /// off (BOINC 2007).
    fn backoff_on_empty_reply(&self, _v: &View) -> PolicyResult<bool> {
        Ok(true)
    }
}

/// Which jobs a server sends (vcsim's `WorkSender`).
pub trait WorkSender: Send + 'static {
    /// One candidate at a time; `sent` are the jobs already in this reply.
    fn consider(
        &mut self,
        req: &ServerRequest,
        sent: Strided<'_, Candidate>,
        cand: &Candidate,
    ) -> PolicyResult<Verdict>;
}

/// The remaining run time of a job (vcsim's `CompletionEstimator`).
pub trait CompletionEstimator: Send + 'static {
    /// Seconds of computing left. Pure. The job's `remaining_seconds` and
    /// `static_estimate` are NaN here.
    fn remaining_seconds(&self, v: &EstimateView, job: &Job) -> PolicyResult<f64>;
    /// The correction applied to new estimates of `project` (BOINC's DCF):
    /// positive and finite. Pure.
    fn correction(&self, _v: &EstimateView, _project: usize) -> PolicyResult<f64> {
        Ok(1.0)
    }
    /// After a job finished, so that the estimator can learn.
    fn on_job_finished(&mut self, _v: &EstimateView, _job: &Job) -> PolicyResult<()> {
        Ok(())
    }
}

/// Free disk space told to servers, and which files to delete (vcsim's
/// `DiskManager`). The files and the user's limits are in [`View::disk`].
pub trait DiskManager: Send + 'static {
    /// [free, free if offenders deleted, free if offenders and this project
    /// deleted]. Pure.
    fn free_space(&self, v: &View, project: usize) -> PolicyResult<[f64; 3]>;
    /// Whether the manager enforces limits. Only then does vcsim keep files
    /// and call `make_room` and `poll`. Asked once, at the start of the run.
    fn enforces(&self, _v: &View) -> PolicyResult<bool> {
        Ok(false)
    }
    /// `bytes` more of `project` are about to be written: the files to
    /// delete first. vcsim writes the bytes either way; `poll` then deals
    /// with any violation.
    fn make_room(&mut self, _v: &View, _project: usize, _bytes: f64) -> PolicyResult<DiskPlan> {
        Ok(DiskPlan::default())
    }
    /// After every change to the files: what to delete, and whether to
    /// suspend computation.
    fn poll(&mut self, _v: &View) -> PolicyResult<DiskPlan> {
        Ok(DiskPlan::default())
    }
    /// `project`'s limit in bytes, for the report. Pure.
    fn project_limit(&self, _v: &View, _project: usize) -> PolicyResult<Option<f64>> {
        Ok(None)
    }
}

#[doc(hidden)]
#[allow(unsafe_code)]
pub mod __shims;

#[doc(hidden)]
#[macro_export]
macro_rules! __export_family {
    ($table:ident, $ctor:ident, $tables:ident, $export:ident, $get:ident, $sym:ident, $symconst:ident;
     $($ty:ty => $name:literal, $summary:literal);+ $(;)?) => {
        // The entry symbol is the one this SDK's ABI names.
        const _: () = ::core::assert!(
            $crate::abi::str_eq(::core::stringify!($sym), $crate::abi::symbols::$symconst),
            "the export macro's symbol is not the ABI's"
        );
        #[doc(hidden)]
        static $tables: &[$crate::abi::$table] = &[$(
            $crate::__shims::$ctor::<$ty>($name, $summary)
        ),+];
        #[doc(hidden)]
        static $export: $crate::abi::Export<$crate::abi::$table> = $crate::abi::Export {
            abi_version: $crate::abi::ABI_VERSION,
            abi_minor: $crate::abi::ABI_MINOR,
            size: ::core::mem::size_of::<$crate::abi::Export<$crate::abi::$table>>() as u32,
            rustc: $crate::abi::StaticStr::new($crate::abi::RUSTC_VERSION),
            plugin: $crate::abi::StaticStr::new(concat!(
                env!("CARGO_PKG_NAME"),
                " ",
                env!("CARGO_PKG_VERSION")
            )),
            count: <[&str]>::len(&[$($name),+]),
            table: $get,
        };
        #[doc(hidden)]
        extern "C" fn $get(i: usize) -> ::core::option::Option<&'static $crate::abi::$table> {
            $tables.get(i)
        }
        /// The plugin's entry point for this family (vcsim-dylib-abi).
        #[no_mangle]
        pub extern "C" fn $sym() -> &'static $crate::abi::Export<$crate::abi::$table> {
            &$export
        }
    };
}

/// Exports CPU schedulers: `export_cpu!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_cpu {
    ($($t:tt)+) => {
        $crate::__export_family!(CpuTable, cpu_table, __VCSIM_CPU_TABLES, __VCSIM_CPU_EXPORT,
            __vcsim_cpu_table, vcsim_plugin_cpu_v2, CPU; $($t)+);
    };
}

/// Exports work fetchers: `export_fetch!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_fetch {
    ($($t:tt)+) => {
        $crate::__export_family!(FetchTable, fetch_table, __VCSIM_FETCH_TABLES,
            __VCSIM_FETCH_EXPORT, __vcsim_fetch_table, vcsim_plugin_fetch_v2, FETCH; $($t)+);
    };
}

/// Exports work senders: `export_send!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_send {
    ($($t:tt)+) => {
        $crate::__export_family!(SendTable, send_table, __VCSIM_SEND_TABLES,
            __VCSIM_SEND_EXPORT, __vcsim_send_table, vcsim_plugin_send_v2, SEND; $($t)+);
    };
}

/// Exports completion estimators: `export_estimate!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_estimate {
    ($($t:tt)+) => {
        $crate::__export_family!(EstimateTable, estimate_table, __VCSIM_ESTIMATE_TABLES,
            __VCSIM_ESTIMATE_EXPORT, __vcsim_estimate_table, vcsim_plugin_estimate_v2,
            ESTIMATE; $($t)+);
    };
}

/// Exports disk managers: `export_disk!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_disk {
    ($($t:tt)+) => {
        $crate::__export_family!(DiskTable, disk_table, __VCSIM_DISK_TABLES,
            __VCSIM_DISK_EXPORT, __vcsim_disk_table, vcsim_plugin_disk_v2, DISK; $($t)+);
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none<T>() -> abi::Array<T> {
        abi::Array {
            ptr: std::ptr::null(),
            len: 0,
            stride: 0,
        }
    }

    fn raw_view(seed: u64, step: u64) -> abi::View {
        abi::View {
            size: std::mem::size_of::<abi::View>() as u32,
            minor: abi::ABI_MINOR,
            now: step as f64 * 60.0,
            seed,
            step,
            host: Host::default(),
            prefs: Prefs::default(),
            on_fraction: 1.0,
            available_seconds: 0.0,
            last_schedule: f64::NEG_INFINITY,
            last_rpc: f64::NAN,
            connection_interval: 0.0,
            host_on: 1,
            disk_suspended: 0,
            total_limit: 0.0,
            core_usage: 0.0,
            rsc: none(),
            projects: none(),
            apps: none(),
            project_rsc: none(),
            jobs: none(),
            files: none(),
        }
    }

    fn view(raw: &abi::View) -> View<'_> {
        View {
            raw,
            rsc: Strided::from_slice(&[]),
            projects: Strided::from_slice(&[]),
            apps: Strided::from_slice(&[]),
            project_rsc: Strided::from_slice(&[]),
            jobs: Strided::from_slice(&[]),
            files: Strided::from_slice(&[]),
        }
    }

    #[test]
    fn a_view_s_rng_is_the_named_stream_of_its_seed_and_step() {
        let raw = raw_view(7, 3);
        let v = view(&raw);
        let a: u64 = v.rng("x").gen();
        assert_eq!(a, v.rng("x").gen::<u64>(), "the same view, the same draws");
        assert_eq!(a, vcsim_rng::stream(7, "plugin:x", 3).gen::<u64>());
        assert_ne!(a, v.rng("y").gen::<u64>());
        let other = raw_view(8, 3);
        assert_ne!(a, view(&other).rng("x").gen::<u64>());
        let later = raw_view(7, 4);
        assert_ne!(a, view(&later).rng("x").gen::<u64>());
        assert!(v.last_rpc().is_none() && v.jobs().is_empty() && v.disk().usage() == 0.0);
    }
}
