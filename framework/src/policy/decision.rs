//! What policies decide and what they are shown besides the view: plain
//! data, validated by the simulator before it applies anything.

use crate::model::{HostInfo, Rsc, RunMode, Time};

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

/// The work request of one resource type (the seed `work-fetch-and-gpus`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RscRequest {
    /// Instance-seconds requested.
    pub req_seconds: f64,
    /// Send enough jobs to occupy this many instances.
    pub req_ninstances: f64,
    /// The client's estimate of how long new jobs of this resource would
    /// wait before they start (today's client's `estimated_delay`: the busy
    /// time of jobs its simulation sees missing their deadlines), seconds;
    /// 0 when not told.
    pub estimated_delay: f64,
}

/// A scheduler request's work part.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkRequest {
    pub project: usize,
    /// The old scalar request; a server that sees no per-resource request
    /// fills this with any of its apps.
    pub work_req_seconds: f64,
    /// Per resource (index = [`Rsc`]); all zero for an old-style request.
    pub rsc: Vec<RscRequest>,
}

impl WorkRequest {
    /// An old-style request: seconds of work of any kind.
    pub fn seconds(project: usize, seconds: f64, nrsc: usize) -> WorkRequest {
        WorkRequest {
            project,
            work_req_seconds: seconds,
            rsc: vec![RscRequest::default(); nrsc],
        }
    }
    /// A request only to report finished jobs.
    pub fn report_only(project: usize, nrsc: usize) -> WorkRequest {
        WorkRequest::seconds(project, 0.0, nrsc)
    }
    pub fn per_resource(&self) -> bool {
        self.rsc
            .iter()
            .any(|r| r.req_seconds > 0.0 || r.req_ninstances > 0.0)
    }
    /// Does the request ask for jobs of resource `r`?
    pub fn asks_for(&self, r: Rsc) -> bool {
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

/// The outcome of one scheduler RPC, as the client sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcReply {
    pub project: usize,
    pub request: WorkRequest,
    /// Some scheduler of the project answered.
    pub reached: bool,
    /// Jobs received, per resource.
    pub jobs: Vec<u32>,
    /// Per resource, the server's three-state answer when it gives one.
    pub rsc_status: Vec<RscStatus>,
}

impl RpcReply {
    pub fn njobs(&self) -> u32 {
        self.jobs.iter().sum()
    }
}

/// The three-state server answer proposed by `work-fetch-and-gpus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RscStatus {
    /// The server said nothing beyond the jobs it sent (the seed's default).
    Unknown,
    WorkReturned,
    NoWorkButSupported,
    NotSupported,
}

/// A job the server could send: drawn by the server's feeder from the
/// project's apps that run on the host and that the request asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub app: usize,
    pub rsc: Rsc,
    pub cpus: f64,
    pub gpu_count: f64,
    pub flops_estimate: f64,
    /// The server's estimate of its run time on this host: FLOPs estimate /
    /// the host's speed for the app x the client's reported DCF.
    pub est_seconds: f64,
    pub deadline: Time,
}

/// A job on the host, as a scheduler request lists it (for server-side checks).
#[derive(Debug, Clone, PartialEq)]
pub struct ReportedJob {
    pub project: usize,
    pub rsc: Rsc,
    pub cpus: f64,
    pub gpu_count: f64,
    pub deadline: Time,
    /// The client's estimate of its remaining run time.
    pub remaining_seconds: f64,
}

/// What a server sees of a scheduler request.
#[derive(Debug, Clone)]
pub struct ServerRequest<'a> {
    pub now: Time,
    pub project: usize,
    pub project_name: &'a str,
    pub latency_bound: f64,
    pub host: &'a HostInfo,
    pub request: &'a WorkRequest,
    /// The client's duration correction factor for this project.
    pub dcf: f64,
    pub work_buf_min: f64,
    /// The fraction of time the client expects the host to compute (its
    /// `time_stats`: 1 unless it learns availability).
    pub on_fraction: f64,
    /// Every job on the host, of every project.
    pub workload: &'a [ReportedJob],
    /// Free disk space: free; free if offenders' files were deleted; free if
    /// this project's were deleted too.
    pub free_bytes: [f64; 3],
    /// The run explains: `explain_verdict` is asked after each verdict (a
    /// sender has no view to ask `View::explaining`).
    pub explaining: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Send,
    /// Not this app: the server draws among its other apps for the rest of
    /// this reply (BOINC's emulator marks the app `dont_use`).
    Skip,
    /// The reply is complete.
    Stop,
}

/// Deletions a disk manager asks for. The simulator refuses (as an invalid
/// decision) a file that is referenced or a job that has started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskPlan {
    /// Queued jobs (results) to delete, by id; their input files are then
    /// no longer referenced.
    pub delete_jobs: Vec<u64>,
    /// Files to delete, by id (after the jobs).
    pub delete_files: Vec<u64>,
    /// `poll`: nothing more can be freed and usage is over the limit:
    /// suspend all computation until it is not.
    pub suspend: bool,
}
