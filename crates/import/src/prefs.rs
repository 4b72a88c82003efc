//! `global_prefs.xml`, `global_prefs_override.xml` and the 2007 simulator's
//! `sim_prefs.xml`: the work buffer, scheduling period, CPU and disk limits.

use crate::emit::{show, Section, Val};
use crate::error::ImportError;
use crate::xml::{elems, tag, Src, Unmodelled};

/// A value read from a preferences file, with where it came from.
#[derive(Clone)]
pub struct Pref {
    pub value: f64,
    pub from: String,
}

#[derive(Default, Clone)]
pub struct Prefs {
    pub sched_period_minutes: Option<Pref>,
    pub work_buf_min_days: Option<Pref>,
    pub work_buf_additional_days: Option<Pref>,
    pub max_ncpus_pct: Option<Pref>,
    /// The older `<max_cpus>`: a number of CPUs.
    pub max_cpus: Option<Pref>,
    pub disk_max_used_gb: Option<Pref>,
    pub disk_max_used_pct: Option<Pref>,
    pub disk_min_free_gb: Option<Pref>,
}

const USED: &[&str] = &[
    "cpu_scheduling_period_minutes",
    "work_buf_min_days",
    "work_buf_additional_days",
    "max_ncpus_pct",
    "max_cpus",
    "disk_max_used_gb",
    "disk_max_used_pct",
    "disk_min_free_gb",
    "cpu_usage_limit",
];

/// Reads one preferences file over `base` (the override file goes over the
/// main one).
pub fn read(
    src: &Src,
    base: &mut Prefs,
    un: &mut Unmodelled,
    warnings: &mut Vec<String>,
) -> Result<(), ImportError> {
    let doc = src.document()?;
    let root = doc.root_element();
    if tag(root) != "global_preferences" {
        return Err(src.err(
            root,
            format!(
                "expected <global_preferences> as the root element, found <{}>",
                tag(root)
            ),
        ));
    }
    // The loop below keeps the last of a repeated preference, as BOINC's
    // parser does; `last` warns of the repeats.
    for t in USED {
        src.last(root, t);
    }
    for n in elems(root) {
        let t = tag(n);
        let pref = |v: f64| {
            Some(Pref {
                value: v,
                from: src.at(n),
            })
        };
        match t {
            "cpu_scheduling_period_minutes" => base.sched_period_minutes = pref(src.positive(n)?),
            "work_buf_min_days" => base.work_buf_min_days = pref(src.non_negative(n)?),
            "work_buf_additional_days" => {
                base.work_buf_additional_days = pref(src.non_negative(n)?)
            }
            "max_ncpus_pct" => {
                let v = src.num(n)?;
                if !(0.0..=100.0).contains(&v) {
                    return Err(src.err(n, format!("must be in [0, 100], found {}", show(v))));
                }
                base.max_ncpus_pct = pref(v)
            }
            // A count of CPUs: BOINC reads it as an integer.
            "max_cpus" => base.max_cpus = pref(src.whole(n, 0)? as f64),
            "disk_max_used_gb" => base.disk_max_used_gb = pref(src.non_negative(n)?),
            "disk_max_used_pct" => {
                let v = src.num(n)?;
                if !(0.0..=100.0).contains(&v) {
                    return Err(src.err(n, format!("must be in [0, 100], found {}", show(v))));
                }
                base.disk_max_used_pct = pref(v)
            }
            "disk_min_free_gb" => base.disk_min_free_gb = pref(src.non_negative(n)?),
            "cpu_usage_limit" => {
                let v = src.num(n)?;
                if v > 0.0 && v < 100.0 {
                    warnings.push(format!(
                        "{}: <cpu_usage_limit> {}% (CPU throttling) is not modelled: vcsim runs at 100%",
                        src.name(),
                        show(v)
                    ));
                }
            }
            "venue" => warnings.push(format!(
                "{}: <venue> at line {}: venue-specific preferences are not modelled; the general ones are used",
                src.name(),
                src.line(n)
            )),
            _ => {}
        }
    }
    un.rest(
        src,
        "global_preferences",
        root,
        &[USED, &["venue"]].concat(),
    );
    Ok(())
}

fn put(sec: &mut Section, key: &'static str, p: &Option<Pref>, default: f64, silent: &str) {
    match p {
        Some(p) => sec.put(key, Val::F(p.value), p.from.clone()),
        None => sec.put(key, Val::F(default), format!("{silent}: vcsim's default")),
    };
}

/// The `[client]` table. `learn` is vcsim's `learn_availability`, with why.
pub fn section(p: &Prefs, ncpus: u32, learn: (bool, &str), silent: &str) -> Section {
    let mut s = Section::new("[client]");
    put(
        &mut s,
        "sched_period_minutes",
        &p.sched_period_minutes,
        60.0,
        silent,
    );
    put(
        &mut s,
        "work_buf_min_days",
        &p.work_buf_min_days,
        0.1,
        silent,
    );
    put(
        &mut s,
        "work_buf_additional_days",
        &p.work_buf_additional_days,
        0.25,
        silent,
    );
    s.put("learn_availability", Val::B(learn.0), learn.1);
    // max_ncpus_pct wins over the older max_cpus, as in BOINC; 0 means no limit.
    match (&p.max_ncpus_pct, &p.max_cpus) {
        (Some(m), _) if m.value > 0.0 => {
            s.put("max_ncpus_pct", Val::F(m.value), m.from.clone());
        }
        (_, Some(c)) if c.value > 0.0 => {
            let pct = (c.value / ncpus as f64 * 100.0).min(100.0);
            s.put(
                "max_ncpus_pct",
                Val::F(pct),
                format!("{} CPUs of the host's {ncpus}: {}", c.value, c.from),
            );
        }
        (Some(m), _) => {
            s.put(
                "max_ncpus_pct",
                Val::F(100.0),
                format!("0 means no limit: {}", m.from),
            );
        }
        (_, Some(c)) => {
            s.put(
                "max_ncpus_pct",
                Val::F(100.0),
                format!("0 means no limit: {}", c.from),
            );
        }
        (None, None) => {
            s.put(
                "max_ncpus_pct",
                Val::F(100.0),
                format!("{silent}: vcsim's default"),
            );
        }
    }
    // BOINC's `allowed_disk_usage` applies each of these only when it is
    // not 0; in a scenario 0 is a limit of 0. No limit is the largest disk
    // an import reads (1e21 bytes), and 100%.
    for (key, pref, default, no_limit) in [
        ("disk_max_used_gb", &p.disk_max_used_gb, 50.0, 1e12),
        ("disk_max_used_pct", &p.disk_max_used_pct, 90.0, 100.0),
    ] {
        match pref {
            Some(m) if m.value == 0.0 => {
                s.put(
                    key,
                    Val::F(no_limit),
                    format!("0 means no limit in BOINC: {}", m.from),
                );
            }
            _ => put(&mut s, key, pref, default, silent),
        }
    }
    put(&mut s, "disk_min_free_gb", &p.disk_min_free_gb, 1.0, silent);
    s
}
