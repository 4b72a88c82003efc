//! An example compiled policy plugin: two policies vcsim does not have
//! built in, exported through the SDK's C ABI.
//!
//! - `lsf` (CPU scheduler): least slack first. A job's slack is its deadline
//!   less now less its estimated remaining run time; jobs run in increasing
//!   slack, filling the CPUs and GPUs, and a running job gets one
//!   scheduling period of bonus slack so that near-ties do not thrash.
//!   Jobs with negative slack run in deadline mode. A project's or an app's
//!   `max_concurrent` (if not 0) caps how many of its jobs run at once.
//! - `least-queued` (work fetcher): when the host's queued work drops below
//!   the low-water mark (or too few jobs to fill the CPUs), ask the contactable project with the least work
//!   relative to its resource share — CPU seconds used so far plus CPU
//!   seconds queued — for enough to fill the buffer.
//!
//! Build (in the vcsim checkout): `cargo build --release -p
//! vcsim-dylib-example`, then `vcsim --plugin
//! target/release/libvcsim_dylib_example.so list`.

#![forbid(unsafe_code)]

use vcsim_dylib_sdk::*;

/// Least slack first.
#[derive(Default)]
pub struct LeastSlackFirst {
    order: Vec<(f64, u64, usize)>,
    free: Vec<f64>,
    /// Jobs chosen so far, per project and per app (`App::index`).
    per_project: Vec<u32>,
    per_app: Vec<u32>,
}

impl CpuScheduler for LeastSlackFirst {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        let now = v.now();
        let bonus = v.prefs().sched_period;
        self.order.clear();
        for (k, j) in v.jobs().iter().enumerate() {
            if !j.is_runnable() {
                continue;
            }
            let remaining = v.remaining_seconds(j);
            if remaining.is_nan() {
                return Err(PolicyError::new(format!("job {} has no estimate", j.id)));
            }
            let mut slack = j.deadline - now - remaining;
            if j.is_running() {
                slack += bonus;
            }
            self.order.push((slack, j.id, k));
        }
        self.order
            .sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.free.clear();
        self.free.extend((0..v.nrsc()).map(|r| v.rsc(r).instances));
        self.per_project.clear();
        self.per_project.resize(v.nprojects(), 0);
        self.per_app.clear();
        self.per_app.resize(v.apps().len(), 0);
        const EPS: f64 = 1e-9;
        let jobs = v.jobs();
        for &(slack, id, k) in &self.order {
            let j = &jobs[k];
            let fits = j.cpus <= self.free[0] + EPS
                && j.gpu().is_none_or(|(r, n)| n <= self.free[r] + EPS);
            if !fits {
                continue;
            }
            // max_concurrent: 0 is no cap.
            let (p, app) = (v.project(j.project), v.app_of(j));
            let capped = |cap: u32, n: u32| cap > 0 && n >= cap;
            if capped(p.max_concurrent(), self.per_project[j.project])
                || capped(app.max_concurrent(), self.per_app[app.index()])
            {
                continue;
            }
            self.per_project[j.project] += 1;
            self.per_app[app.index()] += 1;
            self.free[0] -= j.cpus;
            if let Some((r, n)) = j.gpu() {
                self.free[r] -= n;
            }
            let mode = if slack < 0.0 {
                RunMode::Deadline
            } else {
                RunMode::RoundRobin
            };
            out.push(id, mode);
            if self.free.iter().all(|f| *f <= EPS) {
                break;
            }
        }
        Ok(())
    }
}

/// Ask the project with the least work (used + queued) for its share.
#[derive(Default)]
pub struct LeastQueued;

impl LeastQueued {
    /// CPU seconds of work queued per project.
    fn queued(v: &View) -> Vec<f64> {
        let mut q = vec![0.0; v.nprojects()];
        for j in v
            .jobs()
            .iter()
            .filter(|j| j.is_runnable() && j.gpu().is_none())
        {
            q[j.project] += v.remaining_seconds(j) * j.cpus;
        }
        q
    }
}

impl WorkFetcher for LeastQueued {
    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
        let ncpus = v.host().ncpus.max(1.0);
        let q = Self::queued(v);
        // Wall seconds of work the host holds, at its expected availability.
        let held = q.iter().sum::<f64>() / (ncpus * v.on_fraction());
        // Jobs that could keep the CPUs busy right now.
        let runnable: f64 = v
            .jobs()
            .iter()
            .filter(|j| j.is_runnable() && j.gpu().is_none())
            .map(|j| j.cpus)
            .sum();
        if held >= v.prefs().work_buf_min && runnable >= v.host().ncpus {
            return Ok(None);
        }
        let want = (v.prefs().work_buf_total() - held) * ncpus * v.on_fraction();
        let mut best: Option<(usize, f64)> = None;
        for p in v.projects().enumerate().filter_map(|(i, pr)| {
            (pr.contactable() && pr.has_rsc_apps(0) && pr.share_fraction() > 0.0).then_some(i)
        }) {
            let rel = (v.usage_seconds(p, 0) + q[p]) / v.share_fraction(p);
            if best.is_none_or(|(_, b)| rel < b) {
                best = Some((p, rel));
            }
        }
        Ok(best.map(|(p, _)| WorkRequest::seconds(p, want.max(1.0), v.nrsc())))
    }
}

export_cpu!(LeastSlackFirst => "lsf",
    "least slack first (deadline - now - remaining), one period of bonus slack for running jobs");
export_fetch!(LeastQueued => "least-queued",
    "below the low-water mark, ask the project with the least work (used + queued) per share");
