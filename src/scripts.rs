//! Policies written as rhai scripts (issue 7): the runner's glue to
//! `vcsim-script`.

use crate::Failure;
use std::path::Path;
use vcsim_framework::{Family, Registry};

/// Compiles the script at `path` and adds it to the registry as a policy of
/// `family`, named by its path. A syntax error names file, line and column.
pub fn register_script(reg: &mut Registry, family: Family, path: &str) -> Result<(), Failure> {
    vcsim_script::register(reg, family, path).map_err(Failure::input)
}

/// `vcsim check` on a script: compiles it, says which families it can
/// serve, and runs its `init()` once.
pub fn check_script(file: &Path) -> Result<(), Failure> {
    let msg = vcsim_script::check(file).map_err(Failure::input)?;
    println!("{msg}");
    Ok(())
}
