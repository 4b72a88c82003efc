//! The limits of one hook call, under every path.
//!
//! rhai counts one operation per statement or expression, whatever it
//! costs, and checks a container's size when a function returns it or a
//! property is set, not when `m[key] = x` adds a key. Here:
//!
//! - an operation that allocates (`pad`, `+`, `+=` and `append` of strings
//!   and arrays) also counts one operation per [`BYTES_PER_OPERATION`]
//!   bytes it writes (an array element or map entry counts as 16 bytes),
//!   charged to the call's budget and checked by the progress callback;
//! - every other function of rhai's packages whose cost grows with its
//!   operands (`split`, `to_chars`, `replace`, `index_of`, `contains`,
//!   `==` of arrays, maps and strings, `keys`, `values`, `sort`, `filter`,
//!   `to_string` of an array...) counts the same way what it reads and
//!   writes (see `charged`);
//! - `push` and `+=` of one value into an array count the walk of the whole
//!   array that rhai's own size check makes after them ([`WALK_BYTES`] an
//!   element), so that a loop of them, whose cost is the square of the
//!   array's length, stops at its line rather than at the wall clock (so do
//!   `len`, `get`, `set` and their kin, which rhai walks after too: see
//!   `charged`);
//! - a variable's map (and `this`) is checked at every [`CHECK_EVERY`]-th
//!   use of a variable, its entries against the map limit, and every
//!   [`FULL_CHECK_EVERY`]-th its whole size (nested values too);
//! - the state `this` is checked in full after every call, so that it
//!   cannot grow from one call to the next;
//! - a call that computes for more than [`MAX_CALL_SECONDS`] of wall-clock
//!   time is stopped: a backstop for the costs that no function pays, and
//!   so no charge sees: the copy rhai makes of an array or map when it
//!   reads a variable (`let t = a;`, passing `a` to a script function),
//!   and indexing a string (`s[i]` walks its characters);
//! - calls nested deeper than [`MAX_CALL_LEVELS`] stop at their first use of
//!   a variable. rhai's own check (one level deeper, a backstop) raises an
//!   error whose position each returning call overwrites, so it names no line.
//!
//! - sizes count what every value holds: arrays, maps, strings, a function
//!   pointer's curried values (as an array's elements), and a shared value
//!   (a closure's captured variable) once however often it is held;
//!   `curry`, which rhai runs itself, is parsed as vcsim's own ([`CURRY`]),
//!   an allocation that counts the pointer it writes; and once a pointer was
//!   curried, reading a variable that holds one counts the values its copy
//!   copies (rhai's own checks of an array literal `[f, f]` see none).
//!
//! Every stop is an error at the position rhai is at, so the message names
//! the line that hit the limit, but for one made by the progress callback
//! (the call used no variable in its [`GRACE`], as `loop { }` does): rhai's
//! stop is one of its system errors, whose position each returning call
//! overwrites (the hook's, with none), and no callback of rhai sees the
//! position it is at.

use crate::api::{MAX_ARRAY_SIZE, MAX_CALL_LEVELS, MAX_MAP_SIZE, MAX_OPERATIONS, MAX_STRING_SIZE};
use rhai::{
    Array, Dynamic, Engine, EvalAltResult, EvalContext, FnPtr, ImmutableString, Map,
    NativeCallContext, Position,
};
use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Bytes of a script. rhai's parser and optimizer take time that grows with
/// the square of a script's size in some shapes (a run of bare blocks
/// `{1}{1}...`, the worst found: 1.7 s of a release build at this size; a
/// variable looked up past thousands of others); the shipped policies are
/// 0.4 to 10 KB.
pub const MAX_SCRIPT_BYTES: usize = 32 * 1024;
/// Lines of a script: rhai numbers lines in 16 bits, and the end of the
/// text (where an unfinished script's error is) is on the line after the
/// last line break.
pub const MAX_SCRIPT_LINES: usize = u16::MAX as usize;
/// Characters of a line: rhai numbers columns in 16 bits, and an error at
/// the end of a line is one column past its last character.
pub const MAX_LINE_CHARS: usize = u16::MAX as usize - 1;

/// Bytes an allocating operation may write per operation it is counted.
pub const BYTES_PER_OPERATION: u64 = 16;
/// Wall-clock seconds one hook call may compute.
pub const MAX_CALL_SECONDS: u64 = 5;
/// Uses of variables between two full size checks of the values used.
const FULL_CHECK_EVERY: u64 = 1024;
/// Uses of variables between two checks of the number of entries in the
/// map used (and `this`).
const CHECK_EVERY: u64 = 8;

/// Operations a call may still perform once it is over a limit of
/// operations or time: the next use of a variable fails with an error at
/// its position (so that the message names the line); a call that uses no
/// variable, or catches that error, is stopped at the end of this grace.
const GRACE: u64 = 10_000;

/// rhai's own count of operations stops a call here (a backstop: the budget
/// stops it first).
pub(crate) const RHAI_MAX_OPERATIONS: u64 = MAX_OPERATIONS + 2 * GRACE;

/// rhai's own limit of nested calls (a backstop: see the module's doc).
pub(crate) const RHAI_MAX_CALL_LEVELS: usize = MAX_CALL_LEVELS + 1;

/// The message of calls nested too deep.
pub(crate) fn too_deep_message() -> String {
    format!(
        "more than {MAX_CALL_LEVELS} nested calls (the limit of nested calls; endless recursion?)"
    )
}

/// The token the progress callback stops a call with.
const STOP: &str = "vcsim:stop";

#[derive(Clone, Copy, Default)]
pub(crate) struct Budget {
    /// Operations charged for allocations.
    charged: u64,
    /// Uses of variables (for the full size checks).
    uses: u64,
    started: Option<Instant>,
    /// The call went over its operations (false) or its time (true), at
    /// this count of operations.
    over: Option<(bool, u64)>,
    /// rhai's count of operations, as last seen (every 1024).
    ops: u64,
}

thread_local! {
    static BUDGET: Cell<Budget> = Cell::new(Budget::default());
}

/// The budget of one call: a fresh one from `begin` until the guard is
/// dropped, then the caller's (a nested call, a CPU script asking a scripted
/// estimator, has its own).
pub(crate) struct CallGuard(Budget);

pub(crate) fn begin() -> CallGuard {
    CallGuard(BUDGET.with(|b| {
        b.replace(Budget {
            started: Some(Instant::now()),
            ..Budget::default()
        })
    }))
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        BUDGET.with(|b| {
            let call = b.get();
            spend(
                call.ops
                    .saturating_add(call.charged)
                    .saturating_add(CALL_UNITS),
            );
            b.set(self.0)
        });
    }
}

/// What a hook call costs a run's budget besides its operations: about
/// what rhai spends to make a call (`check` of an estimator returning a
/// constant made 1.8 million calls a simulated day).
pub const CALL_UNITS: u64 = 100;

/// A budget of work for all the hook calls of a run (`check`'s dry run
/// has one): operations, charges and [`CALL_UNITS`] per call. Once spent,
/// the next call fails, and the run's time then is kept.
#[derive(Clone, Copy)]
struct RunBudget {
    left: u64,
    stopped_at: Option<f64>,
}

thread_local! {
    static RUN: Cell<Option<RunBudget>> = const { Cell::new(None) };
}

/// Gives the runs on this thread a budget of `units` (none: unlimited).
pub fn limit_run(units: Option<u64>) {
    RUN.with(|r| {
        r.set(units.map(|left| RunBudget {
            left,
            stopped_at: None,
        }))
    });
}

/// The simulated time at which the budget stopped the run, if it did.
pub fn run_stopped() -> Option<f64> {
    RUN.with(|r| r.get().and_then(|b| b.stopped_at))
}

fn spend(units: u64) {
    RUN.with(|r| {
        if let Some(mut b) = r.get() {
            b.left = b.left.saturating_sub(units);
            r.set(Some(b));
        }
    });
}

/// Whether the run's budget is spent (noting `now` the first time).
pub(crate) fn run_spent(now: f64) -> bool {
    RUN.with(|r| match r.get() {
        Some(mut b) if b.left == 0 => {
            b.stopped_at.get_or_insert(now);
            r.set(Some(b));
            true
        }
        _ => false,
    })
}

/// Bytes an array element or map entry counts for in rhai's own size check
/// of a value that a function changed in place (`push`, `+=`), which walks
/// the whole value after each call.
pub const WALK_BYTES: u64 = 4;

/// Charges rhai's walk of a value of `sizes` (see [`WALK_BYTES`]).
pub(crate) fn charge_walk(sizes: (usize, usize, usize)) {
    charge((sizes.0 as u64 + sizes.1 as u64).saturating_mul(WALK_BYTES));
}

/// Charges an allocation of `bytes` to the call.
pub(crate) fn charge(bytes: u64) {
    BUDGET.with(|b| {
        let mut x = b.get();
        x.charged = x.charged.saturating_add(bytes / BYTES_PER_OPERATION);
        b.set(x);
    });
}

// A script within its bytes has its every line and column within rhai's.
const _: () = assert!(MAX_SCRIPT_BYTES < MAX_SCRIPT_LINES && MAX_SCRIPT_BYTES < MAX_LINE_CHARS);

/// Why `text` cannot be compiled as a script, if it is too large: rhai's
/// time to compile grows with the square of its size, and past 16-bit lines
/// and columns its errors would name the wrong place (said too, if so).
pub(crate) fn script_size_error(text: &str) -> Option<String> {
    if text.len() <= MAX_SCRIPT_BYTES {
        return None;
    }
    let mut msg = format!(
        "{} bytes, more than a script's {MAX_SCRIPT_BYTES} (rhai's time to compile grows with the square of a script's size)",
        text.len()
    );
    let mut lines = 0;
    let mut wide = None;
    for (i, line) in text.split('\n').enumerate() {
        lines = i + 1;
        let chars = line.strip_suffix('\r').unwrap_or(line).chars().count();
        if chars > MAX_LINE_CHARS && wide.is_none() {
            wide = Some((lines, chars));
        }
    }
    let unnamed =
        "rhai numbers lines and columns in 16 bits: an error past them could not name its place";
    if lines > MAX_SCRIPT_LINES {
        msg += &format!(", and more than {MAX_SCRIPT_LINES} lines ({unnamed})");
    } else if let Some((l, chars)) = wide {
        msg += &format!(
            ", and its line {l} has {chars} characters, more than {MAX_LINE_CHARS} ({unnamed})"
        );
    }
    Some(msg)
}

/// The message of a call stopped by its operations or its time.
pub(crate) fn stop_message(time: bool) -> String {
    if time {
        format!(
            "stopped after {MAX_CALL_SECONDS} s of computing in one call (the limit of a hook call's wall-clock time; an endless loop, or one that copies a large array or map, as `let b = a;` or `a = [a]` do, which no operation counts?)"
        )
    } else {
        format!(
            "stopped after {MAX_OPERATIONS} operations in one call (the limit of operations per hook call, where an allocation counts one per {BYTES_PER_OPERATION} bytes; an endless loop?)"
        )
    }
}

/// Whether the call was stopped by its time (for the message of a stop).
pub(crate) fn stopped_by_time() -> bool {
    BUDGET.with(|b| b.get().over.is_some_and(|o| o.0))
}

/// rhai's progress callback: marks the call as over when its operations
/// and its charged allocations reach [`MAX_OPERATIONS`], or when it has
/// computed for [`MAX_CALL_SECONDS`]; stops it [`GRACE`] operations later.
pub(crate) fn progress(ops: u64) -> Option<Dynamic> {
    BUDGET.with(|cell| {
        let mut b = cell.get();
        if let Some((_, at)) = b.over {
            return (ops > at + GRACE).then(|| STOP.into());
        }
        if ops.is_multiple_of(1024) {
            b.ops = ops;
            cell.set(b);
        }
        if ops.saturating_add(b.charged) > MAX_OPERATIONS {
            b.over = Some((false, ops));
            cell.set(b);
        } else if ops.is_multiple_of(4096)
            && b.started
                .is_some_and(|t| t.elapsed() > Duration::from_secs(MAX_CALL_SECONDS))
        {
            b.over = Some((true, ops));
            cell.set(b);
        }
        None
    })
}

/// A limit's error: a runtime error, so that rhai keeps its position and
/// the chain of calls (a stop that cannot be caught follows, see
/// [`progress`]).
fn limit(msg: String) -> Box<EvalAltResult> {
    EvalAltResult::ErrorRuntime(msg.into(), Position::NONE).into()
}

fn too_large(what: &str) -> Box<EvalAltResult> {
    limit(too_large_message(what))
}

/// rhai's "data too large" error, with the limit it broke.
pub(crate) fn too_large_message(what: &str) -> String {
    let what = what.to_lowercase();
    if what.contains("map") {
        format!(
            "a map of more than {MAX_MAP_SIZE} entries (the limit per value, nested maps included)"
        )
    } else if what.contains("array") {
        format!("an array of more than {MAX_ARRAY_SIZE} elements (the limit per value, nested arrays included)")
    } else if what.contains("string") {
        format!("a string of more than {MAX_STRING_SIZE} bytes (the limit per value, the strings it holds included)")
    } else {
        format!("{what} over its limit")
    }
}

/// The sum of two values' sizes (elements, map entries, string bytes).
fn add(a: (usize, usize, usize), b: (usize, usize, usize)) -> (usize, usize, usize) {
    (
        a.0.saturating_add(b.0),
        a.1.saturating_add(b.1),
        a.2.saturating_add(b.2),
    )
}

/// (array elements, map entries, string bytes) of a value, nested values
/// included (as rhai counts them, and more: a function pointer's curried
/// values count as an array's elements, and a shared value, as a closure's
/// captured variable, counts once however often it is held).
pub(crate) fn sizes(d: &Dynamic) -> (usize, usize, usize) {
    let (owned, shared) = sizes_split(d);
    add(owned, shared)
}

/// The sizes of a value in two: what a copy of it copies, and what it only
/// points to (the shared values in it, each counted once).
pub(crate) fn sizes_split(d: &Dynamic) -> ((usize, usize, usize), (usize, usize, usize)) {
    let mut w = Walk::default();
    let owned = w.sizes(d);
    (owned, w.shared)
}

/// A computation of sizes: the shared values met (by the address of the
/// value in their lock), so that each counts once and a cycle (a closure
/// that captured the variable holding it) ends.
#[derive(Default)]
struct Walk {
    seen: HashSet<*const Dynamic>,
    shared: (usize, usize, usize),
}

impl Walk {
    fn sizes(&mut self, d: &Dynamic) -> (usize, usize, usize) {
        if d.is_shared() {
            // (None if it is locked for writing: it is being changed by the
            // native function running, which counts it itself.)
            let Some(inner) = d.read_lock::<Dynamic>() else {
                return (0, 0, 0);
            };
            let at: *const Dynamic = &*inner;
            if self.seen.insert(at) {
                let s = self.sizes(&inner);
                self.shared = add(self.shared, s);
            }
            return (0, 0, 0);
        }
        if let Some(a) = d.read_lock::<Array>() {
            return a
                .iter()
                .fold((a.len(), 0, 0), |acc, x| add(acc, self.sizes(x)));
        }
        if let Some(m) = d.read_lock::<Map>() {
            return m
                .values()
                .fold((0, m.len(), 0), |acc, x| add(acc, self.sizes(x)));
        }
        if let Some(s) = d.read_lock::<ImmutableString>() {
            return (0, 0, s.len());
        }
        if let Some(f) = d.read_lock::<FnPtr>() {
            let curry = f.curry();
            return curry
                .iter()
                .fold((curry.len(), 0, 0), |acc, x| add(acc, self.sizes(x)));
        }
        (0, 0, 0)
    }
}

/// An error if `sizes` are over a limit: the limit's message.
pub(crate) fn size_error(s: (usize, usize, usize)) -> Option<String> {
    if s.0 > MAX_ARRAY_SIZE {
        return Some(too_large_message("array"));
    }
    if s.1 > MAX_MAP_SIZE {
        return Some(too_large_message("map"));
    }
    if s.2 > MAX_STRING_SIZE {
        return Some(too_large_message("string"));
    }
    None
}

fn check_sizes(s: (usize, usize, usize)) -> RResult<()> {
    match size_error(s) {
        Some(m) => Err(limit(m)),
        None => Ok(()),
    }
}

fn bytes_of(s: (usize, usize, usize)) -> u64 {
    (s.0 as u64 + s.1 as u64) * 16 + s.2 as u64
}

/// rhai's variable callback: checks the maps in the variables (and `this`),
/// which `m[key] = x` may have grown past the limit; never resolves the
/// variable itself.
pub(crate) fn on_var(name: &str, _index: usize, ctx: EvalContext) -> RResult<Option<Dynamic>> {
    let b = BUDGET.with(|b| {
        let mut x = b.get();
        x.uses += 1;
        b.set(x);
        x
    });
    if let Some((time, _)) = b.over {
        return Err(limit(stop_message(time)));
    }
    if ctx.call_level() > MAX_CALL_LEVELS {
        return Err(limit(too_deep_message()));
    }
    // Reading a function pointer copies its curried values, which rhai's
    // own checks of the values built with it (an array literal `[f, f]`)
    // do not count: charged here, once a pointer was curried at all, and
    // the value read is held to the limits, so that literals nesting
    // curried pointers (`[g, g]` of `g = [f, f]`) stop at the first read
    // of one over them rather than doubling to an abort.
    if CURRIED.with(Cell::get) {
        if let Some(d) = ctx.scope().get(name) {
            check_sizes(sizes(d))?;
            charge(bytes_of(copied_by_read(d)));
        }
    }
    // Between two checks a map grows by at most CHECK_EVERY entries (one
    // per use of a variable).
    if !b.uses.is_multiple_of(CHECK_EVERY) {
        return Ok(None);
    }
    let full = b.uses.is_multiple_of(FULL_CHECK_EVERY);
    let check = |d: &Dynamic| -> RResult<()> {
        if full {
            return check_sizes(sizes(d));
        }
        if let Some(m) = d.read_lock::<Map>() {
            if m.len() > MAX_MAP_SIZE {
                return Err(too_large("Size of object map"));
            }
        }
        Ok(())
    };
    // Every variable, not only the one used (a fixed period could always
    // fall on the same variable of a loop).
    for (_, _, d) in ctx.scope().iter_raw() {
        check(d)?;
    }
    if let Some(t) = ctx.this_ptr() {
        check(t)?;
    }
    Ok(None)
}

type RResult<T> = Result<T, Box<EvalAltResult>>;

thread_local! {
    /// Whether a script on this thread curried a function pointer (see
    /// [`on_var`]): until then, reading a variable costs no look-up.
    static CURRIED: Cell<bool> = const { Cell::new(false) };
}

/// What reading the variable `d` copies, if it holds a curried function
/// pointer: its curried values, less the shared ones (pointers).
fn copied_by_read(d: &Dynamic) -> (usize, usize, usize) {
    // (A shared value is read as a pointer, and reading it would take its
    // lock.)
    if d.is_shared() {
        return (0, 0, 0);
    }
    match d.read_lock::<FnPtr>() {
        Some(f) if f.is_curried() => {
            let mut w = Walk::default();
            let curry = f.curry();
            curry
                .iter()
                .fold((curry.len(), 0, 0), |acc, x| add(acc, w.sizes(x)))
        }
        _ => (0, 0, 0),
    }
}

/// The name `curry` is parsed as (see [`register`]): rhai's own `curry`,
/// which its evaluator runs before any registered function, copies the
/// pointer's curried values and adds the new ones uncounted.
pub(crate) const CURRY: &str = "curry$";

/// Curried arguments a call of `curry` may add.
const MAX_CURRIED_ARGS: usize = 15;

/// `f.curry(x, ...)` and `curry(f, x, ...)`: rhai's, counted as an
/// allocation (the pointer's curried values and the new ones, written
/// anew) and checked against the limits before it is made.
fn curry(args: &mut [&mut Dynamic]) -> RResult<Dynamic> {
    let Some((first, rest)) = args.split_first_mut() else {
        return Err("`curry` takes a function pointer".to_string().into());
    };
    if first.read_lock::<FnPtr>().is_none() {
        return Err(format!(
            "`curry` takes a function pointer (as `Fn(\"name\")`), not {}",
            first.type_name()
        )
        .into());
    }
    let mut total = sizes(first);
    for x in rest.iter() {
        total = add(total, add((1, 0, 0), sizes(x)));
    }
    check_sizes(total)?;
    charge(bytes_of(total));
    CURRIED.with(|c| c.set(true));
    let mut f = match first.read_lock::<FnPtr>() {
        Some(f) => f.clone(),
        None => return Err("`curry` takes a function pointer".to_string().into()),
    };
    for x in rest.iter_mut() {
        f.add_curry(std::mem::take(*x));
    }
    Ok(f.into())
}

/// Registers the allocating functions that count their size: they shadow
/// rhai's own (same behaviour, plus the charge and the size check before
/// the allocation).
pub(crate) fn register(e: &mut Engine) {
    // `curry`, parsed as `CURRY` (see `lib::build_engine`).
    for extra in 0..=MAX_CURRIED_ARGS {
        let types = vec![std::any::TypeId::of::<Dynamic>(); extra + 1];
        e.register_raw_fn(CURRY, types, |_, args| curry(args));
    }
    // Strings.
    e.register_fn(
        "pad",
        |s: &mut ImmutableString, len: i64, c: char| -> RResult<()> {
            let have = s.chars().count();
            let Ok(len) = usize::try_from(len) else {
                return Ok(());
            };
            if len <= have {
                return Ok(());
            }
            let bytes = s.len() + (len - have) * c.len_utf8();
            if bytes > MAX_STRING_SIZE {
                return Err(too_large("Length of string"));
            }
            charge(bytes as u64);
            let p = s.make_mut();
            p.push_str(&c.to_string().repeat(len - have));
            Ok(())
        },
    );
    e.register_fn(
        "pad",
        |s: &mut ImmutableString, len: i64, padding: &str| -> RResult<()> {
            let mut have = s.chars().count();
            let Ok(len) = usize::try_from(len) else {
                return Ok(());
            };
            if len <= have || padding.is_empty() {
                return Ok(());
            }
            let max_char = padding.chars().map(char::len_utf8).max().unwrap_or(1);
            let bytes = s.len() + (len - have) * max_char;
            if len > MAX_STRING_SIZE || bytes > 4 * MAX_STRING_SIZE {
                return Err(too_large("Length of string"));
            }
            charge(bytes as u64);
            let n = padding.chars().count();
            let p = s.make_mut();
            while have < len {
                if have + n <= len {
                    p.push_str(padding);
                    have += n;
                } else {
                    p.extend(padding.chars().take(len - have));
                    have = len;
                }
            }
            if p.len() > MAX_STRING_SIZE {
                return Err(too_large("Length of string"));
            }
            Ok(())
        },
    );
    fn concat(a: &str, b: &str) -> RResult<ImmutableString> {
        let bytes = a.len() + b.len();
        if bytes > MAX_STRING_SIZE {
            return Err(too_large("Length of string"));
        }
        charge(bytes as u64);
        let mut s = String::with_capacity(bytes);
        s.push_str(a);
        s.push_str(b);
        Ok(s.into())
    }
    e.register_fn("+", |a: ImmutableString, b: ImmutableString| {
        if b.is_empty() {
            return Ok(a);
        }
        if a.is_empty() {
            return Ok(b);
        }
        concat(&a, &b)
    });
    e.register_fn("+", |a: ImmutableString, c: char| {
        concat(&a, c.encode_utf8(&mut [0; 4]))
    });
    e.register_fn("+", |c: char, b: ImmutableString| {
        concat(c.encode_utf8(&mut [0; 4]), &b)
    });
    fn append(s: &mut ImmutableString, b: &str) -> RResult<()> {
        if b.is_empty() {
            return Ok(());
        }
        let bytes = s.len() + b.len();
        if bytes > MAX_STRING_SIZE {
            return Err(too_large("Length of string"));
        }
        charge(bytes as u64);
        s.make_mut().push_str(b);
        Ok(())
    }
    e.register_fn("+=", |s: &mut ImmutableString, b: ImmutableString| {
        append(s, &b)
    });
    e.register_fn("+=", |s: &mut ImmutableString, c: char| {
        append(s, c.encode_utf8(&mut [0; 4]))
    });
    e.register_fn("append", |s: &mut ImmutableString, b: ImmutableString| {
        append(s, &b)
    });
    e.register_fn("append", |s: &mut ImmutableString, c: char| {
        append(s, c.encode_utf8(&mut [0; 4]))
    });

    // Arrays.
    e.register_fn(
        "pad",
        |a: &mut Array, len: i64, item: Dynamic| -> RResult<()> {
            let Ok(len) = usize::try_from(len) else {
                return Ok(());
            };
            if len <= a.len() {
                return Ok(());
            }
            if len > MAX_ARRAY_SIZE {
                return Err(too_large("Size of array"));
            }
            let n = len - a.len();
            // The copies share the values `item` points to.
            let (one, shared) = sizes_split(&item);
            let have = add(sizes_of_array(a), shared);
            let total = (
                have.0 + n.saturating_mul(1 + one.0),
                have.1 + n.saturating_mul(one.1),
                have.2 + n.saturating_mul(one.2),
            );
            check_sizes(total)?;
            charge(bytes_of(total));
            a.extend(std::iter::repeat_n(item, n));
            Ok(())
        },
    );
    fn join(a: &mut Array, b: Array) -> RResult<()> {
        let total = add(sizes_of_array(a), sizes_of_array(&b));
        check_sizes(total)?;
        charge(bytes_of(total));
        a.extend(b);
        Ok(())
    }
    e.register_fn("+", |mut a: Array, b: Array| -> RResult<Array> {
        join(&mut a, b)?;
        Ok(a)
    });
    e.register_fn("+=", join);
    e.register_fn("append", join);
    // `push` of a value that holds others (an array pushed into itself
    // doubles it): checked here, at the script's line, not by rhai after.
    fn push(a: &mut Array, item: Dynamic) -> RResult<()> {
        let one = sizes(&item);
        let total = add(sizes_of_array(a), add((1, 0, 0), one));
        check_sizes(total)?;
        charge(bytes_of(one));
        // rhai walks the whole array after the call (its own size check),
        // so that a loop of pushes costs the square of the array's length.
        charge_walk(total);
        a.push(item);
        Ok(())
    }
    e.register_fn("push", push);
    // `a += x` of a value that is not an array: rhai's built-in push.
    e.register_fn("+=", push);

    // `sort` with a comparator: rhai's ignores the comparator's errors (and
    // values that are not numbers); here they fail the call.
    e.register_fn(
        "sort",
        |ctx: NativeCallContext, a: &mut Array, cmp: FnPtr| -> RResult<()> {
            if a.len() <= 1 {
                return Ok(());
            }
            let mut err: Option<Box<EvalAltResult>> = None;
            let sorted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                a.sort_by(|x, y| {
                    if err.is_some() {
                        return Ordering::Equal;
                    }
                    let v = match cmp.call_raw(&ctx, None, [x.clone(), y.clone()]) {
                        Ok(v) => v,
                        Err(e) => {
                            err = Some(e);
                            return Ordering::Equal;
                        }
                    };
                    let n = if let Ok(i) = v.as_int() {
                        Some(i as f64)
                    } else if let Ok(f) = v.as_float() {
                        Some(f)
                    } else if let Ok(b) = v.as_bool() {
                        Some(if b { -1.0 } else { 1.0 })
                    } else {
                        None
                    };
                    match n {
                        Some(n) if !n.is_nan() => n.partial_cmp(&0.0).unwrap_or(Ordering::Equal),
                        _ => {
                            err = Some(
                                format!(
                                    "the comparator of `sort` must return a number (negative, 0 or positive) or a bool, got {}",
                                    if n.is_some() { "NaN" } else { v.type_name() }
                                )
                                .into(),
                            );
                            Ordering::Equal
                        }
                    }
                });
            }));
            if let Some(e) = err {
                return Err(e);
            }
            sorted.map_err(|_| {
                "the comparator of `sort` is not a total order (it contradicts itself)"
                    .to_string()
                    .into()
            })
        },
    );
}

fn sizes_of_array(a: &Array) -> (usize, usize, usize) {
    let mut w = Walk::default();
    let owned = a
        .iter()
        .fold((a.len(), 0, 0), |acc, x| add(acc, w.sizes(x)));
    add(owned, w.shared)
}
