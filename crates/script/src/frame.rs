//! What a hook call can see: the view (or the server's request), set for
//! the duration of one call in a scoped thread-local, so that the script's
//! handles (`Job`, `Project`, ...) are small indices and the getters read the
//! live state without copying it. Nothing outlives the call: a handle kept
//! in `this` is resolved again by job id at its next use.

use rhai::EvalAltResult;
use scoped_tls_hkt::scoped_thread_local;
use std::cell::RefCell;
use std::sync::Arc;
use vcsim_blocks::list_sim::ListSim;
use vcsim_framework::model::HostInfo;
use vcsim_framework::rng::SimRng;
use vcsim_framework::{Candidate, ServerRequest, View};

#[derive(Clone, Copy)]
pub(crate) struct Frame<'a> {
    /// The script's path, for messages.
    pub script: &'a str,
    pub view: Option<View<'a>>,
    pub server: Option<&'a ServerRequest<'a>>,
    pub sent: &'a [Candidate],
    /// The call's random stream, made at its first draw.
    pub rng: &'a RefCell<Option<SimRng>>,
    /// (seed, name, index) of that stream; none without a view.
    pub stream: Option<(u64, &'a str, u64)>,
    /// An error of another policy (the estimator) met during the call: the
    /// call fails with it rather than with the script's own.
    pub cause: &'a RefCell<Option<vcsim_framework::PolicyError>>,
    /// Lines the policy wrote to standard error (where there is no view,
    /// hence no run log) in this run.
    pub stderr_lines: &'a std::cell::Cell<u64>,
    /// Today's client's simulation of the view (`v.list_sim()`), made at
    /// the call's first ask and shared by the rest of the call.
    pub list_sim: &'a RefCell<Option<Arc<ListSim>>>,
}

scoped_thread_local!(static FRAME: for<'a> Frame<'a>);

pub(crate) type RResult<T> = Result<T, Box<EvalAltResult>>;

/// Runs `f` with `frame` as the current frame.
pub(crate) fn enter<R>(frame: Frame<'_>, f: impl FnOnce() -> R) -> R {
    FRAME.set(frame, f)
}

/// The current frame, if a hook is running on this thread.
pub(crate) fn with_frame<R>(f: impl FnOnce(Option<Frame<'_>>) -> R) -> R {
    if FRAME.is_set() {
        FRAME.with(|fr| f(Some(fr)))
    } else {
        f(None)
    }
}

/// Runs `f` on the current view; an error outside a hook that has one.
pub(crate) fn with_view<R>(f: impl FnOnce(&View<'_>) -> Result<R, String>) -> RResult<R> {
    with_frame(|fr| match fr.and_then(|fr| fr.view) {
        Some(v) => f(&v).map_err(|e| e.into()),
        None => Err(
            "no view here: the state is readable only inside a hook that receives a view"
                .to_string()
                .into(),
        ),
    })
}

/// Runs `f` on the host of the current view or server request.
pub(crate) fn with_host<R>(f: impl FnOnce(&HostInfo) -> R) -> RResult<R> {
    with_frame(|fr| {
        let fr = fr.ok_or_else(|| "no host outside a hook".to_string())?;
        if let Some(v) = fr.view {
            return Ok(f(v.host()));
        }
        if let Some(s) = fr.server {
            return Ok(f(s.host));
        }
        Err("no host here".to_string().into())
    })
}

/// Runs `f` on the server request of the current `consider` call.
pub(crate) fn with_server<R>(
    f: impl FnOnce(&ServerRequest<'_>, &[Candidate]) -> Result<R, String>,
) -> RResult<R> {
    with_frame(
        |fr| match fr.and_then(|fr| fr.server.map(|s| (s, fr.sent))) {
            Some((s, sent)) => f(s, sent).map_err(|e| e.into()),
            None => Err("no server request here: it exists only inside `consider`"
                .to_string()
                .into()),
        },
    )
}
