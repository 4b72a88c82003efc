//! vcsim's framework: the model of a volunteer-computing host and its
//! projects, the one deterministic simulator, the five policy traits, the
//! policy registry, the figures of merit and scenario loading.
//!
//! Architecture invariants: no I/O but reading a scenario file; no wall
//! clock; no environment; no printing; no hash-map iteration in decisions;
//! policies only read (a test checks the sources for the first four).

#![forbid(unsafe_code)]

pub mod availability;
pub mod diverge;
pub mod explain;
pub mod family;
pub mod input;
pub mod log;
pub mod metrics;
pub mod model;
pub mod policy;
pub mod rec;
pub mod registry;
pub mod rng;
pub mod rpc;
pub mod scenario;
pub mod sim;
pub mod testing;
pub mod text;
pub mod time;
pub mod timeline;

pub use family::Family;
pub use metrics::{Metrics, RunReport};
pub use model::{ClientState, Job, JobState, Rsc, RunMode, Time, CPU};
/// The view a policy gets (`policy::view`), also at its old path.
pub use policy::view;
pub use policy::View;
pub use policy::*;
pub use registry::{AnyPolicy, BuiltinPolicy, Entry, PolicySpec, Registry};
pub use scenario::{Scenario, ScenarioError};
pub use sim::{run, RecordBounds, RunOutput, SimError, SimOptions, Stepping};

/// Re-exported so that plugins submit built-ins with the same `inventory`.
pub use inventory;

/// Loads a scenario, makes the policies of `spec` from `registry`, and runs
/// it. The report names the policy by its label ([`PolicySpec::label`]).
pub fn run_spec(
    scn: &Scenario,
    registry: &Registry,
    spec: &PolicySpec,
    opts: SimOptions,
) -> Result<RunOutput, String> {
    let set = registry.instantiate(spec)?;
    run(scn, set, &spec.label(), opts).map_err(|e| format!("{}: {e}", scn.name))
}

/// [`run_spec`], keeping on failure what the run recorded before it
/// (`explain` shows the records above the error, `run` the log's lines).
pub fn run_spec_keeping(
    scn: &Scenario,
    registry: &Registry,
    spec: &PolicySpec,
    opts: SimOptions,
) -> Result<RunOutput, (String, sim::Kept)> {
    let set = registry
        .instantiate(spec)
        .map_err(|e| (e, sim::Kept::default()))?;
    sim::run_keeping(scn, set, &spec.label(), opts)
        .map_err(|(e, kept)| (format!("{}: {e}", scn.name), kept))
}
