//! Today's client's project priorities from recent estimated credit (REC):
//! BOINC's `project_priority_init`, `compute_sched_priority` and
//! `adjust_rec_sched`. The REC itself is the framework's ([`View::rec`]).
//!
//! A project's priority is minus its fraction of the REC over its fraction
//! of the resource share: −1 at exactly its share, higher when it is owed.
//! Each job a scheduler chooses raises its project's temporary REC by the
//! job's part of the host's peak FLOPS times a 24th of the REC sum, so that
//! projects interleave.

use vcsim_framework::{Job, View};

#[derive(Debug, Clone, Default)]
pub struct RecPriority {
    /// REC per project, raised by each job chosen (BOINC's `rec_temp`).
    pub rec_temp: Vec<f64>,
    /// Resource-share fraction among the eligible projects.
    pub rsf: Vec<f64>,
    /// The scheduling priority; higher is more deserving.
    pub prio: Vec<f64>,
    rec_sum: f64,
    total_peak: f64,
}

impl RecPriority {
    /// Priorities from the REC of now; `eligible` projects set the sums
    /// (the CPU scheduler's: those with a runnable job; work fetch's: those
    /// it may ask).
    pub fn init(&mut self, v: &View, eligible: impl Fn(usize) -> bool) {
        let np = v.projects().len();
        self.rec_temp.clear();
        self.rec_temp.extend((0..np).map(|p| v.rec(p)));
        let (mut rs_sum, mut rec_sum) = (0.0, 0.0);
        for p in (0..np).filter(|&p| eligible(p)) {
            rs_sum += v.project(p).resource_share;
            rec_sum += self.rec_temp[p];
        }
        self.rec_sum = if rec_sum == 0.0 { 1.0 } else { rec_sum };
        let h = v.host();
        self.total_peak = (0..h.nrsc())
            .map(|r| h.ninstances(r) * h.instance_flops(r))
            .sum();
        self.rsf.clear();
        self.prio.clear();
        for p in 0..np {
            if rs_sum > 0.0 {
                self.rsf.push(v.project(p).resource_share / rs_sum);
                self.prio.push(0.0);
                self.compute(v, p);
            } else {
                self.rsf.push(0.0);
                self.prio.push(0.0);
            }
        }
    }

    fn compute(&mut self, v: &View, p: usize) {
        let f = self.rec_temp[p] / self.rec_sum;
        self.prio[p] = if v.project(p).resource_share == 0.0 {
            -1000.0 - f
        } else if self.rsf[p] > 0.0 {
            -f / self.rsf[p]
        } else {
            -f
        };
    }

    /// `j` was chosen: its project's temporary REC rises by the job's part
    /// of the host's peak FLOPS times a 24th of the REC sum.
    pub fn bump(&mut self, v: &View, j: &Job) {
        let p = j.project;
        if self.total_peak > 0.0 && p < self.rec_temp.len() {
            self.rec_temp[p] += j.peak_flops(v.host()) / self.total_peak * self.rec_sum / 24.0;
            self.compute(v, p);
        }
    }

    /// Lowers `p`'s priority (work fetch's penalty for queued work).
    pub fn lower(&mut self, p: usize, by: f64) {
        self.prio[p] -= by;
    }

    /// The host's peak FLOPS, all resources.
    pub fn total_peak(&self) -> f64 {
        self.total_peak
    }

    /// The REC sum over the eligible projects (1 when it is 0).
    pub fn rec_sum(&self) -> f64 {
        self.rec_sum
    }
}
