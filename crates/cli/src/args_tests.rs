use super::*;

#[test]
fn sizes_are_positive_and_sane() {
    assert_eq!(size("8G"), Ok(8 << 30));
    assert!(size("0").unwrap_err().contains("more than zero"));
    assert!(size("0G").unwrap_err().contains("more than zero"));
    assert!(size("-1G").unwrap_err().contains("must be positive"));
    assert!(size("9000T").unwrap_err().contains("too large"));
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
