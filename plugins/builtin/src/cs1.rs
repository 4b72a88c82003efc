//! CS1: the v4 document's `schedule_cpus` — weighted round-robin by debt.
//! Each call charges the work done since the last one to the debts, then
//! repeatedly gives an instance to the project with the largest anticipated
//! debt, preferring its running job, then a preempted one, then the new job
//! with the earliest deadline.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use vcsim_blocks::capacity::Capacity;
use vcsim_blocks::debt::V4Debt;
use vcsim_blocks::job_order::pick_among;
use vcsim_blocks::key::Key;
use vcsim_framework::{CpuScheduler, PolicyResult, RunList, RunMode, View};

#[derive(Default)]
pub struct Cs1 {
    debt: V4Debt,
    runnable: Vec<bool>,
    anticipated: Vec<f64>,
    /// Per project, its jobs (view indices, ascending).
    jobs_of: Vec<Vec<usize>>,
    /// The heap's storage, kept between calls.
    order: Vec<(Key, Reverse<usize>)>,
}

impl CpuScheduler for Cs1 {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        let np = v.projects().len();
        self.runnable.clear();
        self.runnable.resize(np, false);
        self.jobs_of
            .resize_with(np.max(self.jobs_of.len()), Vec::new);
        self.jobs_of.iter_mut().for_each(Vec::clear);
        for (k, j) in v.jobs().iter().enumerate() {
            self.runnable[j.project] |= j.is_runnable();
            self.jobs_of[j.project].push(k);
        }
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
        // The project with the largest anticipated debt (the first on
        // ties) that has a job that fits gets the next instance: a heap of
        // the candidates. Capacity only shrinks, so a project with no job
        // that fits is done.
        self.order.clear();
        self.order.extend(
            (0..np)
                .filter(|&p| self.runnable[p])
                .map(|p| (Key(self.anticipated[p]), Reverse(p))),
        );
        let mut heap = BinaryHeap::from(std::mem::take(&mut self.order));
        while let Some((_, Reverse(p))) = heap.pop() {
            let ks = self.jobs_of[p].iter().copied();
            let Some(k) = pick_among(v, ks, |j| !out.contains(j.id) && cap.fits(j)) else {
                continue;
            };
            cap.take(&jobs[k]);
            out.push(jobs[k].id, RunMode::RoundRobin);
            self.anticipated[p] -= pay_off;
            heap.push((Key(self.anticipated[p]), Reverse(p)));
        }
        self.order = heap.into_vec();
        Ok(())
    }
}
