//! `vcsim`: the runner. Argument parsing and glue only; the simulator lives
//! in `vcsim-framework`, the policies in `vcsim-builtin`.

#![forbid(unsafe_code)]

mod commands;
mod compare;
mod dylibs;
mod explain_cmd;
mod extensions;
mod import_cmd;
mod output;
mod scripts;
mod search_cmd;
mod sweep_cmd;
mod timeline_html;
mod watch;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// A workbench for the scheduling policies of volunteer-computing clients.
///
/// With no command, compares the paper's policy combinations on the built-in
/// base scenario and prints the table.
#[derive(Parser, Debug)]
#[command(name = "vcsim", version, about, long_about = None)]
pub struct Cli {
    /// Load a compiled policy plugin (repeatable).
    #[arg(long, global = true, value_name = "LIB")]
    pub plugin: Vec<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    #[default]
    Table,
    Json,
    Csv,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Every policy vcsim knows, by family.
    List,
    /// One run of a scenario under one policy.
    Run {
        scenario: PathBuf,
        /// Policy: `CS2_WF2_WS2_JC2`, `cpu=cs2,fetch=wf2,...` or a script
        /// (`my_policy.rhai`: the family its hooks implement); `,label=NAME`
        /// names it in the outputs. Default: `CS2_WF2_WS2_JC2`, or on a
        /// host whose projects use its GPUs
        /// `cpu=cs2,fetch=gpu,send=gpu,estimate=jc2`.
        #[arg(long)]
        policy: Option<String>,
        /// Override the scenario's seed (not with `--set seed=N`).
        #[arg(long)]
        seed: Option<u64>,
        /// Change the scenario (repeatable): a dotted path (`host.ncpus=4`,
        /// `project.*.latency_bound_days=3`) or a sweep's knob (`slack=5`,
        /// `mix=3`, `buffer_hours=6`, ...), as in a sweep's `[set]`.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Write what ran where and when: HTML or CSV by the file's extension.
        #[arg(long, value_name = "FILE")]
        timeline: Option<PathBuf>,
        /// Visit every step instead of jumping between events (for cross-checks).
        #[arg(long)]
        fixed_step: bool,
        /// Write the simulator's trace (every RPC, every file deleted) to this file.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
    },
    /// Several policies on the same seeds (paired), with means, 95%
    /// intervals and the differences from the first policy.
    Compare {
        scenario: PathBuf,
        /// Policies to compare (repeat; the first is the baseline), as `run --policy` takes them.
        #[arg(long, required = true)]
        policy: Vec<String>,
        /// Runs per policy, on seeds seed, seed+1, ... (1 to 100000)
        #[arg(long, default_value_t = 1)]
        replications: u32,
        /// The first replication's seed (default: the scenario's); give it
        /// here or as `--set seed=N`, not both.
        #[arg(long)]
        seed: Option<u64>,
        /// Change the scenario (repeatable), as `run --set` does.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Worker threads (default: all cores). Output does not depend on it.
        #[arg(long)]
        jobs: Option<usize>,
        /// Re-run whenever a script or the scenario changes, printing how each metric moved.
        #[arg(long)]
        watch: bool,
    },
    /// A parameter sweep: results, summary, plots and a manifest.
    Sweep {
        /// The sweep file (TOML): a scenario, policies and axes.
        sweep: PathBuf,
        /// The directory written: results, summary, plots and manifest.
        #[arg(long, default_value = "sweep-out")]
        out: PathBuf,
        /// Worker threads (default: all cores, at most one per run). Output
        /// does not depend on it.
        #[arg(long)]
        jobs: Option<usize>,
        /// Run only slice K of N (`--shard 2/4`).
        #[arg(long)]
        shard: Option<String>,
    },
    /// Look for scenarios where policy A is worse than policy B, and shrink
    /// the worst found to a minimal scenario (`DIR/worst.toml`).
    Search {
        /// A, then B (exactly two): where is A worse than B?
        #[arg(long, required = true)]
        policy: Vec<String>,
        /// The figure of merit (`waste`, `idleness`, `jobs_late`, ...).
        #[arg(long)]
        metric: String,
        /// The space file: a base scenario and the ranges that may vary.
        #[arg(long)]
        space: Option<PathBuf>,
        /// Without --space: a default space (a population of BOINC hosts)
        /// around this scenario.
        #[arg(long)]
        scenario: Option<PathBuf>,
        /// Runs the search may spend (shrinking gets up to half as many again).
        #[arg(long, default_value_t = 2000)]
        budget: u64,
        /// Seeds each point is run on, both policies (paired).
        #[arg(long, default_value_t = 5)]
        seeds: u32,
        /// The search's own random stream.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Simulated days of each run while searching. Default: the
        /// scenario's, at most 20 (a search makes thousands of runs).
        #[arg(long)]
        days: Option<f64>,
        /// Run only part K of N (`--shard 2/4`): an independent search of
        /// budget / N runs; `vcsim merge` joins the parts and shrinks.
        #[arg(long)]
        shard: Option<String>,
        #[arg(long)]
        jobs: Option<usize>,
        #[arg(long, default_value = "search-out")]
        out: PathBuf,
    },
    /// One run's decisions, each with its policy's reason, in a time window.
    Explain {
        scenario: PathBuf,
        /// Policy spec (as for `run`). Default: as for `run`.
        #[arg(long)]
        policy: Option<String>,
        /// Override the scenario's seed (not with `--set seed=N`).
        #[arg(long)]
        seed: Option<u64>,
        /// Change the scenario (as for `run`).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// From this simulated time: seconds, or with s, m, h, d (`36h`, `2.5d`).
        #[arg(long, value_parser = explain_cmd::parse_time)]
        from: Option<f64>,
        /// Up to this simulated time (same forms as --from).
        #[arg(long, value_parser = explain_cmd::parse_time)]
        to: Option<f64>,
        /// `text`, or `json`: one JSON object a line (`time_s`, `family`,
        /// `decision`, `reason`, and `project`, `job`, `outcome` when set).
        #[arg(long, value_enum, default_value_t = explain_cmd::TextFormat::Text)]
        format: explain_cmd::TextFormat,
    },
    /// Where two runs first decide differently, and the first consequence
    /// each figure of merit sees: two policies, or one policy on two seeds
    /// or two scenario variants.
    Diverge {
        scenario: PathBuf,
        /// A's policy, then B's (one: both runs use it).
        #[arg(long, required = true)]
        policy: Vec<String>,
        /// A's seed, then B's (one: both; none: the scenario's).
        #[arg(long)]
        seed: Vec<u64>,
        /// Change the scenario of both runs (as for `run`).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// Change B's scenario only (after --set): two variants of one scenario.
        #[arg(long = "set-b", value_name = "PATH=VALUE")]
        set_b: Vec<String>,
        /// A project's share of the work done that differs by more than this
        /// between the runs is a consequence.
        #[arg(long, default_value_t = 0.05)]
        threshold: f64,
        #[arg(long, value_enum, default_value_t = explain_cmd::TextFormat::Text)]
        format: explain_cmd::TextFormat,
        /// Write both runs' timelines, one above the other, the divergence
        /// marked (HTML).
        #[arg(long, value_name = "FILE")]
        timeline: Option<PathBuf>,
    },
    /// Join the shards of one sweep, or of one search, into one result.
    Merge {
        /// The shard directories: every `--shard K/N` output of one sweep,
        /// or of one search.
        dirs: Vec<PathBuf>,
        /// The directory written: a sweep's outputs, or a search's (its
        /// trail, plot and the worst loss shrunk).
        #[arg(long)]
        out: PathBuf,
        /// Worker threads for shrinking a search's worst loss (default: all
        /// cores). Output does not depend on it. A sweep's merge runs
        /// nothing.
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Validate a scenario, sweep, script or plugin and say what is wrong.
    Check { file: PathBuf },
    /// Read BOINC's files (client_state.xml, the 2007 simulator's inputs) as a scenario.
    Import {
        /// A file or a directory of BOINC files.
        input: PathBuf,
        /// Write the scenario here (TOML); default: standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// A failure with its exit status: 2 for bad input or usage, 1 while running.
#[derive(Debug)]
pub struct Failure {
    pub status: u8,
    pub message: String,
}

impl Failure {
    pub fn input(message: impl Into<String>) -> Failure {
        Failure {
            status: 2,
            message: message.into(),
        }
    }
    pub fn running(message: impl Into<String>) -> Failure {
        Failure {
            status: 1,
            message: message.into(),
        }
    }
    /// Standard output was closed by its reader (`vcsim ... | head`): the
    /// command stops, and vcsim exits 0 without a word, as `head` expects.
    pub fn closed() -> Failure {
        Failure {
            status: 0,
            message: String::new(),
        }
    }
}

/// The backstop for output that does not go through `output::emit` yet:
/// `print!` panics on a write error; a closed standard output then ends
/// vcsim quietly with status 0, another write error with status 1 and one
/// line, never with a panic's message and status 101.
fn quiet_on_output_errors() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let p = info.payload();
        let msg = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") {
            if msg.contains("os error 32") || msg.contains("Broken pipe") {
                std::process::exit(0);
            }
            let why = msg.trim_start_matches("failed printing to stdout: ");
            output::note(&format!("error: cannot write to standard output: {why}"));
            std::process::exit(1);
        }
        if msg.starts_with("failed printing to stderr") {
            std::process::exit(1);
        }
        default(info)
    }));
}

/// A command line's error, its control characters escaped as in every
/// other message. clap's own text drops escape sequences and bells from a
/// value it quotes (`1\x07h` read `1h`, a valid time), so a value that
/// failed its check is quoted here, escaped.
fn parse_error(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let (value, arg) = (
        e.get(ContextKind::InvalidValue),
        e.get(ContextKind::InvalidArg),
    );
    match (e.kind(), value, arg) {
        (
            ErrorKind::ValueValidation,
            Some(ContextValue::String(v)),
            Some(ContextValue::String(a)),
        ) => {
            let why = std::error::Error::source(e).map_or(String::new(), |s| format!(": {s}"));
            format!(
                "error: invalid value '{}' for '{a}'{}\n\nFor more information, try '--help'.\n",
                output::name(v),
                output::printable(&why)
            )
        }
        _ => output::printable(&e.render().to_string()),
    }
}

fn main() -> ExitCode {
    vcsim_builtin::link();
    quiet_on_output_errors();
    // Messages keep their line breaks (some have several lines), so a line
    // break in an argument (a path) they quote could forge a line of them.
    // (Other control characters are shown escaped.)
    if let Some((i, a)) = std::env::args_os()
        .enumerate()
        .skip(1)
        .find(|(_, a)| a.to_string_lossy().contains('\n'))
    {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr().lock(),
            "error: argument {i} `{}` holds a line break: vcsim takes none in its arguments (rename the file)",
            output::name(&a.to_string_lossy())
        );
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        // A usage error is status 2 even where standard error cannot be
        // written (`2>/dev/full`): `eprint!` would panic, and end with 1.
        Err(e) if e.use_stderr() => {
            use std::io::Write;
            let _ = write!(std::io::stderr().lock(), "{}", parse_error(&e));
            return ExitCode::from(2);
        }
        // `--help`, `--version`: written as any command's output, so that a
        // full disk is an error (status 1), a closed pipe a quiet end.
        Err(e) => {
            return exit_code(output::emit(&e.render().to_string()));
        }
    };
    // On a thread with a run's stack (see `STACK_BYTES`); where the system
    // will not start one, on this thread, as before.
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(cli)));
    let take = |s: &std::sync::Mutex<Option<Cli>>| {
        s.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    };
    let theirs = std::sync::Arc::clone(&slot);
    let work = std::thread::Builder::new()
        .name("vcsim".into())
        .stack_size(vcsim_sweep::threads::stack_bytes())
        .spawn(move || take(&theirs).map(commands::dispatch));
    let outcome = match work {
        Ok(handle) => match handle.join() {
            Ok(outcome) => outcome,
            // (The panic's message is already printed.)
            Err(_) => return ExitCode::from(101),
        },
        Err(_) => take(&slot).map(commands::dispatch),
    };
    let Some(outcome) = outcome else {
        return ExitCode::SUCCESS;
    };
    exit_code(outcome)
}

/// A command's outcome as the process's status, its error said on
/// standard error.
fn exit_code(outcome: Result<(), Failure>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) if f.status == 0 => ExitCode::SUCCESS,
        Err(f) => {
            output::note(&format!("error: {}", output::printable(&f.message)));
            ExitCode::from(f.status)
        }
    }
}
