//! `swapsight fit`: will a model fit, before loading it. The counting and
//! the answer are `swapsight::fit`'s; this reads the arguments, the trace
//! and a live sample, and prints.
//!
//! Its answers are its exit codes, 0, 1 and 2, so its failures cannot be
//! the 1 and 2 of every other subcommand: bad arguments exit 3 and
//! anything that stops an answer (a path or trace that cannot be read, the
//! probe) exits 4.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use swapsight::fit::{self, Figures, Model, WalkLimits};

use crate::exit::{fail, Fail};

/// `swapsight fit`'s exit code for bad arguments (a bad size, an unknown flag).
pub const BAD_ARGUMENTS: u8 = 3;
/// `swapsight fit`'s exit code when it cannot answer: a path or trace that
/// cannot be read, a trace with no sample, the probe failing.
pub const CANNOT_ANSWER: u8 = 4;

/// `--help`'s text after the flags, less where the details are.
const HELP: &str = "Counts what a loader would read — *.safetensors (only the shards \
model.safetensors.index.json names, when it is there), *.gguf, *.bin, *.pt, *.pth, *.npz — by \
the tensors their headers list (else by each file's size); adds the KV cache at the context \
(layers, KV heads and head dim from config.json or the GGUF's metadata; sliding-window, latent \
and linear layers as the config says) and the runtime's prefill buffers; each line is printed \
with its formula and the file its figures came from. Without --context: a short context \
(4,096 tokens) and the largest context under each bound. The need is held against each bound \
this machine puts on memory:

  physical memory, the cgroup's limit (Linux)    above it: does not fit
  free memory now, free in the cgroup now         above it: fits only by swapping
  GPU wired limit, Metal's recommended working    above it: fits only by swapping
    set (macOS)
  PyTorch's MPS high watermark, MLX's limit       shown for those frameworks, not in the answer
    (macOS)

Where a setting would make it fit (sudo sysctl iogpu.wired_limit_mb=N,
PYTORCH_MPS_HIGH_WATERMARK_RATIO=…, mx.set_memory_limit(…)), it is printed with its risk.
With --from, a past run of the same pipeline: its peak footprint is the need where it is more
than the weights (activations, caches), and the estimate is compared with it. With a command
after --, fit estimates, runs it as `swapsight record` does (the same trace, -o and --interval as
record's), then prints the estimate against the measured peak (the watched tree's footprint, and
MLX's own peak where swapsight.watch_mlx() wrote mlx.peak; line by line, weights, KV cache and
the rest, where swapsight.mlx_sizes() wrote mlx.weights and mlx.kv), and exits with the
command's code.

Exit codes:
  0  fits
  1  fits only by swapping
  2  does not fit
  3  bad arguments (a size like 8X, an unknown flag)
  4  no answer: the path or trace cannot be read, a trace with no sample, the probe failed

Examples:
  swapsight fit ~/models/Llama-3.1-8B-Instruct        a model's folder (HF layout)
  swapsight fit ~/models/Llama-3.1-8B-Instruct --context 128k --runtime mlx
  swapsight fit model-Q4_K_M.gguf --context 32k --parallel 4 --kv-dtype q8_0
  swapsight fit ~/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B-Instruct
  swapsight fit model-Q4_K_M.gguf
  swapsight fit 40G                                   a size: 40G, 512MiB, 8GiB or bytes
  swapsight fit ./sdxl --from last-run.jsonl          with a past run's peak
  swapsight fit ./model --context 16k --runtime mlx -- python generate.py
                                                      estimate, run, measure, compare
  swapsight fit ./model && python generate.py         run only when it fits without swap
  swapsight fit ./model --json | jq .verdict";

/// `--help`'s text after the flags: [`HELP`] and where the details are.
fn after_help() -> String {
    format!("{HELP}\n\nDetails: {}", docs_url("fit.md"))
}

/// Where a page of the docs is for this build: the release workflow sets
/// `SWAPSIGHT_REPO` (owner/name, as `GITHUB_REPOSITORY`) so a wheel or a
/// tarball, which carry no docs/, points at the page of its own version;
/// a build without it names the page in the source.
pub fn docs_url(page: &str) -> String {
    match option_env!("SWAPSIGHT_REPO").filter(|r| !r.is_empty()) {
        Some(repo) => format!(
            "https://github.com/{repo}/blob/v{}/docs/{page}",
            env!("CARGO_PKG_VERSION")
        ),
        None => format!("docs/{page} in swapsight's source repository (this build was made without SWAPSIGHT_REPO)"),
    }
}

#[derive(Debug, clap::Args)]
#[command(after_help = after_help())]
pub struct Args {
    /// A model file or folder, or a size (8G, 512MiB, bytes)
    // A size like -5G is taken here, to be refused as a size: after `--`
    // comes the command.
    #[arg(value_name = "PATH|SIZE", allow_hyphen_values = true)]
    pub target: OsString,
    /// A past run of the same pipeline (a trace of `swapsight record`): its peak footprint
    #[arg(long, value_name = "TRACE")]
    pub from: Option<PathBuf>,
    /// Tokens per sequence to judge at (8192, or 8k = 8,192, 128k = 131,072); without it, a short context and the largest that fits
    #[arg(long, value_name = "TOKENS", value_parser = tokens)]
    pub context: Option<u64>,
    /// Sequences held at once (a server's slots, a batch)
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub parallel: Option<u64>,
    /// The KV cache's type: f16, bf16, f32, q8_0, q4_0, or mlx-q8, mlx-q4[:GROUP] (MLX's quantized cache)
    #[arg(long, value_name = "TYPE", value_parser = fit::KvDtype::parse)]
    pub kv_dtype: Option<fit::KvDtype>,
    /// The runtime whose cache and buffers to count: mlx, llama.cpp or torch (default: llama.cpp for a GGUF, mlx on macOS, torch elsewhere)
    #[arg(long, value_name = "RUNTIME", value_parser = runtime)]
    pub runtime: Option<fit::Runtime>,
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
    /// Neither apply past runs' ratio to the estimate nor learn from this run
    #[arg(long)]
    pub no_history: bool,
    #[command(flatten)]
    pub recording: crate::session::RecordingArgs,
    /// A command to run and watch as `swapsight record` does; its measured peak is compared with the estimate
    #[arg(last = true, value_name = "CMD ARGS", conflicts_with = "from")]
    pub command: Vec<String>,
}

/// The most tokens `--context` takes: past any model's context.
const MAX_CONTEXT: u64 = 1 << 30;

/// `8192`, `8k` (8,192: a context's k is 1,024 tokens, as `128k` is
/// 131,072).
pub(crate) fn tokens(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let (digits, scale) = match t.strip_suffix('k') {
        Some(d) => (d, 1024),
        None => (t.as_str(), 1),
    };
    let n = digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| "a count of tokens, like 8192 or 8k".to_string())?;
    if !(1..=MAX_CONTEXT).contains(&n) {
        return Err(format!("must be between 1 and {MAX_CONTEXT} tokens"));
    }
    Ok(n)
}

pub(crate) fn runtime(s: &str) -> Result<fit::Runtime, String> {
    fit::Runtime::parse(s).ok_or_else(|| "one of mlx, llama.cpp, torch".to_string())
}

/// Whether this command line is `swapsight fit …`: its argument errors
/// exit [`BAD_ARGUMENTS`], not 2 (which is "does not fit").
pub fn asked() -> bool {
    std::env::args_os().nth(1).is_some_and(|a| a == "fit")
}

/// clap's error for `swapsight fit`, printed as every subcommand's is;
/// [`BAD_ARGUMENTS`] in place of 2.
pub fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let shown = matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    let code = crate::exit::clap_error(e);
    if shown {
        code
    } else {
        ExitCode::from(BAD_ARGUMENTS)
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Every failure's words are cleaned: a path or size given can carry
    // escape sequences, and some errors quote them as given.
    answer(&args).map_err(|e| {
        let code = match e.downcast_ref::<Fail>() {
            Some(f) if f.code == BAD_ARGUMENTS => BAD_ARGUMENTS,
            _ => CANNOT_ANSWER,
        };
        fail(code, swapsight::text::clean(&format!("{e:#}")).into_owned())
    })
}

fn answer(args: &Args) -> anyhow::Result<ExitCode> {
    let model = model(&args.target)?;
    let described = fit::Described::of(&model, Path::new(&args.target));
    let history_path = fit::default_history_path();
    let history = (!args.no_history).then(|| {
        load_history(&history_path)
            .map_err(|e| eprintln!("swapsight: {e}"))
            .ok()
    });
    let ask = fit::Ask {
        context: args.context,
        parallel: args.parallel,
        kv_dtype: args.kv_dtype.clone(),
        runtime: args.runtime,
        history: history.clone().flatten(),
    };
    let (past, ran) = match (&args.from, args.command.is_empty()) {
        (Some(path), _) => (Some(past(path)?), None),
        (None, true) => (None, None),
        (None, false) => {
            let before = fit::plan(model.clone(), &described, None, &figures()?, &ask);
            eprintln!(
                "swapsight: estimated peak {} ({}); running {}",
                swapsight::units::format_bytes(
                    i64::try_from(before.needed_bytes).unwrap_or(i64::MAX)
                ),
                before.summary,
                swapsight::text::clean(&args.command.join(" "))
            );
            let recorded = crate::record::record(&crate::record::Args {
                recording: args.recording.clone(),
                pid: None,
                print_mark_path: false,
                command: args.command.clone(),
                push: crate::push::PushArgs::off(),
            })?;
            (Some(past(&recorded.path)?), Some(recorded.code))
        }
    };
    let answer = fit::plan(model, &described, past, &figures()?, &ask);
    if let (Some(Some(mut history)), Some(_)) = (history, ran) {
        let learnt = history.learn_from(
            &answer,
            &described,
            &args.target.to_string_lossy(),
            swapsight::units::unix_now_ms(),
        );
        if let Err(e) = learnt.then(|| history.save(&history_path)).transpose() {
            eprintln!(
                "swapsight: this run is not kept in {}: {e}",
                history_path.display()
            );
        }
    }
    let text = if args.json {
        serde_json::to_string_pretty(&answer)? + "\n"
    } else {
        answer.to_text()
    };
    crate::exit::print_stdout(&text)?;
    Ok(ran.unwrap_or(ExitCode::from(answer.exit_code)))
}

/// The history of past runs, as the command line and the MCP tool apply
/// it; `Err` with the line to say where its file does not read (it is then
/// left as it is).
pub(crate) fn load_history(path: &Path) -> Result<fit::History, String> {
    fit::History::load(path).map_err(|e| format!("the history of past runs is not used: {e}"))
}

/// A word meant as a size, not a name: it starts as a number does (a
/// digit, a point, a sign), or is a number word C's `strtod` takes (`nan`,
/// `inf`, `infinity`).
pub(crate) fn looks_like_size(t: &str) -> bool {
    let t = t.trim();
    let first = t.chars().next();
    let word = t.trim_start_matches(['+', '-']).to_ascii_lowercase();
    first.is_some_and(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+'))
        || ["nan", "inf", "infinity"].contains(&word.as_str())
}

/// A path that is there, else a size; a word that is neither is said as
/// what it looks like.
pub(crate) fn model(target: &OsString) -> anyhow::Result<Model> {
    let path = Path::new(target);
    let text = target.to_str();
    let looks_like_size = text.is_some_and(looks_like_size);
    if std::fs::symlink_metadata(path).is_err() && looks_like_size {
        let given = text.unwrap_or_default().trim();
        let bytes = crate::args::size(given).map_err(|why| {
            let shown = swapsight::text::clean(given);
            fail(
                BAD_ARGUMENTS,
                format!("invalid size '{shown}': {why}; no file or folder has that name either"),
            )
        })?;
        return Ok(Model::Size {
            bytes,
            given: given.to_string(),
        });
    }
    let weights = fit::count_weights(path, WalkLimits::default())
        .map_err(|e| fail(CANNOT_ANSWER, e.to_string()))?;
    Ok(Model::Files(weights))
}

pub(crate) fn past(path: &Path) -> anyhow::Result<fit::PastRun> {
    let mut reader = crate::input::open_trace(path)?;
    let run = fit::past_run(&mut reader, &path.display().to_string())?;
    crate::input::done(path, run.samples, reader.notes(), "size a fit from")?;
    Ok(run)
}

/// This machine's figures now: a live sample, this process's cgroup, and
/// PyTorch's watermark ratio as this shell sets it.
pub(crate) fn figures() -> anyhow::Result<Figures> {
    let mut probe = swapsight::probe::native().context("cannot start the memory probe")?;
    let host = probe
        .host()
        .context("cannot read the host's memory facts")?;
    // A whole sample, not system(): on a Mac only a sample reads the GPU
    // and host_statistics64 on a probe's first call.
    let (system, _) = probe.sample().context("cannot read the memory figures")?;
    let (scope, scope_unread) = match probe.scope(std::process::id()) {
        Ok(scope) => (scope, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let macos_version = (host.os == "macos").then(macos_version).flatten();
    Ok(Figures {
        macos_version,
        os: host.os,
        system,
        scope,
        scope_unread,
        mps_high_watermark_ratio: ratio_as_set(fit::MPS_RATIO_ENV),
        mps_low_watermark_ratio: ratio_as_set(fit::MPS_LOW_RATIO_ENV),
    })
}

/// `14.5`, as `sysctl kern.osproductversion` says it; `None` where it
/// does not answer in a word.
fn macos_version() -> Option<String> {
    let out = std::process::Command::new("/usr/sbin/sysctl")
        .args(["-n", "kern.osproductversion"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !v.is_empty() && v.len() < 32).then_some(v)
}

/// A watermark ratio's variable as this shell sets it. Bytes that are not
/// UTF-8 are kept (replaced), not taken for "unset": PyTorch's `strtod`
/// reads the number in front of them all the same.
pub(crate) fn ratio_as_set(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}
