//! The client's side of scheduler RPCs: which RPC to make now (overdue
//! results first, then the fetcher's request), its outcome (the project's
//! servers up or down, back-off or success), and the report of finished
//! jobs, which is where the figures of merit count them.

use super::{live_view, SimError, Simulation};
use crate::model::{Job, JobState};
use crate::policy::{RpcReply, RscStatus, WorkRequest};
use crate::registry::Family;
use crate::rpc::{self, MAX_RPCS_PER_STEP};
use crate::time::{format_time, Time};
use crate::timeline::TimelineRpc;

impl Simulation {
    pub(super) fn connection_blocked(&self, t: Time) -> bool {
        let ci = self.st.connection_interval;
        match self.st.last_rpc {
            Some(l) if ci > 0.0 => t - l > 0.0 && t - l < ci,
            _ => false,
        }
    }

    /// The time after which a finished job is overdue (BOINC's overdue
    /// results: `now > due`, strictly, in 2007's client and today's).
    pub(super) fn report_due(&self, j: &Job) -> Time {
        let cushion = rpc::REPORT_DEADLINE_CUSHION.max(self.st.prefs.work_buf_min);
        (j.deadline - cushion).min(j.finished_at + self.client.report_max_wait)
    }

    /// A project with overdue results that can be contacted now: the one with
    /// the greatest resource debt (share / exponentially averaged CPU).
    fn overdue_project(&self) -> Option<usize> {
        let now = self.st.now;
        let mut best: Option<(usize, f64)> = None;
        for (p, pr) in self.st.projects.iter().enumerate() {
            if !pr.rpc.contactable(now) {
                continue;
            }
            let mut ready = 0;
            let overdue = self.st.jobs.iter().any(|j| {
                if j.project != p || j.state != JobState::Finished {
                    return false;
                }
                ready += 1;
                now > self.report_due(j) || self.client.report_at_ready.is_some_and(|n| ready >= n)
            });
            if overdue {
                let avg = self.st.exp_avg_cpu_at(p, now);
                let d = rpc::resource_debt(pr.resource_share, avg);
                if best.is_none_or(|(_, bd)| d > bd) {
                    best = Some((p, d));
                }
            }
        }
        best.map(|(p, _)| p)
    }

    pub(super) fn rpc_loop(&mut self) -> Result<(), SimError> {
        let now = self.st.now;
        self.quiet_through = None;
        let per_step = self.client.rpcs_per_step.min(MAX_RPCS_PER_STEP);
        for rpcs in 0..per_step {
            if self.connection_blocked(now) {
                return Ok(());
            }
            let overdue = self.overdue_project();
            let req = if let Some(p) = overdue {
                let v = live_view!(self);
                let r = self.pol.fetch.piggyback(&v, p);
                match r.map_err(|e| self.policy_err(Family::Fetch, e))? {
                    // The RPC goes to p: a request to another project
                    // could be neither sent nor honoured.
                    Some(r) if r.project != p => {
                        let other = match self.st.projects.get(r.project) {
                            Some(o) => format!("`{}`", o.name),
                            None => format!("{} (there is none)", r.project),
                        };
                        return Err(self.invalid(
                            Family::Fetch,
                            format!(
                                "`piggyback` for project `{}` returned a request to project {other}: it may ask only the project the RPC goes to (or return nothing)",
                                self.st.projects[p].name
                            ),
                        ));
                    }
                    Some(r) => r,
                    None => WorkRequest::report_only(p, self.st.host.nrsc()),
                }
            } else {
                // A quiet certificate says `request` is None, so which is
                // asked first changes no answer, only the cost: the
                // certificate first at a step's first RPC (most steps are
                // quiet), the request first after an RPC (a big host makes
                // many a step, and a certificate sought before each is lost).
                if rpcs == 0 && self.quiet_now()?.is_some() {
                    return Ok(());
                }
                let v = live_view!(self);
                let r = self.pol.fetch.request(&v);
                match r.map_err(|e| self.policy_err(Family::Fetch, e))? {
                    Some(r) => r,
                    None => {
                        if rpcs > 0 {
                            self.quiet_now()?;
                        }
                        return Ok(());
                    }
                }
            };
            self.validate_request(&req)?;
            if self.explaining() {
                self.explain_request(&req, overdue.is_some())?;
            }
            {
                let v = live_view!(self);
                let r = self.pol.fetch.account(&v);
                r.map_err(|e| self.policy_err(Family::Fetch, e))?;
            }
            let queue = self.st.jobs.len();
            self.traced(|| {
                format!(
                    "t={now} rpc p={} req={} queue={queue}",
                    req.project, req.work_req_seconds
                )
            });
            let got_jobs = self.do_rpc(req)?;
            let suspension_changed = self.st.disk.tracked && self.disk_poll()?;
            if got_jobs || suspension_changed {
                self.schedule()?;
            }
        }
        // The client may want another RPC: the event-driven mode visits the
        // next step, as the fixed-step one does (an overdue report that
        // waited for this step's one RPC is no event of the state's).
        self.rpcs_left = true;
        // A client of one RPC a step (today's emulator) is done; one that
        // would go on is stopped, and told so once: a big host can reach
        // the cap at every step for days.
        if per_step < MAX_RPCS_PER_STEP {
            return Ok(());
        }
        self.rpc_cap_steps += 1;
        if self.rpc_cap_steps == 1 {
            self.log.push(
                now,
                "simulator",
                &format!(
                    "{MAX_RPCS_PER_STEP} RPCs in one step; the rest of this step's requests were dropped (said once; the log's last line counts the steps where it happened)"
                ),
            );
        }
        Ok(())
    }

    fn validate_request(&self, r: &WorkRequest) -> Result<(), SimError> {
        let np = self.st.projects.len();
        if r.project >= np {
            return Err(self.invalid(
                Family::Fetch,
                format!("project {} does not exist ({} projects)", r.project, np),
            ));
        }
        if !self.st.projects[r.project].rpc.contactable(self.st.now) {
            return Err(self.invalid(
                Family::Fetch,
                format!(
                    "project `{}` is backed off until {}",
                    self.st.projects[r.project].name,
                    format_time(self.st.projects[r.project].rpc.min_rpc_time)
                ),
            ));
        }
        if r.rsc.len() != self.st.host.nrsc() {
            return Err(self.invalid(
                Family::Fetch,
                format!(
                    "{} resource requests for {} resources",
                    r.rsc.len(),
                    self.st.host.nrsc()
                ),
            ));
        }
        let bad = |x: f64| !x.is_finite() || x < 0.0;
        if bad(r.work_req_seconds)
            || r.rsc
                .iter()
                .any(|x| bad(x.req_seconds) || bad(x.req_ninstances) || bad(x.estimated_delay))
        {
            return Err(self.invalid(
                Family::Fetch,
                "a requested amount or estimated delay is negative, infinite or not a number"
                    .into(),
            ));
        }
        Ok(())
    }

    /// One scheduler RPC; returns whether jobs arrived.
    fn do_rpc(&mut self, req: WorkRequest) -> Result<bool, SimError> {
        self.fold(self.k);
        for (r, x) in req.rsc.iter().enumerate() {
            if x.req_seconds > 0.0 || x.req_ninstances > 0.0 {
                self.asked[r] = true;
            }
        }
        if req.work_req_seconds > 0.0 && !req.per_resource() {
            self.asked_seconds = true;
        }
        let now = self.st.now;
        let p = req.project;
        self.st.last_rpc = Some(now);
        self.st.projects[p].rpc.last_rpc = Some(now);
        let nrsc = self.st.host.nrsc();
        let mut reply = RpcReply {
            project: p,
            request: req,
            reached: false,
            jobs: vec![0; nrsc],
            rsc_status: vec![RscStatus::Unknown; nrsc],
        };
        let project_up = self.servers.project_up(p, now);
        let master_read = self.st.projects[p].rpc.master_fetch_pending;
        if master_read {
            // Re-read the master file (the scheduler list) first.
            self.st.projects[p].rpc.master_fetched(project_up);
        }
        let reached = project_up
            && !self.st.projects[p].rpc.master_fetch_pending
            && self.servers.some_scheduler_up(p, now);
        if let Some(tl) = &mut self.timeline {
            tl.rpcs.push(TimelineRpc {
                time: now,
                project: p,
                reached,
                jobs: 0,
            });
        }
        if !reached {
            self.st.projects[p].stats.rpc_failures += 1;
            self.st.projects[p].rpc.backoff(now, &mut self.backoff_rng);
            if self.explaining() {
                let why = if !project_up {
                    "the project's servers are down"
                } else if master_read && self.st.projects[p].rpc.master_fetch_pending {
                    "its master file could not be read"
                } else {
                    "all its schedulers are down"
                };
                self.explain_rpc_outcome(p, false, 0, why);
            }
            let v = live_view!(self);
            let r = self.pol.fetch.on_reply(&v, &reply);
            r.map_err(|e| self.policy_err(Family::Fetch, e))?;
            return Ok(false);
        }
        reply.reached = true;
        self.st.projects[p].stats.rpcs += 1;
        self.report_finished(p, now);
        let wants_work = reply.request.wants_work();
        let full_before = self.disk.files_not_written;
        let njobs = if wants_work {
            self.send_work(&reply.request, &mut reply.jobs)?
        } else {
            0
        };
        if let Some(tl) = &mut self.timeline {
            if let Some(last) = tl.rpcs.last_mut() {
                last.jobs = njobs;
            }
        }
        if self.st.projects[p].reports_resource_support {
            for (r, status) in reply.rsc_status.iter_mut().enumerate() {
                *status = if reply.jobs[r] > 0 {
                    RscStatus::WorkReturned
                } else if self.st.projects[p].has_rsc_apps[r] {
                    RscStatus::NoWorkButSupported
                } else {
                    RscStatus::NotSupported
                };
            }
        }
        let empty = wants_work && njobs == 0;
        let backoff = {
            let v = live_view!(self);
            self.pol.fetch.backoff_on_empty_reply(&v)
        };
        // Downloads that failed for a full disk back the project off as a
        // failed RPC does, exponentially (BOINC stalls work fetch from a
        // project whose downloads fail): a full disk is not asked to take
        // a reply's worth of jobs at every step.
        let downloads_failed = self.disk.files_not_written > full_before;
        let empty_backoff = empty && backoff.map_err(|e| self.policy_err(Family::Fetch, e))?;
        if empty_backoff || downloads_failed {
            self.st.projects[p].rpc.backoff(now, &mut self.backoff_rng);
        } else {
            let delay = self.servers.request_delay[p];
            self.st.projects[p].rpc.succeeded(now, delay);
        }
        self.explain_rpc_outcome(p, true, njobs, "");
        let v = live_view!(self);
        let r = self.pol.fetch.on_reply(&v, &reply);
        r.map_err(|e| self.policy_err(Family::Fetch, e))?;
        if njobs > 0 {
            self.reschedule = true;
        }
        Ok(njobs > 0)
    }

    /// The RPC reports `p`'s finished jobs: on time (used) or late or failed
    /// (wasted), judged now, as both BOINC simulators do.
    fn report_finished(&mut self, p: usize, now: Time) {
        let mut reported = 0;
        let mut explained = self.explaining().then(Vec::new);
        for j in self
            .st
            .jobs
            .iter()
            .filter(|j| j.project == p && j.state == JobState::Finished)
        {
            let flops = j.flops_this_run(&self.st.host);
            let late = now > j.deadline;
            let wasted = j.failed || late;
            let s = &mut self.st.projects[p].stats;
            if j.failed {
                s.jobs_failed += 1;
                self.disk.jobs_failed_disk_full += u64::from(j.disk_full);
            } else if late {
                s.jobs_late += 1;
            } else {
                s.jobs_on_time += 1;
            }
            if wasted {
                s.flops_wasted += flops;
            } else {
                s.flops_used += flops;
            }
            for r in 0..self.st.host.nrsc() {
                s.busy_seconds[r] += j.instance_seconds(r);
            }
            self.acc.reported(&self.st, j, wasted);
            if let Some(tl) = &mut self.timeline {
                tl.reported(j.id, now, late && !j.failed);
            }
            if let Some(ex) = &mut explained {
                ex.push((j.id, j.deadline, j.failed));
            }
            reported += 1;
        }
        for (id, deadline, failed) in explained.into_iter().flatten() {
            self.explain_report(p, id, deadline, failed);
        }
        if reported > 0 {
            self.acc.jobs_reported += reported;
            let mut i = 0;
            let done_step = &mut self.done_step;
            self.st.jobs.retain(|j| {
                let keep = !(j.project == p && j.state == JobState::Finished);
                if !keep {
                    done_step.remove(i);
                } else {
                    i += 1;
                }
                keep
            });
            if self.st.disk.tracked {
                self.release_files(p, now);
            }
        }
    }
}
