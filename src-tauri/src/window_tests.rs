use super::*;

#[test]
fn focus_loss_hides_only_a_popover_without_a_dialog() {
    assert!(hide_on_blur(true, 0));
    assert!(!hide_on_blur(true, 1));
    assert!(!hide_on_blur(false, 0));
    assert!(!hide_on_blur(false, 2));
}

#[test]
fn a_dialog_counts_as_open_while_its_guard_lives() {
    let mode = Mode::new(true, KEEP);
    assert!(mode.hides_on_blur());
    let first = mode.dialog();
    let second = mode.dialog();
    assert!(!mode.hides_on_blur());
    drop(first);
    assert!(!mode.hides_on_blur(), "one dialog is still open");
    drop(second);
    assert!(mode.hides_on_blur());
    mode.set_popover(false);
    assert!(!mode.hides_on_blur());
}

#[test]
fn a_close_is_due_only_if_the_popover_stayed_hidden() {
    let mode = Mode::new(true, KEEP);
    let first = mode.hid();
    assert!(mode.close_due(first), "hidden and left alone");
    mode.shown();
    assert!(!mode.close_due(first), "shown again within the keep");
    let second = mode.hid();
    assert!(mode.close_due(second) && !mode.close_due(first));
    let third = mode.hid();
    assert!(
        !mode.close_due(second) && mode.close_due(third),
        "only the last hide's close runs"
    );
}

#[test]
fn only_a_closed_popover_with_a_keep_is_built_when_the_pointer_comes_over_the_icon() {
    assert!(prewarm_due(true, false, KEEP));
    assert!(
        !prewarm_due(true, true, KEEP),
        "a kept popover is there already"
    );
    assert!(
        !prewarm_due(false, false, KEEP),
        "an ordinary window is the user's"
    );
    assert!(!prewarm_due(false, true, KEEP));
    assert!(
        !prewarm_due(true, false, Duration::ZERO),
        "a keep of 0 would close it as soon as built"
    );
}

#[test]
fn the_popover_built_at_start_is_kept_three_keeps_and_not_at_all_with_a_keep_of_0() {
    assert_eq!(start_keep(KEEP), Some(KEEP * START_KEEPS));
    assert_eq!(
        start_keep(Duration::from_secs(2)),
        Some(Duration::from_secs(6))
    );
    assert_eq!(start_keep(Duration::ZERO), None, "0 keeps nothing built");
    assert_eq!(start_keep(Duration::MAX), Some(Duration::MAX));
}
