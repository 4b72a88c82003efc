//! Free instances per resource while a scheduler fills the host, under
//! BOINC's admission rules (CPUs over-committed by one job, GPUs never,
//! max_concurrent): the framework's `Admission`, which the simulator also
//! checks every run list against.

pub use vcsim_framework::policy::admission::{Admission as Capacity, Refusal};
