//! Helpers over `roxmltree`: positions, numbers, and the bookkeeping of
//! tags that vcsim reads and those it does not model.

use crate::ImportError;
use roxmltree::{Document, Node, StringStorage};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An element's text: borrowed from the input when it has no entities.
pub type Text<'a> = Cow<'a, str>;

/// A value read from a child element, with the element's tag and line, for
/// the comments that say where each value came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Located<T> {
    pub value: T,
    pub tag: &'static str,
    pub line: usize,
}

/// One parsed input file.
pub struct Src<'a> {
    pub path: &'a Path,
    text: &'a str,
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
            text,
            doc,
            line_starts,
        })
    }

    pub fn root(&self) -> Node<'_, 'a> {
        self.doc.root_element()
    }

    /// 1-based line of a node's start. The node may come from a document
    /// parsed from a slice of the file's text.
    pub fn line(&self, n: Node) -> usize {
        let base = (n.document().input_text().as_ptr() as usize)
            .saturating_sub(self.text.as_ptr() as usize);
        self.line_at(base + n.range().start)
    }

    /// 1-based line of a byte offset in the file.
    pub fn line_at(&self, at: usize) -> usize {
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

    /// Where a located value came from, for a comment.
    pub fn at_l<T>(&self, l: &Located<T>) -> String {
        format!("<{}>, {} line {}", l.tag, self.name(), l.line)
    }

    pub fn err(&self, n: Node, message: impl Into<String>) -> ImportError {
        self.err_at(self.line(n), tag(n), message)
    }

    /// An error at an element already read: its line and tag.
    pub fn err_at(&self, line: usize, tag: &str, message: impl Into<String>) -> ImportError {
        ImportError {
            file: self.path.to_path_buf(),
            line: Some(line),
            element: Some(tag.to_string()),
            message: message.into(),
        }
    }

    /// The trimmed text of an element, borrowed from the input where it can be.
    pub fn text(&self, n: Node<'_, 'a>) -> Text<'a> {
        let mut texts = n.children().filter(|c| c.is_text());
        match (texts.next(), texts.next()) {
            (None, _) => Cow::Borrowed(""),
            (Some(t), None) => match t.text_storage() {
                Some(StringStorage::Borrowed(s)) => Cow::Borrowed(s.trim()),
                Some(owned) => Cow::Owned(owned.as_str().trim().to_string()),
                None => Cow::Borrowed(""),
            },
            _ => {
                let mut s = String::new();
                for c in n.children().filter(|c| c.is_text()) {
                    s.push_str(c.text().unwrap_or_default());
                }
                Cow::Owned(s.trim().to_string())
            }
        }
    }

    /// The text of the child `name`, if there is one.
    pub fn child_text(&self, n: Node<'_, 'a>, name: &str) -> Option<Text<'a>> {
        child(n, name).map(|c| self.text(c))
    }

    /// The child `name` read by `read` (one of the checks below), with its
    /// line; None if there is no such child.
    pub fn opt<T>(
        &self,
        n: Node<'_, 'a>,
        name: &'static str,
        read: impl Fn(&Self, Node<'_, 'a>) -> Result<T, ImportError>,
    ) -> Result<Option<Located<T>>, ImportError> {
        match child(n, name) {
            Some(c) => Ok(Some(Located {
                value: read(self, c)?,
                tag: name,
                line: self.line(c),
            })),
            None => Ok(None),
        }
    }

    /// Whether a BOINC flag child (`<name/>`, `<name>1</name>`) is set.
    pub fn flag_child(&self, n: Node<'_, 'a>, name: &str) -> Result<bool, ImportError> {
        match child(n, name) {
            Some(c) => self.flag(c),
            None => Ok(false),
        }
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
        match &*self.text(n) {
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

/// The tags of the child elements of `n` that are not in `used`, in order.
pub fn unread<'i>(n: Node<'_, 'i>, used: &[&str]) -> Vec<&'i str> {
    elems(n)
        .map(|c| c.tag_name().name())
        .filter(|t| !used.contains(t))
        .collect()
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

    /// Records tags found by [`unread`] when the element was read.
    pub fn add_all(&mut self, src: &Src, place: &str, tags: &[&str]) {
        for t in tags {
            self.add(src, place, t);
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

/// Parses a snippet and hands its root element to `f`, for unit tests.
#[cfg(test)]
pub fn with_root<T>(
    text: &'static str,
    f: impl FnOnce(&Src<'static>, Node<'_, 'static>) -> T,
) -> T {
    let src = Src::parse(Path::new("t.xml"), text).expect("snippet parses");
    let root = src.root();
    f(&src, root)
}
