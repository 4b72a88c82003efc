//! Where two explained runs part: the first decision that differs, and the
//! first consequence each figure of merit sees (a job on time in one run
//! and late in the other, an RPC one run makes and the other does not, a
//! project's share of the work drifting apart). `vcsim diverge` prints it.
//!
//! Two runs of one scenario and seed draw from the same named random
//! streams, so while their decisions agree their states do too; each run is
//! recorded whole and the records compared in order (the lockstep test in
//! `tests/diverge.rs` holds both at the divergence and compares states).

use crate::explain::{Explanation, Outcome, Record, Source};
use crate::model::Time;
use serde::Serialize;
use std::collections::BTreeMap;

/// The first place two runs' records differ.
#[derive(Debug, Clone, Serialize)]
pub struct Parting {
    /// Simulated time of the first differing decision.
    pub at: Time,
    /// Index of the first differing record in each run.
    pub index: usize,
    /// Each run's first record from there (None: the run has no more).
    pub a: Option<Record>,
    pub b: Option<Record>,
}

/// A job that was reported on time in one run and not in the other.
#[derive(Debug, Clone, Serialize)]
pub struct DeadlineConsequence {
    pub job: u64,
    pub project: usize,
    pub deadline_s: f64,
    /// Each run's report of the job (None: not reported by the end).
    pub a: Option<Record>,
    pub b: Option<Record>,
}

/// An RPC one run makes (at that time, to that project) and the other not.
#[derive(Debug, Clone, Serialize)]
pub struct RpcConsequence {
    pub at: Time,
    /// The run that made it: "a" or "b".
    pub made_by: &'static str,
    pub rpc: Record,
    /// How many RPCs each run (a, b) makes at that time to that project:
    /// the other may make some, fewer.
    pub rpcs_there: [usize; 2],
}

/// The first time a project's share of the work done differs by more than
/// the threshold.
#[derive(Debug, Clone, Serialize)]
pub struct ShareConsequence {
    pub at: Time,
    pub project: usize,
    pub share_a: f64,
    pub share_b: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Consequences {
    pub deadline: Option<DeadlineConsequence>,
    pub rpc: Option<RpcConsequence>,
    pub share: Option<ShareConsequence>,
}

impl Consequences {
    /// The time of the earliest consequence, if any.
    pub fn first_time(&self) -> Option<Time> {
        let d = self.deadline.as_ref().map(|d| {
            let t = |r: &Option<Record>| r.as_ref().map_or(f64::INFINITY, |r| r.time);
            t(&d.a).min(t(&d.b))
        });
        [
            d,
            self.rpc.as_ref().map(|r| r.at),
            self.share.as_ref().map(|s| s.at),
        ]
        .into_iter()
        .flatten()
        .reduce(f64::min)
    }
}

/// The first record where the runs' decisions differ (time, family and the
/// simulator's text; reasons may differ), or None if they never do.
pub fn first_parting(a: &Explanation, b: &Explanation) -> Option<Parting> {
    let (ra, rb) = (&a.records, &b.records);
    let n = ra.len().min(rb.len());
    let index = (0..n).find(|&i| !ra[i].same_decision(&rb[i])).or({
        if ra.len() != rb.len() {
            Some(n)
        } else {
            None
        }
    })?;
    let (x, y) = (ra.get(index).cloned(), rb.get(index).cloned());
    let at = match (&x, &y) {
        (Some(x), Some(y)) => x.time.min(y.time),
        (Some(x), None) => x.time,
        (None, Some(y)) => y.time,
        (None, None) => return None,
    };
    Some(Parting {
        at,
        index,
        a: x,
        b: y,
    })
}

fn is_report(r: &Record) -> bool {
    matches!(r.outcome, Outcome::OnTime | Outcome::Late | Outcome::Failed)
}

fn is_rpc(r: &Record) -> bool {
    r.source == Source::Policy(crate::family::Family::Fetch)
}

fn deadline_of(r: &Record) -> f64 {
    match r.reason.get("deadline_s") {
        Some(crate::explain::Datum::Number(x)) => *x,
        _ => f64::NAN,
    }
}

/// The first job (same project, id and deadline: the same job in both
/// runs) reported on time in one run and late or failed in the other; by
/// the earlier of its two reports. A job only one run received is no
/// consequence of this kind (the RPCs differ first).
fn deadline_consequence(
    a: &Explanation,
    b: &Explanation,
    from: usize,
) -> Option<DeadlineConsequence> {
    let reports = |e: &Explanation| -> Vec<Record> {
        e.records
            .iter()
            .skip(from)
            .filter(|r| is_report(r))
            .cloned()
            .collect()
    };
    let (ra, rb) = (reports(a), reports(b));
    let index = |rs: &[Record]| {
        let mut m: BTreeMap<(Option<usize>, Option<u64>), Vec<usize>> = BTreeMap::new();
        for (i, r) in rs.iter().enumerate() {
            m.entry((r.project, r.job)).or_default().push(i);
        }
        m
    };
    let (ia, ib) = (index(&ra), index(&rb));
    let find =
        |rs: &[Record], idx: &BTreeMap<(Option<usize>, Option<u64>), Vec<usize>>, r: &Record| {
            idx.get(&(r.project, r.job))?
                .iter()
                .map(|&i| &rs[i])
                .find(|x| deadline_of(x) == deadline_of(r))
                .cloned()
        };
    let mut best: Option<(f64, DeadlineConsequence)> = None;
    for (mine, other, idx, a_side) in [(&ra, &rb, &ib, true), (&rb, &ra, &ia, false)] {
        for r in mine.iter() {
            if best.as_ref().is_some_and(|(t, _)| r.time >= *t) {
                break;
            }
            let Some(o) = find(other, idx, r) else {
                continue;
            };
            if (r.outcome == Outcome::OnTime) != (o.outcome == Outcome::OnTime) {
                let o = Some(o);
                let c = DeadlineConsequence {
                    job: r.job.unwrap_or(0),
                    project: r.project.unwrap_or(0),
                    deadline_s: deadline_of(r),
                    a: if a_side { Some(r.clone()) } else { o.clone() },
                    b: if a_side { o.clone() } else { Some(r.clone()) },
                };
                best = Some((r.time, c));
                break;
            }
        }
    }
    best.map(|(_, c)| c)
}

/// The first RPC (by time and project) made by one run and not the other.
/// Two RPCs to one project in one step count as two: where one run makes
/// more than the other, the RPC named is one the other does not make (an
/// RPC with the same words in both is matched first), so that the other
/// run's own explanation never shows the RPC it is said not to make.
fn rpc_consequence(a: &Explanation, b: &Explanation, from: usize) -> Option<RpcConsequence> {
    let rpcs = |e: &Explanation| -> Vec<Record> {
        e.records
            .iter()
            .skip(from)
            .filter(|r| is_rpc(r))
            .cloned()
            .collect()
    };
    let (ra, rb) = (rpcs(a), rpcs(b));
    // The records are in time order: walk both a step at a time.
    let (mut i, mut j) = (0, 0);
    while i < ra.len() || j < rb.len() {
        let t = match (ra.get(i), rb.get(j)) {
            (Some(x), Some(y)) => x.time.min(y.time),
            (Some(x), None) => x.time,
            (None, Some(y)) => y.time,
            (None, None) => break,
        };
        let i_end = i + ra[i..].iter().take_while(|r| r.time == t).count();
        let j_end = j + rb[j..].iter().take_while(|r| r.time == t).count();
        if let Some(c) = unmatched_at(&ra[i..i_end], &rb[j..j_end]) {
            return Some(c);
        }
        (i, j) = (i_end, j_end);
    }
    None
}

/// Of the RPCs of both runs at one time, the first (by project, then the
/// run's order) that one run makes more often than the other; the same
/// words are matched first.
fn unmatched_at(ra: &[Record], rb: &[Record]) -> Option<RpcConsequence> {
    let mut projects: Vec<Option<usize>> = ra.iter().chain(rb).map(|r| r.project).collect();
    projects.sort();
    projects.dedup();
    for p in projects {
        let xs: Vec<&Record> = ra.iter().filter(|r| r.project == p).collect();
        let ys: Vec<&Record> = rb.iter().filter(|r| r.project == p).collect();
        if xs.len() == ys.len() {
            continue;
        }
        let rpcs_there = [xs.len(), ys.len()];
        let (more, fewer, made_by) = if xs.len() > ys.len() {
            (xs, ys, "a")
        } else {
            (ys, xs, "b")
        };
        // Each of the fewer run's RPCs takes one with its words, if any.
        let mut taken = vec![false; more.len()];
        let mut unpaired = 0;
        for f in &fewer {
            match (0..more.len()).find(|&k| !taken[k] && more[k].decision == f.decision) {
                Some(k) => taken[k] = true,
                None => unpaired += 1,
            }
        }
        // The rest pair in order; the first untaken beyond them is named.
        if let Some(r) = (0..more.len())
            .filter(|&k| !taken[k])
            .nth(unpaired)
            .map(|k| more[k])
        {
            return Some(RpcConsequence {
                at: r.time,
                made_by,
                rpc: r.clone(),
                rpcs_there,
            });
        }
    }
    None
}

/// Each project's fraction of the work done by time `t`: the recorded
/// points are where the rates of work change, so the work between two is
/// interpolated linearly (a step function gave one run's share at its last
/// schedule, an hour stale, against the other's at `t`).
fn shares_at(e: &Explanation, t: Time, min_work: f64) -> Option<Vec<f64>> {
    let i = e.work_done.partition_point(|(x, _)| *x <= t);
    let (t0, w0) = e.work_done.get(i.checked_sub(1)?)?;
    let w: Vec<f64> = match e.work_done.get(i) {
        Some((t1, w1)) if *t1 > *t0 => {
            let f = (t - t0) / (t1 - t0);
            w0.iter().zip(w1).map(|(a, b)| a + (b - a) * f).collect()
        }
        _ => w0.clone(),
    };
    let total: f64 = w.iter().sum();
    (total > 0.0 && total >= min_work).then(|| w.iter().map(|x| x / total).collect())
}

/// When a run's work done reaches `min_work` FLOPs in all (linear between
/// the points), if it does.
fn reaches(e: &Explanation, min_work: f64) -> Option<Time> {
    let total = |w: &Vec<f64>| w.iter().sum::<f64>();
    let i = e.work_done.iter().position(|(_, w)| total(w) >= min_work)?;
    let (t1, w1) = &e.work_done[i];
    let Some((t0, w0)) = i.checked_sub(1).map(|j| &e.work_done[j]) else {
        return Some(*t1);
    };
    let (a, b) = (total(w0), total(w1));
    Some(if b > a {
        let t = t0 + (t1 - t0) * (min_work - a) / (b - a);
        t.clamp(*t0, *t1)
    } else {
        *t1
    })
}

/// The first time from `from` at which some project's share of the work
/// done differs by more than `threshold` between the runs, once both have
/// done `min_work` FLOPs (before, a share swings with each job).
fn share_consequence(
    a: &Explanation,
    b: &Explanation,
    from: Time,
    threshold: f64,
    min_work: f64,
) -> Option<ShareConsequence> {
    let mut times: Vec<Time> = a
        .work_done
        .iter()
        .chain(&b.work_done)
        .map(|(t, _)| *t)
        .filter(|t| *t >= from)
        .collect();
    // And the time both runs have done `min_work`, which may fall between
    // points.
    if let (Some(x), Some(y)) = (reaches(a, min_work), reaches(b, min_work)) {
        times.push(x.max(y).max(from));
    }
    times.sort_by(f64::total_cmp);
    times.dedup();
    for t in times {
        let (Some(sa), Some(sb)) = (shares_at(a, t, min_work), shares_at(b, t, min_work)) else {
            continue;
        };
        // The project that drifted most (the first of equals).
        let mut worst: Option<usize> = None;
        for p in 0..sa.len().min(sb.len()) {
            if worst.is_none_or(|w| (sa[p] - sb[p]).abs() > (sa[w] - sb[w]).abs()) {
                worst = Some(p);
            }
        }
        if let Some(p) = worst {
            if (sa[p] - sb[p]).abs() > threshold {
                return Some(ShareConsequence {
                    at: t,
                    project: p,
                    share_a: sa[p],
                    share_b: sb[p],
                });
            }
        }
    }
    None
}

/// The first consequences of a parting; shares are compared once both runs
/// have done `min_work` FLOPs.
pub fn consequences(
    a: &Explanation,
    b: &Explanation,
    parting: &Parting,
    threshold: f64,
    min_work: f64,
) -> Consequences {
    Consequences {
        deadline: deadline_consequence(a, b, parting.index),
        rpc: rpc_consequence(a, b, parting.index),
        share: share_consequence(a, b, parting.at, threshold, min_work),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::Reason;
    use crate::family::Family;

    fn rec(time: f64, source: Source, decision: &str) -> Record {
        Record {
            time,
            source,
            decision: decision.into(),
            reason: Reason::default(),
            project: Some(0),
            job: None,
            outcome: Outcome::None,
        }
    }

    /// B makes two RPCs to project 0 at 3360 s, A one with the words of
    /// B's second: the consequence is B's first, which A does not make
    /// (it named B's second, the very RPC A's explanation shows).
    #[test]
    fn an_rpc_consequence_is_one_the_other_run_does_not_make() {
        let fetch = Source::Policy(Family::Fetch);
        let mut a = Explanation::default();
        let mut b = Explanation::default();
        a.records = vec![
            rec(3360.0, fetch, "RPC to A asking for 26.67 s of work"),
            rec(6720.0, fetch, "RPC to A asking for 10 s of work"),
        ];
        b.records = vec![
            rec(3360.0, fetch, "RPC to A asking for 80 s of work"),
            rec(3360.0, fetch, "RPC to A asking for 26.67 s of work"),
        ];
        let c = rpc_consequence(&a, &b, 0).expect("a consequence");
        assert_eq!((c.at, c.made_by, c.rpcs_there), (3360.0, "b", [1, 2]));
        assert_eq!(c.rpc.decision, "RPC to A asking for 80 s of work");
        // As many RPCs to the project at that time, whatever they ask: none
        // there; the next is A's alone.
        b.records.remove(1);
        let c = rpc_consequence(&a, &b, 0).expect("a consequence");
        assert_eq!((c.at, c.made_by), (6720.0, "a"));
        // Another project at the same time is one B makes and A does not.
        b.records
            .push(rec(6720.0, fetch, "RPC to A asking for 10 s of work"));
        let mut other = rec(6720.0, fetch, "RPC to B asking for 5 s of work");
        other.project = Some(1);
        b.records.push(other);
        let c = rpc_consequence(&a, &b, 0).expect("a consequence");
        assert_eq!((c.at, c.made_by, c.rpc.project), (6720.0, "b", Some(1)));
        b.records.pop();
        assert!(rpc_consequence(&a, &b, 0).is_none());
    }

    #[test]
    fn the_parting_is_the_first_differing_decision_whatever_the_reasons() {
        let cpu = Source::Policy(Family::Cpu);
        let mut a = Explanation::default();
        let mut b = Explanation::default();
        a.records = vec![
            rec(0.0, cpu, "start job 1 (A)"),
            rec(60.0, cpu, "start job 2 (A)"),
        ];
        b.records = vec![
            rec(0.0, cpu, "start job 1 (A)"),
            rec(60.0, cpu, "start job 3 (B)"),
        ];
        b.records[0].reason = Reason::new("another reason");
        let p = first_parting(&a, &b).expect("they part");
        assert_eq!((p.index, p.at), (1, 60.0));
        b.records[1] = rec(60.0, cpu, "start job 2 (A)");
        assert!(first_parting(&a, &b).is_none());
        b.records.pop();
        assert_eq!(first_parting(&a, &b).unwrap().index, 1);
    }

    #[test]
    fn a_share_drift_is_found_when_it_passes_the_threshold() {
        let mut a = Explanation::default();
        let mut b = Explanation::default();
        a.work_done = vec![(0.0, vec![1.0, 1.0]), (100.0, vec![3.0, 1.0])];
        b.work_done = vec![(0.0, vec![1.0, 1.0]), (200.0, vec![1.0, 3.0])];
        // At 100, B's work is half way to its next point: [1, 2], not its
        // last point's [1, 1] (a step function gave B's share an hour stale).
        let s = share_consequence(&a, &b, 0.0, 0.1, 0.0).expect("drift");
        assert_eq!(s.at, 100.0);
        assert_eq!((s.share_a, s.share_b), (0.75, 1.0 / 3.0));
        assert!(share_consequence(&a, &b, 0.0, 0.6, 0.0).is_none());
        // Not before both runs have done enough work to tell: A has done 4
        // at 100, B at 200.
        let s = share_consequence(&a, &b, 0.0, 0.1, 4.0).expect("drift");
        assert_eq!(s.at, 200.0);
        assert_eq!((s.share_a, s.share_b), (0.75, 0.25));
        // Between points: both have done 3 at 150 (A past its last point).
        let s = share_consequence(&a, &b, 0.0, 0.1, 3.0).expect("drift");
        assert_eq!(s.at, 100.0);
        b.work_done = vec![
            (0.0, vec![1.0, 1.0]),
            (100.0, vec![1.0, 2.0]),
            (300.0, vec![1.0, 4.0]),
        ];
        let s = share_consequence(&a, &b, 0.0, 0.1, 3.5).expect("drift");
        assert_eq!(s.at, 150.0);
        assert_eq!((s.share_a, s.share_b), (0.75, 1.0 / 3.5));
    }

    #[test]
    fn a_stretch_without_work_keeps_its_two_ends() {
        let mut e = Explanation::default();
        for (t, w) in [
            (0.0, 1.0),
            (10.0, 2.0),
            (20.0, 2.0),
            (30.0, 2.0),
            (40.0, 3.0),
        ] {
            e.work_done(t, vec![w]);
        }
        let times: Vec<f64> = e.work_done.iter().map(|(t, _)| *t).collect();
        assert_eq!(times, [0.0, 10.0, 30.0, 40.0]);
    }
}
