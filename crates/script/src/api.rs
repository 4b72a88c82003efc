//! The script API: registered types with getters only (a read-only view of
//! the state), decision values, and helpers. Every function goes through
//! [`Api`], which records its signature and documentation: the book's API
//! reference is generated from that record (see [`crate::api_reference`]).

use crate::frame::{with_frame, with_host, with_server, with_view, RResult};
use rhai::{Array, Dynamic, Engine, ImmutableString, RhaiNativeFunc};
use std::sync::Arc;
use vcsim_blocks::capacity::Capacity;
use vcsim_blocks::list_sim::{ListSim, ProjectOrder};
use vcsim_blocks::rr_sim::{self, RrResult};
use vcsim_framework::model::{DeletionPolicy, FileInfo, FileKind, HostInfo};
use vcsim_framework::{Candidate, Job, JobState, ReportedJob, RpcReply, RscStatus, RunMode, View};

/// Operations one hook call may perform before it is stopped.
pub const MAX_OPERATIONS: u64 = 20_000_000;
/// Nested function calls.
pub const MAX_CALL_LEVELS: usize = 48;
pub const MAX_STRING_SIZE: usize = 64 * 1024;
pub const MAX_ARRAY_SIZE: usize = 100_000;
pub const MAX_MAP_SIZE: usize = 10_000;
/// Log lines a policy may write to standard error in a run (where a hook
/// has no view, hence no run log; the run log has the same cap).
pub const MAX_LOG_LINES: u64 = vcsim_framework::log::MAX_LINES as u64;

// ---- handles ----------------------------------------------------------------

/// The view passed to a hook; valid during that call only.
#[derive(Clone, Copy)]
pub struct ViewH;

#[derive(Clone, Copy)]
pub struct HostH;

#[derive(Clone, Copy)]
pub struct PrefsH;

/// A project, by index.
#[derive(Clone, Copy)]
pub struct ProjectH(pub usize);

/// A job on the host: its index in the view (a hint) and its id.
#[derive(Clone)]
pub struct JobH {
    pub idx: usize,
    pub id: u64,
    /// A job that is not in the view (none so far; kept for safety).
    pub owned: Option<Arc<Job>>,
}

impl JobH {
    /// The handle of the job at index `idx` of the view, as a script value.
    pub fn at(idx: usize, j: &Job) -> Dynamic {
        Dynamic::from(JobH {
            idx,
            id: j.id,
            owned: None,
        })
    }
    pub fn of(v: &View, j: &Job) -> JobH {
        let jobs = v.jobs();
        // The simulator passes a job of the view's own list: its place is
        // its address's offset (a search of the list made every estimate
        // cost the queue, a pass over the queue its square).
        let (base, at) = (jobs.as_ptr() as usize, j as *const Job as usize);
        let size = std::mem::size_of::<Job>().max(1);
        if at >= base && (at - base) % size == 0 {
            let idx = (at - base) / size;
            if jobs.get(idx).is_some_and(|x| std::ptr::eq(x, j)) {
                return JobH {
                    idx,
                    id: j.id,
                    owned: None,
                };
            }
        }
        match jobs.iter().position(|x| x.id == j.id) {
            Some(idx) => JobH {
                idx,
                id: j.id,
                owned: None,
            },
            None => JobH {
                idx: usize::MAX,
                id: j.id,
                owned: Some(Arc::new(j.clone())),
            },
        }
    }
    fn resolve<'a>(&'a self, v: &View<'a>) -> Result<&'a Job, String> {
        if let Some(j) = &self.owned {
            return Ok(j);
        }
        let jobs = v.jobs();
        match jobs.get(self.idx) {
            Some(j) if j.id == self.id => Ok(j),
            _ => jobs
                .iter()
                .find(|j| j.id == self.id)
                .ok_or_else(|| format!("job {} is no longer on the host", self.id)),
        }
    }
}

/// A decision of a CPU scheduler: run this job in this mode.
#[derive(Clone, Copy)]
pub struct RunH {
    pub id: u64,
    pub mode: RunMode,
}

/// A work request under construction (a decision value: the script owns it).
#[derive(Clone)]
pub struct RequestH(pub vcsim_framework::WorkRequest);

/// Free instances per resource while a scheduler fills the host (the
/// built-ins' [`Capacity`]), and the jobs taken so far.
#[derive(Clone)]
pub struct CapacityH {
    pub cap: Capacity,
    pub taken: Vec<u64>,
}

impl CapacityH {
    /// Not taken yet, and fits in what is free.
    fn fits(&self, j: &Job) -> bool {
        !self.taken.contains(&j.id) && self.cap.fits(j)
    }
    fn take(&mut self, j: &Job) {
        self.cap.take(j);
        self.taken.push(j.id);
    }
}

/// The result of a round-robin simulation of one resource.
#[derive(Clone)]
pub struct RrH(pub Arc<RrResult>);

/// Today's client's simulation of the view (all resources).
#[derive(Clone)]
pub struct ListSimH(pub Arc<ListSim>);

impl ListSimH {
    fn nrsc(&self) -> usize {
        self.0.shortfall.len()
    }
    fn rsc(&self, r: i64) -> Result<usize, String> {
        rsc_of(r, self.nrsc())
    }
    fn project(&self, p: i64) -> Result<usize, String> {
        project_of(p, self.0.n_runnable.len())
    }
}

/// The server's view of a scheduler request (inside `consider`).
#[derive(Clone, Copy)]
pub struct ServerH;

/// The jobs already in the reply (inside `consider`).
#[derive(Clone, Copy)]
pub struct SentH;

#[derive(Clone)]
pub struct CandH(pub Candidate);

#[derive(Clone)]
pub struct ReportedH(pub ReportedJob);

#[derive(Clone)]
pub struct ReplyH(pub Arc<RpcReply>);

/// A file on the host (inside a disk hook): a copy made when the hook asked
/// for the files, with whether it was referenced then.
#[derive(Clone)]
pub struct FileH {
    pub file: Arc<FileInfo>,
    pub referenced: bool,
}

// ---- registration with documentation ------------------------------------------

/// One documented entry of the API.
#[derive(Clone, Debug)]
pub struct DocEntry {
    /// The section: `View`, `Job`, ..., or `Functions`.
    pub section: &'static str,
    /// How a script writes it: `job.deadline`, `v.project(i)`, `log(msg)`.
    pub usage: String,
    pub returns: &'static str,
    pub doc: &'static str,
    /// The engine's own signature of the registered function.
    pub signature: String,
}

pub struct Api<'e> {
    pub engine: &'e mut Engine,
    pub docs: Vec<DocEntry>,
}

/// The short script-facing name of a handle type.
fn var_of(section: &str) -> String {
    match section {
        "View" => "v".into(),
        "Request" => "req".into(),
        "Sent" => "sent".into(),
        "Candidate" => "cand".into(),
        "RrSim" => "rr".into(),
        "ListSim" => "sim".into(),
        "Capacity" => "cap".into(),
        "WorkRequest" => "wr".into(),
        s => s.to_ascii_lowercase(),
    }
}

impl Api<'_> {
    fn record(
        &mut self,
        section: &'static str,
        usage: String,
        returns: &'static str,
        doc: &'static str,
        name: &str,
    ) {
        self.docs.push(DocEntry {
            section,
            usage,
            returns,
            doc,
            signature: name.to_string(),
        });
    }

    /// A read-only property `x.name`.
    fn get<T: Clone + Send + Sync + 'static, R: Clone + Send + Sync + 'static>(
        &mut self,
        section: &'static str,
        name: &'static str,
        returns: &'static str,
        doc: &'static str,
        f: impl Fn(&mut T) -> RResult<R> + Send + Sync + 'static,
    ) {
        self.engine.register_get(name, f);
        let usage = format!("{}.{name}", var_of(section));
        self.record(section, usage, returns, doc, &format!("get${name}"));
    }

    /// A method `x.name(args)` (or a function `name(args)` when `section` is "Functions").
    fn func<
        A: 'static,
        const N: usize,
        const X: bool,
        R: Clone + Send + Sync + 'static,
        const F: bool,
    >(
        &mut self,
        section: &'static str,
        name: &'static str,
        args: &'static str,
        returns: &'static str,
        doc: &'static str,
        f: impl RhaiNativeFunc<A, N, X, R, F> + Send + Sync + 'static,
    ) {
        self.engine.register_fn(name, f);
        let usage = if section == "Functions" || section == "Decisions" {
            format!("{name}({args})")
        } else {
            format!("{}.{name}({args})", var_of(section))
        };
        self.record(section, usage, returns, doc, name);
    }
}

/// `i` as an index into `n` things; none if out of range (a negative
/// index never wraps nor clamps to 0).
fn index(i: i64, n: usize) -> Option<usize> {
    usize::try_from(i).ok().filter(|&i| i < n)
}

/// Resource `r` of `n`, or the error every function taking a resource gives.
fn rsc_of(r: i64, n: usize) -> Result<usize, String> {
    index(r, n).ok_or_else(|| {
        format!("resource {r} does not exist (the host has {n} resources: 0 is the CPU)")
    })
}

/// Project `p` of `n`, or the error every function taking a project gives.
fn project_of(p: i64, n: usize) -> Result<usize, String> {
    index(p, n).ok_or_else(|| format!("project {p} does not exist ({n} projects)"))
}

fn rsc_index(h: &HostInfo, r: i64) -> Result<usize, String> {
    rsc_of(r, h.nrsc())
}

fn proj_index(v: &View, p: i64) -> Result<usize, String> {
    project_of(p, v.projects().len())
}

/// The project of a request being built: checked against the view's
/// projects (a hook with no view, `consider`, can only refuse a negative
/// one), so that the error names the script's line.
fn request_project(p: i64) -> RResult<usize> {
    match with_frame(|fr| fr.and_then(|fr| fr.view).map(|v| v.projects().len())) {
        Some(n) => Ok(project_of(p, n)?),
        None => usize::try_from(p).map_err(|_| format!("project {p} does not exist").into()),
    }
}

/// The longest horizon of a simulation: the longest span a scenario may
/// give (a buffer, a latency bound), so that the times it adds stay finite.
const MAX_HORIZON: f64 = vcsim_framework::scenario::bounds::MAX_SPAN_DAYS * 86400.0;

fn state_name(s: JobState) -> &'static str {
    match s {
        JobState::Queued => "queued",
        JobState::Running => "running",
        JobState::Preempted => "preempted",
        JobState::Finished => "finished",
    }
}

fn mode_name(m: RunMode) -> &'static str {
    match m {
        RunMode::RoundRobin => "round_robin",
        RunMode::Deadline => "deadline",
    }
}

fn parse_mode(s: &str) -> RResult<RunMode> {
    match s {
        "round_robin" => Ok(RunMode::RoundRobin),
        "deadline" => Ok(RunMode::Deadline),
        _ => Err(format!("unknown run mode `{s}` (round_robin or deadline)").into()),
    }
}

/// Stable sort of job handles by deadline (arrival order on ties).
fn sort_by_deadline(v: &View, arr: &mut Array, descending: bool) -> Result<(), String> {
    let mut keyed: Vec<(f64, Dynamic)> = Vec::with_capacity(arr.len());
    for d in arr.drain(..) {
        let h = d
            .clone()
            .try_cast::<JobH>()
            .ok_or_else(|| format!("sort_by_deadline: expected jobs, got {}", type_of(&d)))?;
        keyed.push((h.resolve(v)?.deadline, d));
    }
    if descending {
        keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
    } else {
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    arr.extend(keyed.into_iter().map(|(_, d)| d));
    Ok(())
}

/// An error of the estimator met by a getter: kept in the frame, so that the
/// call fails with it (blamed on the estimator), and its message for rhai.
fn estimator_error(e: vcsim_framework::PolicyError) -> String {
    let msg = e.message.clone();
    with_frame(|fr| {
        if let Some(fr) = fr {
            fr.cause.borrow_mut().get_or_insert(e);
        }
    });
    msg
}

/// The next draw in [0, 1) of the call's named stream (see the crate's doc).
fn next_draw() -> RResult<f64> {
    with_frame(|fr| {
        let fr = fr.ok_or_else(|| "random draws exist only inside a hook".to_string())?;
        let (seed, name, index) = fr.stream.ok_or_else(|| {
            "random draws need a view (they come from the run's seed)".to_string()
        })?;
        let mut rng = fr.rng.borrow_mut();
        let rng = rng.get_or_insert_with(|| vcsim_framework::rng::stream(seed, name, index));
        Ok(rand::Rng::gen::<f64>(rng))
    })
}

thread_local! {
    /// Lines written outside any hook (no policy, no run to count them in).
    static LOG_LINES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A log line: into the run's log when a hook with a view is running (the
/// runner prints it as a note, the run log caps it); otherwise to standard
/// error, prefixed with the script and the simulated time, at most
/// [`MAX_LOG_LINES`] a policy in a run (the last one says so).
pub fn log_line(msg: &str) {
    let logged = with_frame(|fr| match fr {
        Some(fr) => match fr.view {
            Some(v) => {
                v.log(fr.script, msg);
                true
            }
            None => false,
        },
        None => false,
    });
    if logged {
        return;
    }
    let count = |c: &std::cell::Cell<u64>| {
        let n = c.get();
        c.set(n.saturating_add(1));
        n
    };
    let n = with_frame(|fr| match fr {
        Some(fr) => count(fr.stderr_lines),
        None => LOG_LINES.with(count),
    });
    if n > MAX_LOG_LINES {
        return;
    }
    let (script, t) = with_frame(|fr| match fr {
        Some(fr) => (
            fr.script.to_string(),
            fr.view.map(|v| v.now()).or(fr.server.map(|s| s.now)),
        ),
        None => ("script".to_string(), None),
    });
    let t = t.map_or(String::new(), |t| format!(" t={t}"));
    // Control characters escaped as in every note (a script must not drive
    // the terminal), and a standard error that cannot be written ignored.
    let visible = vcsim_framework::text::escape_controls;
    let script = visible(&script);
    let line = if n == MAX_LOG_LINES {
        format!("[{script}{t}] (a policy writes at most {MAX_LOG_LINES} lines a run: later lines are dropped)")
    } else {
        format!("[{script}{t}] {}", visible(msg))
    };
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

fn f(x: i64) -> f64 {
    x as f64
}

/// The integer in [lo, hi) that a draw `x` in [0, 1) picks. The span is
/// taken in u64, as `hi - lo` overflows i64 for wide ranges; the result is
/// the same as `lo + floor((hi - lo) * x)` wherever that did not overflow
/// (so that no run's draws move), and held below `hi` where rounding the
/// span to a float would reach it.
pub(crate) fn draw_in(lo: i64, hi: i64, x: f64) -> i64 {
    let span = hi.wrapping_sub(lo) as u64;
    let k = ((span as f64 * x).floor() as u64).min(span - 1);
    lo.wrapping_add(k as i64)
}

/// A value's type as scripts know it (`Job`, not `vcsim_script::api::JobH`):
/// the names `register` gives the handles (a test checks they agree).
pub(crate) fn type_of(d: &Dynamic) -> String {
    script_name(d.type_name()).to_string()
}

/// The name scripts know a Rust type by (see [`type_of`]).
pub(crate) fn script_name(rust: &str) -> &str {
    let short = rust.rsplit("::").next().unwrap_or(rust);
    match short {
        "ViewH" => "View",
        "HostH" => "Host",
        "PrefsH" => "Prefs",
        "ProjectH" => "Project",
        "JobH" => "Job",
        "RunH" => "Run",
        "RequestH" => "WorkRequest",
        "CapacityH" => "Capacity",
        "RrH" => "RrSim",
        "ListSimH" => "ListSim",
        "ServerH" => "Request",
        "SentH" => "Sent",
        "CandH" => "Candidate",
        "ReportedH" => "ReportedJob",
        "ReplyH" => "Reply",
        "FileH" => "File",
        _ => rust,
    }
}

/// Registers the whole API on `engine`; returns its documentation.
pub fn register(engine: &mut Engine) -> Vec<DocEntry> {
    engine.register_type_with_name::<ViewH>("View");
    engine.register_type_with_name::<HostH>("Host");
    engine.register_type_with_name::<PrefsH>("Prefs");
    engine.register_type_with_name::<ProjectH>("Project");
    engine.register_type_with_name::<JobH>("Job");
    engine.register_type_with_name::<RunH>("Run");
    engine.register_type_with_name::<RequestH>("WorkRequest");
    engine.register_type_with_name::<CapacityH>("Capacity");
    engine.register_type_with_name::<RrH>("RrSim");
    engine.register_type_with_name::<ListSimH>("ListSim");
    engine.register_type_with_name::<ServerH>("Request");
    engine.register_type_with_name::<SentH>("Sent");
    engine.register_type_with_name::<CandH>("Candidate");
    engine.register_type_with_name::<ReportedH>("ReportedJob");
    engine.register_type_with_name::<ReplyH>("Reply");
    engine.register_type_with_name::<FileH>("File");
    let mut api = Api {
        engine,
        docs: Vec::new(),
    };
    view_api(&mut api);
    project_api(&mut api);
    job_api(&mut api);
    host_api(&mut api);
    decision_api(&mut api);
    helper_api(&mut api);
    list_sim_api(&mut api);
    server_api(&mut api);
    disk_api(&mut api);
    api.docs
}

fn view_api(api: &mut Api) {
    const S: &str = "View";
    api.get(S, "now", "float", "The simulated time of the view, in seconds (a fetcher may be asked at a projected later time).", |_: &mut ViewH| with_view(|v| Ok(v.now())));
    api.get(S, "explaining", "bool", "Whether the run explains its decisions (`vcsim explain`, `vcsim diverge`, an HTML timeline): only then are the reasons a hook returns read, so a script may skip building them otherwise.", |_: &mut ViewH| with_view(|v| Ok(v.explaining())));
    api.get(
        S,
        "host",
        "Host",
        "The host: CPUs, GPUs, speeds, disk.",
        |_: &mut ViewH| Ok(HostH),
    );
    api.get(
        S,
        "prefs",
        "Prefs",
        "The user's preferences.",
        |_: &mut ViewH| Ok(PrefsH),
    );
    api.get(
        S,
        "nprojects",
        "int",
        "Number of projects.",
        |_: &mut ViewH| with_view(|v| Ok(v.projects().len() as i64)),
    );
    api.get(
        S,
        "projects",
        "array of Project",
        "Every project, in the scenario's order (index 0, 1, ...).",
        |_: &mut ViewH| {
            with_view(|v| {
                Ok((0..v.projects().len())
                    .map(|p| Dynamic::from(ProjectH(p)))
                    .collect::<Array>())
            })
        },
    );
    api.get(S, "jobs", "array of Job", "Jobs on the host in arrival order: queued, running, preempted, and finished but not yet reported.", |_: &mut ViewH| {
        with_view(|v| {
            Ok(v.jobs().iter().enumerate().map(|(idx, j)| JobH::at(idx, j)).collect::<Array>())
        })
    });
    api.get(
        S,
        "runnable_jobs",
        "array of Job",
        "Jobs that can run (queued, running or preempted), in arrival order.",
        |_: &mut ViewH| {
            with_view(|v| {
                Ok(v.jobs()
                    .iter()
                    .enumerate()
                    .filter(|(_, j)| j.is_runnable())
                    .map(|(idx, j)| JobH::at(idx, j))
                    .collect::<Array>())
            })
        },
    );
    api.get(
        S,
        "jobs_by_deadline",
        "array of Job",
        "Runnable jobs sorted by deadline, earliest first; ties keep arrival order.",
        |_: &mut ViewH| {
            with_view(|v| {
                let mut a: Array = v
                    .jobs()
                    .iter()
                    .enumerate()
                    .filter(|(_, j)| j.is_runnable())
                    .map(|(idx, j)| JobH::at(idx, j))
                    .collect();
                sort_by_deadline(v, &mut a, false)?;
                Ok(a)
            })
        },
    );
    api.func(
        S,
        "next_runnable",
        "p",
        "array of Job",
        "Project p's runnable jobs in the order the v4 document picks its next runnable result: running ones, then preempted ones (arrival order), then queued ones by earliest deadline (ties keep arrival order).",
        |_: &mut ViewH, p: i64| {
            with_view(|v| {
                let p = proj_index(v, p)?;
                let jobs = v.jobs();
                let of = |s: JobState| {
                    jobs.iter()
                        .enumerate()
                        .filter(move |(_, j)| j.project == p && j.state == s)
                        .map(|(idx, _)| idx)
                };
                let mut queued: Vec<usize> = of(JobState::Queued).collect();
                // A stable sort: ties keep arrival order, as CS1's strict "earlier" test.
                queued.sort_by(|&a, &b| jobs[a].deadline.total_cmp(&jobs[b].deadline));
                Ok(of(JobState::Running)
                    .chain(of(JobState::Preempted))
                    .chain(queued)
                    .map(|idx| {
                        JobH::at(idx, &jobs[idx])
                    })
                    .collect::<Array>())
            })
        },
    );
    api.get(S, "on_fraction", "float", "Fraction of time the client expects the host to compute (1 unless the scenario learns availability).", |_: &mut ViewH| with_view(|v| Ok(v.on_fraction())));
    api.get(
        S,
        "cpu_allowed",
        "bool",
        "Computing is allowed now (the host is on and the user lets BOINC compute: `active_fraction`).",
        |_: &mut ViewH| with_view(|v| Ok(v.cpu_allowed())),
    );
    api.get(
        S,
        "gpu_allowed",
        "bool",
        "GPU computing is allowed now (`gpu_active_fraction`).",
        |_: &mut ViewH| with_view(|v| Ok(v.gpu_allowed())),
    );
    api.get(
        S,
        "available_seconds",
        "float",
        "Seconds in which the host could compute since the run began.",
        |_: &mut ViewH| with_view(|v| Ok(v.available_seconds())),
    );
    api.get(
        S,
        "total_share",
        "float",
        "Sum of every project's resource share.",
        |_: &mut ViewH| with_view(|v| Ok(v.total_share())),
    );
    api.func(
        S,
        "project",
        "i",
        "Project",
        "Project `i`.",
        |_: &mut ViewH, p: i64| with_view(|v| Ok(ProjectH(proj_index(v, p)?))),
    );
    api.func(
        S,
        "job",
        "id",
        "Job or ()",
        "The job with this id, or () if it is not on the host.",
        |_: &mut ViewH, id: i64| {
            with_view(|v| {
                let jobs = v.jobs();
                Ok(match jobs.iter().position(|j| j.id as i64 == id) {
                    Some(idx) => JobH::at(idx, &jobs[idx]),
                    None => Dynamic::UNIT,
                })
            })
        },
    );
    api.func(
        S,
        "share_fraction",
        "p",
        "float",
        "Project p's resource share as a fraction of all projects' shares.",
        |_: &mut ViewH, p: i64| with_view(|v| Ok(v.share_fraction(proj_index(v, p)?))),
    );
    api.func(
        S,
        "contactable",
        "p",
        "bool",
        "No back-off keeps the client from contacting project p now.",
        |_: &mut ViewH, p: i64| with_view(|v| Ok(v.contactable(proj_index(v, p)?))),
    );
    api.func(
        S,
        "has_runnable",
        "p",
        "bool",
        "Project p has a job that can run.",
        |_: &mut ViewH, p: i64| with_view(|v| Ok(v.project_has_runnable(proj_index(v, p)?))),
    );
    api.func(
        S,
        "usage_seconds",
        "p, r",
        "float",
        "Instance-seconds of resource r used by project p's jobs since the run began.",
        |_: &mut ViewH, p: i64, r: i64| {
            with_view(|v| Ok(v.usage_seconds(proj_index(v, p)?, rsc_index(v.host(), r)?)))
        },
    );
    api.func(
        S,
        "idle_instances",
        "r",
        "float",
        "Instances of resource r that no running job holds.",
        |_: &mut ViewH, r: i64| with_view(|v| Ok(v.idle_instances(rsc_index(v.host(), r)?))),
    );
    api.func(S, "random", "", "float", "A draw in [0, 1) from the run's named random stream `script:<family>:<hook>`: in a pure hook (`request`, `piggyback`, `remaining`, `correction`, `free_space`, `project_limit`) the stream of the view's step (and job or project), so the same view gives the same draws and the hook stays pure; in the others, the stream of the policy's n-th such call.", |_: &mut ViewH| next_draw());
    api.func(
        S,
        "random",
        "lo, hi",
        "int",
        "A reproducible integer draw in [lo, hi), for any lo < hi.",
        |_: &mut ViewH, lo: i64, hi: i64| -> RResult<i64> {
            if hi <= lo {
                return Err(format!("random({lo}, {hi}): empty range").into());
            }
            let x = next_draw()?;
            Ok(draw_in(lo, hi, x))
        },
    );
    api.func(S, "rr_sim", "r", "RrSim", "BOINC 2007's weighted round-robin simulation of resource r over the work buffer (the one CS2 and WF2 use).", |_: &mut ViewH, r: i64| {
        with_view(|v| {
            let r = rsc_index(v.host(), r)?;
            let mut out = RrResult::default();
            rr_sim::simulate(v, r, v.prefs().work_buf_total(), &mut out).map_err(estimator_error)?;
            Ok(RrH(Arc::new(out)))
        })
    });
    api.func(
        S,
        "rr_sim",
        "r, horizon",
        "RrSim",
        "The round-robin simulation of resource r over `horizon` seconds (from 0 to 8.64e11, 10 million days: the longest span a scenario gives).",
        |_: &mut ViewH, r: i64, horizon: f64| {
            with_view(|v| {
                let r = rsc_index(v.host(), r)?;
                if !(0.0..=MAX_HORIZON).contains(&horizon) {
                    let h = if horizon.abs() >= 1e9 { format!("{horizon:e}") } else { format!("{horizon}") };
                    return Err(format!(
                        "horizon {h} is out of range (seconds, from 0 to {MAX_HORIZON:e}: 10 million days)"
                    ));
                }
                let mut out = RrResult::default();
                rr_sim::simulate(v, r, horizon, &mut out).map_err(estimator_error)?;
                Ok(RrH(Arc::new(out)))
            })
        },
    );
    api.func(
        S,
        "list_sim",
        "",
        "ListSim",
        "Today's client's simulation of every resource (list scheduling, GPUs first, the projects in the order the client is built with: the one CS3 and WF3 use). Made once per hook call: later calls in the same call return the same result.",
        |_: &mut ViewH| list_sim(),
    );
    api.func(
        S,
        "rec",
        "p",
        "float",
        "Project p's recent estimated credit (today's client's REC), credits per day, at the view's time.",
        |_: &mut ViewH, p: i64| with_view(|v| Ok(v.rec(proj_index(v, p)?))),
    );
    api.func(
        S,
        "capacity",
        "",
        "Capacity",
        "Every instance of every resource free, no job taken: fill it with `cap.take(job)` or `cap.take_next(p)`.",
        |_: &mut ViewH| {
            with_view(|v| {
                Ok(CapacityH {
                    cap: Capacity::of_host(v),
                    taken: Vec::new(),
                })
            })
        },
    );
}

fn project_api(api: &mut Api) {
    const S: &str = "Project";
    fn pget<R: Clone + Send + Sync + 'static>(
        api: &mut Api,
        name: &'static str,
        ret: &'static str,
        doc: &'static str,
        g: fn(&View, usize) -> R,
    ) {
        api.get(S, name, ret, doc, move |h: &mut ProjectH| {
            let p = h.0;
            with_view(|v| Ok(g(v, p)))
        });
    }
    pget(
        api,
        "index",
        "int",
        "Its index (what `v.project(i)` and requests take).",
        |_, p| p as i64,
    );
    pget(api, "name", "string", "Its name.", |v, p| {
        ImmutableString::from(v.project(p).name.as_str())
    });
    pget(api, "share", "float", "Its resource share.", |v, p| {
        v.project(p).resource_share
    });
    pget(
        api,
        "jobs",
        "array of Job",
        "Its jobs on the host in arrival order (as `v.jobs`, this project's only).",
        |v, p| {
            v.jobs()
                .iter()
                .enumerate()
                .filter(|(_, j)| j.project == p)
                .map(|(idx, j)| JobH::at(idx, j))
                .collect::<Array>()
        },
    );
    pget(
        api,
        "share_fraction",
        "float",
        "Its share as a fraction of all projects' shares.",
        |v, p| v.share_fraction(p),
    );
    pget(
        api,
        "latency_bound",
        "float",
        "Seconds from a job's dispatch to its deadline.",
        |v, p| v.project(p).latency_bound,
    );
    pget(
        api,
        "max_concurrent",
        "int",
        "At most this many of its jobs run at once (app_config.xml's `project_max_concurrent`); 0: no cap.",
        |v, p| v.project(p).max_concurrent as i64,
    );
    pget(
        api,
        "contactable",
        "bool",
        "No back-off keeps the client from contacting it now.",
        |v, p| v.contactable(p),
    );
    pget(
        api,
        "has_runnable",
        "bool",
        "It has a job that can run.",
        |v, p| v.project_has_runnable(p),
    );
    pget(
        api,
        "exp_avg_cpu",
        "float",
        "Exponentially averaged CPU seconds (BOINC's `exp_avg_cpu`).",
        |v, p| v.exp_avg_cpu(p),
    );
    pget(
        api,
        "rec",
        "float",
        "Its recent estimated credit (today's client's REC), credits per day, at the view's time (as `v.rec(p)`).",
        |v, p| v.rec(p),
    );
    pget(
        api,
        "min_rpc_time",
        "float",
        "Earliest time of its next RPC.",
        |v, p| v.project(p).rpc.min_rpc_time,
    );
    pget(
        api,
        "rpc_failures",
        "int",
        "RPC failures in a row.",
        |v, p| v.project(p).rpc.nrpc_failures as i64,
    );
    pget(
        api,
        "napps",
        "int",
        "Number of its applications.",
        |v, p| v.project(p).apps.len() as i64,
    );
    api.func(
        S,
        "has_apps",
        "r",
        "bool",
        "It has applications that run on resource r of this host.",
        |h: &mut ProjectH, r: i64| {
            let p = h.0;
            with_view(|v| Ok(v.project(p).has_rsc_apps[rsc_index(v.host(), r)?]))
        },
    );
    api.func(
        S,
        "running_instances",
        "r",
        "float",
        "Instances of resource r its running jobs hold.",
        |h: &mut ProjectH, r: i64| {
            let p = h.0;
            with_view(|v| Ok(v.project(p).running_instances[rsc_index(v.host(), r)?]))
        },
    );
    api.func(
        S,
        "usage_seconds",
        "r",
        "float",
        "Instance-seconds of resource r its jobs used since the run began.",
        |h: &mut ProjectH, r: i64| {
            let p = h.0;
            with_view(|v| Ok(v.usage_seconds(p, rsc_index(v.host(), r)?)))
        },
    );
}

fn job_api(api: &mut Api) {
    const S: &str = "Job";
    fn jget<R: Clone + Send + Sync + 'static>(
        api: &mut Api,
        name: &'static str,
        ret: &'static str,
        doc: &'static str,
        g: fn(&View, &Job) -> R,
    ) {
        api.get(S, name, ret, doc, move |h: &mut JobH| {
            with_view(|v| Ok(g(v, h.resolve(v)?)))
        });
    }
    jget(api, "id", "int", "Its id (unique in the run).", |_, j| {
        j.id as i64
    });
    jget(api, "project", "int", "Its project's index.", |_, j| {
        j.project as i64
    });
    jget(
        api,
        "app",
        "int",
        "Its application's index within the project.",
        |_, j| j.app as i64,
    );
    jget(
        api,
        "app_name",
        "string",
        "Its application's name.",
        |v, j| ImmutableString::from(v.project(j.project).apps[j.app].name.as_str()),
    );
    jget(
        api,
        "app_max_concurrent",
        "int",
        "At most this many jobs of its application run at once (app_config.xml's `max_concurrent`); 0: no cap. `v.capacity()` honours it.",
        |v, j| v.project(j.project).apps[j.app].max_concurrent as i64,
    );
    jget(
        api,
        "latency_bound",
        "float",
        "Seconds from its dispatch to its deadline (its application's bound).",
        |v, j| v.project(j.project).apps[j.app].latency_bound,
    );
    jget(api, "cpus", "float", "CPUs it uses.", |_, j| j.cpus);
    jget(
        api,
        "rsc",
        "int",
        "The resource it runs on: 0 for the CPU, 1 + k for the host's k-th GPU type.",
        |_, j| j.rsc() as i64,
    );
    jget(
        api,
        "gpu_count",
        "float",
        "GPU instances it uses (0 for a CPU job).",
        |_, j| j.gpu.map_or(0.0, |g| g.1),
    );
    jget(
        api,
        "deadline",
        "float",
        "Its report deadline (simulated seconds).",
        |_, j| j.deadline,
    );
    jget(api, "received", "float", "When it arrived.", |_, j| {
        j.received
    });
    jget(
        api,
        "state",
        "string",
        "`queued`, `running`, `preempted` or `finished`.",
        |_, j| ImmutableString::from(state_name(j.state)),
    );
    jget(
        api,
        "is_runnable",
        "bool",
        "Queued, running or preempted.",
        |_, j| j.is_runnable(),
    );
    jget(api, "is_running", "bool", "Running now.", |_, j| {
        j.state == JobState::Running
    });
    jget(api, "is_queued", "bool", "Never started.", |_, j| {
        j.state == JobState::Queued
    });
    jget(
        api,
        "is_preempted",
        "bool",
        "Started, not running now.",
        |_, j| j.state == JobState::Preempted,
    );
    jget(
        api,
        "is_finished",
        "bool",
        "Done computing, waiting to be reported.",
        |_, j| j.state == JobState::Finished,
    );
    jget(
        api,
        "has_started",
        "bool",
        "It has run at some time.",
        |_, j| j.has_started(),
    );
    jget(
        api,
        "mode",
        "string",
        "The mode it last ran in: `round_robin` or `deadline`; `round_robin` if it has never run (see `has_started`).",
        |_, j| ImmutableString::from(mode_name(j.mode)),
    );
    jget(
        api,
        "ever_deadline_mode",
        "bool",
        "It has run in deadline mode.",
        |_, j| j.ever_deadline_mode,
    );
    jget(
        api,
        "last_started",
        "float",
        "When it last started or resumed; its arrival time if it has never run (see `has_started`).",
        |_, j| j.last_started,
    );
    jget(
        api,
        "fraction_done",
        "float",
        "Fraction done at the view's time.",
        |v, j| v.fraction_done(j),
    );
    jget(
        api,
        "run_seconds",
        "float",
        "Seconds it has computed, at the view's time.",
        |v, j| v.run_seconds(j),
    );
    jget(
        api,
        "estimated_seconds",
        "float",
        "The project's estimate of its run time here, uncorrected (FLOPs estimate / speed).",
        |_, j| j.estimated_seconds(),
    );
    api.get(
        S,
        "static_estimate",
        "float",
        "The corrected static estimate (x the estimator's correction).",
        |h: &mut JobH| with_view(|v| v.static_estimate(h.resolve(v)?).map_err(estimator_error)),
    );
    jget(
        api,
        "flops_estimate",
        "float",
        "The project's FLOPs estimate.",
        |_, j| j.flops_estimate,
    );
    jget(
        api,
        "speed",
        "float",
        "Peak FLOPS it computes at.",
        |_, j| j.speed,
    );
    jget(
        api,
        "peak_flops",
        "float",
        "Peak FLOPS of the instances it holds.",
        |v, j| j.peak_flops(v.host()),
    );
    api.get(
        S,
        "remaining",
        "float",
        "The estimator's remaining run time in seconds (the chosen `estimate` policy).",
        |h: &mut JobH| with_view(|v| v.remaining_seconds(h.resolve(v)?).map_err(estimator_error)),
    );
}

fn host_api(api: &mut Api) {
    const H: &str = "Host";
    api.get(
        H,
        "ncpus",
        "float",
        "CPUs the client may use.",
        |_: &mut HostH| with_host(|h| h.ncpus),
    );
    api.get(
        H,
        "cpu_flops",
        "float",
        "Peak FLOPS of one CPU.",
        |_: &mut HostH| with_host(|h| h.cpu_flops),
    );
    api.get(
        H,
        "nrsc",
        "int",
        "Resources: 1 + the number of GPU types.",
        |_: &mut HostH| with_host(|h| h.nrsc() as i64),
    );
    api.get(
        H,
        "disk_bytes",
        "float",
        "The disk's size in bytes.",
        |_: &mut HostH| with_host(|h| h.disk_bytes),
    );
    api.func(
        H,
        "ninstances",
        "r",
        "float",
        "Instances of resource r.",
        |_: &mut HostH, r: i64| -> RResult<f64> {
            Ok(with_host(|h| rsc_index(h, r).map(|r| h.ninstances(r)))??)
        },
    );
    api.func(
        H,
        "instance_flops",
        "r",
        "float",
        "Peak FLOPS of one instance of r.",
        |_: &mut HostH, r: i64| -> RResult<f64> {
            Ok(with_host(|h| {
                rsc_index(h, r).map(|r| h.instance_flops(r))
            })??)
        },
    );
    api.func(
        H,
        "rsc_name",
        "r",
        "string",
        "`cpu` or the GPU type's name.",
        |_: &mut HostH, r: i64| -> RResult<ImmutableString> {
            Ok(with_host(|h| {
                rsc_index(h, r).map(|r| ImmutableString::from(h.rsc_name(r)))
            })??)
        },
    );
    const P: &str = "Prefs";
    fn pref(
        api: &mut Api,
        name: &'static str,
        doc: &'static str,
        g: fn(&vcsim_framework::model::Prefs) -> f64,
    ) {
        api.get(P, name, "float", doc, move |_: &mut PrefsH| {
            with_view(|v| Ok(g(v.prefs())))
        });
    }
    pref(
        api,
        "sched_period",
        "The scheduling period (time slice), seconds.",
        |p| p.sched_period,
    );
    pref(
        api,
        "work_buf_min",
        "The work buffer's minimum (low-water mark), seconds.",
        |p| p.work_buf_min,
    );
    pref(
        api,
        "work_buf_additional",
        "Work to keep beyond the minimum, seconds.",
        |p| p.work_buf_additional,
    );
    pref(
        api,
        "work_buf_total",
        "The whole buffer (min + additional, at least 1 s): BOINC's Btot.",
        |p| p.work_buf_total(),
    );
    pref(
        api,
        "step",
        "The simulator's step (decisions fall on step boundaries), seconds.",
        |p| p.step,
    );
    pref(
        api,
        "rec_half_life",
        "The half-life of recent estimated credit (REC), seconds (the scenario's `client.rec_half_life_days`).",
        |p| p.rec_half_life,
    );
}

fn decision_api(api: &mut Api) {
    const D: &str = "Decisions";
    api.func(
        D,
        "round_robin",
        "job",
        "Run",
        "Run this job in round-robin mode (a bare Job in the list means the same).",
        |j: JobH| RunH {
            id: j.id,
            mode: RunMode::RoundRobin,
        },
    );
    api.func(
        D,
        "deadline",
        "job",
        "Run",
        "Run this job in deadline (earliest-deadline-first) mode.",
        |j: JobH| RunH {
            id: j.id,
            mode: RunMode::Deadline,
        },
    );
    api.func(
        D,
        "run",
        "job, mode",
        "Run",
        "Run this job in `mode` (`round_robin` or `deadline`, e.g. `job.mode` to keep its mode).",
        |j: JobH, m: ImmutableString| -> RResult<RunH> {
            Ok(RunH {
                id: j.id,
                mode: parse_mode(&m)?,
            })
        },
    );
    api.func(
        D,
        "work_request",
        "p, seconds",
        "WorkRequest",
        "An old-style request to project p for `seconds` of work of any kind.",
        |p: i64, secs: f64| -> RResult<RequestH> {
            let p = request_project(p)?;
            with_host(|h| h.nrsc())
                .map(|n| RequestH(vcsim_framework::WorkRequest::seconds(p, secs, n)))
        },
    );
    api.func(
        D,
        "work_request",
        "p, seconds",
        "WorkRequest",
        "The same with an integer amount.",
        |p: i64, secs: i64| -> RResult<RequestH> {
            let p = request_project(p)?;
            with_host(|h| h.nrsc())
                .map(|n| RequestH(vcsim_framework::WorkRequest::seconds(p, f(secs), n)))
        },
    );
    api.func(
        D,
        "report_only",
        "p",
        "WorkRequest",
        "A request to project p that only reports finished jobs.",
        |p: i64| -> RResult<RequestH> {
            let p = request_project(p)?;
            with_host(|h| h.nrsc())
                .map(|n| RequestH(vcsim_framework::WorkRequest::report_only(p, n)))
        },
    );
    const W: &str = "WorkRequest";
    api.func(W, "with_rsc", "r, seconds, instances", "WorkRequest", "A copy that asks for `seconds` instance-seconds of resource r and enough jobs to occupy `instances` instances (a per-resource request).", |w: &mut RequestH, r: i64, secs: f64, inst: f64| -> RResult<RequestH> {
        let mut w = w.clone();
        let r = rsc_of(r, w.0.rsc.len())?;
        w.0.rsc[r].req_seconds = secs;
        w.0.rsc[r].req_ninstances = inst;
        Ok(w)
    });
    api.func(W, "with_rsc", "r, seconds, instances, estimated_delay", "WorkRequest", "The same, also telling the server how long new jobs of resource r would wait before they start (today's client's `estimated_delay`, seconds: 0 or more; 0 when not told).", |w: &mut RequestH, r: i64, secs: f64, inst: f64, delay: f64| -> RResult<RequestH> {
        let mut w = w.clone();
        let r = rsc_of(r, w.0.rsc.len())?;
        if !delay.is_finite() || delay < 0.0 {
            return Err(format!("estimated_delay {delay} of resource {r}: must be finite and not negative").into());
        }
        let x = &mut w.0.rsc[r];
        x.req_seconds = secs;
        x.req_ninstances = inst;
        x.estimated_delay = delay;
        Ok(w)
    });
    api.get(
        W,
        "project",
        "int",
        "The project asked.",
        |w: &mut RequestH| Ok(w.0.project as i64),
    );
    api.get(
        W,
        "seconds",
        "float",
        "The old-style amount of seconds.",
        |w: &mut RequestH| Ok(w.0.work_req_seconds),
    );
    api.get(
        W,
        "wants_work",
        "bool",
        "It asks for any work.",
        |w: &mut RequestH| Ok(w.0.wants_work()),
    );
    api.get(
        W,
        "per_resource",
        "bool",
        "It asks per resource.",
        |w: &mut RequestH| Ok(w.0.per_resource()),
    );
    api.func(
        W,
        "asks_for",
        "r",
        "bool",
        "It asks for jobs of resource r.",
        |w: &mut RequestH, r: i64| -> RResult<bool> { Ok(w.0.asks_for(rsc_of(r, w.0.rsc.len())?)) },
    );
    api.func(
        W,
        "rsc_seconds",
        "r",
        "float",
        "Instance-seconds asked of resource r.",
        |w: &mut RequestH, r: i64| -> RResult<f64> {
            Ok(w.0.rsc[rsc_of(r, w.0.rsc.len())?].req_seconds)
        },
    );
    api.func(
        W,
        "rsc_instances",
        "r",
        "float",
        "Instances to occupy asked of resource r.",
        |w: &mut RequestH, r: i64| -> RResult<f64> {
            Ok(w.0.rsc[rsc_of(r, w.0.rsc.len())?].req_ninstances)
        },
    );
    api.func(
        W,
        "rsc_estimated_delay",
        "r",
        "float",
        "How long the client says new jobs of resource r would wait before they start (`estimated_delay`), seconds; 0 when not told.",
        |w: &mut RequestH, r: i64| -> RResult<f64> {
            Ok(w.0.rsc[rsc_of(r, w.0.rsc.len())?].estimated_delay)
        },
    );
}

fn helper_api(api: &mut Api) {
    const F: &str = "Functions";
    api.func(F, "log", "msg", "()", "Adds a line to the run's log, stamped with the simulated time and the script's path (`vcsim run` prints it as a note; at most 10,000 lines and 4,000,000 bytes a run, and a last one says which bound it reached). Outside a hook with a view it goes to standard error, at most 10,000 lines a run for the policy.", |m: ImmutableString| log_line(&m));
    api.func(
        F,
        "sort_by_deadline",
        "jobs",
        "array of Job",
        "A copy of an array of jobs sorted by deadline, earliest first; ties keep their order.",
        |a: Array| -> RResult<Array> {
            let mut a = a;
            with_view(|v| sort_by_deadline(v, &mut a, false))?;
            Ok(a)
        },
    );
    api.func(
        F,
        "sort_by_deadline_desc",
        "jobs",
        "array of Job",
        "A copy sorted by deadline, latest first; ties keep their order.",
        |a: Array| -> RResult<Array> {
            let mut a = a;
            with_view(|v| sort_by_deadline(v, &mut a, true))?;
            Ok(a)
        },
    );
    api.func(
        F,
        "float",
        "x",
        "float",
        "An integer as a float.",
        |x: i64| x as f64,
    );
    api.func(F, "infinity", "", "float", "Positive infinity.", || {
        f64::INFINITY
    });
    api.func(
        F,
        "is_infinite",
        "x",
        "bool",
        "Whether x is infinite.",
        |x: f64| x.is_infinite(),
    );
    // Mixed comparisons and arithmetic are rhai's own; `min`/`max` on floats too.

    const C: &str = "Capacity";
    api.func(
        C,
        "fits",
        "job",
        "bool",
        "The job fits in what is still free (1e-9 tolerance); false for a job already taken.",
        |c: &mut CapacityH, h: JobH| -> RResult<bool> { with_view(|v| Ok(c.fits(h.resolve(v)?))) },
    );
    api.func(
        C,
        "take",
        "job",
        "()",
        "Marks the job's instances as used (and the job as taken); an error for a job already taken.",
        |c: &mut CapacityH, h: JobH| -> RResult<()> {
            with_view(|v| {
                let j = h.resolve(v)?;
                if c.taken.contains(&j.id) {
                    return Err(format!("job {} is already taken", j.id));
                }
                c.take(j);
                Ok(())
            })
        },
    );
    api.func(
        C,
        "give",
        "job",
        "()",
        "Gives the job's instances back (and the job is no longer taken); an error for a job not taken.",
        |c: &mut CapacityH, h: JobH| -> RResult<()> {
            with_view(|v| {
                let j = h.resolve(v)?;
                let Some(i) = c.taken.iter().position(|id| *id == j.id) else {
                    return Err(format!(
                        "job {} is not taken: only a job taken can be given back",
                        j.id
                    ));
                };
                c.taken.swap_remove(i);
                c.cap.give(j);
                Ok(())
            })
        },
    );
    api.func(
        C,
        "take_next",
        "p",
        "Job or ()",
        "Takes and returns project p's next runnable job in the v4 document's order (as `v.next_runnable(p)`: running, preempted, then queued by earliest deadline) among those not taken yet that fit what is free; () if none does.",
        |c: &mut CapacityH, p: i64| -> RResult<Dynamic> {
            with_view(|v| {
                let p = proj_index(v, p)?;
                let pick = vcsim_blocks::job_order::pick(v, p, |j| c.fits(j));
                Ok(match pick {
                    Some(idx) => {
                        let j = &v.jobs()[idx];
                        c.take(j);
                        JobH::at(idx, j)
                    }
                    None => Dynamic::UNIT,
                })
            })
        },
    );
    api.func(
        C,
        "free",
        "r",
        "float",
        "Free instances of resource r.",
        |c: &mut CapacityH, r: i64| -> RResult<f64> {
            Ok(c.cap.free[rsc_of(r, c.cap.free.len())?])
        },
    );
    api.get(
        C,
        "any_free",
        "bool",
        "Some instance of some resource is free.",
        |c: &mut CapacityH| Ok(c.cap.any_free()),
    );

    const R: &str = "RrSim";
    api.get(
        R,
        "shortfall",
        "float",
        "Idle instance-seconds expected within the horizon.",
        |r: &mut RrH| Ok(r.0.shortfall),
    );
    api.get(
        R,
        "nidle",
        "float",
        "Instances no job would hold at the start.",
        |r: &mut RrH| Ok(r.0.nidle),
    );
    api.get(
        R,
        "first_idle",
        "float",
        "When the first instance would go idle (infinite if never).",
        |r: &mut RrH| Ok(r.0.first_idle),
    );
    api.get(
        R,
        "any_misses",
        "bool",
        "Some job would miss its deadline.",
        |r: &mut RrH| Ok(r.0.any_misses()),
    );
    api.func(
        R,
        "misses",
        "p",
        "int",
        "Jobs of project p projected to miss their deadlines.",
        |r: &mut RrH, p: i64| -> RResult<i64> {
            Ok(r.0.projects[project_of(p, r.0.projects.len())?].misses as i64)
        },
    );
    api.func(
        R,
        "can_use",
        "p",
        "float",
        "Instances project p's max_concurrent caps let it use (infinite without caps).",
        |r: &mut RrH, p: i64| -> RResult<f64> {
            Ok(r.0.projects[project_of(p, r.0.projects.len())?].can_use)
        },
    );
    api.func(
        R,
        "project_shortfall",
        "p",
        "float",
        "Instance-seconds project p would leave idle of its share.",
        |r: &mut RrH, p: i64| -> RResult<f64> {
            Ok(r.0.projects[project_of(p, r.0.projects.len())?].shortfall)
        },
    );
    api.func(
        R,
        "has_jobs",
        "p",
        "bool",
        "Project p has unfinished jobs of this resource.",
        |r: &mut RrH, p: i64| -> RResult<bool> {
            Ok(r.0.projects[project_of(p, r.0.projects.len())?].has_jobs)
        },
    );
    api.func(
        R,
        "missed",
        "job",
        "bool",
        "The job is projected to miss its deadline.",
        |r: &mut RrH, j: JobH| -> RResult<bool> {
            with_view(|v| {
                let _ = j.resolve(v)?;
                Ok(r.0
                    .jobs
                    .iter()
                    .any(|s| v.jobs().get(s.index).is_some_and(|x| x.id == j.id) && s.missed))
            })
        },
    );
    api.func(
        R,
        "finish",
        "job",
        "float",
        "When the job would finish (infinite if not simulated).",
        |r: &mut RrH, j: JobH| -> RResult<f64> {
            with_view(|v| {
                Ok(r.0
                    .jobs
                    .iter()
                    .find(|s| v.jobs().get(s.index).is_some_and(|x| x.id == j.id))
                    .map_or(f64::INFINITY, |s| s.finish))
            })
        },
    );
}

fn list_sim_api(api: &mut Api) {
    const L: &str = "ListSim";
    fn per_rsc(
        api: &mut Api,
        name: &'static str,
        doc: &'static str,
        g: fn(&ListSim, usize) -> f64,
    ) {
        api.func(
            L,
            name,
            "r",
            "float",
            doc,
            move |s: &mut ListSimH, r: i64| {
                let r = s.rsc(r)?;
                Ok::<_, Box<rhai::EvalAltResult>>(g(&s.0, r))
            },
        );
    }
    per_rsc(
        api,
        "shortfall",
        "Idle instance-seconds of resource r within the buffer (now to now + the whole buffer).",
        |s, r| s.shortfall[r],
    );
    per_rsc(
        api,
        "saturated_time",
        "Seconds from now to the end of the last interval in which every instance of resource r is busy (0 if never).",
        |s, r| s.saturated_time[r],
    );
    per_rsc(
        api,
        "nidle_now",
        "Instances of resource r no simulated job holds now.",
        |s, r| s.nidle_now[r],
    );
    per_rsc(
        api,
        "busy_time",
        "The least busy instance of resource r's busy time with jobs that miss their deadlines, seconds (what today's client sends as a request's `estimated_delay`).",
        |s, r| s.busy_time[r],
    );
    api.func(
        L,
        "deadlines_missed",
        "p, r",
        "int",
        "Jobs of project p on resource r the simulation finishes after their deadlines.",
        |s: &mut ListSimH, p: i64, r: i64| -> RResult<i64> {
            let (p, r) = (s.project(p)?, s.rsc(r)?);
            Ok(s.0.deadlines_missed(p, r) as i64)
        },
    );
    api.func(
        L,
        "missed",
        "job",
        "bool",
        "The simulation finishes the job after its deadline.",
        |s: &mut ListSimH, j: JobH| -> RResult<bool> {
            with_view(|v| {
                let _ = j.resolve(v)?;
                Ok(v.jobs()
                    .iter()
                    .position(|x| x.id == j.id)
                    .and_then(|i| s.0.misses.get(i).copied())
                    .unwrap_or(false))
            })
        },
    );
}

/// The call's simulation of today's client (`v.list_sim()`), made once.
fn list_sim() -> RResult<ListSimH> {
    if let Some(s) = with_frame(|fr| fr.and_then(|fr| fr.list_sim.borrow().clone())) {
        return Ok(ListSimH(s));
    }
    let sim = with_view(|v| {
        let mut sim = ListSim::default();
        sim.simulate(v, ProjectOrder::AsBuilt)
            .map_err(estimator_error)?;
        Ok(Arc::new(sim))
    })?;
    with_frame(|fr| {
        if let Some(fr) = fr {
            *fr.list_sim.borrow_mut() = Some(sim.clone());
        }
    });
    Ok(ListSimH(sim))
}

fn server_api(api: &mut Api) {
    const S: &str = "Request";
    api.get(
        S,
        "now",
        "float",
        "The time of the request.",
        |_: &mut ServerH| with_server(|s, _| Ok(s.now)),
    );
    api.get(
        S,
        "project",
        "int",
        "The project's index.",
        |_: &mut ServerH| with_server(|s, _| Ok(s.project as i64)),
    );
    api.get(
        S,
        "project_name",
        "string",
        "The project's name.",
        |_: &mut ServerH| with_server(|s, _| Ok(ImmutableString::from(s.project_name))),
    );
    api.get(
        S,
        "latency_bound",
        "float",
        "The project's latency bound, seconds.",
        |_: &mut ServerH| with_server(|s, _| Ok(s.latency_bound)),
    );
    api.get(S, "host", "Host", "The host.", |_: &mut ServerH| Ok(HostH));
    api.get(
        S,
        "request",
        "WorkRequest",
        "What the client asks for.",
        |_: &mut ServerH| with_server(|s, _| Ok(RequestH(s.request.clone()))),
    );
    api.get(
        S,
        "dcf",
        "float",
        "The client's duration correction factor for this project.",
        |_: &mut ServerH| with_server(|s, _| Ok(s.dcf)),
    );
    api.get(
        S,
        "work_buf_min",
        "float",
        "The client's work buffer minimum, seconds.",
        |_: &mut ServerH| with_server(|s, _| Ok(s.work_buf_min)),
    );
    api.get(
        S,
        "on_fraction",
        "float",
        "The fraction of time the client expects the host to compute (1 unless it learns availability).",
        |_: &mut ServerH| with_server(|s, _| Ok(s.on_fraction)),
    );
    api.func(
        S,
        "estimated_delay",
        "r",
        "float",
        "How long the client says new jobs of resource r would wait before they start, seconds (`req.request.rsc_estimated_delay(r)`); 0 when not told.",
        |_: &mut ServerH, r: i64| {
            with_server(|s, _| Ok(s.request.rsc[rsc_of(r, s.request.rsc.len())?].estimated_delay))
        },
    );
    api.get(
        S,
        "workload",
        "array of ReportedJob",
        "Every job on the host, of every project, as the request lists it.",
        |_: &mut ServerH| {
            with_server(|s, _| {
                Ok(s.workload
                    .iter()
                    .map(|j| Dynamic::from(ReportedH(j.clone())))
                    .collect::<Array>())
            })
        },
    );
    api.get(S, "free_bytes", "array of float", "Free disk: [free, free if offenders' files were deleted, free if this project's were deleted too].", |_: &mut ServerH| {
        with_server(|s, _| Ok(s.free_bytes.iter().map(|x| Dynamic::from(*x)).collect::<Array>()))
    });
    api.func(
        S,
        "asks_for",
        "r",
        "bool",
        "The request asks for jobs of resource r.",
        |_: &mut ServerH, r: i64| {
            with_server(|s, _| Ok(s.request.asks_for(rsc_of(r, s.host.nrsc())?)))
        },
    );
    api.func(
        S,
        "seconds_to_fill",
        "r",
        "float",
        "Seconds of resource r still to fill after the jobs already in the reply (WS1's rule): positive while the reply must go on. While the request's idle instances of r are not all held by jobs sent, it is the request's seconds (at least 1) plus the seconds sent, so that it stays positive without counting down: test it with `> 0`, not against a job's seconds.",
        |_: &mut ServerH, r: i64| {
            with_server(|s, sent| {
                let r = rsc_of(r, s.host.nrsc())?;
                Ok(vcsim_blocks::server_fill::seconds_to_fill(s, sent, r))
            })
        },
    );
    const T: &str = "Sent";
    api.get(
        T,
        "len",
        "int",
        "Jobs already in the reply.",
        |_: &mut SentH| with_server(|_, sent| Ok(sent.len() as i64)),
    );
    api.get(
        T,
        "all",
        "array of Candidate",
        "The jobs already in the reply, in order.",
        |_: &mut SentH| {
            with_server(|_, sent| {
                Ok(sent
                    .iter()
                    .map(|c| Dynamic::from(CandH(c.clone())))
                    .collect::<Array>())
            })
        },
    );
    api.func(
        T,
        "get",
        "i",
        "Candidate",
        "The i-th job of the reply.",
        |_: &mut SentH, i: i64| {
            with_server(|_, sent| {
                index(i, sent.len())
                    .map(|i| CandH(sent[i].clone()))
                    .ok_or_else(|| format!("sent[{i}]: only {} jobs", sent.len()))
            })
        },
    );
    const C: &str = "Candidate";
    api.get(
        C,
        "app",
        "int",
        "Its application's index.",
        |c: &mut CandH| Ok(c.0.app as i64),
    );
    api.get(C, "rsc", "int", "Its resource.", |c: &mut CandH| {
        Ok(c.0.rsc as i64)
    });
    api.get(C, "cpus", "float", "CPUs it uses.", |c: &mut CandH| {
        Ok(c.0.cpus)
    });
    api.get(
        C,
        "gpu_count",
        "float",
        "GPU instances it uses.",
        |c: &mut CandH| Ok(c.0.gpu_count),
    );
    api.get(
        C,
        "width",
        "float",
        "Instances of its resource it occupies.",
        |c: &mut CandH| Ok(vcsim_blocks::server_fill::width(&c.0)),
    );
    api.get(
        C,
        "flops_estimate",
        "float",
        "Its FLOPs estimate.",
        |c: &mut CandH| Ok(c.0.flops_estimate),
    );
    api.get(
        C,
        "est_seconds",
        "float",
        "The server's estimate of its run time on this host (with the DCF).",
        |c: &mut CandH| Ok(c.0.est_seconds),
    );
    api.get(
        C,
        "deadline",
        "float",
        "Its deadline if sent now.",
        |c: &mut CandH| Ok(c.0.deadline),
    );
    const J: &str = "ReportedJob";
    api.get(J, "project", "int", "Its project.", |j: &mut ReportedH| {
        Ok(j.0.project as i64)
    });
    api.get(J, "rsc", "int", "Its resource.", |j: &mut ReportedH| {
        Ok(j.0.rsc as i64)
    });
    api.get(J, "cpus", "float", "CPUs it uses.", |j: &mut ReportedH| {
        Ok(j.0.cpus)
    });
    api.get(
        J,
        "gpu_count",
        "float",
        "GPU instances it uses.",
        |j: &mut ReportedH| Ok(j.0.gpu_count),
    );
    api.get(
        J,
        "deadline",
        "float",
        "Its deadline.",
        |j: &mut ReportedH| Ok(j.0.deadline),
    );
    api.get(
        J,
        "remaining",
        "float",
        "The client's estimate of its remaining run time.",
        |j: &mut ReportedH| Ok(j.0.remaining_seconds),
    );
    const Y: &str = "Reply";
    api.get(
        Y,
        "project",
        "int",
        "The project the RPC went to.",
        |r: &mut ReplyH| Ok(r.0.project as i64),
    );
    api.get(
        Y,
        "reached",
        "bool",
        "Some scheduler of the project answered.",
        |r: &mut ReplyH| Ok(r.0.reached),
    );
    api.get(
        Y,
        "request",
        "WorkRequest",
        "What was asked.",
        |r: &mut ReplyH| Ok(RequestH(r.0.request.clone())),
    );
    api.get(
        Y,
        "njobs",
        "int",
        "Jobs received, all resources.",
        |r: &mut ReplyH| Ok(r.0.njobs() as i64),
    );
    api.func(
        Y,
        "jobs",
        "r",
        "int",
        "Jobs received of resource r.",
        |r: &mut ReplyH, x: i64| -> RResult<i64> {
            Ok(i64::from(r.0.jobs[rsc_of(x, r.0.jobs.len())?]))
        },
    );
    api.func(Y, "status", "r", "string", "The server's answer for resource r: `work_returned`, `no_work_but_supported` or `not_supported` from a project with `reports_resource_support = true` that was reached; `unknown` otherwise (BOINC 2007's servers say nothing beyond the jobs sent).", |r: &mut ReplyH, x: i64| -> RResult<ImmutableString> {
        Ok(ImmutableString::from(match r.0.rsc_status[rsc_of(x, r.0.rsc_status.len())?] {
            RscStatus::WorkReturned => "work_returned",
            RscStatus::NoWorkButSupported => "no_work_but_supported",
            RscStatus::NotSupported => "not_supported",
            RscStatus::Unknown => "unknown",
        }))
    });
}

fn disk_api(api: &mut Api) {
    const S: &str = "View";
    api.get(
        S,
        "files",
        "array of File",
        "The files on the host, oldest id first (empty unless the disk manager enforces limits).",
        |_: &mut ViewH| {
            with_view(|v| {
                Ok(v.disk()
                    .files
                    .iter()
                    .map(|f| {
                        Dynamic::from(FileH {
                            file: Arc::new(f.clone()),
                            referenced: v.file_referenced(f),
                        })
                    })
                    .collect::<Array>())
            })
        },
    );
    api.get(
        S,
        "disk_total_limit",
        "float",
        "Bytes BOINC may use (`total_limit`: the least of `disk_max_used_gb`, `disk_max_used_pct` of the disk, and the disk less non-BOINC usage less `disk_min_free_gb`).",
        |_: &mut ViewH| with_view(|v| Ok(v.disk().total_limit)),
    );
    api.get(
        S,
        "disk_projects_limit",
        "float",
        "Bytes all projects' files may use (`all_projects_limit = total_limit - core_usage`).",
        |_: &mut ViewH| with_view(|v| Ok(v.disk().all_projects_limit())),
    );
    api.get(
        S,
        "disk_usage",
        "float",
        "Bytes of all projects' files.",
        |_: &mut ViewH| with_view(|v| Ok(v.disk().usage())),
    );
    api.get(
        S,
        "disk_suspended",
        "bool",
        "Computation is suspended because the disk manager's `poll` asked for it.",
        |_: &mut ViewH| with_view(|v| Ok(v.disk().suspended)),
    );

    const P: &str = "Project";
    api.get(
        P,
        "disk_usage",
        "float",
        "Bytes of its files on the host.",
        |h: &mut ProjectH| {
            let p = h.0;
            with_view(|v| Ok(v.disk().project_usage(p)))
        },
    );
    api.get(
        P,
        "deletion_policy",
        "string",
        "The order in which its files should be deleted: `\"lru\"` (least recently used first), `\"priority\"` (lowest priority first, in download order) or `\"expire\"` (expired files first, then least recently used).",
        |h: &mut ProjectH| {
            let p = h.0;
            with_view(|v| {
                Ok(ImmutableString::from(match v.project(p).deletion_policy {
                    DeletionPolicy::Lru => "lru",
                    DeletionPolicy::Priority => "priority",
                    DeletionPolicy::Expire => "expire",
                }))
            })
        },
    );

    const J: &str = "Job";
    api.get(
        J,
        "deletable",
        "bool",
        "A disk manager may delete it (put its id in a plan's `delete_jobs`): queued and never started.",
        |h: &mut JobH| with_view(|v| Ok(v.job_deletable(h.resolve(v)?))),
    );

    const F: &str = "File";
    fn fget<R: Clone + Send + Sync + 'static>(
        api: &mut Api,
        name: &'static str,
        ret: &'static str,
        doc: &'static str,
        g: fn(&FileH) -> R,
    ) {
        api.get(F, name, ret, doc, move |h: &mut FileH| Ok(g(h)));
    }
    fget(
        api,
        "id",
        "int",
        "Its id (what a plan's `delete_files` takes).",
        |h| h.file.id as i64,
    );
    fget(api, "project", "int", "Its project's index.", |h| {
        h.file.project as i64
    });
    fget(api, "bytes", "float", "Its size in bytes.", |h| {
        h.file.bytes
    });
    fget(
        api,
        "kind",
        "string",
        "`\"input\"` (brought by a job), `\"output\"` (left by a finished job until it is reported) or `\"sticky\"` (kept by the project).",
        |h| {
            ImmutableString::from(match h.file.kind {
                FileKind::Input => "input",
                FileKind::Output => "output",
                FileKind::Sticky => "sticky",
            })
        },
    );
    fget(
        api,
        "job",
        "int or ()",
        "The id of the job that brought or made it, while that job is on the host.",
        |h| {
            h.file
                .job
                .map_or(Dynamic::UNIT, |j| Dynamic::from(j as i64))
        },
    );
    fget(
        api,
        "referenced",
        "bool",
        "A queued or running job needs it, or it is the output of a result not yet reported: it cannot be deleted.",
        |h| h.referenced,
    );
    fget(
        api,
        "sticky",
        "bool",
        "It stays on the host after its job is reported.",
        |h| h.file.sticky,
    );
    fget(
        api,
        "priority",
        "int",
        "Its deletion priority: 1 (P_LOW), 3 (P_MEDIUM) or 5 (P_HIGH).",
        |h| h.file.priority as i64,
    );
    fget(
        api,
        "created",
        "float",
        "When it was downloaded or written (negative: before the run).",
        |h| h.file.created,
    );
    fget(api, "last_used", "float", "When a job last used it.", |h| {
        h.file.last_used
    });
    fget(
        api,
        "expires",
        "float",
        "Its expiry date (`exp_date`); expired when `f.expires <= v.now`.",
        |h| h.file.expires,
    );
}
