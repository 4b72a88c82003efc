//! Helpers for fetchers that certify a quiet stretch
//! (`WorkFetcher::quiet_until`): the estimator's bounds of every job's
//! remaining time over a stretch, and the search for the longest stretch a
//! certificate covers.

use vcsim_framework::{PolicyResult, Time, View};

/// The least and the greatest remaining time of each job of the view (by
/// index) over the views from now to `until`; None if the estimator cannot
/// bound some job.
pub fn remaining_bounds(
    v: &View,
    until: Time,
    lo: &mut Vec<f64>,
    hi: &mut Vec<f64>,
) -> PolicyResult<bool> {
    lo.clear();
    hi.clear();
    for j in v.jobs() {
        match v.remaining_bounds(j, until)? {
            Some((a, b)) => {
                lo.push(a);
                hi.push(b);
            }
            None => return Ok(false),
        }
    }
    Ok(true)
}

/// The latest step boundary `t <= limit` such that `holds(t)` (the answer
/// is certainly the same at every step from now to `t`), found by halving
/// the stretch from `limit` down to the current step alone; None if even
/// that cannot be certified. `holds` must be sound (true only where the
/// answer is certain); the search finds the longest stretch when it is also
/// monotone (what holds to `t` holds to any earlier time), and a shorter one
/// otherwise.
pub fn longest(
    v: &View,
    limit: Time,
    mut holds: impl FnMut(Time) -> PolicyResult<bool>,
) -> PolicyResult<Option<Time>> {
    let now = v.now();
    let step = v.prefs().step;
    let steps = ((limit - now) / step).floor().max(0.0);
    // Try the whole stretch first: it is the usual answer; then the
    // current step alone, so that a fetcher about to ask costs two tries.
    if holds(now + steps * step)? {
        return Ok(Some(now + steps * step));
    }
    if steps < 1.0 || !holds(now)? {
        return Ok(None);
    }
    // `good` steps certified, `bad` not.
    let (mut good, mut bad) = (0.0, steps);
    while bad - good > 1.0 {
        let mid = ((good + bad) / 2.0).floor();
        if holds(now + mid * step)? {
            good = mid;
        } else {
            bad = mid;
        }
    }
    Ok(Some(now + good * step))
}
