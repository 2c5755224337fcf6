use super::*;

#[test]
fn sizes() {
    assert_eq!(parse_size("8G"), Ok(8 << 30));
    assert_eq!(parse_size("8GiB"), Ok(8 << 30));
    assert_eq!(parse_size("8gb"), Ok(8 << 30));
    assert_eq!(parse_size("512M"), Ok(512 << 20));
    assert_eq!(parse_size("1.5G"), Ok(3 << 29));
    assert_eq!(parse_size("4096"), Ok(4096));
    assert_eq!(parse_size(" 64 k "), Ok(64 << 10));
}

#[test]
fn bad_sizes_say_what_is_wrong() {
    let e = parse_size("8X").unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid size '8X': unknown unit 'x' (use B, K, M, G, T or P; KiB, MiB, GiB also work)"
    );
    assert!(parse_size("").is_err());
    assert!(parse_size("G").is_err());
    assert!(parse_size("-1G").is_err());
    assert!(parse_size("1.2.3G").is_err());
    assert!(parse_size("99999999999T").is_err());
}

/// An escape sequence in a size (typed, pasted, or from a setting) is
/// quoted back cleaned, in the input and in the unit named.
#[test]
fn a_size_with_escape_bytes_is_quoted_back_cleaned() {
    for (input, kind) in [("8\x1b[2J", "size"), ("2\x1b]0;pwned\x07s", "duration")] {
        let e = if kind == "size" {
            parse_size(input).unwrap_err()
        } else {
            parse_duration(input).unwrap_err()
        };
        let said = e.to_string();
        assert!(!said.chars().any(char::is_control), "{said:?}");
        assert!(said.starts_with(&format!("invalid {kind} '")), "{said:?}");
        assert!(said.contains("unknown unit '?"), "{said:?}");
    }
}

#[test]
fn durations() {
    assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
    assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
    assert_eq!(parse_duration("3m"), Ok(Duration::from_secs(180)));
    assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
    assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
    assert!(parse_duration("5x")
        .unwrap_err()
        .to_string()
        .contains("'5x'"));
    assert!(parse_duration("ms").is_err());
}

#[test]
fn differences_and_sums_saturate() {
    assert_eq!(signed_diff(5, 3), 2);
    assert_eq!(signed_diff(3, 5), -2);
    assert_eq!(signed_diff(u64::MAX, 0), i64::MAX);
    assert_eq!(signed_diff(0, u64::MAX), i64::MIN);
    assert_eq!(signed_diff(1 << 63, 0), i64::MAX);
    assert_eq!(saturating_sum([1, 2, 3]), 6);
    assert_eq!(saturating_sum([u64::MAX, 1]), u64::MAX);
}

#[test]
fn formatting() {
    assert_eq!(format_bytes(19_864_223_744), "18.5 GiB");
    assert_eq!(format_bytes(-(512 << 20)), "-512 MiB");
    assert_eq!(format_bytes(2048), "2 KiB");
    assert_eq!(format_bytes_short(2_254_857_830), "2.1G");
    assert_eq!(format_bytes_short(640 << 20), "640M");
    assert_eq!(format_duration(Duration::from_secs(192)), "3m12s");
    assert_eq!(format_duration(Duration::from_millis(12_500)), "12.5s");
    assert_eq!(format_duration(Duration::from_secs(3720)), "1h02m");
}

#[test]
fn a_growth_has_a_sign_only_when_it_changed() {
    assert_eq!(format_growth(340 << 20), "+340 MiB");
    assert_eq!(
        format_growth(-(12 << 20)),
        format!("-{}", format_bytes(12 << 20))
    );
    assert_eq!(format_growth(0), format_bytes(0));
}

#[test]
fn a_limit_is_shown_in_the_unit_it_was_set_in() {
    assert_eq!(format_limit(256 << 20), "256 MiB");
    assert_eq!(format_limit(16 << 30), "16 GiB");
    assert_eq!(format_limit(1536 << 20), "1536 MiB");
    assert_eq!(format_limit(300_000_000), format_bytes(300_000_000));
    assert_eq!(format_limit(u64::MAX), format_bytes(i64::MAX));
}
