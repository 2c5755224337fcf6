use super::*;
use crate::judge::compare::{compare, row};
use crate::synth;

#[test]
fn the_seed_runs_overlay_with_aligned_phases() {
    let mut traces = [
        synth::seed_eager(),
        synth::seed_offload(),
        synth::seed_staged(),
    ];
    for (t, decode) in traces.iter_mut().zip([90_000, 90_000, 94_000]) {
        t.marks = ["load", "encode", "denoise", "decode"]
            .iter()
            .zip([0, 13_000, 20_000, decode])
            .map(|(n, t_ms)| crate::record::trace::Mark {
                t_ms,
                name: (*n).into(),
                end: false,
            })
            .collect();
    }
    let rows = traces
        .iter()
        .zip(["eager", "offload", "staged"])
        .map(|(t, l)| row(l, t, &crate::judge::report::report(t, None)))
        .collect();
    let cmp = compare(rows);
    assert!(cmp.same_phases);
    let refs: Vec<&Trace> = traces.iter().collect();
    let svg = String::from_utf8(render(&refs, &cmp, 1200, 675, ImageFormat::Svg).unwrap()).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").to_string())
        .collect();
    for want in [
        "decode",
        "denoise",
        "eager",
        "offload: false fit",
        "stretched onto eager",
    ] {
        assert!(
            texts.iter().any(|t| t.contains(want)),
            "{want} not in {texts:?}"
        );
    }
    let png = render(&refs, &cmp, 800, 450, ImageFormat::Png).unwrap();
    assert_eq!(&png[1..4], b"PNG");
}
