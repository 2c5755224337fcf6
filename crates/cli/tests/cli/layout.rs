//! The repository as README.md describes it.

/// README's layout names every script and every doc: a newcomer looks
/// there first, and a script added without a word there is one nobody
/// finds (issue 32: it listed 8 of 14 scripts and no doctor.md).
#[test]
fn the_readme_layout_names_every_script_and_doc() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let layout = readme
        .split_once("## Layout")
        .and_then(|(_, rest)| rest.split_once("\n## "))
        .map(|(layout, _)| layout)
        .expect("README has a Layout section");
    let words: std::collections::HashSet<&str> = layout
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
        .collect();
    let names = |dir: &str, ext: Option<&str>| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter_map(|n| match ext {
                Some(ext) => n.strip_suffix(ext).map(str::to_owned),
                None => Some(n),
            })
            .collect();
        v.sort();
        v
    };
    let missing: Vec<String> = names("scripts", None)
        .into_iter()
        .chain(names("docs", Some(".md")))
        .filter(|n| !words.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "README's Layout does not name: {missing:?}"
    );
}
