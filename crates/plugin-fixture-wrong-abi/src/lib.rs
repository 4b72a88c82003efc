//! Test fixture: exports `vcsim_plugin_cpu_v1` by hand, as a plugin built
//! against a future SDK whose export still sits at that symbol would, but
//! with an ABI version this vcsim does not speak. The host must refuse it
//! before calling anything of it. Its only table function would abort the
//! test if it were ever called.

use vcsim_plugin_abi::{CpuTable, Export, StaticStr, ABI_VERSION, RUSTC_VERSION};

static EXPORT: Export<CpuTable> = Export {
    abi_version: ABI_VERSION + 1,
    size: std::mem::size_of::<Export<CpuTable>>() as u32,
    rustc: StaticStr::new(RUSTC_VERSION),
    plugin: StaticStr::new("vcsim-plugin-fixture-wrong-abi"),
    count: 1,
    table,
};

extern "C" fn table(_i: usize) -> Option<&'static CpuTable> {
    std::process::abort()
}

#[no_mangle]
pub extern "C" fn vcsim_plugin_cpu_v1() -> &'static Export<CpuTable> {
    &EXPORT
}
