//! A first, linear pass over an XML file that bounds what the parser will
//! meet, and cuts the file into its top-level elements.
//!
//! `roxmltree` builds a tree of the whole text, recurses once per level of
//! nesting, copies text each time a CDATA section joins it, and compares
//! every attribute with the element's others. On hostile input each of these
//! is a stack overflow, quadratic time or a large multiple of the file in
//! memory. This pass runs first and refuses, with the line and the element:
//! a document type declaration (the only way to define entities, so no
//! entity expansion is possible), nesting deeper than [`MAX_DEPTH`], more
//! than [`MAX_ATTRIBUTES`] attributes on an element, more than
//! [`MAX_CDATA_RUN`] CDATA sections joined into one text, and more than
//! [`MAX_NAMESPACES`] namespace declarations. The importer then parses one
//! child of the root element at a time, so memory follows the largest
//! element, not the file.
//!
//! The pass only needs to be conservative: everything it lets through is
//! parsed (and checked for well-formedness) by `roxmltree` afterwards.

use std::ops::Range;

/// Deepest nesting accepted; BOINC's files nest a few levels.
pub const MAX_DEPTH: usize = 100;
/// Attributes on one element; BOINC's files have at most one or two.
pub const MAX_ATTRIBUTES: usize = 32;
/// CDATA sections joined into one text (BOINC writes one per `<stderr_out>`).
pub const MAX_CDATA_RUN: usize = 16;
/// Namespace declarations in one file (BOINC's files have none).
pub const MAX_NAMESPACES: usize = 16;

/// Where the pass stopped, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanError {
    /// Byte offset in the text.
    pub at: usize,
    /// The element at fault, when there is one.
    pub element: Option<String>,
    pub message: String,
}

/// The root element's start tag.
#[derive(Debug, Clone, PartialEq)]
pub struct Root<'a> {
    pub name: &'a str,
    /// Offset of its `<`.
    pub at: usize,
}

/// The pass over one text; [`Scanner::next_child`] yields the root's children.
pub struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    /// Open elements: name and offset of the start tag.
    stack: Vec<(&'a str, usize)>,
    namespaces: usize,
    finished: bool,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'a> Scanner<'a> {
    /// Reads the prolog up to the root element's start tag.
    pub fn start(text: &'a str) -> Result<(Scanner<'a>, Root<'a>), ScanError> {
        let mut s = Scanner {
            text,
            b: text.as_bytes(),
            pos: if text.starts_with('\u{feff}') { 3 } else { 0 },
            stack: Vec::new(),
            namespaces: 0,
            finished: false,
        };
        loop {
            s.skip_space();
            if s.pos >= s.b.len() {
                return Err(s.err(s.pos, None, "no root element"));
            }
            if s.starts("<?") {
                s.skip_past("?>", "a processing instruction")?;
            } else if s.starts("<!--") {
                s.skip_past("-->", "a comment")?;
            } else if s.starts("<!DOCTYPE") {
                return Err(s.err(
                    s.pos,
                    Some("!DOCTYPE"),
                    "a document type declaration: BOINC's files have none, and vcsim refuses them (they can define entities that expand without bound)",
                ));
            } else if s.starts("<!") {
                return Err(s.err(s.pos, None, "malformed XML: unknown token"));
            } else if s.b[s.pos] == b'<' {
                let at = s.pos;
                let (name, empty) = s.start_tag()?;
                if empty {
                    s.epilog()?;
                } else {
                    s.stack.push((name, at));
                }
                return Ok((s, Root { name, at }));
            } else {
                return Err(s.err(s.pos, None, "malformed XML: text before the root element"));
            }
        }
    }

    /// The byte range of the root's next child element, or None after the
    /// root's end tag (and the rest of the file) has been read.
    pub fn next_child(&mut self) -> Result<Option<Range<usize>>, ScanError> {
        if self.finished {
            return Ok(None);
        }
        loop {
            if self.pos >= self.b.len() {
                return Err(self.unclosed());
            }
            if self.b[self.pos] != b'<' {
                self.pos = self.text[self.pos..]
                    .find('<')
                    .map_or(self.b.len(), |i| self.pos + i);
            } else if self.starts("<!--") {
                self.skip_past("-->", "a comment")?;
            } else if self.starts("<![CDATA[") {
                self.skip_past("]]>", "a CDATA section")?;
            } else if self.starts("<?") {
                self.skip_past("?>", "a processing instruction")?;
            } else if self.starts("<!") {
                return Err(self.err(self.pos, None, "malformed XML: unknown token"));
            } else if self.starts("</") {
                self.end_tag()?;
                self.epilog()?;
                return Ok(None);
            } else {
                let at = self.pos;
                let (name, empty) = self.start_tag()?;
                if !empty {
                    self.push(name, at)?;
                    self.content()?;
                }
                return Ok(Some(at..self.pos));
            }
        }
    }

    /// The content of the element just opened, up to and with its end tag.
    fn content(&mut self) -> Result<(), ScanError> {
        let depth = self.stack.len() - 1;
        let mut cdata = 0;
        while self.stack.len() > depth {
            if self.pos >= self.b.len() {
                return Err(self.unclosed());
            }
            if self.b[self.pos] != b'<' {
                self.pos = self.text[self.pos..]
                    .find('<')
                    .map_or(self.b.len(), |i| self.pos + i);
                continue;
            }
            if self.starts("<![CDATA[") {
                cdata += 1;
                if cdata > MAX_CDATA_RUN {
                    let el = self.stack.last().map(|e| e.0);
                    return Err(self.err(
                        self.pos,
                        el,
                        format!("more than {MAX_CDATA_RUN} CDATA sections in one text: refused"),
                    ));
                }
                self.skip_past("]]>", "a CDATA section")?;
                continue;
            }
            cdata = 0;
            if self.starts("<!--") {
                self.skip_past("-->", "a comment")?;
            } else if self.starts("<?") {
                self.skip_past("?>", "a processing instruction")?;
            } else if self.starts("<!") {
                return Err(self.err(self.pos, None, "malformed XML: unknown token"));
            } else if self.starts("</") {
                self.end_tag()?;
            } else {
                let at = self.pos;
                let (name, empty) = self.start_tag()?;
                if !empty {
                    self.push(name, at)?;
                }
            }
        }
        Ok(())
    }

    fn push(&mut self, name: &'a str, at: usize) -> Result<(), ScanError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(self.err(
                at,
                Some(name),
                format!("elements nested more than {MAX_DEPTH} deep: BOINC's files nest a few levels, and vcsim refuses deeper ones"),
            ));
        }
        self.stack.push((name, at));
        Ok(())
    }

    /// A start tag at `pos`: its name, and whether it is empty (`<a/>`).
    fn start_tag(&mut self) -> Result<(&'a str, bool), ScanError> {
        let at = self.pos;
        let name_start = at + 1;
        let mut i = name_start;
        while i < self.b.len() && !is_space(self.b[i]) && !matches!(self.b[i], b'>' | b'/' | b'<') {
            i += 1;
        }
        if i == name_start {
            return Err(self.err(at, None, "malformed XML: invalid name token"));
        }
        let name = &self.text[name_start..i];
        let mut attributes = 0;
        loop {
            while i < self.b.len() && is_space(self.b[i]) {
                i += 1;
            }
            match self.b.get(i) {
                None => {
                    self.pos = i;
                    return Err(self.err(i, Some(name), "malformed XML: unexpected end of stream"));
                }
                Some(b'>') => {
                    self.pos = i + 1;
                    return Ok((name, false));
                }
                Some(b'/') => {
                    if self.b.get(i + 1) == Some(&b'>') {
                        self.pos = i + 2;
                        return Ok((name, true));
                    }
                    return Err(self.err(i, Some(name), "malformed XML: expected '>' after '/'"));
                }
                Some(_) => {
                    let a_start = i;
                    while i < self.b.len()
                        && !is_space(self.b[i])
                        && !matches!(self.b[i], b'=' | b'>' | b'/' | b'<')
                    {
                        i += 1;
                    }
                    let aname = &self.text[a_start..i];
                    while i < self.b.len() && is_space(self.b[i]) {
                        i += 1;
                    }
                    if aname.is_empty() || self.b.get(i) != Some(&b'=') {
                        return Err(self.err(i, Some(name), "malformed XML: malformed attribute"));
                    }
                    i += 1;
                    while i < self.b.len() && is_space(self.b[i]) {
                        i += 1;
                    }
                    let q = match self.b.get(i) {
                        Some(&q) if q == b'"' || q == b'\'' => q,
                        _ => {
                            return Err(self.err(
                                i,
                                Some(name),
                                "malformed XML: expected a quoted attribute value",
                            ))
                        }
                    };
                    i += 1;
                    while i < self.b.len() && self.b[i] != q {
                        if self.b[i] == b'<' {
                            return Err(self.err(
                                i,
                                Some(name),
                                "malformed XML: unescaped '<' in an attribute value",
                            ));
                        }
                        i += 1;
                    }
                    if i >= self.b.len() {
                        return Err(self.err(
                            i,
                            Some(name),
                            "malformed XML: unexpected end of stream",
                        ));
                    }
                    i += 1;
                    attributes += 1;
                    if attributes > MAX_ATTRIBUTES {
                        return Err(self.err(
                            at,
                            Some(name),
                            format!("more than {MAX_ATTRIBUTES} attributes: refused"),
                        ));
                    }
                    if aname == "xmlns" || aname.starts_with("xmlns:") {
                        self.namespaces += 1;
                        if self.namespaces > MAX_NAMESPACES {
                            return Err(self.err(
                                at,
                                Some(name),
                                format!("more than {MAX_NAMESPACES} namespace declarations in the file: refused"),
                            ));
                        }
                    }
                }
            }
        }
    }

    /// An end tag at `pos`, which must close the innermost open element.
    fn end_tag(&mut self) -> Result<(), ScanError> {
        let at = self.pos;
        let mut i = at + 2;
        while i < self.b.len() && !is_space(self.b[i]) && self.b[i] != b'>' && self.b[i] != b'<' {
            i += 1;
        }
        let name = &self.text[at + 2..i];
        while i < self.b.len() && is_space(self.b[i]) {
            i += 1;
        }
        if self.b.get(i) != Some(&b'>') {
            return Err(self.err(i, None, "malformed XML: expected '>' to end the end tag"));
        }
        match self.stack.pop() {
            Some((open, _)) if open == name => {
                self.pos = i + 1;
                Ok(())
            }
            Some((open, _)) => Err(self.err(
                at,
                Some(open),
                format!("malformed XML: expected '{open}' tag, not '{name}'"),
            )),
            None => Err(self.err(at, None, "malformed XML: an end tag with no start tag")),
        }
    }

    /// After the root element: only spaces, comments and processing instructions.
    fn epilog(&mut self) -> Result<(), ScanError> {
        loop {
            self.skip_space();
            if self.pos >= self.b.len() {
                self.finished = true;
                return Ok(());
            }
            if self.starts("<!--") {
                self.skip_past("-->", "a comment")?;
            } else if self.starts("<?") {
                self.skip_past("?>", "a processing instruction")?;
            } else {
                return Err(self.err(
                    self.pos,
                    None,
                    "malformed XML: content after the root element",
                ));
            }
        }
    }

    fn unclosed(&self) -> ScanError {
        let (name, at) = self.stack.last().copied().unwrap_or(("", self.pos));
        let _ = at;
        self.err(
            self.b.len(),
            Some(name).filter(|n| !n.is_empty()),
            "malformed XML: unexpected end of stream: the element is never closed",
        )
    }

    fn skip_space(&mut self) {
        while self.pos < self.b.len() && is_space(self.b[self.pos]) {
            self.pos += 1;
        }
    }

    fn starts(&self, p: &str) -> bool {
        self.b[self.pos..].starts_with(p.as_bytes())
    }

    /// Moves past the next `end`, which closes `what`.
    fn skip_past(&mut self, end: &str, what: &str) -> Result<(), ScanError> {
        match self.text[self.pos + 2..].find(end) {
            Some(i) => {
                self.pos += 2 + i + end.len();
                Ok(())
            }
            None => Err(self.err(
                self.pos,
                None,
                format!("malformed XML: {what} is never closed"),
            )),
        }
    }

    fn err(&self, at: usize, element: Option<&str>, message: impl Into<String>) -> ScanError {
        ScanError {
            at,
            element: element.map(str::to_string),
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn children(text: &str) -> Result<Vec<&str>, ScanError> {
        let (mut s, _) = Scanner::start(text)?;
        let mut out = Vec::new();
        while let Some(r) = s.next_child()? {
            out.push(&text[r]);
        }
        Ok(out)
    }

    #[test]
    fn cuts_the_root_into_children() {
        let text = "\u{feff}<?xml version=\"1.0\"?>\n<!-- c -->\n<r a=\"1\">\n<x>t<![CDATA[<y>]]></x> text <!-- <z> -->\n\
                    <y b='>'/><?pi <w>?><z><w><v/></w></z></r>\n<!-- end -->\n";
        assert_eq!(
            children(text).unwrap(),
            vec![
                "<x>t<![CDATA[<y>]]></x>",
                "<y b='>'/>",
                "<z><w><v/></w></z>"
            ]
        );
        let (_, root) = Scanner::start(text).unwrap();
        assert_eq!(root.name, "r");
        assert_eq!(children("<r/>").unwrap(), Vec::<&str>::new());
    }

    #[test]
    fn refuses_what_could_blow_up() {
        let e = children("<!DOCTYPE r [<!ENTITY e \"x\">]><r>&e;</r>").unwrap_err();
        assert_eq!((e.at, e.element.as_deref()), (0, Some("!DOCTYPE")));
        let deep = format!(
            "<r>{}{}</r>",
            "<a>".repeat(MAX_DEPTH),
            "</a>".repeat(MAX_DEPTH)
        );
        let e = children(&deep).unwrap_err();
        assert_eq!(e.element.as_deref(), Some("a"));
        assert_eq!(e.at, 3 * MAX_DEPTH, "{e:?}");
        let ok = format!(
            "<r>{}{}</r>",
            "<a>".repeat(MAX_DEPTH - 1),
            "</a>".repeat(MAX_DEPTH - 1)
        );
        assert_eq!(children(&ok).unwrap().len(), 1);
        let attrs: String = (0..=MAX_ATTRIBUTES).map(|i| format!(" a{i}='v'")).collect();
        let e = children(&format!("<r><x{attrs}/></r>")).unwrap_err();
        assert!(e.message.contains("attributes"), "{e:?}");
        let cdata = "<![CDATA[x]]>".repeat(MAX_CDATA_RUN + 1);
        let e = children(&format!("<r><x>{cdata}</x></r>")).unwrap_err();
        assert!(e.message.contains("CDATA"), "{e:?}");
        // Separated by elements, CDATA sections are separate texts.
        let cdata = "<![CDATA[x]]><b/>".repeat(MAX_CDATA_RUN + 1);
        assert!(children(&format!("<r><x>{cdata}</x></r>")).is_ok());
        let ns: String = (0..=MAX_NAMESPACES)
            .map(|i| format!("<x xmlns:n{i}='u'/>"))
            .collect();
        let e = children(&format!("<r>{ns}</r>")).unwrap_err();
        assert!(e.message.contains("namespace"), "{e:?}");
    }

    #[test]
    fn malformed() {
        for (text, what) in [
            ("", "no root element"),
            ("x<r/>", "text before"),
            ("<r></s>", "expected 'r' tag, not 's'"),
            ("<r><a></b></r>", "expected 'a' tag, not 'b'"),
            ("<r><a>", "never closed"),
            ("<r><!-- x", "comment is never closed"),
            ("<r><a b='<'/></r>", "unescaped"),
            ("<r><a b=c/></r>", "quoted"),
            ("<r/><s/>", "after the root"),
            ("<r><!DOCTYPE x></r>", "unknown token"),
            ("<r><></r>", "invalid name"),
            ("<r><a/ ></r>", "after '/'"),
        ] {
            let e = children(text).unwrap_err();
            assert!(e.message.contains(what), "{text}: {e:?}");
        }
    }
}
