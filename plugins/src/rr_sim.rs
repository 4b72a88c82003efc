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
}

impl RrResult {
    pub fn missed(&self, view_index: usize) -> bool {
        self.jobs.iter().any(|j| j.index == view_index && j.missed)
    }
    pub fn any_misses(&self) -> bool {
        self.projects.iter().any(|p| p.misses > 0)
    }
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
    // Active jobs: each project's first jobs up to N instances, in list order.
    let mut active = vec![false; out.jobs.len()];
    let mut active_width = vec![0.0f64; np];
    for (k, j) in out.jobs.iter().enumerate() {
        if active_width[j.project] < n {
            active[k] = true;
            active_width[j.project] += j.width;
        }
    }
    let mut project_live: Vec<bool> = out.projects.iter().map(|p| p.has_jobs).collect();
    let set_rates = |jobs: &mut [SimJob], active: &[bool], active_width: &[f64], live: &[bool]| {
        let nrrs: f64 = (0..np)
            .filter(|&p| live[p])
            .map(|p| v.project(p).resource_share)
            .sum();
        for (k, j) in jobs.iter_mut().enumerate() {
            if !active[k] {
                continue;
            }
            let rs = v.project(j.project).resource_share;
            let mut x = if nrrs > 0.0 { rs / nrrs } else { 1.0 };
            let a = active_width[j.project];
            if a < n && a > 0.0 {
                x *= n / a;
            }
            j.rate = x.min(1.0) * ocf;
        }
    };
    set_rates(&mut out.jobs, &active, &active_width, &project_live);
    let active_total = |active: &[bool], jobs: &[SimJob]| -> f64 {
        jobs.iter()
            .zip(active)
            .filter(|(_, a)| **a)
            .map(|(j, _)| j.width)
            .sum()
    };
    out.nidle = (n - active_total(&active, &out.jobs)).max(0.0);
    let mut t = now;
    loop {
        // The active job that finishes first.
        let mut best: Option<(usize, f64)> = None;
        for (k, j) in out.jobs.iter().enumerate() {
            if active[k] && j.rate > 0.0 {
                let d = j.remaining / j.rate;
                if best.is_none_or(|(_, bd)| d < bd) {
                    best = Some((k, d));
                }
            }
        }
        let Some((kb, step)) = best else { break };
        let busy = active_total(&active, &out.jobs);
        if t < end {
            let d = step.min(end - t);
            let idle = (n - busy).max(0.0);
            if idle > 0.0 && out.first_idle.is_infinite() {
                out.first_idle = t;
            }
            out.shortfall += d * idle;
        }
        let p = out.jobs[kb].project;
        let prior_active = active_width[p];
        if t < end {
            let d = step.min(end - t);
            let want = n * v.project(p).resource_share / trs;
            if want > prior_active {
                out.projects[p].shortfall += d * (want - prior_active);
            }
        }
        t += step;
        {
            let j = &mut out.jobs[kb];
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
        active[kb] = false;
        active_width[p] -= out.jobs[kb].width;
        for (k, j) in out.jobs.iter_mut().enumerate() {
            if active[k] {
                j.remaining = (j.remaining - j.rate * step).max(0.0);
            }
        }
        // The project's next waiting job becomes active.
        if let Some(k) = (0..out.jobs.len())
            .find(|&k| out.jobs[k].project == p && !active[k] && out.jobs[k].finish.is_infinite())
        {
            active[k] = true;
            active_width[p] += out.jobs[k].width;
            // It computes at its project's rate.
            set_rates(&mut out.jobs, &active, &active_width, &project_live);
        }
        if active_width[p] <= 1e-12 {
            active_width[p] = 0.0;
            project_live[p] = false;
            if t < end {
                out.projects[p].shortfall += (end - t) * n * v.project(p).resource_share / trs;
            }
            // Rates change only when a project runs out of jobs (BOINC's rule).
            set_rates(&mut out.jobs, &active, &active_width, &project_live);
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
