//! WF2: the paper's WF2, "the current work-fetch policy" of
//! `work-fetch-and-gpus` (BOINC 2007's `compute_work_requests`). A weighted
//! round-robin simulation gives the CPU shortfall over the work buffer; when
//! there is one, the project with the largest long-term debt (plus its own
//! shortfall) is asked for it; a project whose jobs are in deadline trouble,
//! or that is overworked (LTD below minus one scheduling period), is not.
//! As in 2007, the debts are brought up to the decision's time first
//! (`adjust_debts` opens `compute_work_requests`).

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use vcsim_blocks::debt::{CurrentDebt, LongTermDebt};
use vcsim_blocks::key::Key;
use vcsim_blocks::quiet;
use vcsim_blocks::rr_sim::{self, RrResult};
use vcsim_framework::explain::{clock, short_duration};
use vcsim_framework::{JobState, PolicyResult, Reason, Time, View, WorkFetcher, WorkRequest, CPU};

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
    /// The debts as of the last decision's time (see `current_ltd`).
    now_ltd: RefCell<CurrentDebt>,
    rr: RefCell<RrResult>,
    quiet: RefCell<QuietScratch>,
    /// In an explained run: the last request's decision and why each other
    /// project was passed over (`explain_request` reads it, with `rr`,
    /// rather than simulate again).
    explained: RefCell<Option<Noted>>,
}

impl Default for Wf2 {
    fn default() -> Self {
        Wf2 {
            ltd: LongTermDebt::default(),
            now_ltd: RefCell::new(CurrentDebt::default()),
            rr: RefCell::new(RrResult::default()),
            quiet: RefCell::new(Default::default()),
            explained: RefCell::new(None),
        }
    }
}

/// A decision noted for its explanation: the view's time, the decision,
/// and why each project was passed over.
type Noted = (f64, Decision, Vec<Option<Skip>>);

/// Scratch of `quiet_until`, kept between calls.
#[derive(Default)]
struct QuietScratch {
    /// The least and the greatest remaining times over the stretch.
    lo: Vec<f64>,
    hi: Vec<f64>,
    /// The bound simulation.
    bound: RrResult,
    /// The lanes of `busy_through`, the one that ends first on top.
    lanes: BinaryHeap<Reverse<Key>>,
    /// Per project, its certain misses.
    misses: Vec<u32>,
    /// The debts at the stretch's start and at a step of it.
    ltd_now: CurrentDebt,
    ltd_then: CurrentDebt,
}

impl Urgency {
    /// The level in words.
    pub fn word(self) -> &'static str {
        match self {
            Urgency::DontNeed => "don't need",
            Urgency::Ok => "ok",
            Urgency::Need => "need",
            Urgency::NeedImmediately => "need immediately",
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

/// Why `decide` passed a project over (for the reasons).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Skip {
    NotContactable,
    NoCpuApp,
    CapsFilled,
    HeldByCaps,
    Misses(u32),
    OverworkedOrNoShortfall,
    NotUrgent,
}

/// Overworked: a long-term debt below minus one scheduling period.
fn overworked(v: &View, ltd: f64) -> bool {
    ltd < -v.prefs().sched_period
}

impl Wf2 {
    /// The long-term debts charged up to the view's time, as BOINC's
    /// `compute_work_requests` has them when it decides (the accounting
    /// keeps them only at CPU schedulings and RPCs).
    pub fn current_ltd(&self, v: &View) -> std::cell::Ref<'_, CurrentDebt> {
        self.ltd.current(v, &mut self.now_ltd.borrow_mut());
        self.now_ltd.borrow()
    }

    pub fn decide(&self, v: &View) -> PolicyResult<Decision> {
        self.decide_noting(v, |_, _| {})
    }

    /// `decide`, noting in an explained run why each project was passed
    /// over, for `explain_request` (asked next, about this decision).
    fn decide_explained(&self, v: &View) -> PolicyResult<Decision> {
        if !v.explaining() {
            return self.decide(v);
        }
        let mut skips = vec![None; v.projects().len()];
        let d = self.decide_noting(v, |p, s| skips[p] = Some(s))?;
        *self.explained.borrow_mut() = Some((v.now(), d.clone(), skips));
        Ok(d)
    }

    /// `decide`, telling `note` why each project passed over was.
    fn decide_noting(&self, v: &View, mut note: impl FnMut(usize, Skip)) -> PolicyResult<Decision> {
        let mut rr = self.rr.borrow_mut();
        let buffer = v.prefs().work_buf_total();
        rr_sim::simulate(v, CPU, buffer, &mut rr)?;
        let ltd = self.current_ltd(v);
        let is_overworked = |p: usize| overworked(v, ltd.get(p));
        let np = v.projects().len();
        let n = v.host().ncpus;
        let s = rr.shortfall;
        let any_misses = rr.any_misses();
        let q = (0..np).any(|p| {
            !is_overworked(p) && rr.projects[p].shortfall > 0.0 && v.project(p).has_rsc_apps[CPU]
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
            .filter(|&p| v.contactable(p) && !is_overworked(p) && v.project(p).has_rsc_apps[CPU])
            .map(|p| v.project(p).resource_share)
            .sum();
        let mut best: Option<usize> = None;
        for p in 0..np {
            let pr = &rr.projects[p];
            if !v.contactable(p) {
                note(p, Skip::NotContactable);
                continue;
            }
            if !v.project(p).has_rsc_apps[CPU] {
                note(p, Skip::NoCpuApp);
                continue;
            }
            // A project whose max_concurrent caps let it use no more than its
            // jobs already fill has nothing to gain from more work (BOINC's
            // current client asks it for none): ask another.
            if pr.can_use.is_finite() && pr.shortfall <= 0.0 {
                note(p, Skip::CapsFilled);
                continue;
            }
            // Its jobs fill one of its caps beyond the buffer: more would
            // only wait (BOINC's `MAX_CONCURRENT` reason).
            if rr_sim::held_by_caps(&rr, p, v.now() + v.prefs().work_buf_total()) {
                note(p, Skip::HeldByCaps);
                continue;
            }
            if pr.misses as f64 >= n && urgency != Urgency::NeedImmediately {
                note(p, Skip::Misses(pr.misses));
                continue;
            }
            if (is_overworked(p) || pr.shortfall <= 0.0) && urgency < Urgency::Need {
                note(p, Skip::OverworkedOrNoShortfall);
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
                note(p, Skip::NotUrgent);
                continue;
            }
            let replace = match best {
                None => true,
                Some(b) => {
                    let bp = &rr.projects[b];
                    let worse = (pr.misses > 0 && bp.misses == 0)
                        || (is_overworked(p) && !is_overworked(b))
                        || ltd.get(b) + bp.shortfall > ltd.get(p) + pr.shortfall;
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

impl Wf2 {
    /// The stretch from now in which `decide` is certainly None, if there is
    /// one: see `quiet_until`.
    fn quiet(&self, v: &View, limit: Time) -> PolicyResult<Option<Time>> {
        let np = v.projects().len();
        // Nobody can be asked until an event (contactability changes only
        // at one: a back-off or a requested delay ending).
        if (0..np).all(|p| !v.contactable(p) || !v.project(p).has_rsc_apps[CPU]) {
            return Ok(Some(limit));
        }
        // Otherwise no project may be chosen, for one of two reasons that
        // hold throughout the stretch:
        // - urgency stays DONT_NEED: no instance idle within the horizon, and
        //   some job missing its deadline or no project that counts short
        //   of its share;
        // - every project that could be asked has at least as many misses
        //   as the host has CPUs, and urgency is not NEED_IMMEDIATELY (the
        //   nearly runnable jobs, which only an event changes, are enough).
        // The simulation with fresh rates and the least remaining times the
        // stretch allows bounds every simulation of the stretch
        // (`rr_sim::lower_bound`): jobs finish no later, and there is no
        // less idle time and no smaller project deficit. So its lack of idle
        // time and of deficits holds throughout, and so does a miss it shows
        // against the most time any step of the stretch allows.
        let buffer = v.prefs().work_buf_total();
        let margin = v.prefs().work_buf_min + v.prefs().sched_period;
        let ncpus = v.host().ncpus;
        let lone = self.lone_project(v);
        let nearly_runnable = v
            .jobs()
            .iter()
            .filter(|j| j.is_runnable() && j.gpu.is_none())
            .count();
        let askable = |p: usize| v.contactable(p) && v.project(p).has_rsc_apps[CPU];
        let mut g = self.quiet.borrow_mut();
        let QuietScratch {
            lo,
            hi,
            bound,
            lanes,
            misses,
            ltd_now,
            ltd_then,
        } = &mut *g;
        // Each step decides on the debts charged up to its time. Within the
        // stretch (no event: the usage rates, the runnable jobs and the
        // contactable projects stay) a charge is affine in time while the
        // same projects earn, and is dropped past two periods since the
        // last accounting, leaving the kept debts. So `p` is overworked at
        // every step if it is at the stretch's ends and at the last step
        // before the drop, each with the projects earning as at its start.
        self.ltd.current(v, ltd_now);
        let drop_after = self.ltd.drops_after(v);
        let mut overworked_through = |p: usize, end: Time| {
            if !overworked(v, ltd_now.get(p)) {
                return false;
            }
            let mut ends = [Some(end), None, None];
            if let Some(d) = drop_after.filter(|d| *d < end) {
                ends = [Some(d.max(v.now())), None, Some(end)];
            }
            for t in ends.into_iter().flatten() {
                let c = self.ltd.current(&v.at(t), ltd_then);
                let dropped = c.earning().iter().all(|e| !e);
                let same = dropped
                    || c.earning() == ltd_now.earning()
                    || ltd_now.earning().iter().all(|e| !e);
                if !same || !overworked(v, c.get(p)) {
                    return false;
                }
            }
            true
        };
        quiet::longest(v, limit, |end| {
            if !quiet::remaining_bounds(v, end, lo, hi)? {
                return Ok(false);
            }
            // (Where the lone project's lanes see idle time, so would the
            // bound: only the second reason is left to try.)
            let busy = match lone {
                Some(width) if busy_through(v, lo, width, buffer, lanes) => return Ok(true),
                // Nor can it miss a deadline if one lane finishes each job
                // in time (the paper's base case, whose slack is large).
                Some(_) if nearly_runnable as f64 >= ncpus && !may_miss(v, lo, margin) => {
                    return Ok(false)
                }
                Some(_) => false,
                None => true,
            };
            if !rr_sim::lower_bound(v, CPU, buffer, lo, bound) {
                return Ok(false);
            }
            // A job misses when it would take longer than this fraction of
            // the time to its computation deadline, which is the most at
            // the stretch's first step. The tolerance covers the rounding
            // of two sums of the same steps.
            misses.clear();
            misses.resize(np, 0);
            for j in &bound.jobs {
                let allowed = rr_sim::CPU_PESSIMISM_FACTOR * (j.deadline - margin - v.now());
                let took = j.finish - v.now();
                if took > allowed + 1e-3 + 1e-9 * allowed.abs() {
                    misses[j.project] += 1;
                }
            }
            if busy && bound.shortfall <= 0.0 {
                let none_short = (0..np).all(|p| {
                    bound.projects[p].deficit <= 0.0
                        || !v.project(p).has_rsc_apps[CPU]
                        || overworked_through(p, end)
                });
                if none_short || misses.iter().any(|m| *m > 0) {
                    return Ok(true);
                }
            }
            Ok(nearly_runnable as f64 >= ncpus
                && (0..np).all(|p| !askable(p) || misses[p] as f64 >= ncpus))
        })
    }
}

impl Wf2 {
    /// The width of the jobs of the one project that has CPU jobs, when it
    /// is the only project (BOINC's lone project, the paper's base case):
    /// then its jobs run at the full rate, one after another on each lane,
    /// and a lack of idle time is all DONT_NEED needs (no other project
    /// can be short of its share).
    fn lone_project(&self, v: &View) -> Option<f64> {
        if v.projects().len() != 1 || v.any_max_concurrent() {
            return None;
        }
        let mut cpu = v
            .jobs()
            .iter()
            .filter(|j| j.state != JobState::Finished && j.rsc() == CPU);
        let width = cpu.next()?.cpus;
        (width > 0.0 && cpu.all(|j| j.cpus == width)).then_some(width)
    }
}

/// Whether one of the lone project's jobs could miss its deadline in the
/// bound with remaining times `lo`: not if a single lane at the on fraction,
/// taking the jobs in list order, finishes each in time.
fn may_miss(v: &View, lo: &[f64], margin: f64) -> bool {
    let ocf = v.on_fraction();
    let mut took = 0.0;
    for (i, j) in v.jobs().iter().enumerate() {
        if j.state == JobState::Finished || j.rsc() != CPU {
            continue;
        }
        took += lo[i] / ocf;
        let allowed = rr_sim::CPU_PESSIMISM_FACTOR * (j.deadline - margin - v.now());
        if took * (1.0 + 1e-9) + 1e-3 >= allowed {
            return true;
        }
    }
    false
}

/// Whether the lone project's jobs, with remaining times `lo`, keep every
/// instance busy through the horizon: the simulation's list scheduling at
/// the on fraction, which `rr_sim::lower_bound` bounds as it does any (the
/// same jobs finish no later there), computed directly in a few lanes.
fn busy_through(
    v: &View,
    lo: &[f64],
    width: f64,
    horizon: f64,
    ends: &mut BinaryHeap<Reverse<Key>>,
) -> bool {
    let n = rr_sim::instances(v, CPU);
    let ocf = v.on_fraction();
    // Jobs become active in list order while the active ones hold less
    // than n, so the last may over-commit.
    let lanes = (n / width - 1e-9).ceil().max(1.0) as usize;
    ends.clear();
    for (i, j) in v.jobs().iter().enumerate() {
        if j.state == JobState::Finished || j.rsc() != CPU {
            continue;
        }
        let d = lo[i] / ocf;
        if ends.len() < lanes {
            ends.push(Reverse(Key(d)));
        } else if let Some(mut first) = ends.peek_mut() {
            // The lane that ends first takes the job (a heap: O(log n)).
            first.0 .0 += d;
        }
    }
    // An instance goes idle when the first lane runs dry, after every job
    // has started; too near the horizon to be sure of the rounding is no
    // certificate.
    let first_idle = if ends.len() < lanes {
        0.0
    } else {
        ends.peek().map_or(f64::INFINITY, |e| e.0 .0)
    };
    n > 0.0 && first_idle >= horizon * (1.0 + 1e-9) + 1e-6
}

impl WorkFetcher for Wf2 {
    fn account(&mut self, v: &View) -> PolicyResult<()> {
        self.ltd.update(v);
        Ok(())
    }

    fn quiet_until(&self, v: &View, limit: Time) -> PolicyResult<Option<Time>> {
        self.quiet(v, limit)
    }

    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
        let d = self.decide_explained(v)?;
        Ok(d.project
            .map(|p| WorkRequest::seconds(p, d.seconds, v.host().nrsc())))
    }

    fn piggyback(&self, v: &View, project: usize) -> PolicyResult<Option<WorkRequest>> {
        let d = self.decide_explained(v)?;
        Ok((d.project == Some(project))
            .then(|| WorkRequest::seconds(project, d.seconds, v.host().nrsc())))
    }

    /// The CPU shortfall of the round-robin simulation, the urgency, the
    /// project with the largest long-term debt plus shortfall, and why each
    /// other project was not asked.
    fn explain_request(&self, v: &View, req: &WorkRequest) -> PolicyResult<Option<Reason>> {
        let np = v.projects().len();
        // The request's own decision if it was noted (the round-robin
        // simulation in `rr` is still its own), else decided again.
        let noted = self.explained.borrow_mut().take().filter(|(t, d, _)| {
            *t == v.now() && d.project == Some(req.project) && d.seconds == req.work_req_seconds
        });
        let (d, skips) = match noted {
            Some((_, d, skips)) => (d, skips),
            None => {
                let mut skips: Vec<Option<Skip>> = vec![None; np];
                let d = self.decide_noting(v, |p, s| skips[p] = Some(s))?;
                (d, skips)
            }
        };
        let rr = self.rr.borrow();
        let ltd = self.current_ltd(v);
        let name = |p: usize| v.project(p).name.as_str();
        let score = |p: usize| ltd.get(p) + rr.projects[p].shortfall;
        let p = req.project;
        let mut parts = vec![format!(
            "CPU shortfall {} in the round-robin simulation (urgency: {})",
            short_duration(d.shortfall),
            d.urgency.word()
        )];
        if d.project == Some(p) {
            parts.push(format!(
                "{} has the largest long-term debt plus shortfall {} among contactable projects (LTD {}, its shortfall {})",
                name(p),
                short_duration(score(p)),
                short_duration(ltd.get(p)),
                short_duration(rr.projects[p].shortfall)
            ));
        }
        for q in (0..np).filter(|&q| q != p) {
            let pr = &rr.projects[q];
            let s = match skips[q] {
                Some(Skip::NotContactable) => format!(
                    "{} backed off until {}",
                    name(q),
                    clock(v.project(q).rpc.min_rpc_time)
                ),
                Some(Skip::NoCpuApp) => format!("{} has no app for the CPU", name(q)),
                Some(Skip::CapsFilled) | Some(Skip::HeldByCaps) => {
                    format!("{}: its jobs fill its max_concurrent caps", name(q))
                }
                Some(Skip::Misses(m)) => {
                    format!("{} has {m} deadline misses (in deadline trouble)", name(q))
                }
                Some(Skip::OverworkedOrNoShortfall) if overworked(v, ltd.get(q)) => format!(
                    "{} overworked (LTD {})",
                    name(q),
                    short_duration(ltd.get(q))
                ),
                Some(Skip::OverworkedOrNoShortfall) | Some(Skip::NotUrgent) => {
                    format!("{} has no shortfall of its own", name(q))
                }
                None if pr.misses > 0 => format!("{} has {} deadline misses", name(q), pr.misses),
                None if overworked(v, ltd.get(q)) => format!(
                    "{} overworked (LTD {})",
                    name(q),
                    short_duration(ltd.get(q))
                ),
                None => format!(
                    "{}: lower long-term debt plus shortfall {}",
                    name(q),
                    short_duration(score(q))
                ),
            };
            parts.push(s);
        }
        parts.push(format!(
            "asks for {} ({})",
            short_duration(req.work_req_seconds),
            if rr.projects[p].can_use.is_finite() {
                "its own max_concurrent shortfall"
            } else {
                "the larger of its shortfall and its share of the CPU shortfall"
            }
        ));
        Ok(Some(
            Reason::new(crate::why::join(&parts))
                .with("shortfall_s", d.shortfall)
                .with("urgency", d.urgency.word())
                .with("project", name(p))
                .with("ltd_s", ltd.get(p))
                .with("project_shortfall_s", rr.projects[p].shortfall)
                .with("req_seconds", req.work_req_seconds),
        ))
    }
}
