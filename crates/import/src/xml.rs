//! Helpers over `roxmltree`: positions, numbers, and the bookkeeping of
//! tags that vcsim reads and those it does not model.

use crate::emit::show;
use crate::error::ImportError;
use crate::scan::{ScanError, Scanner};
use roxmltree::{Document, Node, StringStorage};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use vcsim_framework::scenario::bounds::{
    MAX_FLOPS_PER_SECOND, MAX_GPUS, MAX_JOB_FLOPS, MAX_NCPUS, MIN_FLOPS_PER_SECOND,
};

/// The most bytes a disk or file may have: a zettabyte, a million times
/// today's largest disks; sums of such sizes stay finite.
pub const MAX_BYTES: f64 = 1e21;

/// The largest Unix time, in seconds, either side of 1970: some 31,700
/// years, so that differences of times stay finite.
pub const MAX_TIME: f64 = 1e12;

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

/// Bytes per entry of the line index: a line number is kept for every
/// block of this size, and lines within a block are counted when asked.
const LINE_BLOCK: usize = 64;

/// Nodes `roxmltree` may build for one top-level element (a BOINC element
/// has a few hundred at most); bounds the memory one element can take.
pub const MAX_NODES_PER_ELEMENT: u32 = 100_000;

/// Files read whole (preferences, the 2007 simulator's inputs) are small;
/// larger ones are refused rather than built into a tree.
pub const MAX_WHOLE_FILE_BYTES: usize = 16 << 20;

/// One input file: its text, a line index, and its root element, found by a
/// first pass ([`crate::scan`]) that bounds nesting, attributes and CDATA
/// and refuses DTDs.
pub struct Src<'a> {
    pub path: &'a Path,
    text: &'a str,
    name: String,
    /// The line number at the start of each `LINE_BLOCK` bytes.
    line_index: Vec<u32>,
    root_name: &'a str,
    root_at: usize,
    /// Elements given more than once where one is read, for the warnings.
    repeats: RefCell<Repeats>,
}

/// Repeated elements, warned one line each up to [`REPEATS_SHOWN`], then
/// counted: hostile input cannot grow the list without bound.
#[derive(Default)]
struct Repeats {
    shown: Vec<String>,
    more: usize,
}

/// Repeated elements named one by one per file.
const REPEATS_SHOWN: usize = 100;

impl<'a> Src<'a> {
    /// Reads the prolog of `text` (the contents of `path`) up to the root
    /// element. Errors name the file and the line.
    pub fn parse(path: &'a Path, text: &'a str) -> Result<Src<'a>, ImportError> {
        let mut line_index = Vec::with_capacity(text.len() / LINE_BLOCK + 1);
        let mut line = 1u32;
        for block in text.as_bytes().chunks(LINE_BLOCK) {
            line_index.push(line);
            line = line.saturating_add(block.iter().filter(|b| **b == b'\n').count() as u32);
        }
        let mut src = Src {
            path,
            text,
            name: path
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string()),
            line_index,
            root_name: "",
            root_at: 0,
            repeats: RefCell::default(),
        };
        let (_, root) = Scanner::start(text).map_err(|e| src.scan_err(e))?;
        src.root_name = root.name;
        src.root_at = root.at;
        Ok(src)
    }

    /// Names the file `name` in comments and warnings, instead of its file name.
    pub fn with_name(mut self, name: String) -> Src<'a> {
        self.name = name;
        self
    }

    /// The root element's tag.
    pub fn root_tag(&self) -> &'a str {
        self.root_name
    }

    /// An error at the root element.
    pub fn root_err(&self, message: impl Into<String>) -> ImportError {
        self.err_at(self.line_at(self.root_at), self.root_name, message)
    }

    /// The root's child elements, each parsed on its own, in order; errors
    /// (which end the iteration) name the file, line and element.
    pub fn children(&self) -> Children<'_, 'a> {
        Children {
            src: self,
            scanner: None,
            done: false,
        }
    }

    /// The whole file as one tree, for the small files: refused above
    /// [`MAX_WHOLE_FILE_BYTES`], and checked by the first pass.
    pub fn document(&self) -> Result<Document<'a>, ImportError> {
        if self.text.len() > MAX_WHOLE_FILE_BYTES {
            return Err(ImportError {
                file: self.path.to_path_buf(),
                line: None,
                element: None,
                message: format!(
                    "{:.1} MB is too large for this kind of file (at most {} MB)",
                    self.text.len() as f64 / 1e6,
                    MAX_WHOLE_FILE_BYTES >> 20
                ),
            });
        }
        let (mut sc, _) = Scanner::start(self.text).map_err(|e| self.scan_err(e))?;
        while sc.next_child().map_err(|e| self.scan_err(e))?.is_some() {}
        self.parse_range(0..self.text.len())
    }

    /// Parses `range` of the text (a whole element, or the whole file).
    fn parse_range(&self, range: std::ops::Range<usize>) -> Result<Document<'a>, ImportError> {
        let opts = roxmltree::ParsingOptions {
            allow_dtd: false,
            nodes_limit: MAX_NODES_PER_ELEMENT,
        };
        let start = range.start;
        let whole = range.len() == self.text.len();
        Document::parse_with_options(&self.text[range], opts).map_err(|e| {
            if let roxmltree::Error::NodesLimitReached = e {
                let name = Scanner::start(&self.text[start..])
                    .map(|(_, r)| r.name.to_string())
                    .ok();
                return ImportError {
                    file: self.path.to_path_buf(),
                    line: Some(self.line_at(start)),
                    element: name,
                    message: if whole {
                        format!("more than {MAX_NODES_PER_ELEMENT} XML nodes in the file: refused")
                    } else {
                        format!(
                            "more than {MAX_NODES_PER_ELEMENT} XML nodes in one element: refused"
                        )
                    },
                };
            }
            // roxmltree's positions are relative to the slice.
            let pos = e.pos();
            let line = self.line_at(start) + pos.row as usize - 1;
            let col = if pos.row == 1 {
                self.column_at(start) + pos.col as usize - 1
            } else {
                pos.col as usize
            };
            let message = e
                .to_string()
                .replace(&format!(" at {pos}"), &format!(" at {line}:{col}"));
            // The root's own namespace declarations are not in scope in a
            // child parsed on its own: say so rather than call it malformed.
            let message = match &e {
                roxmltree::Error::UnknownNamespace(prefix, _)
                    if !whole && self.root_declares(prefix) =>
                {
                    format!(
                        "the namespace prefix `{prefix}` is declared on the root element, which vcsim does not read with each of its children (it reads them one at a time, to bound memory; BOINC's files use no namespaces): declare it on the element that uses it, or remove the prefix"
                    )
                }
                _ => format!("malformed XML: {message}"),
            };
            ImportError {
                file: self.path.to_path_buf(),
                line: Some(line),
                element: None,
                message,
            }
        })
    }

    /// Whether the root element's start tag declares `xmlns:prefix`.
    fn root_declares(&self, prefix: &str) -> bool {
        let Ok((_, root)) = Scanner::start(self.text) else {
            return false;
        };
        let tag = &self.text[root.at..];
        let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
        tag.contains(&format!("xmlns:{prefix}="))
    }

    fn scan_err(&self, e: ScanError) -> ImportError {
        let line = self.line_at(e.at);
        let message = if e.message.starts_with("malformed XML") {
            format!("{} at {line}:{}", e.message, self.column_at(e.at))
        } else {
            e.message
        };
        ImportError {
            file: self.path.to_path_buf(),
            line: Some(line),
            element: e.element,
            message,
        }
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
        let at = at.min(self.text.len());
        let block = at / LINE_BLOCK;
        let Some(&first) = self.line_index.get(block) else {
            return 1;
        };
        let from = block * LINE_BLOCK;
        first as usize
            + self.text.as_bytes()[from..at]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
    }

    /// 1-based column (in characters) of a byte offset.
    fn column_at(&self, at: usize) -> usize {
        let at = at.min(self.text.len());
        let line_start = self.text.as_bytes()[..at]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        self.text
            .get(line_start..at)
            .map_or(1, |s| s.chars().count() + 1)
    }

    /// Short name of the file for comments and warnings.
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// [`Src::name`], borrowed.
    pub fn short_name(&self) -> &str {
        &self.name
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

    /// The text of the child `name` (the last, see [`Src::last`]), if there is one.
    pub fn child_text(&self, n: Node<'_, 'a>, name: &str) -> Option<Text<'a>> {
        self.last(n, name).map(|c| self.text(c))
    }

    /// The child `name` of `n` that counts: the last one, as in BOINC, whose
    /// parsers read an element's children in a loop that overwrites the
    /// value at each one. A repeated element is warned, with its lines.
    pub fn last<'n>(&self, n: Node<'n, 'a>, name: &str) -> Option<Node<'n, 'a>> {
        let mut found = elems(n).filter(|c| tag(*c) == name);
        let first = found.next()?;
        let (mut last, mut count) = (first, 1);
        for c in found {
            last = c;
            count += 1;
        }
        if count > 1 {
            self.repeated(
                &format!("<{}> at line {}", tag(n), self.line(n)),
                name,
                count,
                self.line(first),
                self.line(last),
            );
        }
        Some(last)
    }

    /// Records that `place` has `count` elements `name`, the first at line
    /// `first` and the last, which is used, at line `last`.
    pub fn repeated(&self, place: &str, name: &str, count: usize, first: usize, last: usize) {
        let mut r = self.repeats.borrow_mut();
        if r.shown.len() >= REPEATS_SHOWN {
            r.more += 1;
            return;
        }
        let times = match count {
            2 => "twice".to_string(),
            _ => format!("{count} times"),
        };
        let line = if first == last {
            format!(
                "{}: {place} has <{name}> {times} on line {first}: the last is used, as BOINC's parser does",
                self.name
            )
        } else {
            let lines = match count {
                2 => format!("lines {first} and {last}"),
                _ => format!("lines {first} to {last}"),
            };
            format!(
                "{}: {place} has <{name}> {times} ({lines}): the last, at line {last}, is used, as BOINC's parser does",
                self.name
            )
        };
        r.shown.push(line);
    }

    /// The warnings on repeated elements of this file.
    pub fn repeat_warnings(&self) -> Vec<String> {
        let r = self.repeats.borrow();
        let mut w = r.shown.clone();
        if r.more > 0 {
            w.push(format!(
                "{}: {} more repeated elements: the last of each is used",
                self.name, r.more
            ));
        }
        w
    }

    /// The child `name` read by `read` (one of the checks below), with its
    /// line; None if there is no such child.
    pub fn opt<T>(
        &self,
        n: Node<'_, 'a>,
        name: &'static str,
        read: impl Fn(&Self, Node<'_, 'a>) -> Result<T, ImportError>,
    ) -> Result<Option<Located<T>>, ImportError> {
        match self.last(n, name) {
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
        match self.last(n, name) {
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
            Err(self.err(n, format!("must be a positive number, found {}", show(v))))
        }
    }

    pub fn non_negative(&self, n: Node<'_, 'a>) -> Result<f64, ImportError> {
        let v = self.num(n)?;
        if v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(n, format!("must be zero or more, found {}", show(v))))
        }
    }

    /// A fraction in (0, 1].
    pub fn fraction(&self, n: Node<'_, 'a>) -> Result<f64, ImportError> {
        let v = self.num(n)?;
        if v > 0.0 && v <= 1.0 {
            Ok(v)
        } else {
            Err(self.err(
                n,
                format!("must be a fraction in (0, 1], found {}", show(v)),
            ))
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
                format!(
                    "must be a whole number of at least {min}, found {}",
                    show(v)
                ),
            ))
        }
    }

    /// A number from `lo` to `hi`, in `unit` (FLOPS, bytes, ...); `why`
    /// says what the bounds are, in a few words.
    pub fn within(
        &self,
        n: Node<'_, 'a>,
        (lo, hi): (f64, f64),
        unit: &str,
        why: &str,
    ) -> Result<f64, ImportError> {
        let v = self.num(n)?;
        if v < lo {
            return Err(self.err(
                n,
                format!("{} {unit} is less than {} {unit}, {why}", show(v), show(lo)),
            ));
        }
        if v > hi {
            return Err(self.err(
                n,
                format!("{} {unit} is more than {} {unit}, {why}", show(v), show(hi)),
            ));
        }
        Ok(v)
    }

    /// A `<d_total>`: at least a byte. BOINC allows a percentage of it
    /// (`allowed_disk_usage`), and its scheduler sends a host whose total is
    /// 0 no work ("if they're zero, client will get no work",
    /// `sched_send.cpp`): such a host cannot be simulated, so 0 is refused,
    /// not taken as absent.
    pub fn disk_total(&self, n: Node<'_, 'a>) -> Result<f64, ImportError> {
        let v = self.num(n)?;
        if v == 0.0 {
            return Err(self.err(
                n,
                "0 bytes: BOINC would allow no disk space on this host, and its scheduler sends such a host no work; give the disk's size in bytes (or remove <d_total> for vcsim's default, 100 GB)",
            ));
        }
        if v < 1.0 {
            return Err(self.err(
                n,
                format!(
                    "{} bytes: a disk needs at least 1 byte (the value is in bytes, not GB)",
                    show(v)
                ),
            ));
        }
        self.bytes(n)
    }

    /// A size in bytes: from 0 to [`MAX_BYTES`].
    pub fn bytes(&self, n: Node<'_, 'a>) -> Result<f64, ImportError> {
        let v = self.non_negative(n)?;
        if v > MAX_BYTES {
            return Err(self.err(
                n,
                format!(
                    "{} bytes is more than {} bytes (a zettabyte)",
                    show(v),
                    show(MAX_BYTES)
                ),
            ));
        }
        Ok(v)
    }

    /// The FLOPS of one CPU or GPU instance: the scenario's bounds.
    pub fn device_flops(&self, n: Node<'_, 'a>) -> Result<f64, ImportError> {
        self.within(
            n,
            (MIN_FLOPS_PER_SECOND, MAX_FLOPS_PER_SECOND),
            "FLOPS",
            "the bounds of vcsim's devices (a kiloFLOPS to an exaFLOPS)",
        )
    }

    /// An app version's `<flops>`, the speed BOINC runs it at: at least the
    /// slowest device, at most every CPU (or GPU) of the largest host at the
    /// fastest device's speed.
    pub fn version_flops(&self, n: Node<'_, 'a>) -> Result<f64, ImportError> {
        self.within(
            n,
            (
                MIN_FLOPS_PER_SECOND,
                MAX_FLOPS_PER_SECOND * MAX_NCPUS.max(MAX_GPUS) as f64,
            ),
            "FLOPS",
            "the bounds of vcsim's devices (a kiloFLOPS, to every CPU of the largest host at an exaFLOPS each)",
        )
    }

    /// FLOPs of one job (an estimate, a mean; a deviation may be 0): at
    /// least one, at most the scenario's bound, so that their ratios and
    /// products stay finite.
    pub fn job_flops(&self, n: Node<'_, 'a>, zero_ok: bool) -> Result<f64, ImportError> {
        if zero_ok {
            self.non_negative(n)?;
        } else {
            self.positive(n)?;
        }
        self.within(
            n,
            (if zero_ok { 0.0 } else { 1.0 }, MAX_JOB_FLOPS),
            "FLOPs",
            "the bounds of one job in vcsim (one FLOP to 1e30)",
        )
    }

    /// A Unix time in seconds, within [`MAX_TIME`] of 1970.
    pub fn time(&self, n: Node<'_, 'a>) -> Result<f64, ImportError> {
        self.within(
            n,
            (-MAX_TIME, MAX_TIME),
            "s",
            "the times vcsim reads (Unix times within some 31,700 years of 1970)",
        )
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

/// An element's tag as written, prefix included: BOINC's parser compares
/// the literal text, so `<x:p_ncpus>` is not `<p_ncpus>` (a namespace-aware
/// local name would take it for one).
pub fn tag<'i>(n: Node<'_, 'i>) -> &'i str {
    let name = n.tag_name().name();
    if n.tag_name().namespace().is_none() {
        return name;
    }
    let text = n.document().input_text();
    let start = n.range().start + 1;
    let len = text[start..]
        .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
        .unwrap_or(text.len() - start);
    &text[start..start + len]
}

/// The root's children, each parsed as its own document.
pub struct Children<'s, 'a> {
    src: &'s Src<'a>,
    scanner: Option<Scanner<'a>>,
    done: bool,
}

impl<'a> Iterator for Children<'_, 'a> {
    type Item = Result<Document<'a>, ImportError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let src = self.src;
        if self.scanner.is_none() {
            match Scanner::start(src.text) {
                Ok((sc, _)) => self.scanner = Some(sc),
                Err(e) => {
                    self.done = true;
                    return Some(Err(src.scan_err(e)));
                }
            }
        }
        let sc = self.scanner.as_mut()?;
        let r = match sc.next_child() {
            Ok(Some(range)) => src.parse_range(range),
            Ok(None) => {
                self.done = true;
                return None;
            }
            Err(e) => Err(src.scan_err(e)),
        };
        if r.is_err() {
            self.done = true;
        }
        Some(r)
    }
}

/// Child elements.
pub fn elems<'a, 'i>(n: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    n.children().filter(|c| c.is_element())
}

/// The tags of the child elements of `n` that are not in `used`, in order.
pub fn unread<'i>(n: Node<'_, 'i>, used: &[&str]) -> Vec<&'i str> {
    elems(n).map(tag).filter(|t| !used.contains(t)).collect()
}

/// Distinct tags listed per place; more are counted, not named, so that
/// hostile input cannot grow the list without bound.
const MAX_TAGS_PER_PLACE: usize = 1000;
/// Tags named in one warning line.
const TAGS_SHOWN: usize = 50;

/// Tags present in the input that vcsim does not model, by where they were
/// found; reported as one warning line per place.
#[derive(Default)]
pub struct Unmodelled {
    by_place: BTreeMap<String, Place>,
    key: String,
}

#[derive(Default)]
struct Place {
    tags: BTreeMap<String, usize>,
    /// Occurrences of tags beyond `MAX_TAGS_PER_PLACE` distinct ones.
    others: usize,
}

impl Unmodelled {
    pub fn add(&mut self, src: &Src, place: &str, tagname: &str) {
        use std::fmt::Write;
        self.key.clear();
        let _ = write!(self.key, "{}: <{}>", src.short_name(), place);
        if !self.by_place.contains_key(self.key.as_str()) {
            self.by_place.insert(self.key.clone(), Place::default());
        }
        let Some(p) = self.by_place.get_mut(self.key.as_str()) else {
            return;
        };
        if let Some(n) = p.tags.get_mut(tagname) {
            *n += 1;
        } else if p.tags.len() < MAX_TAGS_PER_PLACE {
            p.tags.insert(tagname.to_string(), 1);
        } else {
            p.others += 1;
        }
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
            .map(|(place, p)| {
                let mut list: Vec<String> = p
                    .tags
                    .iter()
                    .take(TAGS_SHOWN)
                    .map(|(t, n)| {
                        if *n > 1 {
                            format!("<{t}> (x{n})")
                        } else {
                            format!("<{t}>")
                        }
                    })
                    .collect();
                let hidden: usize = p.tags.values().skip(TAGS_SHOWN).sum::<usize>() + p.others;
                if hidden > 0 {
                    list.push(format!("and {hidden} more"));
                }
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
    let doc = src.document().expect("snippet parses");
    f(&src, doc.root_element())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_error(text: &str) -> ImportError {
        let src = Src::parse(Path::new("f.xml"), text).unwrap();
        src.children().find_map(|d| d.err()).expect("an error")
    }

    #[test]
    fn errors_in_an_element_are_placed_in_the_file() {
        // roxmltree sees the element alone; its positions are moved back to
        // where a parse of the whole file puts them.
        for (text, line, at) in [
            ("<r>\n<a/>\n  <b>x &bogus; y</b>\n</r>", 3, "3:8"),
            ("<r>\n<b>\n\n  <c>&amp;&#xZZ;</c></b></r>", 4, "4:11"),
            ("<r><b>\u{e9}\u{e9} <c>&x;</c></b></r>", 1, "1:13"),
        ] {
            let e = first_error(text);
            assert_eq!(e.line, Some(line), "{e}");
            assert!(e.message.ends_with(&format!(" at {at}")), "{e}");
            let whole = roxmltree::Document::parse(text).unwrap_err();
            assert_eq!(whole.pos().to_string(), at);
        }
    }

    #[test]
    fn lines_from_the_block_index() {
        let text = format!("{}\n{}x\n", "a".repeat(200), "b\n".repeat(100));
        let src = Src::parse(Path::new("f.xml"), "<r/>").unwrap();
        assert_eq!(src.line_at(0), 1);
        let src = Src {
            line_index: {
                let mut v = Vec::new();
                let mut line = 1u32;
                for block in text.as_bytes().chunks(LINE_BLOCK) {
                    v.push(line);
                    line += block.iter().filter(|b| **b == b'\n').count() as u32;
                }
                v
            },
            text: &text,
            ..src
        };
        for (at, _) in text.char_indices().step_by(7) {
            let want = text[..at].matches('\n').count() + 1;
            assert_eq!(src.line_at(at), want, "offset {at}");
        }
        assert_eq!(src.line_at(text.len() + 10), 103);
    }

    #[test]
    fn unmodelled_tags_are_capped() {
        let src = Src::parse(Path::new("f.xml"), "<r/>").unwrap();
        let mut un = Unmodelled::default();
        for i in 0..(MAX_TAGS_PER_PLACE + 5) {
            un.add(&src, "p", &format!("t{i:05}"));
        }
        un.add(&src, "p", "t00000");
        let w = un.warnings();
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("f.xml: <p>: not modelled by vcsim, ignored: <t00000> (x2), <t00001>"),
            "{}",
            &w[0][..80]
        );
        assert!(
            w[0].ends_with(&format!("and {} more", MAX_TAGS_PER_PLACE + 5 - TAGS_SHOWN)),
            "{}",
            w[0]
        );
    }
}
