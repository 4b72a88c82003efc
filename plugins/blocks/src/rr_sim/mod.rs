//! The weighted round-robin simulation of BOINC's 2007 client
//! (`rr_simulation` in `cpu_sched.C`): it projects when each queued job would
//! finish if every project got its resource share, flags the jobs that would
//! miss their deadlines, and measures the shortfall — the idle instance-time
//! expected within the work-buffer period. CS2, WF2 and the GPU fetcher share
//! it. It runs once per resource: a CPU job shares the CPUs, a GPU job the
//! instances of its GPU type.
//!
//! Today's hosts (where the 2007 client is silent, as BOINC's current
//! client does):
//! - the CPUs that running GPU jobs hold are not the CPU jobs': the CPU
//!   simulation has `ncpus` less those CPUs (at least 0), and a project's
//!   jobs become active while its active jobs hold less than that, so the
//!   last one may over-commit the CPUs as the scheduler would;
//! - app and project `max_concurrent` caps hold for active jobs, and a
//!   capped project wants at most the instances its caps let it use (its
//!   "MC shortfall"), so that work fetch asks other projects instead.

mod active;
#[cfg(test)]
mod reference;

use crate::key::Key;
use active::ActiveJobs;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use vcsim_framework::{JobState, PolicyResult, Rsc, View};

/// `CPU_PESSIMISM_FACTOR`: a job misses when it would finish after this
/// fraction of the time left before its computation deadline.
pub const CPU_PESSIMISM_FACTOR: f64 = 0.9;

#[derive(Debug, Clone, Default)]
pub struct SimJob {
    /// Index into `View::jobs()`.
    pub index: usize,
    pub project: usize,
    pub remaining: f64,
    /// Instances of the resource it holds.
    pub width: f64,
    pub deadline: f64,
    pub rate: f64,
    pub finish: f64,
    pub missed: bool,
}

#[derive(Debug, Clone, Default)]
pub struct ProjectResult {
    /// Jobs projected to miss their deadlines (BOINC's `rr_sim_misses`).
    pub misses: u32,
    /// Instance-seconds this project would leave idle of its share within the buffer.
    pub shortfall: f64,
    /// Has unfinished jobs for this resource.
    pub has_jobs: bool,
    /// Instances of this resource its max_concurrent caps let it use
    /// (infinite without caps).
    pub can_use: f64,
    /// The last time in the simulation at which its jobs filled one of its
    /// max_concurrent caps (BOINC's `last_mc_limit_reltime`, as a time;
    /// minus infinity if never). Past the horizon, its capped instances
    /// stay busy without more work: BOINC then asks it for none.
    pub at_cap_until: f64,
    /// In [`lower_bound`]: the instance-seconds by which
    /// its active jobs fall short of what it wants within the horizon, over
    /// the whole horizon (`shortfall` credits only the intervals that end
    /// with one of its own jobs, as BOINC 2007 does, so it is never more).
    /// It only shrinks when jobs take longer, which lets a fetcher bound it.
    pub deficit: f64,
}

/// The result of one round-robin simulation of one resource.
#[derive(Debug, Clone, Default)]
pub struct RrResult {
    pub rsc: Rsc,
    pub jobs: Vec<SimJob>,
    pub projects: Vec<ProjectResult>,
    /// Idle instance-seconds within [now, now + buffer].
    pub shortfall: f64,
    /// Instances no job would hold at the start.
    pub nidle: f64,
    /// When the first instance would go idle (infinite if never within the jobs).
    pub first_idle: f64,
    scratch: Scratch,
    /// The remaining times `simulate` asked the estimator for.
    remaining: Vec<f64>,
}

impl RrResult {
    pub fn missed(&self, view_index: usize) -> bool {
        self.jobs.iter().any(|j| j.index == view_index && j.missed)
    }
    pub fn any_misses(&self) -> bool {
        self.projects.iter().any(|p| p.misses > 0)
    }
}

/// Scratch space reused between simulations (see `run` for the scheme).
#[derive(Debug, Clone, Default)]
struct Scratch {
    /// Per simulated job: active now; its remaining time when it became
    /// active (or at the start).
    active: Vec<bool>,
    rem: Vec<f64>,
    /// Per project: the work each of its active jobs has done since the
    /// start, as of its stamp. All of a project's active jobs run at one
    /// rate, so an active job's remaining time is its `pact` key less this,
    /// and bringing a project up to date costs one addition.
    done: Vec<f64>,
    /// Per project: its active jobs (indices into `RrResult::jobs`), keyed
    /// by remaining time plus `done` when they became active, the least
    /// (then the earliest) first: the next to finish is on top.
    pact: Vec<ActiveJobs>,
    active_width: Vec<f64>,
    live: Vec<bool>,
    next_waiting: Vec<usize>,
    /// Per simulated job: the next job of its project (of its project's
    /// app, under caps; `nj` if none).
    next_same: Vec<usize>,
    share: Vec<f64>,
    /// Share times the boost of a project with fewer than N instances
    /// active, as of the project's last rate change.
    factor: Vec<f64>,
    /// Runs at the full rate (the on fraction) rather than factor / nrrs.
    full: Vec<bool>,
    /// When (real time if `full`, virtual time if not) `rem` was last brought up to date.
    stamp: Vec<f64>,
    /// Bumped at every change of a project's next finish, and of its rate,
    /// so that its older entries in the heaps are ignored.
    version: Vec<u32>,
    rate_version: Vec<u32>,
    /// BOINC's rule: projects whose active jobs fell since their rate was
    /// last set, which the next project to run out of jobs resets.
    lagging: Vec<usize>,
    /// With deficits: when each project's active width last changed.
    since: Vec<f64>,
    /// Active jobs per project and per (project, app), for the caps.
    active_jobs: Vec<u32>,
    active_app: Vec<Vec<u32>>,
    /// Under caps, per (project, app): the next job of the app's chain to
    /// look at (jobs before it are active or done).
    app_head: Vec<Vec<usize>>,
    /// Next finishes: (real time, job, version) of full-rate projects, and
    /// (virtual time, job, version) of the others.
    by_time: BinaryHeap<Reverse<(Key, usize, u32)>>,
    by_virtual: BinaryHeap<Reverse<(Key, usize, u32)>>,
    /// (factor, project, version) of the projects not at the full rate, the
    /// largest first: the next to reach it when the live shares fall.
    by_factor: BinaryHeap<(Key, usize, u32)>,
    /// `count_misses`'s scratch for the bounds.
    bound: Vec<f64>,
}

/// Instance-seconds of shortfall per second of the horizon's end and per
/// instance that rounding in the times of finishes can make (some 4,500
/// ulps of the end time: far above rounding, far below any real shortfall,
/// 3.5e-5 s at 100 days on 4 CPUs).
const TIME_NOISE: f64 = 1e-12;

/// `x` if it is more than rounding can make of sums of fractional CPUs, else
/// 0: so that a sum that is really 0 never counts, whatever the order of
/// its terms (which two runs of the simulation need not share).
fn above_noise(x: f64) -> f64 {
    if x > 1e-9 {
        x
    } else {
        0.0
    }
}

/// Instances of resource `rsc` that the CPU jobs may use: the CPUs less
/// those that running GPU jobs hold; a GPU's instances.
pub fn instances(v: &View, rsc: Rsc) -> f64 {
    let n = v.host().ninstances(rsc);
    // (A host without GPUs runs no GPU job: no pass over the queue.)
    if rsc != 0 || v.host().gpus.is_empty() {
        return n;
    }
    let gpu_cpus: f64 = v
        .jobs()
        .iter()
        .filter(|j| j.state == JobState::Running && j.gpu.is_some())
        .map(|j| j.cpus)
        .sum();
    (n - gpu_cpus).max(0.0)
}

/// Instances of `rsc` project `p` can use at once under its max_concurrent
/// caps (infinite if it has none), with its apps' widths.
fn can_use(v: &View, p: usize, rsc: Rsc) -> f64 {
    let pr = v.project(p);
    let width = |a: &vcsim_framework::model::AppInfo| {
        if rsc == 0 {
            a.cpus
        } else {
            a.gpu.map_or(0.0, |g| g.1)
        }
    };
    let apps = pr
        .apps
        .iter()
        .filter(|a| a.runs_on_host() && a.rsc() == rsc);
    let mut by_apps = 0.0;
    let mut widest: f64 = 0.0;
    for a in apps {
        widest = widest.max(width(a));
        by_apps += if a.max_concurrent > 0 {
            a.max_concurrent as f64 * width(a)
        } else {
            f64::INFINITY
        };
    }
    let by_project = if pr.max_concurrent > 0 {
        pr.max_concurrent as f64 * widest
    } else {
        f64::INFINITY
    };
    by_apps.min(by_project)
}

/// Whether project `p`, with these jobs active (in all and per app), has
/// reached one of its max_concurrent caps. A stretch at a cap always ends
/// with one of its jobs finishing, which is where the simulations look.
fn at_cap(v: &View, p: usize, active: u32, active_app: &[u32]) -> bool {
    let pr = v.project(p);
    (pr.max_concurrent > 0 && active >= pr.max_concurrent)
        || pr
            .apps
            .iter()
            .zip(active_app)
            .any(|(a, &n)| a.max_concurrent > 0 && n >= a.max_concurrent)
}

/// Whether a fetcher should leave project `p` out for this resource, as
/// BOINC's current client does (`MAX_CONCURRENT`): its jobs fill one of its
/// caps beyond the horizon, so more work would only wait.
pub fn held_by_caps(rr: &RrResult, p: usize, horizon_end: f64) -> bool {
    rr.projects[p].at_cap_until > horizon_end
}

/// The estimator's remaining time of each of the view's jobs of `rsc`
/// (0 for the others), into `rem`.
fn estimates(v: &View, rsc: Rsc, rem: &mut Vec<f64>) -> PolicyResult<()> {
    rem.clear();
    for j in v.jobs() {
        rem.push(if j.state == JobState::Finished || j.rsc() != rsc {
            0.0
        } else {
            v.remaining_seconds(j)?
        });
    }
    Ok(())
}

/// Runs the simulation for resource `rsc` over the horizon `buffer` seconds,
/// writing into `out` (its buffers are reused).
pub fn simulate(v: &View, rsc: Rsc, buffer: f64, out: &mut RrResult) -> PolicyResult<()> {
    let mut rem = std::mem::take(&mut out.remaining);
    estimates(v, rsc, &mut rem)?;
    run(v, rsc, buffer, &rem, Rates::Boinc, out);
    out.remaining = rem;
    Ok(())
}

/// Adds each project's deadline misses in [`simulate`] to `misses`
/// (`misses[p]`), which is all CS2 decides with. Where [`finish_bounds`]
/// proves that no job can miss, it does not simulate, and `out` keeps its
/// last simulation: a 256-CPU host reschedules after every RPC, and its
/// hundreds of jobs are rarely near their deadlines. An explained run
/// always simulates: its reasons quote the simulated finishes.
pub fn count_misses(
    v: &View,
    rsc: Rsc,
    buffer: f64,
    out: &mut RrResult,
    misses: &mut [u32],
) -> PolicyResult<()> {
    let mut rem = std::mem::take(&mut out.remaining);
    estimates(v, rsc, &mut rem)?;
    let none = !v.explaining() && no_misses(v, rsc, &rem, &mut out.scratch.bound);
    if !none {
        run(v, rsc, buffer, &rem, Rates::Boinc, out);
        for (m, pr) in misses.iter_mut().zip(&out.projects) {
            *m += pr.misses;
        }
    }
    out.remaining = rem;
    Ok(())
}

/// Whether [`finish_bounds`] proves that no job of `rsc` misses its
/// deadline in [`simulate`] (with a margin far above rounding).
fn no_misses(v: &View, rsc: Rsc, remaining: &[f64], scratch: &mut Vec<f64>) -> bool {
    let now = v.now();
    let (bmin, period) = (v.prefs().work_buf_min, v.prefs().sched_period);
    finish_bounds(v, rsc, remaining, scratch, |i, finish| {
        let cd = v.jobs()[i].deadline - bmin - period;
        let allowed = now + CPU_PESSIMISM_FACTOR * (cd - now);
        finish + 1e-9 * finish.abs() + 1e-3 <= allowed
    })
}

/// Upper bounds on when each job of `rsc` finishes in [`simulate`] with
/// these remaining times, in list order: `each(view index, bound)`, which
/// stops the walk by returning false. Returns whether every bound was
/// given; false too where they do not hold (see [`bounds_hold`]), or no
/// job can run (no instance, a host never on).
///
/// Why they hold: a job of project p never runs slower than
/// `ρ = ocf · share_p / total share` (a rate is `min(1, share · boost /
/// live shares) · ocf`, boost ≥ 1, and the live shares never exceed the
/// total), and p's active jobs are its earliest unfinished ones. While job
/// i waits, p has `m = ⌈N / width⌉` jobs active, all before i, so the
/// work before it falls at `m·ρ` at least; once active, i runs at `ρ` at
/// least. So i ends by `now + W_before / (m·ρ) + rem_i / ρ`. A property
/// test checks it: plugins/blocks/tests/rr_sim_bound.rs.
pub fn finish_bounds(
    v: &View,
    rsc: Rsc,
    remaining: &[f64],
    scratch: &mut Vec<f64>,
    mut each: impl FnMut(usize, f64) -> bool,
) -> bool {
    let n = instances(v, rsc);
    let ocf = v.on_fraction_of(rsc);
    if !(n > 0.0 && ocf > 0.0 && bounded(v, rsc, scratch)) {
        return false;
    }
    let trs: f64 = v.projects().iter().map(|p| p.resource_share).sum();
    let now = v.now();
    // Per project: the remaining work of its jobs listed so far.
    scratch.clear();
    scratch.resize(v.projects().len(), 0.0);
    for (i, j) in v.jobs().iter().enumerate() {
        if j.state == JobState::Finished || j.rsc() != rsc {
            continue;
        }
        let p = j.project;
        let rho = ocf * v.project(p).resource_share / trs;
        let m = (n / job_width(j, rsc)).ceil();
        let bound = now + scratch[p] / (m * rho) + remaining[i] / rho;
        if !each(i, bound) {
            return false;
        }
        scratch[p] += remaining[i];
    }
    true
}

/// The simulation with given remaining times (`remaining[i]` for the view's
/// job `i`) instead of the estimator's.
pub fn simulate_with(v: &View, rsc: Rsc, buffer: f64, remaining: &[f64], out: &mut RrResult) {
    run(v, rsc, buffer, remaining, Rates::Boinc, out)
}

/// Whether [`lower_bound`] bounds the simulation of `rsc` on this view: no
/// max_concurrent caps, one width for all the jobs of a project, and every
/// project with jobs holding a positive share.
pub fn bounds_hold(v: &View, rsc: Rsc) -> bool {
    bounded(v, rsc, &mut Vec::new())
}

/// [`bounds_hold`], with `widths` for scratch.
fn bounded(v: &View, rsc: Rsc, widths: &mut Vec<f64>) -> bool {
    if v.any_max_concurrent() {
        return false;
    }
    // 0: no job seen yet.
    widths.clear();
    widths.resize(v.projects().len(), 0.0);
    for j in v.jobs() {
        if j.state == JobState::Finished || j.rsc() != rsc {
            continue;
        }
        let w = job_width(j, rsc);
        let first = &mut widths[j.project];
        if v.project(j.project).resource_share <= 0.0 || w <= 0.0 || (*first != 0.0 && *first != w)
        {
            return false;
        }
        *first = w;
    }
    true
}

/// A simulation that bounds [`simulate`] from the side of less work: run
/// with remaining times no greater than the estimator's, and with every
/// rate recomputed at every event (BOINC's are recomputed only when a
/// project runs out of jobs, so they lag behind). Where [`bounds_hold`],
/// every job finishes no later than in the simulation it bounds, every
/// instance is held no more, so its `shortfall` is no less and each
/// project's `deficit` is no less than its `shortfall` there (a property
/// test checks it: plugins/blocks/tests/rr_sim_bound.rs). Why: a job's
/// fresh rate only grows as jobs finish (fewer live shares, fewer active
/// jobs of its project), so a run that is ahead stays ahead.
///
/// Returns false, and leaves `out` as it was, where the bound does not hold.
pub fn lower_bound(v: &View, rsc: Rsc, buffer: f64, remaining: &[f64], out: &mut RrResult) -> bool {
    if !bounded(v, rsc, &mut out.scratch.stamp) {
        return false;
    }
    run(v, rsc, buffer, remaining, Rates::Fresh, out);
    true
}

/// How the simulation's rates follow its events.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rates {
    /// BOINC 2007's: all rates when a project runs out of jobs, a project's
    /// own when one of its jobs becomes active.
    Boinc,
    /// All of them at every event, and the projects' deficits kept.
    Fresh,
}

fn job_width(j: &vcsim_framework::Job, rsc: Rsc) -> f64 {
    if rsc == 0 {
        j.cpus
    } else {
        j.gpu.map_or(1.0, |g| g.1)
    }
}

/// The simulation. BOINC's loop (`rr_simulation`) moves every active job
/// at every event and resets every rate when a project runs out of jobs,
/// which costs jobs x projects per run; this one gives the same answers in
/// time that grows as jobs x log(projects):
/// - all active jobs of a project run at one rate, so a project keeps the
///   work each has done since the start (`done`, brought up to date only at
///   its own events and when its rate changes, `stamp`) and its active jobs
///   keyed by remaining time plus `done` at activation (`ActiveJobs`: a
///   sorted run, as keys mostly arrive in order, and a heap): its next job
///   to finish is in front, and an event costs O(1), O(log J) for a key out
///   of order, however many jobs are active (a 256-CPU host has hundreds);
/// - a project's rate is `min(1, factor / nrrs) x ocf`. Below the full rate
///   it is proportional to 1 / nrrs, so on a virtual clock that runs at
///   `ocf / nrrs` it is the constant `factor`: a project running out of
///   jobs (nrrs falls) changes no finish on that clock. Those at the full
///   rate are kept on the real clock; as nrrs falls, the projects with the
///   largest factors reach the full rate and move over (`by_factor`).
fn run(v: &View, rsc: Rsc, buffer: f64, remaining: &[f64], rates: Rates, out: &mut RrResult) {
    let now = v.now();
    let n = instances(v, rsc);
    let np = v.projects().len();
    let ocf = v.on_fraction_of(rsc);
    let trs: f64 = v.projects().iter().map(|p| p.resource_share).sum();
    let bmin = v.prefs().work_buf_min;
    let period = v.prefs().sched_period;
    let end = now + buffer;
    let jobs = v.jobs();
    let deficits = rates == Rates::Fresh;

    out.rsc = rsc;
    out.jobs.clear();
    out.projects.clear();
    out.projects.resize(np, ProjectResult::default());
    out.shortfall = 0.0;
    out.first_idle = f64::INFINITY;
    for (i, j) in jobs.iter().enumerate() {
        if j.state == JobState::Finished || j.rsc() != rsc {
            continue;
        }
        out.jobs.push(SimJob {
            index: i,
            project: j.project,
            remaining: remaining[i],
            width: job_width(j, rsc),
            deadline: j.deadline,
            rate: 0.0,
            finish: f64::INFINITY,
            missed: false,
        });
        out.projects[j.project].has_jobs = true;
    }
    // A project wants its share of the instances, or what its caps let it
    // use if that is less; with no jobs it lacks the whole of it.
    let capped = v.any_max_concurrent();
    let want = |p: usize, can_use: f64| (n * v.project(p).resource_share / trs).min(can_use);
    for (p, pr) in out.projects.iter_mut().enumerate() {
        pr.at_cap_until = f64::NEG_INFINITY;
        pr.can_use = if capped {
            can_use(v, p, rsc)
        } else {
            f64::INFINITY
        };
        if !pr.has_jobs {
            // (Written as BOINC 2007 computes it when uncapped, to the bit.)
            pr.shortfall = if pr.can_use.is_finite() {
                buffer * ocf * want(p, pr.can_use)
            } else {
                buffer * ocf * n * v.project(p).resource_share / trs
            };
        }
    }
    let RrResult {
        jobs: sim,
        projects: res,
        scratch: sc,
        ..
    } = out;
    let nj = sim.len();
    sc.reset(np, nj, v, capped);
    sc.live.extend(res.iter().map(|p| p.has_jobs));
    sc.rem.extend(sim.iter().map(|j| j.remaining));
    // The chains of each project's jobs (of each project's app, under
    // caps), built from the end (`next_waiting` and `app_head` hold the
    // latest seen so far).
    sc.next_same.resize(nj, nj);
    for k in (0..nj).rev() {
        let p = sim[k].project;
        if capped {
            let a = jobs[sim[k].index].app;
            sc.next_same[k] = sc.app_head[p][a];
            sc.app_head[p][a] = k;
        } else {
            sc.next_same[k] = sc.next_waiting[p];
            sc.next_waiting[p] = k;
        }
    }
    sc.next_waiting.iter_mut().for_each(|w| *w = nj);
    // Whether the caps let the job at view index `i` become active.
    let cap_ok = |sc: &Scratch, i: usize| -> bool {
        if !capped {
            return true;
        }
        let j = &jobs[i];
        let pr = v.project(j.project);
        let app_cap = pr.apps[j.app].max_concurrent;
        (pr.max_concurrent == 0 || sc.active_jobs[j.project] < pr.max_concurrent)
            && (app_cap == 0 || sc.active_app[j.project][j.app] < app_cap)
    };
    let count = |sc: &mut Scratch, i: usize, d: i32| {
        if capped {
            let j = &jobs[i];
            sc.active_jobs[j.project] = (sc.active_jobs[j.project] as i32 + d) as u32;
            let a = &mut sc.active_app[j.project][j.app];
            *a = (*a as i32 + d) as u32;
        }
    };
    // Active jobs: each project's first jobs up to N instances (that its
    // caps allow), in list order; the others wait, FIFO (`next_waiting[p]`
    // is the next index to look at).
    let mut busy = 0.0;
    for (k, j) in sim.iter().enumerate() {
        if sc.active_width[j.project] < n && cap_ok(sc, j.index) {
            sc.active[k] = true;
            sc.pact[j.project].push((Key(sc.rem[k]), k));
            sc.active_width[j.project] += j.width;
            busy += j.width;
            count(sc, j.index, 1);
        } else if !capped && sc.next_waiting[j.project] == nj {
            sc.next_waiting[j.project] = k;
        }
    }
    let mut clock = Clock {
        t: now,
        u: 0.0,
        nrrs: 0.0,
        positive: 0,
        n,
        ocf,
    };
    for p in 0..np {
        if sc.live[p] {
            clock.nrrs += sc.share[p];
            clock.positive += usize::from(sc.share[p] > 0.0);
        }
    }
    for p in 0..np {
        if sc.live[p] {
            sc.set_rate(p, &clock);
        }
    }
    let nidle = (n - busy).max(0.0);
    let mut shortfall = 0.0;
    let mut first_idle = f64::INFINITY;
    while let Some((at, kb, virtual_at)) = sc.next_finish(sim, &clock) {
        let p = sim[kb].project;
        let prior_active = sc.active_width[p];
        let t = clock.t;
        let tn = at.max(t);
        if t < end {
            let d = (tn - t).min(end - t);
            let idle = above_noise(n - busy);
            if idle > 0.0 && first_idle.is_infinite() {
                first_idle = t;
            }
            shortfall += d * idle;
            let lack = above_noise(want(p, res[p].can_use) - prior_active);
            if lack > 0.0 {
                res[p].shortfall += d * lack;
            }
        }
        clock.advance(tn, virtual_at);
        let t = tn;
        sc.catch_up(p, &clock);
        let rate = sc.rate(p, &clock);
        {
            let j = &mut sim[kb];
            j.rate = rate;
            j.finish = t;
            j.remaining = 0.0;
            // BOINC's computation deadline: the report deadline less the
            // buffer minimum and one scheduling period.
            let cd = j.deadline - bmin - period;
            if t > now + CPU_PESSIMISM_FACTOR * (cd - now) {
                j.missed = true;
                res[p].misses += 1;
            }
        }
        if deficits {
            let want_p = want(p, res[p].can_use);
            sc.close_deficit(p, &mut res[p], t, end, want_p);
        }
        sc.rem[kb] = 0.0;
        sc.active[kb] = false;
        // It is p's next to finish (the finish came off p's latest
        // `push_next`): taken from the front.
        sc.pact[p].remove(kb);
        sc.active_width[p] -= sim[kb].width;
        busy -= sim[kb].width;
        if capped && at_cap(v, p, sc.active_jobs[p], &sc.active_app[p]) {
            res[p].at_cap_until = t;
        }
        count(sc, sim[kb].index, -1);
        // The project's next waiting job (that its caps allow) becomes
        // active, at its project's rate. Without caps it is the first
        // waiting one; under caps, the first among the heads of the chains
        // of the apps whose caps allow one more. A job never waits again
        // once active, so every head only moves forward: linear in all.
        let w = if capped {
            let mut best = nj;
            let pr = v.project(p);
            let room = pr.max_concurrent == 0 || sc.active_jobs[p] < pr.max_concurrent;
            for a in 0..sc.app_head[p].len() {
                let mut h = sc.app_head[p][a];
                while h < nj && (sc.active[h] || sim[h].finish.is_finite()) {
                    h = sc.next_same[h];
                }
                sc.app_head[p][a] = h;
                if room && h < best && cap_ok(sc, sim[h].index) {
                    best = h;
                }
            }
            best
        } else {
            sc.next_waiting[p]
        };
        let activated = w < nj;
        if activated {
            sc.active[w] = true;
            let key = sc.rem[w] + sc.done[p];
            sc.pact[p].push((Key(key), w));
            sc.active_width[p] += sim[w].width;
            busy += sim[w].width;
            count(sc, sim[w].index, 1);
            if !capped {
                sc.next_waiting[p] = sc.next_same[w];
            }
        }
        if sc.active_width[p] <= 1e-12 {
            sc.active_width[p] = 0.0;
            sc.live[p] = false;
            sc.version[p] += 1;
            if t < end {
                let cu = res[p].can_use;
                res[p].shortfall += if cu.is_finite() {
                    (end - t) * want(p, cu)
                } else {
                    (end - t) * n * v.project(p).resource_share / trs
                };
            }
            // Rates change when a project runs out of jobs (BOINC's rule):
            // the live shares fall, and the lagging rates are reset.
            clock.drop_share(sc.share[p]);
            while let Some(q) = sc.lagging.pop() {
                if sc.live[q] {
                    sc.set_rate(q, &clock);
                }
            }
            sc.reach_full_rate(&clock);
        } else if activated || rates == Rates::Fresh {
            // A project's own rate follows a job of its becoming active
            // (and, when bounding, any change of its active jobs).
            sc.set_rate(p, &clock);
        } else {
            // Fewer active jobs, the same rate until the next reset.
            sc.lagging.push(p);
            sc.version[p] += 1;
            sc.push_next(p, &clock);
        }
    }
    let t = clock.t;
    if deficits {
        for (q, pr) in res.iter_mut().enumerate() {
            let want_q = want(q, pr.can_use);
            sc.close_deficit(q, pr, t, end, want_q);
            if t < end {
                pr.deficit += (end - t) * want_q;
            }
        }
    }
    if t < end {
        if first_idle.is_infinite() {
            first_idle = t;
        }
        shortfall += (end - t) * n;
    }
    // A finish that lands on the horizon's end is computed an ulp or so
    // before it, which left shortfalls of 1e-11 s: a fetcher then asked for
    // them at every step. Below rounding's reach, a shortfall is none.
    let noise = TIME_NOISE * end.abs().max(1.0) * n.max(1.0);
    for pr in &mut out.projects {
        if pr.shortfall <= noise {
            pr.shortfall = 0.0;
        }
    }
    out.nidle = nidle;
    out.shortfall = if shortfall > noise { shortfall } else { 0.0 };
    out.first_idle = first_idle;
}

/// The simulation's real and virtual clocks.
struct Clock {
    t: f64,
    /// Virtual time: runs at `ocf / nrrs` (stops when nrrs is 0).
    u: f64,
    /// The live projects' shares, and how many of them are positive.
    nrrs: f64,
    positive: usize,
    n: f64,
    ocf: f64,
}

impl Clock {
    /// To real time `t`; to virtual time `virtual_at` if the event is read
    /// off the virtual clock (exactly, rather than through a product).
    fn advance(&mut self, t: f64, virtual_at: Option<f64>) {
        match virtual_at {
            Some(u) => self.u = u.max(self.u),
            None if self.nrrs > 0.0 => self.u += (t - self.t) * self.ocf / self.nrrs,
            None => {}
        }
        self.t = t;
    }

    fn drop_share(&mut self, share: f64) {
        if share > 0.0 {
            self.positive -= 1;
            self.nrrs = if self.positive == 0 {
                0.0
            } else {
                (self.nrrs - share).max(0.0)
            };
        }
    }
}

impl Scratch {
    fn reset(&mut self, np: usize, nj: usize, v: &View, capped: bool) {
        self.active.clear();
        self.active.resize(nj, false);
        self.rem.clear();
        self.done.clear();
        self.done.resize(np, 0.0);
        self.pact
            .resize_with(np.max(self.pact.len()), ActiveJobs::default);
        self.pact.iter_mut().for_each(ActiveJobs::clear);
        self.active_width.clear();
        self.active_width.resize(np, 0.0);
        self.live.clear();
        self.next_waiting.clear();
        self.next_waiting.resize(np, nj);
        self.next_same.clear();
        self.share.clear();
        self.share
            .extend(v.projects().iter().map(|p| p.resource_share));
        self.factor.clear();
        self.factor.resize(np, 0.0);
        self.full.clear();
        self.full.resize(np, false);
        self.stamp.clear();
        self.stamp.resize(np, 0.0);
        self.version.clear();
        self.version.resize(np, 0);
        self.rate_version.clear();
        self.rate_version.resize(np, 0);
        self.lagging.clear();
        self.since.clear();
        self.since.resize(np, v.now());
        self.active_jobs.clear();
        self.active_jobs.resize(np, 0);
        self.active_app.clear();
        self.app_head.clear();
        if capped {
            self.active_app
                .extend(v.projects().iter().map(|p| vec![0; p.apps.len()]));
            self.app_head
                .extend(v.projects().iter().map(|p| vec![nj; p.apps.len()]));
        }
        self.by_time.clear();
        self.by_virtual.clear();
        self.by_factor.clear();
    }

    /// Project p's rate now.
    fn rate(&self, p: usize, c: &Clock) -> f64 {
        if self.full[p] {
            c.ocf
        } else {
            (self.factor[p] / c.nrrs).min(1.0) * c.ocf
        }
    }

    /// Brings p's remaining times up to date.
    fn catch_up(&mut self, p: usize, c: &Clock) {
        let (clock_now, speed) = if self.full[p] {
            (c.t, c.ocf)
        } else {
            (c.u, self.factor[p])
        };
        let done = speed * (clock_now - self.stamp[p]);
        if done > 0.0 {
            self.done[p] += done;
        }
        self.stamp[p] = clock_now;
    }

    /// Sets p's rate from its share and active jobs now (BOINC's
    /// `rate_of`): x = share / live shares, times N / a when it has fewer
    /// than N instances active, at most 1, times the on fraction.
    fn set_rate(&mut self, p: usize, c: &Clock) {
        self.catch_up(p, c);
        let a = self.active_width[p];
        let boost = if a < c.n && a > 0.0 { c.n / a } else { 1.0 };
        let factor = self.share[p] * boost;
        self.version[p] += 1;
        // (The same factor leaves the rate as it is: a fall of the live
        // shares since has been followed by `reach_full_rate`.)
        if factor != self.factor[p] {
            self.factor[p] = factor;
            self.full[p] = c.nrrs <= 0.0 || factor >= c.nrrs;
            self.stamp[p] = if self.full[p] { c.t } else { c.u };
            self.rate_version[p] += 1;
            if !self.full[p] {
                self.by_factor.push((Key(factor), p, self.rate_version[p]));
            }
        }
        self.push_next(p, c);
    }

    /// Moves the projects that the live shares' fall brought to the full
    /// rate onto the real clock.
    fn reach_full_rate(&mut self, c: &Clock) {
        while let Some(&(Key(f), p, ver)) = self.by_factor.peek() {
            if ver != self.rate_version[p] || self.full[p] || !self.live[p] {
                self.by_factor.pop();
                continue;
            }
            if c.nrrs > 0.0 && f < c.nrrs {
                break;
            }
            self.by_factor.pop();
            self.catch_up(p, c);
            self.full[p] = true;
            self.stamp[p] = c.t;
            self.version[p] += 1;
            self.rate_version[p] += 1;
            self.push_next(p, c);
        }
    }

    /// Queues p's next job to finish: its active job with the least
    /// remaining time (the earlier one on a tie).
    fn push_next(&mut self, p: usize, c: &Clock) {
        let Some((Key(key), k)) = self.pact[p].peek() else {
            return;
        };
        let r = (key - self.done[p]).max(0.0);
        let ver = self.version[p];
        if self.full[p] {
            self.by_time
                .push(Reverse((Key(self.stamp[p] + r / c.ocf), k, ver)));
        } else if self.factor[p] > 0.0 {
            self.by_virtual
                .push(Reverse((Key(self.stamp[p] + r / self.factor[p]), k, ver)));
        }
    }

    /// The next job to finish: (real time, job, virtual time if read off
    /// the virtual clock); None when no job progresses.
    fn next_finish(&mut self, sim: &[SimJob], c: &Clock) -> Option<(f64, usize, Option<f64>)> {
        let valid = |heap: &mut BinaryHeap<Reverse<(Key, usize, u32)>>, sc_version: &[u32]| {
            while let Some(&Reverse((Key(x), k, ver))) = heap.peek() {
                if ver == sc_version[sim[k].project] {
                    return Some((x, k));
                }
                heap.pop();
            }
            None
        };
        let real = valid(&mut self.by_time, &self.version);
        let virt = valid(&mut self.by_virtual, &self.version)
            .filter(|_| c.nrrs > 0.0)
            .map(|(u, k)| (c.t + (u - c.u) * c.nrrs / c.ocf, k, u));
        let pick = match (real, virt) {
            (None, None) => return None,
            (Some((t, k)), None) => (t, k, None),
            (None, Some((t, k, u))) => (t, k, Some(u)),
            (Some((tr, kr)), Some((tv, kv, u))) => {
                if (tv, kv) < (tr, kr) {
                    (tv, kv, Some(u))
                } else {
                    (tr, kr, None)
                }
            }
        };
        if pick.2.is_some() {
            self.by_virtual.pop();
        } else {
            self.by_time.pop();
        }
        Some(pick)
    }

    /// Adds p's deficit since its active width last changed, to `t`
    /// (within the horizon).
    fn close_deficit(&mut self, p: usize, pr: &mut ProjectResult, t: f64, end: f64, want: f64) {
        let span = t.min(end) - self.since[p].min(end);
        if span > 0.0 {
            pr.deficit += span * above_noise(want - self.active_width[p]);
        }
        self.since[p] = t;
    }
}
