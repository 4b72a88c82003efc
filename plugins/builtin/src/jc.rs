//! Completion estimation.
//!
//! Both estimators give BOINC's remaining time `F A + (1 - F) B`: F the
//! fraction done, A = c / F - c the estimate from the elapsed run time c, and
//! B = (1 - F) E the statically predicted remainder, E the static estimate.
//! - JC1: E = FLOPs estimate / speed (no correction; BOINC's `--dcf_dont_use`).
//! - JC2: E is multiplied by the project's duration correction factor (DCF),
//!   which rises at once when a job overruns and falls smoothly.
//!
//! JC3 is today's client's (`ACTIVE_TASK::est_dur` with DCF fixed at 1, as
//! servers tell clients since 7.0.28): the static estimate's remainder
//! `(1 - F) E` until the job has run longer than E, then the dynamic one
//! `c (1 - F) / F`; E carries the server's per-host correction (the
//! average overrun of the host's jobs, after more than ten).

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

/// Today's client's remaining time (`est_dur` minus the elapsed time, DCF
/// 1): `f` fraction done, `c` elapsed seconds, `e` the static estimate.
pub fn remaining_now(f: f64, c: f64, e: f64) -> f64 {
    if f >= 1.0 {
        0.0
    } else if f <= 0.0 {
        if c > 0.0 {
            // No progress reported yet: the estimate grows with the elapsed time.
            c / (1.0 - (-c / e).exp()) - c
        } else {
            e
        }
    } else if c > e {
        c * (1.0 - f) / f
    } else {
        (1.0 - f) * e
    }
}

/// The least and greatest [`remaining_now`] of `job` over the views from
/// `v.now()` to `until`: exact for a job that does not compute; for one
/// that does, each piece (`(1 - F) E`, then `c (1 - F) / F`) bounded by
/// interval arithmetic on F and c, widened by far more than rounding can
/// move it. None when it cannot say.
pub fn remaining_now_bounds(v: &View, job: &Job, until: f64, e: f64) -> Option<(f64, f64)> {
    let (f0, c0) = (v.fraction_done(job), v.run_seconds(job));
    let r0 = remaining_now(f0, c0, e);
    let a = v.fraction_done_rate(job);
    let span = until - v.now();
    if !v.progresses(job) || span <= 0.0 {
        return Some((r0, r0));
    }
    let tol = |hi: f64| 1e-9 * (hi.abs() + e.abs() + c0.abs() + span + 1.0);
    if f0 <= 0.0 && a <= 0.0 {
        // Running without progress (its CPUs all taken by GPU jobs): the
        // estimate from the elapsed time alone, which falls as it grows.
        let end = remaining_now(0.0, c0 + span, e);
        let t = tol(r0);
        return Some(((end - t).max(0.0), r0 + t));
    }
    let f = |t: f64| (f0 + a * t).min(1.0);
    let (mut lo, mut hi) = (r0, r0);
    // Static piece while c <= e.
    let t_cross = (e - c0).max(0.0);
    if c0 <= e {
        let te = span.min(t_cross);
        lo = lo.min((1.0 - f(te)) * e);
        hi = hi.max((1.0 - f(0.0)) * e);
    }
    // Dynamic piece once c > e.
    if c0 + span > e {
        let ts = t_cross.min(span);
        let (fs, fe) = (f(ts), f(span));
        if fs <= 0.0 {
            return None;
        }
        lo = lo.min((c0 + ts) * (1.0 - fe) / fe);
        hi = hi.max((c0 + span) * (1.0 - fs) / fs);
    }
    if f0 + a * span >= 1.0 - 1e-9 {
        // It may finish within the span (the simulator's event): down to 0.
        lo = 0.0;
    }
    let t = tol(hi);
    Some(((lo - t).max(0.0), hi + t))
}

/// Finished jobs a server needs before it corrects a host's estimates
/// (`MIN_HOST_SAMPLES`).
pub const SERVER_MIN_SAMPLES: u32 = 10;
/// Samples averaged plainly before the average turns exponential
/// (`HAV_AVG_THRESH`), its weight then (`HAV_AVG_WEIGHT`), and the most a
/// sample may exceed the average by (`HAV_AVG_LIMIT`).
pub const SERVER_AVG_THRESHOLD: u32 = 20;
pub const SERVER_AVG_WEIGHT: f64 = 0.01;
pub const SERVER_AVG_LIMIT: f64 = 10.0;
/// A server raises its speed estimate of a host at most this much.
pub const SERVER_MAX_SPEEDUP: f64 = 250.0;

/// The server's per-host correction of run-time estimates (BOINC's
/// `estimate_flops` in `sched_version.cpp`), per project: the average of
/// actual over estimated run time of the host's finished jobs, used once
/// more than ten are in.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServerCorrection {
    pub n: u32,
    pub avg: f64,
}

impl ServerCorrection {
    /// A job ran `actual` seconds against an uncorrected estimate of `estimate`.
    pub fn learn(&mut self, actual: f64, estimate: f64) {
        if estimate <= 0.0 || !actual.is_finite() || actual < 0.0 {
            return;
        }
        let mut x = actual / estimate;
        self.n += 1;
        if self.n <= SERVER_AVG_THRESHOLD {
            self.avg += (x - self.avg) / self.n as f64;
        } else {
            x = x.min(SERVER_AVG_LIMIT * self.avg);
            self.avg += SERVER_AVG_WEIGHT * (x - self.avg);
        }
    }
    /// The factor on the project's estimates: 1 until more than ten jobs.
    pub fn factor(&self) -> f64 {
        if self.n > SERVER_MIN_SAMPLES && self.avg > 0.0 {
            self.avg.max(1.0 / SERVER_MAX_SPEEDUP)
        } else {
            1.0
        }
    }
}

/// JC3: today's client's estimate, with no DCF. With `server_corrects`
/// (`jc3`), the static estimate carries the server's per-host correction,
/// as a real client's does; without (`jc3-uncorrected`), it is the
/// project's FLOPs estimate over the host's speed, as in BOINC's emulator.
#[derive(Default)]
pub struct Jc3 {
    pub server_corrects: bool,
    pub correction: Vec<ServerCorrection>,
}

impl Jc3 {
    pub fn new(server_corrects: bool) -> Jc3 {
        Jc3 {
            server_corrects,
            correction: Vec::new(),
        }
    }
    fn factor(&self, p: usize) -> f64 {
        if self.server_corrects {
            self.correction.get(p).map_or(1.0, ServerCorrection::factor)
        } else {
            1.0
        }
    }
}

impl CompletionEstimator for Jc3 {
    fn remaining_seconds(&self, v: &View, job: &Job) -> PolicyResult<f64> {
        Ok(remaining_now(
            v.fraction_done(job),
            v.run_seconds(job),
            job.estimated_seconds() * self.factor(job.project),
        ))
    }
    fn remaining_bounds(
        &self,
        v: &View,
        job: &Job,
        until: f64,
    ) -> PolicyResult<Option<(f64, f64)>> {
        let e = job.estimated_seconds() * self.factor(job.project);
        Ok(remaining_now_bounds(v, job, until, e))
    }
    /// The server's correction: what the server's own estimates carry too.
    fn correction(&self, _v: &View, project: usize) -> PolicyResult<f64> {
        Ok(self.factor(project))
    }
    fn on_job_finished(&mut self, v: &View, job: &Job) -> PolicyResult<()> {
        if self.correction.len() <= job.project {
            self.correction
                .resize(job.project + 1, ServerCorrection::default());
        }
        self.correction[job.project].learn(v.run_seconds(job), job.estimated_seconds());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_corrects_after_more_than_ten_jobs_by_their_average_overrun() {
        let mut c = ServerCorrection::default();
        for _ in 0..10 {
            c.learn(300.0, 100.0);
        }
        // Ten jobs that took 3 times their estimate: not yet.
        assert_eq!(c.factor(), 1.0);
        c.learn(100.0, 100.0);
        // The eleventh: the plain mean of (10 x 3 + 1) / 11.
        assert!((c.factor() - 31.0 / 11.0).abs() < 1e-12);
    }

    #[test]
    fn todays_estimate_keeps_the_static_remainder_until_the_job_overruns() {
        // Static 100 s: 30% done after 40 s leaves 70 s (the elapsed time is ignored).
        assert!((remaining_now(0.3, 40.0, 100.0) - 70.0).abs() < 1e-12);
        // After 150 s, 60% done: the dynamic estimate, 150 x 0.4 / 0.6 = 100 s.
        assert!((remaining_now(0.6, 150.0, 100.0) - 100.0).abs() < 1e-9);
        assert_eq!(remaining_now(0.0, 0.0, 100.0), 100.0);
        assert_eq!(remaining_now(1.0, 10.0, 100.0), 0.0);
    }

    #[test]
    fn todays_bounds_hold_for_many_jobs() {
        use vcsim_framework::testing::{add_job, state, JobSpec};
        let st0 = state(
            "name = \"t\"\nduration_days = 1\n[host]\nncpus = 1\ncpu_flops = 1e9\n[[project]]\nname = \"A\"\nresource_share = 1\nlatency_bound_days = 9\n[[project.app]]\nname = \"a\"\nflops_estimate = 1e12\nflops_mean = 1e12\n",
        );
        let mut x: u64 = 12345;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1_000_000) as f64 / 1_000_000.0
        };
        for _ in 0..3000 {
            let real = 1e11 + rnd() * 2e13;
            let est = 1e11 + rnd() * 2e13;
            let done = if rnd() < 0.2 { 0.0 } else { rnd() * 0.95 };
            let mut st = st0.clone();
            let mut s = JobSpec::queued(0, real, 9.0 * 86400.0).running(done);
            s.flops_estimate = est;
            let id = add_job(&mut st, s);
            if rnd() < 0.2 {
                // Running without progress: GPU jobs hold its CPUs.
                vcsim_framework::testing::stall(&mut st, id);
            }
            let jc = Jc3::default();
            let v = View::new(&st, &jc, 0.0);
            let j = st.job(id).unwrap();
            let until = (rnd() * 2000.0).floor() * 60.0;
            let (lo, hi) = jc.remaining_bounds(&v, j, until).unwrap().unwrap();
            let mut k = 0.0;
            while k <= until {
                let r = jc.remaining_seconds(&v.at(k), j).unwrap();
                assert!(
                    lo <= r && r <= hi,
                    "real {real} est {est} done {done} until {until}: {r} at {k} outside [{lo}, {hi}]"
                );
                k += 60.0;
            }
        }
    }

    #[test]
    fn todays_bounds_hold_step_by_step() {
        use vcsim_framework::testing::{add_job, state, JobSpec};
        let st0 = state(
            "name = \"t\"\nduration_days = 1\n[host]\nncpus = 1\ncpu_flops = 1e9\n[[project]]\nname = \"A\"\nresource_share = 1\nlatency_bound_days = 9\n[[project.app]]\nname = \"a\"\nflops_estimate = 1e12\nflops_mean = 1e12\n",
        );
        for (est, done) in [
            (2.5e11, 0.0),
            (1e12, 0.0),
            (4e12, 0.0),
            (2.5e11, 0.5),
            (9e11, 0.3),
        ] {
            let mut st = st0.clone();
            let mut s = JobSpec::queued(0, 1e12, 9.0 * 86400.0).running(done);
            s.flops_estimate = est;
            let id = add_job(&mut st, s);
            let jc = Jc3::default();
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
