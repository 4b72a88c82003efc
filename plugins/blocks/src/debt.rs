//! Debt: how much work (instance-seconds) the client owes each project.
//!
//! - [`V4Debt`]: the v4 document's one debt (CS1): reset to 0 for a project
//!   with no runnable job, raised by its share of the work done, lowered by
//!   its own work.
//! - [`ShortTermDebt`]: BOINC 2007's STD (CS2): the same over runnable
//!   projects, then mean-normalised and clamped to ±`MAX_STD`.
//! - [`LongTermDebt`]: the LTD of WF2 and of the GPU work fetch, per
//!   resource, in the form of `work-fetch-and-gpus`: only projects that may
//!   supply work for the resource accrue (the flag D(P, R)); it grows with a
//!   project's share of the elapsed available time and shrinks as its jobs use
//!   the resource; it is normalised to mean zero over the accruing projects,
//!   which keeps it bounded without clamping away information.

use vcsim_framework::{Rsc, View, CPU};

/// BOINC 2007's bound on the short-term debt (`MAX_STD`).
pub const MAX_STD: f64 = 86400.0;

/// Usage of each project since the last accounting, from the view's
/// cumulative counters.
#[derive(Debug, Clone, Default)]
pub struct UsageMeter {
    last: Vec<f64>,
    last_available: f64,
    last_time: f64,
    started: bool,
}

impl UsageMeter {
    /// Per project, instance-seconds of `rsc` used since the last call, and
    /// the available seconds and the elapsed seconds since then.
    pub fn take(&mut self, v: &View, rsc: Rsc, out: &mut Vec<f64>) -> (f64, f64) {
        let r = self.peek(v, rsc, out);
        let np = v.projects().len();
        self.last.resize(np, 0.0);
        for p in 0..np {
            self.last[p] = v.usage_seconds(p, rsc);
        }
        self.last_available = v.available_seconds();
        self.last_time = v.now();
        self.started = true;
        r
    }

    /// What `take` would return now, without starting a new interval.
    pub fn peek(&self, v: &View, rsc: Rsc, out: &mut Vec<f64>) -> (f64, f64) {
        let np = v.projects().len();
        let fresh = self.last.len() != np;
        out.clear();
        for p in 0..np {
            let last = if fresh { 0.0 } else { self.last[p] };
            out.push(v.usage_seconds(p, rsc) - last);
        }
        let da = v.available_seconds() - self.last_available;
        let dt = if self.started {
            v.now() - self.last_time
        } else {
            0.0
        };
        (da, dt)
    }
}

/// The v4 document's debt (see `schedule_cpus` in client-scheduling-v4).
#[derive(Debug, Clone, Default)]
pub struct V4Debt {
    pub debt: Vec<f64>,
    meter: UsageMeter,
    work: Vec<f64>,
    /// Work done in the last period, all projects (the document's
    /// `total_work_done_this_period`).
    pub total_work_done: f64,
}

impl V4Debt {
    /// Charges the work done since the last call. `runnable[p]`: p has a runnable job.
    pub fn update(&mut self, v: &View, runnable: &[bool]) {
        let np = v.projects().len();
        self.debt.resize(np, 0.0);
        self.meter.take(v, 0, &mut self.work);
        self.total_work_done = self.work.iter().sum();
        let adjusted_total: f64 = (0..np)
            .filter(|&p| runnable[p])
            .map(|p| v.project(p).resource_share)
            .sum();
        apply_v4(
            &mut self.debt,
            &self.work,
            runnable,
            |p| v.project(p).resource_share,
            adjusted_total,
        );
    }
}

/// The v4 update on its own, for the document's worked example.
pub fn apply_v4(
    debt: &mut [f64],
    work: &[f64],
    runnable: &[bool],
    share: impl Fn(usize) -> f64,
    adjusted_total: f64,
) {
    let total: f64 = work.iter().sum();
    for p in 0..debt.len() {
        if !runnable[p] {
            debt[p] = 0.0;
        } else {
            debt[p] += share(p) / adjusted_total * total - work[p];
        }
    }
}

/// BOINC 2007's short-term debt.
#[derive(Debug, Clone, Default)]
pub struct ShortTermDebt {
    pub std: Vec<f64>,
    meter: UsageMeter,
    work: Vec<f64>,
}

impl ShortTermDebt {
    pub fn update(&mut self, v: &View, runnable: &[bool]) {
        let np = v.projects().len();
        self.std.resize(np, 0.0);
        let (_, dt) = self.meter.take(v, 0, &mut self.work);
        // An interval longer than two periods (the host was off) is discarded.
        if dt > 2.0 * v.prefs().sched_period {
            return;
        }
        let total: f64 = self.work.iter().sum();
        let rrs: f64 = (0..np)
            .filter(|&p| runnable[p])
            .map(|p| v.project(p).resource_share)
            .sum();
        let mut sum = 0.0;
        let mut n = 0.0;
        for p in 0..np {
            if runnable[p] {
                self.std[p] += v.project(p).resource_share / rrs * total - self.work[p];
                sum += self.std[p];
                n += 1.0;
            } else {
                self.std[p] = 0.0;
            }
        }
        if n > 0.0 {
            let mean = sum / n;
            for p in 0..np {
                if runnable[p] {
                    self.std[p] = (self.std[p] - mean).clamp(-MAX_STD, MAX_STD);
                }
            }
        }
    }
}

/// BOINC 2007's long-term debt (`adjust_debts`), of the CPU. Over each
/// interval every *potentially runnable* project (one with a runnable job,
/// or that may be contacted) and every project that computed earns its
/// share, among theirs, of the work done, less its own work; then the mean
/// over all projects is subtracted. A project that has never had a job
/// earns from the start, and eventually wins a fetch. Never bounded, never
/// reset; an interval longer than two scheduling periods (the host was
/// off) is discarded, as for the short-term debt. (The rule that a project
/// earns only after it has supplied a job, D(P, R), is the GPU fetcher's.)
///
/// BOINC's `compute_work_requests` adjusts the debts before it decides, so
/// a fetch decision reads [`LongTermDebt::current`], the debts charged up
/// to the view's time; `update` (the accounting, at every CPU scheduling
/// and before an RPC) keeps them.
#[derive(Debug, Clone, Default)]
pub struct LongTermDebt {
    pub ltd: Vec<f64>,
    meter: UsageMeter,
    work: Vec<f64>,
    earns: Vec<bool>,
}

/// The debts as of a view's time, and their scratch (see
/// [`LongTermDebt::current`]).
#[derive(Debug, Clone, Default)]
pub struct CurrentDebt {
    pub ltd: Vec<f64>,
    work: Vec<f64>,
    earns: Vec<bool>,
}

impl CurrentDebt {
    pub fn get(&self, p: usize) -> f64 {
        self.ltd.get(p).copied().unwrap_or(0.0)
    }

    /// The projects that earned in the charge (all false if it was dropped).
    pub fn earning(&self) -> &[bool] {
        &self.earns
    }
}

impl LongTermDebt {
    /// Charges the work done since the last call.
    pub fn update(&mut self, v: &View) {
        let np = v.projects().len();
        self.ltd.resize(np, 0.0);
        let (_, dt) = self.meter.take(v, CPU, &mut self.work);
        charge(v, dt, &self.work, &mut self.earns, &mut self.ltd);
    }

    /// The debts `update` would leave if called now, into `out`; `self`
    /// is left as it is.
    pub fn current<'a>(&self, v: &View, out: &'a mut CurrentDebt) -> &'a CurrentDebt {
        let np = v.projects().len();
        out.ltd.clear();
        out.ltd.extend_from_slice(&self.ltd);
        out.ltd.resize(np, 0.0);
        let (_, dt) = self.meter.peek(v, CPU, &mut out.work);
        charge(v, dt, &out.work, &mut out.earns, &mut out.ltd);
        out
    }

    pub fn get(&self, p: usize) -> f64 {
        self.ltd.get(p).copied().unwrap_or(0.0)
    }

    /// The time after which a charge would be dropped as too long (two
    /// scheduling periods after the last `update`), if there was one.
    pub fn drops_after(&self, v: &View) -> Option<f64> {
        self.meter
            .started
            .then(|| self.meter.last_time + 2.0 * v.prefs().sched_period)
    }
}

/// `adjust_debts`'s long-term part: `work[p]`, the CPU-seconds p used in
/// the `dt` seconds since the last charge.
fn charge(v: &View, dt: f64, work: &[f64], earns: &mut Vec<bool>, ltd: &mut [f64]) {
    let np = v.projects().len();
    earns.clear();
    earns.resize(np, false);
    if dt > 2.0 * v.prefs().sched_period {
        return;
    }
    for j in v.jobs() {
        if j.gpu.is_none() && j.is_runnable() {
            earns[j.project] = true;
        }
    }
    for p in 0..np {
        earns[p] |= v.contactable(p) || work[p] > 0.0;
    }
    let total: f64 = work.iter().sum();
    let shares: f64 = (0..np)
        .filter(|&p| earns[p])
        .map(|p| v.project(p).resource_share)
        .sum();
    for p in 0..np {
        if earns[p] {
            ltd[p] += v.project(p).resource_share / shares * total - work[p];
        }
    }
    let mean = ltd.iter().sum::<f64>() / np.max(1) as f64;
    for x in ltd.iter_mut() {
        *x -= mean;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_v4_documents_example_raises_as_debt_by_five_minutes() {
        // Shares 75% / 25%; 25 minutes of CPU to A and 15 to B.
        let mut debt = vec![0.0, 0.0];
        apply_v4(
            &mut debt,
            &[25.0, 15.0],
            &[true, true],
            |p| [75.0, 25.0][p],
            100.0,
        );
        // A: -25 + 0.75 x 40 = +5 minutes; B: -15 + 0.25 x 40 = -5 minutes.
        assert!((debt[0] - 5.0).abs() < 1e-12);
        assert!((debt[1] + 5.0).abs() < 1e-12);
    }

    #[test]
    fn a_project_with_no_runnable_job_has_no_debt_and_no_share() {
        let mut debt = vec![3.0, 7.0, -2.0];
        // C (share 50) has no runnable job: its share is left out of the total.
        apply_v4(
            &mut debt,
            &[10.0, 10.0, 0.0],
            &[true, true, false],
            |p| [25.0, 25.0, 50.0][p],
            50.0,
        );
        assert_eq!(debt, vec![3.0, 7.0, 0.0]);
    }
}
