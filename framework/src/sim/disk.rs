//! The files on the host, for a disk manager that enforces limits: a job's
//! input written when it arrives and its output when it finishes (each
//! after `make_room`), files released when their job is reported, and the
//! manager's `poll` after every change, which may suspend computation.

use super::{live_view, SimError, Simulation};
use crate::explain::{short_mb, short_number};
use crate::model::{FileInfo, FileKind, JobState, P_LOW};
use crate::policy::DiskPlan;
use crate::registry::Family;
use crate::time::Time;

/// The simulator's side of the disk: what changed since the last poll and
/// the figures of the report.
#[derive(Default)]
pub(super) struct DiskBook {
    /// Files changed since the last poll.
    pub dirty: bool,
    /// Jobs that finished and whose output is still to be written.
    pub outputs_pending: Vec<u64>,
    pub bytes_deleted: f64,
    /// Jobs a server withheld for lack of space.
    pub jobs_refused: u64,
    suspended_since: Option<Time>,
    pub suspended_seconds: f64,
    /// Files that did not fit on the disk (each failed its job).
    pub files_not_written: u64,
    /// Jobs reported as failed because a file of theirs did not fit.
    pub jobs_failed_disk_full: u64,
    pub peak: f64,
    pub peak_project: Vec<f64>,
}

impl DiskBook {
    /// At the end of the run: a suspension still on counts until then.
    pub fn end_suspension(&mut self, now: Time) {
        if let Some(t0) = self.suspended_since.take() {
            self.suspended_seconds += now - t0;
        }
    }
}

impl Simulation {
    /// After a report: outputs and non-sticky inputs of `p`'s jobs that left
    /// the host are deleted (the server has them); sticky inputs stay.
    pub(super) fn release_files(&mut self, p: usize, now: Time) {
        let jobs = &self.st.jobs;
        let gone = |f: &FileInfo| {
            f.project == p
                && f.job
                    .is_some_and(|id| jobs.binary_search_by_key(&id, |j| j.id).is_err())
        };
        let mut changed = false;
        self.st.disk.files.retain_mut(|f| {
            if !gone(f) {
                return true;
            }
            changed = true;
            if f.kind == FileKind::Input && f.sticky {
                f.job = None;
                f.last_used = now;
                true
            } else {
                false
            }
        });
        self.disk.dirty |= changed;
    }

    /// Writes a job's input file on arrival, making room first.
    pub(super) fn add_input_file(
        &mut self,
        p: usize,
        a: usize,
        job: u64,
        now: Time,
        make_room: bool,
    ) -> Result<(), SimError> {
        if !self.st.disk.tracked {
            return Ok(());
        }
        let app = &self.st.projects[p].apps[a];
        let f = FileInfo {
            id: 0,
            project: p,
            kind: FileKind::Input,
            bytes: app.input_bytes,
            job: Some(job),
            sticky: app.sticky_input,
            priority: if app.sticky_input {
                app.sticky_priority
            } else {
                P_LOW
            },
            created: now,
            last_used: now,
            expires: now + app.sticky_expiry,
        };
        let bytes = f.bytes;
        if !self.write_file(f, make_room)? {
            // BOINC's download fails on a full disk, and the job with it: it
            // is reported as an error at the next RPC.
            if let Ok(i) = self.st.jobs.binary_search_by_key(&job, |j| j.id) {
                let j = &mut self.st.jobs[i];
                j.state = JobState::Finished;
                j.failed = true;
                j.disk_full = true;
                j.finished_at = now;
            }
            self.disk_full(p, job, "input", bytes);
        }
        Ok(())
    }

    /// Counts a job that failed because its file of `bytes` did not fit,
    /// and says so the first time (a full disk fails job after job). The
    /// report counts such jobs as they are reported, with the other failed
    /// ones.
    fn disk_full(&mut self, p: usize, job: u64, what: &str, bytes: f64) {
        self.disk.files_not_written += 1;
        if self.disk.files_not_written > 1 {
            return;
        }
        let d = &self.st.disk;
        let msg = format!(
            "job {job} of project `{}` failed: its {what} file ({}) does not fit on the disk ({} of the {} GB BOINC's files can take are used; said once, the log's last line counts such files)",
            self.st.projects[p].name,
            short_mb(bytes),
            // (`+ 0.0`: an empty sum is -0, which would print so.)
            short_number(d.usage() / 1e9 + 0.0),
            short_number(d.capacity / 1e9),
        );
        self.log.push(self.st.now, "disk", &msg);
    }

    /// Writes a file, after the deletions the disk manager asks for to make
    /// room; returns whether it fitted on the disk. The manager's limits
    /// are its own to keep (a file over them is written, and `poll` may
    /// suspend computation), but the disk's size is not: a manager that
    /// reports more free space than there is cannot pile files past it.
    fn write_file(&mut self, f: FileInfo, make_room: bool) -> Result<bool, SimError> {
        if f.bytes <= 0.0 {
            return Ok(true);
        }
        if make_room {
            let plan = {
                let v = live_view!(self);
                self.pol.disk.make_room(&v, f.project, f.bytes)
            };
            let plan = plan.map_err(|e| self.policy_err(Family::Disk, e))?;
            if self.explaining() {
                self.explain_disk_plan(&plan)?;
            }
            // The room is for this job's file: deleting the job would
            // leave its file written for a job no longer on the host.
            if let Some(id) = f.job.filter(|id| plan.delete_jobs.contains(id)) {
                return Err(self.invalid(
                    Family::Disk,
                    format!("`make_room`'s plan: job {id} is the one whose file the room is for, and cannot be deleted to make it"),
                ));
            }
            self.apply_disk_plan(&plan, "make_room")?;
        }
        if self.st.disk.usage() + f.bytes > self.st.disk.capacity {
            return Ok(false);
        }
        self.st.add_file(f);
        self.disk.dirty = true;
        Ok(true)
    }

    /// The outputs of jobs that finished since the last step.
    pub(super) fn write_outputs(&mut self) -> Result<(), SimError> {
        let pending = std::mem::take(&mut self.disk.outputs_pending);
        let mut result = Ok(());
        for &id in &pending {
            let Some(j) = self.st.job(id) else { continue };
            let (p, a, at) = (j.project, j.app, j.finished_at);
            for f in self.st.disk.files.iter_mut() {
                if f.job == Some(id) {
                    f.last_used = at;
                }
            }
            let app = &self.st.projects[p].apps[a];
            let f = FileInfo {
                id: 0,
                project: p,
                kind: FileKind::Output,
                bytes: app.output_bytes,
                job: Some(id),
                sticky: false,
                priority: P_LOW,
                created: at,
                last_used: at,
                expires: at + app.sticky_expiry,
            };
            let bytes = f.bytes;
            match self.write_file(f, true) {
                Ok(true) => {}
                Ok(false) => {
                    // The application cannot write its output: BOINC reports
                    // a computation error.
                    if let Ok(i) = self.st.jobs.binary_search_by_key(&id, |j| j.id) {
                        self.st.jobs[i].failed = true;
                        self.st.jobs[i].disk_full = true;
                    }
                    self.disk_full(p, id, "output", bytes);
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.disk.outputs_pending = pending;
        self.disk.outputs_pending.clear();
        result
    }

    /// Applies a disk manager's deletions after checking them; `hook` (the
    /// method that made the plan) names it in an error.
    fn apply_disk_plan(&mut self, plan: &DiskPlan, hook: &str) -> Result<(), SimError> {
        let mut deleted_jobs: Vec<u64> = Vec::new();
        for &id in &plan.delete_jobs {
            let Ok(i) = self.st.jobs.binary_search_by_key(&id, |j| j.id) else {
                return Err(self.invalid(
                    Family::Disk,
                    format!("`{hook}`'s plan: job {id} is not on the host"),
                ));
            };
            if !self.st.job_deletable(&self.st.jobs[i]) {
                return Err(self.invalid(
                    Family::Disk,
                    format!(
                        "`{hook}`'s plan: job {id} has started or finished and cannot be deleted"
                    ),
                ));
            }
            let j = self.st.jobs.remove(i);
            self.done_step.remove(i);
            // Finished jobs not yet handled are kept by index.
            for x in self.finished_now.iter_mut().filter(|x| **x > i) {
                *x -= 1;
            }
            self.acc.jobs_discarded += 1;
            self.reschedule = true;
            deleted_jobs.push(id);
            let msg = format!(
                "deleted queued job {id} of project `{}` to free space",
                self.st.projects[j.project].name
            );
            self.log.push(self.st.now, "disk", &msg);
        }
        // The deleted jobs' files are no longer referenced (one pass over
        // the files, however many jobs: a plan may delete hundreds).
        deleted_jobs.sort_unstable();
        // Their files that are not sticky (in id order, as the files are).
        let mut orphans: Vec<u64> = Vec::new();
        if !deleted_jobs.is_empty() {
            for f in self.st.disk.files.iter_mut() {
                if f.job
                    .is_some_and(|j| deleted_jobs.binary_search(&j).is_ok())
                {
                    f.job = None;
                    if !f.sticky {
                        orphans.push(f.id);
                    }
                }
            }
        }
        for &id in &plan.delete_files {
            let Ok(i) = self.st.disk.files.binary_search_by_key(&id, |f| f.id) else {
                return Err(self.invalid(
                    Family::Disk,
                    format!("`{hook}`'s plan: file {id} is not on the host"),
                ));
            };
            if self.st.file_referenced(&self.st.disk.files[i]) {
                return Err(self.invalid(
                    Family::Disk,
                    format!("`{hook}`'s plan: file {id} is referenced by a job on the host and cannot be deleted"),
                ));
            }
            let f = self.st.disk.files.remove(i);
            let now = self.st.now;
            self.traced(|| {
                format!(
                    "t={now} disk delete p={} file={} {:?} bytes={} prio={}",
                    f.project, f.id, f.kind, f.bytes, f.priority
                )
            });
            self.disk.bytes_deleted += f.bytes;
            self.disk.dirty = true;
        }
        self.collect_orphans(&orphans);
        Ok(())
    }

    /// BOINC's garbage collection: a file no job references and that is not
    /// sticky is deleted. After a report `release_files` does it; here it is
    /// for the files of jobs the disk manager deleted and left (a plan may
    /// delete them itself first). Without it, a manager that deleted jobs
    /// but not their files piled files up without bound.
    fn collect_orphans(&mut self, orphans: &[u64]) {
        if orphans.is_empty() {
            return;
        }
        let mut freed = 0.0;
        let mut deleted = false;
        self.st.disk.files.retain(|f| {
            let orphan = orphans.binary_search(&f.id).is_ok();
            if orphan {
                freed += f.bytes;
                deleted = true;
            }
            !orphan
        });
        if deleted {
            self.disk.bytes_deleted += freed;
            self.disk.dirty = true;
        }
    }

    /// `data_manager_poll` after files changed; returns whether computation
    /// was suspended or resumed.
    pub(super) fn disk_poll(&mut self) -> Result<bool, SimError> {
        if !self.disk.dirty {
            return Ok(false);
        }
        self.disk.dirty = false;
        let plan = {
            let v = live_view!(self);
            self.pol.disk.poll(&v)
        };
        let plan = plan.map_err(|e| self.policy_err(Family::Disk, e))?;
        if self.explaining() {
            self.explain_disk_plan(&plan)?;
        }
        self.apply_disk_plan(&plan, "poll")?;
        self.disk.dirty = false;
        let d = &self.st.disk;
        let used = d.usage();
        self.disk.peak = self.disk.peak.max(used);
        for (p, peak) in self.disk.peak_project.iter_mut().enumerate() {
            *peak = peak.max(d.project_usage(p));
        }
        let now = self.st.now;
        if plan.suspend == d.suspended {
            return Ok(false);
        }
        self.st.disk.suspended = plan.suspend;
        // The disk manager decides; the note says why only where the usage
        // shows it (a scripted manager may suspend within the limit).
        let (gb, limit) = (used / 1e9, self.st.disk.total_limit / 1e9);
        let over = used > self.st.disk.total_limit;
        let msg = if plan.suspend {
            self.disk.suspended_since = Some(now);
            if over {
                format!("BOINC uses {gb:.3} GB, more than the {limit:.3} GB the user allows, and nothing more can be deleted: computation suspended")
            } else {
                format!("the disk manager suspends computation (BOINC uses {gb:.3} GB of the {limit:.3} GB the user allows)")
            }
        } else {
            self.disk.end_suspension(now);
            if over {
                format!("the disk manager resumes computation (BOINC uses {gb:.3} GB, more than the {limit:.3} GB the user allows)")
            } else {
                format!("usage {gb:.3} GB is within the limit again: computation resumed")
            }
        };
        self.log.push(now, "disk", &msg);
        Ok(true)
    }
}
