use super::*;

#[test]
fn a_push_url_is_http_or_https_with_a_host_and_no_credentials() {
    assert_eq!(
        url(" http://127.0.0.1:9090/api/v1/write "),
        Ok("http://127.0.0.1:9090/api/v1/write".into())
    );
    assert!(url("https://mimir.example/api/v1/push").is_ok());
    for bad in ["", "mimir:9009", "ftp://h/x", "http://", "not a url"] {
        assert!(url(bad).is_err(), "{bad:?}");
    }
    let err = url("https://user:pw@mimir.example/api/v1/push").unwrap_err();
    assert!(err.contains("--push-auth-file"), "{err}");
}

#[test]
fn loopback_hosts_are_told_apart() {
    assert!(host_is_loopback("http://127.0.0.1:9090/api/v1/write"));
    assert!(host_is_loopback("http://[::1]:9090/x"));
    assert!(host_is_loopback("http://LOCALHOST/x"));
    assert!(!host_is_loopback("http://10.0.0.5:9090/x"));
    assert!(!host_is_loopback("http://mimir.example/x"));
}

#[test]
fn a_label_is_a_prometheus_name_and_a_value() {
    assert_eq!(label("site=lab 2"), Ok(("site".into(), "lab 2".into())));
    assert_eq!(label("_x=a=b"), Ok(("_x".into(), "a=b".into())));
    for bad in [
        "site",
        "=x",
        "1site=x",
        "si-te=x",
        "__name__=x",
        "site=",
        "a=\u{7}",
    ] {
        assert!(label(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn instance_and_job_are_set_unless_a_label_sets_them() {
    let got = labels_with_defaults(&[], "mini-3");
    assert_eq!(
        got,
        [
            ("instance".to_string(), "mini-3".to_string()),
            ("job".to_string(), "swapsight".to_string())
        ]
    );
    let given = [
        ("job".to_string(), "laptops".to_string()),
        ("site".to_string(), "home".to_string()),
    ];
    let got = labels_with_defaults(&given, "mini-3");
    assert_eq!(got[1], ("job".to_string(), "laptops".to_string()));
    assert_eq!(got[2], ("site".to_string(), "home".to_string()));
    assert_eq!(got.len(), 3);
}

#[test]
fn intervals_and_queue_sizes_have_bounds() {
    let s = Duration::from_secs;
    assert_eq!(interval(s(15)), Ok(s(15)));
    assert!(interval(Duration::from_millis(500)).is_err());
    assert!(interval(s(7200)).is_err());
    assert_eq!(queue_samples(1000), Ok(1000));
    assert!(queue_samples(999).is_err());
    assert!(queue_samples(10_000_001).is_err());
}

#[test]
fn the_host_of_a_url_is_its_authority() {
    assert_eq!(
        host_of("https://mimir.example:8443/api/v1/push").as_deref(),
        Some("mimir.example:8443")
    );
    assert_eq!(host_of("not a url"), None);
}

#[test]
fn the_host_has_a_name() {
    assert!(!hostname().is_empty());
}
