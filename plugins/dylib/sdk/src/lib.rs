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
//! [`DiskView`]).
//! Times are in simulated seconds; projects and resources are indices.
//!
//! # Safety
//!
//! This crate denies unsafe code except in its hidden `__shims` module: the
//! generic `extern "C"` functions the export macros instantiate, which turn
//! the host's pointers into slices, catch every panic and write decisions
//! into the host's buffers. Authors write no unsafe code.

#![deny(unsafe_code)]

pub use vcsim_dylib_abi as abi;
pub use vcsim_dylib_abi::{
    Candidate, File, Host, Job, Prefs, ProjectRsc, ReportedJob, RscInfo, RscRequest, FILE_INPUT,
    FILE_OUTPUT, FILE_STICKY, JOB_FINISHED, JOB_PREEMPTED, JOB_QUEUED, JOB_RUNNING, NO_JOB,
};

use std::fmt;

/// An error raised by a policy.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyError(pub String);

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PolicyError {}

impl From<String> for PolicyError {
    fn from(s: String) -> Self {
        PolicyError(s)
    }
}

impl From<&str> for PolicyError {
    fn from(s: &str) -> Self {
        PolicyError(s.to_string())
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

/// A borrowed view of the client's state at one (possibly projected) time.
#[derive(Clone, Copy)]
pub struct View<'a> {
    raw: &'a abi::View,
    rsc: &'a [RscInfo],
    projects: &'a [abi::Project],
    project_rsc: &'a [ProjectRsc],
    jobs: &'a [Job],
}

impl<'a> View<'a> {
    /// The view's simulated time.
    pub fn now(&self) -> f64 {
        self.raw.now
    }
    pub fn host(&self) -> &'a Host {
        &self.raw.host
    }
    pub fn prefs(&self) -> &'a Prefs {
        &self.raw.prefs
    }
    /// Number of resources (CPU + GPU types).
    pub fn nrsc(&self) -> usize {
        self.rsc.len()
    }
    pub fn rsc(&self, r: usize) -> &'a RscInfo {
        &self.rsc[r]
    }
    pub fn rsc_name(&self, r: usize) -> &'a str {
        __shims::str_of(self.rsc[r].name)
    }
    pub fn nprojects(&self) -> usize {
        self.projects.len()
    }
    pub fn project(&self, p: usize) -> Project<'a> {
        Project {
            raw: &self.projects[p],
            rsc: &self.project_rsc[p * self.rsc.len()..(p + 1) * self.rsc.len()],
        }
    }
    pub fn projects(&self) -> impl Iterator<Item = Project<'a>> + 'a {
        let v = *self;
        (0..v.projects.len()).map(move |p| v.project(p))
    }
    /// Jobs on the host in arrival order.
    pub fn jobs(&self) -> &'a [Job] {
        self.jobs
    }
    pub fn job(&self, id: u64) -> Option<&'a Job> {
        self.jobs.iter().find(|j| j.id == id)
    }
    /// The host estimator's remaining run time of a job of this view.
    pub fn remaining_seconds(&self, j: &Job) -> f64 {
        j.remaining_seconds
    }
    pub fn share_fraction(&self, p: usize) -> f64 {
        self.projects[p].share_fraction
    }
    pub fn contactable(&self, p: usize) -> bool {
        self.projects[p].contactable != 0
    }
    pub fn project_has_runnable(&self, p: usize) -> bool {
        self.projects[p].has_runnable != 0
    }
    pub fn usage_seconds(&self, p: usize, r: usize) -> f64 {
        self.project(p).rsc(r).usage_seconds
    }
    pub fn idle_instances(&self, r: usize) -> f64 {
        self.rsc[r].idle_instances
    }
    pub fn on_fraction(&self) -> f64 {
        self.raw.on_fraction
    }
    pub fn available_seconds(&self) -> f64 {
        self.raw.available_seconds
    }
    pub fn host_on(&self) -> bool {
        self.raw.host_on != 0
    }
    pub fn last_schedule(&self) -> f64 {
        self.raw.last_schedule
    }
    pub fn last_rpc(&self) -> Option<f64> {
        (!self.raw.last_rpc.is_nan()).then_some(self.raw.last_rpc)
    }
    pub fn connection_interval(&self) -> f64 {
        self.raw.connection_interval
    }
}

/// One project of a [`View`].
#[derive(Clone, Copy)]
pub struct Project<'a> {
    raw: &'a abi::Project,
    rsc: &'a [ProjectRsc],
}

impl<'a> Project<'a> {
    pub fn name(&self) -> &'a str {
        __shims::str_of(self.raw.name)
    }
    pub fn resource_share(&self) -> f64 {
        self.raw.resource_share
    }
    pub fn share_fraction(&self) -> f64 {
        self.raw.share_fraction
    }
    pub fn latency_bound(&self) -> f64 {
        self.raw.latency_bound
    }
    pub fn exp_avg_cpu(&self) -> f64 {
        self.raw.exp_avg_cpu
    }
    pub fn contactable(&self) -> bool {
        self.raw.contactable != 0
    }
    pub fn has_runnable(&self) -> bool {
        self.raw.has_runnable != 0
    }
    pub fn napps(&self) -> usize {
        self.raw.napps
    }
    pub fn rsc(&self, r: usize) -> &'a ProjectRsc {
        &self.rsc[r]
    }
    /// It has apps for resource `r` on this host.
    pub fn has_rsc_apps(&self, r: usize) -> bool {
        self.rsc[r].has_apps != 0
    }
}

/// What an estimator sees besides the job (not the other jobs).
#[derive(Clone, Copy)]
pub struct EstimateView<'a> {
    raw: &'a abi::EstimateView,
    rsc: &'a [RscInfo],
}

impl<'a> EstimateView<'a> {
    pub fn now(&self) -> f64 {
        self.raw.now
    }
    pub fn host(&self) -> &'a Host {
        &self.raw.host
    }
    pub fn prefs(&self) -> &'a Prefs {
        &self.raw.prefs
    }
    pub fn rsc(&self, r: usize) -> &'a RscInfo {
        &self.rsc[r]
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
    pub jobs: Vec<u32>,
    pub rsc_status: Vec<RscStatus>,
}

/// What a server sees of a scheduler request.
#[derive(Clone)]
pub struct ServerRequest<'a> {
    pub now: f64,
    pub project: usize,
    pub project_name: &'a str,
    pub latency_bound: f64,
    pub host: &'a Host,
    pub rsc: &'a [RscInfo],
    pub request: WorkRequest,
    pub dcf: f64,
    pub work_buf_min: f64,
    pub workload: &'a [ReportedJob],
    pub free_bytes: [f64; 3],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Send,
    Skip,
    Stop,
}

/// Which jobs run now (vcsim's `CpuScheduler`).
pub trait CpuScheduler: Send + 'static {
    /// `out` starts empty.
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()>;
}

/// When to ask which project for how much work (vcsim's `WorkFetcher`).
pub trait WorkFetcher: Send + 'static {
    fn account(&mut self, _v: &View) -> PolicyResult<()> {
        Ok(())
    }
    /// Must depend only on the view: it is asked at projected future times.
    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>>;
    fn piggyback(&self, _v: &View, _project: usize) -> PolicyResult<Option<WorkRequest>> {
        Ok(None)
    }
    fn on_reply(&mut self, _v: &View, _reply: &RpcReply) -> PolicyResult<()> {
        Ok(())
    }
    fn backoff_on_empty_reply(&self) -> bool {
        true
    }
}

/// Which jobs a server sends (vcsim's `WorkSender`).
pub trait WorkSender: Send + 'static {
    fn consider(
        &mut self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
    ) -> PolicyResult<Verdict>;
}

/// The remaining run time of a job (vcsim's `CompletionEstimator`).
pub trait CompletionEstimator: Send + 'static {
    /// Pure. The job's `remaining_seconds` and `static_estimate` are NaN here.
    fn remaining_seconds(&self, v: &EstimateView, job: &Job) -> PolicyResult<f64>;
    fn correction(&self, _project: usize) -> f64 {
        1.0
    }
    fn on_job_finished(&mut self, _v: &EstimateView, _job: &Job) -> PolicyResult<()> {
        Ok(())
    }
}

/// The order in which a project's files are deleted (its `deletion_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletionPolicy {
    /// Least recently used first (the default).
    Lru,
    /// Lowest priority first, in download order.
    Priority,
    /// Expired files first, then least recently used.
    Expire,
}

/// What a disk manager sees of the files on the host (beside the [`View`],
/// whose jobs say which may be deleted: queued and never started).
#[derive(Clone, Copy)]
pub struct DiskView<'a> {
    raw: &'a abi::DiskView,
    files: &'a [File],
    deletion_policy: &'a [u8],
}

impl<'a> DiskView<'a> {
    /// The files, in creation order (ids increase).
    pub fn files(&self) -> &'a [File] {
        self.files
    }
    /// The user's limit on BOINC's usage (`total_limit`).
    pub fn total_limit(&self) -> f64 {
        self.raw.total_limit
    }
    /// `total_limit - core_usage`, at least 0 (`all_projects_limit`).
    pub fn all_projects_limit(&self) -> f64 {
        (self.raw.total_limit - self.raw.core_usage).max(0.0)
    }
    /// Bytes of all projects' files.
    pub fn usage(&self) -> f64 {
        self.files.iter().map(|f| f.bytes).sum()
    }
    /// Bytes of project `p`'s files.
    pub fn project_usage(&self, p: usize) -> f64 {
        self.files
            .iter()
            .filter(|f| f.project == p)
            .map(|f| f.bytes)
            .sum()
    }
    /// Computation is suspended because nothing more could be deleted.
    pub fn suspended(&self) -> bool {
        self.raw.suspended != 0
    }
    pub fn deletion_policy(&self, p: usize) -> DeletionPolicy {
        match self.deletion_policy.get(p).copied() {
            Some(abi::DELETE_PRIORITY) => DeletionPolicy::Priority,
            Some(abi::DELETE_EXPIRE) => DeletionPolicy::Expire,
            _ => DeletionPolicy::Lru,
        }
    }
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
    /// `make_room`: the bytes fit after the deletions.
    pub fits: bool,
    /// `poll`: usage is over the limit and nothing more can be freed.
    pub suspend: bool,
}

/// Free disk space told to servers, and which files to delete (vcsim's
/// `DiskManager`). vcsim calls `make_room`, `poll` and `project_limit`
/// only if `enforces` is true.
pub trait DiskManager: Send + 'static {
    /// [free, free if offenders deleted, free if offenders and this project deleted].
    fn free_space(&self, v: &View, project: usize) -> PolicyResult<[f64; 3]>;
    fn enforces(&self) -> bool {
        false
    }
    /// `bytes` more of `project` are about to be written: what to delete
    /// first, and whether they then fit.
    fn make_room(
        &mut self,
        _v: &View,
        _d: &DiskView,
        _project: usize,
        _bytes: f64,
    ) -> PolicyResult<DiskPlan> {
        Ok(DiskPlan {
            fits: true,
            ..DiskPlan::default()
        })
    }
    /// After every change to the files: what to delete, and whether to
    /// suspend computation.
    fn poll(&mut self, _v: &View, _d: &DiskView) -> PolicyResult<DiskPlan> {
        Ok(DiskPlan::default())
    }
    /// `project`'s limit in bytes, for the report.
    fn project_limit(&self, _v: &View, _d: &DiskView, _project: usize) -> Option<f64> {
        None
    }
}

#[doc(hidden)]
#[allow(unsafe_code)]
pub mod __shims;

#[doc(hidden)]
#[macro_export]
macro_rules! __export_family {
    ($table:ident, $ctor:ident, $tables:ident, $export:ident, $get:ident, $sym:ident;
     $($ty:ty => $name:literal, $summary:literal);+ $(;)?) => {
        #[doc(hidden)]
        static $tables: &[$crate::abi::$table] = &[$(
            $crate::__shims::$ctor::<$ty>($name, $summary)
        ),+];
        #[doc(hidden)]
        static $export: $crate::abi::Export<$crate::abi::$table> = $crate::abi::Export {
            abi_version: $crate::abi::ABI_VERSION,
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
            __vcsim_cpu_table, vcsim_plugin_cpu_v1; $($t)+);
    };
}

/// Exports work fetchers: `export_fetch!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_fetch {
    ($($t:tt)+) => {
        $crate::__export_family!(FetchTable, fetch_table, __VCSIM_FETCH_TABLES,
            __VCSIM_FETCH_EXPORT, __vcsim_fetch_table, vcsim_plugin_fetch_v1; $($t)+);
    };
}

/// Exports work senders: `export_send!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_send {
    ($($t:tt)+) => {
        $crate::__export_family!(SendTable, send_table, __VCSIM_SEND_TABLES,
            __VCSIM_SEND_EXPORT, __vcsim_send_table, vcsim_plugin_send_v1; $($t)+);
    };
}

/// Exports completion estimators: `export_estimate!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_estimate {
    ($($t:tt)+) => {
        $crate::__export_family!(EstimateTable, estimate_table, __VCSIM_ESTIMATE_TABLES,
            __VCSIM_ESTIMATE_EXPORT, __vcsim_estimate_table, vcsim_plugin_estimate_v1; $($t)+);
    };
}

/// Exports disk managers: `export_disk!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_disk {
    ($($t:tt)+) => {
        $crate::__export_family!(DiskTable, disk_table, __VCSIM_DISK_TABLES,
            __VCSIM_DISK_EXPORT, __vcsim_disk_table, vcsim_plugin_disk_v1; $($t)+);
    };
}
