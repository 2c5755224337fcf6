use super::*;

const G: u64 = 1 << 30;

fn mac(rec: Option<u64>, reserve: Option<u64>) -> AdviceInput {
    AdviceInput {
        os: "macos".into(),
        hostname: "m5-pro".into(),
        phys_bytes: 48 * G,
        reserve_bytes: reserve,
        recommended_max_bytes: rec,
        ..AdviceInput::default()
    }
}

#[test]
fn the_source_mac_gets_both_ratios_below_where_it_swapped() {
    // recommended_max_memory() 37.44 GiB; 48 GiB − 30 % = 33.6 GiB.
    let rec = (37.44 * GIB) as u64;
    let a = advise(&mac(Some(rec), None), None);
    assert!(a.applies);
    assert_eq!(a.high_ratio, 0.89);
    assert_eq!(a.low_ratio, a.high_ratio);
    assert!(a.cap_bytes <= a.limit_bytes);
    // Below where the source saw swap begin (33.5 GiB footprint).
    assert!((a.cap_bytes as f64) < 33.5 * GIB);
    let lines: Vec<&str> = a.text.lines().collect();
    assert_eq!(lines[0], "export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.89");
    assert_eq!(lines[1], "export PYTORCH_MPS_LOW_WATERMARK_RATIO=0.89");
    assert!(
        a.text.contains("33.60 GiB / 37.44 GiB = 0.89"),
        "{}",
        a.text
    );
    assert!(!a.text.contains(READ_RECOMMENDED));
    // A reserve of 18 GiB: 30 / 37.44 → 0.80, the source's verified setting.
    let a = advise(&mac(Some(rec), Some(18 * G)), None);
    assert_eq!(a.high_ratio, 0.8);
}

#[test]
fn without_the_recommended_figure_it_estimates_and_says_how_to_read_it() {
    let a = advise(&mac(None, None), None);
    assert!(a.recommended_estimated);
    assert!(a.text.contains(READ_RECOMMENDED), "{}", a.text);
    assert!(a.high_ratio > 0.8 && a.high_ratio < 1.0, "{}", a.high_ratio);
}

#[test]
fn a_flagged_python_process_on_a_mac_gets_the_advice() {
    use crate::step::detect::State;
    let mac = crate::probe::HostInfo {
        os: "macos".into(),
        phys_bytes: 48 * G,
        page_size: 16384,
        hostname: "m5-pro".into(),
    };
    let text = for_flagged_process("Python", State::FalseFit, &mac).unwrap();
    assert!(
        text.contains("export PYTORCH_MPS_HIGH_WATERMARK_RATIO="),
        "{text}"
    );
    assert!(
        text.contains("export PYTORCH_MPS_LOW_WATERMARK_RATIO="),
        "{text}"
    );
    assert!(for_flagged_process("python3.12", State::Fits, &mac).is_none());
    assert!(for_flagged_process("ffmpeg", State::FalseFit, &mac).is_none());
    let linux = crate::probe::HostInfo {
        os: "linux".into(),
        ..mac
    };
    assert!(for_flagged_process("python3", State::FalseFit, &linux).is_none());
}

#[test]
fn linux_is_not_applicable_unless_the_figure_is_given() {
    let mut i = mac(None, None);
    i.os = "linux".into();
    let a = advise(&i, None);
    assert!(!a.applies);
    assert_eq!(a.text.lines().count(), 1);
    assert!(a
        .text
        .starts_with("no MPS watermark to set on m5-pro (linux)"));
    i.recommended_max_bytes = Some(30 * G);
    assert!(advise(&i, None).applies);
}

#[test]
fn the_eager_run_would_have_been_stopped_before_it_swapped() {
    // Eager: 31–33 GiB, then decode to 43.6 GiB; swap grew from 93 s.
    let t = crate::synth::seed_eager();
    let a = advise(&mac(Some((37.44 * GIB) as u64), None), Some(&t));
    let r = a.run.unwrap();
    assert!(r.stopped_before_swap, "{r:?}");
    assert!(r.over_cap_ms.unwrap() < r.swap_grew_ms.unwrap());
    assert!(r.words.contains("would have stopped it at"), "{}", r.words);
    // Staged never swapped and stays under the cap.
    let s = crate::synth::seed_staged();
    let r = check_run(&s, a.cap_bytes);
    assert!(r.swap_grew_ms.is_none() && r.over_cap_ms.is_none(), "{r:?}");
    assert!(r.words.contains("did not swap"));
}

#[test]
fn inputs_that_leave_no_room_are_refused_not_clamped() {
    // Regression: `--recommended-max 9007199254740992` printed a ratio
    // "rounded down" that was clamped up, and a cap 5,000× the memory.
    let huge = mac(Some(1 << 53), None);
    let why = check_input(&huge).unwrap_err();
    assert!(why.contains("more than the machine's 48.00 GiB"), "{why}");
    // Regression: `--reserve 24G` on a 23.5 GiB machine "left 0.00 GiB"
    // and still printed settings.
    let mut small = mac(None, Some(24 * G));
    small.phys_bytes = 47 * G / 2;
    let why = check_input(&small).unwrap_err();
    assert!(why.contains("nothing is left for the job"), "{why}");
    // A reserve that leaves under 1 % of the pool's figure: no ratio fits.
    let why = check_input(&mac(Some(37 * G), Some(48 * G - G / 4))).unwrap_err();
    assert!(why.contains("under 1 %"), "{why}");
    // Every accepted input gets a ratio whose cap is at or below the limit.
    for (rec, reserve) in [
        (Some(37 * G), None),
        (None, Some(47 * G)),
        (Some(G), Some(G)),
    ] {
        let input = mac(rec, reserve);
        check_input(&input).unwrap();
        let a = advise(&input, None);
        assert!(a.high_ratio >= 0.01);
        assert!(a.cap_bytes <= a.limit_bytes, "{rec:?} {reserve:?}: {a:?}");
    }
}

/// The ratios this shell already sets are read as PyTorch reads them
/// (strtod, `init_allocator` in aten/src/ATen/mps/MPSAllocator.mm) and
/// said: "1.5x" is 1.5, a word is 0 and no limit, and a high ratio under
/// the low one's default (1.4) with no low ratio set stops PyTorch.
#[test]
fn the_ratios_this_shell_sets_are_read_as_pytorch_reads_them() {
    let rec = (37.44 * GIB) as u64;
    let with = |high: Option<&str>, low: Option<&str>| {
        advise_alone(&AdviceInput {
            high_ratio_set: high.map(str::to_owned),
            low_ratio_set: low.map(str::to_owned),
            ..mac(Some(rec), None)
        })
    };
    assert_eq!(with(None, None).set_here, None);
    let a = with(Some("1.5x"), None);
    let said = a.set_here.clone().unwrap();
    assert!(
        said.contains("='1.5x' (read as 1.5: PyTorch's strtod stops at 'x'): PyTorch caps the MPS pool at 1.5 × 37.44 GiB"),
        "{said}"
    );
    assert!(said.contains("above the 0.89 advised"), "{said}");
    assert!(a.text.ends_with(&format!("{said}\n")), "{}", a.text);
    let said = with(Some("lots"), None).set_here.unwrap();
    assert!(
        said.contains("no number in front: PyTorch's strtod reads it as 0"),
        "{said}"
    );
    assert!(said.contains("no limit on the MPS pool"), "{said}");
    let said = with(Some("1.2"), None).set_here.unwrap();
    assert!(said.contains("PyTorch refuses to start MPS"), "{said}");
    assert!(said.contains(MPS_LOW_RATIO_ENV), "{said}");
    // Set as advise says, both: PyTorch takes it.
    let said = with(Some("0.89"), Some("0.89")).set_here.unwrap();
    assert!(said.contains("at or below the 0.89 advised"), "{said}");
    // The low ratio alone: the high one is PyTorch's default.
    let said = with(None, Some("1.0")).set_here.unwrap();
    assert!(
        said.contains(
            "the high ratio unset (PyTorch's default): PyTorch caps the MPS pool at 1.7 ×"
        ),
        "{said}"
    );
    // Escape bytes are quoted back cleaned, never reaching the terminal.
    let said = with(Some("\u{1b}[2J"), None).set_here.unwrap();
    assert!(!said.contains('\u{1b}'), "{said}");
}

#[test]
fn a_figure_read_from_metal_is_used_and_said_to_be_read_not_estimated() {
    // The probe's recommendedMaxWorkingSetSize on a 48 GB Mac: 83.3 %, not
    // the 78 % estimate.
    let rec = 42_949_672_960;
    let read = advise_alone(&AdviceInput {
        recommended_read_from_metal: true,
        ..mac(Some(rec), None)
    });
    assert!(!read.recommended_estimated);
    assert_eq!(read.recommended_max_bytes, rec);
    assert!(
        read.text.contains(&format!(
            "torch.mps.recommended_max_memory() is 40.00 GiB ({rec} bytes), read from Metal on this Mac"
        )),
        "{}",
        read.text
    );
    let estimated = advise_alone(&mac(None, None));
    assert!(estimated.recommended_estimated);
    assert!(
        estimated.high_ratio > read.high_ratio,
        "a larger figure, a lower ratio"
    );
}
