//! `app_config.xml`: the user's per-project settings, in
//! `projects/<project directory>/app_config.xml` beside `client_state.xml`.
//! vcsim reads the limits on concurrent jobs and the CPU and GPU use of app
//! versions; the other settings are listed as not modelled.

use crate::error::ImportError;
use crate::xml::{elems, tag, Located, Src, Text, Unmodelled};
use roxmltree::Node;
use std::collections::HashMap;
use std::path::PathBuf;

/// BOINC's directory for a project: its master URL without the scheme,
/// every byte other than ASCII letters, digits, `.`, `-` and `_` made `_`,
/// and one trailing `_` dropped (`https://boinc.bakerlab.org/rosetta/` is
/// `boinc.bakerlab.org_rosetta`).
pub fn project_dir(master_url: &str) -> String {
    let rest = master_url
        .find("://")
        .map_or(master_url, |i| &master_url[i + 3..]);
    // Byte by byte, as BOINC's `escape_url_readable` walks its `char`s: a
    // character of two UTF-8 bytes becomes two `_`.
    let mut s: String = rest
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_') {
                b as char
            } else {
                '_'
            }
        })
        .collect();
    if s.ends_with('_') {
        s.pop();
    }
    s
}

/// One project's `app_config.xml`.
#[derive(Debug, Clone, PartialEq)]
pub struct AppConfig<'a> {
    /// How comments name the file: `projects/DIR/app_config.xml`.
    pub file: String,
    /// Its path, for errors.
    pub path: PathBuf,
    pub apps: Vec<AppCfg<'a>>,
    pub versions: Vec<AppVersionCfg<'a>>,
    pub project_max_concurrent: Option<Located<u32>>,
    /// Indices in `apps` by app name, in file order.
    apps_by_name: HashMap<Text<'a>, Vec<usize>>,
    /// Indices in `versions` by app name and plan class, in file order.
    versions_by_name: HashMap<Text<'a>, HashMap<Text<'a>, Vec<usize>>>,
}

/// `<app>` of `app_config.xml`.
#[derive(Debug, Clone, PartialEq)]
pub struct AppCfg<'a> {
    pub line: usize,
    pub name: Text<'a>,
    pub max_concurrent: Option<Located<u32>>,
    /// `<gpu_versions><gpu_usage>`: GPU instances per job of the app's GPU versions.
    pub gpu_usage: Option<Located<f64>>,
    /// `<gpu_versions><cpu_usage>`: CPUs per job of the app's GPU versions.
    pub cpu_usage: Option<Located<f64>>,
    /// Values of `<gpu_versions>` that BOINC reports and does not apply (a
    /// `<gpu_usage>` of 0 or less, a negative `<cpu_usage>`): each as its
    /// tag, line and value. An earlier valid value stays.
    pub refused: Vec<Located<f64>>,
}

/// `<app_version>` of `app_config.xml`: one plan class of an app.
#[derive(Debug, Clone, PartialEq)]
pub struct AppVersionCfg<'a> {
    pub line: usize,
    pub app_name: Text<'a>,
    /// "" when absent: the versions without a plan class.
    pub plan_class: Text<'a>,
    pub avg_ncpus: Option<Located<f64>>,
    pub ngpus: Option<Located<f64>>,
}

impl<'a> AppConfig<'a> {
    /// Reads the file; `file` names it in comments.
    pub fn read(
        src: &Src<'a>,
        file: String,
        un: &mut Unmodelled,
    ) -> Result<AppConfig<'a>, ImportError> {
        let doc = src.document()?;
        let root = doc.root_element();
        if tag(root) != "app_config" {
            return Err(src.err(
                root,
                format!(
                    "expected <app_config> as the root element, found <{}>",
                    tag(root)
                ),
            ));
        }
        let mut cfg = AppConfig {
            file,
            path: src.path.to_path_buf(),
            apps: Vec::new(),
            versions: Vec::new(),
            project_max_concurrent: None,
            apps_by_name: HashMap::new(),
            versions_by_name: HashMap::new(),
        };
        // The loop keeps the last <project_max_concurrent>, as BOINC's
        // parser does; `last` warns of a repeat.
        src.last(root, "project_max_concurrent");
        for n in elems(root) {
            match tag(n) {
                "app" => cfg.apps.push(AppCfg::parse(src, n, un)?),
                "app_version" => cfg.versions.push(AppVersionCfg::parse(src, n, un)?),
                "project_max_concurrent" => {
                    cfg.project_max_concurrent = Some(Located {
                        value: src.whole(n, 0)?,
                        tag: "project_max_concurrent",
                        line: src.line(n),
                    })
                }
                t => un.add(src, "app_config", t),
            }
        }
        for (i, a) in cfg.apps.iter().enumerate() {
            cfg.apps_by_name.entry(a.name.clone()).or_default().push(i);
        }
        for (i, v) in cfg.versions.iter().enumerate() {
            cfg.versions_by_name
                .entry(v.app_name.clone())
                .or_default()
                .entry(v.plan_class.clone())
                .or_default()
                .push(i);
        }
        Ok(cfg)
    }

    /// The `<app>` entries for `name`, in file order.
    pub fn apps_named<'s>(&'s self, name: &str) -> impl DoubleEndedIterator<Item = &'s AppCfg<'a>> {
        self.apps_by_name
            .get(name)
            .into_iter()
            .flatten()
            .map(|&i| &self.apps[i])
    }

    /// The `<app_version>` entries for an app and plan class, in file order.
    pub fn versions_of<'s>(
        &'s self,
        app: &str,
        plan_class: &str,
    ) -> impl Iterator<Item = &'s AppVersionCfg<'a>> {
        self.versions_by_name
            .get(app)
            .and_then(|m| m.get(plan_class))
            .into_iter()
            .flatten()
            .map(|&i| &self.versions[i])
    }

    /// Where a value of this file came from, for a comment.
    pub fn at<T>(&self, l: &Located<T>) -> String {
        format!("<{}>, {} line {}", l.tag, self.file, l.line)
    }
}

impl<'a> AppCfg<'a> {
    pub fn parse(
        src: &Src<'a>,
        n: Node<'_, 'a>,
        un: &mut Unmodelled,
    ) -> Result<AppCfg<'a>, ImportError> {
        let name = src
            .child_text(n, "name")
            .filter(|s| !s.is_empty())
            .ok_or_else(|| src.err(n, "an <app> needs a <name>"))?;
        let (mut gpu_usage, mut cpu_usage, mut refused) = (None, None, Vec::new());
        // Every block, in order: BOINC's `parse_gpu_versions` reads each
        // into the same settings, a value out of range reported and
        // skipped, so an earlier valid one stays (of this block or an
        // earlier one), and the settings may still apply.
        for g in elems(n).filter(|c| tag(*c) == "gpu_versions") {
            for c in elems(g) {
                let (tag, ok): (&'static str, fn(f64) -> bool) = match tag(c) {
                    "gpu_usage" => ("gpu_usage", |x| x > 0.0),
                    "cpu_usage" => ("cpu_usage", |x| x >= 0.0),
                    _ => continue,
                };
                let value = Located {
                    value: src.num(c)?,
                    tag,
                    line: src.line(c),
                };
                if !ok(value.value) {
                    refused.push(value);
                } else if tag == "gpu_usage" {
                    gpu_usage = Some(value);
                } else {
                    cpu_usage = Some(value);
                }
            }
            un.rest(src, "app><gpu_versions", g, &["gpu_usage", "cpu_usage"]);
        }
        un.rest(src, "app", n, &["name", "max_concurrent", "gpu_versions"]);
        Ok(AppCfg {
            line: src.line(n),
            name,
            max_concurrent: src.opt(n, "max_concurrent", |s, c| s.whole(c, 0))?,
            gpu_usage,
            cpu_usage,
            refused,
        })
    }
}

impl<'a> AppVersionCfg<'a> {
    pub fn parse(
        src: &Src<'a>,
        n: Node<'_, 'a>,
        un: &mut Unmodelled,
    ) -> Result<AppVersionCfg<'a>, ImportError> {
        let app_name = src
            .child_text(n, "app_name")
            .filter(|s| !s.is_empty())
            .ok_or_else(|| src.err(n, "an <app_version> needs an <app_name>"))?;
        un.rest(
            src,
            "app_version",
            n,
            &["app_name", "plan_class", "avg_ncpus", "ngpus"],
        );
        Ok(AppVersionCfg {
            line: src.line(n),
            app_name,
            plan_class: src.child_text(n, "plan_class").unwrap_or_default(),
            avg_ncpus: src.opt(n, "avg_ncpus", Src::non_negative)?,
            ngpus: src.opt(n, "ngpus", Src::non_negative)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn project_directories() {
        assert_eq!(
            project_dir("https://alpha.example.org/"),
            "alpha.example.org"
        );
        assert_eq!(
            project_dir("http://boinc.bakerlab.org/rosetta/"),
            "boinc.bakerlab.org_rosetta"
        );
        assert_eq!(project_dir("http://a.b:8080/x y/"), "a.b_8080_x_y");
        assert_eq!(project_dir("no-scheme"), "no-scheme");
        // `ä` is two bytes, so two `_`, then the slash's (the last dropped).
        assert_eq!(
            project_dir("https://boinc.example.org/rosettä/"),
            "boinc.example.org_rosett__"
        );
    }

    #[test]
    fn reads_the_settings() {
        let text = "<app_config>\n<app>\n<name>pulsar</name>\n<max_concurrent>2</max_concurrent>\
                    <fraction_done_exact/>\n<gpu_versions><gpu_usage>0.5</gpu_usage><cpu_usage>0.4</cpu_usage></gpu_versions>\n</app>\n\
                    <app_version><app_name>folder</app_name><plan_class>mt</plan_class><avg_ncpus>3</avg_ncpus>\
                    <cmdline>--nthreads 3</cmdline></app_version>\n<project_max_concurrent>4</project_max_concurrent>\n\
                    <report_results_immediately/></app_config>";
        let src = Src::parse(Path::new("app_config.xml"), text).unwrap();
        let mut un = Unmodelled::default();
        let c = AppConfig::read(&src, "projects/p/app_config.xml".into(), &mut un).unwrap();
        assert_eq!(
            c.project_max_concurrent.map(|m| (m.value, m.line)),
            Some((4, 8))
        );
        let a = &c.apps[0];
        assert_eq!((&*a.name, a.line), ("pulsar", 2));
        assert_eq!(a.max_concurrent.map(|m| m.value), Some(2));
        assert_eq!(a.gpu_usage.map(|m| m.value), Some(0.5));
        assert_eq!(a.cpu_usage.map(|m| m.value), Some(0.4));
        let v = &c.versions[0];
        assert_eq!((&*v.app_name, &*v.plan_class), ("folder", "mt"));
        assert_eq!(v.avg_ncpus.map(|m| m.value), Some(3.0));
        assert_eq!(v.ngpus, None);
        assert_eq!(
            c.at(&a.max_concurrent.unwrap()),
            "<max_concurrent>, projects/p/app_config.xml line 4"
        );
        let w = un.warnings().join("\n");
        assert!(
            w.contains("<app>: not modelled by vcsim, ignored: <fraction_done_exact>"),
            "{w}"
        );
        assert!(
            w.contains(
                "<app_config>: not modelled by vcsim, ignored: <report_results_immediately>"
            ),
            "{w}"
        );
        assert!(
            w.contains("<app_version>: not modelled by vcsim, ignored: <cmdline>"),
            "{w}"
        );
    }

    /// BOINC's `parse_gpu_versions`: a value out of range is reported and
    /// skipped; an earlier valid one stays.
    #[test]
    fn gpu_versions_out_of_range_are_skipped_as_boinc_does() {
        for (block, gpu, cpu, refused) in [
            (
                "<gpu_usage>0</gpu_usage><cpu_usage>1</cpu_usage>",
                None,
                Some(1.0),
                1,
            ),
            (
                "<gpu_usage>0.5</gpu_usage><cpu_usage>-1</cpu_usage>",
                Some(0.5),
                None,
                1,
            ),
            (
                "<gpu_usage>0.5</gpu_usage><gpu_usage>0</gpu_usage><cpu_usage>1</cpu_usage>",
                Some(0.5),
                Some(1.0),
                1,
            ),
            (
                "<gpu_usage>0.25</gpu_usage><cpu_usage>0</cpu_usage>",
                Some(0.25),
                Some(0.0),
                0,
            ),
            // Two blocks: the second's 0 skipped, the first's 0.5 stays.
            (
                "<gpu_usage>0.5</gpu_usage><cpu_usage>0.2</cpu_usage></gpu_versions>\
                 <gpu_versions><gpu_usage>0</gpu_usage><cpu_usage>0.3</cpu_usage>",
                Some(0.5),
                Some(0.3),
                1,
            ),
        ] {
            let text = format!(
                "<app_config><app><name>a</name><gpu_versions>{block}</gpu_versions></app></app_config>"
            );
            let src = Src::parse(Path::new("app_config.xml"), &text).unwrap();
            let c = AppConfig::read(&src, "f".into(), &mut Unmodelled::default()).unwrap();
            let a = &c.apps[0];
            assert_eq!(a.gpu_usage.as_ref().map(|l| l.value), gpu, "{block}");
            assert_eq!(a.cpu_usage.as_ref().map(|l| l.value), cpu, "{block}");
            assert_eq!(a.refused.len(), refused, "{block}");
        }
    }

    #[test]
    fn bad_values() {
        for (text, element) in [
            ("<app_config><project_max_concurrent>-1</project_max_concurrent></app_config>", "project_max_concurrent"),
            ("<app_config><app><name>a</name><max_concurrent>1.5</max_concurrent></app></app_config>", "max_concurrent"),
            ("<app_config><app><name>a</name><gpu_versions><gpu_usage>x</gpu_usage></gpu_versions></app></app_config>", "gpu_usage"),
            ("<app_config><app><max_concurrent>1</max_concurrent></app></app_config>", "app"),
            ("<app_config><app_version><avg_ncpus>x</avg_ncpus></app_version></app_config>", "app_version"),
            ("<config/>", "config"),
        ] {
            let src = Src::parse(Path::new("app_config.xml"), text).unwrap();
            let e = AppConfig::read(&src, "f".into(), &mut Unmodelled::default()).unwrap_err();
            assert_eq!(e.element.as_deref(), Some(element), "{text}: {e}");
        }
    }
}
