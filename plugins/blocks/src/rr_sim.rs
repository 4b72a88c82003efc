//! The weighted round-robin simulation of BOINC's 2007 client
//! (`rr_simulation` in `cpu_sched.C`): it projects when each queued job would
//! finish if every project got its resource share, flags the jobs that would
//! miss their deadlines, and measures the shortfall — the idle instance-time
//! expected within the work-buffer period. CS2, WF2 and the GPU fetcher share
//! it. It runs once per resource: a CPU job shares the CPUs, a GPU job the
//! instances of its GPU type.

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
}

/// Runs the simulation for resource `rsc` over the horizon `buffer` seconds,
/// writing into `out` (its buffers are reused).
pub fn simulate(v: &View, rsc: Rsc, buffer: f64, out: &mut RrResult) -> PolicyResult<()> {
    let now = v.now();
    let host = v.host();
    let n = host.ninstances(rsc);
    let np = v.projects().len();
    let ocf = v.on_fraction();
    let trs: f64 = v.projects().iter().map(|p| p.resource_share).sum();
    let bmin = v.prefs().work_buf_min;
    let period = v.prefs().sched_period;
    let end = now + buffer;

    out.rsc = rsc;
    out.jobs.clear();
    out.projects.clear();
    out.projects.resize(np, ProjectResult::default());
    out.shortfall = 0.0;
    out.first_idle = f64::INFINITY;
    for (i, j) in v.jobs().iter().enumerate() {
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
    // Projects with no jobs lack their whole share of the buffer.
    for (p, pr) in out.projects.iter_mut().enumerate() {
        if !pr.has_jobs {
            pr.shortfall = buffer * ocf * n * v.project(p).resource_share / trs;
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
    // Active jobs: each project's first jobs up to N instances, in list
    // order; the others wait, FIFO (`next_waiting[p]` is the next index to look at).
    sc.next_waiting.clear();
    sc.next_waiting.resize(np, nj);
    let mut busy = 0.0;
    sc.act.clear();
    for (k, j) in out.jobs.iter().enumerate() {
        if sc.active_width[j.project] < n {
            sc.active[k] = true;
            sc.act.push(k);
            sc.active_width[j.project] += j.width;
            busy += j.width;
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
            let want = n * v.project(p).resource_share / trs;
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
        // The project's next waiting job becomes active, at its project's rate.
        let mut w = sc.next_waiting[p];
        while w < nj
            && !(out.jobs[w].project == p && !sc.active[w] && out.jobs[w].finish.is_infinite())
        {
            w += 1;
        }
        if w < nj {
            sc.active[w] = true;
            let at = sc.act.partition_point(|&k| k < w);
            sc.act.insert(at, w);
            sc.active_width[p] += out.jobs[w].width;
            busy += out.jobs[w].width;
            sc.next_waiting[p] = w + 1;
            set_rates(sc);
        } else {
            sc.next_waiting[p] = nj;
        }
        if sc.active_width[p] <= 1e-12 {
            sc.active_width[p] = 0.0;
            sc.live[p] = false;
            if t < end {
                out.projects[p].shortfall += (end - t) * n * v.project(p).resource_share / trs;
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
