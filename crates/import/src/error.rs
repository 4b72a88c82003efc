//! An import's error: the file, the line and the element at fault.

use std::fmt;
use std::path::PathBuf;

/// Bad input: the file, and where in it.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportError {
    pub file: PathBuf,
    /// 1-based line.
    pub line: Option<usize>,
    /// The XML element at fault.
    pub element: Option<String>,
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        write!(f, ": ")?;
        if let Some(e) = &self.element {
            write!(f, "<{e}>: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ImportError {}
