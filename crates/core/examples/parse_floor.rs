//! The floor under every reader of a large trace (docs/benchmarks.md, P5):
//! each record read by `TraceReader` (parsed, checked) and dropped, nothing
//! else kept or computed. With `generic`, each line parsed as a `Record` by
//! serde_json the general way instead (internally tagged, flattened: what
//! every line cost before the reader's fast path for samples).
//!
//!     cargo run --release -p swapsight --example parse_floor -- TRACE.jsonl [generic]

use std::io::BufRead;

use swapsight::trace::{Record, TraceReader};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let path = std::path::PathBuf::from(
        args.next()
            .ok_or("usage: parse_floor TRACE.jsonl [generic]")?,
    );
    let mut records = 0usize;
    if args.next().is_some_and(|a| a == "generic") {
        let file = std::fs::File::open(&path)?;
        let mut input = std::io::BufReader::with_capacity(256 * 1024, file);
        let mut line = Vec::new();
        while input.read_until(b'\n', &mut line)? > 0 {
            if serde_json::from_slice::<Record>(line.trim_ascii()).is_ok() {
                records += 1;
            }
            line.clear();
        }
    } else {
        let mut reader = TraceReader::open(&path)?;
        while reader.next_record()?.is_some() {
            records += 1;
        }
    }
    eprintln!("{records} records");
    Ok(())
}
