//! A policy's error.

use crate::family::Family;
use std::fmt;

/// An error raised by a policy (a script error, a bad internal state...).
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyError {
    pub message: String,
    /// The family of the policy that raised it, when it is not the one the
    /// simulator called: an estimator's error met inside a CPU scheduler's
    /// call names the estimator.
    pub family: Option<Family>,
}

impl PolicyError {
    pub fn new(message: impl Into<String>) -> PolicyError {
        PolicyError {
            message: message.into(),
            family: None,
        }
    }
    /// The error, blamed on `family` unless it already names one.
    pub fn of(self, family: Family) -> PolicyError {
        PolicyError {
            family: self.family.or(Some(family)),
            ..self
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
