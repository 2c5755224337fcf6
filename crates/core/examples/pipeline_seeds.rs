//! Writes the source's three runs (docs/background.md §2: eager, CPU offload,
//! staged; rebuilt by `swapsight::synth`) as traces with their phase marks,
//! for `docs/pipelines.md`:
//!
//!     cargo run -p swapsight --example pipeline_seeds -- DIR
//!     swapsight compare DIR/eager.jsonl DIR/offload.jsonl DIR/staged.jsonl --plot docs/pipelines.png

use swapsight::synth;
use swapsight::trace::Mark;

fn main() -> std::io::Result<()> {
    let dir = std::env::args_os()
        .nth(1)
        .map_or_else(|| std::path::PathBuf::from("."), Into::into);
    std::fs::create_dir_all(&dir)?;
    // Phase starts in seconds: loading ~13 s, encode, 20 steps of denoise, decode.
    let runs = [
        ("eager", synth::seed_eager(), [0, 13, 20, 90]),
        ("offload", synth::seed_offload(), [0, 13, 20, 90]),
        ("staged", synth::seed_staged(), [0, 13, 22, 96]),
    ];
    for (name, mut trace, starts) in runs {
        trace.marks = ["load", "encode", "denoise", "decode"]
            .iter()
            .zip(starts)
            .map(|(phase, s)| Mark {
                t_ms: s * 1000,
                name: (*phase).into(),
                end: false,
            })
            .collect();
        std::fs::write(dir.join(format!("{name}.jsonl")), synth::to_jsonl(&trace))?;
    }
    Ok(())
}
