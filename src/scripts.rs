//! Policies written as rhai scripts (issue 7): the runner's glue to
//! `vcsim-script`.

use crate::Failure;
use std::path::Path;
use vcsim_framework::{Family, PolicySpec, Registry, Scenario, SimOptions};

/// Compiles the script at `path` and adds it to the registry as a policy of
/// `family`, named by its path. A syntax error names file, line and column.
pub fn register_script(reg: &mut Registry, family: Family, path: &str) -> Result<(), Failure> {
    vcsim_script::register(reg, family, path).map_err(Failure::input)
}

/// The scenario of `check`'s dry run: two CPUs and a GPU, two projects
/// (one with a GPU app), five days; small enough to run in a blink, rich
/// enough to call every hook of every family (files, for a disk manager's
/// `make_room`).
const DRY_RUN: &str = r#"
name = "check-dry-run"
seed = 1
duration_days = 5
[host]
ncpus = 2
cpu_flops = 1e9
[[host.gpu]]
kind = "nvidia"
count = 1
flops = 3e9
[[project]]
name = "A"
resource_share = 100
latency_bound_days = 2
[[project.app]]
name = "a"
flops_estimate = 1.8e13
flops_mean = 1.8e13
flops_stddev = 3e12
input_mb = 10
output_mb = 2
[[project]]
name = "B"
resource_share = 50
latency_bound_days = 1
[[project.app]]
name = "b"
flops_estimate = 7.2e12
flops_mean = 1.4e13
[[project.app]]
name = "g"
cpus = 0.1
gpu = { kind = "nvidia", count = 1 }
flops_estimate = 2.2e13
flops_mean = 2.2e13
"#;

/// `vcsim check` on a script: compiles it, says which families it can
/// serve, runs its `init()` once, then runs it for five simulated days (in
/// each family it serves, beside the default policies) so that an error
/// that only shows when a hook is called is found now, with a hint for
/// rhai's common mistakes.
pub fn check_script(file: &Path) -> Result<(), Failure> {
    let msg = vcsim_script::check(file).map_err(Failure::input)?;
    for w in vcsim_script::near_miss_hooks(file).map_err(Failure::input)? {
        eprintln!("warning: {}", crate::output::printable(&w));
    }
    let path = file.to_string_lossy().into_owned();
    let scn = Scenario::from_toml_str(DRY_RUN, Path::new("check-dry-run.toml"))
        .map_err(|e| Failure::input(e.to_string()))?;
    let mut stopped_at = None;
    for family in vcsim_script::families(file).map_err(Failure::input)? {
        let mut reg = Registry::builtins().map_err(Failure::input)?;
        register_script(&mut reg, family, &path)?;
        let mut spec = PolicySpec::default();
        spec.names[family.index()] = path.clone();
        // A budget of work keeps `check` quick on a slow script: where it
        // is spent, the dry run stops, and says how far it went.
        vcsim_script::limit_run(Some(DRY_RUN_UNITS));
        let ran = vcsim_framework::run_spec(&scn, &reg, &spec, SimOptions::default());
        let stopped = vcsim_script::run_stopped();
        vcsim_script::limit_run(None);
        match (ran, stopped) {
            (Err(_), Some(t)) => {
                stopped_at.get_or_insert((family, t));
            }
            (Err(e), None) => {
                let hint = hint(&e).map_or(String::new(), |h| format!("\nhint: {h}"));
                return Err(Failure::input(format!(
                    "{path}: compiles, but fails on a 5-day dry run (2 CPUs, a GPU, 2 projects) as the {family} policy: {e}{hint}"
                )));
            }
            (Ok(_), _) => {}
        }
    }
    match stopped_at {
        None => crate::output::emitln(&format!(
            "{msg}; a 5-day dry run calls its hooks without error"
        )),
        Some((family, t)) => crate::output::emitln(&format!(
            "{msg}; a dry run calls its hooks without error until {} (as the {family} policy), where `check` stopped it: the script had done the work it may do in a check (50,000,000 operations, a hook call counting {})",
            vcsim_framework::time::format_time(t),
            vcsim_script::CALL_UNITS
        )),
    }
}

/// The work a script may do in `check`'s dry run (operations; see
/// `vcsim_script::limit_run`): a few seconds of it at most, and ten times
/// what the heaviest shipped script does in five days (jc2.rhai, 4.4
/// million). The message writes it out: keep the two equal.
const DRY_RUN_UNITS: u64 = 50_000_000;

/// A hint for the mistakes rhai newcomers make most, from the error's text.
fn hint(error: &str) -> Option<&'static str> {
    let has = |s: &str| error.contains(s);
    let missing = has("Function not found");
    if has("Function not found: now (") {
        Some("`v.now` is a property, not a method: write `v.now`, without `()`")
    } else if has("Function not found: step (") || has("Unknown property 'step'") {
        Some("the step's length is a preference: `v.prefs.step` (seconds), without `()`")
    } else if (has("Function not found: .. (") || has("Function not found: ..= (")) && has("f64") {
        Some("a range needs integers: `0..v.host.ncpus` is a float range; write `0..v.host.ncpus.to_int()`")
    } else if missing && (has("((),") || has(", ())")) {
        Some("`()` is an unset value: state kept in `this` must come from `fn init()`, which returns it as a map (`fn init() { #{ count: 0 } }`); or a function returned nothing")
    } else if missing {
        Some("the script API's functions and properties are listed on the book's page \"Script API reference\"")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_mistakes_get_a_hint() {
        assert!(hint("Function not found: now (ViewH) (line 3, position 9)")
            .unwrap()
            .contains("a property"));
        assert!(
            hint("Unknown property 'step' - a getter is not registered for type 'View'")
                .unwrap()
                .contains("`v.prefs.step`")
        );
        assert!(hint("Function not found: .. (i64, f64)")
            .unwrap()
            .contains("integers"));
        assert!(hint("Function not found: + ((), i64)")
            .unwrap()
            .contains("init"));
        assert!(hint("all fine").is_none());
    }
}
