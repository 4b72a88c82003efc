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
}

#[derive(Debug, Clone, Copy)]
struct EdfJob {
    deadline: f64,
    duration: f64,
    is_candidate: bool,
}

/// Finish times of an EDF schedule on `slots` instances, from time 0
/// (relative to now), in deadline order.
fn edf_finishes(jobs: &mut [EdfJob], slots: usize, finishes: &mut Vec<f64>) {
    jobs.sort_by(|a, b| {
        a.deadline
            .total_cmp(&b.deadline)
            .then(a.is_candidate.cmp(&b.is_candidate))
    });
    // The slot that frees first takes the next job (a heap: O(J log n)).
    let mut free: BinaryHeap<Reverse<Key>> = (0..slots.max(1)).map(|_| Reverse(Key(0.0))).collect();
    finishes.clear();
    for j in jobs.iter() {
        let mut first = free.peek_mut().expect("at least one slot");
        first.0 .0 += j.duration;
        finishes.push(first.0 .0);
    }
}

impl Ws2 {
    /// The EDF check of `cand` against the workload (relative times; the
    /// computation deadline is the deadline less the buffer minimum).
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
                is_candidate: false,
            });
        }
        for c in sent.iter().filter(|c| c.rsc == rsc) {
            self.jobs.push(EdfJob {
                deadline: rel(c.deadline),
                duration: c.est_seconds,
                is_candidate: false,
            });
        }
        let mut before_f = Vec::new();
        let mut before = self.jobs.clone();
        edf_finishes(&mut before, slots, &mut before_f);
        self.jobs.push(EdfJob {
            deadline: rel(cand.deadline),
            duration: cand.est_seconds,
            is_candidate: true,
        });
        let mut after_f = Vec::new();
        let mut after = self.jobs.clone();
        edf_finishes(&mut after, slots, &mut after_f);
        // Match jobs before and after by their position among the non-candidates.
        let mut bi = 0;
        for (ai, j) in after.iter().enumerate() {
            let f = after_f[ai];
            if j.is_candidate {
                if f > j.deadline {
                    return false;
                }
                continue;
            }
            let (bj, bf) = (before[bi], before_f[bi]);
            bi += 1;
            debug_assert_eq!(bj.deadline, j.deadline);
            let was_on_time = bf <= bj.deadline;
            if was_on_time && f > j.deadline {
                return false;
            }
            if !was_on_time && f > bf {
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
