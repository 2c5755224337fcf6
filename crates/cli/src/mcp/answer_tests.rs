use super::*;

#[test]
fn long_lists_and_strings_are_cut_and_said() {
    let v = bounded(json!({"a": vec![1; MAX_ITEMS + 5], "s": "x".repeat(MAX_STRING + 1)}));
    assert_eq!(v["a"].as_array().unwrap().len(), MAX_ITEMS);
    assert_eq!(v["s"].as_str().unwrap().chars().count(), MAX_STRING + 1);
    assert!(v["s"].as_str().unwrap().ends_with('…'));
    assert_eq!(v["truncated"]["lists"], 1);
    assert_eq!(bounded(json!({"a": [1]})), json!({"a": [1]}));
}

#[test]
fn unknown_arguments_are_named() {
    let args: Map<String, Value> = serde_json::from_str(r#"{"x": 9}"#).unwrap();
    assert_eq!(
        only(&args, &["trace"]).unwrap_err(),
        "unknown argument 'x': expected trace"
    );
    assert_eq!(
        count(&args, "x", (1, 5, 2)).unwrap_err(),
        "'x' must be a whole number from 1 to 5"
    );
}
