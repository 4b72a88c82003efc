//! Helpers over `roxmltree`: positions, numbers, and the bookkeeping of
//! tags that vcsim reads and those it does not model.

use crate::ImportError;
use roxmltree::{Document, Node};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One parsed input file.
pub struct Src<'a> {
    pub path: &'a Path,
    pub doc: Document<'a>,
    /// Byte offsets where lines start, for offset -> line in O(log n).
    line_starts: Vec<usize>,
}

impl<'a> Src<'a> {
    /// Parses `text` (the contents of `path`); a malformed file is an error
    /// naming the file and the line.
    pub fn parse(path: &'a Path, text: &'a str) -> Result<Src<'a>, ImportError> {
        let opts = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        let doc = Document::parse_with_options(text, opts).map_err(|e| {
            let pos = e.pos();
            ImportError {
                file: path.to_path_buf(),
                line: Some(pos.row as usize),
                element: None,
                message: format!("malformed XML: {e}"),
            }
        })?;
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Ok(Src {
            path,
            doc,
            line_starts,
        })
    }

    pub fn root(&self) -> Node<'_, 'a> {
        self.doc.root_element()
    }

    /// 1-based line of a node's start.
    pub fn line(&self, n: Node) -> usize {
        let at = n.range().start;
        match self.line_starts.binary_search(&at) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    /// Short name of the file for comments and warnings.
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.display().to_string())
    }

    /// Where a value came from, for a comment: `<tag> in x.xml line N`.
    pub fn at(&self, n: Node) -> String {
        format!("<{}>, {} line {}", tag(n), self.name(), self.line(n))
    }

    pub fn err(&self, n: Node, message: impl Into<String>) -> ImportError {
        ImportError {
            file: self.path.to_path_buf(),
            line: Some(self.line(n)),
            element: Some(tag(n).to_string()),
            message: message.into(),
        }
    }

    /// The trimmed text of an element.
    pub fn text(&self, n: Node<'_, 'a>) -> String {
        let mut s = String::new();
        for c in n.children() {
            if let Some(t) = c.text() {
                if c.is_text() {
                    s.push_str(t);
                }
            }
        }
        s.trim().to_string()
    }

    /// A finite number.
    pub fn num(&self, n: Node<'_, 'a>) -> Result<f64, ImportError> {
        let t = self.text(n);
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.err(n, format!("`{t}` is not a finite number"))),
        }
    }

    pub fn positive(&self, n: Node<'_, 'a>) -> Result<f64, ImportError> {
        let v = self.num(n)?;
        if v > 0.0 {
            Ok(v)
        } else {
            Err(self.err(n, format!("must be a positive number, found {v}")))
        }
    }

    pub fn non_negative(&self, n: Node<'_, 'a>) -> Result<f64, ImportError> {
        let v = self.num(n)?;
        if v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(n, format!("must be zero or more, found {v}")))
        }
    }

    /// A fraction in (0, 1].
    pub fn fraction(&self, n: Node<'_, 'a>) -> Result<f64, ImportError> {
        let v = self.num(n)?;
        if v > 0.0 && v <= 1.0 {
            Ok(v)
        } else {
            Err(self.err(n, format!("must be a fraction in (0, 1], found {v}")))
        }
    }

    /// A whole number of at least `min`.
    pub fn whole(&self, n: Node<'_, 'a>, min: u32) -> Result<u32, ImportError> {
        let v = self.num(n)?;
        if v.fract() == 0.0 && v >= min as f64 && v <= u32::MAX as f64 {
            Ok(v as u32)
        } else {
            Err(self.err(
                n,
                format!("must be a whole number of at least {min}, found {v}"),
            ))
        }
    }

    /// BOINC's booleans: `<tag/>` or `<tag>1</tag>` is true, `0` false.
    pub fn flag(&self, n: Node<'_, 'a>) -> Result<bool, ImportError> {
        match self.text(n).as_str() {
            "" | "1" | "true" => Ok(true),
            "0" | "false" => Ok(false),
            t => Err(self.err(n, format!("`{t}` is not a boolean (0 or 1)"))),
        }
    }
}

pub fn tag<'a>(n: Node<'a, '_>) -> &'a str {
    n.tag_name().name()
}

/// Child elements.
pub fn elems<'a, 'i>(n: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    n.children().filter(|c| c.is_element())
}

/// The first child element named `name`.
pub fn child<'a, 'i>(n: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    elems(n).find(|c| tag(*c) == name)
}

/// Tags present in the input that vcsim does not model, by where they were
/// found; reported as one warning line per place.
#[derive(Default)]
pub struct Unmodelled {
    by_place: BTreeMap<String, (PathBuf, BTreeMap<String, usize>)>,
}

impl Unmodelled {
    pub fn add(&mut self, src: &Src, place: &str, tagname: &str) {
        let key = format!("{}: <{}>", src.name(), place);
        let e = self
            .by_place
            .entry(key)
            .or_insert_with(|| (src.path.to_path_buf(), BTreeMap::new()));
        *e.1.entry(tagname.to_string()).or_insert(0) += 1;
    }

    /// Records every child element of `n` whose tag is not in `used`.
    pub fn rest(&mut self, src: &Src, place: &str, n: Node, used: &[&str]) {
        for c in elems(n) {
            let t = tag(c);
            if !used.contains(&t) {
                self.add(src, place, t);
            }
        }
    }

    pub fn warnings(&self) -> Vec<String> {
        self.by_place
            .iter()
            .map(|(place, (_, tags))| {
                let list: Vec<String> = tags
                    .iter()
                    .map(|(t, n)| {
                        if *n > 1 {
                            format!("<{t}> (x{n})")
                        } else {
                            format!("<{t}>")
                        }
                    })
                    .collect();
                format!(
                    "{place}: not modelled by vcsim, ignored: {}",
                    list.join(", ")
                )
            })
            .collect()
    }
}
