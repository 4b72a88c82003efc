//! The next step to visit: the earliest step at which something can happen.

use super::{SimError, Simulation, Stepping};
use crate::model::JobState;
use crate::policy::View;
use crate::registry::Family;

impl Simulation {
    /// The next step at which something can happen.
    pub(super) fn next_event_step(&mut self) -> Result<u64, SimError> {
        let k = self.k;
        if self.opts.stepping == Stepping::FixedStep {
            return Ok(k + 1);
        }
        let clock = self.clock;
        let mut n = clock.nsteps;
        if let Some(f) = self.host.next_flip() {
            n = n.min(f);
        }
        if !self.st.host_on {
            return Ok(n.max(k + 1));
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
            let due = self.report_due(j);
            if due > t {
                n = n.min(clock.step_at_or_after(due));
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
        n = n.max(k + 1);
        // The first step before `n` at which the fetcher wants work. Between
        // events the fetcher's answer only moves one way (queued work only
        // drains), so one look at the last step and a bisection find it.
        if n > k + 1 && !blocked {
            let want = |s: u64, sim: &Simulation| -> Result<bool, SimError> {
                let v = View::new(&sim.st, sim.pol.estimate.as_ref(), sim.time(s));
                sim.pol
                    .fetch
                    .request(&v)
                    .map(|r| r.is_some())
                    .map_err(|e| sim.policy_err(Family::Fetch, e))
            };
            if want(n - 1, self)? {
                let (mut lo, mut hi) = (k + 1, n - 1);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if want(mid, self)? {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                n = lo;
            }
        }
        Ok(n)
    }
}
