use super::*;

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ui/js/contract.js");

#[test]
fn the_uis_contract_file_is_what_the_rust_side_says() {
    let want = render();
    if std::env::var("SWAPSIGHT_WRITE_CONTRACT").is_ok_and(|v| v == "1") {
        std::fs::write(FILE, &want).unwrap();
    }
    let have = std::fs::read_to_string(FILE).unwrap_or_default();
    assert!(
        have == want,
        "ui/js/contract.js is out of date: run \
         SWAPSIGHT_WRITE_CONTRACT=1 cargo test -p swapsight-cli contract\n--- want\n{want}"
    );
}

#[test]
fn the_contract_holds_every_state_in_severity_order_and_the_uis_formats() {
    let text = render();
    let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle}"));
    assert!(at("\"fits\"") < at("\"hidden-memory\""));
    assert!(at("\"hidden-memory\"") < at("\"overflow\""));
    assert!(at("\"overflow\"") < at("\"false-fit\""));
    assert!(text.contains("{ name: \"perfetto\", extension: \"json\""));
    assert!(!text.contains("\"prometheus\""), "not offered by the UI");
    assert!(text.contains("process: { method: \"GET\", path: \"/process/{pid}\""));
}

#[test]
fn command_names_are_plain_identifiers_and_unique() {
    let mut seen = std::collections::HashSet::new();
    for r in ROUTES {
        assert!(r
            .command
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_'));
        assert!(seen.insert(r.command), "{} twice", r.command);
        assert!(r.path.starts_with('/'));
    }
}
