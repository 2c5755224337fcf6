use super::*;
use crate::synth::counter;

/// The findings of a log's points, as `report` folds them.
fn named(log: &[(u64, String, f64)], swap_grew: bool) -> Vec<CacheFinding> {
    let mut fold = CacheFold::default();
    for (_, name, v) in log {
        fold.push(name, *v);
    }
    fold.findings(swap_grew)
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// A log as the watches write it: both figures each pass, 500 ms apart.
fn log(points: &[(&str, &[f64])]) -> Vec<(u64, String, f64)> {
    let mut log = Vec::new();
    let n = points[0].1.len();
    for i in 0..n {
        for (name, values) in points {
            log.push((i as u64 * 500, name.to_string(), values[i]));
        }
    }
    log
}

#[test]
fn an_mlx_cache_that_grows_while_active_stays_flat_is_named_with_its_limit() {
    let active = [4.2 * GIB; 6];
    let cache = [0.0, 1.0 * GIB, 3.0 * GIB, 6.0 * GIB, 9.1 * GIB, 9.1 * GIB];
    let l = log(&[("mlx.active", &active), ("mlx.cache", &cache)]);
    let found = named(&l, true);
    assert_eq!(found.len(), 1, "{found:?}");
    let f = &found[0];
    assert_eq!(f.allocator, "MLX");
    assert!(
        f.words.starts_with(
            "MLX cache grew 9.1 GiB while active stayed 4.2 GiB — mx.set_cache_limit("
        ),
        "{}",
        f.words
    );
    // Without swap growth it is the allocator doing its job: no finding.
    assert!(named(&l, false).is_empty());
    // Active memory that grew with the cache is the model's, not a cache.
    let growing = [
        1.0 * GIB,
        2.0 * GIB,
        4.0 * GIB,
        6.0 * GIB,
        8.0 * GIB,
        9.0 * GIB,
    ];
    assert!(named(
        &log(&[("mlx.active", &growing), ("mlx.cache", &cache)]),
        true
    )
    .is_empty());
    // A small cache is no finding.
    let small = [0.0, 0.1 * GIB, 0.2 * GIB, 0.3 * GIB, 0.5 * GIB, 0.9 * GIB];
    assert!(named(
        &log(&[("mlx.active", &active), ("mlx.cache", &small)]),
        true
    )
    .is_empty());
}

#[test]
fn the_mps_and_cuda_drivers_holding_more_than_tensors_are_named_per_device() {
    let tensors = [3.0 * GIB; 5];
    let driver = [3.5 * GIB, 5.0 * GIB, 8.0 * GIB, 10.0 * GIB, 10.0 * GIB];
    let l = log(&[
        ("torch.mps.current_allocated", &tensors),
        ("torch.mps.driver_allocated", &driver),
        ("torch.cuda:1.allocated", &tensors),
        ("torch.cuda:1.reserved", &driver),
        // Device 0 reserves only what its tensors hold.
        ("torch.cuda:0.allocated", &tensors),
        ("torch.cuda:0.reserved", &tensors),
    ]);
    let found = named(&l, true);
    let names: Vec<&str> = found.iter().map(|f| f.allocator.as_str()).collect();
    assert_eq!(names, ["MPS", "CUDA:1"]);
    assert_eq!(
        found[0].words,
        "MPS driver holds 7.0 GiB more than tensors (tensors at most 3.0 GiB) — torch.mps.empty_cache() or a lower PYTORCH_MPS_HIGH_WATERMARK_RATIO"
    );
    assert!(found[1].words.contains("torch.cuda.empty_cache()"));
}

#[test]
fn a_driver_point_before_any_tensor_point_is_not_read_as_all_cache() {
    let l = [
        (0, "torch.mps.driver_allocated".to_string(), 9.0 * GIB),
        (500, "torch.mps.current_allocated".to_string(), 8.5 * GIB),
        (500, "torch.mps.driver_allocated".to_string(), 9.0 * GIB),
    ];
    assert!(named(&l, true).is_empty());
    // Names that only look like a device's are no allocator.
    for name in [
        "torch.cuda:x.reserved",
        "torch.cuda:.reserved",
        "torch.cuda:1234.reserved",
        "torch.cuda:0.other",
    ] {
        assert_eq!(side(name), None, "{name}");
    }
}

/// The report names the cache in a run whose swap grew, in its text and
/// its JSON.
#[test]
fn the_report_of_a_false_fit_with_a_growing_mlx_cache_names_it() {
    let mut trace = crate::synth::seed_offload();
    let end = trace.samples.last().unwrap().sample.t_ms;
    for i in 0..=10u64 {
        let t = end * i / 10;
        trace
            .counters
            .push(counter(t, "mlx.active", 4.0 * GIB, "bytes"));
        trace
            .counters
            .push(counter(t, "mlx.cache", i as f64 * GIB, "bytes"));
    }
    let r = crate::judge::report::report(&trace, None);
    assert_eq!(r.caches.len(), 1);
    assert!(
        r.to_text()
            .contains("allocator cache: MLX cache grew 10.0 GiB while active stayed 4.0 GiB"),
        "{}",
        r.to_text()
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["caches"][0]["allocator"], "MLX");
}
