//! CS1: the v4 document's `schedule_cpus` — weighted round-robin by debt.
//! Each call charges the work done since the last one to the debts, then
//! repeatedly gives an instance to the project with the largest anticipated
//! debt, preferring its running job, then a preempted one, then the new job
//! with the earliest deadline.

use vcsim_blocks::capacity::Capacity;
use vcsim_blocks::debt::V4Debt;
use vcsim_blocks::job_order::pick;
use vcsim_framework::{CpuScheduler, PolicyResult, RunList, RunMode, View};

#[derive(Default)]
pub struct Cs1 {
    debt: V4Debt,
    runnable: Vec<bool>,
    anticipated: Vec<f64>,
}

impl CpuScheduler for Cs1 {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        let np = v.projects().len();
        self.runnable.clear();
        self.runnable
            .extend((0..np).map(|p| v.project_has_runnable(p)));
        self.debt.update(v, &self.runnable);
        // The document's expected pay-off is the last period's work per CPU.
        // On the first call (no work yet) that is 0 and every CPU would go to
        // one project; like BOINC's 2007 client we then use one period.
        let ncpus = v.host().ncpus;
        let mut pay_off = self.debt.total_work_done / ncpus;
        if pay_off <= 0.0 {
            pay_off = v.prefs().sched_period;
        }
        self.anticipated.clear();
        self.anticipated.extend_from_slice(&self.debt.debt);
        let mut cap = Capacity::of_host(v);
        let jobs = v.jobs();
        loop {
            let mut best: Option<(usize, usize)> = None;
            for p in 0..np {
                if !self.runnable[p] {
                    continue;
                }
                if best.is_some_and(|(bp, _)| self.anticipated[p] <= self.anticipated[bp]) {
                    continue;
                }
                if let Some(k) = pick(v, p, |j| !out.contains(j.id) && cap.fits(j)) {
                    best = Some((p, k));
                }
            }
            let Some((p, k)) = best else { break };
            cap.take(&jobs[k]);
            out.push(jobs[k].id, RunMode::RoundRobin);
            self.anticipated[p] -= pay_off;
        }
        Ok(())
    }
}
