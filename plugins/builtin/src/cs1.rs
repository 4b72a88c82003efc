//! CS1: the v4 document's `schedule_cpus` — weighted round-robin by debt.
//! Each call charges the work done since the last one to the debts, then
//! repeatedly gives an instance to the project with the largest anticipated
//! debt, preferring its running job, then a preempted one, then the new job
//! with the earliest deadline.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use vcsim_blocks::capacity::Capacity;
use vcsim_blocks::debt::V4Debt;
use vcsim_blocks::job_order::V4Order;
use vcsim_blocks::key::Key;
use vcsim_framework::explain::short_duration;
use vcsim_framework::{CpuScheduler, Job, PolicyResult, Ranking, Reason, RunList, RunMode, View};

#[derive(Default)]
pub struct Cs1 {
    debt: V4Debt,
    runnable: Vec<bool>,
    anticipated: Vec<f64>,
    /// Per project, its jobs in the document's order, listed once per call:
    /// a pick walks on from the last (a walk of all of them per pick was
    /// quadratic in the CPUs).
    v4_order: V4Order,
    /// The heap's storage, kept between calls.
    order: Vec<(Key, Reverse<usize>)>,
    /// The last call's picks, in order: (view index, its project's
    /// anticipated debt when picked). For the reasons only.
    picks: Vec<(usize, f64)>,
}

impl CpuScheduler for Cs1 {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        let np = v.projects().len();
        self.runnable.clear();
        self.runnable.resize(np, false);
        for j in v.jobs() {
            self.runnable[j.project] |= j.is_runnable();
        }
        self.v4_order.build(v);
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
        // that fits is done, and a job that does not fit never will in
        // this call (what `V4Order` needs).
        self.order.clear();
        self.order.extend(
            (0..np)
                .filter(|&p| self.runnable[p])
                .map(|p| (Key(self.anticipated[p]), Reverse(p))),
        );
        let mut heap = BinaryHeap::from(std::mem::take(&mut self.order));
        self.picks.clear();
        // Each job is offered once, so only jobs listed before the call
        // (none, from the simulator) need the run list searched.
        let listed_before = !out.is_empty();
        while let Some((_, Reverse(p))) = heap.pop() {
            let ok = |j: &Job| cap.fits(j) && !(listed_before && out.contains(j.id));
            let Some(k) = self.v4_order.pick(v, p, ok) else {
                continue;
            };
            cap.take(&jobs[k]);
            out.push(jobs[k].id, RunMode::RoundRobin);
            self.picks.push((k, self.anticipated[p]));
            self.anticipated[p] -= pay_off;
            heap.push((Key(self.anticipated[p]), Reverse(p)));
        }
        self.order = heap.into_vec();
        Ok(())
    }

    /// A job started: its project had the highest (anticipated) debt when
    /// an instance was given; one preempted: its project's debt was below
    /// those that got the instances, or no instance was left for it.
    fn explain(&self, v: &View, _out: &RunList, job: u64) -> PolicyResult<Option<Reason>> {
        let Some(k) = crate::why::index_of(v, job) else {
            return Ok(None);
        };
        let p = v.jobs()[k].project;
        let name = &v.project(p).name;
        let debt = self.debt.debt.get(p).copied().unwrap_or(0.0);
        if let Some(i) = self.picks.iter().position(|x| x.0 == k) {
            let anticipated = self.picks[i].1;
            let before = self.picks[..i]
                .iter()
                .filter(|x| v.jobs()[x.0].project == p)
                .count();
            let mut text = format!(
                "highest debt among projects with runnable jobs: {name}'s {}",
                short_duration(anticipated)
            );
            if before > 0 {
                text.push_str(&format!(
                    " (anticipated: its debt {} less the expected pay-off of the {before} instances it already got)",
                    short_duration(debt)
                ));
            }
            return Ok(Some(
                Reason::new(text)
                    .with("debt_s", anticipated)
                    .with("project_debt_s", debt)
                    .with("project", name.as_str())
                    .with("instances_before", before),
            ));
        }
        let anticipated = self.anticipated.get(p).copied().unwrap_or(debt);
        let lowest = self.picks.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
        let r = if !self.runnable.get(p).copied().unwrap_or(false) {
            Reason::new(format!("not chosen: {name} has no runnable job"))
        } else if lowest.is_finite() && anticipated < lowest {
            Reason::new(format!(
                "not chosen: {name}'s debt {} is below those chosen (lowest {})",
                short_duration(anticipated),
                short_duration(lowest)
            ))
            .with("lowest_chosen_debt_s", lowest)
        } else {
            Reason::new(format!(
                "not chosen: no instance left that fits it ({name}'s debt {})",
                short_duration(anticipated)
            ))
        };
        Ok(Some(
            r.with("debt_s", anticipated)
                .with("project_debt_s", debt)
                .with("project", name.as_str()),
        ))
    }

    fn ranking(&self, _v: &View) -> PolicyResult<Option<Ranking>> {
        Ok(Some(Ranking {
            name: "debt (s)".into(),
            values: self.debt.debt.clone(),
        }))
    }
}
