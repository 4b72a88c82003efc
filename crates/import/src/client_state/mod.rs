//! A client's `client_state.xml` (a real client's, or the BOINC client
//! emulator's input with its extra tags) with its preferences and its
//! `cc_config.xml`.
//!
//! One module per job: `host`, `time_stats`, `project`, `app` and `work` read
//! one kind of element each into a plain struct; `state` sorts the top level
//! into projects; `build` turns a project into vcsim's apps and jobs; this
//! module puts the scenario together.

mod app;
mod app_config;
mod build;
mod host;
mod project;
mod state;
mod time_stats;
mod work;

use crate::cc_config;
use crate::emit::num;
use crate::error::ImportError;
use crate::input::Input;
use crate::output::scenario_head;
use crate::prefs;
use crate::xml::{Src, Unmodelled};
pub use app_config::project_dir;
use app_config::AppConfig;
use state::State;
use std::collections::HashMap;

pub fn import(inp: &Input) -> Result<crate::output::Imported, ImportError> {
    let (state_path, state_text) = &inp.main;
    let src = Src::parse(state_path, state_text)?;
    let mut un = Unmodelled::default();
    let mut warnings: Vec<String> = Vec::new();
    if src.root_tag() != "client_state" {
        return Err(src.root_err(format!(
            "expected <client_state> as the root element, found <{}>",
            src.root_tag()
        )));
    }
    // One top-level element at a time: memory follows the largest element,
    // not the file.
    let mut st = State::default();
    for doc in src.children() {
        st.add(&src, doc?.root_element(), &mut un)?;
    }
    st.warn_repeats(&src);

    // ---- host ----
    let Some(hi) = &st.host_info else {
        return Err(src.root_err("no <host_info>: the host's CPUs are unknown"));
    };
    if let Some(m) = hi.memory_bytes {
        warnings.push(format!(
            "{}: <m_nbytes> {:.1} GB of memory: vcsim does not model memory",
            src.name(),
            m / 1e9
        ));
    }
    let gpus = host::gpus(&src, hi, &mut un, &mut warnings);
    if let (None, Some(f)) = (&hi.d_total, &hi.d_free) {
        // Free space means nothing without the disk's size.
        warnings.push(format!(
            "{}: <d_free> at line {} without <d_total>: ignored (the disk is vcsim's default, 100 GB, all of it BOINC's to use)",
            src.name(),
            f.line
        ));
    }
    if let (Some(t), Some(f)) = (&hi.d_total, &hi.d_free) {
        if f.value > t.value {
            // A damaged or edited file: nothing is used but BOINC's files.
            warnings.push(format!(
                "{}: <d_free> {} GB at line {} is more than <d_total> {} GB at line {}: no space is taken as used by other programs",
                src.name(),
                crate::emit::num(f.value / 1e9),
                f.line,
                crate::emit::num(t.value / 1e9),
                t.line
            ));
        }
    }
    un.add_all(&src, "host_info", &hi.unread);

    // ---- time stats: availability and the reference time ----
    let ts = st.time_stats.as_ref();
    if let Some(t) = ts {
        t.warnings(&src, &mut warnings);
        un.add_all(&src, "time_stats", &t.unread);
    }
    let t0 = time_stats::start_time(&src, ts, st.newest_received);

    // ---- the projects' app_config.xml, by project directory ----
    let cfg_srcs: Vec<(&String, Src)> = inp
        .app_configs
        .iter()
        .map(|(d, p, t)| {
            let name = format!("projects/{d}/app_config.xml");
            Ok((d, Src::parse(p, t)?.with_name(name)))
        })
        .collect::<Result<_, ImportError>>()?;
    let mut cfgs: HashMap<&str, AppConfig> = HashMap::new();
    for (d, s) in &cfg_srcs {
        let c = AppConfig::read(s, s.name(), &mut un)?;
        cfgs.insert(d.as_str(), c);
    }

    // ---- projects ----
    let groups = std::mem::take(&mut st.groups);
    let mut b = build::Build {
        src: &src,
        ncpus: hi.ncpus.value,
        cpu_flops: hi.cpu_flops.value,
        gpus: &gpus,
        t0: t0.0,
        files: &st.files,
        active: &st.active,
        warnings: &mut warnings,
        un: &mut un,
        names: Default::default(),
        gpu_apps_missing: Vec::new(),
        finished: 0,
        overdue: 0,
        active_used: Default::default(),
        orphans: Default::default(),
    };
    // Each project's elements are dropped once it is written.
    let mut out = crate::output::Out::default();
    let mut used_cfgs = std::collections::HashSet::new();
    for (gi, g) in groups.into_iter().enumerate() {
        let dir = project_dir(g.project.url());
        let cfg = cfgs.get(dir.as_str());
        if cfg.is_some() {
            used_cfgs.insert(dir);
        }
        b.project(gi, &g, cfg, &mut out)?;
    }
    if b.names.is_empty() {
        return Err(src.root_err("no project with a usable app: nothing to simulate"));
    }
    let (finished, overdue, missing) = (b.finished, b.overdue, b.gpu_apps_missing);
    let mut unmatched: Vec<&str> = st
        .active
        .keys()
        .map(|(_, r)| r.as_ref())
        .filter(|r| !b.active_used.contains(*r))
        .collect();
    unmatched.sort();
    if let Some(first) = unmatched.first() {
        warnings.push(format!(
            "{}: {} <active_task>(s) match no result of a project kept (by <project_master_url> and <result_name>), the first `{first}`: their <fraction_done> is not imported",
            src.name(),
            unmatched.len()
        ));
    }
    for (d, _) in &cfg_srcs {
        if !used_cfgs.contains(d.as_str()) {
            warnings.push(format!(
                "projects/{d}/app_config.xml: no project in {} has this directory: ignored",
                src.name()
            ));
        }
    }
    if finished > 0 {
        warnings.push(format!(
            "{}: {finished} result(s) already computed (or aborted) and waiting to be reported: left out",
            src.name()
        ));
    }
    if overdue > 0 {
        warnings.push(format!(
            "{}: {overdue} job(s) are already past their deadline at the start",
            src.name()
        ));
    }
    for m in &missing {
        warnings.push(format!(
            "{}: app {m} needs a GPU the host lacks: kept, but never run",
            src.name()
        ));
    }

    let gpu_secs = host::gpu_sections(&src, &gpus)?;
    let host = host::host_section(&src, hi, st.boinc_bytes);
    let av = match ts {
        Some(t) => t.availability_section(&src),
        None => time_stats::TimeStats::default().availability_section(&src),
    };

    // ---- preferences ----
    let mut pr = prefs::Prefs::default();
    let mut pref_names = Vec::new();
    for (path, text) in inp.prefs.iter().chain(inp.override_prefs.iter()) {
        let ps = Src::parse(path, text)?;
        prefs::read(&ps, &mut pr, &mut un, &mut warnings)?;
        warnings.extend(ps.repeat_warnings());
        pref_names.push(ps.name());
    }
    let silent = if pref_names.is_empty() {
        "no global_prefs.xml".to_string()
    } else {
        format!("not in {}", pref_names.join(" or "))
    };
    let mut client = prefs::section(
        &pr,
        hi.ncpus.value,
        (
            true,
            "BOINC's client scales its estimates by <on_frac> x <active_frac>",
        ),
        &silent,
    );

    // ---- cc_config.xml ----
    let mut cc_name = None;
    if let Some((path, text)) = &inp.cc_config {
        let cs = Src::parse(path, text)?;
        let cfg = cc_config::read(&cs, &mut un)?;
        warnings.extend(cs.repeat_warnings());
        cc_config::put(&cfg, &mut client);
        cc_name = Some(cs.name());
    }

    let mut inputs = vec![src.name()];
    inputs.extend(pref_names);
    inputs.extend(cc_name);
    inputs.extend(
        cfg_srcs
            .iter()
            .filter(|(d, _)| used_cfgs.contains(d.as_str()))
            .map(|(_, s)| s.name()),
    );
    let stem = state_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "client_state".into());
    let top = scenario_head(
        &stem,
        &format!("Imported by vcsim from {}", inputs.join(", ")),
        &format!(
            "start (time 0) = {} ({}); deadlines are days from it",
            num(t0.0),
            t0.1
        ),
    );
    let mut head = vec![top, host, av];
    head.extend(gpu_secs);
    head.push(client);
    warnings.extend(src.repeat_warnings());
    for (_, s) in &cfg_srcs {
        warnings.extend(s.repeat_warnings());
    }
    warnings.extend(un.warnings());
    crate::output::finish(state_path, &inputs, head, out, warnings, &inp.options)
}
