use super::*;

#[test]
fn a_key_named_twice_is_refused_by_name() {
    for (body, key) in [
        (r#"{"pid":1,"pid":null}"#, r#"duplicate key "pid""#),
        (r#"{"pid":1,"p\u0069d":2}"#, r#"duplicate key "pid""#),
        (r#"{"a":[{"b":1,"b":1}]}"#, r#"duplicate key "b""#),
        (r#"{"a":{"c":true,"c":false}}"#, r#"duplicate key "c""#),
    ] {
        let e = parse(body.as_bytes()).unwrap_err().to_string();
        assert!(e.starts_with(key), "{body}: {e}");
    }
}

#[test]
fn any_other_json_reads_as_serde_json_reads_it() {
    for body in [
        r#"{"pid":1}"#,
        r#"{"pid":null,"other":[1,-2,3.5,"x",true,null,{"pid":4}]}"#,
        r#"{}"#,
        r#"[]"#,
        "18446744073709551615",
        r#""é\n""#,
    ] {
        let want: Value = serde_json::from_str(body).unwrap();
        assert_eq!(parse(body.as_bytes()).unwrap(), want, "{body}");
    }
    assert!(parse(b"{\"pid\":").is_err());
    assert!(parse(b"{} x").is_err(), "trailing characters");
}
