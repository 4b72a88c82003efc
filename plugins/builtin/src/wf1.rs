//! WF1: the v4 document's work-fetch policy (`compute_work_request`), the
//! paper's WF1. For each project, the estimated time to starvation is
//! ETTPRC(P, min_results(P) - 1); work is needed when it falls below the
//! connection period T, and the request brings it up to 2T.
//!
//! vcsim maps the document's T onto the work-buffer preferences: work is
//! fetched when a project's time to starvation drops below
//! `work_buf_min` (the low-water mark, the document's T) and the request
//! fills it to `work_buf_min + work_buf_additional` (the high-water mark, the
//! document's 2T when the two are equal). Among projects that need work the
//! most urgent (least time to starvation) is asked first.

use vcsim_framework::{JobState, PolicyResult, View, WorkFetcher, WorkRequest};

/// The document's urgency levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Urgency {
    DontNeedWork,
    NeedWork,
    NeedWorkImmediately,
}

#[derive(Default)]
pub struct Wf1;

/// `min_results(P) = ceil(ncpus * share(P) / total share)`.
pub fn min_results(v: &View, p: usize) -> usize {
    (v.host().ncpus * v.share_fraction(p)).ceil().max(1.0) as usize
}

/// `avg_proc_rate(P) = share(P) / total share * ncpus * active fraction`.
pub fn avg_proc_rate(v: &View, p: usize) -> f64 {
    v.share_fraction(p) * v.host().ncpus * v.on_fraction()
}

/// ETTPRC(P, k): the time until P's runnable CPU jobs fall to k, skipping the
/// k with the latest deadlines, at P's average processing rate.
pub fn ettprc(v: &View, p: usize, k: usize) -> PolicyResult<f64> {
    let mut results: Vec<(f64, f64)> = Vec::new();
    for j in v
        .jobs()
        .iter()
        .filter(|j| j.project == p && j.state != JobState::Finished && j.gpu.is_none())
    {
        // estimated_cpu_time: CPU seconds left.
        results.push((j.deadline, v.remaining_seconds(j)? * j.cpus));
    }
    // Decreasing deadline; stable on ties, so arrival order decides.
    results.sort_by(|a, b| b.0.total_cmp(&a.0));
    let rate = avg_proc_rate(v, p);
    Ok(results.iter().skip(k).map(|(_, cpu)| cpu / rate).sum())
}

impl Wf1 {
    /// Per project: (urgency, time to starvation, work request in CPU seconds).
    pub fn compute(v: &View) -> PolicyResult<Vec<(Urgency, f64, f64)>> {
        let low = v.prefs().work_buf_min;
        let high = v.prefs().work_buf_min + v.prefs().work_buf_additional;
        let mut out = Vec::with_capacity(v.projects().len());
        for p in 0..v.projects().len() {
            if !v.project(p).has_rsc_apps[0] {
                out.push((Urgency::DontNeedWork, f64::INFINITY, 0.0));
                continue;
            }
            let s = ettprc(v, p, min_results(v, p) - 1)?;
            let (u, req) = if s < low || s <= 0.0 {
                let u = if s <= 0.0 {
                    Urgency::NeedWorkImmediately
                } else {
                    Urgency::NeedWork
                };
                (u, ((high - s) * avg_proc_rate(v, p)).max(0.0))
            } else {
                (Urgency::DontNeedWork, 0.0)
            };
            out.push((u, s, req));
        }
        Ok(out)
    }
}

impl WorkFetcher for Wf1 {
    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
        let per = Wf1::compute(v)?;
        let mut best: Option<(usize, f64)> = None;
        for (p, (u, s, req)) in per.iter().enumerate() {
            if *u == Urgency::DontNeedWork || *req <= 0.0 || !v.contactable(p) {
                continue;
            }
            if best.is_none_or(|(_, bs)| *s < bs) {
                best = Some((p, *s));
            }
        }
        Ok(best.map(|(p, _)| WorkRequest::seconds(p, per[p].2.max(1.0), v.host().nrsc())))
    }

    fn piggyback(&self, v: &View, project: usize) -> PolicyResult<Option<WorkRequest>> {
        let per = Wf1::compute(v)?;
        let (u, _, req) = per[project];
        Ok((u != Urgency::DontNeedWork && req > 0.0)
            .then(|| WorkRequest::seconds(project, req, v.host().nrsc())))
    }
}
