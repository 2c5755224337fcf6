use super::*;
use crate::judge::report::report;
use crate::step::detect::State;
use crate::synth;
use std::collections::HashSet;

fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let dec = ::png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = dec.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    buf.truncate(info.buffer_size());
    assert_eq!(info.color_type, ::png::ColorType::Rgb);
    (info.width, info.height, buf)
}

fn colours(rgb: &[u8]) -> HashSet<[u8; 3]> {
    rgb.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

#[test]
fn export_plot_png_has_requested_size_and_many_colours() {
    let t = synth::seed_offload();
    let r = report(&t, None);
    let opts = PlotOptions {
        width: 900,
        height: 500,
        processes: 4,
        all_processes: false,
    };
    let bytes = png(&t, &r, &opts).unwrap();
    let (w, h, rgb) = decode(&bytes);
    assert_eq!((w, h), (900, 500));
    let n = colours(&rgb).len();
    assert!(n > 200, "only {n} distinct colours: blank or text-less?");
    // The false-fit shading is there: its tint over white.
    let tint = state_colour(State::FalseFit);
    let over_white = |c: u8| (255.0 * (1.0 - SHADE_ALPHA) + c as f64 * SHADE_ALPHA).round() as i32;
    let want = [over_white(tint.0), over_white(tint.1), over_white(tint.2)];
    let shaded = rgb
        .chunks_exact(3)
        .filter(|c| (0..3).all(|i| (c[i] as i32 - want[i]).abs() <= 2))
        .count();
    assert!(shaded > 1000, "false-fit shading not found ({shaded} px)");
}

#[test]
fn a_sample_out_of_order_at_the_time_limit_stays_on_the_chart() {
    // Found by the fuzzer (`swapsight-fuzz plot`): one sample far after
    // the last put a point outside the x range, and plotters' pixel
    // arithmetic overflowed.
    let mut t = synth::seed_offload();
    t.samples[3].sample.t_ms = crate::record::trace::MAX_T_MS;
    if let Some(f) = t.flags.first_mut() {
        f.t_ms = crate::record::trace::MAX_T_MS;
    }
    let r = report(&t, None);
    let opts = PlotOptions {
        width: MIN_SIDE,
        height: MIN_SIDE,
        processes: 3,
        all_processes: false,
    };
    assert!(svg(&t, &r, &opts).unwrap().starts_with("<svg"));
    let (w, h, _) = decode(&png(&t, &r, &opts).unwrap());
    assert_eq!((w, h), (MIN_SIDE, MIN_SIDE));
}

#[test]
fn export_plot_text_is_drawn_in_the_title_band() {
    let t = synth::seed_offload();
    let r = report(&t, None);
    let bytes = png(&t, &r, &PlotOptions::default()).unwrap();
    let (w, _, rgb) = decode(&bytes);
    // The title's verdict is drawn in the false-fit ink.
    let ink = state_ink(State::FalseFit);
    let band = &rgb[..(w as usize * 60 * 3)];
    let inked = band
        .chunks_exact(3)
        .filter(|c| c[0] == ink.0 && c[1] == ink.1 && c[2] == ink.2)
        .count();
    assert!(inked > 50, "verdict text missing ({inked} px)");
}

#[test]
fn export_plot_svg_parses_as_xml_with_text() {
    let t = synth::seed_eager();
    let r = report(&t, None);
    let s = svg(&t, &r, &PlotOptions::default()).unwrap();
    let doc = roxmltree::Document::parse(&s).expect("well-formed SVG");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(root.attribute("width"), Some("1200"));
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect();
    assert!(texts.iter().any(|t| t == "OVERFLOW"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "free memory (%)"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "memory (GiB)"), "{texts:?}");
    assert!(
        texts.iter().any(|t| t.starts_with("python 4242")),
        "{texts:?}"
    );
}

#[test]
fn export_plot_rejects_silly_sizes() {
    let t = synth::seed_staged();
    let r = report(&t, None);
    let opts = PlotOptions {
        width: 10,
        height: 500,
        processes: 5,
        all_processes: false,
    };
    let e = png(&t, &r, &opts).unwrap_err();
    assert!(
        e.to_string().starts_with("invalid chart size 10x500"),
        "{e}"
    );
}

#[test]
fn export_plot_handles_a_single_sample_and_no_processes() {
    let mut t = synth::seed_staged();
    t.samples.truncate(1);
    t.samples[0].sample.processes.clear();
    t.flags.clear();
    let r = report(&t, None);
    let opts = PlotOptions {
        width: 400,
        height: 320,
        processes: 5,
        all_processes: false,
    };
    let (w, h, _) = decode(&png(&t, &r, &opts).unwrap());
    assert_eq!((w, h), (400, 320));
    svg(&t, &r, &opts).unwrap();
}

#[test]
fn export_plot_format_from_extension() {
    use crate::show::export::ExportFormat;
    use std::path::Path;
    let image = |p: &str| ExportFormat::from_path(Path::new(p)).and_then(ExportFormat::image);
    assert_eq!(image("a.PNG"), Some(ImageFormat::Png));
    assert_eq!(image("a.svg"), Some(ImageFormat::Svg));
    assert_eq!(image("a.csv"), None);
    assert_eq!(image("a.jpg"), None);
    assert_eq!(image("a"), None);
}

#[test]
fn export_plot_helpers() {
    assert_eq!(nice_ceiling(19.3), 20.0);
    assert!((nice_ceiling(0.27) - 0.3).abs() < 1e-12);
    assert_eq!(nice_ceiling(1.0), 1.0);
    let pts: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, (i % 7) as f64)).collect();
    let d = decimate(&pts, 100);
    assert!(d.len() <= 400, "{}", d.len());
    assert_eq!(d.first(), pts.first());
    assert_eq!(d.last(), pts.last());
    assert!(d.iter().any(|p| p.1 == 6.0) && d.iter().any(|p| p.1 == 0.0));
    assert!(d.windows(2).all(|w| w[0].0 <= w[1].0));
    assert_eq!(axis_format(100.0)(-0.0), "0");
    assert_eq!(axis_format(5.0)(2.5), "2.5");
    assert_eq!(
        one_line("python3 -c \nimport time\n\tb=[]\u{7}"),
        "python3 -c import time b=[]"
    );
    assert_eq!(axis_format(12.0)(4.0), "4");
    assert_eq!(axis_format(1.0)(0.30000000000000004), "0.3");
    assert_eq!(axis_format(1000.0)(1500.0), "1500");
}

#[test]
fn phases_are_shaded_and_named() {
    let mut t = synth::seed_offload();
    t.marks = ["load", "encode", "denoise", "decode"]
        .iter()
        .zip([0, 13_000, 20_000, 90_000])
        .map(|(n, t_ms)| crate::record::trace::Mark {
            t_ms,
            name: (*n).into(),
            end: false,
        })
        .collect();
    let r = report(&t, None);
    let s = svg(&t, &r, &PlotOptions::default()).unwrap();
    let doc = roxmltree::Document::parse(&s).expect("well-formed SVG");
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect();
    for phase in ["load", "encode", "denoise", "decode"] {
        assert!(texts.iter().any(|t| t == phase), "{phase}: {texts:?}");
    }
    // The bands: one more filled rectangle per phase than without marks.
    let rects = |svg: &str| svg.matches("<rect").count();
    let plain = svg(&synth::seed_offload(), &r, &PlotOptions::default()).unwrap();
    assert_eq!(rects(&s), rects(&plain) + 4);
}

/// Issue 20: a trace with ESC in its hostname gave an SVG that is not
/// well-formed XML (XML 1.0 has no ESC, escaped or not), and the bidi
/// override went into the chart's text.
#[test]
fn a_crafted_trace_gives_well_formed_svg() {
    let bytes = synth::to_jsonl(&synth::hostile_text());
    let t = crate::record::trace::read_from(&bytes[..], std::path::Path::new("t.jsonl")).unwrap();
    let r = report(&t, None);
    let s = svg(&t, &r, &PlotOptions::default()).unwrap();
    roxmltree::Document::parse(&s).expect("well-formed SVG");
    assert!(!s.contains(['\u{1b}', '\u{7}', synth::BIDI]));
}

/// A decimator that does not know where x ends keeps between `buckets` and
/// twice that many columns, in x order, with the first and last points and
/// every peak and trough: a million points cost what the pixels do.
#[test]
fn a_growing_decimator_keeps_the_peaks_of_a_line_of_any_length() {
    let buckets = 100;
    let mut d = Decimator::growing(1.0, buckets);
    let n = 1_000_000;
    let y = |i: usize| match i {
        123_457 => 1000.0,
        876_543 => -1000.0,
        _ => (i % 7) as f64,
    };
    for i in 0..n {
        d.push((i as f64 * 0.5, y(i)));
    }
    let out = d.finish();
    assert!(out.len() <= 4 * 2 * buckets, "{} points", out.len());
    assert!(out.len() >= buckets, "{} points", out.len());
    assert!(out.windows(2).all(|w| w[0].0 <= w[1].0));
    assert_eq!(out.first(), Some(&(0.0, 0.0)));
    assert_eq!(out.last(), Some(&((n - 1) as f64 * 0.5, y(n - 1))));
    assert!(out.contains(&(123_457.0 * 0.5, 1000.0)));
    assert!(out.contains(&(876_543.0 * 0.5, -1000.0)));
    // A line of at most one point a bucket is kept whole.
    let mut d = Decimator::growing(1.0, buckets);
    for i in 0..150 {
        d.push((i as f64, y(i)));
    }
    assert_eq!(d.finish().len(), 150);
}
