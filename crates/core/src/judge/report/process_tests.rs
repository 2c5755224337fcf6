use super::*;

const MIB: u64 = 1 << 20;

fn grew_under(pairs: &[(State, i64)]) -> Stats {
    Stats {
        growth_by_state: pairs.iter().copied().collect(),
        ..Default::default()
    }
}

#[test]
fn hindsight_takes_the_state_under_which_most_swap_grew_a_tie_to_false_fit() {
    let cfg = DetectorConfig::default();
    let verdict = |pairs: &[(State, i64)], worst| {
        let st = Stats {
            worst,
            ..grew_under(pairs)
        };
        st.verdict(128 * MIB, &cfg, Carries::Itself)
    };
    let mib = MIB as i64;
    assert_eq!(
        verdict(
            &[(State::FalseFit, 100 * mib), (State::Overflow, 300 * mib)],
            State::Overflow
        ),
        State::Overflow
    );
    assert_eq!(
        verdict(
            &[(State::FalseFit, 300 * mib), (State::Overflow, 100 * mib)],
            State::Overflow
        ),
        State::FalseFit
    );
    assert_eq!(
        verdict(
            &[(State::FalseFit, mib), (State::Overflow, mib)],
            State::Overflow
        ),
        State::FalseFit
    );
    // Raised, but swap did not grow under it: the worst raised state.
    assert_eq!(
        verdict(&[(State::Fits, 900 * mib)], State::Overflow),
        State::Overflow
    );
    assert_eq!(verdict(&[], State::HiddenMemory), State::HiddenMemory);
    assert_eq!(verdict(&[], State::Fits), State::Fits);
}

#[test]
fn hindsight_judges_the_tree_carrier_on_the_whole_run_when_no_tick_climbed() {
    let cfg = DetectorConfig::default();
    let tolerance = 128 * MIB;
    let st = |growth: u64, share: f64| Stats {
        swap_at_first: GIB_BASE,
        max_swap: GIB_BASE + growth,
        share_at_max_swap: share,
        ..Default::default()
    };
    assert_eq!(
        st(tolerance, 0.2).verdict(tolerance, &cfg, Carries::Tree),
        State::FalseFit
    );
    assert_eq!(
        st(tolerance, 0.9).verdict(tolerance, &cfg, Carries::Tree),
        State::Overflow
    );
    // Below the tolerance, or not the tree's largest member: it fits.
    assert_eq!(
        st(tolerance - 1, 0.2).verdict(tolerance, &cfg, Carries::Tree),
        State::Fits
    );
    assert_eq!(
        st(tolerance, 0.2).verdict(tolerance, &cfg, Carries::Itself),
        State::Fits
    );
}

#[test]
fn the_tree_carrier_of_a_run_its_cgroup_oom_killed_did_not_fit() {
    // No swap grew (the cgroup may not swap); the OOM killer ended the run.
    let cfg = DetectorConfig::default();
    let tolerance = 128 * MIB;
    let st = Stats {
        swap_at_first: GIB_BASE,
        max_swap: GIB_BASE,
        peak_fp: 255 * MIB,
        ..Default::default()
    };
    // The footprints filled the limit: overflow, said of the OOM killer.
    let oom = Carries::OomKill(0.99);
    assert_eq!(st.verdict(tolerance, &cfg, oom), State::Overflow);
    let r = st.report(7, &[], cgroup_256_mib(), tolerance, &cfg, oom);
    assert!(
        r.evidence.contains(
            "the cgroup's OOM killer ended the run; all footprints at 99 % of its limit: overflow"
        ),
        "{}",
        r.evidence
    );
    // Memory charged outside the footprints (a tmpfs file, a driver):
    // a false fit, the OOM killer its evidence.
    let oom = Carries::OomKill(0.2);
    assert_eq!(st.verdict(tolerance, &cfg, oom), State::FalseFit);
    let r = st.report(7, &[], cgroup_256_mib(), tolerance, &cfg, oom);
    assert!(
        r.evidence.contains("the OOM killer says it did not"),
        "{}",
        r.evidence
    );
    // Another process of the run, or a run no OOM killer ended: it fits.
    assert_eq!(st.verdict(tolerance, &cfg, Carries::Itself), State::Fits);
    assert_eq!(st.verdict(tolerance, &cfg, Carries::Tree), State::Fits);
}

const GIB_BASE: u64 = 1 << 30;

#[test]
fn growth_span_is_when_swap_went_from_a_tenth_to_nine_tenths_while_seen() {
    let swap: Vec<(u64, u64)> = (0..10).map(|i| (i * 1000, i * 100)).collect();
    // Seen throughout: 10 % of 900 above 0 is reached at 100 (1 s), 90 % at 900 (9 s).
    assert_eq!(
        growth_span(&swap, &[(0, 9)], 0, 900),
        (Some(1000), Some(9000))
    );
    // Seen only in the first half: 90 % is never reached while it was seen.
    assert_eq!(growth_span(&swap, &[(0, 4)], 0, 900), (Some(1000), None));
    assert_eq!(growth_span(&swap, &[(0, 9)], 0, 0), (None, None));
}

fn cgroup_256_mib() -> RunMemory {
    RunMemory {
        bytes: 256 * MIB,
        cgroup_limit: true,
    }
}

#[test]
fn a_cgroups_limit_is_named_as_one_and_the_two_shares_apart() {
    let cfg = DetectorConfig::default();
    let st = Stats {
        swap_at_first: GIB_BASE,
        max_swap: GIB_BASE + 640 * MIB,
        peak_fp: 39 * MIB,
        watched: true,
        growth_by_state: [(State::FalseFit, 640 * MIB as i64)].into_iter().collect(),
        ..Default::default()
    };
    let r = st.report(7, &[], cgroup_256_mib(), 128 * MIB, &cfg, Carries::Tree);
    assert_eq!(r.verdict, State::FalseFit, "{}", r.evidence);
    assert!(
        r.evidence
            .starts_with("footprint peaked at 39 MiB of the cgroup's 256 MiB limit (15 %)"),
        "{}",
        r.evidence
    );
    assert!(
        r.evidence
            .contains("when swap peaked all footprints together were 0 % of its limit"),
        "{}",
        r.evidence
    );
    let host = RunMemory {
        bytes: 48 << 30,
        cgroup_limit: false,
    };
    let r = st.report(7, &[], host, 128 * MIB, &cfg, Carries::Tree);
    assert!(
        r.evidence
            .starts_with("footprint peaked at 39 MiB of 48.0 GiB (0 %)")
            && r.evidence.contains("were 0 % of memory"),
        "{}",
        r.evidence
    );
}

#[test]
fn the_share_at_the_swap_peak_says_when_it_counts_the_footprints_own_swap() {
    let cfg = DetectorConfig::default();
    let mut st = Stats {
        swap_at_first: GIB_BASE,
        peak_fp: 254 * MIB,
        watched: true,
        growth_by_state: [(State::Overflow, 600 * MIB as i64)].into_iter().collect(),
        ..Default::default()
    };
    // Resident 156 MiB and 568 MiB in VmSwap when swap peaked: 283 % of
    // the limit, the filler's own memory.
    st.note_swap(GIB_BASE + 600 * MIB, 724.0 / 256.0, 568 * MIB);
    st.note_swap(GIB_BASE + 100 * MIB, 0.1, 0);
    let r = st.report(7, &[], cgroup_256_mib(), 128 * MIB, &cfg, Carries::Tree);
    assert_eq!(r.verdict, State::Overflow, "{}", r.evidence);
    assert!(
        r.evidence.contains(
            "when swap peaked all footprints with their 568 MiB of swap (VmSwap) together were 283 % of its limit: overflow"
        ),
        "{}",
        r.evidence
    );
}
