//! An explained run's records (`SimOptions::explain`): each decision the
//! simulator applies, with its policy's reason, and each outcome. Nothing
//! here runs, and no policy is asked for a reason, unless the run explains.

use super::{live_view, SimError, Simulation};
use crate::explain::{
    clock, short_duration, short_number, Outcome, Ranking, Reason, Record, Source,
};
use crate::model::{JobState, RunMode};
use crate::policy::{Candidate, DiskPlan, RunList, Verdict, WorkRequest};
use crate::registry::Family;

/// The text of a request's work part: `cpu 3.6 h` or `cpu 3.6 h, nvidia
/// 20 min (1 instance)`; `no work` for a report.
fn requested(req: &WorkRequest, host: &crate::model::HostInfo) -> String {
    if !req.wants_work() {
        return "no work".into();
    }
    if !req.per_resource() {
        return format!("{} of work", short_duration(req.work_req_seconds));
    }
    let parts: Vec<String> = req
        .rsc
        .iter()
        .enumerate()
        .filter(|(_, x)| x.req_seconds > 0.0 || x.req_ninstances > 0.0)
        .map(|(r, x)| {
            let name = host.rsc_name(r);
            if x.req_ninstances > 0.0 {
                let n = short_number(x.req_ninstances);
                let unit = if x.req_ninstances == 1.0 {
                    "instance"
                } else {
                    "instances"
                };
                format!("{name} {} ({n} {unit})", short_duration(x.req_seconds))
            } else {
                format!("{name} {}", short_duration(x.req_seconds))
            }
        })
        .collect();
    parts.join(", ")
}

impl Simulation {
    pub(super) fn explaining(&self) -> bool {
        self.explanation.is_some()
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        source: Source,
        decision: String,
        reason: Option<Reason>,
        project: Option<usize>,
        job: Option<u64>,
        outcome: Outcome,
    ) {
        let time = self.st.now;
        if let Some((index, _)) = self.opts.snapshot_at {
            if self
                .explanation
                .as_ref()
                .is_some_and(|ex| ex.records.len() == index)
            {
                self.fold(self.k);
                self.snapshot(time);
            }
        }
        if self.opts.keep_from.is_some_and(|from| time < from) {
            return;
        }
        if let Some(ex) = &mut self.explanation {
            ex.push(Record {
                time,
                source,
                decision,
                reason: reason.unwrap_or_default(),
                project,
                job,
                outcome,
            });
        }
    }

    /// Keeps a copy of the state as at `t` (not before the last event), once.
    pub(super) fn snapshot(&mut self, t: f64) {
        if self
            .explanation
            .as_ref()
            .is_none_or(|ex| ex.snapshot.is_some())
        {
            return;
        }
        let mut st = Box::new(self.st.clone());
        st.now = t.max(st.now);
        if let Some(ex) = &mut self.explanation {
            ex.snapshot = Some(st);
        }
    }

    fn project_name(&self, p: usize) -> &str {
        &self.st.projects[p].name
    }

    /// Before a run list is applied: each job it starts, preempts or
    /// switches, with the scheduler's reason; then its ranking.
    pub(super) fn explain_schedule(&mut self, out: &RunList) -> Result<(), SimError> {
        let mut changes = Vec::new();
        for (i, j) in self.st.jobs.iter().enumerate() {
            let verb = match (j.state, self.listed[i]) {
                (JobState::Running, None) => "preempt".to_string(),
                (JobState::Queued | JobState::Preempted, Some(mode)) => match mode {
                    RunMode::Deadline => "start (deadline mode)".to_string(),
                    _ => "start".to_string(),
                },
                (JobState::Running, Some(mode)) if mode != j.mode => match mode {
                    RunMode::Deadline => "switch to deadline mode".to_string(),
                    _ => "switch out of deadline mode".to_string(),
                },
                _ => continue,
            };
            changes.push((j.id, j.project, verb));
        }
        for (id, p, verb) in changes {
            let reason = {
                let v = live_view!(self);
                self.pol.cpu.explain(&v, out, id)
            };
            let reason = reason.map_err(|e| self.policy_err(Family::Cpu, e))?;
            let text = format!("{verb} job {id} ({})", self.project_name(p));
            self.record(
                Source::Policy(Family::Cpu),
                text,
                reason,
                Some(p),
                Some(id),
                Outcome::None,
            );
        }
        let ranking = {
            let v = live_view!(self);
            self.pol.cpu.ranking(&v)
        };
        let ranking = ranking.map_err(|e| self.policy_err(Family::Cpu, e))?;
        let now = self.st.now;
        if let (Some(ex), Some(r)) = (&mut self.explanation, ranking) {
            ex.ranking(
                now,
                Ranking {
                    name: r.name,
                    values: r.values,
                },
            );
        }
        Ok(())
    }

    /// After a run list is applied: the FLOPs each project has computed so
    /// far (reported, and on the host: in progress, or finished and not yet
    /// reported; a reported job leaves the host).
    pub(super) fn explain_work_done(&mut self) {
        if !self.explaining() {
            return;
        }
        let mut w: Vec<f64> = self
            .st
            .projects
            .iter()
            .map(|p| p.stats.flops_used + p.stats.flops_wasted)
            .collect();
        for j in &self.st.jobs {
            w[j.project] += j.flops_this_run(&self.st.host);
        }
        let now = self.st.now;
        if let Some(ex) = &mut self.explanation {
            ex.work_done(now, w);
        }
    }

    /// An RPC about to be made, with the fetcher's reason (`overdue`: a
    /// report-result session the simulator starts for overdue results).
    pub(super) fn explain_request(
        &mut self,
        req: &WorkRequest,
        overdue: bool,
    ) -> Result<(), SimError> {
        let reason = if req.wants_work() {
            let r = {
                let v = live_view!(self);
                self.pol.fetch.explain_request(&v, req)
            };
            r.map_err(|e| self.policy_err(Family::Fetch, e))?
        } else {
            None
        };
        let reason = match (overdue, reason) {
            (true, r) => {
                let mut base = Reason::new("results are overdue (report-result session; of the projects with overdue results, the greatest resource debt)");
                if let Some(r) = r {
                    base.text = format!("{}; the fetcher adds work: {}", base.text, r.text);
                    base.data = r.data;
                }
                Some(base)
            }
            (false, r) => r,
        };
        let text = format!(
            "RPC to {} asking for {}",
            self.project_name(req.project),
            requested(req, &self.st.host)
        );
        self.record(
            Source::Policy(Family::Fetch),
            text,
            reason,
            Some(req.project),
            None,
            Outcome::None,
        );
        Ok(())
    }

    /// An RPC's outcome: reached or not, jobs, back-off.
    pub(super) fn explain_rpc_outcome(&mut self, p: usize, reached: bool, njobs: u32, why: &str) {
        if !self.explaining() {
            return;
        }
        let rpc = &self.st.projects[p].rpc;
        let backoff = (rpc.min_rpc_time > self.st.now).then_some(rpc.min_rpc_time);
        let mut text = if reached {
            let unit = if njobs == 1 { "job" } else { "jobs" };
            format!("{} replied with {njobs} {unit}", self.project_name(p))
        } else {
            format!("{} not reached ({why})", self.project_name(p))
        };
        let mut reason = Reason::new("")
            .with("failures", rpc.nrpc_failures as f64)
            .with("jobs", njobs as f64);
        if let Some(t) = backoff {
            text.push_str(&format!("; next RPC not before {}", clock(t)));
            reason = reason.with("min_rpc_time_s", t);
        }
        let outcome = if reached {
            Outcome::RpcReached
        } else {
            Outcome::RpcFailed
        };
        self.record(Source::Outcome, text, Some(reason), Some(p), None, outcome);
    }

    /// The server's verdict on one candidate, with the sender's reason.
    pub(super) fn explain_verdict(
        &mut self,
        p: usize,
        cand: &Candidate,
        verdict: Verdict,
        withheld: bool,
        reason: Option<Reason>,
    ) {
        let app = &self.st.projects[p].apps[cand.app].name;
        let what = format!(
            "a job of `{app}` ({} estimated, deadline {})",
            short_duration(cand.est_seconds),
            clock(cand.deadline)
        );
        let text = match (verdict, withheld) {
            (Verdict::Send, false) => format!("{}'s server sends {what}", self.project_name(p)),
            (Verdict::Send, true) => format!(
                "{}'s server withholds {what}: no disk space left for it",
                self.project_name(p)
            ),
            (Verdict::Skip, _) => format!("{}'s server skips {what}", self.project_name(p)),
            (Verdict::Stop, _) => format!("{}'s server ends the reply", self.project_name(p)),
        };
        self.record(
            Source::Policy(Family::Send),
            text,
            reason,
            Some(p),
            None,
            Outcome::None,
        );
    }

    /// A job reported: on time, late or failed.
    pub(super) fn explain_report(&mut self, p: usize, id: u64, deadline: f64, failed: bool) {
        if !self.explaining() {
            return;
        }
        let now = self.st.now;
        let (outcome, what) = if failed {
            (Outcome::Failed, "failed".to_string())
        } else if now > deadline {
            (
                Outcome::Late,
                format!("late by {}", short_duration(now - deadline)),
            )
        } else {
            (Outcome::OnTime, "on time".to_string())
        };
        let text = format!("job {id} ({}) reported {what}", self.project_name(p));
        let reason = Reason::new("").with("deadline_s", deadline);
        self.record(
            Source::Outcome,
            text,
            Some(reason),
            Some(p),
            Some(id),
            outcome,
        );
    }

    /// The estimator's correction of a project before and after it learnt
    /// from a finished job.
    pub(super) fn explain_dcf(&mut self, p: usize, id: u64, before: f64) -> Result<(), SimError> {
        let after = {
            let v = live_view!(self);
            v.correction(p)
        };
        let after = after.map_err(|e| self.policy_err(Family::Estimate, e))?;
        let text = format!(
            "DCF of {} {} -> {} after job {id}",
            self.project_name(p),
            short_number(before),
            short_number(after)
        );
        let reason = Reason::new("the estimator learnt from a finished job")
            .with("dcf_before", before)
            .with("dcf_after", after);
        self.record(
            Source::Policy(Family::Estimate),
            text,
            Some(reason),
            Some(p),
            Some(id),
            Outcome::None,
        );
        Ok(())
    }

    /// A disk plan about to be applied, with the manager's reason.
    pub(super) fn explain_disk_plan(&mut self, plan: &DiskPlan) -> Result<(), SimError> {
        if plan.delete_jobs.is_empty() && plan.delete_files.is_empty() {
            return Ok(());
        }
        let reason = {
            let v = live_view!(self);
            self.pol.disk.explain_plan(&v, plan)
        };
        let reason = reason.map_err(|e| self.policy_err(Family::Disk, e))?;
        let mut parts = Vec::new();
        for id in &plan.delete_jobs {
            let p = self.st.job(*id).map(|j| j.project);
            let name = p.map_or("?".to_string(), |p| self.project_name(p).to_string());
            parts.push(format!("job {id} ({name})"));
        }
        for id in &plan.delete_files {
            parts.push(format!("file {id}"));
        }
        let text = format!("delete {}", parts.join(", "));
        self.record(
            Source::Policy(Family::Disk),
            text,
            reason,
            None,
            None,
            Outcome::None,
        );
        Ok(())
    }
}
