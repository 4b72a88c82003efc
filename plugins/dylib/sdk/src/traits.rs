//! The five families' traits, mirroring vcsim's own: implement one for a
//! `Default` type and export it with the family's macro.
//!
//! Reasons (ABI 2.3): a CPU scheduler gives them in its run list
//! ([`RunList::push_with_reason`]); a fetcher, a sender and a disk manager
//! through their `explain_*` methods, which the SDK calls right after the
//! decision they explain, with the same view, whenever vcsim offers room
//! for a reason (in a run that explains: `View::explaining`). Their
//! defaults give none, at no cost. Since ABI 2.4 a run list also has a
//! reason of its own, for the jobs it preempts
//! ([`RunList::set_list_reason`]), and a ranking of the projects
//! ([`RunList::set_ranking`]).

use crate::abi::{Candidate, Job};
use crate::decision::{DiskPlan, Reason, RpcReply, RunList, Verdict, WorkRequest};
use crate::error::PolicyResult;
use crate::strided::Strided;
use crate::view::{EstimateView, ServerRequest, View};

/// Which jobs run now (vcsim's `CpuScheduler`).
pub trait CpuScheduler: Send + 'static {
    /// Called when a job finishes, new jobs arrive, or a scheduling period
    /// has passed. `out` starts empty. A job's reason goes with it
    /// ([`RunList::push_with_reason`]).
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
    /// Why `request` (or `piggyback`) just returned `req`, with the same
    /// view (ABI 2.3; vcsim's `explain_request`). Called right after it,
    /// whenever vcsim offers room for a reason; an error fails that call.
    fn explain_request(&self, _v: &View, _req: &WorkRequest) -> PolicyResult<Option<Reason>> {
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
    /// Why `consider` just returned `verdict` for `cand` (ABI 2.3; vcsim's
    /// `explain_verdict`). Called right after it, whenever vcsim offers
    /// room for a reason; an error fails that call.
    fn explain_verdict(
        &self,
        _req: &ServerRequest,
        _sent: Strided<'_, Candidate>,
        _cand: &Candidate,
        _verdict: Verdict,
    ) -> PolicyResult<Option<Reason>> {
        Ok(None)
    }
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
    /// Why the plan `make_room` or `poll` just returned deletes what it
    /// does, with the same view (ABI 2.3; vcsim's `explain_plan`). Called
    /// right after it, whenever vcsim offers room for a reason; an error
    /// fails that call.
    fn explain_plan(&self, _v: &View, _plan: &DiskPlan) -> PolicyResult<Option<Reason>> {
        Ok(None)
    }
    /// `project`'s limit in bytes, for the report. Pure.
    fn project_limit(&self, _v: &View, _project: usize) -> PolicyResult<Option<f64>> {
        Ok(None)
    }
}
