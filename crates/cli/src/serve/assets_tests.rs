use super::*;

/// Every file of `ui/` on disk is embedded, byte for byte: a stale
/// build (a file added, nothing that cargo tracks changed) fails here.
#[test]
fn embedded_ui_matches_the_folder() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui");
    let mut on_disk = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                on_disk.push(p);
            }
        }
    }
    for p in &on_disk {
        let rel = p.strip_prefix(&root).unwrap().to_str().unwrap().to_string();
        let embedded = UI.get_file(&rel).unwrap_or_else(|| {
            panic!("ui/{rel} is not embedded: touch crates/cli/src/serve/assets.rs and rebuild")
        });
        assert_eq!(
            embedded.contents(),
            std::fs::read(p).unwrap(),
            "ui/{rel} changed since the build"
        );
    }
}

#[test]
fn lookups_stay_in_the_embedded_tree() {
    assert!(lookup("/../Cargo.toml").is_none());
    assert!(lookup("/./index.html").is_none());
    assert!(lookup("/no/such/file.js").is_none());
    assert_eq!(content_type("js/app.js"), "text/javascript; charset=utf-8");
    assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
    assert_eq!(content_type("x"), "application/octet-stream");
}
