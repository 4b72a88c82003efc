//! The five policy families. Each policy reads a [`View`] of the state and
//! returns decisions as plain values; the simulator validates every decision
//! and applies it. Nothing here lets a policy write the state, so no policy
//! can break an invariant of the simulator.
//!
//! Every method takes what its policy sees — a [`View`] on the client, the
//! [`ServerRequest`] on the server — and returns a [`PolicyResult`], so
//! that a script's or a plugin's error ends the run where it happened. The
//! traits use only plain data across their methods, so that a rhai script
//! or a dylib can implement each of them through an adapter.

use crate::family::Family;
use crate::model::{HostInfo, Job, Rsc, RunMode, Time};
use crate::view::View;
use std::fmt;

/// An error raised by a policy (a script error, a bad internal state...).
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyError {
    pub message: String,
    /// The family of the policy that raised it, when it is not the one the
    /// simulator called: an estimator's error met inside a CPU scheduler's
    /// call names the estimator.
    pub family: Option<Family>,
}

impl PolicyError {
    pub fn new(message: impl Into<String>) -> PolicyError {
        PolicyError {
            message: message.into(),
            family: None,
        }
    }
    /// The error, blamed on `family` unless it already names one.
    pub fn of(self, family: Family) -> PolicyError {
        PolicyError {
            family: self.family.or(Some(family)),
            ..self
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

/// Which jobs run on which resources now.
pub trait CpuScheduler: Send {
    /// Called when a job finishes, new jobs arrive, or a scheduling period has
    /// passed since the last call. `out` starts empty.
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()>;
}

/// The work request of one resource type (the seed `work-fetch-and-gpus`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RscRequest {
    /// Instance-seconds requested.
    pub req_seconds: f64,
    /// Send enough jobs to occupy this many instances.
    pub req_ninstances: f64,
}

/// A scheduler request's work part.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkRequest {
    pub project: usize,
    /// The old scalar request; a server that sees no per-resource request
    /// fills this with any of its apps.
    pub work_req_seconds: f64,
    /// Per resource (index = [`Rsc`]); all zero for an old-style request.
    pub rsc: Vec<RscRequest>,
}

impl WorkRequest {
    /// An old-style request: seconds of work of any kind.
    pub fn seconds(project: usize, seconds: f64, nrsc: usize) -> WorkRequest {
        WorkRequest {
            project,
            work_req_seconds: seconds,
            rsc: vec![RscRequest::default(); nrsc],
        }
    }
    /// A request only to report finished jobs.
    pub fn report_only(project: usize, nrsc: usize) -> WorkRequest {
        WorkRequest::seconds(project, 0.0, nrsc)
    }
    pub fn per_resource(&self) -> bool {
        self.rsc
            .iter()
            .any(|r| r.req_seconds > 0.0 || r.req_ninstances > 0.0)
    }
    /// Does the request ask for jobs of resource `r`?
    pub fn asks_for(&self, r: Rsc) -> bool {
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

/// The outcome of one scheduler RPC, as the client sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcReply {
    pub project: usize,
    pub request: WorkRequest,
    /// Some scheduler of the project answered.
    pub reached: bool,
    /// Jobs received, per resource.
    pub jobs: Vec<u32>,
    /// Per resource, the server's three-state answer when it gives one.
    pub rsc_status: Vec<RscStatus>,
}

impl RpcReply {
    pub fn njobs(&self) -> u32 {
        self.jobs.iter().sum()
    }
}

/// The three-state server answer proposed by `work-fetch-and-gpus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RscStatus {
    /// The server said nothing beyond the jobs it sent (the seed's default).
    Unknown,
    WorkReturned,
    NoWorkButSupported,
    NotSupported,
}

/// When to make a scheduler RPC, to which project, asking for how much.
pub trait WorkFetcher: Send {
    /// Debt accounting: called whenever the CPU scheduler runs and before an
    /// RPC, so that usage since the last call can be charged.
    fn account(&mut self, _v: &View) -> PolicyResult<()> {
        Ok(())
    }
    /// The RPC to make now for work, if any. It must depend only on the view
    /// (the simulator asks it at projected future times to find the step at
    /// which work is first needed). Only contactable projects may be named.
    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>>;
    /// The amount to ask of `project` when an RPC goes to it anyway (to
    /// report overdue results); None asks for nothing.
    fn piggyback(&self, _v: &View, _project: usize) -> PolicyResult<Option<WorkRequest>> {
        Ok(None)
    }
    /// After every RPC, reached or not.
    fn on_reply(&mut self, _v: &View, _reply: &RpcReply) -> PolicyResult<()> {
        Ok(())
    }
    /// Whether a request for work that brings none backs the whole project
    /// off (BOINC 2007). A per-resource fetcher backs off per resource instead.
    fn backoff_on_empty_reply(&self, _v: &View) -> PolicyResult<bool> {
        Ok(true)
    }
}

/// A job the server could send: drawn by the server's feeder from the
/// project's apps that run on the host and that the request asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub app: usize,
    pub rsc: Rsc,
    pub cpus: f64,
    pub gpu_count: f64,
    pub flops_estimate: f64,
    /// The server's estimate of its run time on this host: FLOPs estimate /
    /// the host's speed for the app x the client's reported DCF.
    pub est_seconds: f64,
    pub deadline: Time,
}

/// A job on the host, as a scheduler request lists it (for server-side checks).
#[derive(Debug, Clone, PartialEq)]
pub struct ReportedJob {
    pub project: usize,
    pub rsc: Rsc,
    pub cpus: f64,
    pub gpu_count: f64,
    pub deadline: Time,
    /// The client's estimate of its remaining run time.
    pub remaining_seconds: f64,
}

/// What a server sees of a scheduler request.
#[derive(Debug, Clone)]
pub struct ServerRequest<'a> {
    pub now: Time,
    pub project: usize,
    pub project_name: &'a str,
    pub latency_bound: f64,
    pub host: &'a HostInfo,
    pub request: &'a WorkRequest,
    /// The client's duration correction factor for this project.
    pub dcf: f64,
    pub work_buf_min: f64,
    /// Every job on the host, of every project.
    pub workload: &'a [ReportedJob],
    /// Free disk space: free; free if offenders' files were deleted; free if
    /// this project's were deleted too.
    pub free_bytes: [f64; 3],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Send,
    /// Not this one; the server may look at another.
    Skip,
    /// The reply is complete.
    Stop,
}

/// The server side: which jobs to send for a request.
pub trait WorkSender: Send {
    /// One candidate at a time; `sent` are the jobs already in this reply.
    fn consider(
        &mut self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
    ) -> PolicyResult<Verdict>;
}

/// The estimated remaining run time of a job.
pub trait CompletionEstimator: Send {
    /// Seconds of computing left (wall seconds while running). Pure.
    fn remaining_seconds(&self, v: &View, job: &Job) -> PolicyResult<f64>;
    /// The correction applied to new estimates of `project` (BOINC's DCF). Pure.
    fn correction(&self, _v: &View, _project: usize) -> PolicyResult<f64> {
        Ok(1.0)
    }
    /// After a job finished, so that the estimator can learn. The view
    /// estimates with [`StaticEstimate`] (an estimator cannot read itself
    /// while it learns).
    fn on_job_finished(&mut self, _v: &View, _job: &Job) -> PolicyResult<()> {
        Ok(())
    }
}

/// The uncorrected static estimate, `(1 - F) x FLOPs estimate / speed`:
/// what a view uses while the real estimator is busy learning.
pub struct StaticEstimate;

impl CompletionEstimator for StaticEstimate {
    fn remaining_seconds(&self, v: &View, job: &Job) -> PolicyResult<f64> {
        Ok((1.0 - v.fraction_done(job)) * job.estimated_seconds())
    }
}

/// Disk space per project, what to delete, and the free space told to
/// servers. The files and the user's limits are in [`View::disk`].
pub trait DiskManager: Send {
    /// Free space reported to `project`'s server: [free, free if offenders
    /// deleted, free if offenders and this project deleted]. Pure.
    fn free_space(&self, v: &View, project: usize) -> PolicyResult<[f64; 3]>;
    /// Whether the manager enforces limits (the JSON then has a `disk` part).
    /// Only then does the simulator keep files, ask [`DiskManager::make_room`]
    /// and [`DiskManager::poll`], and have servers check free space. Asked
    /// once, at the start of the run.
    fn enforces(&self, _v: &View) -> PolicyResult<bool> {
        Ok(false)
    }
    /// `associate_file`: `bytes` more of `project` are about to be written
    /// (a job's input on arrival, its output when it finishes). Returns the
    /// files to delete first. The simulator deletes them and writes the
    /// bytes either way; [`DiskManager::poll`] then deals with any violation.
    fn make_room(&mut self, _v: &View, _project: usize, _bytes: f64) -> PolicyResult<DiskPlan> {
        Ok(DiskPlan::default())
    }
    /// `data_manager_poll`: called after every change to the files. What to
    /// delete (results first, then files), and whether computation must be
    /// suspended because BOINC still uses more than the user allows.
    fn poll(&mut self, _v: &View) -> PolicyResult<DiskPlan> {
        Ok(DiskPlan::default())
    }
    /// `project_limit(p)` in bytes, for the report. Pure.
    fn project_limit(&self, _v: &View, _project: usize) -> PolicyResult<Option<f64>> {
        Ok(None)
    }
}

/// Deletions a disk manager asks for. The simulator refuses (as an invalid
/// decision) a file that is referenced or a job that has started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskPlan {
    /// Queued jobs (results) to delete, by id; their input files are then
    /// no longer referenced.
    pub delete_jobs: Vec<u64>,
    /// Files to delete, by id (after the jobs).
    pub delete_files: Vec<u64>,
    /// `poll`: nothing more can be freed and usage is over the limit:
    /// suspend all computation until it is not.
    pub suspend: bool,
}

/// One policy of each family, ready to run.
pub struct PolicySet {
    pub cpu: Box<dyn CpuScheduler>,
    pub fetch: Box<dyn WorkFetcher>,
    pub send: Box<dyn WorkSender>,
    pub estimate: Box<dyn CompletionEstimator>,
    pub disk: Box<dyn DiskManager>,
    /// Display names, per family (cpu, fetch, send, estimate, disk).
    pub names: [String; 5],
}
