//! The next step to visit: the earliest step at which something can happen.
//!
//! Why jumping to it gives the same run as visiting every step (the
//! argument is in ARCHITECTURE.md, "Exactness"): between two steps at which
//! the state changes, only the fetcher's answer can change (running jobs
//! progress, and the view it sees moves with them). The simulator asks the
//! fetcher at every such step, as a fixed-step run does, except over
//! stretches the fetcher certifies quiet (`WorkFetcher::quiet_until`).

use super::{SimError, Simulation, Stepping};
use crate::model::JobState;
use crate::policy::View;
use crate::registry::Family;
use crate::time::Time;

impl Simulation {
    /// The first step after `k` at which the state changes by itself (a
    /// host flip, a job finishing, a scheduling period ending, a back-off
    /// ending, a report falling due), or the end of the run; and whether
    /// the connection interval bars RPCs until then.
    fn state_event_step(&self, k: u64) -> (u64, bool) {
        let clock = self.clock;
        let mut n = clock.nsteps;
        if let Some(f) = self.host.next_flip() {
            n = n.min(f);
        }
        if !self.st.host_on {
            return (n.max(k + 1), true);
        }
        let t = self.time(k);
        for (i, j) in self.st.jobs.iter().enumerate() {
            if j.state == JobState::Running {
                n = n.min(self.done_step[i]);
            }
        }
        n = n.min(clock.step_at_or_after(self.st.last_schedule + self.st.prefs.sched_period));
        for pr in &self.st.projects {
            if pr.rpc.min_rpc_time > t {
                n = n.min(clock.step_at_or_after(pr.rpc.min_rpc_time));
            }
        }
        for j in self
            .st
            .jobs
            .iter()
            .filter(|j| j.state == JobState::Finished)
        {
            // Overdue strictly after `due`.
            let due = self.report_due(j);
            if due >= t {
                n = n.min(clock.step_after(due));
            }
        }
        let ci = self.st.connection_interval;
        let mut blocked = false;
        if let Some(l) = self.st.last_rpc {
            if ci > 0.0 && l + ci > t {
                n = n.min(clock.step_at_or_after(l + ci));
                blocked = true;
            }
        }
        (n.max(k + 1), blocked)
    }

    /// In the event-driven mode, how long from now the fetcher is sure to
    /// ask for nothing, within the stretch to the state's next event: the
    /// RPC loop asks this before `request`, and a certificate it gets also
    /// spares the scan of the steps it covers (`quiet_through`).
    pub(super) fn quiet_now(&mut self) -> Result<Option<Time>, SimError> {
        if self.opts.stepping == Stepping::FixedStep {
            return Ok(None);
        }
        let (n, _) = self.state_event_step(self.k);
        let v = View::new(&self.st, self.pol.estimate.as_ref(), self.st.now);
        let q = self
            .pol
            .fetch
            .quiet_until(&v, self.time(n - 1).max(self.st.now))
            .map_err(|e| self.policy_err(Family::Fetch, e))?;
        self.quiet_through = q;
        Ok(q)
    }

    /// The next step at which something can happen.
    pub(super) fn next_event_step(&mut self) -> Result<u64, SimError> {
        let k = self.k;
        let quiet = self.quiet_through.take();
        if self.opts.stepping == Stepping::FixedStep || std::mem::take(&mut self.rpcs_left) {
            return Ok(k + 1);
        }
        let (n, blocked) = self.state_event_step(k);
        if blocked {
            return Ok(n);
        }
        // The first step before `n` at which the fetcher wants work. A
        // fixed-step run asks `request` at every step; so does this one,
        // with the view projected to the step (the same view: nothing was
        // folded in between), except over stretches the fetcher certifies
        // quiet. Asked at steps the fixed-step run also asks at, its log
        // lines are the run's, but for the step found: the RPC loop asks
        // again there, and its lines are those.
        let clock = self.clock;
        let mut s = match quiet {
            Some(q) => clock.step_after(q).max(k + 1),
            None => k + 1,
        };
        while s < n {
            let t = self.time(s);
            let v = View::new(&self.st, self.pol.estimate.as_ref(), t);
            let quiet = self
                .pol
                .fetch
                .quiet_until(&v, self.time(n - 1))
                .map_err(|e| self.policy_err_at(Family::Fetch, e, t))?;
            if let Some(q) = quiet {
                // Certified: `request` answers None at every step to `q`.
                s = clock.step_after(q).max(s + 1);
                continue;
            }
            let v = v.live(&self.log);
            let mark = self.log.mark();
            let asks = self
                .pol
                .fetch
                .request(&v)
                .map_err(|e| self.policy_err_at(Family::Fetch, e, t))?;
            if asks.is_some() {
                self.log.rewind(mark);
                return Ok(s);
            }
            s += 1;
        }
        Ok(n)
    }
}
