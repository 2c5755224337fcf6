//! A long busy trace for benchmarks, built or written straight to a file
//! (a trace of any size without holding it): deterministic, no RNG.

use super::*;

/// A long trace for benchmarks: `samples` ticks at 500 ms with `processes`
/// processes, swap climbing in the second half (deterministic, no RNG).
pub fn busy_trace(samples: usize, processes: usize) -> Trace {
    build(|sink| emit_busy(samples, processes, sink))
}

/// The records of [`busy_trace`], one at a time.
fn emit_busy(
    samples: usize,
    processes: usize,
    sink: &mut dyn FnMut(Record) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let (courses, swap) = busy_courses(samples, processes);
    emit(
        (samples.saturating_sub(1)) as f64 / 2.0,
        &courses,
        &swap,
        |_, sum| sum + 10.0,
        "python long_job.py",
        sink,
    )
}

/// [`busy_trace`] written straight to `out` as JSON Lines, one record at a
/// time: a trace of any size (gigabytes, for the large-trace benchmarks and
/// tests) costs no more memory than one sample. With `phases` > 0, that many
/// phase marks at even steps, each written after the sample of its time, as
/// a recording writes them.
pub fn write_busy(
    out: &mut impl std::io::Write,
    samples: usize,
    processes: usize,
    phases: usize,
) -> std::io::Result<()> {
    let mut line = Vec::with_capacity(16 * 1024);
    let step = samples.div_ceil(phases.max(1)).max(1);
    let mut n = 0;
    let mut write = |r: &Record| {
        line.clear();
        serde_json::to_writer(&mut line, r)?;
        line.push(b'\n');
        out.write_all(&line)
    };
    emit_busy(samples, processes, &mut |r| {
        write(&r)?;
        if let (Record::Sample(s), true) = (&r, phases > 0) {
            if n % step == 0 {
                write(&Record::Mark(crate::record::trace::Mark {
                    t_ms: s.sample.t_ms,
                    name: format!("phase {}", n / step + 1),
                    end: false,
                }))?;
            }
            n += 1;
        }
        Ok(())
    })
}

/// How many samples make a [`write_busy`] trace of about `bytes` (measured
/// on a short one: every sample line is about the same size).
pub fn busy_samples_for(bytes: u64, processes: usize) -> usize {
    let mut probe = Vec::new();
    write_busy(&mut probe, 100, processes, 0).expect("writing to memory never fails");
    let per_sample = (probe.len() as u64 / 100).max(1);
    usize::try_from(bytes / per_sample)
        .unwrap_or(usize::MAX)
        .max(2)
}

/// The processes and the swap course of [`busy_trace`].
fn busy_courses(samples: usize, processes: usize) -> (Vec<Course>, Vec<(f64, f64)>) {
    let mut courses: Vec<Course> = (0..processes)
        .map(|i| Course {
            pid: 1000 + i as u32,
            name: ["python", "Safari", "node", "Xcode", "WindowServer"][i % 5],
            footprint_gb: vec![(0.0, 0.2 + (i % 7) as f64 * 0.3)],
            pageins_per_s: vec![(0.0, (i % 3) as f64)],
            watched: false,
        })
        .collect();
    if let Some(c) = courses.first_mut() {
        let end = samples as f64 / 2.0;
        c.watched = true;
        c.footprint_gb = (0..=20)
            .map(|k| (end * k as f64 / 20.0, 8.0 + 6.0 * ((k % 4) as f64 / 3.0)))
            .collect();
        c.pageins_per_s = vec![(0.0, 10.0), (end / 2.0, 10.0), (end / 2.0 + 1.0, 1500.0)];
    }
    let end = samples as f64 / 2.0;
    (courses, vec![(0.0, 0.0), (end / 2.0, 0.0), (end, 6.0)])
}
