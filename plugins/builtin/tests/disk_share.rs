//! The `share` disk manager against the examples of `disk-management`.

use proptest::prelude::*;
use vcsim_builtin::disk_share::{associate_file, free_amounts, project_limit, Scratch, ShareDisk};
use vcsim_framework::model::{FileInfo, FileKind, P_HIGH, P_LOW, P_MEDIUM};
use vcsim_framework::testing::{add_job, set_now, state, JobSpec};
use vcsim_framework::{ClientState, DiskManager, DiskPlan, JobState, StaticEstimate, View};

const MB: f64 = 1e6;
const DAY: f64 = 86400.0;

fn view(st: &ClientState) -> View<'_> {
    View::new(st, &StaticEstimate, st.now)
}

/// `make_room` through the seed's `associate_file`: the plan, and whether
/// the bytes then fit.
fn make_room(st: &ClientState, p: usize, bytes: f64) -> (DiskPlan, bool) {
    let v = view(st);
    let mut s = Scratch::new(&v);
    let fits = associate_file(&mut s, p, bytes);
    (s.plan, fits)
}

/// A and B with shares 75 and 25; BOINC may use 1000 MB.
fn two(policy_a: &str, policy_b: &str) -> ClientState {
    state(&format!(
        r#"
name = "t"
duration_days = 1
[host]
ncpus = 2
cpu_flops = 1e9
disk_gb = 100
[client]
disk_max_used_gb = 1
[[project]]
name = "A"
resource_share = 75
latency_bound_days = 1
deletion_policy = "{policy_a}"
[[project.app]]
name = "main"
flops_estimate = 1e12
flops_mean = 1e12
input_mb = 10
[[project]]
name = "B"
resource_share = 25
latency_bound_days = 1
deletion_policy = "{policy_b}"
[[project.app]]
name = "main"
flops_estimate = 1e12
flops_mean = 1e12
input_mb = 10
"#
    ))
}

fn sticky(st: &mut ClientState, p: usize, mb: f64, priority: u8, created: f64) -> u64 {
    st.add_file(FileInfo {
        id: 0,
        project: p,
        kind: FileKind::Sticky,
        bytes: mb * MB,
        job: None,
        sticky: true,
        priority,
        created,
        last_used: created,
        expires: created + 60.0 * DAY,
    })
}

fn input_of(st: &mut ClientState, p: usize, job: u64, mb: f64) -> u64 {
    st.add_file(FileInfo {
        id: 0,
        project: p,
        kind: FileKind::Input,
        bytes: mb * MB,
        job: Some(job),
        sticky: false,
        priority: P_LOW,
        created: 0.0,
        last_used: 0.0,
        expires: 60.0 * DAY,
    })
}

/// Applies a plan as the simulator would (the checks are the simulator's).
fn apply(st: &mut ClientState, plan: &vcsim_framework::DiskPlan) {
    for id in &plan.delete_jobs {
        let j = st.job(*id).expect("job on the host");
        assert!(st.job_deletable(j), "job {id} deleted while it started");
        st.jobs.retain(|j| j.id != *id);
        for f in st.disk.files.iter_mut() {
            if f.job == Some(*id) {
                f.job = None;
            }
        }
    }
    for id in &plan.delete_files {
        let f = st.disk.file(*id).expect("file on the host").clone();
        assert!(!st.file_referenced(&f), "referenced file {id} deleted");
        st.disk.files.retain(|g| g.id != *id);
    }
}

#[test]
fn limits_are_75_and_25_percent_of_the_space_projects_may_use() {
    let st = two("lru", "lru");
    assert_eq!(st.disk.total_limit, 1e9);
    assert_eq!(project_limit(&view(&st), 0), 750.0 * MB);
    assert_eq!(project_limit(&view(&st), 1), 250.0 * MB);
}

#[test]
fn the_total_limit_is_the_least_of_the_three_preferences() {
    let mut st = state(
        r#"
name = "t"
duration_days = 1
[host]
ncpus = 1
cpu_flops = 1e9
disk_gb = 100
non_boinc_used_gb = 95
[client]
disk_max_used_gb = 50
disk_max_used_pct = 90
disk_min_free_gb = 1
[[project]]
name = "A"
resource_share = 1
latency_bound_days = 1
[[project.app]]
name = "main"
flops_estimate = 1e12
flops_mean = 1e12
"#,
    );
    // 100 - 95 - 1 = 4 GB, less than 50 GB and 90% of 100 GB.
    assert_eq!(st.disk.total_limit, 4e9);
    st.disk.core_usage = 1e9;
    assert_eq!(st.disk.all_projects_limit(), 3e9);
}

#[test]
fn a_project_under_its_limit_leaves_room_for_the_other() {
    let mut st = two("lru", "lru");
    // A uses 100 of its 750 MB; B already uses 600 MB, over its 250 MB.
    sticky(&mut st, 0, 100.0, P_LOW, 0.0);
    sticky(&mut st, 1, 600.0, P_LOW, 0.0);
    let free = free_amounts(&view(&st), 1);
    assert_eq!(free[0], 300.0 * MB);
    // B may add 200 MB more without deleting anything.
    let (plan, fits) = make_room(&st, 1, 200.0 * MB);
    assert!(fits);
    assert!(plan.delete_files.is_empty());
}

#[test]
fn a_file_addition_deletes_from_the_greatest_offender_until_it_is_no_longer_one() {
    let mut st = state(
        r#"
name = "t"
duration_days = 1
[host]
ncpus = 1
cpu_flops = 1e9
[client]
disk_max_used_gb = 0.9
[[project]]
name = "A"
resource_share = 1
latency_bound_days = 1
[[project.app]]
name = "main"
flops_estimate = 1e12
flops_mean = 1e12
[[project]]
name = "B"
resource_share = 1
latency_bound_days = 1
[[project.app]]
name = "main"
flops_estimate = 1e12
flops_mean = 1e12
[[project]]
name = "C"
resource_share = 1
latency_bound_days = 1
[[project.app]]
name = "main"
flops_estimate = 1e12
flops_mean = 1e12
"#,
    );
    // Limits 300 MB each. B: 500 MB (offends by 200), C: 400 MB (by 100); A: 0.
    let b1 = sticky(&mut st, 1, 150.0, P_LOW, 0.0);
    let b2 = sticky(&mut st, 1, 150.0, P_LOW, 10.0);
    let b3 = sticky(&mut st, 1, 200.0, P_LOW, 20.0);
    sticky(&mut st, 2, 400.0, P_LOW, 0.0);
    assert_eq!(free_amounts(&view(&st), 0)[0], 0.0);
    let (plan, fits) = make_room(&st, 0, 100.0 * MB);
    assert!(fits);
    // B first (greatest), least recently used first, until B is within 300 MB:
    // deleting b1 leaves 350, b2 leaves 200. C is left alone: enough was made.
    assert_eq!(plan.delete_files, vec![b1, b2]);
    let _ = b3;
    // The second amount told to A's server counts what offenders would give.
    let free = free_amounts(&view(&st), 0);
    assert_eq!(free[1], 300.0 * MB);
}

#[test]
fn the_deletion_level_rises_one_priority_at_a_time() {
    let mut st = two("lru", "lru");
    // B (limit 250) has a P_HIGH 300 MB file and a P_MEDIUM 300 MB file.
    let high = sticky(&mut st, 1, 300.0, P_HIGH, 0.0);
    let med = sticky(&mut st, 1, 300.0, P_MEDIUM, 10.0);
    sticky(&mut st, 0, 350.0, P_LOW, 0.0);
    // 950 used; A wants 100: the P_MEDIUM file goes (B is then within its limit).
    let (plan, fits) = make_room(&st, 0, 100.0 * MB);
    assert!(fits);
    assert_eq!(plan.delete_files, vec![med]);
    let _ = high;
}

#[test]
fn priority_policy_deletes_lowest_priority_first_in_download_order() {
    let mut st = two("lru", "priority");
    sticky(&mut st, 0, 700.0, P_LOW, 0.0);
    let late_low = sticky(&mut st, 1, 50.0, P_LOW, 30.0);
    let medium = sticky(&mut st, 1, 50.0, P_MEDIUM, 0.0);
    let early_low = sticky(&mut st, 1, 50.0, P_LOW, 10.0);
    let high = sticky(&mut st, 1, 150.0, P_HIGH, 5.0);
    // 1000 used; the poll has nothing to do; A needs 200 MB: B (300 of 250)
    // loses its P_LOW files, earliest download first.
    let (plan, _) = make_room(&st, 0, 40.0 * MB);
    assert_eq!(plan.delete_files, vec![early_low]);
    // The poll, over the limit, deletes in the same order, then the next level
    // (A's file left out, so that only B offends).
    st.disk.files.retain(|f| f.project == 1);
    st.disk.total_limit = 150.0 * MB;
    let plan = ShareDisk.poll(&view(&st)).unwrap();
    assert_eq!(plan.delete_files[..3], [early_low, late_low, medium]);
    let _ = high;
}

#[test]
fn expire_policy_deletes_expired_files_first_at_any_priority() {
    let mut st = two("lru", "expire");
    set_now(&mut st, 100.0 * DAY);
    sticky(&mut st, 0, 700.0, P_LOW, 90.0 * DAY);
    let fresh_low = sticky(&mut st, 1, 100.0, P_LOW, 80.0 * DAY);
    let expired_high = sticky(&mut st, 1, 100.0, P_HIGH, 30.0 * DAY);
    let old_low = sticky(&mut st, 1, 100.0, P_LOW, 50.0 * DAY);
    let (plan, _) = make_room(&st, 0, 50.0 * MB);
    // Expired files (older than 60 days) are level 0: oldest use first.
    assert_eq!(plan.delete_files, vec![expired_high]);
    st.disk.files.retain(|f| f.project == 1);
    st.disk.total_limit = 0.0;
    let plan = ShareDisk.poll(&view(&st)).unwrap();
    assert_eq!(plan.delete_files, vec![expired_high, old_low, fresh_low]);
}

#[test]
fn lru_policy_deletes_least_recently_used_first() {
    let mut st = two("lru", "lru");
    sticky(&mut st, 0, 700.0, P_LOW, 0.0);
    let a = sticky(&mut st, 1, 100.0, P_LOW, 0.0);
    let b = sticky(&mut st, 1, 100.0, P_LOW, 0.0);
    let c = sticky(&mut st, 1, 100.0, P_LOW, 0.0);
    // Used last: a, then c, then b (least recently used first: b, c, a).
    let set = |st: &mut ClientState, id: u64, t: f64| {
        st.disk
            .files
            .iter_mut()
            .find(|f| f.id == id)
            .unwrap()
            .last_used = t;
    };
    set(&mut st, a, 30.0);
    set(&mut st, b, 10.0);
    set(&mut st, c, 20.0);
    st.disk.files.retain(|f| f.project == 1);
    st.disk.total_limit = 150.0 * MB;
    let plan = ShareDisk.poll(&view(&st)).unwrap();
    assert_eq!(plan.delete_files, vec![b, c]);
    assert!(!plan.suspend);
}

#[test]
fn the_poll_deletes_a_queued_result_when_files_are_not_enough() {
    let mut st = two("lru", "lru");
    let started = add_job(&mut st, JobSpec::queued(0, 1e12, DAY).running(0.5));
    let queued = add_job(&mut st, JobSpec::queued(0, 1e12, DAY));
    input_of(&mut st, 0, started, 500.0);
    let qi = input_of(&mut st, 0, queued, 400.0);
    sticky(&mut st, 1, 200.0, P_LOW, 0.0);
    st.disk.total_limit = 600.0 * MB;
    let plan = ShareDisk.poll(&view(&st)).unwrap();
    // Offender A has only referenced files; B's file goes, then the queued
    // job and its input.
    assert_eq!(plan.delete_jobs, vec![queued]);
    assert!(plan.delete_files.contains(&qi));
    assert!(!plan.suspend);
}

#[test]
fn the_poll_suspends_when_nothing_can_be_freed() {
    let mut st = two("lru", "lru");
    let j = add_job(&mut st, JobSpec::queued(0, 1e12, DAY).running(0.5));
    input_of(&mut st, 0, j, 1200.0);
    let plan = ShareDisk.poll(&view(&st)).unwrap();
    assert!(plan.suspend);
    assert!(plan.delete_files.is_empty() && plan.delete_jobs.is_empty());
    // Finished, the job's output waits for the server's ack: still referenced.
    st.jobs[0].state = JobState::Finished;
    st.disk.files[0].kind = FileKind::Output;
    assert!(ShareDisk.poll(&view(&st)).unwrap().suspend);
}

#[test]
fn the_third_amount_counts_the_projects_own_deletable_files() {
    let mut st = two("lru", "lru");
    sticky(&mut st, 0, 700.0, P_LOW, 0.0);
    sticky(&mut st, 1, 250.0, P_LOW, 0.0);
    let j = add_job(&mut st, JobSpec::queued(0, 1e12, DAY));
    input_of(&mut st, 0, j, 40.0);
    let free = free_amounts(&view(&st), 0);
    // 10 MB free; nobody offends; A's own sticky 700 MB (not the referenced input).
    assert!((free[0] - 10.0 * MB).abs() < 1.0);
    assert!((free[1] - 10.0 * MB).abs() < 1.0);
    assert!((free[2] - 710.0 * MB).abs() < 1.0);
    let (plan, fits) = make_room(&st, 0, 500.0 * MB);
    assert!(fits);
    assert_eq!(plan.delete_files.len(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn after_a_poll_usage_is_within_the_limit_and_no_referenced_file_is_gone(
        files in prop::collection::vec((0usize..2, 1.0f64..400.0, 1u8..=5, 0.0f64..100.0, 0usize..4), 0..25),
        jobs in prop::collection::vec((0usize..2, 0u8..3), 0..6),
        limit_mb in 0.0f64..2000.0,
        policies in (0usize..3, 0usize..3),
        now_days in 0.0f64..120.0,
    ) {
        let names = ["lru", "priority", "expire"];
        let mut st = two(names[policies.0], names[policies.1]);
        set_now(&mut st, now_days * DAY);
        let mut ids = Vec::new();
        for (p, s) in &jobs {
            let spec = JobSpec::queued(*p, 1e12, DAY);
            let spec = match s { 0 => spec, 1 => spec.running(0.3), _ => { let mut x = spec; x.state = JobState::Finished; x } };
            ids.push(add_job(&mut st, spec));
        }
        for (p, mb, prio, day, owner) in &files {
            let (job, kind) = match ids.get(*owner) {
                Some(&id) if st.job(id).unwrap().project == *p => {
                    let fin = st.job(id).unwrap().state == JobState::Finished;
                    (Some(id), if fin { FileKind::Output } else { FileKind::Input })
                }
                _ => (None, FileKind::Sticky),
            };
            st.add_file(FileInfo { id: 0, project: *p, kind, bytes: mb * MB, job, sticky: job.is_none(), priority: *prio, created: day * DAY, last_used: day * DAY, expires: (day + 60.0) * DAY });
        }
        st.disk.total_limit = limit_mb * MB;
        let st0 = st.clone();
        let plan = ShareDisk.poll(&view(&st)).unwrap();
        apply(&mut st, &plan);
        // Files referenced before are still there, unless the plan deleted their (queued) job.
        for f in &st0.disk.files {
            let job_deleted = f.job.is_some_and(|id| plan.delete_jobs.contains(&id));
            if st0.file_referenced(f) && !job_deleted {
                prop_assert!(st.disk.file(f.id).is_some(), "referenced file {} deleted", f.id);
            }
        }
        let used = st.disk.usage();
        if plan.suspend {
            prop_assert!(used > st.disk.total_limit);
            // Nothing deletable is left.
            prop_assert!(st.disk.files.iter().all(|f| st.file_referenced(f)));
            prop_assert!(st.jobs.iter().all(|j| !st.job_deletable(j)));
        } else {
            prop_assert!(used <= st.disk.total_limit + 1e-6, "{} > {}", used, st.disk.total_limit);
        }
    }
}
