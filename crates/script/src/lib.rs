//! Policies written as rhai scripts.
//!
//! A script implements one family by defining its hook functions:
//!
//! | family     | required hook         | optional hooks |
//! |------------|-----------------------|----------------|
//! | `cpu`      | `schedule(v)`         |                |
//! | `fetch`    | `request(v)`          | `account(v)`, `piggyback(v, p)`, `on_reply(v, reply)`, `backoff_on_empty_reply()` |
//! | `send`     | `consider(req, sent, cand)` |          |
//! | `estimate` | `remaining(v, job)`   | `correction(p)`, `on_job_finished(v, job)` |
//! | `disk`     | `free_space(v, p)`    | `enforces()`, `make_room(v, p, bytes)`, `poll(v)`, `project_limit(v, p)` |
//!
//! and, for any family, `init()` returning the policy's state (an object
//! map, `#{}` by default), which every hook sees as `this`.
//!
//! How it is called (the fast pattern): the script is compiled once per
//! path and the AST shared (`Arc`); each thread has one engine; a hook is
//! called without re-running the script's top level, in a fresh scope,
//! with rhai's function-resolution cache kept from one call to the next
//! (see [`call_with_this`]); its arguments are small handles, and the
//! getters read the live state through a scoped thread-local frame (no
//! copy of the state per call). Limits (operations, call depth, string,
//! array and map sizes) are on; there is no file, network or clock access
//! (`no_module`, `no_time`, `eval` disabled), and no blobs (see
//! `PolicyPackage`).
//!
//! Invariants: a script never panics the runner (every error becomes a
//! [`PolicyError`] naming the file, line, column and function); the
//! simulator validates every decision. A hook that should be pure (a
//! fetcher's `request`, an estimate) must not change `this`; that is
//! documented, not enforced. `random()` draws from the run's named stream
//! `script:<family>:<hook>`: for a pure hook indexed by the view's step
//! (and the job, for `remaining`), so the same view gives the same draws;
//! for the others by the policy's count of such calls.
//!
//! Reasons: a hook may return its decision with a reason (the API page's
//! "Reasons": `#{ run, reason, ranking }`, `#{ job, reason }`, `#{ request,
//! reason }`, `#{ verdict, reason }`, a plan's `reason`). The adapter checks
//! it when the hook returns, keeps the script's value until the next call,
//! and makes a [`Reason`] of it only when an explained run asks
//! (`explain`, `ranking`, `explain_request`, `explain_verdict`,
//! `explain_plan`); a hook that returns none costs nothing more.

#![forbid(unsafe_code)]

mod api;
mod charged;
mod frame;
mod limits;

pub use api::{DocEntry, MAX_OPERATIONS};
pub use limits::{
    limit_run, run_stopped, BYTES_PER_OPERATION, CALL_UNITS, MAX_CALL_SECONDS, MAX_LINE_CHARS,
    MAX_SCRIPT_BYTES, MAX_SCRIPT_LINES,
};

use api::{type_of, CandH, FileH, JobH, ReplyH, RequestH, RunH, SentH, ServerH, ViewH};
use frame::Frame;
use rhai::packages::{
    BasicArrayPackage, BasicMapPackage, BasicMathPackage, BitFieldPackage, CorePackage,
    LogicPackage, MoreStringPackage, Package,
};
use rhai::{
    Caches, Dynamic, Engine, EvalAltResult, FuncArgs, ImmutableString, Position, Scope, AST,
};
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use vcsim_framework::input;
use vcsim_framework::rng::SimRng;
use vcsim_framework::{
    AnyPolicy, Candidate, CompletionEstimator, CpuScheduler, Datum, DiskManager, DiskPlan, Entry,
    Family, Job, PolicyError, PolicyResult, Ranking, Reason, Registry, RpcReply, RunList, RunMode,
    ServerRequest, Verdict, View, WorkFetcher, WorkRequest, WorkSender,
};

/// "1 parameter", "2 parameters".
fn parameters(n: usize) -> String {
    format!("{n} parameter{}", if n == 1 { "" } else { "s" })
}

/// The article before a family's name ("an estimate policy").
fn article(f: Family) -> &'static str {
    if f == Family::Estimate {
        "an"
    } else {
        "a"
    }
}

/// The hooks of each family: (name, arity, required).
pub fn hooks(family: Family) -> &'static [(&'static str, usize, bool)] {
    match family {
        Family::Cpu => &[("schedule", 1, true)],
        Family::Fetch => &[
            ("request", 1, true),
            ("account", 1, false),
            ("piggyback", 2, false),
            ("on_reply", 2, false),
            ("backoff_on_empty_reply", 0, false),
        ],
        Family::Send => &[("consider", 3, true)],
        Family::Estimate => &[
            ("remaining", 2, true),
            ("correction", 1, false),
            ("on_job_finished", 2, false),
        ],
        Family::Disk => &[
            ("free_space", 2, true),
            ("enforces", 0, false),
            ("make_room", 3, false),
            ("poll", 1, false),
            ("project_limit", 2, false),
        ],
    }
}

rhai::def_package! {
    /// rhai's standard library less its blobs (byte arrays): their functions
    /// allocate by paths that `limits` does not count, so a limit they hit
    /// could name no line. Policies have no use for bytes.
    PolicyPackage(lib):
        CorePackage,
        BitFieldPackage,
        LogicPackage,
        BasicMathPackage,
        BasicArrayPackage,
        BasicMapPackage,
        MoreStringPackage
    {}
}

pub(crate) fn build_engine() -> (Engine, Vec<DocEntry>) {
    // `Engine::new` less its module resolver (scripts import nothing) and
    // its print handlers (replaced below).
    let mut e = Engine::new_raw();
    e.set_max_strings_interned(256);
    PolicyPackage::new().register_into_engine(&mut e);
    // rhai's functions whose cost grows with their operands, charged (see
    // `charged`): they shadow the package's.
    let charged = charged::charged(|| {
        let mut plain = Engine::new_raw();
        PolicyPackage::new().register_into_engine(&mut plain);
        plain.set_fast_operators(false);
        plain
    });
    e.register_global_module(charged.module.clone());
    // The strings' package makes a blob from a string: the one way to the
    // blobs the package above leaves out.
    e.register_fn(
        "to_blob",
        |_: ImmutableString| -> Result<Dynamic, Box<EvalAltResult>> {
            Err("`to_blob`: blobs (byte arrays) are not available to policies".into())
        },
    );
    e.set_max_operations(limits::RHAI_MAX_OPERATIONS);
    e.set_max_call_levels(limits::RHAI_MAX_CALL_LEVELS);
    e.set_max_expr_depths(64, 64);
    e.set_max_string_size(api::MAX_STRING_SIZE);
    e.set_max_array_size(api::MAX_ARRAY_SIZE);
    e.set_max_map_size(api::MAX_MAP_SIZE);
    e.set_strict_variables(true);
    e.disable_symbol("eval");
    e.on_print(api::log_line);
    e.on_debug(|s, _, _| api::log_line(s));
    // The limits under every path (see `limits`): allocations count their
    // size (the operators on strings and arrays are rhai functions, not its
    // built-in shortcuts, so that `limits` can count them), maps grown by
    // `m[key] = x` are checked, a call has a wall-clock backstop.
    e.set_fast_operators(false);
    e.on_progress(limits::progress);
    // `curry` is rhai's keyword, run by its evaluator before any function
    // registered under that name: parsed as the name of `limits`' own,
    // which counts what it copies.
    #[allow(deprecated)]
    e.on_parse_token(|token, _, _| match token {
        rhai::Token::Reserved(s) if s.as_str() == "curry" => {
            rhai::Token::Identifier(Box::new(limits::CURRY.into()))
        }
        token => token,
    });
    #[allow(deprecated)]
    e.on_var(limits::on_var);
    let docs = api::register(&mut e);
    limits::register(&mut e);
    (e, docs)
}

/// The names a hook's `this` and arguments have in the calling scope.
const THIS: &str = "__this";
const ARGS: [&str; 3] = ["__a0", "__a1", "__a2"];

thread_local! {
    /// One engine per thread (the engine is immutable once built; nested
    /// calls — a CPU script asking a scripted estimator — share it).
    static ENGINE: Engine = build_engine().0;
}

/// A compiled script, shared by every policy made from it.
pub struct Script {
    pub path: String,
    ast: AST,
    fns: BTreeSet<(String, usize)>,
    /// For each hook the script defines, the statement `__this.hook(__a0, ...)`
    /// that calls it with `this` bound (see [`call_with_this`]).
    drivers: Vec<(String, usize, AST)>,
    /// The first lines of `//!` comments, for listings.
    pub summary: String,
}

impl Script {
    /// Reads and compiles a script; a syntax error names file, line and column.
    pub fn load(path: &Path) -> Result<Arc<Script>, String> {
        let text = input::read_text(path, input::MAX_TEXT_BYTES)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        Script::compile(&path.display().to_string(), &text).map(Arc::new)
    }

    /// Compiles `text`, reported as `path` in messages.
    pub fn compile(path: &str, text: &str) -> Result<Script, String> {
        // A byte-order mark (Windows editors write one) is no character of
        // the script: rhai would refuse it, and the columns do not count it.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if let Some(e) = limits::script_size_error(text) {
            return Err(format!("{path}: {e}"));
        }
        let mut ast = ENGINE.with(|e| e.compile(text)).map_err(|pe| {
            let pos = pe.1;
            format!("{}: syntax error: {}", locate(path, pos), pe.0)
        })?;
        ast.set_source(path);
        let fns: BTreeSet<(String, usize)> = ast
            .iter_functions()
            .map(|f| (f.name.to_string(), f.params.len()))
            .collect();
        let mut drivers = Vec::new();
        // The hooks the script defines (`init` and the families' hooks).
        let is_hook = |name: &str, arity: usize| {
            (name == "init" && arity == 0)
                || Family::ALL
                    .iter()
                    .any(|f| hooks(*f).iter().any(|(n, a, _)| *n == name && *a == arity))
        };
        for (name, arity) in fns.iter().filter(|(n, a)| is_hook(n, *a)) {
            let args = &ARGS[..*arity];
            let mut scope = Scope::new();
            scope.push(THIS, ());
            for a in args {
                scope.push(*a, ());
            }
            let text = format!("{THIS}.{name}({})", args.join(", "));
            let driver = ENGINE
                .with(|e| e.compile_with_scope(&scope, &text))
                .map_err(|e| format!("{path}: cannot call `{name}`: {e}"))?;
            drivers.push((name.clone(), *arity, driver));
        }
        let summary = text
            .lines()
            .take_while(|l| l.trim_start().starts_with("//"))
            .filter_map(|l| l.trim_start().strip_prefix("//!"))
            .map(str::trim)
            .take_while(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Script {
            path: path.to_string(),
            ast,
            fns,
            drivers,
            summary: if summary.is_empty() {
                "rhai script".into()
            } else {
                summary
            },
        })
    }

    pub fn has(&self, name: &str, arity: usize) -> bool {
        self.fns.contains(&(name.to_string(), arity))
    }

    /// The families whose required hooks the script defines.
    pub fn families(&self) -> Vec<Family> {
        Family::ALL
            .into_iter()
            .filter(|f| {
                hooks(*f)
                    .iter()
                    .filter(|h| h.2)
                    .all(|(n, a, _)| self.has(n, *a))
            })
            .collect()
    }

    /// Checks that the script can serve `family`.
    pub fn check_family(&self, family: Family) -> Result<(), String> {
        // An optional hook (and `init`) with other parameters is never
        // called: the run went on without it, silently.
        let optional = hooks(family)
            .iter()
            .filter(|(_, _, required)| !required)
            .map(|(n, a, _)| (*n, *a))
            .chain([("init", 0)]);
        for (name, arity) in optional {
            if self.has(name, arity) {
                continue;
            }
            if let Some((_, a)) = self.fns.iter().find(|(n, _)| n == name) {
                return Err(format!(
                    "{}: `{name}` takes {}; {} {family} policy's `{name}` takes {arity}, and as written it would never be called",
                    self.path,
                    parameters(*a),
                    article(family)
                ));
            }
        }
        for (name, arity, required) in hooks(family) {
            if *required && !self.has(name, *arity) {
                let other = self.fns.iter().find(|(n, _)| n == name);
                return Err(match other {
                    Some((_, a)) => format!(
                        "{}: `{name}` takes {}; {} {family} policy's `{name}` takes {arity}",
                        self.path,
                        parameters(*a),
                        article(family)
                    ),
                    None => format!(
                        "{}: {} {family} policy must define `fn {name}({})`",
                        self.path,
                        article(family),
                        ["v", "a", "b"][..*arity].join(", ")
                    ),
                });
            }
        }
        Ok(())
    }

    /// A fresh policy of `family` (its state from `init()`).
    pub fn make(self: &Arc<Self>, family: Family) -> Result<AnyPolicy, String> {
        self.check_family(family)?;
        let h = Hooked::new(self.clone(), family)?;
        Ok(match family {
            Family::Cpu => AnyPolicy::Cpu(Box::new(ScriptCpu {
                h,
                said: CpuSaid::default(),
            })),
            Family::Fetch => {
                let backoff = if self.has("backoff_on_empty_reply", 0) {
                    h.call(
                        "backoff_on_empty_reply",
                        None,
                        None,
                        &[],
                        (),
                        Draws::Counted,
                    )
                    .map_err(|e| e.message)?
                    .as_bool()
                    .map_err(|t| {
                        format!(
                            "{}: `backoff_on_empty_reply` must return a bool, got {t}",
                            self.path
                        )
                    })?
                } else {
                    true
                };
                AnyPolicy::Fetch(Box::new(ScriptFetch {
                    h,
                    backoff,
                    said: RefCell::new(None),
                }))
            }
            Family::Send => AnyPolicy::Send(Box::new(ScriptSend { h, said: None })),
            Family::Estimate => AnyPolicy::Estimate(Box::new(ScriptEstimate(h))),
            Family::Disk => {
                let enforces = if self.has("enforces", 0) {
                    h.call("enforces", None, None, &[], (), Draws::Counted)
                        .map_err(|e| e.message)?
                        .as_bool()
                        .map_err(|t| {
                            format!("{}: `enforces` must return a bool, got {t}", self.path)
                        })?
                } else {
                    false
                };
                AnyPolicy::Disk(Box::new(ScriptDisk {
                    h,
                    enforces,
                    said: None,
                }))
            }
        })
    }
}

fn locate(path: &str, pos: Position) -> String {
    match (pos.line(), pos.position()) {
        (Some(l), Some(c)) => format!("{path}:{l}:{c}"),
        (Some(l), None) => format!("{path}:{l}"),
        _ => path.to_string(),
    }
}

/// A rhai error as `file:line:col: in function `f`: message`, following
/// calls into the script's own functions to the innermost position.
pub fn describe_error(path: &str, hook: &str, err: &EvalAltResult) -> String {
    let mut chain = vec![hook.to_string()];
    let mut e = err;
    let mut src = path.to_string();
    while let EvalAltResult::ErrorInFunctionCall(name, source, inner, _) = e {
        chain.push(if name.starts_with("anon$") {
            "a closure".into()
        } else {
            name.clone()
        });
        if !source.is_empty() {
            src = source.clone();
        }
        e = inner;
    }
    let pos = e.position();
    let msg = match e {
        EvalAltResult::ErrorTooManyOperations(_) => limits::stop_message(false),
        EvalAltResult::ErrorTerminated(..) => limits::stop_message(limits::stopped_by_time()),
        EvalAltResult::ErrorDataTooLarge(what, _) => limits::too_large_message(what),
        EvalAltResult::ErrorStackOverflow(_) => limits::too_deep_message(),
        EvalAltResult::ErrorRuntime(d, _) => d.to_string(),
        other => {
            // rhai's message without its own " (line x, position y)" suffix.
            let s = other.to_string();
            match s.rfind(" (line ") {
                Some(i) if s.ends_with(')') => s[..i].to_string(),
                _ => s,
            }
        }
    };
    let func = chain.last().cloned().unwrap_or_default();
    let via = if chain.len() > 1 {
        format!(" (called from {})", callers(&chain[..chain.len() - 1]))
    } else {
        String::new()
    };
    let within = if func == "a closure" {
        func
    } else {
        format!("function `{func}`")
    };
    // A thrown value is the script's text: no control character of it may
    // reach a terminal or a CSV file raw (a newline would forge a line).
    let msg = vcsim_framework::text::escape_controls(&msg);
    format!("{}: in {within}{via}: {msg}", locate(&src, pos))
}

/// The callers of a function, outermost first, a run of calls of one
/// function once with its count (a recursion 48 deep is one entry).
fn callers(chain: &[String]) -> String {
    let mut runs: Vec<(&str, usize)> = Vec::new();
    for name in chain {
        match runs.last_mut() {
            Some((last, n)) if *last == name.as_str() => *n += 1,
            _ => runs.push((name, 1)),
        }
    }
    runs.iter()
        .map(|&(name, n)| {
            if n == 1 {
                format!("`{name}`")
            } else {
                format!("`{name}` ({n} times)")
            }
        })
        .collect::<Vec<_>>()
        .join(" <- ")
}

/// Calls `script`'s function `hook` with `this` bound to `state`, keeping
/// rhai's function-resolution cache in `caches` between calls. It runs the
/// statement `__this.hook(__a0, ...)` on a scope holding the state and the
/// arguments: what `Engine::call_fn_with_options` does, minus the fresh cache.
fn call_with_this(
    engine: &Engine,
    script: &Script,
    caches: &mut Caches,
    state: &mut Dynamic,
    hook: &str,
    args: impl FuncArgs,
) -> Result<Dynamic, Box<EvalAltResult>> {
    let mut values = rhai::StaticVec::<Dynamic>::new();
    args.parse(&mut values);
    let Some((.., driver)) = script
        .drivers
        .iter()
        .find(|(name, arity, _)| name == hook && *arity == values.len())
    else {
        return Err(Box::new(EvalAltResult::ErrorFunctionNotFound(
            format!("{hook} ({} arguments)", values.len()),
            Position::NONE,
        )));
    };
    let mut scope = Scope::new();
    // `state.hook(...)` on a map whose `hook` key holds a function pointer
    // would call that pointer: such a state takes rhai's own way (a fresh
    // cache per call).
    if state
        .as_map_ref()
        .is_ok_and(|m| m.get(hook).is_some_and(|x| x.is::<rhai::FnPtr>()))
    {
        let opts = rhai::CallFnOptions::new()
            .eval_ast(false)
            .rewind_scope(true)
            .bind_this_ptr(state);
        return engine.call_fn_with_options(opts, &mut scope, &script.ast, hook, values);
    }
    scope.push(THIS, std::mem::take(state));
    for (name, v) in ARGS.iter().zip(values) {
        scope.push(*name, v);
    }
    let mut global = engine.new_global_runtime_state();
    global.source = script.ast.source().map(Into::into);
    global.lib.push(script.ast.shared_lib().clone());
    #[allow(deprecated)] // the one public way to evaluate with a caller's cache
    let r = engine.eval_statements_raw(&mut global, caches, &mut scope, driver.statements());
    // `this` goes back even when the call failed: rhai keeps a failed call's
    // changes to `this`, and the state must not be lost.
    if let Some(s) = scope.get_mut(THIS) {
        *state = std::mem::take(s);
    }
    r.map_err(|mut e| match *e {
        // The call of the hook itself; what is inside is the error.
        EvalAltResult::ErrorInFunctionCall(name, _, inner, _) if name == hook => inner,
        // An error that rhai does not wrap (a limit of its own: a value too
        // large, too many nested calls) comes out with the position of the
        // call in the driver, not in the script: no position is better.
        _ => {
            e.set_position(Position::NONE);
            e
        }
    })
}

/// Which random stream a hook call draws from (see the module's doc).
#[derive(Clone, Copy)]
enum Draws {
    /// A pure hook: the view's step, and a salt (a job's id).
    Pure(u64),
    /// A hook that may change the state: the policy's count of such calls.
    Counted,
}

/// A script's hooks and its state (`this`).
struct Hooked {
    script: Arc<Script>,
    family: Family,
    state: RefCell<Dynamic>,
    /// rhai's function-resolution cache, kept from one call to the next: with
    /// a fresh one per call (as `Engine::call_fn` has) every function a hook
    /// uses is looked up again at each call (6% of a scripted cs1 run).
    caches: RefCell<Caches>,
    /// Calls of hooks that may change the state (their draws' index).
    counted: Cell<u64>,
    /// Log lines written to standard error (see `api::log_line`).
    stderr_lines: Cell<u64>,
}

/// The start of the error of a script called again while it runs.
const REENTERED: &str = "the script was called again while it runs";

impl Hooked {
    fn new(script: Arc<Script>, family: Family) -> Result<Hooked, String> {
        let h = Hooked {
            script,
            family,
            state: RefCell::new(Dynamic::from_map(Default::default())),
            caches: RefCell::new(Caches::new()),
            counted: Cell::new(0),
            stderr_lines: Cell::new(0),
        };
        if h.script.has("init", 0) {
            let s = h.call("init", None, None, &[], (), Draws::Counted);
            let s = s.map_err(|e| e.message)?;
            // The state it returns, in full (a map filled by `m[k] = x` is
            // not checked as it returns): else the first hook is blamed.
            if let Some(what) = limits::size_error(limits::sizes(&s)) {
                return Err(format!(
                    "{}: in function `init`: the state it returns holds {what}",
                    h.script.path
                ));
            }
            *h.state.borrow_mut() = s;
        }
        Ok(h)
    }

    /// Calls `hook` with `this` bound to the state. Pure hooks must not
    /// change it (documented; not enforced: rhai's read-only flag sticks to
    /// nested values, and a deep copy per call would cost more than the
    /// call).
    fn call(
        &self,
        hook: &str,
        view: Option<View<'_>>,
        server: Option<&ServerRequest<'_>>,
        sent: &[Candidate],
        args: impl FuncArgs,
        draws: Draws,
    ) -> PolicyResult<Dynamic> {
        let path = self.script.path.as_str();
        // (Said by the outer call, at the line that asked: see below.)
        let mut state = self.state.try_borrow_mut().map_err(|_| {
            PolicyError::new(format!(
                "{REENTERED} (an estimator that asks for its own estimates? Inside the estimator, use `job.estimated_seconds` rather than `job.static_estimate` or `job.remaining`)"
            ))
        })?;
        if limits::run_spent(view.map_or(0.0, |v| v.now())) {
            return Err(PolicyError::new(format!(
                "{path}: in function `{hook}`: the run's budget of work for its script is spent"
            ))
            .of(self.family));
        }
        let index = match draws {
            Draws::Pure(salt) => view.map_or(0, |v| v.step()) ^ salt.rotate_left(40),
            Draws::Counted => {
                let n = self.counted.get();
                self.counted.set(n + 1);
                n
            }
        };
        let seed = view.map(|v| v.seed());
        let rng: RefCell<Option<SimRng>> = RefCell::new(None);
        let stream_name = format!("script:{}:{hook}", self.family);
        let cause = RefCell::new(None);
        let list_sim = RefCell::new(None);
        let frame = Frame {
            script: path,
            view,
            server,
            sent,
            rng: &rng,
            stream: seed.map(|s| (s, stream_name.as_str(), index)),
            cause: &cause,
            stderr_lines: &self.stderr_lines,
            list_sim: &list_sim,
        };
        let mut caches = self.caches.borrow_mut();
        let r = ENGINE.with(|engine| {
            let _budget = limits::begin();
            frame::enter(frame, || {
                call_with_this(engine, &self.script, &mut caches, &mut state, hook, args)
            })
            // (Described while the call's budget says why it was stopped.)
            .map_err(|e| describe_error(path, hook, &e))
        });
        let d = r.map_err(|e| match cause.into_inner() {
            // This script called again from within: the error is this
            // call's, at the line whose getter asked.
            Some(c) if c.message.starts_with(REENTERED) => PolicyError::new(e).of(self.family),
            // The estimator's error, met by a getter: it is the cause.
            Some(c) => c,
            None => PolicyError::new(e).of(self.family),
        })?;
        // The state, in full: `m[key] = x` in `this` is checked only at uses
        // of variables during the call, and it must not grow from one call
        // to the next.
        if let Some(what) = limits::size_error(limits::sizes(&state)) {
            return Err(PolicyError::new(format!(
                "{path}: in function `{hook}`: the state `this` holds {what}"
            ))
            .of(self.family));
        }
        Ok(d)
    }

    fn bad(&self, hook: &str, what: &str, got: &Dynamic) -> PolicyError {
        // A scalar is shown with its value: `got i64 -1` says more than the type.
        let shown = if got.is_int() || got.is_float() || got.is_bool() || got.is_char() {
            format!("{} `{got}`", type_of(got))
        } else if let Some(text) = got.read_lock::<rhai::ImmutableString>() {
            // `got string "maybe"`, short and escaped (a verdict misspelt).
            let short: String = text.chars().take(40).collect();
            let more = if text.chars().count() > 40 { "…" } else { "" };
            format!("string {short:?}{more}")
        } else {
            type_of(got)
        };
        PolicyError::new(format!(
            "{}: in function `{hook}`: invalid decision: it must return {what}, got {shown}",
            self.script.path
        ))
    }

    fn float(&self, hook: &str, d: Dynamic) -> PolicyResult<f64> {
        if let Ok(x) = d.as_float() {
            Ok(x)
        } else if let Ok(i) = d.as_int() {
            Ok(i as f64)
        } else {
            Err(self.bad(hook, "a number", &d))
        }
    }

    fn request(&self, hook: &str, d: Dynamic) -> PolicyResult<Option<WorkRequest>> {
        if d.is_unit() {
            return Ok(None);
        }
        match d.try_cast_result::<RequestH>() {
            Ok(r) => {
                // The simulator checks every request; here the message can
                // name the script's function.
                let amounts = std::iter::once(r.0.work_req_seconds).chain(
                    r.0.rsc
                        .iter()
                        .flat_map(|x| [x.req_seconds, x.req_ninstances]),
                );
                if let Some(x) = amounts.into_iter().find(|x| !x.is_finite() || *x < 0.0) {
                    return Err(PolicyError::new(format!(
                        "{}: in function `{hook}`: invalid decision: a requested amount is {x} (must be finite, 0 or more)",
                        self.script.path
                    ))
                    .of(self.family));
                }
                Ok(Some(r.0))
            }
            Err(d) => Err(self.bad(
                hook,
                "a WorkRequest (`work_request(p, seconds)`), () or `#{ request: ..., reason: ... }`",
                &d,
            )),
        }
    }
}

/// Reasons (`Reason`) that hooks return with their decisions.
///
/// A reason is a string, a map `#{ text: "...", name: value, ... }` whose
/// values are numbers, strings or bools, or `()` for none. It is checked
/// when the hook returns it (so that a run fails the same explained or
/// not) and kept as the script's value; it becomes a [`Reason`] only when
/// an explained run asks for it. A hook that returns no reason costs
/// nothing more.
impl Hooked {
    fn invalid_reason(&self, hook: &str, job: Option<u64>, msg: String) -> PolicyError {
        let of = job.map_or(String::new(), |j| format!(" for job {j}"));
        PolicyError::new(format!(
            "{}: in function `{hook}`: invalid reason{of}: {msg}",
            self.script.path
        ))
        .of(self.family)
    }

    /// Checks a reason `hook` returned (for `job`'s entry of a run list);
    /// whether there is one.
    fn check_reason(&self, hook: &str, job: Option<u64>, d: &Dynamic) -> PolicyResult<bool> {
        if d.is_unit() {
            return Ok(false);
        }
        if d.is_string() {
            return Ok(true);
        }
        let Some(m) = d.read_lock::<rhai::Map>() else {
            return Err(self.invalid_reason(
                hook,
                job,
                format!(
                    "a reason must be a string or a map `#{{ text: \"...\", name: value }}`, got {}",
                    type_of(d)
                ),
            ));
        };
        for (k, x) in m.iter() {
            if k == "text" {
                if !x.is_string() {
                    return Err(self.invalid_reason(
                        hook,
                        job,
                        format!("the reason's `text` must be a string, got {}", type_of(x)),
                    ));
                }
            } else if let Ok(f) = x.as_float() {
                if !f.is_finite() {
                    return Err(self.invalid_reason(
                        hook,
                        job,
                        format!("the reason's `{k}` is {f} (a reason's numbers must be finite)"),
                    ));
                }
            } else if !(x.is_int() || x.is_bool() || x.is_string()) {
                return Err(self.invalid_reason(
                    hook,
                    job,
                    format!(
                        "the reason's `{k}` is {} (a reason's values must be numbers, strings or bools)",
                        type_of(x)
                    ),
                ));
            }
        }
        Ok(true)
    }

    /// Checks a ranking `#{ name: "...", values: [one number per project] }`
    /// that `schedule` returned.
    fn check_ranking(&self, v: &View, d: &Dynamic) -> PolicyResult<()> {
        let bad = |msg: String| {
            PolicyError::new(format!(
                "{}: in function `schedule`: invalid ranking: {msg}",
                self.script.path
            ))
            .of(self.family)
        };
        let Some(m) = d.read_lock::<rhai::Map>() else {
            return Err(bad(format!(
                "a ranking must be a map `#{{ name: \"...\", values: [...] }}`, got {}",
                type_of(d)
            )));
        };
        let mut values = None;
        for (k, x) in m.iter() {
            match k.as_str() {
                "name" if x.is_string() => {}
                "name" => return Err(bad(format!("`name` must be a string, got {}", type_of(x)))),
                "values" => values = Some(x),
                other => {
                    return Err(bad(format!(
                        "unknown key `{other}` (expected name, values)"
                    )))
                }
            }
        }
        if !m.contains_key("name") {
            return Err(bad("it has no `name` (what the values are)".into()));
        }
        let Some(a) = values.and_then(|x| x.read_lock::<rhai::Array>()) else {
            return Err(bad(
                "`values` must be an array of numbers, one per project".into()
            ));
        };
        let np = v.projects().len();
        if a.len() != np {
            return Err(bad(format!(
                "`values` holds {} numbers for {np} projects (one per project)",
                a.len()
            )));
        }
        for (p, x) in a.iter().enumerate() {
            match number(x) {
                Some(f) if f.is_finite() => {}
                Some(f) => return Err(bad(format!("`values[{p}]` is {f} (must be finite)"))),
                None => {
                    return Err(bad(format!(
                        "`values[{p}]` must be a number, got {}",
                        type_of(x)
                    )))
                }
            }
        }
        Ok(())
    }
}

/// A number (float or integer) as `f64`.
fn number(d: &Dynamic) -> Option<f64> {
    d.as_float()
        .ok()
        .or_else(|| d.as_int().ok().map(|i| i as f64))
}

/// A reason the script returned (checked by [`Hooked::check_reason`]); its
/// data in the map's (sorted) key order.
fn to_reason(d: &Dynamic) -> Reason {
    if let Some(s) = d.read_lock::<rhai::ImmutableString>() {
        return Reason::new(s.as_str());
    }
    let mut r = Reason::default();
    if let Some(m) = d.read_lock::<rhai::Map>() {
        for (k, x) in m.iter() {
            let datum = if let Some(s) = x.read_lock::<rhai::ImmutableString>() {
                if k == "text" {
                    r.text = s.to_string();
                    continue;
                }
                Datum::Text(s.to_string())
            } else if let Ok(b) = x.as_bool() {
                Datum::Flag(b)
            } else if let Some(f) = number(x) {
                Datum::Number(f)
            } else {
                continue;
            };
            r.data.push((k.to_string().into(), datum));
        }
    }
    r
}

/// A ranking the script returned (checked by [`Hooked::check_ranking`]).
fn to_ranking(d: &Dynamic) -> Ranking {
    let mut r = Ranking {
        name: String::new(),
        values: Vec::new(),
    };
    if let Some(m) = d.read_lock::<rhai::Map>() {
        if let Some(name) = m.get("name") {
            r.name = name.to_string();
        }
        if let Some(a) = m.get("values").and_then(|x| x.read_lock::<rhai::Array>()) {
            r.values = a.iter().filter_map(number).collect();
        }
    }
    r
}

/// Takes `key` out of a map a hook returned; `()` if absent.
fn take(m: &mut rhai::Map, key: &str) -> Dynamic {
    m.remove(key).unwrap_or(Dynamic::UNIT)
}

/// What a CPU script's last `schedule` said besides its run list.
#[derive(Default)]
struct CpuSaid {
    /// The reasons of the entries that gave one, by job id.
    jobs: Vec<(u64, Dynamic)>,
    /// The run list's own `reason`: for the jobs without one of their own
    /// (those listed without one, and those not listed).
    all: Option<Dynamic>,
    ranking: Option<Dynamic>,
}

struct ScriptCpu {
    h: Hooked,
    said: CpuSaid,
}

impl CpuScheduler for ScriptCpu {
    fn schedule(&mut self, v: &View, out: &mut RunList) -> PolicyResult<()> {
        let said = &mut self.said;
        said.jobs.clear();
        said.all = None;
        said.ranking = None;
        let d = self
            .h
            .call("schedule", Some(*v), None, &[], (ViewH,), Draws::Counted)?;
        const WHAT: &str =
            "an array of jobs to run, or a map `#{ run: [...], reason: ..., ranking: ... }`";
        let arr = match d.try_cast_result::<rhai::Array>() {
            Ok(a) => a,
            Err(d) => match d.try_cast_result::<rhai::Map>() {
                Ok(mut m) => {
                    let run = take(&mut m, "run");
                    let reason = take(&mut m, "reason");
                    let ranking = take(&mut m, "ranking");
                    if let Some(k) = m.keys().next() {
                        return Err(PolicyError::new(format!(
                            "{}: in function `schedule`: invalid decision: unknown key `{k}` in the map it returned (expected run, reason, ranking)",
                            self.h.script.path
                        )));
                    }
                    if self.h.check_reason("schedule", None, &reason)? {
                        said.all = Some(reason);
                    }
                    if !ranking.is_unit() {
                        self.h.check_ranking(v, &ranking)?;
                        said.ranking = Some(ranking);
                    }
                    match run.try_cast_result::<rhai::Array>() {
                        Ok(a) => a,
                        Err(run) => {
                            return Err(self.h.bad(
                                "schedule",
                                "`run`: an array of jobs to run",
                                &run,
                            ))
                        }
                    }
                }
                Err(d) => return Err(self.h.bad("schedule", WHAT, &d)),
            },
        };
        for x in arr {
            // An entry with a reason: `#{ job: ..., reason: ... }`.
            let (x, reason) = match x.try_cast_result::<rhai::Map>() {
                Ok(mut m) => {
                    // (Without it, the entry read as `()`: "got ()".)
                    if !m.contains_key("job") {
                        return Err(PolicyError::new(format!(
                            "{}: in function `schedule`: invalid decision: an entry of the run list is a map without `job` (expected `#{{ job: ..., reason: ... }}`)",
                            self.h.script.path
                        )));
                    }
                    let job = take(&mut m, "job");
                    let reason = take(&mut m, "reason");
                    if let Some(k) = m.keys().next() {
                        return Err(PolicyError::new(format!(
                            "{}: in function `schedule`: invalid decision: unknown key `{k}` in an entry of the run list (expected job, reason)",
                            self.h.script.path
                        )));
                    }
                    (job, Some(reason))
                }
                Err(x) => (x, None),
            };
            let (id, mode) = match x.try_cast_result::<JobH>() {
                Ok(j) => (j.id, RunMode::RoundRobin),
                Err(x) => match x.try_cast_result::<RunH>() {
                    Ok(r) => (r.id, r.mode),
                    Err(x) => match x.as_int() {
                        Ok(id) if id >= 0 => (id as u64, RunMode::RoundRobin),
                        Ok(_) => {
                            return Err(self.h.bad("schedule", "jobs or job ids (0 or more)", &x))
                        }
                        Err(_) => {
                            return Err(self.h.bad(
                                "schedule",
                                "an array of jobs, job ids, `deadline(job)`/`round_robin(job)` or `#{ job: ..., reason: ... }`",
                                &x,
                            ))
                        }
                    },
                },
            };
            out.push(id, mode);
            if let Some(reason) = reason {
                if self.h.check_reason("schedule", Some(id), &reason)? {
                    said.jobs.push((id, reason));
                }
            }
        }
        Ok(())
    }
    fn explain(&self, _v: &View, _out: &RunList, job: u64) -> PolicyResult<Option<Reason>> {
        let said = &self.said;
        let own = said.jobs.iter().find(|(id, _)| *id == job).map(|(_, r)| r);
        Ok(own.or(said.all.as_ref()).map(to_reason))
    }
    fn ranking(&self, _v: &View) -> PolicyResult<Option<Ranking>> {
        Ok(self.said.ranking.as_ref().map(to_ranking))
    }
}

struct ScriptFetch {
    h: Hooked,
    /// `backoff_on_empty_reply()`, asked once when the policy is made.
    backoff: bool,
    /// The last request `request` or `piggyback` returned with a reason,
    /// and the reason.
    said: RefCell<Option<(WorkRequest, Dynamic)>>,
}

impl ScriptFetch {
    /// What `hook` returned: a `WorkRequest`, `()`, or a map `#{ request:
    /// ..., reason: ... }`.
    fn answer(&self, hook: &str, d: Dynamic) -> PolicyResult<Option<WorkRequest>> {
        let mut said = self.said.borrow_mut();
        *said = None;
        let mut m = match d.try_cast_result::<rhai::Map>() {
            Ok(m) => m,
            Err(d) => return self.h.request(hook, d),
        };
        let Some(req) = m.remove("request") else {
            return Err(PolicyError::new(format!(
                "{}: in function `{hook}`: invalid decision: the map it returned has no `request` (`#{{ request: work_request(...), reason: ... }}`)",
                self.h.script.path
            )));
        };
        let reason = take(&mut m, "reason");
        if let Some(k) = m.keys().next() {
            return Err(PolicyError::new(format!(
                "{}: in function `{hook}`: invalid decision: unknown key `{k}` in the map it returned (expected request, reason)",
                self.h.script.path
            )));
        }
        let r = self.h.request(hook, req)?;
        if self.h.check_reason(hook, None, &reason)? {
            if let Some(r) = &r {
                *said = Some((r.clone(), reason));
            }
        }
        Ok(r)
    }
}

impl WorkFetcher for ScriptFetch {
    fn account(&mut self, v: &View) -> PolicyResult<()> {
        if self.h.script.has("account", 1) {
            let _ = self
                .h
                .call("account", Some(*v), None, &[], (ViewH,), Draws::Counted)?;
        }
        Ok(())
    }
    fn request(&self, v: &View) -> PolicyResult<Option<WorkRequest>> {
        let d = self
            .h
            .call("request", Some(*v), None, &[], (ViewH,), Draws::Pure(0))?;
        self.answer("request", d)
    }
    fn piggyback(&self, v: &View, project: usize) -> PolicyResult<Option<WorkRequest>> {
        if !self.h.script.has("piggyback", 2) {
            return Ok(None);
        }
        let args = (ViewH, project as i64);
        let d = self.h.call(
            "piggyback",
            Some(*v),
            None,
            &[],
            args,
            Draws::Pure(project as u64),
        )?;
        self.answer("piggyback", d)
    }
    fn explain_request(&self, _v: &View, req: &WorkRequest) -> PolicyResult<Option<Reason>> {
        Ok(match &*self.said.borrow() {
            Some((r, reason)) if r == req => Some(to_reason(reason)),
            _ => None,
        })
    }
    fn on_reply(&mut self, v: &View, reply: &RpcReply) -> PolicyResult<()> {
        if self.h.script.has("on_reply", 2) {
            let r = ReplyH(Arc::new(reply.clone()));
            let args = (ViewH, r);
            let _ = self
                .h
                .call("on_reply", Some(*v), None, &[], args, Draws::Counted)?;
        }
        Ok(())
    }
    fn backoff_on_empty_reply(&self, _v: &View) -> PolicyResult<bool> {
        Ok(self.backoff)
    }
}

struct ScriptSend {
    h: Hooked,
    /// The last verdict `consider` returned with a reason, and the reason.
    said: Option<(Verdict, Dynamic)>,
}

impl WorkSender for ScriptSend {
    fn consider(
        &mut self,
        req: &ServerRequest,
        sent: &[Candidate],
        cand: &Candidate,
    ) -> PolicyResult<Verdict> {
        self.said = None;
        let args = (ServerH, SentH, CandH(cand.clone()));
        let d = self
            .h
            .call("consider", None, Some(req), sent, args, Draws::Counted)?;
        // `#{ verdict: "send", reason: ... }`, or the verdict alone.
        let (d, reason) = match d.try_cast_result::<rhai::Map>() {
            Ok(mut m) => {
                if !m.contains_key("verdict") {
                    return Err(PolicyError::new(format!(
                        "{}: in function `consider`: invalid decision: the map it returned has no `verdict` (expected `#{{ verdict: \"send\", reason: ... }}`)",
                        self.h.script.path
                    )));
                }
                let verdict = take(&mut m, "verdict");
                let reason = take(&mut m, "reason");
                if let Some(k) = m.keys().next() {
                    return Err(PolicyError::new(format!(
                        "{}: in function `consider`: invalid decision: unknown key `{k}` in the map it returned (expected verdict, reason)",
                        self.h.script.path
                    )));
                }
                (verdict, Some(reason))
            }
            Err(d) => (d, None),
        };
        let verdict = match d
            .read_lock::<rhai::ImmutableString>()
            .as_deref()
            .map(|s| s.as_str())
        {
            Some("send") => Verdict::Send,
            Some("skip") => Verdict::Skip,
            Some("stop") => Verdict::Stop,
            _ => {
                return Err(self.h.bad(
                    "consider",
                    "\"send\", \"skip\", \"stop\" or `#{ verdict: ..., reason: ... }`",
                    &d,
                ))
            }
        };
        if let Some(reason) = reason {
            if self.h.check_reason("consider", None, &reason)? {
                self.said = Some((verdict, reason));
            }
        }
        Ok(verdict)
    }
    fn explain_verdict(
        &self,
        _req: &ServerRequest,
        _sent: &[Candidate],
        _cand: &Candidate,
        verdict: Verdict,
    ) -> PolicyResult<Option<Reason>> {
        Ok(match &self.said {
            Some((v, reason)) if *v == verdict => Some(to_reason(reason)),
            _ => None,
        })
    }
}

struct ScriptEstimate(Hooked);

impl CompletionEstimator for ScriptEstimate {
    fn remaining_seconds(&self, v: &View, job: &Job) -> PolicyResult<f64> {
        let args = (ViewH, JobH::of(v, job));
        let d = self
            .0
            .call("remaining", Some(*v), None, &[], args, Draws::Pure(job.id))?;
        let x = self.0.float("remaining", d)?;
        // The view checks every estimator's value; here the message can
        // name the script's function.
        if !x.is_finite() || x < 0.0 {
            return Err(PolicyError::new(format!(
                "{}: in function `remaining`: invalid decision: remaining time {x} for job {} (must be finite, 0 or more)",
                self.0.script.path, job.id
            )));
        }
        Ok(x)
    }
    fn correction(&self, v: &View, project: usize) -> PolicyResult<f64> {
        if !self.0.script.has("correction", 1) {
            return Ok(1.0);
        }
        let args = (project as i64,);
        let d = self.0.call(
            "correction",
            Some(*v),
            None,
            &[],
            args,
            Draws::Pure(project as u64),
        )?;
        let x = self.0.float("correction", d)?;
        if !x.is_finite() || x <= 0.0 {
            return Err(PolicyError::new(format!(
                "{}: in function `correction`: invalid decision: {x} for project {project} (must be positive and finite)",
                self.0.script.path
            )));
        }
        Ok(x)
    }
    fn on_job_finished(&mut self, v: &View, job: &Job) -> PolicyResult<()> {
        if self.0.script.has("on_job_finished", 2) {
            let args = (ViewH, JobH::of(v, job));
            let _ = self
                .0
                .call("on_job_finished", Some(*v), None, &[], args, Draws::Counted)?;
        }
        Ok(())
    }
}

struct ScriptDisk {
    h: Hooked,
    /// `enforces()`, asked once when the policy is made.
    enforces: bool,
    /// The reason of the last plan `make_room` or `poll` returned, if it gave one.
    said: Option<Dynamic>,
}

impl DiskManager for ScriptDisk {
    fn free_space(&self, v: &View, project: usize) -> PolicyResult<[f64; 3]> {
        let args = (ViewH, project as i64);
        let d = self.h.call(
            "free_space",
            Some(*v),
            None,
            &[],
            args,
            Draws::Pure(project as u64),
        )?;
        let amounts = if let Some(a) = d.clone().try_cast::<rhai::Array>() {
            if a.len() != 3 {
                return Err(self
                    .h
                    .bad("free_space", "a number or an array of 3 numbers", &d));
            }
            let mut out = [0.0; 3];
            for (i, x) in a.into_iter().enumerate() {
                out[i] = self.h.float("free_space", x)?;
            }
            out
        } else {
            [self.h.float("free_space", d)?; 3]
        };
        // The simulator checks every disk manager's amounts; here the message
        // can name the script's function.
        if let Some(x) = amounts.iter().find(|x| x.is_nan() || **x < 0.0) {
            return Err(PolicyError::new(format!(
                "{}: in function `free_space`: invalid decision: free space {x} bytes for project {project} (must be a number, 0 or more)",
                self.h.script.path
            )));
        }
        Ok(amounts)
    }
    fn enforces(&self, _v: &View) -> PolicyResult<bool> {
        Ok(self.enforces)
    }
    fn make_room(&mut self, v: &View, project: usize, bytes: f64) -> PolicyResult<DiskPlan> {
        if !self.h.script.has("make_room", 3) {
            return Ok(DiskPlan::default());
        }
        let args = (ViewH, project as i64, bytes);
        self.said = None;
        let d = self
            .h
            .call("make_room", Some(*v), None, &[], args, Draws::Counted)?;
        self.plan("make_room", d)
    }
    fn poll(&mut self, v: &View) -> PolicyResult<DiskPlan> {
        if !self.h.script.has("poll", 1) {
            return Ok(DiskPlan::default());
        }
        self.said = None;
        let d = self
            .h
            .call("poll", Some(*v), None, &[], (ViewH,), Draws::Counted)?;
        self.plan("poll", d)
    }
    fn explain_plan(&self, _v: &View, _plan: &DiskPlan) -> PolicyResult<Option<Reason>> {
        Ok(self.said.as_ref().map(to_reason))
    }
    fn project_limit(&self, v: &View, project: usize) -> PolicyResult<Option<f64>> {
        if !self.h.script.has("project_limit", 2) {
            return Ok(None);
        }
        let args = (ViewH, project as i64);
        let d = self.h.call(
            "project_limit",
            Some(*v),
            None,
            &[],
            args,
            Draws::Pure(project as u64),
        )?;
        if d.is_unit() {
            return Ok(None);
        }
        let x = self.h.float("project_limit", d)?;
        if !x.is_finite() || x < 0.0 {
            return Err(PolicyError::new(format!(
                "{}: in function `project_limit`: invalid decision: limit {x} for project {project} (must be finite, 0 or more)",
                self.h.script.path
            )));
        }
        Ok(Some(x))
    }
}

impl ScriptDisk {
    /// A plan returned by `hook`: `()` (the default plan) or a map with the
    /// keys `delete_files`, `delete_jobs` (arrays of ids, `File`s or `Job`s)
    /// and `suspend` (a bool), and `reason`; a missing key takes its default.
    fn plan(&mut self, hook: &str, d: Dynamic) -> PolicyResult<DiskPlan> {
        let mut plan = DiskPlan::default();
        if d.is_unit() {
            return Ok(plan);
        }
        const WHAT: &str =
            "a plan `#{ delete_files: [...], delete_jobs: [...], suspend: bool, reason: ... }` or ()";
        let Some(map) = d.clone().try_cast::<rhai::Map>() else {
            return Err(self.h.bad(hook, WHAT, &d));
        };
        let path = &self.h.script.path;
        let invalid = |msg: String| {
            PolicyError::new(format!(
                "{path}: in function `{hook}`: invalid decision: {msg}"
            ))
        };
        for (k, x) in map {
            match k.as_str() {
                "delete_files" | "delete_jobs" => {
                    let files = k.as_str() == "delete_files";
                    let Some(arr) = x.clone().try_cast::<rhai::Array>() else {
                        return Err(invalid(format!(
                            "`{k}` must be an array of ids, got {}",
                            type_of(&x)
                        )));
                    };
                    for e in arr {
                        let id = if let Ok(i) = e.as_int() {
                            if i < 0 {
                                return Err(invalid(format!("`{k}` holds a negative id {i}")));
                            }
                            i as u64
                        } else if let (true, Some(f)) = (files, e.clone().try_cast::<FileH>()) {
                            f.file.id
                        } else if let (false, Some(j)) = (files, e.clone().try_cast::<JobH>()) {
                            j.id
                        } else {
                            return Err(invalid(format!(
                                "`{k}` must hold {} ids, got {}",
                                if files { "file" } else { "job" },
                                type_of(&e)
                            )));
                        };
                        let list = if files {
                            &mut plan.delete_files
                        } else {
                            &mut plan.delete_jobs
                        };
                        if list.contains(&id) {
                            return Err(invalid(format!("`{k}` lists {id} twice")));
                        }
                        list.push(id);
                    }
                }
                "suspend" => {
                    let Ok(b) = x.as_bool() else {
                        return Err(invalid(format!(
                            "`{k}` must be a bool, got {}",
                            type_of(&x)
                        )));
                    };
                    plan.suspend = b;
                }
                "reason" => {
                    if self.h.check_reason(hook, None, &x)? {
                        self.said = Some(x);
                    }
                }
                "fits" => {
                    return Err(invalid(
                        "a plan has no `fits` any more (vcsim writes the bytes either way, and `poll` deals with a violation): leave it out".into(),
                    ))
                }
                other => {
                    return Err(invalid(format!(
                        "unknown key `{other}` in the plan (expected delete_files, delete_jobs, suspend, reason)"
                    )))
                }
            }
        }
        Ok(plan)
    }
}

/// Compiles the script at `path` and adds it to the registry as a policy of
/// `family`, named by its path.
pub fn register(reg: &mut Registry, family: Family, path: &str) -> Result<(), String> {
    let script = Script::load(Path::new(path))?;
    script.check_family(family)?;
    let summary = script.summary.clone();
    let s = script.clone();
    reg.add(Entry::new(family, path, summary, path, move || {
        s.make(family)
    }))
}

/// The families a script's hooks serve, in the families' order (empty if
/// it defines no hook); an error if it does not compile.
pub fn families(path: &Path) -> Result<Vec<Family>, String> {
    Ok(Script::load(path)?.families())
}

/// Warnings for functions named like a hook of the script's families (or
/// `init`) but not one (`fn int()`): a hook is called by its name, so such
/// a function is never called by vcsim, and the run goes on without it.
pub fn near_miss_hooks(path: &Path) -> Result<Vec<String>, String> {
    let s = Script::load(path)?;
    let mut names: Vec<&str> = vec!["init"];
    for f in s.families() {
        names.extend(hooks(f).iter().map(|(n, _, _)| *n));
    }
    let all_hooks: BTreeSet<&str> = Family::ALL
        .iter()
        .flat_map(|f| hooks(*f).iter().map(|(n, _, _)| *n))
        .chain(["init"])
        .collect();
    let mut out = Vec::new();
    for (f, _) in &s.fns {
        if all_hooks.contains(f.as_str()) {
            continue;
        }
        let near = names.iter().find(|h| {
            let d = strsim::damerau_levenshtein(f, h);
            d == 1 || (d == 2 && h.len() >= 8)
        });
        if let Some(h) = near {
            out.push(format!(
                "{}: `{f}` is not a hook; did you mean `{h}`? vcsim calls a hook by its name, so `{f}` runs only where the script calls it",
                s.path
            ));
        }
    }
    Ok(out)
}

/// What `vcsim check` says of a script: the families it can serve.
pub fn check(path: &Path) -> Result<String, String> {
    let s = Script::load(path)?;
    let fams = s.families();
    if fams.is_empty() {
        let defined: Vec<String> = s.fns.iter().map(|(n, a)| format!("{n}/{a}")).collect();
        return Err(format!(
            "{}: defines no policy hook (schedule(v), request(v), consider(req, sent, cand), remaining(v, job) or free_space(v, p)); it defines: {}",
            s.path,
            if defined.is_empty() { "nothing".into() } else { defined.join(", ") }
        ));
    }
    // Make one policy of each family: runs `init()` and the constant hooks.
    for f in &fams {
        s.make(*f)?;
    }
    let names: Vec<&str> = fams.iter().map(|f| f.key()).collect();
    Ok(format!(
        "{}: valid rhai policy for {} ({})",
        s.path,
        names.join(", "),
        s.summary
    ))
}

/// The book's script API page, generated from the engine's registered functions.
pub fn api_reference() -> String {
    let (engine, docs) = build_engine();
    let sigs: BTreeSet<String> = engine
        .gen_fn_signatures(false)
        .into_iter()
        .map(|s| s.split('(').next().unwrap_or("").to_string())
        .collect();
    let mut out = String::new();
    out.push_str("# Script API reference\n\n");
    out.push_str("<!-- Generated by `vcsim_script::api_reference()` from the engine's registered functions. Do not edit: run `UPDATE_SCRIPT_API=1 cargo test --test scripts api_reference` to regenerate. -->\n\n");
    out.push_str("Everything a policy script can read or build, beyond rhai's standard library (arithmetic, strings, arrays, maps, `min`/`max`, `sort`, closures; not its blobs, byte arrays whose growth the limits below could not place on a line). Handles (`View`, `Job`, `Project`, ...) are read-only. Kept in `this`, a `View`, `Host`, `Prefs` or `Project` reads the state of the later call that reads it, not of the call that kept it; a `Job` is looked up again by id, and reading it once it has left the host is an error at that line; a `Capacity`, `RrSim`, `ListSim`, `Run` or `WorkRequest` is a value, as it was made.\n\n");
    out.push_str("Resources are numbered: `0` is the CPU, `1 + k` the host's k-th GPU type. Projects are numbered in the scenario's order. Times are simulated seconds since the start of the run.\n\n");
    out.push_str(&format!(
        "Limits per hook call: {} operations, where an operation that allocates (`+`, `+=`, `append` and `pad` of strings and arrays, and `curry`) counts one more per {} bytes it writes (an element counts 16, and `curry` writes anew all the values its function pointer holds; it takes at most 15 values a call), and every other function of rhai's whose cost grows with its operands (`split`, `to_chars`, `replace`, `index_of`, `contains`, `in`, `==` and `<` of strings, `==` of arrays and maps, `keys`, `values`, `sort`, `filter`, `map`, `to_string` of an array, ...) counts one more per {} bytes of its operands and result (an element counts {}, a map entry {}, {} times that in a function that compares or formats each; a sort without comparator, one per element and pass); `push` and `+=` of one value into an array count one more per {} bytes of the whole array (an element counts {}: rhai walks the array after each, so that a loop of them costs the square of its length, and about 12,000 of them fill one call), and so do the methods of arrays and maps that rhai walks after each in the same way (`len`, `is_empty`, `get`, `set`, and a map's `contains` and `remove`: a loop of `a.len()` over an array of 100,000 elements stops at its line after about 800 calls); {} s of wall-clock time (a backstop for the costs that no function pays: the copy of an array or map made by reading a variable, as in `let t = a;`, `a = [a]` or passing `a` to a script function, and indexing a string, `s[i]`); {} nested calls; strings of {} bytes, arrays of {} elements, maps of {} entries, each value with the values nested in it (a function pointer's curried values count as an array's elements, and reading a variable, once a script has curried a pointer, counts what it copies and holds the value read to these limits; a closure's captured variables count once, as they are shared). A map grown by `m[key] = x` is checked at the next use of a variable, and the state `this` in full after every call, which costs each call in proportion to the state's size (an estimator that keeps 1,000 values in `this` made a 100-day run of `mix-5-slack-5.toml` 5 times slower: keep the state small). A limit's error names the script, the line that hit it and the limit. Four errors keep no line, and name the hook instead. Three are rhai's own checks: an array or map literal over its limit (`a = [a, a]` in a loop), a string built by interpolation over its limit (`` s = `${{s}}${{s}}` `` in a loop), and a recursion whose deepest call uses no variable (`fn f() {{ f() }}`). The fourth is a call stopped by its operations or its time while it uses no variable, as an empty loop (`loop {{ }}`, `while true {{ }}`) or a loop that only calls functions that use none: rhai stops it with an error whose line each returning call overwrites, and none of rhai's hooks tells vcsim the line it is at (the variables are where vcsim stops a call at its line). A loop or recursion that uses a variable stops at that use, and the message counts the calls of each function once (`` `depth` (47 times) ``). A comparator's error in `sort` fails the call. `log` keeps at most {} lines and {} bytes a run (the run's log, or standard error where a hook has no view) and then says that later lines were dropped.\n\n",
        MAX_OPERATIONS,
        BYTES_PER_OPERATION,
        BYTES_PER_OPERATION,
        charged::ELEMENT_BYTES,
        charged::ENTRY_BYTES,
        charged::CALLING_FACTOR,
        BYTES_PER_OPERATION,
        limits::WALK_BYTES,
        MAX_CALL_SECONDS,
        api::MAX_CALL_LEVELS,
        api::MAX_STRING_SIZE,
        api::MAX_ARRAY_SIZE,
        api::MAX_MAP_SIZE,
        api::MAX_LOG_LINES,
        vcsim_framework::log::MAX_BYTES
    ));
    out.push_str(&format!(
        "A script file holds at most {MAX_SCRIPT_BYTES} bytes (the shipped policies hold 0.4 to 10 KB): rhai's time to compile some shapes of script grows with the square of their size (at this bound, the worst found compiles in under 2 s of a release build), and the bound keeps every line and column within the 65,535 that rhai's positions can name. A byte-order mark at its start (as Windows editors write) is ignored.\n\n"
    ));
    out.push_str("## Hooks\n\n| family | hook | called | returns |\n|---|---|---|---|\n");
    for (fam, hook, when, ret) in HOOK_DOCS {
        out.push_str(&format!("| `{fam}` | `{hook}` | {when} | {ret} |\n"));
    }
    out.push('\n');
    out.push_str(REASONS_DOC);
    let mut sections: Vec<&str> = Vec::new();
    for d in &docs {
        if !sections.contains(&d.section) {
            sections.push(d.section);
        }
    }
    for s in sections {
        out.push_str(&format!(
            "## {s}\n\n| use | returns | description |\n|---|---|---|\n"
        ));
        for d in docs.iter().filter(|d| d.section == s) {
            assert!(
                sigs.contains(&d.signature),
                "documented function `{}` is not registered",
                d.signature
            );
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                d.usage,
                d.returns,
                d.doc.replace('|', "\\|")
            ));
        }
        out.push('\n');
    }
    out
}

const HOOK_DOCS: &[(&str, &str, &str, &str)] = &[
    ("any", "init()", "once, when a run makes the policy", "the state `this` (default `#{}`)"),
    ("cpu", "schedule(v)", "when jobs finish or arrive, and every scheduling period", "array of `Job`, job id or `Run` (`deadline(job)`, `round_robin(job)`), each also as `#{ job, reason }`: the jobs to run; the rest are preempted. Or `#{ run: [...], reason, ranking }` (see Reasons)"),
    ("fetch", "request(v)", "at every step where work may be needed, also at projected future times: must be pure (must not change `this`)", "`WorkRequest` or `()`, or `#{ request, reason }`"),
    ("fetch", "account(v)", "before every schedule and RPC", "ignored"),
    ("fetch", "piggyback(v, p)", "when an RPC goes to p anyway (to report results); pure", "`WorkRequest` to p or `()`, or `#{ request, reason }` (a request to another project is an invalid decision)"),
    ("fetch", "on_reply(v, reply)", "after every RPC", "ignored"),
    ("fetch", "backoff_on_empty_reply()", "once", "bool (default true)"),
    ("send", "consider(req, sent, cand)", "for each candidate job the feeder draws", "`\"send\"`, `\"skip\"` or `\"stop\"`, or `#{ verdict, reason }`"),
    ("estimate", "remaining(v, job)", "whenever anything needs a job's remaining time; pure", "seconds (float)"),
    ("estimate", "correction(p)", "for new estimates of project p; pure", "factor (default 1)"),
    ("estimate", "on_job_finished(v, job)", "when a job finishes (the view estimates statically)", "ignored"),
    ("disk", "free_space(v, p)", "for each RPC to p; pure", "bytes, or `[free, free_if_offenders_deleted, free_if_p_deleted_too]`"),
    ("disk", "enforces()", "once", "bool (default false)"),
    ("disk", "make_room(v, p, bytes)", "when `bytes` more of p's are about to be written (a job's input on arrival, its output when it finishes); only if `enforces()`", "a plan `#{ delete_files, delete_jobs, suspend, reason }` or `()` (default: delete nothing); the bytes are written either way if they fit on the disk (a file that does not fails its job)"),
    ("disk", "poll(v)", "after every change to the files; only if `enforces()`", "a plan or `()` (default: delete nothing, `suspend: false`); `suspend: true` stops computation until a later poll says false; polls come only when the files change, so a suspension that depends on the time alone is never lifted"),
    ("disk", "project_limit(v, p)", "for the report, per project; pure", "bytes, or `()` for none (the default)"),
];

/// The page's section on reasons (after the hooks).
const REASONS_DOC: &str = r#"## Reasons

An explained run (`SimOptions::explain`, `vcsim explain`) records every decision the simulator applies with its policy's reason. A script gives a reason with the decision it returns; every form without one still works:

| hook | a decision with its reason |
|---|---|
| `schedule(v)` | an entry `#{ job: j, reason: r }` of the run list (`job` is what the entry would be: a `Job`, an id or a `Run`) explains that job. The run list as a map `#{ run: [...], reason: r, ranking: #{ name: "...", values: [...] } }`: its `reason` explains the jobs without one of their own (the ones it preempts too); `ranking` (optional) is what the projects are ranked by, one number per project, for the timeline's plot; its `name` labels the plot (an explained run keeps its first 200 characters, and the plot's label the first five names given, each cut at 120, and how many more) |
| `request(v)`, `piggyback(v, p)` | `#{ request: work_request(...), reason: r }` (`request` may be `()`) |
| `consider(req, sent, cand)` | `#{ verdict: "send", reason: r }` |
| `make_room(v, p, bytes)`, `poll(v)` | a key `reason: r` in the plan |

A reason `r` is a string, or a map: its `text` (a string; `""` if absent) is the sentence, and every other key is a value for programs, in the keys' alphabetical order (a rhai map keeps its keys sorted): a number (finite), a string or a bool. `()` is no reason. A reason is checked when the hook returns it (an invalid one fails the run, explained or not, naming the script, the hook and the key) and read only when an explained run asks for it.

```rhai
fn schedule(v) {
    let cap = v.capacity();
    let run = [];
    for j in v.jobs_by_deadline {
        if cap.fits(j) {
            cap.take(j);
            run.push(#{ job: j, reason: #{ text: "earliest deadline first", deadline_s: j.deadline } });
        }
    }
    #{ run: run, reason: "the jobs of earlier deadlines fill the host" }
}
```

"#;

#[cfg(test)]
mod charged_tests {
    use super::*;

    #[test]
    fn the_sized_functions_of_the_packages_are_charged() {
        let (engine, _) = build_engine();
        let c = charged::charged(|| unreachable!("made by build_engine"));
        for want in [
            "split(string: &mut string, delimiter: string)",
            "to_chars(string: string)",
            "==(array1: &mut array, array2: array)",
            "==(map1: &mut map, map2: map)",
            "==(string, string)",
            "contains(array: &mut array, value: Dynamic)",
            "index_of(string: string, find_string: string)",
            "keys(map: &mut map)",
            "values(map: &mut map)",
            "sort(array: &mut array)",
            "to_string(array: &mut array)",
            "replace(string: &mut string, find_string: string, substitute_string: string)",
        ] {
            assert!(
                c.signatures.iter().any(|s| s.starts_with(want)),
                "`{want}` is not charged"
            );
        }
        assert!(c.left.is_empty(), "left uncharged: {:?}", c.left);
        // In the engine, each call resolves to a wrapper (or to one of
        // `limits::register`'s functions), not to the package's own.
        for sig in &c.signatures {
            let Some((name, types)) = charged::parse_signature(sig) else {
                continue; // (rhai's built-in operators)
            };
            let f = charged::resolve(&engine, &name, &types).unwrap_or_else(|| panic!("{sig}"));
            assert!(f.get_plugin_fn().is_none(), "{sig} resolves to rhai's own");
        }
    }
}

#[cfg(test)]
mod api_tests {
    use crate::api::draw_in;

    /// Errors name a handle as `register` does (`Job`), through a table of
    /// their own: the two agree for every handle.
    #[test]
    fn a_handle_s_name_in_errors_is_its_registered_name() {
        use crate::api::*;
        use std::any::type_name;
        let rust = [
            type_name::<ViewH>(),
            type_name::<HostH>(),
            type_name::<PrefsH>(),
            type_name::<ProjectH>(),
            type_name::<JobH>(),
            type_name::<RunH>(),
            type_name::<RequestH>(),
            type_name::<CapacityH>(),
            type_name::<RrH>(),
            type_name::<ListSimH>(),
            type_name::<ServerH>(),
            type_name::<SentH>(),
            type_name::<CandH>(),
            type_name::<ReportedH>(),
            type_name::<ReplyH>(),
            type_name::<FileH>(),
        ];
        crate::ENGINE.with(|e| {
            for r in rust {
                assert_ne!(e.map_type_name(r), r, "{r} is registered");
                assert_eq!(script_name(r), e.map_type_name(r), "{r}");
            }
        });
    }

    #[test]
    fn an_integer_draw_is_the_old_one_wherever_that_did_not_overflow() {
        let old = |lo: i64, hi: i64, x: f64| lo + ((hi - lo) as f64 * x).floor() as i64;
        let xs = [0.0, 1e-9, 0.25, 0.5, 0.999, 1.0 - f64::EPSILON / 2.0];
        for (lo, hi) in [
            (0, 1),
            (-5, 3),
            (7, 1000),
            (i64::MIN, -1),
            (0, i64::MAX),
            (-1, i64::MAX - 1),
        ] {
            for x in xs {
                let want = old(lo, hi, x);
                if want < hi {
                    assert_eq!(draw_in(lo, hi, x), want, "({lo}, {hi}) at {x}");
                }
            }
        }
    }

    #[test]
    fn an_integer_draw_stays_in_its_range_however_wide() {
        let xs = [0.0, 1e-9, 0.25, 0.5, 0.999, 1.0 - f64::EPSILON / 2.0];
        for (lo, hi) in [
            (-3, i64::MAX),
            (-4611686018427387904, 4611686018427387905),
            (i64::MIN, i64::MAX),
            (i64::MIN, i64::MIN + 1),
            (i64::MAX - 1, i64::MAX),
            ((1 << 52) + 1, (1 << 53) + 2),
        ] {
            for x in xs {
                let got = draw_in(lo, hi, x);
                assert!(lo <= got && got < hi, "({lo}, {hi}) at {x}: {got}");
            }
        }
        // The widest range is drawn across, not pinned at one end.
        assert!(draw_in(i64::MIN, i64::MAX, 0.25) < 0 && draw_in(i64::MIN, i64::MAX, 0.75) > 0);
    }
}

#[cfg(test)]
mod limits_tests {
    #[test]
    fn the_clocks_stop_names_the_copies_that_no_operation_counts() {
        // `a = [a]` in a loop copies `a` at each read: the clock stops it.
        let m = crate::limits::stop_message(true);
        assert!(
            m.contains("copies a large array or map") && m.contains("`a = [a]`"),
            "{m}"
        );
    }
}
