//! Records the compiler that builds this crate, so that a host and a plugin
//! can tell whether they were built by the same `rustc`.

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown rustc".into());
    println!("cargo:rustc-env=VCSIM_PLUGIN_RUSTC={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
