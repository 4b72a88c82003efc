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

pub mod admission;
mod decision;
mod error;
pub mod view;

pub use crate::explain::{Datum, Ranking, Reason};
pub use decision::*;
pub use error::{PolicyError, PolicyResult};
pub use view::View;

use crate::model::Job;
pub use crate::rpc::ClientRules;
use crate::time::Time;

/// Which jobs run on which resources now.
pub trait CpuScheduler: Send {
    /// Called when a job finishes, new jobs arrive, or a scheduling period has
    /// passed since the last call. `out` starts empty.
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()>;
    /// Why `job` is in the run list `out` that `schedule` just returned, or
    /// why not. Asked only in explained runs (`vcsim explain`), for each job
    /// started, preempted or switched, right after `schedule`.
    fn explain(&self, _v: &View, _out: &RunList, _job: u64) -> PolicyResult<Option<Reason>> {
        Ok(None)
    }
    /// What the last `schedule` ranked projects by (one value per project),
    /// for the timeline's plot. Asked only in explained runs.
    fn ranking(&self, _v: &View) -> PolicyResult<Option<Ranking>> {
        Ok(None)
    }
}

/// When to make a scheduler RPC, to which project, asking for how much.
pub trait WorkFetcher: Send {
    /// Debt accounting: called whenever the CPU scheduler runs and before an
    /// RPC, so that usage since the last call can be charged.
    fn account(&mut self, _v: &View) -> PolicyResult<()> {
        Ok(())
    }
    /// The RPC to make now for work, if any. It must depend only on the view:
    /// the simulator asks it at every step where the client runs (also, in
    /// the event-driven mode, at steps ahead of the state's last event, with
    /// a view projected to them: the same view a fixed-step run has there).
    /// Only contactable projects may be named.
    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>>;
    /// Why `request` (or `piggyback`) just returned `req`: the shortfall of
    /// each resource, why this project and not the others. Asked only in
    /// explained runs.
    fn explain_request(&self, _v: &View, _req: &WorkRequest) -> PolicyResult<Option<Reason>> {
        Ok(None)
    }
    /// How long `request` is sure to stay `None`: `Some(t)`, `v.now() <= t
    /// <= limit`, when at every step from `v.now()` to `t` (the state
    /// unchanged, running jobs progressing as they do) `request` would
    /// answer `None`; `None` when it cannot say. The event-driven simulator
    /// then does not ask `request` at those steps, so an answer here must
    /// be certain, not likely (a wrong one makes the event-driven run differ
    /// from the fixed-step one), and a fetcher that certifies must not log
    /// from `request`. The default says nothing: the fetcher is asked at
    /// every step.
    fn quiet_until(&self, _v: &View, _limit: Time) -> PolicyResult<Option<Time>> {
        Ok(None)
    }
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
    /// The client this fetcher belongs to: when it reports finished jobs,
    /// and how many RPCs it makes in a step. Asked once, at the start.
    fn client_rules(&self) -> ClientRules {
        ClientRules::BOINC_2007
    }
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
    /// Why `consider` just returned `verdict` for `cand`. Asked only in
    /// explained runs.
    fn explain_verdict(
        &self,
        _req: &ServerRequest,
        _sent: &[Candidate],
        _cand: &Candidate,
        _verdict: Verdict,
    ) -> PolicyResult<Option<Reason>> {
        Ok(None)
    }
}

/// The estimated remaining run time of a job.
pub trait CompletionEstimator: Send {
    /// Seconds of computing left (wall seconds while running). Pure.
    fn remaining_seconds(&self, v: &View, job: &Job) -> PolicyResult<f64>;
    /// The least and greatest `remaining_seconds` of `job` over the views at
    /// times from `v.now()` to `until`, the state unchanged (a running job
    /// progressing at its rate, the others still); None when it cannot say
    /// (fetchers then cannot certify a quiet stretch: see
    /// [`WorkFetcher::quiet_until`]). The bounds must hold for the values
    /// `remaining_seconds` computes, rounding included.
    fn remaining_bounds(
        &self,
        _v: &View,
        _job: &Job,
        _until: Time,
    ) -> PolicyResult<Option<(f64, f64)>> {
        Ok(None)
    }
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
    /// Why the plan just returned (by `make_room` or `poll`) deletes what it
    /// does: offender, priority, expiry. Asked only in explained runs.
    fn explain_plan(&self, _v: &View, _plan: &DiskPlan) -> PolicyResult<Option<Reason>> {
        Ok(None)
    }
    /// `project_limit(p)` in bytes, for the report. Pure.
    fn project_limit(&self, _v: &View, _project: usize) -> PolicyResult<Option<f64>> {
        Ok(None)
    }
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
