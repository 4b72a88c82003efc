//! An example compiled policy plugin: two policies vcsim does not have
//! built in, exported through the SDK's C ABI.
//!
//! - `lsf` (CPU scheduler): least slack first. A job's slack is its deadline
//!   less now less its estimated remaining run time; jobs run in increasing
//!   slack, filling the CPUs and GPUs, and a running job gets one
//!   scheduling period of bonus slack so that near-ties do not thrash.
//!   Jobs with negative slack run in deadline mode. A project's or an app's
//!   `max_concurrent` (if not 0) caps how many of its jobs run at once.
//!   It says why it runs a job that starts or changes mode (ABI 2.3's
//!   reasons, shown by `vcsim explain`): `least slack: 2.1 h (rank 1 of
//!   7)`, with the slack in seconds and the rank as data. The jobs it
//!   leaves out share one reason (ABI 2.4's run list reason): `least slack
//!   first: the jobs that run have less (up to 3.5 h), or hold what it
//!   needs`.
//! - `least-queued` (work fetcher): when the host's queued work drops below
//!   the low-water mark (or too few jobs to fill the CPUs), ask the contactable project with the least work
//!   relative to its resource share — CPU seconds used so far plus CPU
//!   seconds queued — for enough to fill the buffer. It says why too.
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
        let nrunnable = self.order.len();
        // The slack of the last job listed, for the others' reason.
        let mut last = None;
        for (rank, &(slack, id, k)) in self.order.iter().enumerate() {
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
            last = Some(slack);
            self.free[0] -= j.cpus;
            if let Some((r, n)) = j.gpu() {
                self.free[r] -= n;
            }
            let (mode, abi_mode) = if slack < 0.0 {
                (RunMode::Deadline, abi::MODE_DEADLINE)
            } else {
                (RunMode::RoundRobin, abi::MODE_ROUND_ROBIN)
            };
            // A reason only where vcsim asks for one (a job that starts or
            // changes mode), so that the others cost nothing.
            if !j.is_running() || j.mode != abi_mode {
                let mut text = format!(
                    "least slack: {} (rank {} of {nrunnable})",
                    duration(slack),
                    rank + 1
                );
                if slack < 0.0 {
                    text.push_str(", negative: deadline mode");
                }
                let reason = Reason::new(text)
                    .with("slack_s", slack)
                    .with("rank", (rank + 1) as f64);
                out.push_with_reason(id, mode, reason);
            } else {
                out.push(id, mode);
            }
            if self.free.iter().all(|f| *f <= EPS) {
                break;
            }
        }
        if let (Some(last), true) = (last, v.explaining() && out.len() < nrunnable) {
            let text = format!(
                "least slack first: the jobs that run have less (up to {}), or hold what it needs",
                duration(last)
            );
            out.set_list_reason(Reason::new(text).with("last_slack_s", last));
        }
        Ok(())
    }
}

/// A duration for a reason: `2.1 h`, `-25 min`, `3.5 d`, `40 s`.
fn duration(secs: f64) -> String {
    let a = secs.abs();
    if a >= 2.0 * 86400.0 {
        format!("{:.1} d", secs / 86400.0)
    } else if a >= 2.0 * 3600.0 {
        format!("{:.1} h", secs / 3600.0)
    } else if a >= 120.0 {
        format!("{:.0} min", secs / 60.0)
    } else {
        format!("{secs:.0} s")
    }
}

/// Ask the project with the least work (used + queued) for its share.
#[derive(Default)]
pub struct LeastQueued;

/// What `least-queued` decides, and why.
struct Ask {
    project: usize,
    seconds: f64,
    /// Wall seconds of work the host holds.
    held: f64,
    /// Whether the queued jobs fill the CPUs.
    filled: bool,
    /// The project's CPU seconds used and queued per share.
    per_share: f64,
}

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

    /// The request to make, if any, and what it rests on.
    fn decide(v: &View) -> Option<Ask> {
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
        let filled = runnable >= v.host().ncpus;
        if held >= v.prefs().work_buf_min && filled {
            return None;
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
        best.map(|(project, per_share)| Ask {
            project,
            seconds: want.max(1.0),
            held,
            filled,
            per_share,
        })
    }
}

impl WorkFetcher for LeastQueued {
    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
        Ok(Self::decide(v).map(|a| WorkRequest::seconds(a.project, a.seconds, v.nrsc())))
    }

    fn explain_request(&self, v: &View, req: &WorkRequest) -> PolicyResult<Option<Reason>> {
        // `request` is pure: the same view decides the same.
        let Some(a) = Self::decide(v).filter(|a| a.project == req.project) else {
            return Ok(None);
        };
        let low = v.prefs().work_buf_min;
        let why = if a.held < low {
            format!(
                "queued work {} is below the low-water mark {}",
                duration(a.held),
                duration(low)
            )
        } else {
            "too few jobs to fill the CPUs".to_string()
        };
        let text = format!(
            "{why}; {} has the least work per share ({})",
            v.project(a.project).name(),
            duration(a.per_share)
        );
        Ok(Some(
            Reason::new(text)
                .with("held_s", a.held)
                .with("filled", if a.filled { 1.0 } else { 0.0 })
                .with("work_per_share_s", a.per_share),
        ))
    }
}

export_cpu!(LeastSlackFirst => "lsf",
    "least slack first (deadline - now - remaining), one period of bonus slack for running jobs");
export_fetch!(LeastQueued => "least-queued",
    "below the low-water mark, ask the project with the least work (used + queued) per share");
