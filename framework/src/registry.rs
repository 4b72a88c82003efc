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

/// One policy name per family, and the label outputs show it by.
///
/// Two specs are equal when they name the same policies *and* the same
/// label override: a label is part of what the user asked for, so
/// `CS1,label=old` beside `CS1` is two policies (two columns of a
/// comparison), ordered and hashed as such.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PolicySpec {
    pub names: [String; 5],
    /// The name given with `label=NAME`; `None`: [`PolicySpec::label`]
    /// makes one from the names.
    pub label: Option<String>,
}

impl Default for PolicySpec {
    fn default() -> Self {
        PolicySpec {
            names: Family::ALL.map(|f| f.default_name().to_string()),
            label: None,
        }
    }
}

/// The most characters a `label=NAME` may have.
pub const LABEL_MAX_CHARS: usize = 40;

impl PolicySpec {
    /// Parses the paper's notation (`CS2_WF2_WS2_JC2`, families left out take
    /// the defaults) or the explicit one (`cpu=cs2,fetch=wf2,disk=share`).
    /// Either may carry `label=NAME` after a comma (`CS1,label=old`), the
    /// name outputs show the policy by (see [`PolicySpec::label`]).
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
    /// which also takes the paper's names bare (`CS1,WF1,x.rhai`, or
    /// `CS1_WF1,x.rhai`).
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
                    Some((k, v)) if k.trim().eq_ignore_ascii_case("label") => {
                        let v = v.trim();
                        check_label(v).map_err(|e| format!("policy `{s}`: {e}"))?;
                        if spec.label.replace(v.to_string()).is_some() {
                            return Err(format!("policy `{s}`: the label is given twice"));
                        }
                    }
                    Some((k, v)) => {
                        let f = Family::from_key(k.trim()).ok_or_else(|| {
                            format!(
                                "policy `{s}`: unknown family `{}` (cpu, fetch, send, estimate, disk; or label=NAME)",
                                k.trim()
                            )
                        })?;
                        set(f, v.trim(), &mut spec)?;
                    }
                    None if part.ends_with(".rhai") => set(script(part)?, part, &mut spec)?,
                    // Paper names, one (`CS1`) or several (`CS1_WF1`).
                    None => {
                        for tok in part.split('_') {
                            let f = paper(tok).filter(|_| !part.contains('/')).ok_or_else(|| {
                                format!(
                                    "policy `{s}`: `{part}` is not FAMILY=NAME, a paper name (CSn, WFn, WSn, JCn), a script (.rhai) or label=NAME"
                                )
                            })?;
                            set(f, tok, &mut spec)?;
                        }
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

    /// The whole spec, which parses back to this one: the paper's notation
    /// when every name fits it and the disk manager is the default, the
    /// explicit notation otherwise; then `,label=NAME` if one was given.
    /// For what must reproduce the policy (a sweep's manifest, `spec` in
    /// JSON and CSV, errors); tables and plots show [`PolicySpec::label`].
    pub fn display(&self) -> String {
        let paper = Family::ALL[..4]
            .iter()
            .all(|f| is_paper_name(*f, self.name(*f)))
            && self.name(Family::Disk) == Family::Disk.default_name();
        let mut out = if paper {
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
        };
        if let Some(l) = &self.label {
            out.push_str(",label=");
            out.push_str(l);
        }
        out
    }

    /// The short name outputs show this policy by. It depends on this spec
    /// only (never on the policies beside it), so a policy has the same
    /// name in every table, CSV file, JSON document and plot:
    ///
    /// - the `label=NAME` given, if any;
    /// - else the four families' short names joined by `_` (cpu, fetch,
    ///   send, estimate): a name of the paper's kind upper-cased (`WF2`,
    ///   `CS3-INTENDED`), a script by its file stem (`least_slack` for
    ///   `policies/least_slack.rhai`), any other name as given (`gpu`, a
    ///   plugin's `lsf`); then, when the disk manager is not the default,
    ///   `+` and its short name.
    ///
    /// So the paper's combinations keep their names (`CS2_WF2_WS2_JC2`),
    /// `cpu=policies/least_slack.rhai` is `least_slack_WF2_WS2_JC2`, the
    /// GPU default is `CS2_gpu_gpu_JC2` and `disk=share` is
    /// `CS2_WF2_WS2_JC2+share`.
    pub fn label(&self) -> String {
        if let Some(l) = &self.label {
            return l.clone();
        }
        let mut out = Family::ALL[..4]
            .iter()
            .map(|&f| short_name(f, self.name(f)))
            .collect::<Vec<_>>()
            .join("_");
        let disk = self.name(Family::Disk);
        if disk != Family::Disk.default_name() {
            out.push('+');
            out.push_str(&short_name(Family::Disk, disk));
        }
        out
    }

    /// This spec without its `label=NAME`.
    pub fn without_label(&self) -> PolicySpec {
        PolicySpec {
            names: self.names.clone(),
            label: None,
        }
    }

    /// `label: spec` for the legend under a table, when the label is not
    /// already the whole spec (`None` for `CS2_WF2_WS2_JC2`).
    pub fn legend_line(&self) -> Option<String> {
        let (label, whole) = (self.label(), self.without_label().display());
        (label != whole).then(|| format!("{label}: {whole}"))
    }
}

/// Refuses, among policies shown side by side (a comparison, a sweep), two
/// different ones of the same label: they could not be told apart. The
/// error is the index of the second and a message naming both specs.
pub fn check_labels(specs: &[PolicySpec]) -> Result<(), (usize, String)> {
    for (j, b) in specs.iter().enumerate() {
        let lb = b.label();
        if let Some(a) = specs[..j].iter().find(|a| *a != b && a.label() == lb) {
            return Err((
                j,
                format!(
                    "policies `{}` and `{}` are both labelled `{lb}`; tell them apart with `label=NAME` (as in `{},label=NAME`)",
                    a.display(),
                    b.display(),
                    b.without_label().display()
                ),
            ));
        }
    }
    Ok(())
}

/// Why `label=NAME` cannot take `name`, if it cannot.
fn check_label(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("`label=` needs a name".into());
    }
    if name.chars().count() > LABEL_MAX_CHARS {
        return Err(format!(
            "the label `{name}` is longer than {LABEL_MAX_CHARS} characters"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(format!(
            "the label `{}` holds a control character",
            name.escape_debug()
        ));
    }
    if name.contains(',') || name.contains('=') {
        return Err(format!("the label `{name}` holds `,` or `=`"));
    }
    Ok(())
}

/// Whether a policy name is a path (a script or a file), kept as written
/// rather than lowercased.
fn is_script(name: &str) -> bool {
    name.ends_with(".rhai") || name.contains('/')
}

/// Whether `name` is of the paper's kind for family `f` (`cs2`, `wf1-v4`,
/// `cs3-intended`): it starts with the family's prefix and holds nothing
/// that would stop the paper's notation from parsing back.
fn is_paper_name(f: Family, name: &str) -> bool {
    f.paper_prefix()
        .is_some_and(|p| name.to_ascii_uppercase().starts_with(p))
        && !name.contains(['.', '/', '_', ','])
}

/// A name as a label shows it: the paper's kind upper-cased, a script (or
/// any path) by its file stem, anything else as it is.
fn short_name(f: Family, name: &str) -> String {
    if is_paper_name(f, name) {
        name.to_ascii_uppercase()
    } else if is_script(name) {
        std::path::Path::new(name)
            .file_stem()
            .map_or_else(|| name.to_string(), |s| s.to_string_lossy().into_owned())
    } else {
        name.to_string()
    }
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
        assert!(PolicySpec::parse("CS1_foo,send=ws1")
            .unwrap_err()
            .contains("`CS1_foo` is not FAMILY=NAME"));
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
    fn a_label_is_the_paper_notation_where_it_applies() {
        for (spec, label) in [
            ("CS2_WF2_WS2_JC2", "CS2_WF2_WS2_JC2"),
            ("CS1", "CS1_WF2_WS2_JC2"),
            ("CS3_WF3_WS3_JC3", "CS3_WF3_WS3_JC3"),
            (
                "cpu=cs3-intended,fetch=wf3,send=ws3,estimate=jc3",
                "CS3-INTENDED_WF3_WS3_JC3",
            ),
            ("fetch=wf1-v4", "CS2_WF1-V4_WS2_JC2"),
        ] {
            let s = PolicySpec::parse(spec).unwrap();
            assert_eq!(s.label(), label, "{spec}");
            // The paper's notation is the whole spec: no legend line.
            assert_eq!(s.label(), s.display());
            assert_eq!(s.legend_line(), None);
        }
    }

    #[test]
    fn a_label_names_scripts_by_their_stem_and_others_as_given() {
        let fetch = |_: &str| Ok(Family::Fetch);
        for (spec, label) in [
            ("cpu=policies/least_slack.rhai", "least_slack_WF2_WS2_JC2"),
            ("fetch=/home/me/wf1_v4.rhai", "CS2_wf1_v4_WS2_JC2"),
            ("cpu=cs2,fetch=gpu,send=gpu,estimate=jc2", "CS2_gpu_gpu_JC2"),
            ("cpu=lsf", "lsf_WF2_WS2_JC2"),
            ("disk=share", "CS2_WF2_WS2_JC2+share"),
            ("CS2_WF2_WS2_JC2,disk=share", "CS2_WF2_WS2_JC2+share"),
            (
                "CS1,disk=policies/disk_lru.rhai",
                "CS1_WF2_WS2_JC2+disk_lru",
            ),
            ("policies/least_queued.rhai", "CS2_least_queued_WS2_JC2"),
        ] {
            let s = PolicySpec::parse_with(spec, &fetch).unwrap();
            assert_eq!(s.label(), label, "{spec}");
        }
        // The whole spec of a policy whose label is not its notation.
        let s = PolicySpec::parse("disk=share").unwrap();
        assert_eq!(
            s.display(),
            "cpu=cs2,fetch=wf2,send=ws2,estimate=jc2,disk=share"
        );
        assert_eq!(
            s.legend_line().as_deref(),
            Some("CS2_WF2_WS2_JC2+share: cpu=cs2,fetch=wf2,send=ws2,estimate=jc2,disk=share")
        );
    }

    #[test]
    fn label_overrides_and_is_part_of_the_spec() {
        let fetch = |_: &str| Ok(Family::Fetch);
        for (spec, whole) in [
            (
                "cpu=x.rhai,label=mine",
                "cpu=x.rhai,fetch=wf2,send=ws2,estimate=jc2,disk=none,label=mine",
            ),
            ("CS1,label=old", "CS1_WF2_WS2_JC2,label=old"),
            ("label=old, CS1", "CS1_WF2_WS2_JC2,label=old"),
            ("CS1_WF1,label=old v4", "CS1_WF1_WS2_JC2,label=old v4"),
            (
                "x.rhai,label=mine",
                "cpu=cs2,fetch=x.rhai,send=ws2,estimate=jc2,disk=none,label=mine",
            ),
        ] {
            let s = PolicySpec::parse_with(spec, &fetch).unwrap();
            assert_eq!(s.display(), whole, "{spec}");
            assert_eq!(s.label(), whole.rsplit_once("label=").unwrap().1);
            // The whole spec reads back as the same spec.
            assert_eq!(PolicySpec::parse(&s.display()).unwrap(), s);
        }
        let old = PolicySpec::parse("CS1,label=old").unwrap();
        assert_eq!(old.legend_line().as_deref(), Some("old: CS1_WF2_WS2_JC2"));
        // Two specs that differ by their label only are two policies.
        let plain = PolicySpec::parse("CS1").unwrap();
        assert_ne!(old, plain);
        assert_eq!(old.without_label(), plain);
    }

    #[test]
    fn bad_labels_are_refused_naming_the_spec() {
        for (spec, why) in [
            ("CS1,label=", "`label=` needs a name"),
            ("CS1,label= ,send=ws1", "`label=` needs a name"),
            ("CS1,label=a,label=b", "the label is given twice"),
            ("CS1,label=a=b", "holds `,` or `=`"),
            ("CS1,label=a\u{7}b", "control character"),
            (
                "CS1,label=a_name_of_more_than_forty_characters_in_all",
                "longer than 40 characters",
            ),
        ] {
            let e = PolicySpec::parse(spec).unwrap_err();
            assert!(e.starts_with(&format!("policy `{spec}`: ")), "{e}");
            assert!(e.contains(why), "{spec}: {e}");
        }
        // Forty characters are enough.
        let forty = "x".repeat(40);
        assert_eq!(
            PolicySpec::parse(&format!("CS1,label={forty}"))
                .unwrap()
                .label(),
            forty
        );
    }

    #[test]
    fn two_policies_of_one_label_are_refused_side_by_side() {
        let specs: Vec<PolicySpec> = ["cpu=a/x.rhai", "CS2_WF2_WS2_JC2", "cpu=b/x.rhai"]
            .iter()
            .map(|s| PolicySpec::parse(s).unwrap())
            .collect();
        let (i, e) = check_labels(&specs).unwrap_err();
        assert_eq!(i, 2);
        assert_eq!(
            e,
            "policies `cpu=a/x.rhai,fetch=wf2,send=ws2,estimate=jc2,disk=none` and \
             `cpu=b/x.rhai,fetch=wf2,send=ws2,estimate=jc2,disk=none` are both labelled \
             `x_WF2_WS2_JC2`; tell them apart with `label=NAME` (as in \
             `cpu=b/x.rhai,fetch=wf2,send=ws2,estimate=jc2,disk=none,label=NAME`)"
        );
        // A label that takes another policy's name clashes too.
        let specs = ["CS1,label=CS2_WF2_WS2_JC2", "CS2"].map(|s| PolicySpec::parse(s).unwrap());
        assert_eq!(check_labels(&specs).unwrap_err().0, 1);
        // The same policy twice is no clash (it is shown twice).
        let specs = ["CS1", "CS1_WF2"].map(|s| PolicySpec::parse(s).unwrap());
        assert!(check_labels(&specs).is_ok());
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
