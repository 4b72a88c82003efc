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
use vcsim_framework::explain::{clock, short_duration};
use vcsim_framework::{
    Candidate, PolicyResult, Reason, ReportedJob, ServerRequest, Verdict, WorkSender,
};

/// The reason of a verdict made before any deadline check: the request does
/// not ask for the resource, or is filled.
fn fill_reason(req: &ServerRequest, sent: &[Candidate], cand: &Candidate) -> Option<Reason> {
    let rsc = req.host.rsc_name(cand.rsc);
    if !req.request.asks_for(cand.rsc) {
        return Some(Reason::new(format!(
            "skipped: the request does not ask for {rsc}"
        )));
    }
    let left = seconds_to_fill(req, sent, cand.rsc);
    if left <= 0.0 {
        return Some(
            Reason::new(match sent.len() {
                1 => "request filled: the 1 job sent covers it".to_string(),
                n => format!("request filled: the {n} jobs sent cover it"),
            })
            .with("to_fill_s", left),
        );
    }
    None
}

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

    fn explain_verdict(
        &self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
        _verdict: Verdict,
    ) -> PolicyResult<Option<Reason>> {
        if let Some(r) = fill_reason(req, sent, cand) {
            return Ok(Some(r));
        }
        let left = seconds_to_fill(req, sent, cand.rsc);
        Ok(Some(
            Reason::new(format!(
                "sent: {} of the request still to fill",
                short_duration(left)
            ))
            .with("to_fill_s", left),
        ))
    }
}

#[derive(Default)]
pub struct Ws2 {
    jobs: Vec<EdfJob>,
    /// When each instance frees, in the EDF schedules without and with the
    /// candidate.
    without: BinaryHeap<Reverse<Key>>,
    with: BinaryHeap<Reverse<Key>>,
    /// The last check's outcome, for the reasons.
    last: Check,
}

/// What the last EDF check found (relative times).
#[derive(Debug, Clone, Copy, Default)]
struct Check {
    /// 0: feasible; 1: the candidate late; 2: a job on time made late;
    /// 3: a late job made later.
    outcome: u8,
    cand_finish: f64,
    /// The job that failed the check: its source, finish without and
    /// with the candidate, and computation deadline.
    src: usize,
    before: f64,
    after: f64,
    deadline: f64,
}

#[derive(Debug, Clone, Copy)]
struct EdfJob {
    deadline: f64,
    duration: f64,
    /// Index into the workload, or past it into `sent`.
    src: usize,
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
        if all_on_time(req, sent, cand) {
            // Without the schedules, the candidate's finish is unknown: the
            // reason (`explain_verdict`) computes it again.
            self.last = Check {
                cand_finish: f64::NAN,
                ..Check::default()
            };
            return true;
        }
        self.check(req, sent, cand)
    }

    /// The EDF check itself, without `all_on_time`'s shortcut (see
    /// `feasible`).
    pub fn check(&mut self, req: &ServerRequest, sent: &[Candidate], cand: &Candidate) -> bool {
        let rsc = cand.rsc;
        let slots = req.host.ninstances(rsc).floor().max(1.0) as usize;
        let bmin = req.work_buf_min;
        let rel = |deadline: f64| deadline - bmin - req.now;
        self.jobs.clear();
        let same = |j: &&ReportedJob| j.rsc == rsc;
        for (i, j) in req.workload.iter().enumerate().filter(|(_, j)| same(j)) {
            self.jobs.push(EdfJob {
                deadline: rel(j.deadline),
                duration: j.remaining_seconds,
                src: i,
            });
        }
        let nw = req.workload.len();
        for (i, c) in sent.iter().enumerate().filter(|(_, c)| c.rsc == rsc) {
            self.jobs.push(EdfJob {
                deadline: rel(c.deadline),
                duration: c.est_seconds,
                src: nw + i,
            });
        }
        // (Stable: jobs of one deadline keep the order they were listed in.)
        self.jobs.sort_by(|a, b| a.deadline.total_cmp(&b.deadline));
        let cand = EdfJob {
            deadline: rel(cand.deadline),
            duration: cand.est_seconds,
            src: usize::MAX,
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
        let finish = edf_next(&mut self.with, &cand);
        self.last = Check {
            cand_finish: finish,
            ..Check::default()
        };
        if finish > cand.deadline {
            self.last.outcome = 1;
            return false;
        }
        for j in &self.jobs[at..] {
            let before = edf_next(&mut self.without, j);
            let after = edf_next(&mut self.with, j);
            let was_on_time = before <= j.deadline;
            let outcome = if was_on_time && after > j.deadline {
                2
            } else if !was_on_time && after > before {
                3
            } else {
                continue;
            };
            self.last.outcome = outcome;
            self.last.src = j.src;
            self.last.before = before;
            self.last.after = after;
            self.last.deadline = j.deadline;
            return false;
        }
        true
    }
}

/// Whether every job of the workload, the jobs sent and the candidate
/// certainly meets its deadline in the EDF schedule with the candidate, in
/// linear time and without sorting: then the check passes. A job is placed
/// on the instance that frees first, which is free by the average booking
/// of the instances, so it finishes by `(W - d) / slots + d`, W the work
/// of all the jobs and d its own (a property test checks it:
/// plugins/builtin/tests/ws2_bound.rs). With every job on time, no job
/// turns late and none that was late gets later. A host of 256 CPUs asks
/// about a thousand times a day, with hundreds of jobs far from their
/// deadlines.
pub fn all_on_time(req: &ServerRequest, sent: &[Candidate], cand: &Candidate) -> bool {
    let rsc = cand.rsc;
    let slots = req.host.ninstances(rsc).floor().max(1.0);
    let rel = |deadline: f64| deadline - req.work_buf_min - req.now;
    let workload = req.workload.iter().filter(|j| j.rsc == rsc);
    let sent = sent.iter().filter(|c| c.rsc == rsc);
    let jobs = || {
        let w = workload
            .clone()
            .map(|j| (j.remaining_seconds, rel(j.deadline)));
        let s = sent.clone().map(|c| (c.est_seconds, rel(c.deadline)));
        w.chain(s)
            .chain(std::iter::once((cand.est_seconds, rel(cand.deadline))))
    };
    let mut total = 0.0;
    for (d, _) in jobs() {
        if !(d >= 0.0 && d.is_finite()) {
            return false;
        }
        total += d;
    }
    // (The margin is far above the rounding of the schedule's sums.)
    jobs().all(|(d, deadline)| {
        let finish = (total - d) / slots + d;
        finish + 1e-9 * total + 1e-3 <= deadline
    })
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

    /// The EDF check's result: the candidate's finish and deadline, or the
    /// job it would make (more) late.
    fn explain_verdict(
        &self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
        _verdict: Verdict,
    ) -> PolicyResult<Option<Reason>> {
        if let Some(r) = fill_reason(req, sent, cand) {
            return Ok(Some(r));
        }
        let mut c = self.last;
        if c.cand_finish.is_nan() {
            // `feasible` passed it without the schedules: compute them.
            let mut again = Ws2::default();
            again.check(req, sent, cand);
            c = again.last;
        }
        let bmin = req.work_buf_min;
        let abs = |t: f64| req.now + t;
        let finish = abs(c.cand_finish);
        let less = if bmin > 0.0 {
            format!(" less the buffer minimum {}", short_duration(bmin))
        } else {
            String::new()
        };
        let r = match c.outcome {
            0 => Reason::new(format!(
                "sent: EDF with the job finishes it at {}, before its deadline {}{less}, and delays no other job past its deadline",
                clock(finish),
                clock(cand.deadline)
            ))
            .with("finish_s", finish)
            .with("deadline_s", cand.deadline),
            1 => Reason::new(format!(
                "refused: EDF of the host's jobs with this one finishes it at {}, after its deadline {}{less} (BOINC's max_infeasible_count is 0: the reply ends)",
                clock(finish),
                clock(cand.deadline),
            ))
            .with("finish_s", finish)
            .with("deadline_s", cand.deadline)
            .with("check", "candidate late"),
            _ => {
                let nw = req.workload.len();
                let (project, what) = if c.src < nw {
                    let p = req.workload[c.src].project;
                    (p, "a job on the host")
                } else {
                    (req.project, "a job sent in this reply")
                };
                let pname = if project == req.project {
                    req.project_name.to_string()
                } else {
                    format!("project {project}")
                };
                let deadline = c.deadline + bmin + req.now;
                let text = if c.outcome == 2 {
                    format!(
                        "refused: {what} of {pname} would finish at {}, after its deadline {}{less} (at {} without this one)",
                        clock(abs(c.after)),
                        clock(deadline),
                        clock(abs(c.before))
                    )
                } else {
                    format!(
                        "refused: {what} of {pname} already late would finish later, at {} instead of {} (deadline {})",
                        clock(abs(c.after)),
                        clock(abs(c.before)),
                        clock(deadline)
                    )
                };
                Reason::new(text)
                    .with("finish_s", abs(c.after))
                    .with("finish_without_s", abs(c.before))
                    .with("deadline_s", deadline)
                    .with("job_project", project)
                    .with(
                        "check",
                        if c.outcome == 2 {
                            "other job made late"
                        } else {
                            "late job made later"
                        },
                    )
            }
        };
        Ok(Some(r))
    }
}
