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

/// The least and greatest [`remaining`] of a job over the views from
/// `v.now()` to `until`, its static estimate being `e`: exact (the same
/// computation) for a job that does not compute, and for one that does the
/// range of `(1 - F)(c + (1 - F) E)` with F and c growing linearly, widened
/// by far more than rounding can move it.
pub fn remaining_bounds(v: &View, job: &Job, until: f64, e: f64) -> (f64, f64) {
    let (f0, c0) = (v.fraction_done(job), v.run_seconds(job));
    let r0 = remaining(f0, c0, e);
    let a = v.fraction_done_rate(job);
    let span = until - v.now();
    if !v.progresses(job) || span <= 0.0 {
        return (r0, r0);
    }
    let f1 = f0 + a * span;
    if f1 >= 1.0 - 1e-9 {
        // It may finish within the span (the simulator's event): any value down to 0.
        return (0.0, r0.max(e).max(c0 + span));
    }
    // r(t) = u (c + u e), u = 1 - F = u0 - a t, c = c0 + t: a quadratic.
    let u0 = 1.0 - f0;
    let poly = |t: f64| {
        let u = u0 - a * t;
        u * (c0 + t + u * e)
    };
    let k2 = e * a * a - a;
    let k1 = (u0 - a * c0) - 2.0 * e * u0 * a;
    let mut lo = poly(0.0).min(poly(span)).min(r0);
    let mut hi = poly(0.0).max(poly(span)).max(r0);
    if k2 != 0.0 {
        let t = -k1 / (2.0 * k2);
        if t > 0.0 && t < span {
            lo = lo.min(poly(t));
            hi = hi.max(poly(t));
        }
    }
    let tol = 1e-9 * (hi.abs() + e.abs() + c0.abs() + span + 1.0);
    ((lo - tol).max(0.0), hi + tol)
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
    fn remaining_bounds(
        &self,
        v: &View,
        job: &Job,
        until: f64,
    ) -> PolicyResult<Option<(f64, f64)>> {
        Ok(Some(remaining_bounds(
            v,
            job,
            until,
            job.estimated_seconds(),
        )))
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
    fn remaining_bounds(
        &self,
        v: &View,
        job: &Job,
        until: f64,
    ) -> PolicyResult<Option<(f64, f64)>> {
        let e = job.estimated_seconds() * self.dcf(job.project);
        Ok(Some(remaining_bounds(v, job, until, e)))
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
    fn the_bounds_hold_the_estimates_a_running_job_gets_step_by_step() {
        use vcsim_framework::testing::{add_job, state, JobSpec};
        use vcsim_framework::View;
        let st0 = state(
            "name = \"t\"\nduration_days = 1\n[host]\nncpus = 1\ncpu_flops = 1e9\n[[project]]\nname = \"A\"\nresource_share = 1\nlatency_bound_days = 9\n[[project.app]]\nname = \"a\"\nflops_estimate = 1e12\nflops_mean = 1e12\n",
        );
        // Estimates 4x too low, right, and 4x too high; just started or half done.
        for (est, done) in [
            (2.5e11, 0.0),
            (1e12, 0.0),
            (4e12, 0.0),
            (2.5e11, 0.5),
            (4e12, 0.3),
        ] {
            let mut st = st0.clone();
            let mut s = JobSpec::queued(0, 1e12, 9.0 * 86400.0).running(done);
            s.flops_estimate = est;
            let id = add_job(&mut st, s);
            let jc = Jc1;
            let v = View::new(&st, &jc, 0.0);
            let j = st.job(id).unwrap();
            let until = 900.0 * 60.0;
            let (lo, hi) = jc.remaining_bounds(&v, j, until).unwrap().unwrap();
            for k in 0..=900 {
                let r = jc.remaining_seconds(&v.at(k as f64 * 60.0), j).unwrap();
                assert!(
                    lo <= r && r <= hi,
                    "est {est}, done {done}: {r} at step {k} outside [{lo}, {hi}]"
                );
            }
        }
    }

    #[test]
    fn dcf_stays_within_its_bounds() {
        let mut jc = Jc2::default();
        jc.learn(1, 1e9, 1.0);
        assert_eq!(jc.dcf(1), DCF_MAX);
        assert_eq!(jc.dcf(0), 1.0);
    }
}
