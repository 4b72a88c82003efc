//! The five policy families.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    Cpu,
    Fetch,
    Send,
    Estimate,
    Disk,
}

impl Family {
    pub const ALL: [Family; 5] = [
        Family::Cpu,
        Family::Fetch,
        Family::Send,
        Family::Estimate,
        Family::Disk,
    ];
    /// The key used in an explicit policy spec (`cpu=cs2`).
    pub fn key(self) -> &'static str {
        match self {
            Family::Cpu => "cpu",
            Family::Fetch => "fetch",
            Family::Send => "send",
            Family::Estimate => "estimate",
            Family::Disk => "disk",
        }
    }
    pub fn from_key(s: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.key() == s)
    }
    /// The paper's prefix (`CS`, `WF`, `WS`, `JC`).
    pub fn paper_prefix(self) -> Option<&'static str> {
        match self {
            Family::Cpu => Some("CS"),
            Family::Fetch => Some("WF"),
            Family::Send => Some("WS"),
            Family::Estimate => Some("JC"),
            Family::Disk => None,
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
    /// The built-in used when a spec leaves the family out.
    pub fn default_name(self) -> &'static str {
        match self {
            Family::Cpu => "cs2",
            Family::Fetch => "wf2",
            Family::Send => "ws2",
            Family::Estimate => "jc2",
            Family::Disk => "none",
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}
