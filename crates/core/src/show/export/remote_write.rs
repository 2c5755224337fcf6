//! Prometheus remote write 1.0: the series `/metrics` serves, as the body
//! a receiver (Prometheus with `--web.enable-remote-write-receiver`, Mimir,
//! Thanos, VictoriaMetrics, Grafana Cloud) takes — a protobuf
//! `WriteRequest`, snappy-compressed in the block format, POSTed with
//! `Content-Encoding: snappy`, `Content-Type: application/x-protobuf` and
//! `X-Prometheus-Remote-Write-Version: 0.1.0`
//! (prometheus.io/docs/specs/remote_write_spec; prompb/remote.proto and
//! types.proto):
//!
//! ```text
//! message WriteRequest { repeated TimeSeries timeseries = 1; }
//! message TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
//! message Label        { string name = 1; string value = 2; }
//! message Sample       { double value = 1; int64 timestamp = 2; }
//! ```
//!
//! The series come from the exposition text itself ([`parse`]), so a push
//! sends exactly what a scrape reads. Labels are sorted by name, `__name__`
//! first, as the spec asks.

/// One series at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// `__name__` and the other labels, sorted by name.
    pub labels: Vec<(String, String)>,
    /// Its value.
    pub value: f64,
}

/// The longest exposition line read; a longer one is skipped.
const MAX_LINE: usize = 64 * 1024;

/// The series of an exposition text as swapsight writes it (one sample a
/// line, `name{a="x",b="y"} value`, no timestamps), with `extra` labels
/// (`instance`, `job`, `--label k=v`) added to each; a label a series has
/// already keeps its own value. Comments, blank and malformed lines are
/// skipped.
pub fn parse(text: &str, extra: &[(String, String)]) -> Vec<Series> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty() && l.len() <= MAX_LINE)
        .filter_map(parse_line)
        .map(|mut s| {
            for (k, v) in extra {
                if !s.labels.iter().any(|(name, _)| name == k) {
                    s.labels.push((k.clone(), v.clone()));
                }
            }
            s.labels.sort_by(|a, b| a.0.cmp(&b.0));
            s
        })
        .collect()
}

fn parse_line(line: &str) -> Option<Series> {
    let (head, value) = line.trim_end().rsplit_once(' ')?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().ok()?,
    };
    let (name, labels) = match head.split_once('{') {
        Some((name, rest)) => (name, labels_of(rest.strip_suffix('}')?)?),
        None => (head, Vec::new()),
    };
    if name.is_empty() {
        return None;
    }
    let mut all = vec![("__name__".to_string(), name.to_string())];
    all.extend(labels);
    Some(Series { labels: all, value })
}

/// `a="x",b="y\"z"` → [(a, x), (b, y"z)]: the escapes `\\`, `\"`, `\n`.
fn labels_of(mut rest: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (key, after) = rest.split_once("=\"")?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            let (i, c) = chars.next()?;
            match c {
                '"' => break i,
                '\\' => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    other => value.push(other),
                },
                c => value.push(c),
            }
        };
        out.push((key.trim_start_matches(',').to_string(), value));
        rest = after[end + 1..].trim_start_matches(',');
    }
    Some(out)
}

/// The `WriteRequest` of `series` at `timestamp_ms`, protobuf-encoded.
pub fn encode(series: &[Series], timestamp_ms: i64) -> Vec<u8> {
    encode_moments(&[(timestamp_ms, series)])
}

/// The `WriteRequest` of several moments, each `(timestamp_ms, series)`,
/// oldest first: each series once, with its samples in the moments' order
/// (a receiver takes a series' samples in time order only, and one
/// `TimeSeries` per series keeps the labels from being sent again).
pub fn encode_moments(moments: &[(i64, &[Series])]) -> Vec<u8> {
    type Labels = [(String, String)];
    let mut order: Vec<&Labels> = Vec::new();
    let mut samples: std::collections::HashMap<&Labels, Vec<(f64, i64)>> =
        std::collections::HashMap::new();
    for &(at, series) in moments {
        for s in series {
            let list = samples.entry(&s.labels).or_insert_with(|| {
                order.push(&s.labels);
                Vec::new()
            });
            list.push((s.value, at));
        }
    }
    let mut out = Vec::new();
    for labels in order {
        let mut ts = Vec::new();
        for (name, value) in labels {
            let mut label = Vec::new();
            bytes_field(&mut label, 1, name.as_bytes());
            bytes_field(&mut label, 2, value.as_bytes());
            bytes_field(&mut ts, 1, &label);
        }
        for &(value, at) in samples.get(labels).map_or(&[][..], Vec::as_slice) {
            let mut sample = Vec::new();
            sample.push(1 << 3 | 1); // field 1, 64-bit
            sample.extend_from_slice(&value.to_le_bytes());
            varint(&mut sample, 2 << 3); // field 2, varint
            varint(&mut sample, at as u64);
            bytes_field(&mut ts, 2, &sample);
        }
        bytes_field(&mut out, 1, &ts);
    }
    out
}

/// The body a receiver takes: [`encode`], snappy-compressed (block
/// format, not framed: the spec's).
pub fn body(series: &[Series], timestamp_ms: i64) -> Vec<u8> {
    compress(&encode(series, timestamp_ms))
}

/// [`encode_moments`], snappy-compressed: the body of one request that
/// carries several moments (a queue's backlog).
pub fn body_of_moments(moments: &[(i64, &[Series])]) -> Vec<u8> {
    compress(&encode_moments(moments))
}

fn compress(raw: &[u8]) -> Vec<u8> {
    // Compressing a buffer in memory fails only past snappy's 4 GiB limit.
    snap::raw::Encoder::new()
        .compress_vec(raw)
        .unwrap_or_default()
}

fn bytes_field(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    varint(out, field << 3 | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exposition_line_becomes_a_series_with_sorted_labels_and_the_extra_ones() {
        let text = "# HELP swapsight_free_ratio free\n# TYPE swapsight_free_ratio gauge\n\
                    swapsight_free_ratio 0.5\n\
                    swapsight_process_footprint_bytes{pid=\"42\",name=\"a \\\"b\\\"\\\\c\"} 1024\n\
                    broken line\n";
        let extra = [("instance".to_string(), "laptop".to_string())];
        let s = parse(text, &extra);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!(
            s[0].labels,
            [
                ("__name__".into(), "swapsight_free_ratio".into()),
                ("instance".into(), "laptop".into())
            ]
        );
        assert_eq!(s[0].value, 0.5);
        assert_eq!(
            s[1].labels,
            [
                (
                    "__name__".into(),
                    "swapsight_process_footprint_bytes".into()
                ),
                ("instance".into(), "laptop".into()),
                ("name".into(), "a \"b\"\\c".into()),
                ("pid".into(), "42".into()),
            ]
        );
    }

    #[test]
    fn the_write_request_is_laid_out_as_the_protobuf_says() {
        let s = Series {
            labels: vec![("__name__".into(), "up".into())],
            value: 1.0,
        };
        let got = encode(&[s], 300);
        // Label: 0a 08 "__name__" 12 02 "up"
        let mut label = vec![0x0a, 8];
        label.extend_from_slice(b"__name__");
        label.extend_from_slice(&[0x12, 2]);
        label.extend_from_slice(b"up");
        // Sample: 09 <1.0 as f64 LE> 10 <300 as varint: ac 02>
        let mut sample = vec![0x09];
        sample.extend_from_slice(&1.0f64.to_le_bytes());
        sample.extend_from_slice(&[0x10, 0xac, 0x02]);
        let mut ts = vec![0x0a, label.len() as u8];
        ts.extend_from_slice(&label);
        ts.extend_from_slice(&[0x12, sample.len() as u8]);
        ts.extend_from_slice(&sample);
        let mut want = vec![0x0a, ts.len() as u8];
        want.extend_from_slice(&ts);
        assert_eq!(got, want);
        // The body is that, snappy block-compressed.
        let body = body(
            &[Series {
                labels: vec![("__name__".into(), "up".into())],
                value: 1.0,
            }],
            300,
        );
        assert_eq!(
            snap::raw::Decoder::new().decompress_vec(&body).unwrap(),
            want
        );
    }

    #[test]
    fn moments_put_each_series_once_with_its_samples_oldest_first() {
        let named = |name: &str, value: f64| Series {
            labels: vec![("__name__".into(), name.into())],
            value,
        };
        let first = [named("up", 1.0), named("down", 0.0)];
        let second = [named("up", 2.0)];
        let got = encode_moments(&[(100, &first[..]), (120, &second[..])]);
        // Timestamps below 128 are one-byte varints.
        let field = |tag: u8, bytes: &[u8]| {
            let mut f = vec![tag, bytes.len() as u8];
            f.extend_from_slice(bytes);
            f
        };
        let label = |name: &str| {
            let mut l = field(0x0a, b"__name__");
            l.extend(field(0x12, name.as_bytes()));
            field(0x0a, &l)
        };
        let sample = |v: f64, t: u8| {
            let mut s = vec![0x09];
            s.extend_from_slice(&v.to_le_bytes());
            s.extend_from_slice(&[0x10, t]);
            field(0x12, &s)
        };
        let mut up = label("up");
        up.extend(sample(1.0, 100));
        up.extend(sample(2.0, 120));
        let mut down = label("down");
        down.extend(sample(0.0, 100));
        let mut want = field(0x0a, &up);
        want.extend(field(0x0a, &down));
        assert_eq!(got, want);
    }
}
