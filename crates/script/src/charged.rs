//! rhai's own functions whose cost grows with their operands, charged to
//! the call's budget.
//!
//! rhai counts one operation per call of a function, whatever it costs:
//! `s.split("")`, `a == b`, `a.contains(x)`, `m.values()` are each one
//! operation on values of 100,000 elements. Here each such function of the
//! standard packages is shadowed by a wrapper that charges one operation per
//! [`BYTES_PER_OPERATION`] bytes of its operands and of its result, nested
//! values included (an array element counts [`ELEMENT_BYTES`], a map entry
//! [`ENTRY_BYTES`], [`CALLING_FACTOR`] times that in a function that calls a
//! rhai function for each, to compare or format it; a sort without
//! comparator one operation per element and pass), then calls rhai's own
//! function: the same code, with the same flags (pure, method, volatile,
//! context), so the same behaviour. The rates are set so that a loop of any
//! of them on the largest values stops within about 0.4 s of a release
//! build (`tests/hostile.rs`).
//!
//! Not charged, as no function pays them: the copy of an array or map that
//! reading a variable makes (`let t = a;`, an argument of a script
//! function), and indexing a string (`s[i]` walks its characters); the
//! wall-clock backstop ([`crate::MAX_CALL_SECONDS`]) stops those.
//!
//! rhai offers no public handle on a package's functions: the wrapped ones
//! are found by resolving a call of each in a plain engine (the packages
//! alone) and reading rhai's cache of resolved functions (`internals`). The
//! signatures come from the engine's metadata (`metadata`), so every
//! function the packages register with a string, array, map or blob
//! parameter is charged, but for the few that cost the same whatever the
//! size ([`is_cheap`]); of those, the methods of arrays and maps that rhai
//! walks after each call are charged that walk ([`is_walked`]).

use crate::limits::{charge, charge_walk, sizes, BYTES_PER_OPERATION};
use rhai::{
    Array, Blob, Caches, Dynamic, Engine, EvalAltResult, FnPtr, FuncRegistration, ImmutableString,
    Map, Module, NativeCallContext, RhaiFunc, Scope, Shared, INT,
};
use std::any::TypeId;
use std::sync::OnceLock;

/// rhai's built-in operators (no package function) whose cost grows with
/// their operands: (operator, its two operand types).
fn builtin_operators() -> Vec<(&'static str, [TypeId; 2])> {
    let s = TypeId::of::<ImmutableString>();
    let c = TypeId::of::<char>();
    let mut v: Vec<_> = ["==", "!=", "<", "<=", ">", ">=", "-", "-="]
        .into_iter()
        .map(|op| (op, [s, s]))
        .collect();
    v.push(("-", [s, c]));
    v.push(("-=", [s, c]));
    v
}

/// Functions that cost the same whatever the size of their operands (by
/// name and type of the first parameter): not charged by their operands.
fn is_cheap(name: &str, first: Option<TypeId>) -> bool {
    let array = first == Some(TypeId::of::<Array>());
    let map = first == Some(TypeId::of::<Map>());
    match name {
        "is_empty" | "get$is_empty" | "bytes" | "get$bytes" => true,
        "len" | "get$len" | "get" | "set" => array || map,
        "pop" => array,
        "contains" | "remove" => map,
        _ => false,
    }
}

/// Whether rhai walks the first operand of a cheap function after each
/// call (its own size check of a container a method may have changed):
/// `a.len()`, `a.get(i)`, `m.contains(k)` on arrays and maps, whose loop
/// would otherwise cost the square of the size with one operation counted.
fn is_walked(name: &str, first: Option<TypeId>) -> bool {
    let container = first == Some(TypeId::of::<Array>()) || first == Some(TypeId::of::<Map>());
    container && is_cheap(name, first)
}

/// Sorts: `log2(n)` passes over their array.
fn is_sort(name: &str) -> bool {
    matches!(name, "sort" | "sort_desc" | "order" | "order_desc")
}

/// A parameter's type, from its name in a signature of the engine's
/// metadata; `None` for a type this module does not know (such a function
/// is left as it is).
fn type_of_param(t: &str) -> Option<TypeId> {
    let t = t.trim().trim_start_matches("&mut ").trim();
    Some(match t {
        "array" | "Array" => TypeId::of::<Array>(),
        "map" | "Map" => TypeId::of::<Map>(),
        "string" | "String" | "ImmutableString" | "&str" => TypeId::of::<ImmutableString>(),
        "blob" | "Blob" => TypeId::of::<Blob>(),
        "Dynamic" | "?" => TypeId::of::<Dynamic>(),
        "i64" => TypeId::of::<INT>(),
        "f64" => TypeId::of::<f64>(),
        "f32" => TypeId::of::<f32>(),
        "bool" => TypeId::of::<bool>(),
        "char" => TypeId::of::<char>(),
        "()" => TypeId::of::<()>(),
        "Fn" | "FnPtr" => TypeId::of::<FnPtr>(),
        "range" => TypeId::of::<std::ops::Range<INT>>(),
        "range=" => TypeId::of::<std::ops::RangeInclusive<INT>>(),
        _ => return None,
    })
}

/// (name, parameter types) of a signature `name(a: T, b: &mut U) -> R`.
pub(crate) fn parse_signature(sig: &str) -> Option<(String, Vec<TypeId>)> {
    let open = sig.find('(')?;
    let name = &sig[..open];
    let mut depth = 0usize;
    let mut close = None;
    for (i, ch) in sig[open..].char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let params = &sig[open + 1..close?];
    let mut types = Vec::new();
    if !params.trim().is_empty() {
        for p in params.split(", ") {
            let t = p.rsplit_once(": ").map_or(p, |(_, t)| t);
            types.push(type_of_param(t)?);
        }
    }
    Some((name.to_string(), types))
}

/// A value of type `t` to resolve a call with: an empty one, so that the
/// function does nothing; for `Dynamic`, a type no function takes, so that
/// only a function taking any value matches.
fn sample(t: TypeId) -> Option<Dynamic> {
    #[derive(Clone)]
    struct Probe;
    Some(if t == TypeId::of::<Array>() {
        Dynamic::from_array(Array::new())
    } else if t == TypeId::of::<Map>() {
        Dynamic::from_map(Map::new())
    } else if t == TypeId::of::<ImmutableString>() {
        Dynamic::from(ImmutableString::new())
    } else if t == TypeId::of::<Blob>() {
        Dynamic::from_blob(Blob::new())
    } else if t == TypeId::of::<Dynamic>() {
        Dynamic::from(Probe)
    } else if t == TypeId::of::<INT>() {
        Dynamic::from_int(0)
    } else if t == TypeId::of::<f64>() {
        Dynamic::from_float(0.0)
    } else if t == TypeId::of::<bool>() {
        Dynamic::from_bool(false)
    } else if t == TypeId::of::<char>() {
        Dynamic::from_char('a')
    } else if t == TypeId::of::<()>() {
        Dynamic::UNIT
    } else if t == TypeId::of::<FnPtr>() {
        Dynamic::from(FnPtr::new("probe").ok()?)
    } else if t == TypeId::of::<std::ops::Range<INT>>() {
        Dynamic::from(0..0 as INT)
    } else if t == TypeId::of::<std::ops::RangeInclusive<INT>>() {
        Dynamic::from(0..=0 as INT)
    } else {
        return None;
    })
}

/// The function a call of `name` with arguments of `types` resolves to in
/// `plain`: the call is evaluated twice (rhai caches a function at its
/// second call) and the one function in the cache is taken.
pub(crate) fn resolve(plain: &Engine, name: &str, types: &[TypeId]) -> Option<RhaiFunc> {
    let vars: Vec<String> = (0..types.len()).map(|i| format!("__p{i}")).collect();
    let is_ident = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    let text = if let Some(prop) = name.strip_prefix("get$") {
        if types.len() != 1 {
            return None;
        }
        format!("{}.{prop}", vars[0])
    } else if is_ident && !name.contains('$') {
        format!("{name}({})", vars.join(", "))
    } else if !is_ident && types.len() == 2 {
        format!("{} {name} {}", vars[0], vars[1])
    } else {
        return None;
    };
    let scope = |vars: &[String]| -> Option<Scope<'static>> {
        let mut scope = Scope::new();
        for (v, t) in vars.iter().zip(types) {
            scope.push_dynamic(v.clone(), sample(*t)?);
        }
        Some(scope)
    };
    let ast = plain.compile_with_scope(&scope(&vars)?, &text).ok()?;
    let mut caches = Caches::new();
    for _ in 0..2 {
        let mut scope = scope(&vars)?;
        let mut global = plain.new_global_runtime_state();
        #[allow(deprecated)] // (as in `call_with_this`)
        let _ = plain.eval_statements_raw(&mut global, &mut caches, &mut scope, ast.statements());
    }
    let mut found = caches
        .fn_resolution_cache_mut()
        .dict
        .values()
        .flatten()
        .map(|e| e.func.clone());
    let f = found.next()?;
    if found.next().is_some() || !f.is_native() {
        return None;
    }
    Some(f)
}

/// Bytes an array element counts for, in the operands and result of a
/// charged function (an element is a value to visit, clone or drop).
pub(crate) const ELEMENT_BYTES: u64 = 64;
/// Bytes a map entry counts for (a key, a value and a node of the tree).
pub(crate) const ENTRY_BYTES: u64 = 128;
/// How many times more an element or entry counts in a function that calls
/// a rhai function for each (to compare or format it): `==`, `!=`,
/// `contains`, `in`, `index_of`, `dedup`, `to_string` and its kin.
pub(crate) const CALLING_FACTOR: u64 = 4;

/// The functions that call a rhai function for each element or entry.
fn is_calling(name: &str) -> bool {
    matches!(
        name,
        "==" | "!="
            | "contains"
            | "index_of"
            | "dedup"
            | "to_string"
            | "to_debug"
            | "print"
            | "debug"
    )
}

/// What a call reads or writes of a value: its elements, entries and
/// string bytes, nested values included, in bytes.
fn weight(d: &Dynamic, factor: u64) -> u64 {
    if d.is_blob() {
        return d.read_lock::<Blob>().map_or(0, |b| b.len() as u64);
    }
    let (elements, entries, bytes) = sizes(d);
    (elements as u64 * ELEMENT_BYTES + entries as u64 * ENTRY_BYTES)
        .saturating_mul(factor)
        .saturating_add(bytes as u64)
}

/// How many times an array element's walk a map entry's costs (rhai visits
/// a node of its tree and the key's string).
const MAP_WALK_FACTOR: usize = 4;

/// How a wrapper charges a call.
#[derive(Clone, Copy)]
enum Charge {
    /// Its operands and result, by their weight (`calling`: times
    /// [`CALLING_FACTOR`]).
    Operands { calling: bool },
    /// A sort: one operation per element and pass.
    Sort,
    /// rhai's walk of its first operand after the call (see `is_walked`),
    /// as `push`'s is charged, and its result.
    Walk,
}

/// A wrapper of `f` that charges its operands and result first and last.
fn wrap(f: RhaiFunc, how: Charge) -> RhaiFunc {
    let factor = match how {
        Charge::Operands { calling: true } => CALLING_FACTOR,
        _ => 1,
    };
    let (has_context, is_pure, is_volatile, is_method) =
        (f.has_context(), f.is_pure(), f.is_volatile(), f.is_method());
    let call = move |ctx: Option<NativeCallContext>,
                     args: &mut [&mut Dynamic]|
          -> Result<Dynamic, Box<EvalAltResult>> {
        match how {
            Charge::Sort => {
                // One comparison of two elements per element and pass.
                let n = args
                    .first()
                    .map_or(0, |a| a.read_lock::<Array>().map_or(0, |a| a.len() as u64));
                charge(n * BYTES_PER_OPERATION * u64::from(64 - n.leading_zeros()));
            }
            Charge::Walk => {
                // Counted from the container's own length, at no cost: a
                // count of the nested values would walk it a second time.
                if let Some(a) = args.first() {
                    let elements = a.read_lock::<Array>().map_or(0, |a| a.len());
                    let entries = a.read_lock::<Map>().map_or(0, |m| m.len());
                    charge_walk((elements, entries * MAP_WALK_FACTOR, 0));
                }
            }
            Charge::Operands { .. } => charge(args.iter().map(|a| weight(a, factor)).sum()),
        }
        let r = if let Some(p) = f.get_plugin_fn() {
            p.call(ctx, args)
        } else if let Some(n) = f.get_native_fn() {
            n(ctx, args)
        } else {
            // (`charged` wraps only functions that have one of the two.)
            Err("a charged function lost its code: a bug of vcsim".into())
        }?;
        charge(weight(&r, 1));
        Ok(r)
    };
    if is_method {
        RhaiFunc::Method {
            func: Shared::new(call),
            has_context,
            is_pure,
            is_volatile,
        }
    } else {
        RhaiFunc::Pure {
            func: Shared::new(call),
            has_context,
            is_pure,
            is_volatile,
        }
    }
}

/// The wrappers, and the signatures of the functions they wrap.
pub(crate) struct Charged {
    pub module: Shared<Module>,
    /// The signatures of the functions charged.
    #[cfg_attr(not(test), allow(dead_code))]
    pub signatures: Vec<String>,
    /// Those of the functions with a sized parameter left uncharged (no
    /// call of theirs resolves to them alone).
    #[cfg_attr(not(test), allow(dead_code))]
    pub left: Vec<String>,
}

/// The wrappers of the functions of `plain` (an engine holding only the
/// packages), made once.
pub(crate) fn charged(plain: impl FnOnce() -> Engine) -> &'static Charged {
    static CHARGED: OnceLock<Charged> = OnceLock::new();
    CHARGED.get_or_init(|| {
        let plain = plain();
        let mut module = Module::new();
        let mut signatures = Vec::new();
        let mut left = Vec::new();
        let sized = [
            TypeId::of::<Array>(),
            TypeId::of::<Map>(),
            TypeId::of::<ImmutableString>(),
            TypeId::of::<Blob>(),
        ];
        let formats = ["print", "debug", "to_string", "to_debug"];
        let mut wanted: Vec<(String, Vec<TypeId>, String)> = plain
            .gen_fn_signatures(true)
            .into_iter()
            .filter_map(|s| parse_signature(&s).map(|(name, types)| (name, types, s)))
            .filter(|(name, types, _)| {
                (types.iter().any(|t| sized.contains(t))
                    || (formats.contains(&name.as_str()) && types == &[TypeId::of::<Dynamic>()]))
                    && (!is_cheap(name, types.first().copied())
                        || is_walked(name, types.first().copied()))
            })
            .collect();
        for (op, t) in builtin_operators() {
            let sig = format!(
                "{op}(string, {})",
                if t[1] == t[0] { "string" } else { "char" }
            );
            wanted.push((op.to_string(), t.to_vec(), sig));
        }
        wanted.sort_by(|a, b| a.2.cmp(&b.2));
        wanted.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        for (name, types, sig) in wanted {
            let Some(f) = resolve(&plain, &name, &types)
                .filter(|f| f.get_plugin_fn().is_some() || f.get_native_fn().is_some())
            else {
                left.push(sig);
                continue;
            };
            // A function that takes its first operand by value may not
            // change it: a wrapper that does would be called with it by
            // reference.
            if !f.is_method() && !f.is_pure() {
                left.push(sig);
                continue;
            }
            let how = if is_walked(&name, types.first().copied()) {
                Charge::Walk
            } else if is_sort(&name) {
                Charge::Sort
            } else {
                Charge::Operands {
                    calling: is_calling(&name),
                }
            };
            FuncRegistration::new(name.as_str()).set_into_module_raw(
                &mut module,
                &types,
                wrap(f, how),
            );
            signatures.push(sig);
        }
        Charged {
            module: Shared::new(module),
            signatures,
            left,
        }
    })
}
