use super::*;
use crate::synth;

#[test]
fn names_extensions_and_paths_agree() {
    for f in ExportFormat::ALL {
        assert_eq!(ExportFormat::parse(f.name()), Some(f));
        assert_eq!(f.to_string(), f.name());
        let json = serde_json::to_value(f).unwrap();
        assert_eq!(json, f.name(), "serde and name agree");
        let file = f.file_name_for(Path::new("/r/run.jsonl"));
        assert_eq!(file, format!("run.{}", f.extension()));
        assert_eq!(ExportFormat::from_path(Path::new(&file)), Some(f));
        assert!(!f.label().is_empty() && f.media_type().contains('/'));
    }
    assert_eq!(
        ExportFormat::from_path(Path::new("a.PNG")),
        Some(ExportFormat::Png)
    );
    assert_eq!(
        ExportFormat::from_path(Path::new("run.json")),
        Some(ExportFormat::Perfetto)
    );
    for none in ["a.jpg", "a", "a.txt"] {
        assert_eq!(ExportFormat::from_path(Path::new(none)), None, "{none}");
    }
    assert_eq!(ExportFormat::parse("xml"), None);
    assert_eq!(ExportFormat::parse("CSV"), None);
    assert_eq!(
        ExportFormat::names(&ExportFormat::UI),
        "jsonl, csv, perfetto or png"
    );
    assert_eq!(ExportFormat::names(&[ExportFormat::Svg]), "svg");
}

#[test]
fn every_format_writes_a_trace_file() {
    let dir = std::env::temp_dir().join(format!("swapsight-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.jsonl");
    let jsonl = synth::to_jsonl(&synth::seed_offload());
    std::fs::write(&path, &jsonl).unwrap();
    let opts = ExportOptions::default();
    let drawn = |f: &ExportFormat| {
        cfg!(feature = "plot") || !matches!(f, ExportFormat::Png | ExportFormat::Svg)
    };
    for f in ExportFormat::ALL.into_iter().filter(drawn) {
        let mut out = Vec::new();
        f.write_file(&path, &opts, &mut out)
            .unwrap_or_else(|e| panic!("{f}: {e}"));
        match f {
            ExportFormat::Jsonl => assert_eq!(out, jsonl),
            ExportFormat::Csv => assert!(out.starts_with(csv::COLUMNS[0].as_bytes())),
            ExportFormat::Perfetto => {
                serde_json::from_slice::<serde_json::Value>(&out).expect("JSON");
            }
            ExportFormat::Prometheus => {
                assert!(String::from_utf8(out).unwrap().contains("swapsight_"));
            }
            #[cfg(feature = "plot")]
            ExportFormat::Png => assert_eq!(&out[..8], b"\x89PNG\r\n\x1a\n"),
            #[cfg(feature = "plot")]
            ExportFormat::Svg => assert!(out.starts_with(b"<svg"), "{f}"),
            #[cfg(not(feature = "plot"))]
            _ => {}
        }
    }
    let e = ExportFormat::Jsonl
        .write(&synth::seed_offload(), &opts, &mut Vec::new())
        .unwrap_err();
    assert!(matches!(e, ExportError::NotDrawn("jsonl")), "{e}");
    // A trace that is not there writes nothing, in any format.
    for f in ExportFormat::ALL {
        let mut out = Vec::new();
        let e = f
            .write_file(&dir.join("missing.jsonl"), &opts, &mut out)
            .unwrap_err();
        assert!(e.to_string().contains("missing.jsonl"), "{f}: {e}");
        assert!(out.is_empty(), "{f}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(feature = "plot")]
#[test]
fn charts_of_no_samples_are_refused() {
    let mut t = synth::seed_offload();
    t.samples.clear();
    for f in [ExportFormat::Png, ExportFormat::Svg] {
        let e = f
            .write(&t, &ExportOptions::default(), &mut Vec::new())
            .unwrap_err();
        assert!(matches!(e, ExportError::NoSamples), "{f}: {e}");
    }
}

/// A streamed export (a first pass, then the samples again) writes what
/// the export of the trace in memory does, byte for byte, in every format
/// drawn from a read trace, and refuses what it refuses (a trace without
/// samples).
#[test]
fn a_streamed_export_writes_what_the_trace_in_memory_does() {
    let mut t = crate::synth::seed_offload();
    t.marks = ["load", "denoise"]
        .iter()
        .zip([0, 20_000])
        .map(|(n, t_ms)| crate::record::trace::Mark {
            t_ms,
            name: (*n).into(),
            end: false,
        })
        .collect();
    let mut empty = t.clone();
    empty.samples.clear();
    let opts = ExportOptions::default();
    for t in [t, empty] {
        let bytes = crate::synth::to_jsonl(&t);
        let path = Path::new("t.jsonl");
        let t = crate::record::trace::read_from(&bytes[..], path).unwrap();
        for format in [
            ExportFormat::Csv,
            ExportFormat::Perfetto,
            ExportFormat::Prometheus,
            ExportFormat::Svg,
        ] {
            let mut whole = Vec::new();
            let whole = format.write(&t, &opts, &mut whole).map(|()| whole);
            let mut reader =
                crate::record::trace::TraceReader::new(std::io::Cursor::new(bytes.clone()), path)
                    .unwrap();
            let scanned = format.scan(&mut reader).unwrap();
            assert_eq!(scanned.samples(), t.samples.len());
            let mut streamed = Vec::new();
            let streamed = scanned
                .write(&mut reader, &opts, &mut streamed)
                .map(|()| streamed);
            match (whole, streamed) {
                (Ok(a), Ok(b)) => assert!(
                    a == b,
                    "{format}: {} bytes in memory, {} streamed",
                    a.len(),
                    b.len()
                ),
                (Err(ExportError::NoSamples), Err(ExportError::NoSamples)) => {}
                (a, b) => panic!("{format}: {:?} in memory, {:?} streamed", a.err(), b.err()),
            }
        }
    }
}
