//! The v4 document's order of a project's jobs (`schedule_cpus`): running,
//! then preempted, then the queued job with the earliest deadline. CS1 and
//! scripts (`cap.take_next(p)`) use it.

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
