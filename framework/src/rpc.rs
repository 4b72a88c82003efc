//! The scheduler-RPC timing and retry rules of `rpc-timing-and-retry`,
//! shared by every work fetcher: the per-project minimum RPC time, randomized
//! exponential back-off, the project's request delay, re-reading the master
//! file, and the resource debt used to pick a project for a report session.
//! Constants are BOINC 2007's (`scheduler_op.h`, `client_state.h`).

use rand::Rng;

/// Least back-off after a failure (`SCHED_RETRY_DELAY_MIN`, scheduler_op.h).
pub const SCHED_RETRY_DELAY_MIN: f64 = 60.0;
/// Greatest back-off (`SCHED_RETRY_DELAY_MAX`, scheduler_op.h): 4 hours.
pub const SCHED_RETRY_DELAY_MAX: f64 = 14400.0;
/// Failures after which the back-off exponent stops growing and the master
/// file is re-read (`RETRY_CAP`).
pub const RETRY_CAP: u32 = 10;
/// Re-read the master file every this many RPC failures (the seed's `MASTER_FETCH_PERIOD`).
pub const MASTER_FETCH_PERIOD: u32 = 10;
/// Master-fetch failures after which the project is left alone for a day (`MASTER_FETCH_RETRY_CAP`).
pub const MASTER_FETCH_RETRY_CAP: u32 = 3;
/// How long to leave a project whose master file cannot be read (`MASTER_FETCH_INTERVAL`).
pub const MASTER_FETCH_INTERVAL: f64 = 86400.0;
/// Decay of the exponentially averaged CPU time: a factor of e every week
/// (the seed's `EXP_DECAY_RATE`).
pub const EXP_DECAY_RATE: f64 = 1.0 / (7.0 * 86400.0);
/// A finished job is reported at once when its deadline is this near
/// (`REPORT_DEADLINE_CUSHION`, at least the work buffer's minimum).
pub const REPORT_DEADLINE_CUSHION: f64 = 86400.0;
/// A finished job is reported at once when it has waited longer than this
/// (BOINC 2007; today's client waits an hour, [`MAX_REPORT_DELAY`]).
pub const REPORT_MAX_WAIT: f64 = 86400.0;
/// Today's client's longest wait to report a finished job
/// (`MAX_REPORT_DELAY`, client_state.h).
pub const MAX_REPORT_DELAY: f64 = 3600.0;
/// Today's client reports a project's finished jobs once this many wait
/// (`RESULT_REPORT_IF_AT_LEAST_N`).
pub const RESULT_REPORT_IF_AT_LEAST_N: usize = 64;
/// At most this many RPCs in one step, so that a policy that keeps asking
/// cannot loop for ever (BOINC 2007's simulator repeats its poll until
/// nothing happens).
pub const MAX_RPCS_PER_STEP: usize = 32;

/// When the client reports finished jobs, and how many RPCs it makes in a
/// step: where BOINC's 2007 client and simulator and today's client and
/// emulator differ. A work fetcher names its client's
/// ([`crate::policy::WorkFetcher::client_rules`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientRules {
    /// A finished job is overdue once it has waited longer than this.
    pub report_max_wait: f64,
    /// A project with this many finished jobs waiting reports them.
    pub report_at_ready: Option<usize>,
    /// RPCs in one step.
    pub rpcs_per_step: usize,
}

impl ClientRules {
    /// BOINC 2007 (`find_project_with_overdue_results`, `sim.C`): report a
    /// day after finishing; as many RPCs a step as the client wants.
    pub const BOINC_2007: ClientRules = ClientRules {
        report_max_wait: REPORT_MAX_WAIT,
        report_at_ready: None,
        rpcs_per_step: MAX_RPCS_PER_STEP,
    };
    /// Today's client (`cs_scheduler.cpp`) and emulator (`client/sim`):
    /// report an hour after finishing or at 64 waiting; one RPC a step.
    pub const TODAY: ClientRules = ClientRules {
        report_max_wait: MAX_REPORT_DELAY,
        report_at_ready: Some(RESULT_REPORT_IF_AT_LEAST_N),
        rpcs_per_step: 1,
    };
}

/// BOINC's `calculate_exponential_backoff`: uniform on [MIN, min(MAX, e^n)),
/// exactly MIN when e^n is not above it.
pub fn exponential_backoff<R: Rng + ?Sized>(n: u32, rng: &mut R) -> f64 {
    let cap = (n.min(RETRY_CAP) as f64).exp().min(SCHED_RETRY_DELAY_MAX);
    if cap <= SCHED_RETRY_DELAY_MIN {
        SCHED_RETRY_DELAY_MIN
    } else {
        rng.gen_range(SCHED_RETRY_DELAY_MIN..cap)
    }
}

/// Per-project RPC timing state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RpcState {
    /// Earliest time of the next RPC (0: now).
    pub min_rpc_time: f64,
    pub nrpc_failures: u32,
    pub master_fetch_failures: u32,
    /// The project's scheduler list must be re-read before the next RPC.
    pub master_fetch_pending: bool,
    pub last_rpc: Option<f64>,
}

impl RpcState {
    /// Can an RPC go to this project now?
    pub fn contactable(&self, now: f64) -> bool {
        self.min_rpc_time <= now
    }

    /// Only ever moves the minimum RPC time later (`set_min_rpc_time`).
    pub fn set_min_rpc_time(&mut self, t: f64) {
        if t > self.min_rpc_time {
            self.min_rpc_time = t;
        }
    }

    /// All of the project's schedulers failed, or asked-for work did not come,
    /// or a job failed: BOINC's `backoff`.
    // `is_multiple_of` is newer than the workspace's rust-version (1.80).
    #[allow(unknown_lints, clippy::manual_is_multiple_of)]
    pub fn backoff<R: Rng + ?Sized>(&mut self, now: f64, rng: &mut R) {
        if self.master_fetch_failures >= MASTER_FETCH_RETRY_CAP {
            self.master_fetch_pending = true;
            self.set_min_rpc_time(now + MASTER_FETCH_INTERVAL);
            return;
        }
        if self.nrpc_failures > 0
            && self.nrpc_failures % MASTER_FETCH_PERIOD == 0
            && !self.master_fetch_pending
        {
            // Every MASTER_FETCH_PERIOD failures the scheduler list is re-read.
            self.master_fetch_pending = true;
        }
        self.nrpc_failures += 1;
        let delay = exponential_backoff(self.nrpc_failures, rng);
        self.set_min_rpc_time(now + delay);
    }

    /// A reply came back.
    pub fn succeeded(&mut self, now: f64, request_delay: f64) {
        self.nrpc_failures = 0;
        self.min_rpc_time = 0.0;
        if request_delay > 0.0 {
            self.set_min_rpc_time(now + request_delay);
        }
    }

    /// The master file was read (`ok`) or could not be. The seed clears the
    /// RPC failures only "if got any new scheduler urls"; a simulated
    /// project's list never changes, so a read leaves them and the back-off
    /// keeps growing instead of restarting at one minute every ten
    /// failures. The master-file failures are consecutive ones (BOINC's
    /// client clears them when a read succeeds): kept, three of them left
    /// the project a day at every later failure, however many replies came
    /// between (a project up half the time got a third of its share).
    pub fn master_fetched(&mut self, ok: bool) {
        if ok {
            self.master_fetch_pending = false;
            self.master_fetch_failures = 0;
        } else {
            self.master_fetch_failures += 1;
        }
    }
}

/// The RPC document's resource debt: share / exponentially averaged CPU.
pub fn resource_debt(resource_share: f64, exp_avg_cpu: f64) -> f64 {
    resource_share / exp_avg_cpu.max(1e-6)
}

/// Decays an exponentially averaged CPU time over `dt` and adds `cpu`.
pub fn decay_exp_avg(exp_avg: f64, dt: f64, cpu: f64) -> f64 {
    exp_avg * (-dt * EXP_DECAY_RATE).exp() + cpu
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn backoff_is_the_minimum_until_e_to_the_n_exceeds_it() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        for n in 1..=4 {
            assert_eq!(exponential_backoff(n, &mut rng), 60.0);
        }
        for _ in 0..200 {
            let d = exponential_backoff(5, &mut rng);
            assert!((60.0..5f64.exp()).contains(&d));
            let d = exponential_backoff(40, &mut rng);
            assert!((60.0..=SCHED_RETRY_DELAY_MAX).contains(&d));
        }
    }

    #[test]
    fn a_backoff_sequence_with_a_fixed_seed_is_reproducible_and_bounded() {
        let run = || {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
            let mut st = RpcState::default();
            let mut now = 0.0;
            let mut delays = vec![];
            for _ in 0..12 {
                st.backoff(now, &mut rng);
                delays.push(st.min_rpc_time - now);
                now = st.min_rpc_time;
            }
            (delays, st)
        };
        let (a, st) = run();
        assert_eq!(a, run().0);
        assert_eq!(&a[..4], &[60.0; 4]);
        assert!(a[4] >= 60.0 && a[4] < 5f64.exp());
        assert!(a.iter().all(|d| *d <= SCHED_RETRY_DELAY_MAX));
        // The tenth failure asks for the master file.
        assert!(st.master_fetch_pending);
        assert_eq!(st.nrpc_failures, 12);
    }

    #[test]
    fn a_reply_clears_failures_and_honours_the_request_delay() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        let mut st = RpcState::default();
        st.backoff(0.0, &mut rng);
        st.succeeded(100.0, 600.0);
        assert_eq!(st.nrpc_failures, 0);
        assert_eq!(st.min_rpc_time, 700.0);
        st.set_min_rpc_time(10.0);
        assert_eq!(st.min_rpc_time, 700.0, "never moved earlier");
    }

    #[test]
    fn reading_an_unchanged_master_file_does_not_restart_the_back_off() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let mut st = RpcState::default();
        let mut now = 0.0;
        let mut delays = vec![];
        for _ in 0..30 {
            if st.master_fetch_pending {
                st.master_fetched(true);
                assert!(!st.master_fetch_pending);
            }
            st.backoff(now, &mut rng);
            delays.push(st.min_rpc_time - now);
            now = st.min_rpc_time;
        }
        // Ten failures in, the exponent is capped: no delay after the tenth
        // is the one-minute minimum of a fresh back-off's first failures.
        assert_eq!(st.nrpc_failures, 30);
        assert!(delays[10..].iter().all(|d| *d > 60.0), "{delays:?}");
        assert_eq!(delays.iter().filter(|d| **d == 60.0).count(), 4);
    }

    #[test]
    fn three_failed_master_fetches_leave_the_project_for_a_day() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        let mut st = RpcState::default();
        for _ in 0..3 {
            st.master_fetched(false);
        }
        st.backoff(50.0, &mut rng);
        assert_eq!(st.min_rpc_time, 50.0 + MASTER_FETCH_INTERVAL);
        assert!(st.master_fetch_pending);
        // A read that succeeds ends the run of failed reads: the next
        // failure backs off by the exponential rule, not a day.
        st.master_fetched(true);
        st.succeeded(MASTER_FETCH_INTERVAL + 50.0, 0.0);
        st.backoff(MASTER_FETCH_INTERVAL + 100.0, &mut rng);
        assert_eq!(st.min_rpc_time, MASTER_FETCH_INTERVAL + 160.0);
    }
}
