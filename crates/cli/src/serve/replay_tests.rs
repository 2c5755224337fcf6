//! The replay of a long recording through the API: what the page is sent
//! is a chart's worth, whatever the recording's length.

use super::*;

/// Regression (issue 33 item 6): `GET /api/recordings/NAME/replay` held the
/// whole trace and answered a point a sample (92,490 points, 11 MiB of JSON
/// for a 120 MiB recording). Now at most the core's `REPLAY_POINTS` (2000),
/// the watched process's peak on the chart; two replays asked at once get
/// the same answer.
#[tokio::test]
async fn a_long_recording_replays_as_a_chart_not_every_sample() {
    let s = server("long-replay");
    let r = &s.app.router;
    let samples = 5003;
    {
        let file = std::fs::File::create(s.dir.path().join("long.jsonl")).unwrap();
        let mut out = std::io::BufWriter::new(file);
        swapsight::synth::write_busy(&mut out, samples, 3, 4).unwrap();
        std::io::Write::flush(&mut out).unwrap();
    }
    let uri = "/api/recordings/long.jsonl/replay";
    let (a, b) = tokio::join!(call(r, get(uri)), call(r, get(uri)));
    assert_eq!(a.status, StatusCode::OK, "{}", a.text());
    assert_eq!(a.body, b.body, "two replays at once, two answers");
    let replay = a.json();
    let points = replay["points"].as_array().unwrap();
    assert!(
        (1000..=2000).contains(&points.len()),
        "{} points",
        points.len()
    );
    assert_eq!(replay["thinned_from"].as_u64(), Some(samples as u64));
    assert_eq!(replay["report"]["samples"].as_u64(), Some(samples as u64));
    assert_eq!(replay["phases"].as_array().unwrap().len(), 4);
    assert!(replay["names"].as_array().unwrap().len() <= 8);
    let watched = &replay["report"]["processes"][0];
    assert_eq!(watched["watched"], true);
    let pid = watched["pid"].as_u64().unwrap();
    let drawn_peak = points
        .iter()
        .flat_map(|p| p["footprints"].as_array().unwrap())
        .filter(|f| f[0].as_u64() == Some(pid))
        .filter_map(|f| f[1].as_u64())
        .max();
    assert_eq!(drawn_peak, watched["peak_footprint_bytes"].as_u64());
    assert!(a.body.len() < 1 << 20, "{} bytes", a.body.len());
}
