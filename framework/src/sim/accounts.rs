//! The FLOPs the figures of merit count, per resource: available while the
//! host is on, idle, and used or wasted by reported jobs. Invariant (checked
//! after every step in debug builds and at the end of every run):
//! available = used + wasted + idle + FLOPs of jobs not yet reported.

use crate::model::{ClientState, Job};

#[derive(Debug, Clone)]
pub(super) struct Accounts {
    /// Seconds in which computing was allowed.
    pub available_seconds: f64,
    /// Seconds in which GPU computing was allowed.
    pub gpu_available_seconds: f64,
    pub avail_flops: Vec<f64>,
    pub idle_flops: Vec<f64>,
    pub used_flops: Vec<f64>,
    pub wasted_flops: Vec<f64>,
    pub jobs_created: u64,
    pub jobs_reported: u64,
    /// Queued jobs a disk manager deleted.
    pub jobs_discarded: u64,
}

impl Accounts {
    pub fn new(nrsc: usize) -> Accounts {
        Accounts {
            available_seconds: 0.0,
            gpu_available_seconds: 0.0,
            avail_flops: vec![0.0; nrsc],
            idle_flops: vec![0.0; nrsc],
            used_flops: vec![0.0; nrsc],
            wasted_flops: vec![0.0; nrsc],
            jobs_created: 0,
            jobs_reported: 0,
            jobs_discarded: 0,
        }
    }

    /// `span` seconds in which the jobs occupied `busy[r]` instance-seconds
    /// of each resource; a resource counts only while it was `allowed` to
    /// compute (BOINC's emulator does the same).
    pub fn available(
        &mut self,
        st: &ClientState,
        span: f64,
        busy: &[f64],
        allowed: impl Fn(usize) -> bool,
    ) {
        if allowed(crate::model::CPU) {
            self.available_seconds += span;
        }
        // (Every GPU kind is allowed at once: the first stands for all.)
        if busy.len() > 1 && allowed(1) {
            self.gpu_available_seconds += span;
        }
        for (r, busy) in busy.iter().enumerate() {
            if !allowed(r) {
                continue;
            }
            let cap = st.host.ninstances(r) * st.host.instance_flops(r) * span;
            self.avail_flops[r] += cap;
            // Over-committed CPUs are shared to exactly full, but the
            // shares' sum may round a few ulps off it: what rounding can
            // make (a billionth of the stretch) is no idle time, above or
            // below 0 (-4e-4 FLOPs of idle were reported; and a crumb of
            // idle, over nothing used, made an idleness of 1).
            let idle = cap - busy * st.host.instance_flops(r);
            if idle > 1e-9 * cap {
                self.idle_flops[r] += idle;
            }
        }
    }

    /// A reported job's FLOPs, used (on time) or wasted (late or failed).
    pub fn reported(&mut self, st: &ClientState, j: &Job, wasted: bool) {
        for r in 0..st.host.nrsc() {
            let f = j.instance_seconds(r) * st.host.instance_flops(r);
            if wasted {
                self.wasted_flops[r] += f;
            } else {
                self.used_flops[r] += f;
            }
        }
    }

    /// available = used + wasted + idle + unreported; no resource
    /// over-committed; every job reported at most once.
    pub fn check(&self, st: &ClientState) -> Result<(), String> {
        let host = &st.host;
        let unreported: f64 = st.jobs.iter().map(|j| j.flops_this_run(host)).sum();
        let avail: f64 = self.avail_flops.iter().sum();
        let accounted: f64 = self.used_flops.iter().sum::<f64>()
            + self.wasted_flops.iter().sum::<f64>()
            + self.idle_flops.iter().sum::<f64>()
            + unreported;
        if (avail - accounted).abs() > 1e-6 * avail.max(1.0) {
            return Err(format!("accounting broken: available {avail} != used + wasted + idle + unreported {accounted}"));
        }
        for r in 0..host.nrsc() {
            // What the jobs compute on (not what they claim: the CPUs may be
            // over-committed, and are then shared).
            let used: f64 = st.projects.iter().map(|p| p.usage_rate[r]).sum();
            if used > host.ninstances(r) + 1e-9 {
                return Err(format!(
                    "{} over-committed: jobs compute on {used} of {}",
                    host.rsc_name(r),
                    host.ninstances(r)
                ));
            }
        }
        if self.jobs_reported + self.jobs_discarded + st.jobs.len() as u64 != self.jobs_created {
            return Err(format!(
                "jobs lost or reported twice: {} created, {} reported, {} on the host",
                self.jobs_created,
                self.jobs_reported,
                st.jobs.len()
            ));
        }
        Ok(())
    }
}
