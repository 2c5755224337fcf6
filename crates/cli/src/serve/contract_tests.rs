use super::*;

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ui/js/contract.js");
const CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/ui/format-cases.json"
);

/// `path` holds `want` (written first with SWAPSIGHT_WRITE_CONTRACT=1).
fn holds(path: &str, want: &str, name: &str) {
    if std::env::var("SWAPSIGHT_WRITE_CONTRACT").is_ok_and(|v| v == "1") {
        std::fs::write(path, want).unwrap();
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "{name} is out of date: run \
         SWAPSIGHT_WRITE_CONTRACT=1 cargo test -p swapsight-cli contract\n--- want\n{want}"
    );
}

#[test]
fn the_uis_contract_file_is_what_the_rust_side_says() {
    holds(FILE, &render(), "ui/js/contract.js");
}

#[test]
fn the_uis_format_cases_are_what_the_rust_functions_write() {
    holds(CASES, &format_cases(), "tests/ui/format-cases.json");
}

#[test]
fn the_format_cases_are_json_with_the_rust_answers_and_the_ties() {
    let v: serde_json::Value = serde_json::from_str(&format_cases()).expect("JSON");
    let groups = v["groups"].as_array().unwrap();
    let js: Vec<&str> = groups.iter().map(|g| g["js"].as_str().unwrap()).collect();
    assert_eq!(js, ["bytes", "delta", "limit", "duration", "eta", "pct"]);
    let case = |name: &str, input: serde_json::Value| -> String {
        let g = groups.iter().find(|g| g["js"] == name).unwrap();
        let c = g["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c[0] == input);
        c.unwrap_or_else(|| panic!("{name}({input})"))[1]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // Exact ties go to the even digit in Rust: the cases the UI once missed.
    assert_eq!(case("bytes", (5i64 << 28).into()), "1.2 GiB");
    assert_eq!(case("bytes", (5i64 << 19).into()), "2 MiB");
    assert_eq!(case("duration", 12_250.into()), "12.2s");
    assert_eq!(case("eta", 2.5.into()), "~2 s");
    assert_eq!(case("eta", "Infinity".into()), "a long while");
    assert_eq!(case("pct", 42.5.into()), "42 %");
}

#[test]
fn the_low_free_share_is_the_cores() {
    assert!(render().contains(&format!("export const LOW_FREE_PCT = {LOW_FREE_PCT};\n")));
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
