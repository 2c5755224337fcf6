use super::*;

#[test]
fn a_path_inside_is_taken_and_one_outside_is_refused_naming_the_roots() {
    let dir = std::env::temp_dir().join(format!("swapsight-roots-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("in")).unwrap();
    std::fs::write(dir.join("in/t.jsonl"), "").unwrap();
    std::fs::write(dir.join("out.jsonl"), "").unwrap();
    let roots = Roots::new(vec![dir.join("in")]).unwrap();
    let inside = dir.join("in/t.jsonl");
    assert_eq!(
        roots.check(inside.to_str().unwrap()).unwrap(),
        inside.canonicalize().unwrap()
    );
    let sneaky = dir.join("in/../out.jsonl");
    let e = roots.check(sneaky.to_str().unwrap()).unwrap_err();
    assert!(e.contains("outside the allowed roots"), "{e}");
    assert!(e.contains(&roots.shown()), "{e}");
    // A missing file outside is refused the same way: its absence is not told.
    let e = roots.check("/no/such/file.jsonl").unwrap_err();
    assert!(e.contains("outside the allowed roots"), "{e}");
    let e = roots
        .check(dir.join("in/missing.jsonl").to_str().unwrap())
        .unwrap_err();
    assert!(e.starts_with("cannot open"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
