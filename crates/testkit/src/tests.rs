use super::*;

#[test]
fn the_filler_is_where_the_tests_look_for_it() {
    let text = std::fs::read_to_string(memfill()).expect("crates/testkit/fixtures/memfill.py");
    assert!(
        text.contains("--mb"),
        "not the filler: {}",
        memfill().display()
    );
}
