use super::*;

#[test]
fn the_flags_take_durations_and_counts_within_the_push_bounds() {
    assert_eq!(interval("15s"), Ok(Duration::from_secs(15)));
    assert!(interval("500ms").is_err());
    assert!(interval("2h").is_err());
    assert_eq!(queue_samples("1000"), Ok(1000));
    assert!(queue_samples("999").is_err());
    assert!(queue_samples("-5").is_err());
}
