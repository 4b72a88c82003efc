//! The projects' side of a scheduler RPC: whether a project's servers are
//! up, and the feeder that offers the sender candidate jobs until the
//! sender's reply is complete. The jobs sent then arrive on the host
//! (`arrivals`).

use super::{SimError, Simulation};
use crate::availability::OnOffProcess;
use crate::explain::{short_mb, Reason};
use crate::policy::View;
use crate::policy::{Candidate, ReportedJob, ServerRequest, Verdict, WorkRequest};
use crate::registry::Family;
use crate::rng::{stream, SimRng};
use crate::scenario::Scenario;
use rand::Rng;

/// At most this many jobs in one reply.
pub(super) const MAX_JOBS_PER_REPLY: usize = 2000;

/// A server sends nothing more to a host that holds this many of its jobs
/// (sent, not yet reported): BOINC's client stops asking a project at this
/// count (`WF_MAX_RUNNABLE_JOBS`), and servers cap jobs in progress. It
/// bounds the queue of a fetcher whose requests are never satisfied.
pub(super) const MAX_JOBS_IN_PROGRESS: usize = 1000;

/// Every project's servers: up/down processes, the job streams, the delay
/// each asks between RPCs, and the scratch of the sender's loop.
pub(super) struct Servers {
    project: Vec<OnOffProcess>,
    schedulers: Vec<Vec<OnOffProcess>>,
    pub job_rng: Vec<SimRng>,
    pub request_delay: Vec<f64>,
    workload: Vec<ReportedJob>,
    pub sent: Vec<Candidate>,
}

impl Servers {
    pub fn new(scn: &Scenario, seed: u64) -> Servers {
        let project = scn
            .projects
            .iter()
            .enumerate()
            .map(|(i, p)| {
                OnOffProcess::new(
                    p.availability.fraction,
                    p.availability.mean_up_hours * 3600.0,
                    stream(seed, "project-availability", i as u64),
                )
            })
            .collect();
        let schedulers = scn
            .projects
            .iter()
            .enumerate()
            .map(|(i, p)| {
                p.schedulers
                    .iter()
                    .enumerate()
                    .map(|(j, s)| {
                        OnOffProcess::new(
                            s.availability.fraction,
                            s.availability.mean_up_hours * 3600.0,
                            stream(
                                seed,
                                "scheduler-availability",
                                ((i as u64) << 16) | j as u64,
                            ),
                        )
                    })
                    .collect()
            })
            .collect();
        Servers {
            project,
            schedulers,
            job_rng: (0..scn.projects.len())
                .map(|i| stream(seed, "jobs", i as u64))
                .collect(),
            request_delay: scn
                .projects
                .iter()
                .map(|p| p.request_delay_seconds)
                .collect(),
            workload: Vec::new(),
            sent: Vec::new(),
        }
    }

    /// The project's servers are up at `t`.
    pub fn project_up(&mut self, p: usize, t: f64) -> bool {
        self.project[p].state_at(t)
    }

    /// Some scheduler URL of `p` answers at `t`, tried in order (none listed:
    /// one that is up with the project).
    pub fn some_scheduler_up(&mut self, p: usize, t: f64) -> bool {
        let s = &mut self.schedulers[p];
        s.is_empty() || s.iter_mut().any(|s| s.state_at(t))
    }
}

impl Simulation {
    /// The host's jobs as a scheduler request lists them, with the client's
    /// remaining estimates.
    fn workload(&mut self) -> Result<Vec<ReportedJob>, SimError> {
        let mut workload = std::mem::take(&mut self.servers.workload);
        workload.clear();
        let v = View::new(&self.st, self.pol.estimate.as_ref(), self.st.now);
        for j in self.st.jobs.iter().filter(|j| j.is_runnable()) {
            let rem = v
                .remaining_seconds(j)
                .map_err(|e| self.policy_err(Family::Estimate, e))?;
            workload.push(ReportedJob {
                project: j.project,
                rsc: j.rsc(),
                cpus: j.cpus,
                gpu_count: j.gpu.map_or(0.0, |g| g.1),
                deadline: j.deadline,
                remaining_seconds: rem,
            });
        }
        Ok(workload)
    }

    /// The server side of an RPC: the feeder offers candidates, the sender
    /// picks; the jobs sent arrive. Returns how many.
    pub(super) fn send_work(
        &mut self,
        req: &WorkRequest,
        jobs: &mut [u32],
    ) -> Result<u32, SimError> {
        let now = self.st.now;
        let p = req.project;
        let pr = &self.st.projects[p];
        let eligible: Vec<usize> = (0..pr.apps.len())
            .filter(|&a| {
                pr.apps[a].runs_on_host()
                    && pr.apps[a].weight > 0.0
                    && req.asks_for(pr.apps[a].rsc())
            })
            .collect();
        let in_progress = self.st.jobs.iter().filter(|j| j.project == p).count();
        let room = MAX_JOBS_IN_PROGRESS
            .saturating_sub(in_progress)
            .min(MAX_JOBS_PER_REPLY);
        if eligible.is_empty() || room == 0 {
            return Ok(0);
        }
        let workload = self.workload()?;
        let (dcf, free, on_fraction) = {
            let v = super::live_view!(self);
            let dcf = v
                .correction(p)
                .map_err(|e| self.policy_err(Family::Estimate, e))?;
            let free = self
                .pol
                .disk
                .free_space(&v, p)
                .map_err(|e| self.policy_err(Family::Disk, e))?;
            (dcf, free, v.on_fraction())
        };
        if let Some(x) = free.iter().find(|x| x.is_nan() || **x < 0.0) {
            return Err(self.invalid(
                Family::Disk,
                format!("free space {x} bytes for project {p} (must be a number, 0 or more)"),
            ));
        }
        let pr = &self.st.projects[p];
        let total_w: f64 = eligible.iter().map(|&a| pr.apps[a].weight).sum();
        let sreq = ServerRequest {
            now,
            project: p,
            project_name: &pr.name,
            latency_bound: pr.latency_bound,
            host: &self.st.host,
            request: req,
            dcf,
            work_buf_min: self.st.prefs.work_buf_min,
            on_fraction,
            workload: &workload,
            free_bytes: free,
            explaining: self.explaining(),
        };
        // With an enforcing disk manager the server makes passes against the
        // three free-space amounts: the next only when the last sent nothing
        // and withheld something for lack of space; the third only for a
        // project that deletes from itself.
        let enforce = self.st.disk.tracked;
        let npasses = match (enforce, pr.delete_from_self) {
            (false, _) => 1,
            (true, false) => 2,
            (true, true) => 3,
        };
        let smallest = eligible
            .iter()
            .map(|&a| pr.apps[a].input_bytes + pr.apps[a].output_bytes)
            .fold(f64::INFINITY, f64::min);
        let mut sent = std::mem::take(&mut self.servers.sent);
        let mut result = Ok(());
        let mut refused = 0u64;
        let mut explained = self.explanation.is_some().then(Vec::new);
        // An app the sender skips is not drawn again in this pass (BOINC's
        // emulator marks it `dont_use`, and draws only among the apps whose
        // resource is still asked for): the pass ends when the sender stops,
        // the reply is full, or no app is left to draw.
        let mut skipped = vec![false; eligible.len()];
        for (pass, &budget) in free.iter().take(npasses).enumerate() {
            sent.clear();
            refused = 0;
            skipped.iter_mut().for_each(|x| *x = false);
            let (mut left, mut left_w) = (eligible.len(), total_w);
            let mut used = 0.0;
            let mut withheld = 0;
            let max_withheld = 2 * eligible.len() + 2;
            let rng = &mut self.servers.job_rng[p];
            while sent.len() < room && left > 0 {
                let mut x = rng.gen::<f64>() * left_w;
                let mut drawn = None;
                for (i, &e) in eligible.iter().enumerate() {
                    if skipped[i] {
                        continue;
                    }
                    drawn = Some(i);
                    x -= pr.apps[e].weight;
                    if x < 0.0 {
                        break;
                    }
                }
                // (The last app left when rounding leaves `x` at 0 or more.)
                let i = drawn.expect("an app is left");
                let a = eligible[i];
                let app = &pr.apps[a];
                let speed = app.speed(&self.st.host);
                let cand = Candidate {
                    app: a,
                    rsc: app.rsc(),
                    cpus: app.cpus,
                    gpu_count: app.gpu.map_or(0.0, |g| g.1),
                    flops_estimate: app.flops_estimate,
                    est_seconds: app.flops_estimate / speed * dcf,
                    // The app's own bound, if it has one (the model resolves it).
                    deadline: now + app.latency_bound,
                };
                let verdict = self.pol.send.consider(&sreq, &sent, &cand);
                if let (Some(ex), Ok(verdict)) = (&mut explained, &verdict) {
                    let bytes = app.input_bytes + app.output_bytes;
                    let withheld = *verdict == Verdict::Send && enforce && used + bytes > budget;
                    // A job withheld is withheld for its space, not for
                    // the sender's reason to send it.
                    let r = if withheld {
                        Ok(Some(withheld_reason(pass, bytes, used, budget)))
                    } else {
                        self.pol.send.explain_verdict(&sreq, &sent, &cand, *verdict)
                    };
                    match r {
                        Ok(r) => ex.push((cand.clone(), *verdict, withheld, r)),
                        Err(e) => {
                            result = Err(e);
                            break;
                        }
                    }
                }
                match verdict {
                    Ok(Verdict::Send) => {
                        let bytes = app.input_bytes + app.output_bytes;
                        if enforce && used + bytes > budget {
                            // Withheld for lack of space; the pass ends when
                            // not even the smallest job would fit.
                            refused += 1;
                            withheld += 1;
                            if withheld > max_withheld || used + smallest > budget {
                                break;
                            }
                        } else {
                            used += bytes;
                            sent.push(cand);
                        }
                    }
                    Ok(Verdict::Skip) => {
                        skipped[i] = true;
                        left -= 1;
                        left_w = (eligible.iter().zip(&skipped))
                            .filter(|(_, &s)| !s)
                            .map(|(&e, _)| pr.apps[e].weight)
                            .sum();
                    }
                    Ok(Verdict::Stop) => break,
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            if result.is_err() || !sent.is_empty() || refused == 0 {
                break;
            }
        }
        for (cand, verdict, withheld, reason) in explained.into_iter().flatten() {
            self.explain_verdict(p, &cand, verdict, withheld, reason);
        }
        self.disk.jobs_refused += refused;
        self.servers.workload = workload;
        if let Err(e) = result {
            self.servers.sent = sent;
            return Err(self.policy_err(Family::Send, e));
        }
        let n = sent.len() as u32;
        let r = self.arrive(p, &sent, jobs);
        self.servers.sent = sent;
        r?;
        Ok(n)
    }
}

/// Why a server withholds a job its sender would send: its files do not fit
/// in what is left of the free space of this pass (the client tells three
/// amounts; see the disk page).
fn withheld_reason(pass: usize, bytes: f64, used: f64, budget: f64) -> Reason {
    let which = match pass {
        0 => "the free space",
        1 => "the free space if offenders' files were deleted",
        _ => "the free space if the project's own files were deleted too",
    };
    Reason::new(format!(
        "its input and output take {}, and the reply already holds {} of the {} the client told as {which} (pass {})",
        short_mb(bytes),
        short_mb(used),
        short_mb(budget),
        pass + 1
    ))
    .with("job_bytes", bytes)
    .with("reply_bytes", used)
    .with("free_bytes", budget)
    .with("pass", (pass + 1) as f64)
}
