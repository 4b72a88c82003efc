//! `<project>`: name, share, flags, server availability and scheduler URLs.

use crate::emit::show;
use crate::error::ImportError;
use crate::xml::{elems, tag, unread, Located, Src, Text};
use roxmltree::Node;

/// `<project>`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectEl<'a> {
    pub line: usize,
    pub master_url: Option<Located<Text<'a>>>,
    pub project_name: Option<Located<Text<'a>>>,
    /// `<non_cpu_intensive/>` or `<ended/>`, if set: the project is left out.
    pub skip: Option<&'static str>,
    /// Set flags that vcsim does not model: `<suspended_via_gui/>`, ...
    pub unmodelled_flags: Vec<&'static str>,
    pub resource_share: Option<Located<f64>>,
    /// The emulator's `<available>`.
    pub available: Option<Available<'a>>,
    /// `<scheduler_url>`s with their lines.
    pub scheduler_urls: Vec<(Text<'a>, usize)>,
    pub unread: Vec<&'a str>,
}

/// The emulator's `<available><frac/><lambda/></available>` of a project.
#[derive(Debug, Clone, PartialEq)]
pub struct Available<'a> {
    pub line: usize,
    pub frac: f64,
    pub lambda: Option<f64>,
    pub unread: Vec<&'a str>,
}

const USED: &[&str] = &[
    "master_url",
    "project_name",
    "resource_share",
    "available",
    "scheduler_url",
    "non_cpu_intensive",
    "ended",
    "suspended_via_gui",
    "dont_request_more_work",
    "detach_when_done",
];

impl<'a> ProjectEl<'a> {
    pub fn parse(src: &Src<'a>, n: Node<'_, 'a>) -> Result<ProjectEl<'a>, ImportError> {
        let text_of = |name: &'static str| {
            src.last(n, name).map(|c| Located {
                value: src.text(c),
                tag: name,
                line: src.line(c),
            })
        };
        let mut skip = None;
        for f in ["non_cpu_intensive", "ended"] {
            if src.flag_child(n, f)? {
                skip = Some(f);
            }
        }
        let mut unmodelled_flags = Vec::new();
        for f in [
            "suspended_via_gui",
            "dont_request_more_work",
            "detach_when_done",
        ] {
            if src.flag_child(n, f)? {
                unmodelled_flags.push(f);
            }
        }
        let available = match src.last(n, "available") {
            Some(a) => Some(Available::parse(src, a)?),
            None => None,
        };
        Ok(ProjectEl {
            line: src.line(n),
            master_url: text_of("master_url"),
            project_name: text_of("project_name"),
            skip,
            unmodelled_flags,
            resource_share: src.opt(n, "resource_share", Src::non_negative)?,
            available,
            scheduler_urls: elems(n)
                .filter(|c| tag(*c) == "scheduler_url")
                .map(|c| (src.text(c), src.line(c)))
                .collect(),
            unread: unread(n, USED),
        })
    }

    /// The `<master_url>`, or "".
    pub fn url(&self) -> &str {
        self.master_url.as_ref().map_or("", |u| &u.value)
    }
}

impl<'a> Available<'a> {
    pub fn parse(src: &Src<'a>, a: Node<'_, 'a>) -> Result<Available<'a>, ImportError> {
        let frac = match src.last(a, "frac") {
            Some(c) => {
                let v = src.num(c)?;
                if !(0.0..=1.0).contains(&v) {
                    return Err(src.err(c, format!("must be in [0, 1], found {}", show(v))));
                }
                v
            }
            None => 1.0,
        };
        let lambda = src.opt(a, "lambda", Src::positive)?.map(|l| l.value);
        Ok(Available {
            line: src.line(a),
            frac,
            lambda,
            unread: unread(a, &["frac", "lambda"]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::with_root;

    #[test]
    fn project() {
        let p = with_root(
            "<project>\n<master_url>https://a.org/</master_url>\n<project_name>A &amp; B</project_name>\
             <resource_share>50</resource_share><dont_request_more_work/><ended>0</ended>\n\
             <scheduler_url>https://a.org/cgi</scheduler_url>\n<available><frac>0.9</frac><x/></available>\
             <user_name>u</user_name></project>",
            |s, n| ProjectEl::parse(s, n).unwrap(),
        );
        assert_eq!(p.url(), "https://a.org/");
        let name = p.project_name.as_ref().unwrap();
        assert_eq!((&*name.value, name.line), ("A & B", 3));
        assert_eq!(p.skip, None);
        assert_eq!(p.unmodelled_flags, vec!["dont_request_more_work"]);
        assert_eq!(p.resource_share.map(|r| r.value), Some(50.0));
        assert_eq!(
            p.scheduler_urls,
            vec![(Text::Borrowed("https://a.org/cgi"), 4)]
        );
        let a = p.available.as_ref().unwrap();
        assert_eq!((a.frac, a.lambda, a.line), (0.9, None, 5));
        assert_eq!(a.unread, vec!["x"]);
        assert_eq!(p.unread, vec!["user_name"]);
    }

    #[test]
    fn skipped_and_bad() {
        let p = with_root("<project><non_cpu_intensive/></project>", |s, n| {
            ProjectEl::parse(s, n).unwrap()
        });
        assert_eq!(p.skip, Some("non_cpu_intensive"));
        assert_eq!(p.url(), "");
        let e = with_root("<project><ended>maybe</ended></project>", |s, n| {
            ProjectEl::parse(s, n).unwrap_err()
        });
        assert_eq!(e.element.as_deref(), Some("ended"));
        let e = with_root(
            "<project><available><frac>2</frac></available></project>",
            |s, n| ProjectEl::parse(s, n).unwrap_err(),
        );
        assert_eq!(e.element.as_deref(), Some("frac"));
    }
}
