//! Write a vcsim policy as a compiled plugin (a `cdylib`).
//!
//! Implement the ordinary safe trait of the family — [`CpuScheduler`],
//! [`WorkFetcher`], [`WorkSender`], [`CompletionEstimator`] or
//! [`DiskManager`], which mirror vcsim's own — for a type that is `Default`,
//! and export it with one macro per family:
//!
//! ```ignore
//! use vcsim_dylib_sdk::*;
//!
//! #[derive(Default)]
//! pub struct MyScheduler;
//!
//! impl CpuScheduler for MyScheduler {
//!     fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
//!         for j in v.jobs().iter().filter(|j| j.is_runnable()).take(v.host().ncpus as usize) {
//!             out.push(j.id, RunMode::RoundRobin);
//!         }
//!         Ok(())
//!     }
//! }
//!
//! export_cpu!(MyScheduler => "my-scheduler", "runs the first jobs that arrived");
//! ```
//!
//! with `crate-type = ["cdylib"]` in the plugin's `Cargo.toml`. Each
//! `export_*!` macro is used at most once per library and takes one or more
//! `Type => "name", "summary"` items separated by `;`.
//!
//! The plugin never sees vcsim's Rust types: the host hands it `#[repr(C)]`
//! views (see `vcsim-dylib-abi`), which this crate wraps into safe,
//! borrowed snapshot types ([`View`], [`EstimateView`], [`ServerRequest`],
//! [`DiskView`]). Arrays of the host come as [`Strided`] (a slice whose
//! elements may be longer than this SDK knows, when a newer vcsim passes
//! them): index them, `get`, `iter` them as slices.
//! Times are in simulated seconds; projects and resources are indices.
//!
//! Every method may fail: an error ([`PolicyError::new`]) or a panic ends
//! the run with a message naming the plugin, the policy, the call and the
//! simulated time. A policy that draws at random takes its numbers from
//! [`View::rng`] (named streams of the run's seed), so that runs stay
//! reproducible and a pure method (`request`, `remaining_seconds`) draws
//! the same numbers for the same view.
//!
//! This SDK speaks ABI version [`abi::ABI_VERSION`].[`abi::ABI_MINOR`]; a
//! vcsim of the same major version and the same or a later minor loads
//! its plugins.
//!
//! A policy may say why it decided what it did (ABI 2.3), for `vcsim
//! explain`: a CPU scheduler with [`RunList::push_with_reason`], a fetcher,
//! a sender and a disk manager with their `explain_*` methods (defaults:
//! no reason, at no cost). A [`Reason`] is a text and named numbers.
//!
//! # Safety
//!
//! This crate denies unsafe code except in the module of [`Strided`] (reads
//! of the host's arrays and strings) and in its hidden `__shims` module: the
//! generic `extern "C"` functions the export macros instantiate, which turn
//! the host's pointers into views, catch every panic and write decisions
//! into the host's buffers. Authors write no unsafe code.

#![deny(unsafe_code)]

pub use rand::Rng;
pub use vcsim_dylib_abi as abi;
pub use vcsim_dylib_abi::{
    Candidate, File, Host, Job, ListSimRsc, Prefs, ProjectRsc, ReportedJob, RscInfo, RscRequest,
    FILE_INPUT, FILE_OUTPUT, FILE_STICKY, JOB_FINISHED, JOB_PREEMPTED, JOB_QUEUED, JOB_RUNNING,
    NO_JOB,
};
pub use vcsim_rng::SimRng;

#[allow(unsafe_code)]
mod callbacks;
mod decision;
mod error;
#[allow(unsafe_code)]
mod strided;
mod view;

mod traits;

pub use decision::*;
pub use error::{PolicyError, PolicyResult};
pub use traits::{CompletionEstimator, CpuScheduler, DiskManager, WorkFetcher, WorkSender};

pub use strided::{Iter, Strided};
pub use view::{
    App, DeletionPolicy, DiskView, EstimateView, ListSim, Project, ServerRequest, View,
};

#[doc(hidden)]
#[allow(unsafe_code)]
pub mod __shims;

#[doc(hidden)]
#[macro_export]
macro_rules! __export_family {
    ($table:ident, $ctor:ident, $tables:ident, $export:ident, $get:ident, $sym:ident, $symconst:ident;
     $($ty:ty => $name:literal, $summary:literal);+ $(;)?) => {
        // The entry symbol is the one this SDK's ABI names.
        const _: () = ::core::assert!(
            $crate::abi::str_eq(::core::stringify!($sym), $crate::abi::symbols::$symconst),
            "the export macro's symbol is not the ABI's"
        );
        #[doc(hidden)]
        static $tables: &[$crate::abi::$table] = &[$(
            $crate::__shims::$ctor::<$ty>($name, $summary)
        ),+];
        #[doc(hidden)]
        static $export: $crate::abi::Export<$crate::abi::$table> = $crate::abi::Export {
            abi_version: $crate::abi::ABI_VERSION,
            abi_minor: $crate::abi::ABI_MINOR,
            size: ::core::mem::size_of::<$crate::abi::Export<$crate::abi::$table>>() as u32,
            rustc: $crate::abi::StaticStr::new($crate::abi::RUSTC_VERSION),
            plugin: $crate::abi::StaticStr::new(concat!(
                env!("CARGO_PKG_NAME"),
                " ",
                env!("CARGO_PKG_VERSION")
            )),
            count: <[&str]>::len(&[$($name),+]),
            table: $get,
        };
        #[doc(hidden)]
        extern "C" fn $get(i: usize) -> ::core::option::Option<&'static $crate::abi::$table> {
            $tables.get(i)
        }
        /// The plugin's entry point for this family (vcsim-dylib-abi).
        #[no_mangle]
        pub extern "C" fn $sym() -> &'static $crate::abi::Export<$crate::abi::$table> {
            &$export
        }
    };
}

/// Exports CPU schedulers: `export_cpu!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_cpu {
    ($($t:tt)+) => {
        $crate::__export_family!(CpuTable, cpu_table, __VCSIM_CPU_TABLES, __VCSIM_CPU_EXPORT,
            __vcsim_cpu_table, vcsim_plugin_cpu_v2, CPU; $($t)+);
    };
}

/// Exports work fetchers: `export_fetch!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_fetch {
    ($($t:tt)+) => {
        $crate::__export_family!(FetchTable, fetch_table, __VCSIM_FETCH_TABLES,
            __VCSIM_FETCH_EXPORT, __vcsim_fetch_table, vcsim_plugin_fetch_v2, FETCH; $($t)+);
    };
}

/// Exports work senders: `export_send!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_send {
    ($($t:tt)+) => {
        $crate::__export_family!(SendTable, send_table, __VCSIM_SEND_TABLES,
            __VCSIM_SEND_EXPORT, __vcsim_send_table, vcsim_plugin_send_v2, SEND; $($t)+);
    };
}

/// Exports completion estimators: `export_estimate!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_estimate {
    ($($t:tt)+) => {
        $crate::__export_family!(EstimateTable, estimate_table, __VCSIM_ESTIMATE_TABLES,
            __VCSIM_ESTIMATE_EXPORT, __vcsim_estimate_table, vcsim_plugin_estimate_v2,
            ESTIMATE; $($t)+);
    };
}

/// Exports disk managers: `export_disk!(Type => "name", "summary"; ...)`.
#[macro_export]
macro_rules! export_disk {
    ($($t:tt)+) => {
        $crate::__export_family!(DiskTable, disk_table, __VCSIM_DISK_TABLES,
            __VCSIM_DISK_EXPORT, __vcsim_disk_table, vcsim_plugin_disk_v2, DISK; $($t)+);
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none<T>() -> abi::Array<T> {
        abi::Array {
            ptr: std::ptr::null(),
            len: 0,
            stride: 0,
        }
    }

    fn raw_view(seed: u64, step: u64) -> abi::View {
        abi::View {
            size: std::mem::size_of::<abi::View>() as u32,
            minor: abi::ABI_MINOR,
            now: step as f64 * 60.0,
            seed,
            step,
            host: Host::default(),
            prefs: Prefs::default(),
            on_fraction: 1.0,
            available_seconds: 0.0,
            last_schedule: f64::NEG_INFINITY,
            last_rpc: f64::NAN,
            connection_interval: 0.0,
            host_on: 1,
            disk_suspended: 0,
            total_limit: 0.0,
            core_usage: 0.0,
            rsc: none(),
            projects: none(),
            apps: none(),
            project_rsc: none(),
            jobs: none(),
            files: none(),
            cpu_allowed: 1,
            gpu_allowed: 1,
            rec_half_life: 5.0 * 86400.0,
            host_ctx: std::ptr::null(),
            list_sim: None,
            reason: std::ptr::null_mut(),
            run_list: std::ptr::null_mut(),
        }
    }

    fn view(raw: &abi::View) -> View<'_> {
        View {
            raw,
            rsc: Strided::from_slice(&[]),
            projects: Strided::from_slice(&[]),
            apps: Strided::from_slice(&[]),
            project_rsc: Strided::from_slice(&[]),
            jobs: Strided::from_slice(&[]),
            files: Strided::from_slice(&[]),
        }
    }

    #[test]
    fn a_view_s_rng_is_the_named_stream_of_its_seed_and_step() {
        let raw = raw_view(7, 3);
        let v = view(&raw);
        let a: u64 = v.rng("x").gen();
        assert_eq!(a, v.rng("x").gen::<u64>(), "the same view, the same draws");
        assert_eq!(a, vcsim_rng::stream(7, "plugin:x", 3).gen::<u64>());
        assert_ne!(a, v.rng("y").gen::<u64>());
        let other = raw_view(8, 3);
        assert_ne!(a, view(&other).rng("x").gen::<u64>());
        let later = raw_view(7, 4);
        assert_ne!(a, view(&later).rng("x").gen::<u64>());
        assert!(v.last_rpc().is_none() && v.jobs().is_empty() && v.disk().usage() == 0.0);
    }

    #[test]
    fn computing_allowed_comes_from_a_2_1_host_and_falls_back_on_a_2_0_one() {
        let mut raw = raw_view(7, 3);
        raw.cpu_allowed = 0;
        raw.gpu_allowed = 0;
        assert!(!view(&raw).cpu_allowed() && !view(&raw).gpu_allowed());
        // A 2.0 host's view ends before the fields: the host's state says.
        raw.size = std::mem::offset_of!(abi::View, cpu_allowed) as u32;
        assert!(view(&raw).cpu_allowed() && view(&raw).gpu_allowed());
        raw.host_on = 0;
        assert!(!view(&raw).cpu_allowed() && !view(&raw).gpu_allowed());
    }

    fn project(rec: f64) -> abi::Project {
        abi::Project {
            name: abi::Str::new("p"),
            resource_share: 100.0,
            share_fraction: 0.5,
            latency_bound: 86400.0,
            exp_avg_cpu: 0.0,
            first_app: 0,
            napps: 0,
            max_concurrent: 0,
            contactable: 1,
            has_runnable: 1,
            deletion_policy: abi::DELETE_LRU,
            rec,
        }
    }

    /// A host's simulation (2 resources, 2 projects), as its callback
    /// returns it: `ctx` points to it.
    struct FakeSim {
        rsc: [abi::ListSimRsc; 2],
        missed: [u32; 4],
        out: abi::ListSim,
    }

    #[allow(unsafe_code)]
    unsafe extern "C" fn fake_list_sim(
        ctx: *const std::ffi::c_void,
        _err: &mut abi::ErrBuf,
    ) -> *const abi::ListSim {
        // SAFETY: the tests pass a live `FakeSim`.
        let s = unsafe { &*(ctx as *const FakeSim) };
        &s.out
    }

    #[allow(unsafe_code)]
    unsafe extern "C" fn failing_list_sim(
        _ctx: *const std::ffi::c_void,
        err: &mut abi::ErrBuf,
    ) -> *const abi::ListSim {
        let m = b"list_sim: the estimator failed";
        let n = m.len().min(err.cap);
        // SAFETY: the plugin's buffer holds `cap` bytes.
        unsafe { std::ptr::copy_nonoverlapping(m.as_ptr(), err.ptr, n) };
        err.len = n;
        std::ptr::null()
    }

    #[test]
    fn todays_client_comes_from_a_2_2_host_and_falls_back_on_a_2_1_one() {
        let projects = [project(120.0), project(30.0)];
        let mut fake = Box::new(FakeSim {
            rsc: [
                abi::ListSimRsc {
                    shortfall: 100.0,
                    saturated_time: 2.0,
                    nidle_now: 0.5,
                    busy_time: 7.0,
                },
                abi::ListSimRsc {
                    shortfall: 10.0,
                    saturated_time: 3.0,
                    nidle_now: 1.0,
                    busy_time: 0.0,
                },
            ],
            missed: [0, 1, 2, 3],
            out: abi::ListSim {
                size: std::mem::size_of::<abi::ListSim>() as u32,
                minor: abi::ABI_MINOR,
                rsc: none(),
                deadlines_missed: none(),
            },
        });
        fake.out.rsc = abi::Array::new(&fake.rsc);
        fake.out.deadlines_missed = abi::Array::new(&fake.missed);
        let mut raw = raw_view(7, 3);
        raw.host_ctx = &*fake as *const FakeSim as *const std::ffi::c_void;
        raw.list_sim = Some(fake_list_sim);
        let v = View {
            projects: Strided::from_slice(&projects),
            ..view(&raw)
        };
        // A 2.2 host: its values.
        assert_eq!((v.rec(0), v.rec(1)), (120.0, 30.0));
        assert_eq!(v.project(1).rec(), 30.0);
        assert_eq!(v.rec_half_life(), 5.0 * 86400.0);
        let s = v.list_sim().unwrap().expect("a 2.2 host's simulation");
        assert_eq!(s.nrsc(), 2);
        assert_eq!(
            (
                s.shortfall(0),
                s.saturated_time(0),
                s.nidle_now(0),
                s.busy_time(0)
            ),
            (100.0, 2.0, 0.5, 7.0)
        );
        assert_eq!(s.shortfall(1), 10.0);
        assert_eq!((s.deadlines_missed(0, 1), s.deadlines_missed(1, 0)), (1, 2));
        // A 2.2 host that offers no simulation: none.
        raw.list_sim = None;
        assert!(view(&raw).list_sim().unwrap().is_none());
        // The host's simulation failed: its message.
        raw.list_sim = Some(failing_list_sim);
        let e = view(&raw).list_sim().err().unwrap();
        assert_eq!(e.message, "list_sim: the estimator failed");
        // A 2.1 host's view ends before the 2.2 fields: REC 0 (no history),
        // BOINC's default half-life, no simulation (the callback is not
        // even looked at).
        raw.list_sim = Some(fake_list_sim);
        raw.size = std::mem::offset_of!(abi::View, rec_half_life) as u32;
        let v = View {
            projects: Strided::from_slice(&projects),
            ..view(&raw)
        };
        assert_eq!((v.rec(0), v.project(0).rec()), (0.0, 0.0));
        assert_eq!(v.rec_half_life(), 10.0 * 86400.0);
        assert!(v.list_sim().unwrap().is_none());
    }
}
