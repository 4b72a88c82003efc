//! Files on the host and the user's limit on BOINC's disk usage.

use crate::time::Time;

/// Deletion priorities of `disk-management` (`client_types.h`).
pub const P_LOW: u8 = 1;
pub const P_MEDIUM: u8 = 3;
pub const P_HIGH: u8 = 5;

/// The order in which a project's files are deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeletionPolicy {
    /// Least recently used first (the default).
    #[default]
    Lru,
    /// Lowest priority first, in download order.
    Priority,
    /// Expired files first (at any priority), then least recently used.
    Expire,
}

impl DeletionPolicy {
    pub fn parse(s: &str) -> DeletionPolicy {
        match s {
            "priority" => DeletionPolicy::Priority,
            "expire" => DeletionPolicy::Expire,
            _ => DeletionPolicy::Lru,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Brought by a job.
    Input,
    /// Left by a finished job until it is reported.
    Output,
    /// Kept by the project (`[[project.sticky]]`).
    Sticky,
}

/// A file on the host (BOINC's `FILE_INFO`).
#[derive(Debug, Clone, PartialEq)]
pub struct FileInfo {
    pub id: u64,
    pub project: usize,
    pub kind: FileKind,
    pub bytes: f64,
    /// The job that brought or made it, while that job is on the host.
    pub job: Option<u64>,
    /// It stays on the host after its job is reported.
    pub sticky: bool,
    /// 1 (P_LOW) to 5 (P_HIGH).
    pub priority: u8,
    /// When it was downloaded (or written).
    pub created: Time,
    pub last_used: Time,
    /// Its expiry date (`exp_date`).
    pub expires: Time,
}

/// The files on the host and the user's limit on BOINC's disk usage.
#[derive(Debug, Clone, Default)]
pub struct DiskState {
    /// The simulator keeps files only for a disk manager that enforces limits.
    pub tracked: bool,
    /// In creation order (ids increase).
    pub files: Vec<FileInfo>,
    /// `total_limit`: the least of `disk_max_used_gb`, `disk_max_used_pct` of
    /// the disk, and the disk less non-BOINC usage less `disk_min_free_gb`.
    pub total_limit: f64,
    /// Bytes BOINC's files can take on the disk at all: the disk less
    /// non-BOINC usage. A file that does not fit is not written, whatever
    /// the disk manager reports (a download fails on a full disk).
    pub capacity: f64,
    /// Space used by the core client itself (the simulated client uses none).
    pub core_usage: f64,
    /// Computation is suspended because nothing more could be deleted.
    pub suspended: bool,
    pub next_file_id: u64,
}

impl DiskState {
    /// Bytes of all projects' files (`all_Project_usage`).
    pub fn usage(&self) -> f64 {
        self.files.iter().map(|f| f.bytes).sum()
    }
    /// Bytes of `p`'s files (`Project_usage(p)`).
    pub fn project_usage(&self, p: usize) -> f64 {
        self.files
            .iter()
            .filter(|f| f.project == p)
            .map(|f| f.bytes)
            .sum()
    }
    /// `all_Projects_limit = total_limit - core_usage`.
    pub fn all_projects_limit(&self) -> f64 {
        (self.total_limit - self.core_usage).max(0.0)
    }
    pub fn file(&self, id: u64) -> Option<&FileInfo> {
        self.files
            .binary_search_by_key(&id, |f| f.id)
            .ok()
            .map(|i| &self.files[i])
    }
}
