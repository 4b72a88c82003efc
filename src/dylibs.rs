//! Compiled policy plugins loaded from dylibs (issue 8).

use crate::Failure;
use std::path::{Path, PathBuf};
use vcsim_framework::Registry;

/// Loads every `--plugin` library and adds its policies to the registry.
pub fn load_plugins(_reg: &mut Registry, libs: &[PathBuf]) -> Result<(), Failure> {
    match libs.first() {
        None => Ok(()),
        Some(l) => Err(Failure::input(format!(
            "{}: compiled plugins are not supported by this build yet",
            l.display()
        ))),
    }
}

/// `vcsim check` on a plugin library.
pub fn check_plugin(file: &Path) -> Result<(), Failure> {
    Err(Failure::input(format!(
        "{}: compiled plugins are not supported by this build yet",
        file.display()
    )))
}
