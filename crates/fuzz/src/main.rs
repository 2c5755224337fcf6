//! `swapsight-fuzz [--seconds S] [--cases N] [--seed HEX] [TARGET…]`: runs
//! each fuzz target (all by default) for S seconds (default 3) or N inputs,
//! whichever ends first, and prints what each ran. Exit 1 on a failure,
//! with the shrunk input and the seed that reproduces it.

use std::process::ExitCode;
use std::time::Duration;

use swapsight_fuzz::{alloc, run, targets, Budget};

#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

fn usage(why: &str) -> ExitCode {
    eprintln!(
        "swapsight-fuzz: {why}\nusage: swapsight-fuzz [--seconds S] [--cases N] [--seed HEX] [TARGET…]\ntargets: {}",
        targets::ALL.join(" ")
    );
    ExitCode::from(2)
}

fn parse_seed(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.trim_start_matches("0x");
    if hex.is_empty() || hex.len() > 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let padded = format!("{hex:0>64}");
    let mut seed = [0u8; 32];
    for (i, byte) in seed.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&padded[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(seed)
}

fn main() -> ExitCode {
    let mut budget = Budget {
        time: Duration::from_secs(3),
        cases: None,
    };
    let mut seed_hex = format!(
        "{:x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos())
    );
    let mut chosen: Vec<&'static str> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seconds" => match args.next().and_then(|v| v.parse::<f64>().ok()) {
                Some(s) if s > 0.0 && s <= 86_400.0 => budget.time = Duration::from_secs_f64(s),
                _ => return usage("--seconds takes a number of seconds (up to 86400)"),
            },
            "--cases" => match args.next().and_then(|v| v.parse::<u64>().ok()) {
                Some(n) if n > 0 => budget.cases = Some(n),
                _ => return usage("--cases takes a positive whole number"),
            },
            "--seed" => match args.next() {
                Some(v) if parse_seed(&v).is_some() => seed_hex = v,
                _ => return usage("--seed takes up to 64 hex digits"),
            },
            "-h" | "--help" => return usage("fuzz swapsight's readers and exporters"),
            name => match targets::ALL.iter().find(|&&t| t == name) {
                Some(t) => chosen.push(t),
                None => return usage(&format!("unknown target or option '{name}'")),
            },
        }
    }
    if chosen.is_empty() {
        chosen = targets::ALL.to_vec();
    }
    let Some(seed) = parse_seed(&seed_hex) else {
        return usage("bad seed");
    };
    let mut failed = false;
    for target in chosen {
        let r = run(target, budget, seed);
        println!(
            "fuzz {:<10} {:>7} inputs in {:>6.1}s  peak heap of one input {:>6} KiB  seed {seed_hex}",
            r.target,
            r.inputs,
            r.elapsed.as_secs_f64(),
            r.peak_bytes / 1024
        );
        if let Some(f) = r.failure {
            println!(
                "fuzz {target}: FAILED (reproduce: swapsight-fuzz --seed {seed_hex} {target}): {f}"
            );
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
