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
}

impl RrResult {
    pub fn missed(&self, view_index: usize) -> bool {
        self.jobs.iter().any(|j| j.index == view_index && j.missed)
    }
    pub fn any_misses(&self) -> bool {
        self.projects.iter().any(|p| p.misses > 0)
    }
}

/// Scratch space reused between simulations.
#[derive(Debug, Clone, Default)]
struct Scratch {
    /// Indices of active jobs, ascending (ties go to the earlier job).
    act: Vec<usize>,
    active: Vec<bool>,
    active_width: Vec<f64>,
    live: Vec<bool>,
    rate: Vec<f64>,
    next_waiting: Vec<usize>,
    /// Active jobs per project and per (project, app), for the caps.
    active_jobs: Vec<u32>,
    active_app: Vec<Vec<u32>>,
}

/// Instances of resource `rsc` that the CPU jobs may use: the CPUs less
/// those that running GPU jobs hold; a GPU's instances.
pub fn instances(v: &View, rsc: Rsc) -> f64 {
    let n = v.host().ninstances(rsc);
    if rsc != 0 {
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

/// Runs the simulation for resource `rsc` over the horizon `buffer` seconds,
/// writing into `out` (its buffers are reused).
pub fn simulate(v: &View, rsc: Rsc, buffer: f64, out: &mut RrResult) -> PolicyResult<()> {
    let now = v.now();
    let n = instances(v, rsc);
    let np = v.projects().len();
    let ocf = v.on_fraction();
    let trs: f64 = v.projects().iter().map(|p| p.resource_share).sum();
    let bmin = v.prefs().work_buf_min;
    let period = v.prefs().sched_period;
    let end = now + buffer;
    let jobs = v.jobs();

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
        let width = if rsc == 0 {
            j.cpus
        } else {
            j.gpu.map_or(1.0, |g| g.1)
        };
        out.jobs.push(SimJob {
            index: i,
            project: j.project,
            remaining: v.remaining_seconds(j)?,
            width,
            deadline: j.deadline,
            rate: 0.0,
            finish: f64::INFINITY,
            missed: false,
        });
        out.projects[j.project].has_jobs = true;
    }
    // A project wants its share of the instances, or what its caps let it
    // use if that is less; with no jobs it lacks the whole of it.
    let capped = v
        .projects()
        .iter()
        .any(|p| p.max_concurrent > 0 || p.apps.iter().any(|a| a.max_concurrent > 0));
    let want = |p: usize, can_use: f64| (n * v.project(p).resource_share / trs).min(can_use);
    for (p, pr) in out.projects.iter_mut().enumerate() {
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
    let sc = &mut out.scratch;
    let nj = out.jobs.len();
    sc.active.clear();
    sc.active.resize(nj, false);
    sc.active_width.clear();
    sc.active_width.resize(np, 0.0);
    sc.rate.clear();
    sc.rate.resize(np, 0.0);
    sc.live.clear();
    sc.live.extend(out.projects.iter().map(|p| p.has_jobs));
    sc.active_jobs.clear();
    sc.active_jobs.resize(np, 0);
    sc.active_app.clear();
    if capped {
        sc.active_app
            .extend(v.projects().iter().map(|p| vec![0; p.apps.len()]));
    }
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
    sc.next_waiting.clear();
    sc.next_waiting.resize(np, nj);
    let mut busy = 0.0;
    sc.act.clear();
    for (k, j) in out.jobs.iter().enumerate() {
        if sc.active_width[j.project] < n && cap_ok(sc, j.index) {
            sc.active[k] = true;
            sc.act.push(k);
            sc.active_width[j.project] += j.width;
            busy += j.width;
            count(sc, j.index, 1);
        } else if sc.next_waiting[j.project] == nj {
            sc.next_waiting[j.project] = k;
        }
    }
    // A job's rate depends only on its project: x = share / live shares,
    // times N / a when the project has fewer than N instances active, at most
    // 1, times the on fraction.
    let set_rates = |sc: &mut Scratch| {
        let nrrs: f64 = (0..np)
            .filter(|&p| sc.live[p])
            .map(|p| v.project(p).resource_share)
            .sum();
        for p in 0..np {
            let mut x = if nrrs > 0.0 {
                v.project(p).resource_share / nrrs
            } else {
                1.0
            };
            let a = sc.active_width[p];
            if a < n && a > 0.0 {
                x *= n / a;
            }
            sc.rate[p] = x.min(1.0) * ocf;
        }
    };
    set_rates(sc);
    out.nidle = (n - busy).max(0.0);
    let mut t = now;
    loop {
        // The active job that finishes first.
        let mut best: Option<(usize, usize, f64)> = None;
        for (pos, &k) in sc.act.iter().enumerate() {
            let j = &out.jobs[k];
            let r = sc.rate[j.project];
            if r > 0.0 {
                let d = j.remaining / r;
                if best.is_none_or(|(_, _, bd)| d < bd) {
                    best = Some((pos, k, d));
                }
            }
        }
        let Some((pos, kb, step)) = best else { break };
        let p = out.jobs[kb].project;
        let prior_active = sc.active_width[p];
        if t < end {
            let d = step.min(end - t);
            let idle = (n - busy).max(0.0);
            if idle > 0.0 && out.first_idle.is_infinite() {
                out.first_idle = t;
            }
            out.shortfall += d * idle;
            let want = want(p, out.projects[p].can_use);
            if want > prior_active {
                out.projects[p].shortfall += d * (want - prior_active);
            }
        }
        t += step;
        for &k in &sc.act {
            let j = &mut out.jobs[k];
            j.remaining = (j.remaining - sc.rate[j.project] * step).max(0.0);
        }
        {
            let j = &mut out.jobs[kb];
            j.rate = sc.rate[p];
            j.finish = t;
            j.remaining = 0.0;
            // BOINC's computation deadline: the report deadline less the
            // buffer minimum and one scheduling period.
            let cd = j.deadline - bmin - period;
            if t > now + CPU_PESSIMISM_FACTOR * (cd - now) {
                j.missed = true;
                out.projects[p].misses += 1;
            }
        }
        sc.active[kb] = false;
        sc.act.remove(pos);
        sc.active_width[p] -= out.jobs[kb].width;
        busy -= out.jobs[kb].width;
        count(sc, out.jobs[kb].index, -1);
        // The project's next waiting job (that its caps allow) becomes
        // active, at its project's rate. Without caps the first waiting one
        // always may, and the search starts where the last one ended.
        let waiting = |w: usize, sc: &Scratch| {
            out.jobs[w].project == p && !sc.active[w] && out.jobs[w].finish.is_infinite()
        };
        let mut w = sc.next_waiting[p];
        while w < nj && !(waiting(w, sc) && cap_ok(sc, out.jobs[w].index)) {
            w += 1;
        }
        if w < nj {
            sc.active[w] = true;
            let at = sc.act.partition_point(|&k| k < w);
            sc.act.insert(at, w);
            sc.active_width[p] += out.jobs[w].width;
            busy += out.jobs[w].width;
            count(sc, out.jobs[w].index, 1);
            if !capped {
                sc.next_waiting[p] = w + 1;
            }
            set_rates(sc);
        } else if !capped || !(sc.next_waiting[p]..nj).any(|w| waiting(w, sc)) {
            sc.next_waiting[p] = nj;
        }
        if sc.active_width[p] <= 1e-12 {
            sc.active_width[p] = 0.0;
            sc.live[p] = false;
            if t < end {
                let cu = out.projects[p].can_use;
                out.projects[p].shortfall += if cu.is_finite() {
                    (end - t) * want(p, cu)
                } else {
                    (end - t) * n * v.project(p).resource_share / trs
                };
            }
            // Rates change only when a project runs out of jobs (BOINC's rule).
            set_rates(sc);
        }
    }
    if t < end {
        if out.first_idle.is_infinite() {
            out.first_idle = t;
        }
        out.shortfall += (end - t) * n;
    }
    Ok(())
}
