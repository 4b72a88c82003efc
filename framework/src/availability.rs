//! On/off processes: the host's availability and each server's up/down
//! state. Periods are exponentially distributed (BOINC's `RANDOM_PROCESS`):
//! on periods have mean `mean_on`, off periods `mean_on * (1 - f) / f`, so the
//! long-run on fraction is `f`. The state is sampled at step boundaries and
//! changes at most once per step, as in BOINC's simulator.

use rand::Rng;
use rand_distr::{Distribution, Exp};
use rand_pcg::Pcg64;

/// A continuous alternating process, queried at non-decreasing times.
#[derive(Debug, Clone)]
pub struct OnOffProcess {
    rng: Pcg64,
    on_dist: Option<Exp<f64>>,
    off_dist: Option<Exp<f64>>,
    /// Constant state when the process never changes.
    constant: Option<bool>,
    on: bool,
    period_end: f64,
}

impl OnOffProcess {
    /// `fraction` in [0, 1]; 1 is always on, 0 always off. It starts on.
    pub fn new(fraction: f64, mean_on: f64, rng: Pcg64) -> OnOffProcess {
        let constant = if fraction >= 1.0 {
            Some(true)
        } else if fraction <= 0.0 {
            Some(false)
        } else {
            None
        };
        let mean_off = mean_on * (1.0 - fraction) / fraction.max(1e-12);
        let mut p = OnOffProcess {
            rng,
            on_dist: constant
                .is_none()
                .then(|| Exp::new(1.0 / mean_on).expect("positive mean")),
            off_dist: constant
                .is_none()
                .then(|| Exp::new(1.0 / mean_off).expect("positive mean")),
            constant,
            on: true,
            period_end: 0.0,
        };
        if constant.is_none() {
            p.period_end = p.draw(true);
        }
        p
    }

    fn draw(&mut self, on: bool) -> f64 {
        let d = if on { self.on_dist } else { self.off_dist };
        d.map_or(f64::INFINITY, |d| d.sample(&mut self.rng))
    }

    /// The state at `t`; `t` must not go back in time between calls.
    pub fn state_at(&mut self, t: f64) -> bool {
        if let Some(c) = self.constant {
            return c;
        }
        while self.period_end <= t {
            self.on = !self.on;
            let len = self.draw(self.on);
            self.period_end += len;
        }
        self.on
    }

    /// The first step index after `k` and not after `last` whose sampled
    /// state differs from the state sampled at `k`; None if there is none.
    /// Consumes the process up to that step. Each loop turn moves at least
    /// one step, so it ends within `last - k` turns whatever the periods.
    pub fn next_flip_step(&mut self, k: u64, dt: f64, last: u64) -> Option<u64> {
        if self.constant.is_some() {
            return None;
        }
        let s = self.state_at(k as f64 * dt);
        let mut c = k;
        loop {
            let next = ((self.period_end / dt).ceil() as u64).max(c + 1);
            if next > last {
                return None;
            }
            if self.state_at(next as f64 * dt) != s {
                return Some(next);
            }
            c = next;
        }
    }

    pub fn rng(&mut self) -> &mut impl Rng {
        &mut self.rng
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_long_run_on_fraction_is_the_configured_fraction() {
        let mut p = OnOffProcess::new(0.8, 1000.0, Pcg64::seed_from_u64(3));
        let (mut on, n) = (0u64, 2_000_000u64);
        for k in 0..n {
            on += p.state_at(k as f64 * 60.0) as u64;
        }
        let f = on as f64 / n as f64;
        assert!((f - 0.8).abs() < 0.01, "{f}");
    }

    #[test]
    fn flips_found_by_jumping_agree_with_sampling_every_step() {
        let mut a = OnOffProcess::new(0.7, 500.0, Pcg64::seed_from_u64(9));
        let mut b = OnOffProcess::new(0.7, 500.0, Pcg64::seed_from_u64(9));
        let mut flips = vec![];
        let mut k = 0;
        while k < 20_000 {
            k = a.next_flip_step(k, 60.0, u64::MAX).unwrap();
            flips.push(k);
        }
        let mut stepped = vec![];
        let mut prev = b.state_at(0.0);
        for k in 1..=*flips.last().unwrap() {
            let s = b.state_at(k as f64 * 60.0);
            if s != prev {
                stepped.push(k);
            }
            prev = s;
        }
        assert_eq!(flips, stepped);
    }

    #[test]
    fn always_on_and_always_off() {
        let mut on = OnOffProcess::new(1.0, 10.0, Pcg64::seed_from_u64(1));
        assert!(on.state_at(1e9));
        assert_eq!(on.next_flip_step(0, 60.0, u64::MAX), None);
        let mut off = OnOffProcess::new(0.0, 10.0, Pcg64::seed_from_u64(1));
        assert!(!off.state_at(5.0));
    }
}
