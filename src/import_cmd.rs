//! `vcsim import`, and BOINC files accepted where a scenario is expected (issue 9).

use crate::Failure;
use std::path::Path;
use vcsim_framework::Scenario;

pub fn import(input: &Path, _out: Option<&Path>) -> Result<(), Failure> {
    Err(Failure::input(format!(
        "{}: import is not supported by this build yet",
        input.display()
    )))
}

/// A BOINC file or directory given where a scenario is expected; None if
/// `path` is not one (then it is read as a vcsim TOML scenario).
pub fn load_boinc(_path: &Path) -> Option<Result<Scenario, Failure>> {
    None
}
