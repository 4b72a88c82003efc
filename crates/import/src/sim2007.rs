//! The three inputs of BOINC's 2007 client simulator (the one behind Kondo,
//! Anderson and McLeod 2007): `sim_projects.xml`, `sim_host.xml`,
//! `sim_prefs.xml`.

use crate::emit::{num, show, Section, Val};
use crate::error::ImportError;
use crate::input::Input;
use crate::output::scenario_head;
use crate::prefs;
use crate::xml::{elems, tag, Src, Unmodelled};
use roxmltree::Node;

const DEFAULT_LAMBDA_S: f64 = 1000.0;

/// `<available><frac/><lambda/></available>`: fraction and mean on period.
fn available(
    src: &Src,
    n: Node,
    un: &mut Unmodelled,
    place: &str,
) -> Result<(f64, Option<f64>), ImportError> {
    let f = match src.last(n, "frac") {
        Some(c) => {
            let v = src.num(c)?;
            if !(0.0..=1.0).contains(&v) {
                return Err(src.err(c, format!("must be in (0, 1], found {}", show(v))));
            }
            v
        }
        None => 1.0,
    };
    let l = src.last(n, "lambda").map(|c| src.positive(c)).transpose()?;
    un.rest(src, place, n, &["frac", "lambda"]);
    Ok((f, l))
}

pub fn import(inp: &Input) -> Result<crate::output::Imported, ImportError> {
    let (ppath, ptext) = &inp.main;
    let src = Src::parse(ppath, ptext)?;
    let mut un = Unmodelled::default();
    let mut warnings = Vec::new();
    let pdoc = src.document()?;
    let root = pdoc.root_element();
    if tag(root) != "projects" {
        return Err(src.err(
            root,
            format!(
                "expected <projects> as the root element, found <{}>",
                tag(root)
            ),
        ));
    }

    // ---- host ----
    let (hpath, htext) = inp.host.as_ref().ok_or_else(|| ImportError {
        file: ppath.clone(),
        line: None,
        element: None,
        message: "no sim_host.xml beside it: the host is unknown".into(),
    })?;
    let hsrc = Src::parse(hpath, htext)?;
    let hdoc = hsrc.document()?;
    let h = hdoc.root_element();
    if tag(h) != "host" {
        return Err(hsrc.err(
            h,
            format!("expected <host> as the root element, found <{}>", tag(h)),
        ));
    }
    let ncpus_n = hsrc
        .last(h, "p_ncpus")
        .ok_or_else(|| hsrc.err(h, "no <p_ncpus>"))?;
    let ncpus = hsrc.whole(ncpus_n, 1)?;
    let fpops_n = hsrc
        .last(h, "p_fpops")
        .ok_or_else(|| hsrc.err(h, "no <p_fpops>"))?;
    let cpu_flops = hsrc.device_flops(fpops_n)?;
    if let Some(m) = hsrc.last(h, "m_nbytes") {
        let v = hsrc.bytes(m)?;
        warnings.push(format!(
            "{}: <m_nbytes> {:.1} GB of memory: vcsim does not model memory",
            hsrc.name(),
            v / 1e9
        ));
    }
    let mut host = Section::new("[host]");
    host.put("ncpus", Val::I(ncpus as u64), hsrc.at(ncpus_n));
    host.put("cpu_flops", Val::F(cpu_flops), hsrc.at(fpops_n));
    match hsrc.last(h, "d_total") {
        Some(c) => host.put(
            "disk_gb",
            Val::F(hsrc.disk_total(c)? / 1e9),
            format!("{} / 1e9", hsrc.at(c)),
        ),
        None => host.put("disk_gb", Val::F(100.0), "no <d_total>: vcsim's default"),
    };
    match hsrc.last(h, "connection_interval") {
        Some(c) => host.put(
            "connection_interval_days",
            Val::F(hsrc.non_negative(c)? / 86400.0),
            format!("{} / 86400", hsrc.at(c)),
        ),
        None => host.put(
            "connection_interval_days",
            Val::F(0.0),
            "always connected: vcsim's default",
        ),
    };
    let mut av = Section::new("[host.availability]");
    match hsrc.last(h, "available") {
        Some(a) => {
            let (f, l) = available(&hsrc, a, &mut un, "host><available")?;
            if f <= 0.0 {
                return Err(hsrc.err(a, "the host is never available (<frac> 0)"));
            }
            av.put("fraction", Val::F(f), format!("<frac> of {}", hsrc.at(a)));
            match l {
                Some(l) => av.put(
                    "mean_on_seconds",
                    Val::F(l),
                    format!("<lambda> of {}", hsrc.at(a)),
                ),
                None => av.put(
                    "mean_on_seconds",
                    Val::F(DEFAULT_LAMBDA_S),
                    "no <lambda>: vcsim's default",
                ),
            };
        }
        None => {
            av.put("fraction", Val::F(1.0), "no <available>: always available");
            av.put(
                "mean_on_seconds",
                Val::F(DEFAULT_LAMBDA_S),
                "vcsim's default (unused)",
            );
        }
    }
    un.rest(
        &hsrc,
        "host",
        h,
        &[
            "p_ncpus",
            "p_fpops",
            "m_nbytes",
            "d_total",
            "connection_interval",
            "available",
        ],
    );

    // ---- projects ----
    let mut sections = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (pi, p) in elems(root).enumerate() {
        if tag(p) != "project" {
            un.add(&src, "projects", tag(p));
            continue;
        }
        if names.len() >= crate::input::MAX_PROJECTS {
            return Err(src.err(
                p,
                format!(
                    "more than {} projects: vcsim's limit for one host",
                    crate::input::MAX_PROJECTS
                ),
            ));
        }
        let (mut name, name_from) = match src.last(p, "project_name") {
            Some(c) if !src.text(c).is_empty() => (src.text(c).into_owned(), src.at(c)),
            _ => (
                format!("P{}", pi + 1),
                format!("no <project_name> at line {}", src.line(p)),
            ),
        };
        if names.contains(&name) {
            let new = format!("{name} ({})", pi + 1);
            warnings.push(format!(
                "{}: a second project `{name}`: renamed `{new}`",
                src.name()
            ));
            name = new;
        }
        let (share, share_from) = match src.last(p, "resource_share") {
            Some(c) => (src.positive(c)?, src.at(c)),
            None => (100.0, "no <resource_share>: BOINC's default".into()),
        };
        let apps: Vec<Node> = elems(p).filter(|c| tag(*c) == "app").collect();
        if apps.is_empty() {
            return Err(src.err(p, format!("project `{name}` has no <app>")));
        }
        if apps.len() > crate::input::MAX_APPS_PER_PROJECT {
            return Err(src.err(
                p,
                format!(
                    "project `{name}` has {} apps: vcsim's limit is {}",
                    apps.len(),
                    crate::input::MAX_APPS_PER_PROJECT
                ),
            ));
        }
        let mut app_secs = Vec::new();
        let mut lats: Vec<(f64, String)> = Vec::new();
        for (ai, a) in apps.iter().enumerate() {
            let aname = match src.last(*a, "name") {
                Some(c) if !src.text(c).is_empty() => src.text(c).into_owned(),
                _ if apps.len() == 1 => "main".to_string(),
                _ => format!("app{}", ai + 1),
            };
            let lat = match src.last(*a, "latency_bound") {
                Some(c) => (src.positive(c)?, src.at(c)),
                None => (
                    86400.0,
                    "no <latency_bound>: the simulator's default 1 day".into(),
                ),
            };
            lats.push((lat.0, format!("{} s: {}", num(lat.0), lat.1)));
            let est = match src.last(*a, "fpops_est") {
                Some(c) => (src.job_flops(c, false)?, src.at(c)),
                None => (
                    3600e9,
                    "no <fpops_est>: the simulator's default 3600e9".into(),
                ),
            };
            let (mean, sd) = match src.last(*a, "fpops") {
                Some(f) => {
                    let m = match src.last(f, "mean") {
                        Some(c) => (src.job_flops(c, false)?, src.at(c)),
                        None => (est.0, "no <mean>: the estimate".into()),
                    };
                    let s = match src.last(f, "std_dev").or_else(|| src.last(f, "stdev")) {
                        Some(c) => (src.job_flops(c, true)?, src.at(c)),
                        None => (0.0, "no <std_dev>: 0".into()),
                    };
                    un.rest(&src, "app><fpops", f, &["mean", "std_dev", "stdev"]);
                    (m, s)
                }
                None => (
                    (est.0, "no <fpops>: the estimate".into()),
                    (0.0, "no <fpops>: 0".into()),
                ),
            };
            if let Some(c) = src.last(*a, "working_set") {
                let v = src.bytes(c)?;
                warnings.push(format!(
                    "{}: project `{name}` app `{aname}`: <working_set> {:.0} MB of memory is not modelled",
                    src.name(),
                    v / 1e6
                ));
            }
            let mut s = Section::new("[[project.app]]");
            s.put(
                "name",
                Val::S(aname),
                format!("<app> at {} line {}", src.name(), src.line(*a)),
            );
            s.put("cpus", Val::F(1.0), "the 2007 simulator's jobs use one CPU");
            s.put("flops_estimate", Val::F(est.0), est.1);
            s.put("flops_mean", Val::F(mean.0), mean.1);
            s.put("flops_stddev", Val::F(sd.0), sd.1);
            if let Some(c) = src.last(*a, "weight") {
                s.put("weight", Val::F(src.non_negative(c)?), src.at(c));
            }
            un.rest(
                &src,
                "app",
                *a,
                &[
                    "name",
                    "latency_bound",
                    "fpops_est",
                    "fpops",
                    "working_set",
                    "weight",
                ],
            );
            app_secs.push(s);
        }
        let mut ps = Section::new("[[project]]");
        ps.put("name", Val::S(name.clone()), name_from);
        ps.put("resource_share", Val::F(share), share_from);
        // As from a client_state.xml: the most common of the apps' bounds
        // (the longest of equally common ones); the others on their apps.
        let count = |l: f64| lats.iter().filter(|o| (o.0 - l).abs() <= 1e-6).count();
        let (lat, lat_from) = lats
            .iter()
            .max_by(|x, y| count(x.0).cmp(&count(y.0)).then(x.0.total_cmp(&y.0)))
            .cloned()
            .unwrap_or((86400.0, String::new()));
        for (i, (l, from)) in lats.iter().enumerate() {
            if (l - lat).abs() > 1e-6 {
                app_secs[i].put(
                    "latency_bound_days",
                    Val::F(l / 86400.0),
                    format!("<latency_bound> / 86400 = {from}; differs from the project's"),
                );
            }
        }
        ps.put(
            "latency_bound_days",
            Val::F(lat / 86400.0),
            format!("<latency_bound> / 86400 = {lat_from}"),
        );
        if let Some(a) = src.last(p, "available") {
            let (f, l) = available(&src, a, &mut un, "project><available")?;
            ps.put(
                "availability",
                Val::Inline(vec![
                    ("fraction", Val::F(f)),
                    ("mean_up_hours", Val::F(l.unwrap_or(86400.0) / 3600.0)),
                ]),
                if l.is_some() {
                    format!("<frac>, <lambda> / 3600 of {}", src.at(a))
                } else {
                    format!("<frac> of {}; no <lambda>: vcsim's default 24 h", src.at(a))
                },
            );
        }
        un.rest(
            &src,
            "project",
            p,
            &["project_name", "resource_share", "app", "available"],
        );
        sections.push(ps);
        sections.extend(app_secs);
        names.push(name);
    }
    if names.is_empty() {
        return Err(src.err(root, "no <project>: nothing to simulate"));
    }

    let mut pr = prefs::Prefs::default();
    let mut inputs = vec![src.name(), hsrc.name()];
    for (path, text) in inp.prefs.iter() {
        let ps = Src::parse(path, text)?;
        prefs::read(&ps, &mut pr, &mut un, &mut warnings)?;
        warnings.extend(ps.repeat_warnings());
        inputs.push(ps.name());
    }
    let silent = match inp.prefs.as_ref() {
        Some(_) => format!("not in {}", inputs.last().cloned().unwrap_or_default()),
        None => "no sim_prefs.xml".to_string(),
    };
    let client = prefs::section(
        &pr,
        ncpus,
        (
            true,
            "the 2007 simulator's CPU-efficiency factor absorbs the host's off time",
        ),
        &silent,
    );
    let stem = ppath
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sim_projects".into());
    let top = scenario_head(
        &stem,
        &format!("Imported by vcsim from {}", inputs.join(", ")),
        "the 2007 simulator starts with no jobs on the host",
    );
    let mut out = crate::output::Out::default();
    for s in &sections {
        out.push(s).map_err(|m| ImportError {
            file: ppath.clone(),
            line: None,
            element: None,
            message: format!("the imported values do not make a valid scenario: {m}"),
        })?;
    }
    warnings.extend(src.repeat_warnings());
    warnings.extend(hsrc.repeat_warnings());
    warnings.extend(un.warnings());
    crate::output::finish(
        ppath,
        &inputs,
        vec![top, host, av, client],
        out,
        warnings,
        &inp.options,
    )
}
