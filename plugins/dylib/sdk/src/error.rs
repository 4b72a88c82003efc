//! A policy's error.

use std::fmt;

/// An error raised by a policy: it ends the run, with its message.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyError {
    pub message: String,
}

impl PolicyError {
    pub fn new(message: impl Into<String>) -> PolicyError {
        PolicyError {
            message: message.into(),
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PolicyError {}

impl From<String> for PolicyError {
    fn from(s: String) -> Self {
        PolicyError::new(s)
    }
}

impl From<&str> for PolicyError {
    fn from(s: &str) -> Self {
        PolicyError::new(s)
    }
}

pub type PolicyResult<T> = Result<T, PolicyError>;
