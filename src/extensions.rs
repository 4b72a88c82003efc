//! The registry a command runs with: the built-ins, plus the policies of
//! `--plugin` libraries and of scripts named in policy specs.

use crate::Failure;
use std::path::PathBuf;
use vcsim_framework::{Family, PolicySpec, Registry};

/// Builds the registry for these plugins and specs, and checks that every
/// name in every spec resolves before the first run starts.
pub fn registry_for(plugins: &[PathBuf], specs: &[PolicySpec]) -> Result<Registry, Failure> {
    let mut reg = Registry::builtins().map_err(Failure::input)?;
    crate::dylibs::load_plugins(&mut reg, plugins)?;
    for spec in specs {
        for f in Family::ALL {
            let name = spec.name(f);
            if name.ends_with(".rhai") && reg.get(f, name).is_none() {
                crate::scripts::register_script(&mut reg, f, name)?;
            }
        }
        reg.resolve(spec).map_err(Failure::input)?;
    }
    Ok(reg)
}
