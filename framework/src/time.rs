//! Simulated time: seconds since the start of the run, cut into steps of
//! `step_seconds` (every decision falls on a step boundary).

/// Simulated seconds since the start of the run.
pub type Time = f64;

/// A step index that is never reached (no event pending).
pub const NEVER: u64 = u64::MAX;

/// `3d 04:05:00 (t=273900s)` for a number of seconds.
pub fn format_time(t: Time) -> String {
    let s = t.max(0.0).round() as u64;
    format!(
        "{}d {:02}:{:02}:{:02} (t={}s)",
        s / 86400,
        s / 3600 % 24,
        s / 60 % 60,
        s % 60,
        t
    )
}

/// The run's steps: `nsteps` of `dt` seconds.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub dt: f64,
    pub nsteps: u64,
}

impl Clock {
    pub fn new(duration: f64, dt: f64) -> Clock {
        Clock {
            dt,
            nsteps: ((duration / dt).ceil() as u64).max(1),
        }
    }

    /// The time of step `k`'s boundary.
    pub fn time(&self, k: u64) -> Time {
        k as f64 * self.dt
    }

    /// The first step whose boundary is at or after `t`; [`NEVER`] when that
    /// is past the end of the run (so no caller ever loops towards it).
    pub fn step_at_or_after(&self, t: Time) -> u64 {
        if t <= 0.0 {
            return 0;
        }
        // Past the end, or NaN.
        if t.is_nan() || t > self.time(self.nsteps) {
            return NEVER;
        }
        let mut k = (t / self.dt).ceil() as u64;
        // The division may be off by one ulp either way.
        if (k as f64) * self.dt < t {
            k += 1;
        } else if k > 0 && ((k - 1) as f64) * self.dt >= t {
            k -= 1;
        }
        k
    }
}

impl Clock {
    /// The first step whose boundary is after `t` (strictly).
    pub fn step_after(&self, t: Time) -> u64 {
        match self.step_at_or_after(t) {
            NEVER => NEVER,
            k if self.time(k) <= t => k.saturating_add(1),
            k => k,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_at_or_after_a_time() {
        let c = Clock::new(600.0, 60.0);
        assert_eq!(c.nsteps, 10);
        assert_eq!(c.step_at_or_after(-5.0), 0);
        assert_eq!(c.step_at_or_after(60.0), 1);
        assert_eq!(c.step_at_or_after(60.5), 2);
        assert_eq!(c.step_at_or_after(600.0), 10);
        assert_eq!(c.step_at_or_after(600.1), NEVER);
        assert_eq!(c.step_at_or_after(1e300), NEVER);
        assert_eq!(c.step_after(60.0), 2);
        assert_eq!(c.step_after(59.0), 1);
        assert_eq!(c.step_at_or_after(f64::INFINITY), NEVER);
        assert_eq!(c.step_at_or_after(f64::NAN), NEVER);
        // 3 x 0.1 / 0.1 rounds up to 3.0000000000000004: still step 3.
        let c = Clock::new(1.0, 0.1);
        assert_eq!(c.step_at_or_after(c.time(3)), 3);
    }

    #[test]
    fn times_read_as_days_hours_minutes() {
        assert_eq!(format_time(273900.0), "3d 04:05:00 (t=273900s)");
    }
}
