//! Calls from a plugin back into vcsim (ABI 2.2's `list_sim`), and the
//! size check every view of the host passes. With `strided` and
//! `__shims`, the SDK's only unsafe code: each call trusts what the ABI
//! promises of the host (rule 5 and the callbacks' contract).

use crate::strided::Strided;
use vcsim_dylib_abi::{self as abi, ErrBuf};

/// A host simulation's arrays: per resource, and deadline misses per
/// (project, resource).
pub(crate) type ListSimParts<'a> = (Strided<'a, abi::ListSimRsc>, Strided<'a, u32>);

/// Panics unless the host's struct is at least as long as this SDK's (a
/// host never passes a shorter one: it refuses plugins of a newer minor,
/// and every minor's struct holds the earlier minors').
pub(crate) fn check_size<T>(size: u32, minor: u32, what: &str) {
    let need = std::mem::size_of::<T>();
    assert!(
        size as usize >= need,
        "vcsim passed a {what} of {size} bytes (ABI {}.{minor}); this plugin's is {need} bytes \
         (ABI {}.{}): host and plugin disagree on the ABI",
        abi::ABI_VERSION,
        abi::ABI_VERSION,
        abi::ABI_MINOR
    );
}

/// The host's simulation of `raw` through its `list_sim` callback (ABI
/// 2.2); `None` if the host offers none.
///
/// Sound because `raw` is a host view of the call in progress (a `View` of
/// the SDK is only ever made from one, or by tests with no callback), and
/// the host's callback contract: it returns null or a `ListSim` borrowed
/// for the call, which `raw`'s borrow does not outlive.
pub(crate) fn list_sim(raw: &abi::View) -> Result<Option<ListSimParts<'_>>, String> {
    let Some(f) = raw.list_sim else {
        return Ok(None);
    };
    let mut msg = vec![0u8; 1024];
    let mut err = ErrBuf {
        ptr: msg.as_mut_ptr(),
        cap: msg.len(),
        len: 0,
    };
    // SAFETY: see above; `err` describes `msg`, live and writable.
    let out = unsafe { f(raw.host_ctx, &mut err) };
    if out.is_null() {
        let n = err.len.min(msg.len());
        let m = String::from_utf8_lossy(&msg[..n]).into_owned();
        return Err(if m.is_empty() {
            "vcsim's list_sim failed".to_string()
        } else {
            m
        });
    }
    // SAFETY: non-null: a `ListSim` of the host, valid for the call.
    let s = unsafe { &*out };
    check_size::<abi::ListSim>(s.size, s.minor, "list simulation");
    // SAFETY: its arrays describe their elements, valid for the call.
    unsafe {
        Ok(Some((
            Strided::from_abi(&s.rsc, "list simulation resources"),
            Strided::from_abi(&s.deadlines_missed, "deadline misses"),
        )))
    }
}
