//! The server side.
//!
//! - WS1: send jobs whose estimated run times add up to the request (at
//!   least one when anything is asked for).
//! - WS2: the server-side EDF check: a candidate is sent only if an
//!   earliest-deadline-first simulation of the host's reported workload plus
//!   the candidate shows that it meets its deadline, that every job that
//!   met its deadline still does, and that no job that misses gets later.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use vcsim_blocks::key::Key;
use vcsim_blocks::server_fill::seconds_to_fill;
use vcsim_framework::{Candidate, PolicyResult, ReportedJob, ServerRequest, Verdict, WorkSender};

#[derive(Default)]
pub struct Ws1;

impl WorkSender for Ws1 {
    fn consider(
        &mut self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
    ) -> PolicyResult<Verdict> {
        if !req.request.asks_for(cand.rsc) {
            return Ok(Verdict::Skip);
        }
        Ok(if seconds_to_fill(req, sent, cand.rsc) > 0.0 {
            Verdict::Send
        } else {
            Verdict::Stop
        })
    }
}

#[derive(Default)]
pub struct Ws2 {
    jobs: Vec<EdfJob>,
    /// When each instance frees, in the EDF schedules without and with the
    /// candidate.
    without: BinaryHeap<Reverse<Key>>,
    with: BinaryHeap<Reverse<Key>>,
}

#[derive(Debug, Clone, Copy)]
struct EdfJob {
    deadline: f64,
    duration: f64,
}

/// Schedules `job` on the instance of `free` that frees first (EDF on
/// identical instances), and returns when it finishes.
fn edf_next(free: &mut BinaryHeap<Reverse<Key>>, job: &EdfJob) -> f64 {
    let mut first = free.peek_mut().expect("at least one instance");
    first.0 .0 += job.duration;
    first.0 .0
}

impl Ws2 {
    /// The EDF check of `cand` against the workload (relative times; the
    /// computation deadline is the deadline less the buffer minimum). The
    /// two schedules, without and with the candidate, are one until the
    /// candidate's place in deadline order (after the jobs of its deadline),
    /// so they are computed once that far: O(J log J) for J jobs.
    pub fn feasible(&mut self, req: &ServerRequest, sent: &[Candidate], cand: &Candidate) -> bool {
        let rsc = cand.rsc;
        let slots = req.host.ninstances(rsc).floor().max(1.0) as usize;
        let bmin = req.work_buf_min;
        let rel = |deadline: f64| deadline - bmin - req.now;
        self.jobs.clear();
        let same = |j: &&ReportedJob| j.rsc == rsc;
        for j in req.workload.iter().filter(same) {
            self.jobs.push(EdfJob {
                deadline: rel(j.deadline),
                duration: j.remaining_seconds,
            });
        }
        for c in sent.iter().filter(|c| c.rsc == rsc) {
            self.jobs.push(EdfJob {
                deadline: rel(c.deadline),
                duration: c.est_seconds,
            });
        }
        // (Stable: jobs of one deadline keep the order they were listed in.)
        self.jobs.sort_by(|a, b| a.deadline.total_cmp(&b.deadline));
        let cand = EdfJob {
            deadline: rel(cand.deadline),
            duration: cand.est_seconds,
        };
        let at = self
            .jobs
            .partition_point(|j| j.deadline.total_cmp(&cand.deadline).is_le());
        self.without.clear();
        self.without.extend((0..slots).map(|_| Reverse(Key(0.0))));
        for j in &self.jobs[..at] {
            edf_next(&mut self.without, j);
        }
        self.with.clone_from(&self.without);
        if edf_next(&mut self.with, &cand) > cand.deadline {
            return false;
        }
        for j in &self.jobs[at..] {
            let before = edf_next(&mut self.without, j);
            let after = edf_next(&mut self.with, j);
            let was_on_time = before <= j.deadline;
            if was_on_time && after > j.deadline {
                return false;
            }
            if !was_on_time && after > before {
                return false;
            }
        }
        true
    }
}

impl WorkSender for Ws2 {
    fn consider(
        &mut self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
    ) -> PolicyResult<Verdict> {
        if !req.request.asks_for(cand.rsc) {
            return Ok(Verdict::Skip);
        }
        if seconds_to_fill(req, sent, cand.rsc) <= 0.0 {
            return Ok(Verdict::Stop);
        }
        // BOINC's max_infeasible_count is 0: the first refusal ends the reply.
        Ok(if self.feasible(req, sent, cand) {
            Verdict::Send
        } else {
            Verdict::Stop
        })
    }
}
