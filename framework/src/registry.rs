//! One registry of policies by family and name. Built-ins submit a factory
//! through `inventory`; scripts and dylibs add theirs at run time. Listing
//! order is sorted by (family, name) and duplicate names are refused, so
//! tables and snapshots never depend on link order.

use crate::policy::{
    CompletionEstimator, CpuScheduler, DiskManager, PolicySet, WorkFetcher, WorkSender,
};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

pub use crate::family::Family;

/// A freshly made policy of some family.
pub enum AnyPolicy {
    Cpu(Box<dyn CpuScheduler>),
    Fetch(Box<dyn WorkFetcher>),
    Send(Box<dyn WorkSender>),
    Estimate(Box<dyn CompletionEstimator>),
    Disk(Box<dyn DiskManager>),
}

impl AnyPolicy {
    pub fn family(&self) -> Family {
        match self {
            AnyPolicy::Cpu(_) => Family::Cpu,
            AnyPolicy::Fetch(_) => Family::Fetch,
            AnyPolicy::Send(_) => Family::Send,
            AnyPolicy::Estimate(_) => Family::Estimate,
            AnyPolicy::Disk(_) => Family::Disk,
        }
    }
}

/// A built-in policy, submitted with `inventory::submit!` by the plugins crate.
pub struct BuiltinPolicy {
    pub family: Family,
    pub name: &'static str,
    pub summary: &'static str,
    pub make: fn() -> AnyPolicy,
}

inventory::collect!(BuiltinPolicy);

type Factory = Arc<dyn Fn() -> Result<AnyPolicy, String> + Send + Sync>;

#[derive(Clone)]
pub struct Entry {
    pub family: Family,
    pub name: String,
    pub summary: String,
    /// Where it comes from: `built-in`, a script path, a plugin path.
    pub origin: String,
    factory: Factory,
}

impl Entry {
    pub fn new(
        family: Family,
        name: impl Into<String>,
        summary: impl Into<String>,
        origin: impl Into<String>,
        factory: impl Fn() -> Result<AnyPolicy, String> + Send + Sync + 'static,
    ) -> Entry {
        Entry {
            family,
            name: name.into(),
            summary: summary.into(),
            origin: origin.into(),
            factory: Arc::new(factory),
        }
    }
    pub fn make(&self) -> Result<AnyPolicy, String> {
        let p =
            (self.factory)().map_err(|e| format!("{} policy `{}`: {e}", self.family, self.name))?;
        if p.family() != self.family {
            return Err(format!(
                "{} policy `{}` ({}) made a {} policy",
                self.family,
                self.name,
                self.origin,
                p.family()
            ));
        }
        Ok(p)
    }
}

#[derive(Clone, Default)]
pub struct Registry {
    entries: BTreeMap<(Family, String), Entry>,
}

impl Registry {
    /// The built-ins linked into this binary.
    pub fn builtins() -> Result<Registry, String> {
        let mut r = Registry::default();
        for b in inventory::iter::<BuiltinPolicy> {
            let make = b.make;
            r.add(Entry::new(
                b.family,
                b.name,
                b.summary,
                "built-in",
                move || Ok(make()),
            ))?;
        }
        Ok(r)
    }

    /// Adds a policy; a name already taken in the family is refused.
    pub fn add(&mut self, e: Entry) -> Result<(), String> {
        let key = (e.family, e.name.to_ascii_lowercase());
        if let Some(old) = self.entries.get(&key) {
            return Err(format!(
                "two {} policies are named `{}`: {} and {}",
                e.family, e.name, old.origin, e.origin
            ));
        }
        self.entries.insert(key, e);
        Ok(())
    }

    /// All entries, sorted by family then name.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    pub fn get(&self, family: Family, name: &str) -> Option<&Entry> {
        self.entries.get(&(family, name.to_ascii_lowercase()))
    }

    /// Resolves a policy spec to one entry per family.
    pub fn resolve(&self, spec: &PolicySpec) -> Result<[Entry; 5], String> {
        let mut out: Vec<Entry> = Vec::with_capacity(5);
        for f in Family::ALL {
            let name = &spec.names[f.index()];
            let e = self.get(f, name).ok_or_else(|| {
                let known: Vec<&str> = self
                    .entries()
                    .filter(|e| e.family == f)
                    .map(|e| e.name.as_str())
                    .collect();
                format!("no {f} policy named `{name}` (known: {})", known.join(", "))
            })?;
            out.push(e.clone());
        }
        Ok(out
            .try_into()
            .unwrap_or_else(|_| unreachable!("five families")))
    }

    /// Makes a fresh set of policies for one run.
    pub fn instantiate(&self, spec: &PolicySpec) -> Result<PolicySet, String> {
        let [cpu, fetch, send, estimate, disk] = self.resolve(spec)?;
        let wrong = |e: &Entry| format!("{} policy `{}` has the wrong family", e.family, e.name);
        Ok(PolicySet {
            cpu: match cpu.make()? {
                AnyPolicy::Cpu(p) => p,
                _ => return Err(wrong(&cpu)),
            },
            fetch: match fetch.make()? {
                AnyPolicy::Fetch(p) => p,
                _ => return Err(wrong(&fetch)),
            },
            send: match send.make()? {
                AnyPolicy::Send(p) => p,
                _ => return Err(wrong(&send)),
            },
            estimate: match estimate.make()? {
                AnyPolicy::Estimate(p) => p,
                _ => return Err(wrong(&estimate)),
            },
            disk: match disk.make()? {
                AnyPolicy::Disk(p) => p,
                _ => return Err(wrong(&disk)),
            },
            names: spec.names.clone(),
        })
    }
}

/// One policy name per family.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PolicySpec {
    pub names: [String; 5],
}

impl Default for PolicySpec {
    fn default() -> Self {
        PolicySpec {
            names: Family::ALL.map(|f| f.default_name().to_string()),
        }
    }
}

impl PolicySpec {
    /// Parses the paper's notation (`CS2_WF2_WS2_JC2`, families left out take
    /// the defaults) or the explicit one (`cpu=cs2,fetch=wf2,disk=share`).
    /// A script named without its family (`x.rhai`, or `cs1,x.rhai`) is
    /// refused here: [`PolicySpec::parse_with`] is given a way to read it.
    pub fn parse(s: &str) -> Result<PolicySpec, String> {
        PolicySpec::parse_with(s, &|p: &str| {
            Err(format!(
                "`{p}`: say which family the script serves, as in `cpu={p}`"
            ))
        })
    }

    /// [`PolicySpec::parse`], where a script path given without its family
    /// takes the family `family_of` finds in it (the hooks it implements).
    /// A script may be the whole spec (`policies/least_slack.rhai`) or a
    /// part of the explicit notation (`fetch=wf1,policies/least_slack.rhai`),
    /// which also takes the paper's names bare (`CS1,WF1,x.rhai`).
    pub fn parse_with(
        s: &str,
        family_of: &dyn Fn(&str) -> Result<Family, String>,
    ) -> Result<PolicySpec, String> {
        let s = s.trim();
        let mut spec = PolicySpec::default();
        let mut seen = [false; 5];
        let mut set = |f: Family, v: &str, spec: &mut PolicySpec| -> Result<(), String> {
            if v.is_empty() {
                return Err(format!("policy `{s}`: no name given for {f}"));
            }
            if std::mem::replace(&mut seen[f.index()], true) {
                return Err(format!("policy `{s}`: {f} is given twice"));
            }
            spec.names[f.index()] = if is_script(v) {
                v.to_string()
            } else {
                v.to_ascii_lowercase()
            };
            Ok(())
        };
        // A paper name (`CS1`): its family.
        let paper = |tok: &str| {
            let up = tok.to_ascii_uppercase();
            Family::ALL.into_iter().find(|f| {
                f.paper_prefix()
                    .is_some_and(|p| up.starts_with(p) && up.len() > 2)
            })
        };
        let script = |p: &str| family_of(p).map_err(|e| format!("policy `{s}`: {e}"));
        if s.is_empty() {
            return Err("empty policy spec".into());
        }
        if s.contains('=') || s.contains(',') {
            for part in s.split(',') {
                let part = part.trim();
                match part.split_once('=') {
                    Some((k, v)) => {
                        let f = Family::from_key(k.trim()).ok_or_else(|| {
                            format!(
                                "policy `{s}`: unknown family `{}` (cpu, fetch, send, estimate, disk)",
                                k.trim()
                            )
                        })?;
                        set(f, v.trim(), &mut spec)?;
                    }
                    None if part.ends_with(".rhai") => set(script(part)?, part, &mut spec)?,
                    None => {
                        let f = paper(part).filter(|_| !part.contains('/')).ok_or_else(|| {
                            format!(
                                "policy `{s}`: `{part}` is not FAMILY=NAME, a paper name (CSn, WFn, WSn, JCn) or a script (.rhai)"
                            )
                        })?;
                        set(f, part, &mut spec)?;
                    }
                }
            }
        } else if s.ends_with(".rhai") {
            // One script, whatever its name holds (`wf1_v4.rhai`).
            let f = script(s).map_err(|e| match s.split_once('_') {
                Some((first, rest)) if paper(first).is_some() => format!(
                    "{e}; to name a script with the paper's names, separate them with commas (`{first},{rest}`)"
                ),
                _ => e,
            })?;
            set(f, s, &mut spec)?;
        } else {
            for tok in s.split('_') {
                let f = paper(tok)
                    .ok_or_else(|| format!("policy `{s}`: `{tok}` is not CSn, WFn, WSn or JCn"))?;
                set(f, tok, &mut spec)?;
            }
        }
        Ok(spec)
    }

    pub fn name(&self, f: Family) -> &str {
        &self.names[f.index()]
    }

    /// The paper's notation when every name fits it and the disk manager is
    /// the default; the explicit notation otherwise.
    pub fn display(&self) -> String {
        let paper = Family::ALL[..4].iter().all(|f| {
            let n = self.name(*f).to_ascii_uppercase();
            f.paper_prefix().is_some_and(|p| n.starts_with(p))
                && !n.contains('.')
                && !n.contains('/')
        }) && self.name(Family::Disk) == Family::Disk.default_name();
        if paper {
            Family::ALL[..4]
                .iter()
                .map(|f| self.name(*f).to_ascii_uppercase())
                .collect::<Vec<_>>()
                .join("_")
        } else {
            Family::ALL
                .iter()
                .map(|f| format!("{}={}", f.key(), self.name(*f)))
                .collect::<Vec<_>>()
                .join(",")
        }
    }
}

/// Whether a policy name is a path (a script or a file), kept as written
/// rather than lowercased.
fn is_script(name: &str) -> bool {
    name.ends_with(".rhai") || name.contains('/')
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_notation_fills_missing_families_with_defaults() {
        let s = PolicySpec::parse("CS1_WF1").unwrap();
        assert_eq!(
            s.names,
            ["cs1", "wf1", "ws2", "jc2", "none"].map(String::from)
        );
        assert_eq!(s.display(), "CS1_WF1_WS2_JC2");
    }

    #[test]
    fn explicit_notation_and_scripts() {
        let s = PolicySpec::parse("cpu=policies/x.rhai,disk=share").unwrap();
        assert_eq!(s.name(Family::Cpu), "policies/x.rhai");
        assert_eq!(
            s.display(),
            "cpu=policies/x.rhai,fetch=wf2,send=ws2,estimate=jc2,disk=share"
        );
    }

    #[test]
    fn bad_specs_are_refused_with_a_reason() {
        assert!(PolicySpec::parse("CS1_CS2").unwrap_err().contains("twice"));
        assert!(PolicySpec::parse("XX1").unwrap_err().contains("not CSn"));
        assert!(PolicySpec::parse("gpu=x")
            .unwrap_err()
            .contains("unknown family"));
        assert!(PolicySpec::parse("").is_err());
        assert!(PolicySpec::parse("x.rhai")
            .unwrap_err()
            .contains("cpu=x.rhai"));
        assert!(PolicySpec::parse("CS1,foo")
            .unwrap_err()
            .contains("`foo` is not FAMILY=NAME"));
    }

    #[test]
    fn a_bare_script_takes_the_family_it_serves() {
        let fetch = |_: &str| Ok(Family::Fetch);
        let s = PolicySpec::parse_with("dir/wf1_v4.rhai", &fetch).unwrap();
        assert_eq!(s.name(Family::Fetch), "dir/wf1_v4.rhai");
        assert_eq!(s.name(Family::Cpu), "cs2");
        let s = PolicySpec::parse_with("CS1, x.rhai ,send=ws1", &fetch).unwrap();
        assert_eq!(
            s.names,
            ["cs1", "x.rhai", "ws1", "jc2", "none"].map(String::from)
        );
        let e = PolicySpec::parse_with("fetch=wf1,x.rhai", &fetch).unwrap_err();
        assert!(e.contains("fetch is given twice"), "{e}");
        let none = |p: &str| Err::<Family, _>(format!("{p}: no hooks"));
        let e = PolicySpec::parse_with("x.rhai", &none).unwrap_err();
        assert_eq!(e, "policy `x.rhai`: x.rhai: no hooks");
    }

    #[test]
    fn duplicate_names_in_a_family_are_refused() {
        let mut r = Registry::default();
        let mk = || Err::<AnyPolicy, String>("unused".into());
        r.add(Entry::new(Family::Cpu, "x", "", "a", mk)).unwrap();
        let e = r
            .add(Entry::new(Family::Cpu, "X", "", "b", mk))
            .unwrap_err();
        assert!(e.contains("two cpu policies"), "{e}");
        r.add(Entry::new(Family::Fetch, "x", "", "c", mk)).unwrap();
    }
}
