//! The answer on figures laid out as each OS gives them: Linux's from a
//! captured `/proc/meminfo` and a v1 cgroup, a Mac's as `hw.memsize`,
//! `sysctl iogpu.wired_limit_mb` and Metal's `recommendedMaxWorkingSetSize`
//! return them.

use super::*;
use crate::probe::linux::parse::parse_meminfo;
use crate::probe::GpuMemory;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

const MEMINFO: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/proc-meminfo.txt"
));

/// This project's Linux test machine: MemTotal 24608420 kB (23.5 GiB),
/// MemAvailable 23866996 kB (22.8 GiB), as the Linux probe turns them into
/// a sample.
fn linux() -> Figures {
    let m = parse_meminfo(MEMINFO).unwrap();
    Figures {
        os: "linux".into(),
        system: SystemSample {
            phys_bytes: m.mem_total_bytes,
            free_pct: m.free_pct(),
            page_size: 4096,
            ..SystemSample::default()
        },
        ..Figures::default()
    }
}

/// The source's 48 GB Mac (docs/background.md): `hw.memsize` 51539607552,
/// `iogpu.wired_limit_mb` 0 (the default), `recommendedMaxWorkingSetSize`
/// 40200960000 (37.44 GiB, what `torch.mps.recommended_max_memory()`
/// printed there), 14 GiB in use (Activity Monitor's Memory Used).
fn mac48() -> Figures {
    mac(51_539_607_552, 40_200_960_000, 14 * GIB)
}

/// A 16 GiB M-series Mac: `recommendedMaxWorkingSetSize` 11453251584, two
/// thirds of memory (the "~10.67 GiB on 16GB M4" of exo #1672).
fn mac16() -> Figures {
    mac(17_179_869_184, 11_453_251_584, 5 * GIB)
}

pub(super) fn mac(phys: u64, rec: u64, used: u64) -> Figures {
    Figures {
        os: "macos".into(),
        macos_version: Some("15.1".into()),
        system: SystemSample {
            phys_bytes: phys,
            free_pct: 3.0,
            page_size: 16384,
            memory_used_bytes: Some(used),
            gpu: Some(GpuMemory {
                in_use_bytes: Some(2 * GIB),
                alloc_bytes: Some(3 * GIB),
                wired_limit_mb: Some(0),
                recommended_working_set_bytes: Some(rec),
                ..GpuMemory::default()
            }),
            ..SystemSample::default()
        },
        ..Figures::default()
    }
}

fn size(bytes: u64) -> Model {
    Model::Size {
        bytes,
        given: String::new(),
    }
}

fn bound(a: &Answer, id: BoundId) -> &Bound {
    a.bounds
        .iter()
        .find(|b| b.id == id)
        .unwrap_or_else(|| panic!("no {id:?} in {:#?}", a.bounds))
}

fn skipped(a: &Answer) -> Vec<BoundId> {
    a.skipped.iter().map(|s| s.id).collect()
}

#[test]
fn linux_judges_against_memory_and_free_memory_and_leaves_the_mac_bounds_out() {
    let f = linux();
    let fits = answer(size(8 * GIB), None, &f);
    assert_eq!(fits.verdict, Verdict::Fits);
    assert_eq!(fits.exit_code, 0);
    assert_eq!(bound(&fits, BoundId::Memory).bytes, 25_199_022_080);
    let free = bound(&fits, BoundId::FreeNow).bytes;
    assert!(free.abs_diff(24_439_803_904) < 4096, "{free}");
    assert_eq!(
        skipped(&fits),
        [
            BoundId::CgroupLimit,
            BoundId::GpuWiredLimit,
            BoundId::RecommendedWorkingSet,
            BoundId::MpsHighWatermark,
            BoundId::MlxMemoryLimit
        ]
    );
    assert!(
        fits.skipped[1].why.starts_with("not on Linux"),
        "{:?}",
        fits.skipped
    );
    assert!(fits.settings.is_empty());

    let swaps = answer(size(23 * GIB), None, &f);
    assert_eq!(swaps.verdict, Verdict::FitsOnlyBySwapping);
    assert_eq!(swaps.exit_code, 1);
    assert_eq!(
        swaps.summary,
        "fits only by swapping: needs 23.0 GiB, above free memory now (22.8 GiB), within physical memory (23.5 GiB)"
    );
    assert!(swaps.settings.is_empty(), "no setting frees memory");

    let no = answer(size(24 * GIB), None, &f);
    assert_eq!(no.verdict, Verdict::DoesNotFit);
    assert_eq!(no.exit_code, 2);
    assert_eq!(
        no.summary,
        "does not fit: needs 24.0 GiB, above physical memory (23.5 GiB)"
    );
    assert_eq!(
        no.notes,
        ["no setting makes it fit: it needs 24.0 GiB, more than the physical memory (23.5 GiB)"]
    );
}

/// A v1 cgroup as `/proc/self/cgroup` and the memory controller give it: a
/// 256 MiB limit, 140 MiB charged.
fn in_cgroup() -> Figures {
    Figures {
        scope: Some(Scope {
            path: "/swapsight-test-42".into(),
            version: 1,
            limit_bytes: 256 * MIB,
            usage_bytes: 140 * MIB,
            ..Scope::default()
        }),
        ..linux()
    }
}

#[test]
fn a_job_in_a_cgroup_has_its_limit_as_its_memory() {
    let f = in_cgroup();
    let a = answer(size(64 * MIB), None, &f);
    assert_eq!(a.verdict, Verdict::Fits);
    assert_eq!(
        a.summary,
        "fits: needs 64 MiB; the closest bound is free in the cgroup now (116 MiB), 52 MiB to spare"
    );
    let limit = bound(&a, BoundId::CgroupLimit);
    assert_eq!(limit.bytes, 256 * MIB);
    assert_eq!(
        limit.source,
        "memory.limit_in_bytes of cgroup v1 /swapsight-test-42: a job run here has it as its memory"
    );
    assert_eq!(
        answer(size(200 * MIB), None, &f).verdict,
        Verdict::FitsOnlyBySwapping
    );
    let no = answer(size(512 * MIB), None, &f);
    assert_eq!(no.verdict, Verdict::DoesNotFit);
    assert_eq!(
        no.summary,
        "does not fit: needs 512 MiB, above cgroup memory limit (256 MiB)"
    );
    // Unreadable: judged against the host, and said.
    let f = Figures {
        scope_unread: Some("cannot read /proc/self/cgroup".into()),
        ..linux()
    };
    let a = answer(size(512 * MIB), None, &f);
    assert_eq!(a.verdict, Verdict::Fits);
    assert!(
        a.skipped[0].why.starts_with("the cgroup could not be read"),
        "{:?}",
        a.skipped
    );
}

#[test]
fn a_48_gb_mac_swaps_past_the_recommended_working_set_and_the_sysctl_lifts_it() {
    let f = mac48();
    let a = answer(size(30 * GIB), None, &f);
    assert_eq!(a.verdict, Verdict::Fits, "{}", a.to_text());
    assert!(skipped(&a) == [BoundId::CgroupLimit], "{:?}", a.skipped);
    assert_eq!(a.skipped[0].why, "macOS has no memory cgroups");
    assert_eq!(bound(&a, BoundId::FreeNow).bytes, 34 * GIB);
    assert_eq!(bound(&a, BoundId::GpuWiredLimit).bytes, 40_200_960_000);
    assert_eq!(
        bound(&a, BoundId::GpuWiredLimit).source,
        "iogpu.wired_limit_mb = 0, the default: Metal's recommended working set"
    );
    // PyTorch's default 1.7 × 37.44 GiB; MLX's 1.5 × 37.44 GiB is past
    // 0.95 × memory, its cap.
    assert_eq!(bound(&a, BoundId::MpsHighWatermark).bytes, 68_341_632_000);
    assert_eq!(bound(&a, BoundId::MlxMemoryLimit).bytes, 48_962_627_174);

    let a = answer(
        size(38 * GIB),
        None,
        &mac(51_539_607_552, 40_200_960_000, 6 * GIB),
    );
    assert_eq!(a.verdict, Verdict::FitsOnlyBySwapping);
    assert!(bound(&a, BoundId::RecommendedWorkingSet).over);
    assert!(!bound(&a, BoundId::FreeNow).over);
    assert_eq!(a.settings.len(), 1, "{:#?}", a.settings);
    let s = &a.settings[0];
    // 38 GiB and a tenth of it, rounded up to 42 GiB, which is also all
    // that 48 GiB less the 6 GiB macOS keeps allows.
    assert_eq!(s.line, "sudo sysctl iogpu.wired_limit_mb=43008");
    assert_eq!(
        s.lifts,
        [BoundId::GpuWiredLimit, BoundId::RecommendedWorkingSet]
    );
    assert!(s.risk.starts_with("leaves 6.0 GiB to macOS"), "{}", s.risk);
    assert!(s.risk.contains("exo #1672"), "{}", s.risk);
    eprintln!(
        "--- a 38 GiB model on the 48 GB Mac's figures ---\n{}",
        a.to_text()
    );
}

#[test]
fn a_16_gb_mac_keeps_4_gb_for_macos_or_says_no_wired_limit_is_safe() {
    let f = mac16();
    let a = answer(size(11 * GIB), None, &f);
    assert_eq!(a.verdict, Verdict::FitsOnlyBySwapping, "{}", a.to_text());
    assert_eq!(a.settings[0].line, "sudo sysctl iogpu.wired_limit_mb=12288");
    let a = answer(size(12 * GIB + 512 * MIB), None, &f);
    assert_eq!(a.verdict, Verdict::FitsOnlyBySwapping, "{}", a.to_text());
    assert!(a.settings.is_empty(), "{:#?}", a.settings);
    assert_eq!(
        a.notes,
        ["no safe GPU wired limit: it needs 12.5 GiB, more than memory less the 4.0 GiB macOS keeps (12.0 GiB)"]
    );
    assert_eq!(wired_keep(17_179_869_184), 4 * GIB);
    assert_eq!(wired_keep(128 * GIB), 16 * GIB);
    // 105 GiB and its tenth is past the 112 GiB a 128 GiB Mac may wire
    // (what antirez/ds4 #893 ran with): capped there.
    assert_eq!(wired_limit_mb_for(100 * GIB, 128 * GIB), Ok(110 * 1024));
    assert_eq!(wired_limit_mb_for(105 * GIB, 128 * GIB), Ok(114_688));
}

#[test]
fn a_wired_limit_set_by_sysctl_is_the_bound_it_sets() {
    let mut f = mac(51_539_607_552, 40_200_960_000, 6 * GIB);
    if let Some(g) = f.system.gpu.as_mut() {
        g.wired_limit_mb = Some(43008);
        g.recommended_working_set_bytes = Some(43008 * MIB);
    }
    let a = answer(size(40 * GIB), None, &f);
    assert_eq!(bound(&a, BoundId::GpuWiredLimit).bytes, 42 * GIB);
    assert_eq!(
        bound(&a, BoundId::GpuWiredLimit).source,
        "iogpu.wired_limit_mb = 43008"
    );
    assert_eq!(a.verdict, Verdict::Fits, "{}", a.to_text());
}

#[test]
fn the_mps_watermark_is_the_ratio_set_times_the_working_set_and_does_not_set_the_verdict() {
    // swapsight advise's 0.8 (with its low ratio, which PyTorch needs
    // under a high one below 1.4): the source's clean error at 29.95 GiB.
    let f = Figures {
        mps_high_watermark_ratio: Some("0.8".into()),
        mps_low_watermark_ratio: Some("0.6".into()),
        ..mac48()
    };
    let a = answer(size(32 * GIB), None, &f);
    let mps = bound(&a, BoundId::MpsHighWatermark);
    assert_eq!(mps.bytes, 32_160_768_000);
    assert!(mps.over);
    assert_eq!(mps.framework, Some(Framework::PytorchMps));
    assert_eq!(a.verdict, Verdict::Fits, "the framework's bound is its own");
    let s = &a.settings[0];
    assert_eq!(
        s.line,
        "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.95 PYTORCH_MPS_LOW_WATERMARK_RATIO=0.95"
    );
    assert!(
        s.risk.starts_with("above 0.89, swapsight advise's ratio"),
        "{}",
        s.risk
    );
    let text = a.to_text();
    assert!(
        text.contains("for PyTorch on MPS only (not in the answer above):"),
        "{text}"
    );

    assert_eq!(mps_ratio(None, None), Ok(Some((1.7, false))));
    assert_eq!(mps_ratio(Some(" 1.5 "), None), Ok(Some((1.5, true))));
    assert_eq!(mps_ratio(Some(" 1.2 "), Some("1.0")), Ok(Some((1.2, true))));
    assert_eq!(mps_ratio(Some("0"), None), Ok(None));
    assert!(mps_ratio(Some("2.5"), None)
        .unwrap_err()
        .contains("PyTorch refuses it"));
    let f = Figures {
        mps_high_watermark_ratio: Some("0".into()),
        mps_low_watermark_ratio: None,
        ..mac48()
    };
    let a = answer(size(GIB), None, &f);
    assert!(skipped(&a).contains(&BoundId::MpsHighWatermark));
}

#[test]
fn a_mac_without_gpu_figures_says_so() {
    let mut f = mac48();
    f.system.gpu = None;
    let a = answer(size(GIB), None, &f);
    assert_eq!(a.skipped.len(), 5);
    assert!(a.skipped[1]
        .why
        .starts_with("the probe read no GPU figures"));
}

fn past(peak: u64) -> PastRun {
    PastRun {
        path: "run.jsonl".into(),
        peak_footprint_bytes: peak,
        peak_at_ms: 91_000,
        of: PeakOf::Tree,
        command: Some("python generate.py".into()),
        hostname: "mac".into(),
        os: "linux".into(),
        phys_bytes: 25_199_022_080,
        verdict: crate::step::detect::State::FalseFit,
        swap_growth_bytes: 817 * MIB as i64,
        samples: 55,
        framework_peaks: Vec::new(),
    }
}

#[test]
fn a_past_runs_peak_is_the_need_where_it_is_larger() {
    let f = linux();
    let a = answer(size(8 * GIB), Some(past(23 * GIB)), &f);
    assert_eq!(a.needed_bytes, 23 * GIB);
    assert_eq!(a.model_bytes, 8 * GIB);
    assert_eq!(a.verdict, Verdict::FitsOnlyBySwapping);
    let text = a.to_text();
    assert!(
        text.contains("needs 23.0 GiB: the past run's peak, above the model's 8.0 GiB"),
        "{text}"
    );
    let a = answer(size(8 * GIB), Some(past(GIB)), &f);
    assert_eq!(a.needed_bytes, 8 * GIB);
    let a = answer(size(8 * GIB), Some(past(0)), &f);
    assert!(a.notes[0].starts_with("the past run's peak footprint is 0"));
}

#[test]
fn the_peak_of_a_past_run_is_its_watched_trees() {
    let trace = crate::synth::seed_eager();
    let bytes = crate::synth::to_jsonl(&trace);
    let mut reader = crate::record::trace::TraceReader::new(
        std::io::Cursor::new(bytes),
        std::path::Path::new("eager.jsonl"),
    )
    .unwrap();
    let p = past_run(&mut reader, "eager.jsonl").unwrap();
    let want = trace
        .samples
        .iter()
        .map(|s| crate::judge::compare::watched_footprint(s, trace.header().watching()))
        .max()
        .unwrap();
    assert_eq!(p.peak_footprint_bytes, want);
    assert!((43.0..44.0).contains(&(want as f64 / GIB as f64)), "{want}");
    assert_eq!(p.of, PeakOf::Tree);
    assert_eq!(p.os, "macos");
    assert_eq!(p.samples, trace.samples.len());
    assert!(p.swap_growth_bytes > 7 * GIB as i64);
    assert_eq!(
        p.command.as_deref(),
        Some("python generate.py --mode eager")
    );
}

#[test]
fn the_text_names_every_bound_with_its_figure_and_groups_what_is_not_here() {
    let a = answer(size(23 * GIB), None, &linux());
    let text = a.to_text();
    assert!(
        text.starts_with("fits only by swapping: needs 23.0 GiB"),
        "{text}"
    );
    assert!(
        text.contains("  ok    23.5 GiB  physical memory — MemTotal of /proc/meminfo\n"),
        "{text}"
    );
    assert!(
        text.contains("  OVER  22.8 GiB  free memory now — MemAvailable of /proc/meminfo: 244 MiB short: the rest would come from swap\n"),
        "{text}"
    );
    assert!(
        text.contains("  GPU wired limit, Metal's recommended working set, PyTorch MPS high watermark, MLX memory limit: not on Linux: these are the GPU's share of a Mac's unified memory\n"),
        "{text}"
    );
    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(json["verdict"], "fits-only-by-swapping");
    assert_eq!(json["exit_code"], 1);
    assert_eq!(json["model"]["kind"], "size");
    assert_eq!(json["bounds"][1]["id"], "free-now");
    assert_eq!(json["bounds"][1]["if_over"], "swaps");
}

/// PyTorch reads its ratios with C's strtod: what follows a number is
/// ignored ("1.5x" is 1.5), text with no number in front is 0 (no limit),
/// and a high ratio under the low one's default (1.4 on unified memory)
/// without PYTORCH_MPS_LOW_WATERMARK_RATIO makes PyTorch refuse to start.
/// fit reads them the same way and says so.
#[test]
fn the_mps_ratios_are_read_as_pytorchs_strtod_reads_them() {
    use super::bounds::strtod;
    for (text, want, used) in [
        ("1.5", 1.5, 3),
        ("  1.5x", 1.5, 5),
        ("+.5e1 ", 5.0, 5),
        ("1.", 1.0, 2),
        ("2e", 2.0, 1),
        ("-0.25", -0.25, 5),
        ("lots", 0.0, 0),
        ("", 0.0, 0),
        (".", 0.0, 0),
        ("0x10", 0.0, 1),
    ] {
        assert_eq!(strtod(text), (want, used), "{text:?}");
    }
    assert!(strtod("INF").0.is_infinite() && strtod("nan").0.is_nan());

    // "1.5x": 1.5, said.
    let f = Figures {
        mps_high_watermark_ratio: Some("1.5x".into()),
        ..mac48()
    };
    let a = answer(size(GIB), None, &f);
    let b = bound(&a, BoundId::MpsHighWatermark);
    assert!(
        b.source
            .contains("1.50 (read as 1.5: PyTorch's strtod stops at 'x')"),
        "{}",
        b.source
    );
    // A word: 0, no limit, said.
    assert_eq!(mps_ratio(Some("lots"), None), Ok(None));
    let f = Figures {
        mps_high_watermark_ratio: Some("lots".into()),
        ..mac48()
    };
    let a = answer(size(GIB), None, &f);
    let why = &a
        .skipped
        .iter()
        .find(|s| s.id == BoundId::MpsHighWatermark)
        .expect("the MPS bound is left out")
        .why;
    assert!(
        why.contains("reads it as 0") && why.contains("no limit"),
        "{why}"
    );
    // Under the low ratio's default, with no low ratio set: PyTorch refuses.
    let err = mps_ratio(Some("1.2"), None).unwrap_err();
    assert!(
        err.contains("PyTorch refuses to start MPS")
            && err.contains("default on unified memory 1.4"),
        "{err}"
    );
    assert!(
        mps_ratio(Some("1.5"), Some("1.6")).is_err(),
        "low above high"
    );
    assert_eq!(
        mps_ratio(Some("0"), Some("1.9")),
        Ok(None),
        "no limit: up to 2.0"
    );
}
