//! Test fixture: a CPU scheduler that panics once the simulation has run
//! for a day, a fetcher whose constructor panics, and an estimator whose
//! `correction` (a call vcsim's trait cannot fail) panics. The host must
//! turn each into an error of the run that names the plugin and the call.

use vcsim_plugin_sdk::*;

#[derive(Default)]
pub struct Panicky;

impl CpuScheduler for Panicky {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        if v.now() > 86400.0 {
            panic!("deliberate panic at t = {:.0}", v.now());
        }
        if let Some(j) = v.jobs().iter().find(|j| j.is_runnable()) {
            out.push(j.id, RunMode::RoundRobin);
        }
        Ok(())
    }
}

pub struct NoCreate;

impl Default for NoCreate {
    fn default() -> Self {
        panic!("deliberate panic in the constructor")
    }
}

impl WorkFetcher for NoCreate {
    fn request(&self, _v: &View) -> PolicyResult<Option<WorkRequest>> {
        Ok(None)
    }
}

#[derive(Default)]
pub struct BadCorrection;

impl CompletionEstimator for BadCorrection {
    fn remaining_seconds(&self, _v: &EstimateView, job: &Job) -> PolicyResult<f64> {
        Ok((1.0 - job.fraction_done) * job.estimated_seconds)
    }
    fn correction(&self, project: usize) -> f64 {
        panic!("deliberate panic in correction({project})")
    }
}

export_cpu!(Panicky => "panicky", "runs one job, and panics after a day [fixture]");
export_fetch!(NoCreate => "no-create", "panics when created [fixture]");
export_estimate!(BadCorrection => "bad-correction", "panics in correction [fixture]");
