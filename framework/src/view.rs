//! The read-only view a policy gets of the client's state.
//!
//! A view may look at a time later than the state's last event (the
//! simulator projects running jobs forward to find the step at which work is
//! first needed); every time-dependent getter uses the view's time.

use crate::model::{ClientState, HostInfo, Job, JobState, Prefs, ProjectState, Rsc, Time};
use crate::policy::{CompletionEstimator, PolicyResult};

#[derive(Clone, Copy)]
pub struct View<'a> {
    at: Time,
    st: &'a ClientState,
    est: &'a dyn CompletionEstimator,
}

impl<'a> View<'a> {
    pub fn new(st: &'a ClientState, est: &'a dyn CompletionEstimator, at: Time) -> View<'a> {
        View { at, st, est }
    }
    /// The run's seed: policies that draw at random derive their draws from it.
    pub fn seed(&self) -> u64 {
        self.st.seed
    }
    /// Adds a line to the run's log (`vcsim run` prints it as a note),
    /// stamped with the simulated time. At most 10,000 lines a run.
    pub fn log(&self, policy: &str, msg: &str) {
        let mut log = self.st.policy_log.borrow_mut();
        if log.len() < 10_000 {
            log.push(format!(
                "{}: {policy}: {msg}",
                crate::sim::format_time(self.at)
            ));
        }
    }
    /// The current simulated time.
    pub fn now(&self) -> Time {
        self.at
    }
    pub fn state(&self) -> &'a ClientState {
        self.st
    }
    pub fn host(&self) -> &'a HostInfo {
        &self.st.host
    }
    pub fn prefs(&self) -> &'a Prefs {
        &self.st.prefs
    }
    pub fn projects(&self) -> &'a [ProjectState] {
        &self.st.projects
    }
    pub fn project(&self, p: usize) -> &'a ProjectState {
        &self.st.projects[p]
    }
    /// Jobs on the host in arrival order.
    pub fn jobs(&self) -> &'a [Job] {
        &self.st.jobs
    }
    pub fn job(&self, id: u64) -> Option<&'a Job> {
        self.st.job(id)
    }
    pub fn estimator(&self) -> &'a dyn CompletionEstimator {
        self.est
    }
    pub fn fraction_done(&self, j: &Job) -> f64 {
        j.fraction_done_at(self.at)
    }
    pub fn run_seconds(&self, j: &Job) -> f64 {
        j.run_seconds_at(self.at)
    }
    /// The estimator's remaining run time of `j`.
    pub fn remaining_seconds(&self, j: &Job) -> PolicyResult<f64> {
        if j.state == JobState::Finished {
            return Ok(0.0);
        }
        self.est.remaining_seconds(self, j)
    }
    /// The corrected static estimate: FLOPs estimate / speed x correction.
    pub fn static_estimate(&self, j: &Job) -> f64 {
        j.estimated_seconds() * self.est.correction(j.project)
    }
    /// Resource share of `p` as a fraction of all projects' shares.
    pub fn share_fraction(&self, p: usize) -> f64 {
        self.st.projects[p].resource_share / self.st.total_share()
    }
    pub fn project_has_runnable(&self, p: usize) -> bool {
        self.st
            .jobs
            .iter()
            .any(|j| j.project == p && j.is_runnable())
    }
    /// No back-off or requested delay keeps the client from contacting `p` now.
    pub fn contactable(&self, p: usize) -> bool {
        self.st.projects[p].rpc.contactable(self.at)
    }
    /// Instance-seconds of resource `r` that `p`'s jobs have used since the run began.
    pub fn usage_seconds(&self, p: usize, r: Rsc) -> f64 {
        let pr = &self.st.projects[p];
        let since = if self.st.host_on {
            (self.at - self.st.usage_mark).max(0.0)
        } else {
            0.0
        };
        pr.usage[r] + pr.running_instances[r] * since
    }
    /// Seconds the host has been available since the run began.
    pub fn available_seconds(&self) -> f64 {
        let extra = if self.st.host_on {
            (self.at - self.st.usage_mark).max(0.0)
        } else {
            0.0
        };
        self.st.on_seconds + extra
    }
    /// The fraction of time the client expects the host to compute: 1 unless
    /// the scenario lets it learn availability (`client.learn_availability`).
    pub fn on_fraction(&self) -> f64 {
        if self.st.prefs.learn_availability {
            self.st.observed_on_fraction.clamp(0.01, 1.0)
        } else {
            1.0
        }
    }
    /// Instances of `r` that no running job holds.
    pub fn idle_instances(&self, r: Rsc) -> f64 {
        let used: f64 = self
            .st
            .projects
            .iter()
            .map(|p| p.running_instances[r])
            .sum();
        (self.st.host.ninstances(r) - used).max(0.0)
    }
}
