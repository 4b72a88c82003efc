//! WF2: the paper's WF2, "the current work-fetch policy" of
//! `work-fetch-and-gpus` (BOINC 2007's `compute_work_requests`). A weighted
//! round-robin simulation gives the CPU shortfall over the work buffer; when
//! there is one, the project with the largest long-term debt (plus its own
//! shortfall) is asked for it; a project whose jobs are in deadline trouble,
//! or that is overworked (LTD below minus one scheduling period), is not.

use std::cell::RefCell;
use vcsim_blocks::debt::LongTermDebt;
use vcsim_blocks::rr_sim::{self, RrResult};
use vcsim_framework::{PolicyResult, RpcReply, View, WorkFetcher, WorkRequest, CPU};

/// Urgency levels of 2007's client (DONT_NEED, OK, NEED, NEED_IMMEDIATELY).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Urgency {
    DontNeed,
    Ok,
    Need,
    NeedImmediately,
}

pub struct Wf2 {
    pub ltd: LongTermDebt,
    rr: RefCell<RrResult>,
}

impl Default for Wf2 {
    fn default() -> Self {
        Wf2 {
            ltd: LongTermDebt::new(CPU),
            rr: RefCell::new(RrResult::default()),
        }
    }
}

/// What WF2 decided and why (for tests and the book's examples).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub urgency: Urgency,
    pub shortfall: f64,
    pub project: Option<usize>,
    pub seconds: f64,
}

impl Wf2 {
    pub fn overworked(&self, v: &View, p: usize) -> bool {
        self.ltd.get(p) < -v.prefs().sched_period
    }

    pub fn decide(&self, v: &View) -> PolicyResult<Decision> {
        let mut rr = self.rr.borrow_mut();
        let buffer = v.prefs().work_buf_total();
        rr_sim::simulate(v, CPU, buffer, &mut rr)?;
        let np = v.projects().len();
        let n = v.host().ncpus;
        let s = rr.shortfall;
        let any_misses = rr.any_misses();
        let q = (0..np).any(|p| {
            !self.overworked(v, p)
                && rr.projects[p].shortfall > 0.0
                && v.project(p).has_rsc_apps[CPU]
        });
        let nearly_runnable = v
            .jobs()
            .iter()
            .filter(|j| j.is_runnable() && j.gpu.is_none())
            .count();
        let urgency = if s <= 0.0 && (any_misses || !q) {
            Urgency::DontNeed
        } else if (nearly_runnable as f64) < n {
            Urgency::NeedImmediately
        } else if s > 0.0 {
            Urgency::Need
        } else {
            Urgency::Ok
        };
        let mut d = Decision {
            urgency,
            shortfall: s,
            project: None,
            seconds: 0.0,
        };
        if urgency == Urgency::DontNeed {
            return Ok(d);
        }
        let fetchable_share: f64 = (0..np)
            .filter(|&p| {
                v.contactable(p) && !self.overworked(v, p) && v.project(p).has_rsc_apps[CPU]
            })
            .map(|p| v.project(p).resource_share)
            .sum();
        let mut best: Option<usize> = None;
        for p in 0..np {
            let pr = &rr.projects[p];
            if !v.contactable(p) || !v.project(p).has_rsc_apps[CPU] {
                continue;
            }
            // A project whose max_concurrent caps let it use no more than its
            // jobs already fill has nothing to gain from more work (BOINC's
            // current client asks it for none): ask another.
            if pr.can_use.is_finite() && pr.shortfall <= 0.0 {
                continue;
            }
            if pr.misses as f64 >= n && urgency != Urgency::NeedImmediately {
                continue;
            }
            if (self.overworked(v, p) || pr.shortfall <= 0.0) && urgency < Urgency::Need {
                continue;
            }
            let p_urgency = if !pr.has_jobs {
                Urgency::NeedImmediately
            } else if pr.shortfall > 0.0 {
                Urgency::Need
            } else {
                Urgency::Ok
            };
            if urgency == Urgency::Ok && p_urgency <= Urgency::Ok {
                continue;
            }
            let replace = match best {
                None => true,
                Some(b) => {
                    let bp = &rr.projects[b];
                    let worse = (pr.misses > 0 && bp.misses == 0)
                        || (self.overworked(v, p) && !self.overworked(v, b))
                        || self.ltd.get(b) + bp.shortfall > self.ltd.get(p) + pr.shortfall;
                    !worse
                }
            };
            if replace {
                best = Some(p);
            }
        }
        if let Some(p) = best {
            let share_part = if fetchable_share > 0.0 {
                s * v.project(p).resource_share / fetchable_share
            } else {
                0.0
            };
            let pr = &rr.projects[p];
            // A capped project is asked only for what it can run (its MC shortfall).
            let share_part = if pr.can_use.is_finite() {
                0.0
            } else {
                share_part
            };
            let mut x = pr.shortfall.max(share_part).min(1.01 * buffer * n);
            if x <= 0.0 {
                x = 1.0;
            }
            d.project = Some(p);
            d.seconds = x;
        }
        Ok(d)
    }
}

impl WorkFetcher for Wf2 {
    fn account(&mut self, v: &View) -> PolicyResult<()> {
        self.ltd.update(v);
        Ok(())
    }

    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
        let d = self.decide(v)?;
        Ok(d.project
            .map(|p| WorkRequest::seconds(p, d.seconds, v.host().nrsc())))
    }

    fn piggyback(&self, v: &View, project: usize) -> PolicyResult<Option<WorkRequest>> {
        let d = self.decide(v)?;
        Ok((d.project == Some(project))
            .then(|| WorkRequest::seconds(project, d.seconds, v.host().nrsc())))
    }

    fn on_reply(&mut self, v: &View, reply: &RpcReply) -> PolicyResult<()> {
        // D(P, CPU): a project accrues debt once it has sent a CPU job, and
        // stops when a request for CPU work brings nothing.
        let np = v.projects().len();
        if reply.jobs[CPU] > 0 {
            self.ltd.set_accrues(np, reply.project, true);
        } else if reply.reached && reply.request.wants_work() {
            self.ltd.set_accrues(np, reply.project, false);
        }
        Ok(())
    }
}
