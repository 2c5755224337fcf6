use super::*;

#[test]
fn sizes_are_positive_and_sane() {
    assert_eq!(size("8G"), Ok(8 << 30));
    assert_eq!(size(" 8G"), Ok(8 << 30));
    assert!(size("0").unwrap_err().contains("at least 4K"));
    assert!(size("0G").unwrap_err().contains("at least 4K"));
    assert!(size("-1G").unwrap_err().contains("must be positive"));
    assert!(size("9000T").unwrap_err().contains("too large"));
    // Regression: `--swap-budget 1` was shown as "0 KiB", `0.5` was taken.
    assert!(size("1").unwrap_err().contains("at least 4K"));
    assert!(size("0.5").unwrap_err().contains("at least 4K"));
    assert_eq!(size("4K"), Ok(MIN_SIZE));
    // Regression: the docs name 8 PiB as the limit, and `8PiB` was an
    // "unknown unit".
    assert_eq!(size("8PiB"), Ok(swapsight::trace::MAX_BYTES));
    assert!(size("9P").unwrap_err().contains("too large"));
}

#[test]
fn wait_free_percentages_can_be_met_and_take_blanks() {
    assert_eq!(percent("40"), Ok(40.0));
    // Regression: ' 40' was refused while ' 8G' was taken.
    assert_eq!(percent(" 40 "), Ok(40.0));
    assert_eq!(percent("40%"), Ok(40.0));
    assert_eq!(percent("0"), Ok(0.0));
    // Regression: `--wait-free 100` was taken, and can never be met.
    assert!(percent("100").unwrap_err().contains("below 100"));
    assert!(percent("-1").unwrap_err().contains("0 or more"));
    assert!(percent("NaN").unwrap_err().contains("percentage"));
    assert!(percent("inf").unwrap_err().contains("percentage"));
}

#[test]
fn intervals_are_10ms_to_1h() {
    assert_eq!(interval("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(interval("10ms"), Ok(MIN_INTERVAL));
    assert_eq!(interval("1h"), Ok(MAX_INTERVAL));
    for bad in ["0.001ms", "9ms", "0", "1.01h", "5000000000000000h", "-1s"] {
        let e = interval(bad).unwrap_err();
        assert!(e.contains("between 10ms and 1h00m"), "{bad}: {e}");
    }
    assert!(interval("5x").unwrap_err().contains("unknown unit"));
}

#[test]
fn durations_are_bounded() {
    assert_eq!(duration("5s"), Ok(Duration::from_secs(5)));
    assert!(duration("0s").is_err());
    assert!(duration("721h").is_err());
    assert!(duration("800h").unwrap_err().contains("between 1ms and"));
}

#[test]
fn counts_say_what_is_wrong() {
    assert_eq!(count("10"), Ok(10));
    assert_eq!(count("0"), Ok(0));
    assert_eq!(count("-1").unwrap_err(), "must be 0 or more");
    assert!(count("ten").unwrap_err().contains("whole number"));
}

#[test]
fn psi_shares_are_above_zero_and_at_most_all_the_time() {
    assert_eq!(psi_share("10"), Ok(10.0));
    assert_eq!(psi_share(" 12.5% "), Ok(12.5));
    assert_eq!(psi_share("100"), Ok(100.0));
    for bad in ["0", "-1", "100.01", "NaN", "inf", "ten", ""] {
        assert!(psi_share(bad).is_err(), "{bad}");
    }
}
