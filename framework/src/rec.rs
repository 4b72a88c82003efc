//! Recent estimated credit (REC): today's BOINC client's measure of what
//! each project has had of the host, an exponential average of the peak
//! FLOPs its jobs computed with, in credits per day (BOINC's `update_rec`).
//!
//! vcsim folds it at the simulator's events, where the usage rates change,
//! so the average is exact between them (BOINC's client folds every 60 s).
//! The credit counts the instance-seconds a project's jobs computed, each
//! resource at its peak FLOPS (see `book/src/todays-client.md`).

/// Credits per FLOP: 200 credits a day for one GFLOPS (BOINC's
/// `COBBLESTONE_SCALE`).
pub const COBBLESTONE_SCALE: f64 = 200.0 / 86400e9;

/// The credit of instance-seconds on instances of given peak FLOPS:
/// `(seconds, flops)` per resource.
pub fn credit(usage: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    usage
        .into_iter()
        .map(|(s, flops)| s * flops * COBBLESTONE_SCALE)
        .sum()
}

/// `rec` after `span` seconds in which `credit` was earned at a steady rate
/// (BOINC's `update_average`): it decays by half every `half_life` seconds
/// and moves towards the credit per day of the span.
pub fn fold(rec: f64, span: f64, credit: f64, half_life: f64) -> f64 {
    if span <= 0.0 {
        return rec;
    }
    let w = (-span * std::f64::consts::LN_2 / half_life).exp();
    if 1.0 - w > 1e-6 {
        rec * w + (1.0 - w) * credit / (span / 86400.0)
    } else {
        // A span much shorter than the half-life: the first-order form.
        rec + std::f64::consts::LN_2 * credit * 86400.0 / half_life
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_gflops_all_the_time_converges_to_200_credits_a_day() {
        let (h, mut rec) = (10.0 * 86400.0, 0.0);
        // One GFLOPS for a day is 200 credits; 500 days are 50 half-lives.
        for _ in 0..500 {
            rec = fold(rec, 86400.0, 200.0, h);
        }
        assert!((rec - 200.0).abs() < 1e-6, "{rec}");
    }

    #[test]
    fn after_one_half_life_of_idleness_rec_has_halved() {
        let h = 10.0 * 86400.0;
        assert!((fold(100.0, h, 0.0, h) - 50.0).abs() < 1e-9);
    }

    #[test]
    fn short_spans_add_up_as_one_long_span() {
        let h = 10.0 * 86400.0;
        let mut a = 40.0;
        for _ in 0..1440 {
            a = fold(a, 60.0, 200.0 / 1440.0, h);
        }
        let b = fold(40.0, 86400.0, 200.0, h);
        assert!((a - b).abs() < 1e-3 * b, "{a} {b}");
    }
}
