//! Completion estimation.
//!
//! Both estimators give BOINC's remaining time `F A + (1 - F) B`: F the
//! fraction done, A = c / F - c the estimate from the elapsed run time c, and
//! B = (1 - F) E the statically predicted remainder, E the static estimate.
//! - JC1: E = FLOPs estimate / speed (no correction; BOINC's `--dcf_dont_use`).
//! - JC2: E is multiplied by the project's duration correction factor (DCF),
//!   which rises at once when a job overruns and falls smoothly.

use vcsim_framework::{CompletionEstimator, Job, PolicyResult, View};

/// `F A + (1 - F)^2 E`.
pub fn remaining(f: f64, elapsed: f64, static_estimate: f64) -> f64 {
    if f >= 1.0 {
        return 0.0;
    }
    if f <= 0.0 || elapsed <= 0.0 {
        return static_estimate;
    }
    let a = elapsed / f - elapsed;
    f * a + (1.0 - f) * (1.0 - f) * static_estimate
}

#[derive(Default)]
pub struct Jc1;

impl CompletionEstimator for Jc1 {
    fn remaining_seconds(&self, v: &View, job: &Job) -> PolicyResult<f64> {
        Ok(remaining(
            v.fraction_done(job),
            v.run_seconds(job),
            job.estimated_seconds(),
        ))
    }
}

/// Bounds of the DCF (BOINC's clamp).
pub const DCF_MIN: f64 = 0.01;
pub const DCF_MAX: f64 = 100.0;

#[derive(Default)]
pub struct Jc2 {
    pub dcf: Vec<f64>,
}

impl Jc2 {
    pub fn dcf(&self, p: usize) -> f64 {
        self.dcf.get(p).copied().unwrap_or(1.0)
    }

    /// BOINC's `update_duration_correction_factor` after a job of `p` ran
    /// `actual` seconds against an uncorrected estimate of `estimate`.
    pub fn learn(&mut self, p: usize, actual: f64, estimate: f64) {
        if self.dcf.len() <= p {
            self.dcf.resize(p + 1, 1.0);
        }
        if estimate <= 0.0 {
            return;
        }
        let old = self.dcf[p];
        let raw = actual / estimate;
        let adj = actual / (estimate * old);
        let new = if adj > 1.1 {
            raw
        } else if adj < 0.1 {
            0.99 * old + 0.01 * raw
        } else {
            0.9 * old + 0.1 * raw
        };
        self.dcf[p] = new.clamp(DCF_MIN, DCF_MAX);
    }
}

impl CompletionEstimator for Jc2 {
    fn remaining_seconds(&self, v: &View, job: &Job) -> PolicyResult<f64> {
        let e = job.estimated_seconds() * self.dcf(job.project);
        Ok(remaining(v.fraction_done(job), v.run_seconds(job), e))
    }
    fn correction(&self, _v: &View, project: usize) -> PolicyResult<f64> {
        Ok(self.dcf(project))
    }
    fn on_job_finished(&mut self, v: &View, job: &Job) -> PolicyResult<()> {
        self.learn(job.project, v.run_seconds(job), job.estimated_seconds());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaining_time_blends_elapsed_and_static_estimates() {
        assert_eq!(remaining(0.0, 0.0, 100.0), 100.0);
        assert_eq!(remaining(1.0, 50.0, 100.0), 0.0);
        // Half done in 60 s, static 100 s: A = 60, B = 50: 0.5 x 60 + 0.5 x 50.
        assert!((remaining(0.5, 60.0, 100.0) - 55.0).abs() < 1e-12);
    }

    #[test]
    fn dcf_rises_at_once_and_falls_smoothly() {
        let mut jc = Jc2::default();
        // A job that takes 4x its estimate: the DCF jumps to 4.
        jc.learn(0, 400.0, 100.0);
        assert_eq!(jc.dcf(0), 4.0);
        // Jobs that take exactly the estimate: 0.9 x 4 + 0.1 x 1 = 3.7, then 3.43...
        jc.learn(0, 100.0, 100.0);
        assert!((jc.dcf(0) - 3.7).abs() < 1e-12);
        jc.learn(0, 100.0, 100.0);
        assert!((jc.dcf(0) - 3.43).abs() < 1e-12);
        let mut last = jc.dcf(0);
        for _ in 0..100 {
            jc.learn(0, 100.0, 100.0);
            assert!(jc.dcf(0) < last && jc.dcf(0) >= 1.0);
            last = jc.dcf(0);
        }
        assert!((last - 1.0).abs() < 1e-3);
    }

    #[test]
    fn dcf_stays_within_its_bounds() {
        let mut jc = Jc2::default();
        jc.learn(1, 1e9, 1.0);
        assert_eq!(jc.dcf(1), DCF_MAX);
        assert_eq!(jc.dcf(0), 1.0);
    }
}
