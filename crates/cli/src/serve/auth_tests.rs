use super::*;

#[test]
fn tokens_compare_whole() {
    assert!(same_token(b"secret-token", b"secret-token"));
    assert!(!same_token(b"secret-token", b"secret-toke"));
    assert!(!same_token(b"secret-token", b"secret-token2"));
    assert!(!same_token(b"secret-token", b"Secret-token"));
    assert!(!same_token(b"secret-token", b""));
    // A byte that would XOR to zero against the padding does not pass.
    assert!(!same_token(b"ab", b"ab\0"));
}

#[test]
fn header_query_and_cookie_are_read() {
    let mut h = HeaderMap::new();
    h.insert(
        header::AUTHORIZATION,
        HeaderValue::from_static("bearer  abc "),
    );
    assert_eq!(bearer(&h), Some(&b"abc"[..]));
    h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
    assert_eq!(bearer(&h), None);
    assert_eq!(query_token(Some("a=1&token=xyz")), Some("xyz"));
    assert_eq!(query_token(Some("xtoken=1")), None);
    h.insert(
        header::COOKIE,
        HeaderValue::from_static("a=1; swapsight_token=q1; b=2"),
    );
    assert_eq!(cookie_token(&h), Some(&b"q1"[..]));
}

#[test]
fn loopback_hosts() {
    for h in [
        "127.0.0.1:7878",
        "localhost",
        "LOCALHOST:1",
        "[::1]:7878",
        "127.1.2.3",
        "app.localhost:80",
    ] {
        assert!(is_loopback_name(host_name(h)), "{h}");
    }
    for h in [
        "evil.example",
        "evil.example:7878",
        "10.0.0.1:7878",
        "[::]:1",
        "localhost.evil.example",
        "0.0.0.0",
    ] {
        assert!(!is_loopback_name(host_name(h)), "{h}");
    }
}

#[test]
fn a_token_redirect_never_leads_off_the_server() {
    assert_eq!(local_target("/", Some("token=T")), "/");
    assert_eq!(
        local_target("/js/a.js", Some("a=1&token=T&b=2")),
        "/js/a.js?a=1&b=2"
    );
    for (path, to) in [
        ("//evil.example/", "/evil.example/"),
        ("///evil.example", "/evil.example"),
        ("/\\evil.example/", "/evil.example/"),
        ("/\\/evil.example", "/evil.example"),
    ] {
        assert_eq!(local_target(path, Some("token=T")), to, "{path}");
    }
}
