//! What policies decide, as plain data (vcsim's own types, mirrored).

use crate::abi::RscRequest;

/// Why a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    RoundRobin,
    Deadline,
}

/// The jobs a CPU scheduler wants running; everything else is preempted.
#[derive(Debug, Clone, Default)]
pub struct RunList {
    pub jobs: Vec<(u64, RunMode)>,
}

impl RunList {
    pub fn push(&mut self, job: u64, mode: RunMode) {
        self.jobs.push((job, mode));
    }
    pub fn contains(&self, job: u64) -> bool {
        self.jobs.iter().any(|(j, _)| *j == job)
    }
    pub fn clear(&mut self) {
        self.jobs.clear();
    }
    pub fn len(&self) -> usize {
        self.jobs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}

/// A scheduler request's work part.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkRequest {
    pub project: usize,
    pub work_req_seconds: f64,
    /// Per resource; all zero for an old-style request.
    pub rsc: Vec<RscRequest>,
}

impl WorkRequest {
    pub fn seconds(project: usize, seconds: f64, nrsc: usize) -> WorkRequest {
        WorkRequest {
            project,
            work_req_seconds: seconds,
            rsc: vec![RscRequest::default(); nrsc],
        }
    }
    pub fn report_only(project: usize, nrsc: usize) -> WorkRequest {
        WorkRequest::seconds(project, 0.0, nrsc)
    }
    pub fn per_resource(&self) -> bool {
        self.rsc
            .iter()
            .any(|r| r.req_seconds > 0.0 || r.req_ninstances > 0.0)
    }
    pub fn asks_for(&self, r: usize) -> bool {
        if self.per_resource() {
            self.rsc
                .get(r)
                .is_some_and(|x| x.req_seconds > 0.0 || x.req_ninstances > 0.0)
        } else {
            self.work_req_seconds > 0.0
        }
    }
    pub fn wants_work(&self) -> bool {
        self.work_req_seconds > 0.0 || self.per_resource()
    }
}

/// The server's three-state answer per resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RscStatus {
    Unknown,
    WorkReturned,
    NoWorkButSupported,
    NotSupported,
}

/// The outcome of one scheduler RPC.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcReply {
    pub project: usize,
    pub request: WorkRequest,
    pub reached: bool,
    /// Jobs received, per resource.
    pub jobs: Vec<u32>,
    pub rsc_status: Vec<RscStatus>,
}

impl RpcReply {
    pub fn njobs(&self) -> u32 {
        self.jobs.iter().sum()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Send,
    /// Not this one; the server may look at another.
    Skip,
    /// The reply is complete.
    Stop,
}

/// Deletions a disk manager asks for (vcsim's `DiskPlan`). vcsim refuses,
/// as an invalid decision, a file that is referenced or a job that has
/// started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskPlan {
    /// Queued jobs to delete, by id.
    pub delete_jobs: Vec<u64>,
    /// Files to delete, by id (after the jobs).
    pub delete_files: Vec<u64>,
    /// `poll`: usage is over the limit and nothing more can be freed:
    /// suspend computation until it is not.
    pub suspend: bool,
}
