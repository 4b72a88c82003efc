//! `wf1-v4`: the v4 document's work-fetch policy (`compute_work_request`).
//! (The paper's WF1 is BOINC 2007's rule: `wf1`.) For each project, the estimated time to starvation is
//! ETTPRC(P, min_results(P) - 1); work is needed when it falls below the
//! connection period T, and the request brings it up to 2T.
//!
//! vcsim maps the document's T onto the work-buffer preferences: work is
//! fetched when a project's time to starvation drops below
//! `work_buf_min` (the low-water mark, the document's T) and the request
//! fills it to `work_buf_min + work_buf_additional` (the high-water mark, the
//! document's 2T when the two are equal). Among projects that need work the
//! most urgent (least time to starvation) is asked first.

use vcsim_blocks::quiet;
use vcsim_framework::explain::{clock, short_duration};
use vcsim_framework::{JobState, PolicyResult, Reason, Time, View, WorkFetcher, WorkRequest};

/// The document's urgency levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Urgency {
    DontNeedWork,
    NeedWork,
    NeedWorkImmediately,
}

#[derive(Default)]
pub struct Wf1V4 {
    /// Scratch of `quiet_until`.
    quiet: std::cell::RefCell<(Vec<f64>, Vec<f64>, Starvation)>,
}

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
    let rem = counted_remaining(v)?;
    let mut s = Starvation::default();
    s.compute(v, |i| rem[i]);
    Ok(ettprc_of(v, &s.results, p, k))
}

/// Each job's remaining time if ETTPRC counts it, else 0 (by view index).
fn counted_remaining(v: &View) -> PolicyResult<Vec<f64>> {
    v.jobs()
        .iter()
        .map(|j| {
            if counts(j) {
                v.remaining_seconds(j)
            } else {
                Ok(0.0)
            }
        })
        .collect()
}

/// The jobs ETTPRC counts: unfinished CPU jobs.
fn counts(j: &vcsim_framework::Job) -> bool {
    j.state != JobState::Finished && j.gpu.is_none()
}

/// Every project's time to starvation, ETTPRC(P, min_results(P) - 1), in
/// one pass over the jobs (with scratch reused between calls).
#[derive(Default)]
struct Starvation {
    /// (project, deadline, CPU seconds left) of the counted jobs, by
    /// project, then decreasing deadline (stable: arrival order on ties).
    results: Vec<(usize, f64, f64)>,
    /// Per project, its time to starvation.
    times: Vec<f64>,
}

impl Starvation {
    fn compute(&mut self, v: &View, remaining: impl Fn(usize) -> f64) {
        self.results.clear();
        for (i, j) in v.jobs().iter().enumerate() {
            if counts(j) {
                // estimated_cpu_time: CPU seconds left.
                self.results
                    .push((j.project, j.deadline, remaining(i) * j.cpus));
            }
        }
        self.results
            .sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
        self.times.clear();
        self.times.extend(
            (0..v.projects().len()).map(|p| ettprc_of(v, &self.results, p, min_results(v, p) - 1)),
        );
    }
}

/// ETTPRC(P, k) from the sorted results: a binary search finds P's.
fn ettprc_of(v: &View, results: &[(usize, f64, f64)], p: usize, k: usize) -> f64 {
    let from = results.partition_point(|r| r.0 < p);
    let to = results.partition_point(|r| r.0 <= p);
    let rate = avg_proc_rate(v, p);
    results[from..to]
        .iter()
        .skip(k)
        .map(|(_, _, cpu)| cpu / rate)
        .sum()
}

impl Wf1V4 {
    /// Per project: (urgency, time to starvation, work request in CPU seconds).
    pub fn compute(v: &View) -> PolicyResult<Vec<(Urgency, f64, f64)>> {
        let low = v.prefs().work_buf_min;
        let high = v.prefs().work_buf_min + v.prefs().work_buf_additional;
        let rem = counted_remaining(v)?;
        let mut st = Starvation::default();
        st.compute(v, |i| rem[i]);
        let mut out = Vec::with_capacity(v.projects().len());
        for p in 0..v.projects().len() {
            if !v.project(p).has_rsc_apps[0] {
                out.push((Urgency::DontNeedWork, f64::INFINITY, 0.0));
                continue;
            }
            let s = st.times[p];
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

impl Wf1V4 {
    /// The stretch from now in which no project needs work for certain:
    /// every project that could be asked keeps a time to starvation of at
    /// least the low-water mark, bounded below by the estimator's least
    /// remaining times over the stretch (a sum only grows with its terms).
    fn quiet(&self, v: &View, limit: Time) -> PolicyResult<Option<Time>> {
        let low = v.prefs().work_buf_min;
        let np = v.projects().len();
        if (0..np).all(|p| !v.contactable(p) || !v.project(p).has_rsc_apps[0]) {
            return Ok(Some(limit));
        }
        let mut g = self.quiet.borrow_mut();
        let (lo, hi, st) = &mut *g;
        quiet::longest(v, limit, |end| {
            if !quiet::remaining_bounds(v, end, lo, hi)? {
                return Ok(false);
            }
            st.compute(v, |k| lo[k]);
            Ok((0..np).all(|p| {
                let s = st.times[p];
                !v.contactable(p) || !v.project(p).has_rsc_apps[0] || (s >= low && s > 0.0)
            }))
        })
    }
}

impl WorkFetcher for Wf1V4 {
    fn quiet_until(&self, v: &View, limit: Time) -> PolicyResult<Option<Time>> {
        self.quiet(v, limit)
    }

    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
        let per = Wf1V4::compute(v)?;
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
        let per = Wf1V4::compute(v)?;
        let (u, _, req) = per[project];
        Ok((u != Urgency::DontNeedWork && req > 0.0)
            .then(|| WorkRequest::seconds(project, req, v.host().nrsc())))
    }

    /// The project's time to starvation (ETTPRC) against the low-water
    /// mark, and why it and not the others.
    fn explain_request(&self, v: &View, req: &WorkRequest) -> PolicyResult<Option<Reason>> {
        let per = Wf1V4::compute(v)?;
        let low = v.prefs().work_buf_min;
        let high = low + v.prefs().work_buf_additional;
        let name = |p: usize| v.project(p).name.as_str();
        let p = req.project;
        let (u, s, _) = per[p];
        let mut parts = vec![format!(
            "{}'s time to starvation (ETTPRC) {} is below the low-water mark {}{}: fill to the high-water mark {}",
            name(p),
            short_duration(s),
            short_duration(low),
            if u == Urgency::NeedWorkImmediately {
                " (needs work immediately)"
            } else {
                ""
            },
            short_duration(high)
        )];
        if self.request(v)?.map(|r| r.project) != Some(p) {
            parts.push("contacted anyway (to report results)".into());
            return Ok(Some(
                Reason::new(crate::why::join(&parts))
                    .with("project", name(p))
                    .with("ettprc_s", s)
                    .with("req_seconds", req.work_req_seconds),
            ));
        }
        parts.push("the least time to starvation among contactable projects that need work".into());
        for (q, (uq, sq, rq)) in per.iter().enumerate() {
            if q == p {
                continue;
            }
            parts.push(if !v.project(q).has_rsc_apps[0] {
                format!("{} has no app for the CPU", name(q))
            } else if *uq == Urgency::DontNeedWork || *rq <= 0.0 {
                format!(
                    "{} does not need work (ETTPRC {})",
                    name(q),
                    short_duration(*sq)
                )
            } else if !v.contactable(q) {
                format!(
                    "{} backed off until {}",
                    name(q),
                    clock(v.project(q).rpc.min_rpc_time)
                )
            } else {
                format!("{}: later starvation ({})", name(q), short_duration(*sq))
            });
        }
        Ok(Some(
            Reason::new(crate::why::join(&parts))
                .with("project", name(p))
                .with("ettprc_s", s)
                .with("low_water_s", low)
                .with("high_water_s", high)
                .with("req_seconds", req.work_req_seconds),
        ))
    }
}
