//! The v4 document's order of a project's jobs (`schedule_cpus`): running,
//! then preempted, then the queued job with the earliest deadline. CS1 and
//! scripts (`cap.take_next(p)`) use it; [`V4Order`] lists it once for a
//! scheduler that picks many jobs.

use vcsim_framework::{Job, JobState, View};

/// Project p's next job in the v4 document's order: running, else
/// preempted, else the queued one with the earliest deadline (the first on
/// ties); among the jobs `ok` accepts (not chosen yet, fitting what is free).
/// Scripts reach it as `cap.take_next(p)`.
pub fn pick(v: &View, p: usize, ok: impl Fn(&Job) -> bool) -> Option<usize> {
    let jobs = v.jobs();
    pick_among(v, (0..jobs.len()).filter(|&k| jobs[k].project == p), ok)
}

/// [`pick`] among the jobs `ks` (view indices, ascending, all of one
/// project): for a scheduler that has listed each project's jobs once.
pub fn pick_among(
    v: &View,
    ks: impl Iterator<Item = usize> + Clone,
    ok: impl Fn(&Job) -> bool,
) -> Option<usize> {
    let jobs = v.jobs();
    let ok = |k: &usize| ok(&jobs[*k]);
    let first = |s: JobState| ks.clone().filter(ok).find(|&k| jobs[k].state == s);
    first(JobState::Running)
        .or_else(|| first(JobState::Preempted))
        .or_else(|| {
            ks.clone()
                .filter(|&k| jobs[k].state == JobState::Queued && ok(&k))
                .min_by(|&a, &b| jobs[a].deadline.total_cmp(&jobs[b].deadline))
        })
}

/// Every project's jobs in the v4 document's order, listed once per call,
/// for a scheduler that picks many (CS1): per project its running jobs, its
/// preempted ones (both in arrival order), then its queued ones by
/// deadline (arrival order on ties). The first job from a project's cursor
/// that `ok` accepts is [`pick_among`]'s answer, provided `ok` never turns
/// true again once false (a job chosen stays chosen; free capacity only
/// shrinks): then a job passed over is never looked at again, and all the
/// picks of a call cost one pass over the jobs, where [`pick_among`] walked
/// the project's jobs at every pick (a 256-CPU host picks 256 times).
#[derive(Debug, Clone, Default)]
pub struct V4Order {
    /// Per project, its jobs in the document's order (view indices).
    order: Vec<Vec<usize>>,
    /// Per project, the first job in `order` not yet passed over.
    next: Vec<usize>,
}

impl V4Order {
    /// Lists the view's jobs (finished ones are never picked).
    pub fn build(&mut self, v: &View) {
        let np = v.projects().len();
        let jobs = v.jobs();
        self.order.resize_with(np.max(self.order.len()), Vec::new);
        self.order.truncate(np);
        self.order.iter_mut().for_each(Vec::clear);
        self.next.clear();
        self.next.resize(np, 0);
        for s in [JobState::Running, JobState::Preempted, JobState::Queued] {
            for (k, j) in jobs.iter().enumerate() {
                if j.state == s {
                    self.order[j.project].push(k);
                }
            }
        }
        for list in &mut self.order {
            // The queued jobs are the tail; a stable sort keeps arrival
            // order on equal deadlines (`min_by`'s first on ties).
            let from = list.partition_point(|&k| jobs[k].state != JobState::Queued);
            list[from..].sort_by(|&a, &b| jobs[a].deadline.total_cmp(&jobs[b].deadline));
        }
    }

    /// Project p's next job that `ok` accepts, as [`pick_among`] would
    /// answer, taken: neither it nor the jobs `ok` refused are offered
    /// again in this call.
    pub fn pick(&mut self, v: &View, p: usize, ok: impl Fn(&Job) -> bool) -> Option<usize> {
        let jobs = v.jobs();
        let list = &self.order[p];
        let mut i = self.next[p];
        while i < list.len() && !ok(&jobs[list[i]]) {
            i += 1;
        }
        self.next[p] = (i + 1).min(list.len());
        list.get(i).copied()
    }
}
