//! Worker threads for independent runs, shared by `vcsim sweep` and
//! `vcsim compare`: how many, and a pool whose failure to start is an error
//! to report, not a panic.

/// The most threads an explicit `--jobs` starts, however many runs there
/// are. Runs are CPU-bound: beyond the cores, threads only add memory and
/// switching; the cap keeps `--jobs 100000` from asking the system for
/// 100,000 threads.
pub const MAX_JOBS: usize = 1024;

/// The stack of a thread that runs simulations (the CLI's main one too). A
/// script may nest arrays as deep as its limit of elements (100,000), and
/// rhai walks, copies and drops nested values recursively: with the 2 MB a
/// thread gets by default, `a = [[[[a]]]]` in a loop aborted the process.
/// Only the pages a run touches are used.
pub const STACK_BYTES: usize = 64 << 20;

/// [`STACK_BYTES`], or more where `RUST_MIN_STACK` asks for more (as it
/// does of every thread Rust starts).
pub fn stack_bytes() -> usize {
    let asked = std::env::var("RUST_MIN_STACK")
        .ok()
        .and_then(|v| v.trim().parse().ok());
    asked.map_or(STACK_BYTES, |a: usize| a.max(STACK_BYTES))
}

/// The worker threads for `runs` runs. Without `jobs`: the machine's
/// available parallelism (what the process may use: affinity and cgroup
/// quotas count). With `jobs`: that many, even beyond the cores, up to
/// [`MAX_JOBS`]. Either way never more than the number of runs, and at
/// least one.
pub fn count(jobs: Option<usize>, runs: usize) -> usize {
    let want = match jobs {
        Some(j) => j.min(MAX_JOBS),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    want.min(runs).max(1)
}

/// A pool of [`count`]`(jobs, runs)` threads. `Some(0)` and a system that
/// refuses to start the threads (a limit on processes, on memory) are
/// errors whose message says what to do.
pub fn pool(jobs: Option<usize>, runs: usize) -> Result<rayon::ThreadPool, String> {
    if jobs == Some(0) {
        return Err("--jobs must be at least 1".into());
    }
    let n = count(jobs, runs);
    let refused = |e: &dyn std::fmt::Display| {
        format!(
            "cannot start {n} worker thread{}: {e}; try a smaller --jobs, or raise the \
             system's limit on processes (ulimit -u) or memory",
            if n == 1 { "" } else { "s" }
        )
    };
    room_for(n).map_err(|_| refused(&"not enough memory"))?;
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(|i| format!("vcsim-run-{i}"))
        .stack_size(stack_bytes())
        .build()
        .map_err(|e| refused(&e))
}

/// Memory a worker thread takes besides its stack, with room to spare:
/// rayon's queue for it, its name and handles, each a page or more when
/// malloc falls back to mapping pages one by one.
const THREAD_HEAP_BYTES: usize = 256 << 10;

/// Whether `n` threads' bookkeeping fits in the address space the process
/// may still map. rayon allocates every worker's queue before it starts the
/// first thread, and a failed allocation aborts the process (it did, exit
/// 134, under `ulimit -v`, where a thread without its own malloc arena pays
/// a page per small allocation): the room is asked for here, where a
/// refusal is an error, and given back before the pool is built. The
/// stacks are not: a stack that cannot be mapped is an error rayon reports,
/// and the stack of a thread that has just ended (the pool that checked a
/// sweep's cells) is still mapped until the next thread starts and reuses it.
fn room_for(n: usize) -> Result<(), std::collections::TryReserveError> {
    let mut held: Vec<Vec<u8>> = Vec::new();
    held.try_reserve_exact(n)?;
    for _ in 0..n {
        let mut block: Vec<u8> = Vec::new();
        block.try_reserve_exact(THREAD_HEAP_BYTES)?;
        held.push(block);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_capped_at_the_runs_and_at_max_jobs() {
        assert_eq!(count(Some(100_000), 3), 3);
        assert_eq!(count(Some(100_000), 1_000_000), MAX_JOBS);
        assert_eq!(count(Some(2), 3), 2);
        assert_eq!(count(Some(5), 0), 1);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(count(None, 1_000_000), cores);
        assert_eq!(count(None, 1), 1);
        // More than the cores is honoured when asked for.
        assert_eq!(count(Some(cores + 3), 1_000), cores + 3);
    }

    #[test]
    fn a_pool_of_the_capped_size() {
        let p = pool(Some(100_000), 3).unwrap();
        assert_eq!(p.current_num_threads(), 3);
        assert!(pool(Some(0), 3)
            .unwrap_err()
            .contains("--jobs must be at least 1"));
    }
}
