//! What policies decide, as plain data (vcsim's own types, mirrored).

use crate::abi::RscRequest;

/// Why a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    RoundRobin,
    Deadline,
}

/// Why a policy decided what it did (ABI 2.3), for vcsim's explained runs
/// (`vcsim explain`): a sentence for people and named numbers for programs
/// (vcsim's `Reason`).
///
/// vcsim reads reasons only in a run that explains
/// ([`View::explaining`](crate::view::View::explaining)
/// says whether it will read this call's), and there of every decision,
/// so keep them cheap: give them only where vcsim asks (a CPU scheduler's
/// jobs that start or change mode, for instance). A
/// reason that does not fit vcsim's buffer (4 KiB; for a run list, that
/// plus 256 bytes per job) is cut, never an error. The text must not hold
/// the character U+001F (it becomes a space); a key must not be empty nor
/// hold `=` or U+001F (such an item is left out).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reason {
    pub text: String,
    pub data: Vec<(String, f64)>,
}

impl Reason {
    pub fn new(text: impl Into<String>) -> Reason {
        Reason {
            text: text.into(),
            data: Vec::new(),
        }
    }
    /// Adds a named number.
    pub fn with(mut self, key: impl Into<String>, value: f64) -> Reason {
        self.data.push((key.into(), value));
        self
    }
    /// The number named `key`, if any.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.data.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
    /// Nothing to say: no text and no data (vcsim then has no reason).
    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.data.is_empty()
    }
}

impl From<&str> for Reason {
    fn from(s: &str) -> Reason {
        Reason::new(s)
    }
}

impl From<String> for Reason {
    fn from(s: String) -> Reason {
        Reason::new(s)
    }
}

/// The jobs a CPU scheduler wants running; everything else is preempted.
#[derive(Debug, Clone, Default)]
pub struct RunList {
    pub jobs: Vec<(u64, RunMode)>,
    /// Since ABI 2.3: the reasons of listed jobs, by job id (see
    /// [`RunList::push_with_reason`]); a reason of a job not in `jobs` is
    /// not sent.
    pub reasons: Vec<(u64, Reason)>,
    /// Since ABI 2.4: the run list's own reason (see
    /// [`RunList::set_list_reason`]).
    pub list_reason: Option<Reason>,
    /// Since ABI 2.4: what the projects were ranked by (see
    /// [`RunList::set_ranking`]).
    pub ranking: Option<Ranking>,
}

/// What a CPU scheduler ranked projects by (ABI 2.4), for the plot under
/// vcsim's timeline: a name ("short-term debt (s)") and one finite value
/// per project, in project order (vcsim's `Ranking`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ranking {
    pub name: String,
    pub values: Vec<f64>,
}

impl RunList {
    pub fn push(&mut self, job: u64, mode: RunMode) {
        self.jobs.push((job, mode));
    }
    /// Runs `job`, and says why (ABI 2.3: what `vcsim explain` shows for
    /// it when it starts or changes mode).
    pub fn push_with_reason(&mut self, job: u64, mode: RunMode, reason: impl Into<Reason>) {
        self.jobs.push((job, mode));
        self.reasons.push((job, reason.into()));
    }
    /// Says why the listed `job` runs (replacing an earlier reason).
    pub fn set_reason(&mut self, job: u64, reason: impl Into<Reason>) {
        let reason = reason.into();
        match self.reasons.iter_mut().find(|(j, _)| *j == job) {
            Some((_, r)) => *r = reason,
            None => self.reasons.push((job, reason)),
        }
    }
    /// Says why the jobs the list leaves out are preempted, and why each
    /// listed job without a reason of its own runs (ABI 2.4; a host of 2.3
    /// does not load a 2.4 plugin, so it is always read).
    pub fn set_list_reason(&mut self, reason: impl Into<Reason>) {
        self.list_reason = Some(reason.into());
    }
    /// Says what the projects were ranked by: one finite value per project,
    /// in project order (ABI 2.4). Any other count, or a value that is not
    /// finite, fails the call in an explained run.
    pub fn set_ranking(&mut self, name: impl Into<String>, values: Vec<f64>) {
        self.ranking = Some(Ranking {
            name: name.into(),
            values,
        });
    }
    /// The reason given for `job`, if any.
    pub fn reason(&self, job: u64) -> Option<&Reason> {
        self.reasons.iter().find(|(j, _)| *j == job).map(|(_, r)| r)
    }
    pub fn contains(&self, job: u64) -> bool {
        self.jobs.iter().any(|(j, _)| *j == job)
    }
    pub fn clear(&mut self) {
        self.jobs.clear();
        self.reasons.clear();
        self.list_reason = None;
        self.ranking = None;
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
    /// Not this app: the server draws among its other apps for the rest of
    /// this reply (BOINC's emulator marks the app `dont_use`).
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
