//! The registry a command runs with: the built-ins, plus the policies of
//! `--plugin` libraries and of scripts named in policy specs.

use crate::Failure;
use std::path::PathBuf;
use vcsim_framework::{PolicySpec, Registry};

/// Builds the registry for these plugins and specs, and checks that every
/// name in every spec resolves before the first run starts.
pub fn registry_for(plugins: &[PathBuf], specs: &[PolicySpec]) -> Result<Registry, Failure> {
    let reg = Registry::builtins().map_err(Failure::input)?;
    for lib in plugins {
        return Err(Failure::input(format!(
            "{}: compiled plugins are not supported by this build yet",
            lib.display()
        )));
    }
    for spec in specs {
        for name in &spec.names {
            if name.ends_with(".rhai") {
                return Err(Failure::input(format!(
                    "{name}: rhai scripts are not supported by this build yet"
                )));
            }
        }
        reg.resolve(spec).map_err(Failure::input)?;
    }
    Ok(reg)
}
