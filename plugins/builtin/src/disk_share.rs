//! The `share` disk manager of `disk-management`: every project may use its
//! resource share of the space BOINC may use (and the space others leave
//! unused); files are deleted from the greatest offender first.
//!
//! - `total_limit` comes from the user's preferences (the simulator computes
//!   it: [`vcsim_framework::model::total_disk_limit`]);
//!   `all_projects_limit = total_limit - core_usage`;
//!   `project_limit(p) = all_projects_limit x share(p)`.
//! - A project is an offender when `usage(p) - project_limit(p) > 0`.
//! - [`get_more_disk_space`] and [`associate_file`] follow the seed's pseudo
//!   code, raising the deletion priority one level at a time.
//! - [`data_manager_poll`]: offenders, then one file at a time round the
//!   projects, then one result at a time; when all fail, suspend.
//!
//! A file can be deleted at level `l` when it is not referenced and its
//! level is at most `l`. Its level is its priority (1 = P_LOW .. 5 = P_HIGH),
//! or 0 when it is expendable: a non-sticky file whose job no longer needs
//! it, or an expired file of a project whose policy is `expire`. Within a
//! level the project's policy orders the files: `priority` in download
//! order, `lru` and `expire` least recently used first.

use crate::why::bytes;
use std::cmp::Ordering;
use vcsim_framework::model::{DeletionPolicy, FileInfo, P_HIGH, P_LOW};
use vcsim_framework::{DiskManager, DiskPlan, PolicyResult, Reason, View};

#[derive(Default)]
pub struct ShareDisk;

/// `project_limit(p) = all_projects_limit x share(p)`.
pub fn project_limit(v: &View, p: usize) -> f64 {
    let total = v.total_share();
    if total <= 0.0 {
        return 0.0;
    }
    v.disk().all_projects_limit() * v.projects()[p].resource_share / total
}

/// The level at which a file becomes deletable (0: expendable).
pub fn deletion_level(v: &View, f: &FileInfo) -> u8 {
    let expired = f.expires <= v.now();
    if !f.sticky || (expired && v.projects()[f.project].deletion_policy == DeletionPolicy::Expire) {
        0
    } else {
        f.priority
    }
}

/// The order in which `p`'s files are deleted: by level, then the project's
/// policy, then file id.
pub fn deletion_order(v: &View, a: &FileInfo, b: &FileInfo) -> Ordering {
    let la = deletion_level(v, a);
    let lb = deletion_level(v, b);
    let by_policy = match v.projects()[a.project].deletion_policy {
        DeletionPolicy::Priority => a.created.total_cmp(&b.created),
        DeletionPolicy::Lru | DeletionPolicy::Expire => a.last_used.total_cmp(&b.last_used),
    };
    la.cmp(&lb).then(by_policy).then(a.id.cmp(&b.id))
}

/// A plan being made: the state as it will be after the deletions so far.
pub struct Scratch<'a> {
    pub v: View<'a>,
    pub limit: Vec<f64>,
    pub usage: Vec<f64>,
    pub total: f64,
    gone: Vec<bool>,
    referenced: Vec<bool>,
    /// Per project, its deletable files in deletion order (indices into
    /// files), made when first asked for (`sorted`): most calls need no
    /// deletion, and a 256-CPU host keeps thousands of files.
    order: Vec<Vec<usize>>,
    sorted: Vec<bool>,
    pub plan: DiskPlan,
}

impl<'a> Scratch<'a> {
    pub fn new(v: &View<'a>) -> Scratch<'a> {
        let v = *v;
        let np = v.projects().len();
        let files = &v.disk().files;
        let mut usage = vec![0.0; np];
        for f in files {
            usage[f.project] += f.bytes;
        }
        let referenced: Vec<bool> = files.iter().map(|f| v.file_referenced(f)).collect();
        Scratch {
            v,
            limit: (0..np).map(|p| project_limit(&v, p)).collect(),
            total: usage.iter().sum(),
            usage,
            gone: vec![false; files.len()],
            referenced,
            order: vec![Vec::new(); np],
            sorted: vec![false; np],
            plan: DiskPlan::default(),
        }
    }

    /// Makes `p`'s deletion order, if it is not made: its files neither
    /// deleted in this plan nor referenced, by `deletion_order`.
    fn sort(&mut self, p: usize) {
        if self.sorted[p] {
            return;
        }
        let v = self.v;
        let o = &mut self.order[p];
        o.clear();
        for (i, f) in v.disk().files.iter().enumerate() {
            if f.project == p && !self.gone[i] && !self.referenced[i] {
                o.push(i);
            }
        }
        o.sort_by(|&a, &b| deletion_order(&v, &v.disk().files[a], &v.disk().files[b]));
        self.sorted[p] = true;
    }

    /// `free_space = all_projects_limit - all_project_usage` (may be negative).
    pub fn free(&self) -> f64 {
        self.v.disk().all_projects_limit() - self.total
    }

    pub fn excess(&self, p: usize) -> f64 {
        self.usage[p] - self.limit[p]
    }

    /// The greatest offender among the projects not `checked`.
    pub fn greatest_offender(&self, checked: &[bool]) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (p, &c) in checked.iter().enumerate() {
            let e = self.excess(p);
            if !c && e > 0.0 && best.is_none_or(|(_, b)| e > b) {
                best = Some((p, e));
            }
        }
        best.map(|(p, _)| p)
    }

    fn delete(&mut self, i: usize) {
        let f = &self.v.disk().files[i];
        self.gone[i] = true;
        self.usage[f.project] -= f.bytes;
        self.total -= f.bytes;
        self.plan.delete_files.push(f.id);
        // (An order not made yet leaves the file out when it is.)
        let p = f.project;
        self.order[p].retain(|&x| x != i);
    }

    /// The next file of `p` deletable at `level`, if any.
    pub fn next_file(&mut self, p: usize, level: u8) -> Option<usize> {
        self.sort(p);
        let v = self.v;
        self.order[p]
            .iter()
            .copied()
            .find(|&i| deletion_level(&v, &v.disk().files[i]) <= level)
    }

    /// Bytes of `p`'s files that could be deleted at any level.
    pub fn deletable_bytes(&mut self, p: usize) -> f64 {
        self.sort(p);
        self.order[p]
            .iter()
            .map(|&i| self.v.disk().files[i].bytes)
            .sum()
    }

    /// Deletes `p`'s files deletable at `level` until it is not an offender.
    fn delete_down_to_limit(&mut self, p: usize, level: u8) {
        while self.excess(p) > 0.0 {
            match self.next_file(p, level) {
                Some(i) => self.delete(i),
                None => break,
            }
        }
    }

    /// Deletes a queued job (a result) and then its files.
    fn delete_job(&mut self, id: u64) {
        self.plan.delete_jobs.push(id);
        let files: Vec<usize> = (0..self.v.disk().files.len())
            .filter(|&i| !self.gone[i] && self.v.disk().files[i].job == Some(id))
            .collect();
        for &i in &files {
            self.referenced[i] = false;
        }
        // The job's files become deletable: its project's order is made
        // again when next asked for.
        if let Some(&i) = files.first() {
            self.sorted[self.v.disk().files[i].project] = false;
        }
        for i in files {
            self.delete(i);
        }
    }
}

/// `get_more_disk_space(p, space_needed)`: frees space from the greatest
/// offender first, only its files deletable at the current level and only
/// until it is no longer an offender; when no offender is left (or only `p`
/// itself), raises the level; fails past P_HIGH.
pub fn get_more_disk_space(s: &mut Scratch, p: usize, needed: f64) -> bool {
    if s.free() >= needed {
        return true;
    }
    let np = s.usage.len();
    let mut checked = vec![false; np];
    let mut level = P_LOW;
    while s.free() < needed {
        match s.greatest_offender(&checked) {
            Some(g) if g == p => checked[g] = true,
            Some(g) => {
                checked[g] = true;
                s.delete_down_to_limit(g, level);
            }
            None => {
                if level >= P_HIGH {
                    return false;
                }
                level += 1;
                checked.iter_mut().for_each(|c| *c = false);
            }
        }
    }
    true
}

/// `associate_file(fip, p)`: room from offenders first, then from `p`'s own
/// expendable files; whether `bytes` then fit.
pub fn associate_file(s: &mut Scratch, p: usize, bytes: f64) -> bool {
    if get_more_disk_space(s, p, bytes) {
        return true;
    }
    while s.free() < bytes {
        match s.next_file(p, P_HIGH) {
            Some(i) => s.delete(i),
            None => return false,
        }
    }
    true
}

/// `data_manager_poll`: nothing when BOINC's usage is within `total_limit`;
/// otherwise deletions in the seed's three stages, and suspension when they
/// are not enough.
pub fn data_manager_poll(s: &mut Scratch) {
    let limit = s.v.disk().total_limit;
    let core = s.v.disk().core_usage;
    let over = |s: &Scratch| s.total + core > limit;
    if !over(s) {
        return;
    }
    let np = s.usage.len();
    // 1. The offenders, greatest first, until none is one or nothing is left.
    let mut checked = vec![false; np];
    while over(s) {
        let Some(g) = s.greatest_offender(&checked) else {
            break;
        };
        checked[g] = true;
        while over(s) && s.excess(g) > 0.0 {
            match s.next_file(g, P_HIGH) {
                Some(i) => s.delete(i),
                None => break,
            }
        }
    }
    // 2. One file at a time round the projects, until only referenced files are left.
    let mut progress = true;
    while over(s) && progress {
        progress = false;
        for p in 0..np {
            if !over(s) {
                break;
            }
            if let Some(i) = s.next_file(p, P_HIGH) {
                s.delete(i);
                progress = true;
            }
        }
    }
    // 3. One result at a time round the projects (the latest received
    //    first), until only results that are reported or computing are left.
    let mut progress = true;
    while over(s) && progress {
        progress = false;
        for p in 0..np {
            if !over(s) {
                break;
            }
            let v = s.v;
            let job = v
                .jobs()
                .iter()
                .rev()
                .find(|j| {
                    j.project == p && v.job_deletable(j) && !s.plan.delete_jobs.contains(&j.id)
                })
                .map(|j| j.id);
            if let Some(id) = job {
                s.delete_job(id);
                progress = true;
            }
        }
    }
    s.plan.suspend = over(s);
}

/// The three amounts told to `p`'s server: free; free if offenders' files
/// were deleted (each down to its limit, as `get_more_disk_space` would);
/// free if `p`'s own deletable files were deleted too.
pub fn free_amounts(v: &View, p: usize) -> [f64; 3] {
    let mut s = Scratch::new(v);
    let free = s.free();
    let mut from_offenders = 0.0;
    for q in 0..s.usage.len() {
        if q != p && s.excess(q) > 0.0 {
            from_offenders += s.deletable_bytes(q).min(s.excess(q));
        }
    }
    let a1 = free.max(0.0);
    let a2 = (free + from_offenders).max(0.0);
    let a3 = (free + from_offenders + s.deletable_bytes(p)).max(0.0);
    [a1, a2, a3]
}

impl DiskManager for ShareDisk {
    fn free_space(&self, v: &View, project: usize) -> PolicyResult<[f64; 3]> {
        Ok(free_amounts(v, project))
    }
    fn enforces(&self, _v: &View) -> PolicyResult<bool> {
        Ok(true)
    }
    fn make_room(&mut self, v: &View, project: usize, bytes: f64) -> PolicyResult<DiskPlan> {
        let mut s = Scratch::new(v);
        associate_file(&mut s, project, bytes);
        Ok(s.plan)
    }
    fn poll(&mut self, v: &View) -> PolicyResult<DiskPlan> {
        let mut s = Scratch::new(v);
        data_manager_poll(&mut s);
        Ok(s.plan)
    }
    fn project_limit(&self, v: &View, project: usize) -> PolicyResult<Option<f64>> {
        Ok(Some(project_limit(v, project)))
    }

    /// Per project whose files go: offender or not (usage against its
    /// limit), the files' deletion levels (expendable, expired, priority);
    /// results deleted when files were not enough; suspension.
    fn explain_plan(&self, v: &View, plan: &DiskPlan) -> PolicyResult<Option<Reason>> {
        let s = Scratch::new(v);
        let files = &v.disk().files;
        let np = v.projects().len();
        let mut parts = Vec::new();
        let mut reason = Reason::new("");
        let mut greatest: Option<(usize, f64)> = None;
        for p in 0..np {
            let mine: Vec<&FileInfo> = plan
                .delete_files
                .iter()
                .filter_map(|id| files.iter().find(|f| f.id == *id))
                .filter(|f| f.project == p)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let name = v.projects()[p].name.as_str();
            let excess = s.excess(p);
            let who = if excess > 0.0 {
                if greatest.is_none_or(|(_, e)| excess > e) {
                    greatest = Some((p, excess));
                }
                format!(
                    "{name} is an offender (uses {}, over its limit {} by {})",
                    bytes(s.usage[p]),
                    bytes(s.limit[p]),
                    bytes(excess)
                )
            } else {
                format!(
                    "{name} is within its limit ({} of {}), but no offender's files were left",
                    bytes(s.usage[p]),
                    bytes(s.limit[p])
                )
            };
            let level = mine.iter().map(|f| deletion_level(v, f)).max().unwrap_or(0);
            let expendable = mine.iter().filter(|f| !f.sticky).count();
            let expired = mine
                .iter()
                .filter(|f| f.sticky && deletion_level(v, f) == 0)
                .count();
            let mut what = format!(
                "{} of its files ({}), deletion level up to {level}",
                mine.len(),
                bytes(mine.iter().map(|f| f.bytes).sum())
            );
            if expendable > 0 {
                what.push_str(&format!(", {expendable} expendable (not sticky)"));
            }
            if expired > 0 {
                what.push_str(&format!(", {expired} expired"));
            }
            parts.push(format!("{who}: {what}"));
        }
        if let Some((p, excess)) = greatest {
            reason = reason
                .with("offender", v.projects()[p].name.as_str())
                .with("excess_bytes", excess);
        }
        if !plan.delete_jobs.is_empty() {
            parts.push(format!(
                "{} results deleted (latest received first): deleting files was not enough to bring BOINC's usage within the limit",
                plan.delete_jobs.len()
            ));
        }
        if plan.suspend {
            parts.push("computation suspended: nothing more can be freed".into());
        }
        let over = s.total + v.disk().core_usage - v.disk().total_limit;
        reason.text = crate::why::join(&parts);
        Ok(Some(
            reason
                .with("files", plan.delete_files.len())
                .with("jobs", plan.delete_jobs.len())
                .with("over_total_limit_bytes", over)
                .with("free_bytes", s.free())
                .with("suspend", plan.suspend),
        ))
    }
}
