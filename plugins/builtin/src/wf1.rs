//! WF1: the paper's work fetch, as BOINC 2007's simulator runs it (its
//! `--work_fetch_old` rule). Each project keeps at least
//! `ncpus x (work_buf_min + work_buf_additional) x share_fraction` seconds
//! of estimated remaining CPU work on the host, and asks for the difference
//! whenever it has less: no hysteresis, no deadline or overworked test. Of
//! the projects that need work and may be contacted, the one with the
//! largest long-term debt plus round-robin shortfall is asked (2007 used
//! the shortfall of the last CPU scheduling's simulation; vcsim that of the
//! last accounting, which runs at every scheduling and before each RPC).
//! The debts are those charged up to the decision's time: 2007's
//! `compute_work_requests` runs `adjust_debts` before the old rule.
//!
//! The v4 document's rule (time to run out below the buffer minimum, then
//! fill) is `wf1-v4`.

use std::cell::RefCell;
use vcsim_blocks::debt::{CurrentDebt, LongTermDebt};
use vcsim_blocks::quiet;
use vcsim_blocks::rr_sim::{self, RrResult};
use vcsim_framework::explain::{clock, short_duration};
use vcsim_framework::{JobState, PolicyResult, Reason, Time, View, WorkFetcher, WorkRequest, CPU};

#[derive(Default)]
pub struct Wf1 {
    pub ltd: LongTermDebt,
    /// The debts as of the last decision's time.
    now_ltd: RefCell<CurrentDebt>,
    /// Each project's round-robin shortfall at the last accounting.
    shortfall: Vec<f64>,
    rr: RrResult,
    /// Scratch: queued work per project; remaining-time bounds.
    scratch: RefCell<(Vec<f64>, Vec<f64>, Vec<f64>)>,
}

/// What project `p` keeps queued: `ncpus x buffer x share_fraction` seconds.
pub fn target(v: &View, p: usize) -> f64 {
    v.host().ncpus * v.prefs().work_buf_total() * v.share_fraction(p)
}

/// The estimated remaining CPU-seconds of each project's unfinished CPU
/// jobs, from each job's remaining time `rem(i)`, in job order.
fn queued(
    v: &View,
    mut rem: impl FnMut(usize) -> PolicyResult<f64>,
    out: &mut Vec<f64>,
) -> PolicyResult<()> {
    out.clear();
    out.resize(v.projects().len(), 0.0);
    for (i, j) in v.jobs().iter().enumerate() {
        if j.state != JobState::Finished && j.gpu.is_none() {
            out[j.project] += rem(i)? * j.cpus;
        }
    }
    Ok(())
}

impl Wf1 {
    /// May `p` be asked at all: contactable, with CPU apps.
    fn askable(v: &View, p: usize) -> bool {
        v.contactable(p) && v.project(p).has_rsc_apps[CPU]
    }

    /// The project to ask and for how many seconds, if any needs work.
    pub fn decide(&self, v: &View) -> PolicyResult<Option<(usize, f64)>> {
        let mut g = self.scratch.borrow_mut();
        let d = &mut g.0;
        queued(v, |i| v.remaining_seconds(&v.jobs()[i]), d)?;
        let mut now_ltd = self.now_ltd.borrow_mut();
        let ltd = self.ltd.current(v, &mut now_ltd);
        let mut best: Option<(usize, f64)> = None;
        for p in 0..v.projects().len() {
            if !Wf1::askable(v, p) || d[p] >= target(v, p) {
                continue;
            }
            let score = ltd.get(p) + self.shortfall.get(p).copied().unwrap_or(0.0);
            // Ties go to the later project, as in 2007.
            if best.is_none_or(|(_, b)| score >= b) {
                best = Some((p, score));
            }
        }
        Ok(best.map(|(p, _)| (p, target(v, p) - d[p])))
    }
}

impl WorkFetcher for Wf1 {
    fn account(&mut self, v: &View) -> PolicyResult<()> {
        self.ltd.update(v);
        rr_sim::simulate(v, CPU, v.prefs().work_buf_total(), &mut self.rr)?;
        self.shortfall.clear();
        self.shortfall
            .extend(self.rr.projects.iter().map(|p| p.shortfall));
        Ok(())
    }

    /// No project needs work at any step to `t`: every project that may be
    /// asked keeps its target queued even with the least remaining times
    /// the stretch allows (a sum only falls when its terms do).
    fn quiet_until(&self, v: &View, limit: Time) -> PolicyResult<Option<Time>> {
        let np = v.projects().len();
        if (0..np).all(|p| !Wf1::askable(v, p)) {
            return Ok(Some(limit));
        }
        let mut g = self.scratch.borrow_mut();
        let (d, lo, hi) = &mut *g;
        quiet::longest(v, limit, |end| {
            if !quiet::remaining_bounds(v, end, lo, hi)? {
                return Ok(false);
            }
            queued(v, |i| Ok(lo[i]), d)?;
            Ok((0..np).all(|p| !Wf1::askable(v, p) || d[p] >= target(v, p)))
        })
    }

    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
        Ok(self
            .decide(v)?
            .map(|(p, secs)| WorkRequest::seconds(p, secs.max(1.0), v.host().nrsc())))
    }

    /// Asked when contacted anyway: the project's own difference, if any.
    fn piggyback(&self, v: &View, project: usize) -> PolicyResult<Option<WorkRequest>> {
        let mut g = self.scratch.borrow_mut();
        let d = &mut g.0;
        queued(v, |i| v.remaining_seconds(&v.jobs()[i]), d)?;
        let want = target(v, project) - d[project];
        Ok((want > 0.0 && v.project(project).has_rsc_apps[CPU])
            .then(|| WorkRequest::seconds(project, want.max(1.0), v.host().nrsc())))
    }

    /// The project's queued CPU work against its share of the buffer, why
    /// it and not the others (long-term debt plus shortfall, back-off,
    /// enough queued).
    fn explain_request(&self, v: &View, req: &WorkRequest) -> PolicyResult<Option<Reason>> {
        let chosen = self.decide(v)?.map(|x| x.0);
        let mut d = Vec::new();
        queued(v, |i| v.remaining_seconds(&v.jobs()[i]), &mut d)?;
        let name = |p: usize| v.project(p).name.as_str();
        let mut ltd = CurrentDebt::default();
        let ltd = self.ltd.current(v, &mut ltd);
        let score = |p: usize| ltd.get(p) + self.shortfall.get(p).copied().unwrap_or(0.0);
        let p = req.project;
        let mut parts = vec![format!(
            "{} has {} of CPU work queued, below its share of the buffer {}: asks for the difference",
            name(p),
            short_duration(d[p]),
            short_duration(target(v, p))
        )];
        if chosen == Some(p) {
            parts.push(format!(
                "the largest long-term debt plus shortfall {} among projects short of work",
                short_duration(score(p))
            ));
            for q in (0..v.projects().len()).filter(|&q| q != p) {
                parts.push(if !v.contactable(q) {
                    format!(
                        "{} backed off until {}",
                        name(q),
                        clock(v.project(q).rpc.min_rpc_time)
                    )
                } else if !v.project(q).has_rsc_apps[CPU] {
                    format!("{} has no app for the CPU", name(q))
                } else if d[q] >= target(v, q) {
                    format!(
                        "{} has enough queued ({} of {})",
                        name(q),
                        short_duration(d[q]),
                        short_duration(target(v, q))
                    )
                } else {
                    format!(
                        "{}: lower long-term debt plus shortfall {}",
                        name(q),
                        short_duration(score(q))
                    )
                });
            }
        } else {
            parts.push("contacted anyway (to report results)".into());
        }
        Ok(Some(
            Reason::new(crate::why::join(&parts))
                .with("project", name(p))
                .with("queued_s", d[p])
                .with("target_s", target(v, p))
                .with("ltd_s", ltd.get(p))
                .with("score_s", score(p))
                .with("req_seconds", req.work_req_seconds),
        ))
    }
}
