//! Policies written as rhai scripts (issue 7).

use crate::Failure;
use std::path::Path;
use vcsim_framework::{Family, Registry};

/// Adds the script at `path` to the registry as a policy of `family`, named by its path.
pub fn register_script(_reg: &mut Registry, _family: Family, path: &str) -> Result<(), Failure> {
    Err(Failure::input(format!(
        "{path}: rhai scripts are not supported by this build yet"
    )))
}

/// `vcsim check` on a script.
pub fn check_script(file: &Path) -> Result<(), Failure> {
    Err(Failure::input(format!(
        "{}: rhai scripts are not supported by this build yet",
        file.display()
    )))
}
