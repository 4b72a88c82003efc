//! vcsim's built-in policies, registered with `inventory`: the paper's
//! families (CS1/CS2, WF1/WF2, WS1/WS2, JC1/JC2) and the disk managers.
//! Their shared parts (the round-robin simulation, debts, capacity...) are
//! in `vcsim-blocks`, which scripts use too.

#![forbid(unsafe_code)]
// Policies loop over projects and resources by index, as the documents do,
// often indexing several tables at once.
#![allow(clippy::needless_range_loop)]

pub mod cs1;
pub mod cs2;
pub mod cs3;
pub mod disk_none;
pub mod disk_share;
pub mod gpu;
pub mod jc;
pub mod wf1;
pub mod wf1_v4;
pub mod wf2;
pub mod wf3;
mod why;
pub mod ws;
pub mod ws3;

use vcsim_blocks::list_sim::ProjectOrder;
use vcsim_framework::{inventory, AnyPolicy, BuiltinPolicy, Family};

inventory::submit! { BuiltinPolicy { family: Family::Cpu, name: "cs1", summary: "v4 schedule_cpus: weighted round-robin by debt (paper's CS1)", make: || AnyPolicy::Cpu(Box::<cs1::Cs1>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Cpu, name: "cs2", summary: "round-robin simulation; jobs that would miss run EDF, the rest by debt (paper's CS2)", make: || AnyPolicy::Cpu(Box::<cs2::Cs2>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Cpu, name: "cs3", summary: "today's client: REC priorities, GPUs first, EDF for projects with misses, time slices, over-commitment", make: || AnyPolicy::Cpu(Box::new(cs3::Cs3::new(ProjectOrder::AsBuilt))) } }
inventory::submit! { BuiltinPolicy { family: Family::Cpu, name: "cs3-intended", summary: "cs3 with its simulation picking projects by REC priority (as its comment intends)", make: || AnyPolicy::Cpu(Box::new(cs3::Cs3::new(ProjectOrder::Intended))) } }
inventory::submit! { BuiltinPolicy { family: Family::Fetch, name: "wf1", summary: "the paper's WF1 (BOINC 2007): keep a share of the buffer queued per project, ask for the difference", make: || AnyPolicy::Fetch(Box::<wf1::Wf1>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Fetch, name: "wf1-v4", summary: "the v4 document's work fetch: ETTPRC below the low-water mark, fill to the high-water mark", make: || AnyPolicy::Fetch(Box::<wf1_v4::Wf1V4>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Fetch, name: "wf2", summary: "round-robin shortfall from the project with the largest long-term debt (paper's WF2)", make: || AnyPolicy::Fetch(Box::<wf2::Wf2>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Fetch, name: "wf3", summary: "today's client: per-resource fetch when saturated below the minimum buffer, fill to min + additional; REC priority; per-resource back-off", make: || AnyPolicy::Fetch(Box::new(wf3::Wf3::new(ProjectOrder::AsBuilt))) } }
inventory::submit! { BuiltinPolicy { family: Family::Fetch, name: "wf3-intended", summary: "wf3 with its simulation picking projects by REC priority (as its comment intends)", make: || AnyPolicy::Fetch(Box::new(wf3::Wf3::new(ProjectOrder::Intended))) } }
inventory::submit! { BuiltinPolicy { family: Family::Fetch, name: "gpu", summary: "per-resource shortfall, debt and back-off: idle GPU, idle CPU, GPU shortfall, CPU shortfall (work-fetch-and-gpus)", make: || AnyPolicy::Fetch(Box::<gpu::GpuFetch>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Send, name: "gpu", summary: "jobs per requested resource until its seconds and idle instances are covered (work-fetch-and-gpus)", make: || AnyPolicy::Send(Box::<gpu::GpuSend>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Send, name: "ws1", summary: "send jobs whose estimates add up to the request (paper's WS1)", make: || AnyPolicy::Send(Box::<ws::Ws1>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Send, name: "ws2", summary: "server-side EDF check of the host's workload (paper's WS2)", make: || AnyPolicy::Send(Box::<ws::Ws2>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Estimate, name: "jc1", summary: "F*A + (1-F)*B without correction (paper's JC1)", make: || AnyPolicy::Estimate(Box::<jc::Jc1>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Send, name: "ws3", summary: "BOINC's emulator server: jobs per requested resource until seconds and instances are covered, refused past the estimated delay plus latency bound", make: || AnyPolicy::Send(Box::<ws3::Ws3>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Estimate, name: "jc3", summary: "today's client: static estimate (with the server's per-host correction) until a job overruns it, then elapsed/F; no DCF", make: || AnyPolicy::Estimate(Box::new(jc::Jc3::new(true))) } }
inventory::submit! { BuiltinPolicy { family: Family::Estimate, name: "jc3-uncorrected", summary: "jc3 without the server's per-host correction (as in BOINC's emulator)", make: || AnyPolicy::Estimate(Box::new(jc::Jc3::new(false))) } }
inventory::submit! { BuiltinPolicy { family: Family::Estimate, name: "jc2", summary: "F*A + (1-F)*B with a per-project duration correction factor (paper's JC2)", make: || AnyPolicy::Estimate(Box::<jc::Jc2>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Disk, name: "none", summary: "enforces nothing: the whole disk is reported free", make: || AnyPolicy::Disk(Box::<disk_none::NoDiskLimits>::default()) } }
inventory::submit! { BuiltinPolicy { family: Family::Disk, name: "share", summary: "disk-management: project limits by resource share, deletion from the greatest offender, three free-space amounts", make: || AnyPolicy::Disk(Box::<disk_share::ShareDisk>::default()) } }

/// Call from a binary so that the linker keeps this crate's registrations.
pub fn link() {}
