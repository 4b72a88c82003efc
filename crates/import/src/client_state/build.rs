//! One project of the state file as vcsim's `[[project]]`, its apps (a BOINC
//! app on one kind of processor each) and its jobs.

use crate::client_state::app::{AppEl, AppVersionEl};
use crate::client_state::app_config::AppConfig;
use crate::client_state::host::Coproc;
use crate::client_state::project::ProjectEl;
use crate::client_state::state::Group;
use crate::client_state::work::{ResultEl, WorkunitEl};
use crate::emit::{num, show, Section, Val};
use crate::error::ImportError;
use crate::output::Out;
use crate::xml::{Src, Text, Unmodelled};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use vcsim_framework::scenario::bounds::{MAX_GPUS, MAX_SPAN_DAYS, MIN_FLOPS_PER_SECOND};

/// The emulator's defaults where an app says nothing (BOINC `client/sim.cpp`,
/// `get_app_params`).
const DEFAULT_FPOPS_EST: f64 = 3600e9;
const DEFAULT_LATENCY_S: f64 = 86400.0;

/// What the projects share while they are built, and what they add up.
pub struct Build<'s, 'a> {
    pub src: &'s Src<'a>,
    pub ncpus: u32,
    pub cpu_flops: f64,
    pub gpus: &'s [&'s Coproc<'a>],
    /// The run's start, Unix time.
    pub t0: f64,
    pub files: &'s HashMap<(usize, Text<'a>), f64>,
    pub active: &'s HashMap<(Text<'a>, Text<'a>), f64>,
    pub warnings: &'s mut Vec<String>,
    pub un: &'s mut Unmodelled,
    /// The names of the projects kept so far.
    pub names: HashSet<String>,
    /// GPU apps for a GPU the host lacks, described.
    pub gpu_apps_missing: Vec<String>,
    /// Results left out because they are already computed.
    pub finished: usize,
    /// Jobs already past their deadline.
    pub overdue: usize,
    /// The `<active_task>`s matched to a result (by result name): the
    /// others are said, not dropped silently.
    pub active_used: HashSet<String>,
    /// Of the project being built, the jobs of an app it has no usable
    /// version of, per app: the count, the first job and its line (one
    /// warning each, not one per job).
    pub orphans: BTreeMap<String, (usize, String, u32)>,
}

/// A BOINC app version, the newest of its plan class, with its CPU and GPU
/// use after app_config.xml.
struct Version<'v, 'a> {
    el: &'v AppVersionEl<'a>,
    cpus: f64,
    cpus_from: String,
    gpu: Option<(String, f64, String)>,
}

/// The element a version's CPU or GPU use came from (client_state.xml or an
/// app_config.xml): a value out of bounds is an error there.
#[derive(Clone)]
struct Origin {
    path: PathBuf,
    /// The file's name in messages.
    file: String,
    tag: &'static str,
    line: usize,
}

impl Origin {
    fn err(&self, message: String) -> ImportError {
        ImportError {
            file: self.path.clone(),
            line: Some(self.line),
            element: Some(self.tag.to_string()),
            message,
        }
    }
}

/// A BOINC app's job sizes, before the per-version speed factor.
struct Sizes {
    est: f64,
    mean: f64,
    sd: f64,
    est_from: String,
    mean_from: String,
    sd_from: String,
}

/// A project's name and share, with where they came from.
struct Identity {
    name: String,
    name_from: String,
    share: f64,
    share_from: String,
}

/// A project's versions, workunits and results by app name, in file order.
struct ByApp<'g, 'a> {
    versions: HashMap<&'g str, Vec<&'g AppVersionEl<'a>>>,
    wus: HashMap<&'g str, Vec<&'g WorkunitEl<'a>>>,
    results: HashMap<&'g str, Vec<&'g ResultEl<'a>>>,
}

impl<'g, 'a> ByApp<'g, 'a> {
    fn new(g: &'g Group<'a>, wus: &HashMap<&str, &'g WorkunitEl<'a>>) -> ByApp<'g, 'a> {
        let mut ix = ByApp {
            versions: HashMap::new(),
            wus: HashMap::new(),
            results: HashMap::new(),
        };
        for v in &g.versions {
            if let Some(an) = v.app_name.as_deref() {
                ix.versions.entry(an).or_default().push(v);
            }
        }
        for w in &g.workunits {
            if let Some(an) = w.app_name.as_deref() {
                ix.wus.entry(an).or_default().push(w);
            }
        }
        for r in &g.results {
            let app = r
                .wu_name
                .as_deref()
                .and_then(|wn| wus.get(wn))
                .and_then(|w| w.app_name.as_deref());
            if let Some(an) = app {
                ix.results.entry(an).or_default().push(r);
            }
        }
        ix
    }
}

/// A latency bound of one app, seconds.
struct Latency {
    seconds: f64,
    app: String,
    from: String,
}

/// One vcsim app: a BOINC app on one kind of processor.
struct VApp {
    name: String,
    boinc_app: String,
    plan_class: String,
    version_num: i64,
    cpus: f64,
    cpus_from: String,
    /// Kind, count per job, and where the count came from.
    gpu: Option<(String, f64, String)>,
    /// BOINC's cap on the app's concurrent jobs, with where it came from.
    max_concurrent: Option<(u32, String)>,
    /// The app's own latency bound, seconds, where it differs from the project's.
    latency: Option<(f64, String)>,
    /// vcsim's speed for a job / the app version's `<flops>`.
    scale: f64,
    scale_note: String,
    weight: f64,
    weight_from: String,
    input_mb: Option<f64>,
    output_mb: Option<f64>,
}

impl<'s, 'a> Build<'s, 'a> {
    /// Writes the sections of project `gi` (`[[project]]`, schedulers, apps,
    /// jobs) to `out`, unless it is left out.
    pub fn project(
        &mut self,
        gi: usize,
        g: &Group<'a>,
        cfg: Option<&AppConfig<'a>>,
        out: &mut Out,
    ) -> Result<(), ImportError> {
        let src = self.src;
        let p = &g.project;
        let url = p.url().to_string();
        let Some(Identity {
            name,
            name_from,
            share,
            share_from,
        }) = self.identity(gi, p)
        else {
            return Ok(());
        };
        if let Some(a) = &p.available {
            self.un.add_all(src, "project><available", &a.unread);
        }
        self.un.add_all(src, "project", &p.unread);

        // Workunits by name (the last of a name wins).
        let mut wus: HashMap<&str, &WorkunitEl> = HashMap::new();
        for w in &g.workunits {
            let wn = w
                .name
                .as_deref()
                .ok_or_else(|| src.err_at(w.line, "workunit", "a <workunit> needs a <name>"))?;
            wus.insert(wn, w);
        }
        let ix = ByApp::new(g, &wus);

        // Apps, each split by processor type into vcsim apps.
        let mut vapps: Vec<VApp> = Vec::new();
        let mut sizes: HashMap<String, Sizes> = HashMap::new();
        for a in &g.apps {
            if let Some((sz, mut v)) = self.app(gi, a, &name, &ix, cfg)? {
                sizes.insert(a.name.to_string(), sz);
                vapps.append(&mut v);
            }
        }
        // One entry per vcsim app: the project's bound is the one that the
        // most apps have.
        let latencies: Vec<Latency> = vapps
            .iter()
            .filter_map(|va| {
                va.latency.as_ref().map(|(seconds, from)| Latency {
                    seconds: *seconds,
                    app: va.name.clone(),
                    from: from.clone(),
                })
            })
            .collect();
        if vapps.len() > crate::input::MAX_APPS_PER_PROJECT {
            return Err(src.err_at(
                p.line,
                "project",
                format!(
                    "project `{name}` has {} apps (counting each plan class): vcsim's limit is {}",
                    vapps.len(),
                    crate::input::MAX_APPS_PER_PROJECT
                ),
            ));
        }
        if vapps.is_empty() {
            self.warnings.push(format!(
                "{}: project `{name}` has no usable app: left out, with its jobs",
                src.name()
            ));
            return Ok(());
        }
        // vcsim app names must be unique in the project.
        let mut seen: HashSet<String> = HashSet::new();
        for (i, va) in vapps.iter_mut().enumerate() {
            if !seen.insert(va.name.clone()) {
                va.name = format!("{}#{}", va.name, i + 1);
                seen.insert(va.name.clone());
            }
        }

        // Project table.
        let mut sections = Vec::new();
        let mut ps = Section::new("[[project]]");
        ps.put("name", Val::S(name.clone()), name_from);
        ps.put("resource_share", Val::F(share), share_from);
        let lat = project_latency(&latencies);
        ps.put(
            "latency_bound_days",
            Val::F(lat.seconds / 86400.0),
            lat.from.clone(),
        );
        // Each app keeps its own bound where it differs from the project's.
        for va in &mut vapps {
            if va
                .latency
                .as_ref()
                .is_some_and(|l| (l.0 - lat.seconds).abs() <= 1e-6)
            {
                va.latency = None;
            }
        }
        if let Some(m) = cfg.and_then(|c| c.project_max_concurrent.map(|m| (m, c))) {
            if m.0.value > 0 {
                ps.put("max_concurrent", Val::I(m.0.value as u64), m.1.at(&m.0));
            }
        }
        if let Some(c) = cfg {
            self.app_config_warnings(&name, c, &g.apps, &g.versions);
        }
        if let Some(a) = &p.available {
            let from = format!("<available> of the project, {} line {}", src.name(), a.line);
            ps.put(
                "availability",
                Val::Inline(vec![
                    ("fraction", Val::F(a.frac)),
                    (
                        "mean_up_hours",
                        Val::F(a.lambda.unwrap_or(86400.0) / 3600.0),
                    ),
                ]),
                if a.lambda.is_some() {
                    format!("<frac>, <lambda> / 3600 of {from}")
                } else {
                    format!("<frac> of {from}; no <lambda>: vcsim's default 24 h")
                },
            );
        }
        if !url.is_empty() {
            ps.note(format!("{name}: <master_url> {url}"));
        }
        sections.push(ps);
        for (u, line) in &p.scheduler_urls {
            let mut s = Section::new("[[project.scheduler]]");
            s.put(
                "url",
                Val::S(u.to_string()),
                format!(
                    "<scheduler_url>, {} line {line}; always up with the project",
                    src.name()
                ),
            );
            sections.push(s);
        }
        for va in &vapps {
            sections.push(app_section(va, &sizes[&va.boinc_app]));
        }
        for s in &sections {
            self.write(out, s)?;
        }

        // Jobs on the host.
        let mut by_app: HashMap<&str, Vec<&VApp>> = HashMap::new();
        for va in &vapps {
            by_app.entry(va.boinc_app.as_str()).or_default().push(va);
        }
        self.finished += g.done_without_workunit;
        // BOINC names each result once: a repeated name is a damaged or
        // edited file, said once with the first repeat.
        let mut names: HashSet<&str> = HashSet::new();
        let repeats: Vec<&ResultEl> = g
            .results
            .iter()
            .filter(|r| !names.insert(&r.name))
            .collect();
        if let Some(first) = repeats.first() {
            let what = match repeats.len() {
                1 => "a <result> repeats the name of an earlier one".to_string(),
                n => format!("{n} <result>s repeat the names of earlier ones (the first:"),
            };
            self.warnings.push(format!(
                "{}: project `{name}`: {what} `{}` at line {}{}: each is imported as a job of its own",
                src.name(),
                &*first.name,
                first.line,
                if repeats.len() > 1 { ")" } else { "" }
            ));
        }
        self.orphans.clear();
        for r in &g.results {
            if let Some(s) = self.job(r, &wus, &by_app, &sizes, &url, lat.seconds)? {
                self.write(out, &s)?;
            }
        }
        for (an, (n, first, line)) in std::mem::take(&mut self.orphans) {
            let jobs = if n == 1 {
                format!("job `{first}` (line {line})")
            } else {
                format!("{n} jobs (the first `{first}`, line {line})")
            };
            self.warnings.push(format!(
                "{}: project `{name}`: {jobs} of app `{an}` left out: the project has no usable version of `{an}` (none is listed for it, or the app was left out above)",
                src.name()
            ));
        }
        self.names.insert(name);
        Ok(())
    }

    /// The project's name and share, with warnings; None if it is left out.
    fn identity(&mut self, gi: usize, p: &ProjectEl) -> Option<Identity> {
        let src = self.src;
        let (mut name, name_from) = match (&p.project_name, &p.master_url) {
            (Some(n), _) if !n.value.is_empty() => (n.value.to_string(), src.at_l(n)),
            (_, Some(u)) if !u.value.is_empty() => (u.value.to_string(), src.at_l(u)),
            _ => (
                format!("project{}", gi + 1),
                format!(
                    "no <project_name> or <master_url> in <project> at line {}",
                    p.line
                ),
            ),
        };
        if self.names.contains(&name) {
            let new = format!("{name} ({})", gi + 1);
            self.warnings.push(format!(
                "{}: a second project named `{name}` at line {}: renamed `{new}`",
                src.name(),
                p.line
            ));
            name = new;
        }
        if let Some(f) = p.skip {
            self.warnings.push(format!(
                "{}: project `{name}` is <{f}>: left out, with its jobs",
                src.name()
            ));
            return None;
        }
        for f in &p.unmodelled_flags {
            self.warnings.push(format!(
                "{}: project `{name}` has <{f}>: not modelled, imported as an active project",
                src.name()
            ));
        }
        let (mut share, share_from) = match &p.resource_share {
            Some(c) => (c.value, src.at_l(c)),
            None => (100.0, "no <resource_share>: BOINC's default".to_string()),
        };
        let share_from = if share == 0.0 {
            share = 0.01;
            self.warnings.push(format!(
                "{}: project `{name}` has resource share 0 (a backup project), which vcsim does not model: given share 0.01",
                src.name()
            ));
            format!("0 (backup project) in {share_from}; vcsim needs a positive share")
        } else {
            share_from
        };
        Some(Identity {
            name,
            name_from,
            share,
            share_from,
        })
    }

    /// A BOINC app's sizes and vcsim apps (one per plan class); None if it
    /// is left out (with a warning).
    fn app(
        &mut self,
        gi: usize,
        a: &AppEl,
        project: &str,
        ix: &ByApp<'_, 'a>,
        cfg: Option<&AppConfig>,
    ) -> Result<Option<(Sizes, Vec<VApp>)>, ImportError> {
        let src = self.src;
        let an: &str = &a.name;
        for f in &a.left_out_by {
            self.warnings.push(format!(
                "{}: app `{an}` of `{project}` has <{f}>: left out, with its jobs",
                src.name()
            ));
        }
        self.un.add_all(src, "app", &a.unread);
        if !a.left_out_by.is_empty() {
            return Ok(None);
        }
        let versions = self.newest_versions(an, ix.versions.get(an).map_or(&[][..], |v| v), cfg)?;
        if versions.is_empty() {
            self.warnings.push(format!(
                "{}: app `{an}` of `{project}` has no <app_version>: left out, with its jobs",
                src.name()
            ));
            return Ok(None);
        }
        let app_wus = ix.wus.get(an).map_or(&[][..], |v| v);
        let app_results = ix.results.get(an).map_or(&[][..], |v| v);
        let sizes = self.sizes(a, app_wus);
        let latency = self.latency(a, app_results);
        // app_config.xml's cap wins over the emulator's <max_concurrent>.
        let cap = match cfg.and_then(|c| c.apps_named(an).next_back()) {
            Some(ac) if ac.max_concurrent.is_some() => ac
                .max_concurrent
                .map(|m| (m.value, cfg.map_or(String::new(), |c| c.at(&m)))),
            _ => a.max_concurrent.map(|m| (m.value, src.at_l(&m))),
        }
        .filter(|m| m.0 > 0);
        if let Some((m, _)) = &cap {
            if versions.len() > 1 {
                self.warnings.push(format!(
                    "{}: app `{an}` of `{project}`: BOINC's <max_concurrent> {m} counts the jobs of all its {} versions together; vcsim caps each version at {m}",
                    src.name(),
                    versions.len()
                ));
            }
        }
        let (weight, weight_from) = match &a.weight {
            Some(c) => (c.value, src.at_l(c)),
            None => (1.0, String::new()),
        };
        let input_mb = {
            let v: Vec<f64> = app_wus
                .iter()
                .filter_map(|w| self.file_mb(gi, &w.file_refs))
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        let output_mb = {
            let v: Vec<f64> = app_results
                .iter()
                .filter_map(|r| self.file_mb(gi, &r.file_refs))
                .filter(|m| *m > 0.0)
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        let single = versions.len() == 1;
        let mut vapps = Vec::new();
        for v in versions {
            let vname = if single || v.el.plan_class.is_empty() {
                an.to_string()
            } else {
                format!("{an}/{}", v.el.plan_class)
            };
            let speed = match &v.gpu {
                Some((kind, count, _)) => match self.gpus.iter().find(|g| &g.kind == kind) {
                    Some(g) => g.peak_flops.map(|f| f * count),
                    None => {
                        self.gpu_apps_missing
                            .push(format!("`{vname}` of `{project}` ({kind})"));
                        None
                    }
                },
                None => Some(v.cpus * self.cpu_flops),
            };
            let (scale, scale_note) = match (speed, v.el.flops) {
                (Some(s), Some(f)) if (s / f - 1.0).abs() > 1e-9 => (
                    s / f,
                    format!(
                        " x {} (vcsim runs it at {} FLOPS, the app version's <flops> at line {} is {}: the run time is kept)",
                        num(s / f),
                        num(s),
                        v.el.line,
                        num(f)
                    ),
                ),
                _ => (1.0, String::new()),
            };
            vapps.push(VApp {
                name: vname,
                boinc_app: an.to_string(),
                plan_class: v.el.plan_class.to_string(),
                version_num: v.el.version_num,
                cpus: v.cpus,
                cpus_from: v.cpus_from,
                gpu: v.gpu,
                max_concurrent: cap.clone(),
                latency: latency.as_ref().map(|l| (l.seconds, l.from.clone())),
                scale,
                scale_note,
                weight,
                weight_from: weight_from.clone(),
                input_mb,
                output_mb,
            });
        }
        Ok(Some((sizes, vapps)))
    }

    /// The input or output size of a job, MB: its files' sizes in project
    /// `gi`; None if none is known.
    fn file_mb(&self, gi: usize, refs: &[Text]) -> Option<f64> {
        let mut total = 0.0;
        let mut any = false;
        for f in refs {
            if let Some(b) = self.files.get(&(gi, f.clone())) {
                total += b;
                any = true;
            }
        }
        any.then_some(total / 1e6)
    }

    fn write(&self, out: &mut Out, s: &Section) -> Result<(), ImportError> {
        out.push(s).map_err(|m| ImportError {
            file: self.src.path.to_path_buf(),
            line: None,
            element: None,
            message: format!("the imported values do not make a valid scenario: {m}"),
        })
    }

    /// The newest version of each plan class, in order of first appearance;
    /// with the CPUs they use, checked against the host.
    fn newest_versions<'v>(
        &mut self,
        an: &str,
        all: &[&'v AppVersionEl<'a>],
        cfg: Option<&AppConfig>,
    ) -> Result<Vec<Version<'v, 'a>>, ImportError> {
        let src = self.src;
        let mut newest: Vec<&AppVersionEl> = Vec::new();
        let mut at: HashMap<&str, usize> = HashMap::new();
        for v in all {
            self.un.add_all(src, "app_version", &v.unread);
            if let Some(c) = &v.coproc {
                self.un.add_all(src, "app_version><coproc", &c.unread);
            }
            match at.get(&*v.plan_class) {
                Some(&i) => {
                    if v.version_num >= newest[i].version_num {
                        newest[i] = v;
                    }
                }
                None => {
                    at.insert(&v.plan_class, newest.len());
                    newest.push(v);
                }
            }
        }
        let ncpus = self.ncpus;
        let state_at = |tag: &'static str, line: usize| Origin {
            path: src.path.to_path_buf(),
            file: src.name(),
            tag,
            line,
        };
        let cfg_at = |cfg: &AppConfig, tag: &'static str, line: usize| Origin {
            path: cfg.path.clone(),
            file: cfg.file.clone(),
            tag,
            line,
        };
        let mut out = Vec::with_capacity(newest.len());
        for el in newest {
            let (mut cpus, mut cpus_from, mut cpus_at) = match &el.avg_ncpus {
                Some(c) => (c.value, src.at_l(c), state_at(c.tag, c.line)),
                None => (
                    1.0,
                    "no <avg_ncpus>: BOINC's default".into(),
                    state_at("app_version", el.line),
                ),
            };
            let mut gpu = el.coproc.as_ref().map(|c| {
                (
                    c.kind.clone(),
                    c.count,
                    "<coproc> <type>, <count> of the app version".to_string(),
                )
            });
            let mut gpu_at = el
                .coproc
                .as_ref()
                .map(|c| state_at(c.count_at.0, c.count_at.1));
            if let Some(cfg) = cfg {
                // As BOINC applies app_config.xml: first each <app>'s
                // <gpu_versions> to its GPU versions (only with both
                // values, the CPU use positive), then each <app_version>
                // to the versions of its app and plan class.
                for ac in cfg.apps_named(an) {
                    if let (Some(g), Some(c), Some(gp)) = (ac.gpu_usage, ac.cpu_usage, &mut gpu) {
                        if c.value > 0.0 {
                            gp.1 = g.value;
                            gp.2 = format!(
                                "<coproc> <type> of the app version; count: {}",
                                cfg.at(&g)
                            );
                            gpu_at = Some(cfg_at(cfg, g.tag, g.line));
                            cpus = c.value;
                            cpus_from = cfg.at(&c);
                            cpus_at = cfg_at(cfg, c.tag, c.line);
                        }
                    }
                }
                for avc in cfg.versions_of(an, &el.plan_class) {
                    if let Some(c) = avc.avg_ncpus.filter(|c| c.value > 0.0) {
                        cpus = c.value;
                        cpus_from = cfg.at(&c);
                        cpus_at = cfg_at(cfg, c.tag, c.line);
                    }
                    if let (Some(n), Some(gp)) = (avc.ngpus.filter(|n| n.value > 0.0), &mut gpu) {
                        gp.1 = n.value;
                        gp.2 = format!("<coproc> <type> of the app version; count: {}", cfg.at(&n));
                        gpu_at = Some(cfg_at(cfg, n.tag, n.line));
                    }
                }
            }
            if gpu.is_none() && cpus <= 0.0 {
                self.warnings.push(format!(
                    "{}: app version at line {} uses no CPU and no GPU: taken as 1 CPU",
                    src.name(),
                    el.line
                ));
                cpus = 1.0;
                cpus_from = format!("<avg_ncpus> 0 at line {}: taken as 1", el.line);
            }
            if let (Some((kind, count, _)), Some(at)) = (&gpu, &gpu_at) {
                self.check_gpu_use(kind, *count, at)?;
            } else if cpus * self.cpu_flops < MIN_FLOPS_PER_SECOND {
                // Refused here, with its line, rather than by the scenario's
                // check, which could only name the key.
                return Err(cpus_at.err(format!(
                    "{} CPUs per job compute at {} FLOPS on this host ({} FLOPS per CPU), less than vcsim's slowest device, {} FLOPS: give at least {}",
                    show(cpus),
                    show(cpus * self.cpu_flops),
                    show(self.cpu_flops),
                    show(MIN_FLOPS_PER_SECOND),
                    show(MIN_FLOPS_PER_SECOND / self.cpu_flops)
                )));
            }
            if cpus > ncpus as f64 {
                self.warnings.push(format!(
                    "{}: <{}> at line {} gives app `{an}`{} {} CPUs per job, more than the host's {ncpus}: capped",
                    cpus_at.file,
                    cpus_at.tag,
                    cpus_at.line,
                    if el.plan_class.is_empty() {
                        String::new()
                    } else {
                        format!(" (plan class `{}`)", el.plan_class)
                    },
                    show(cpus)
                ));
                cpus_from = format!("{cpus_from}, capped at the host's {ncpus}");
                cpus = ncpus as f64;
            }
            out.push(Version {
                el,
                cpus,
                cpus_from,
                gpu,
            });
        }
        Ok(out)
    }

    /// A job's use of a GPU kind: at most the host's GPUs of the kind (a job
    /// needing more could never run; 64, vcsim's most, if the host has none),
    /// and enough of one to compute at vcsim's slowest device's speed.
    fn check_gpu_use(&self, kind: &str, count: f64, at: &Origin) -> Result<(), ImportError> {
        let host = self.gpus.iter().find(|g| g.kind == kind);
        let most = host.map_or(MAX_GPUS, |g| g.count) as f64;
        if count > most {
            return Err(at.err(match host {
                Some(_) => format!(
                    "{} `{kind}` GPUs per job, more than the host's {}: its jobs could never run",
                    show(count),
                    show(most)
                ),
                None => format!(
                    "{} `{kind}` GPUs per job, more than {}, the most GPUs of a kind vcsim simulates",
                    show(count),
                    show(most)
                ),
            }));
        }
        if let Some(f) = host.and_then(|g| g.peak_flops) {
            if count * f < MIN_FLOPS_PER_SECOND {
                return Err(at.err(format!(
                    "{} of one `{kind}` GPU ({} FLOPS) computes at {} FLOPS, less than vcsim's slowest device, {} FLOPS: give at least {}",
                    show(count),
                    show(f),
                    show(count * f),
                    show(MIN_FLOPS_PER_SECOND),
                    show(MIN_FLOPS_PER_SECOND / f)
                )));
            }
        }
        Ok(())
    }

    /// Job sizes: the emulator's tags, else the app's workunits.
    fn sizes(&mut self, a: &AppEl, app_wus: &[&WorkunitEl]) -> Sizes {
        let src = self.src;
        let an = &a.name;
        let (est, est_from) = match &a.fpops_est {
            Some(c) => (c.value, src.at_l(c)),
            None => {
                let ests: Vec<f64> = app_wus.iter().filter_map(|w| w.rsc_fpops_est).collect();
                if !ests.is_empty() {
                    (
                        ests.iter().sum::<f64>() / ests.len() as f64,
                        format!(
                            "mean <rsc_fpops_est> of {} workunit(s) of app `{an}`",
                            ests.len()
                        ),
                    )
                } else {
                    (
                        DEFAULT_FPOPS_EST,
                        "no <fpops_est> or workunit: the BOINC emulator's default 3600e9".into(),
                    )
                }
            }
        };
        match &a.fpops {
            Some(f) => {
                self.un.add_all(src, "app><fpops", &f.unread);
                let (mean, mean_from) = match &f.mean {
                    Some(c) => (c.value, src.at_l(c)),
                    None => (est, "no <mean>: the estimate".into()),
                };
                let (sd, sd_from) = match &f.std_dev {
                    Some(c) => (c.value, src.at_l(c)),
                    None => (0.0, "no <std_dev>: 0".into()),
                };
                Sizes {
                    est,
                    mean,
                    sd,
                    est_from,
                    mean_from,
                    sd_from,
                }
            }
            None => Sizes {
                est,
                mean: est,
                sd: 0.0,
                est_from,
                mean_from: "no <fpops> mean: the estimate is taken as right".into(),
                sd_from: "no <fpops> std_dev: 0".into(),
            },
        }
    }

    /// An app's latency bound: the emulator's tag, else the largest
    /// `<report_deadline>` - `<received_time>` of its results.
    fn latency(&self, a: &AppEl, app_results: &[&ResultEl]) -> Option<Latency> {
        let src = self.src;
        if let Some(c) = &a.latency_bound {
            return Some(Latency {
                seconds: c.value,
                app: a.name.to_string(),
                from: src.at_l(c),
            });
        }
        let mut best: Option<(f64, &ResultEl)> = None;
        for r in app_results {
            if let (Some(d), Some(rt)) = (r.report_deadline, r.received_time) {
                let l = d.value - rt.value;
                if l > 0.0 && !matches!(best, Some((b, _)) if l <= b) {
                    best = Some((l, r));
                }
            }
        }
        best.map(|(l, r)| Latency {
            seconds: l,
            app: a.name.to_string(),
            from: format!(
                "<report_deadline> - <received_time> of the <result> at {} line {}",
                src.name(),
                r.line
            ),
        })
    }

    /// Warnings on the entries of a project's app_config.xml that match
    /// nothing, or that BOINC would not apply.
    fn app_config_warnings(
        &mut self,
        name: &str,
        c: &AppConfig,
        apps: &[AppEl],
        versions: &[AppVersionEl],
    ) {
        let app_names: HashSet<&str> = apps.iter().map(|a| &*a.name).collect();
        let version_names: HashSet<(&str, &str)> = versions
            .iter()
            .filter_map(|v| Some((v.app_name.as_deref()?, &*v.plan_class)))
            .collect();
        for ac in &c.apps {
            for r in &ac.refused {
                let must = if r.tag == "gpu_usage" {
                    "must be positive"
                } else {
                    "must be zero or more"
                };
                self.warnings.push(format!(
                    "{} line {}: <{}> {} of app `{}` {must}: BOINC reports it and does not apply it, and neither does vcsim",
                    c.file, r.line, r.tag, r.value, ac.name
                ));
            }
            if !app_names.contains(&*ac.name) {
                self.warnings.push(format!(
                    "{} line {}: project `{name}` has no app `{}`: ignored",
                    c.file, ac.line, ac.name
                ));
            } else if (ac.gpu_usage.is_some() || ac.cpu_usage.is_some())
                && !(ac.gpu_usage.is_some() && ac.cpu_usage.is_some_and(|u| u.value > 0.0))
            {
                self.warnings.push(format!(
                    "{} line {}: <gpu_versions> of app `{}` needs both <gpu_usage> and a positive <cpu_usage>; BOINC ignores it, and so does vcsim",
                    c.file, ac.line, ac.name
                ));
            }
        }
        for avc in &c.versions {
            if !version_names.contains(&(&*avc.app_name, &*avc.plan_class)) {
                self.warnings.push(format!(
                    "{} line {}: project `{name}` has no version of app `{}` with plan class `{}`: ignored",
                    c.file, avc.line, avc.app_name, avc.plan_class
                ));
            }
        }
    }

    /// A `[[project.job]]` for a result not yet computed; None if it is
    /// left out.
    fn job(
        &mut self,
        r: &ResultEl<'a>,
        wus: &HashMap<&str, &WorkunitEl<'a>>,
        by_app: &HashMap<&str, Vec<&VApp>>,
        sizes: &HashMap<String, Sizes>,
        url: &str,
        latency_s: f64,
    ) -> Result<Option<Section>, ImportError> {
        let src = self.src;
        let rname: &str = &r.name;
        if r.done {
            self.finished += 1;
            return Ok(None);
        }
        let wn = r.wu_name.as_deref().ok_or_else(|| {
            src.err_at(
                r.line,
                "result",
                format!("<result> `{rname}` has no <wu_name>"),
            )
        })?;
        let w = *wus.get(wn).ok_or_else(|| {
            src.err_at(
                r.line,
                "result",
                format!("<result> `{rname}` names workunit `{wn}`, which is not in its project"),
            )
        })?;
        let an = w.app_name.as_deref().ok_or_else(|| {
            src.err_at(
                w.line,
                "workunit",
                format!("<workunit> `{wn}` has no <app_name>"),
            )
        })?;
        let Some(mine) = by_app.get(an) else {
            self.orphans
                .entry(an.to_string())
                .or_insert_with(|| (0, rname.to_string(), r.line as u32))
                .0 += 1;
            return Ok(None);
        };
        let by_class = r
            .plan_class
            .as_ref()
            .and_then(|pc| mine.iter().find(|v| v.plan_class == **pc));
        let va = by_class
            .or_else(|| {
                r.version_num
                    .and_then(|n| mine.iter().find(|v| v.version_num == n as i64))
            })
            .or_else(|| mine.iter().find(|v| v.plan_class.is_empty()))
            .copied()
            .unwrap_or(mine[0]);
        if let (Some(pc), None) = (&r.plan_class, by_class) {
            // BOINC would find no app version for it; said, not hidden.
            self.warnings.push(format!(
                "{}: job `{rname}` (line {}) has <plan_class> `{pc}`, which no app version of `{an}` has: imported with the version {}",
                src.name(),
                r.line,
                if va.plan_class.is_empty() {
                    format!("{} (no plan class)", va.version_num)
                } else {
                    format!("{} (plan class `{}`)", va.version_num, va.plan_class)
                }
            ));
        }
        let app = &sizes[an];
        let (est, est_from) = match w.rsc_fpops_est {
            Some(e) => (e, "<rsc_fpops_est>"),
            None => (app.est, "no <rsc_fpops_est>: the app's estimate"),
        };
        let est_v = est * va.scale;
        let real_v = est_v * app.mean / app.est;
        let (deadline, dl_from) = match r.report_deadline {
            Some(d) => {
                let days = (d.value - self.t0) / 86400.0;
                // Refused here, with its line: the scenario's check could
                // only name the key.
                if days.abs() > MAX_SPAN_DAYS {
                    return Err(src.err_at(
                        d.line,
                        d.tag,
                        format!(
                            "{} s is {} days from the start ({} s), more than vcsim's {} days either way",
                            show(d.value),
                            show(days),
                            show(self.t0),
                            show(MAX_SPAN_DAYS)
                        ),
                    ));
                }
                (days, "(<report_deadline> - start) / 86400")
            }
            None => (
                latency_s / 86400.0,
                "no <report_deadline>: the latency bound",
            ),
        };
        if deadline < 0.0 {
            self.overdue += 1;
        }
        // BOINC's `lookup_project` ignores trailing slashes of the URLs.
        let key = (Text::Borrowed(url.trim_end_matches('/')), r.name.clone());
        if self.active.contains_key(&key) {
            self.active_used.insert(key.1.to_string());
        }
        let fd = match self.active.get(&key) {
            Some(f) if *f >= 1.0 => 0.999999,
            Some(f) => *f,
            None => 0.0,
        };
        let mut s = Section::new("[[project.job]]");
        s.note(format!(
            "<result> `{rname}`, {} line {}; <workunit> `{wn}`",
            src.name(),
            r.line
        ));
        s.put("app", Val::S(va.name.clone()), "");
        s.put(
            "flops_estimate",
            Val::F(est_v),
            format!(
                "{est_from}{}",
                if va.scale != 1.0 {
                    ", x the app's factor"
                } else {
                    ""
                }
            ),
        );
        s.put(
            "flops",
            Val::F(real_v),
            if (app.mean / app.est - 1.0).abs() > 1e-12 {
                "the estimate x the app's flops_mean / flops_estimate"
            } else {
                "the estimate: BOINC does not know a job's true size"
            },
        );
        s.put("deadline_days", Val::F(deadline), dl_from);
        if fd > 0.0 {
            s.put(
                "fraction_done",
                Val::F(fd),
                if fd == 0.999999 && self.active.get(&key).is_some_and(|f| *f >= 1.0) {
                    "<fraction_done> of its <active_task> is 1: a task not yet exited, kept runnable just below it"
                } else {
                    "<fraction_done> of its <active_task>"
                },
            );
        }
        Ok(Some(s))
    }
}

/// The `[[project.app]]` table of a vcsim app.
fn app_section(va: &VApp, sz: &Sizes) -> Section {
    let mut s = Section::new("[[project.app]]");
    s.put(
        "name",
        Val::S(va.name.clone()),
        format!(
            "<app> `{}`{}{}",
            va.boinc_app,
            if va.version_num > 0 {
                format!(", version {}", va.version_num)
            } else {
                String::new()
            },
            if va.plan_class.is_empty() {
                String::new()
            } else {
                format!(" of plan class `{}`", va.plan_class)
            }
        ),
    );
    s.put("cpus", Val::F(va.cpus), va.cpus_from.clone());
    if let Some((k, c, from)) = &va.gpu {
        s.put(
            "gpu",
            Val::Inline(vec![("kind", Val::S(k.clone())), ("count", Val::F(*c))]),
            from.clone(),
        );
    }
    let factor = if va.scale != 1.0 {
        ", x the same factor"
    } else {
        ""
    };
    s.put(
        "flops_estimate",
        Val::F(sz.est * va.scale),
        format!("{}{}", sz.est_from, va.scale_note),
    );
    s.put(
        "flops_mean",
        Val::F(sz.mean * va.scale),
        format!("{}{factor}", sz.mean_from),
    );
    s.put(
        "flops_stddev",
        Val::F(sz.sd * va.scale),
        format!("{}{factor}", sz.sd_from),
    );
    match va.input_mb {
        Some(m) => s.put(
            "input_mb",
            Val::F(m),
            "mean <nbytes> of the workunits' input files",
        ),
        None => s.put(
            "input_mb",
            Val::F(0.0),
            "no input file sizes in the file: 0",
        ),
    };
    match va.output_mb {
        Some(m) => s.put(
            "output_mb",
            Val::F(m),
            "mean <nbytes> of the results' output files",
        ),
        None => s.put(
            "output_mb",
            Val::F(0.0),
            "no output file sizes in the file: 0",
        ),
    };
    if !va.weight_from.is_empty() {
        s.put("weight", Val::F(va.weight), va.weight_from.clone());
    }
    if let Some((l, from)) = &va.latency {
        s.put(
            "latency_bound_days",
            Val::F(l / 86400.0),
            format!("{} s: {from}; differs from the project's", num(*l)),
        );
    }
    if let Some((m, from)) = &va.max_concurrent {
        s.put("max_concurrent", Val::I(*m as u64), from.clone());
    }
    s
}

/// The project's latency bound: the most common of its apps' bounds, the
/// longest of equally common ones; apps whose bound differs keep their own
/// (`latency_bound_days` on the app). Every app with a known bound is thus
/// simulated with it; the choice only decides which apps need their own key
/// (the fewest), and which bound new kinds of work would get (the most
/// generous of the usual ones).
fn project_latency(latencies: &[Latency]) -> Latency {
    let mut best: Option<(&Latency, usize)> = None;
    for l in latencies {
        let n = latencies
            .iter()
            .filter(|o| (o.seconds - l.seconds).abs() <= 1e-6)
            .count();
        let better = match best {
            None => true,
            Some((b, bn)) => n > bn || (n == bn && l.seconds > b.seconds + 1e-6),
        };
        if better {
            best = Some((l, n));
        }
    }
    match best {
        None => Latency {
            seconds: DEFAULT_LATENCY_S,
            app: String::new(),
            from: "no <latency_bound>, and no job whose <report_deadline> is after its <received_time>: the BOINC emulator's default 1 day".to_string(),
        },
        Some((l, n)) => Latency {
            seconds: l.seconds,
            app: l.app.clone(),
            from: if n == latencies.len() {
                format!("{} s of app `{}`: {}", num(l.seconds), l.app, l.from)
            } else if n == 1 {
                format!(
                    "{} s, the longest of the apps' bounds, which all differ; app `{}`: {}",
                    num(l.seconds),
                    l.app,
                    l.from
                )
            } else {
                format!(
                    "{} s, the most common of the apps' bounds ({n} of {}); app `{}`: {}",
                    num(l.seconds),
                    latencies.len(),
                    l.app,
                    l.from
                )
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lat(days: &[f64]) -> Vec<Latency> {
        days.iter()
            .enumerate()
            .map(|(i, d)| Latency {
                seconds: d * 86400.0,
                app: format!("a{i}"),
                from: "f".into(),
            })
            .collect()
    }

    #[test]
    fn project_latency_is_the_most_common_then_the_longest() {
        let l = project_latency(&lat(&[2.0, 7.0, 2.0]));
        assert_eq!(l.seconds, 2.0 * 86400.0);
        assert!(
            l.from
                .contains("the most common of the apps' bounds (2 of 3)"),
            "{}",
            l.from
        );
        let l = project_latency(&lat(&[2.0, 7.0]));
        assert_eq!(l.seconds, 7.0 * 86400.0);
        assert!(
            l.from.contains("the longest of the apps' bounds"),
            "{}",
            l.from
        );
        let l = project_latency(&lat(&[3.0, 3.0]));
        assert_eq!(l.from, "259200.0 s of app `a0`: f");
        assert_eq!(project_latency(&[]).seconds, DEFAULT_LATENCY_S);
    }
}
