//! Building blocks of vcsim's policies, shared by the built-in policies
//! (`vcsim-builtin`) and the script API (`vcsim-script`), so that neither
//! depends on the other:
//!
//! - [`rr_sim`]: BOINC 2007's weighted round-robin simulation, per resource;
//! - [`list_sim`]: today's client's simulation (list scheduling, GPUs first);
//! - [`rec`]: today's client's project priorities from recent estimated credit;
//! - [`debt`]: the v4 debt, the short-term and the long-term debt;
//! - [`capacity`]: free instances while a scheduler fills the host;
//! - [`job_order`]: the v4 document's order of a project's jobs;
//! - [`key`]: an `f64` that heaps can order;
//! - [`quiet`]: helpers for fetchers that certify quiet stretches;
//! - [`server_fill`]: what a reply still has to fill of a request.

#![forbid(unsafe_code)]
// The documents' algorithms index projects and resources by number, often
// several tables at once.
#![allow(clippy::needless_range_loop)]

pub mod capacity;
pub mod debt;
pub mod job_order;
pub mod key;
pub mod list_sim;
pub mod quiet;
pub mod rec;
pub mod rr_sim;
pub mod server_fill;
