use super::*;

/// A made-up procfs root holding `pressure/memory` with `text`.
fn procfs(name: &str, text: Option<&[u8]>) -> std::path::PathBuf {
    let root = std::env::temp_dir().join(format!("swapsight-psi-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("pressure")).unwrap();
    if let Some(text) = text {
        std::fs::write(root.join("pressure/memory"), text).unwrap();
    }
    root
}

const PSI: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/proc-pressure-memory.txt"
));

#[test]
fn reads_psi_each_tick_from_a_kept_file() {
    let root = procfs("kept", Some(PSI));
    let mut buf = vec![0; 64];
    let mut src = PsiSource::open(&root, &mut buf);
    assert_eq!(src.absent(), None);
    assert_eq!(
        src.read(&mut buf).unwrap().some.unwrap().total_us,
        72_636_100
    );
    // the kernel regenerates the file; a rewrite in place stands for that
    std::fs::write(
        root.join("pressure/memory"),
        b"some avg10=12.50 avg60=3.00 avg300=1.00 total=72700000\nfull avg10=2.00 avg60=1.00 avg300=0.50 total=60400000\n",
    )
    .unwrap();
    let p = src.read(&mut buf).unwrap();
    assert_eq!(p.some.unwrap().avg10, 12.5);
    assert_eq!(p.full.unwrap().total_us, 60_400_000);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn absent_psi_is_said_once_and_never_read_as_zero() {
    let root = procfs("absent", None);
    let mut buf = vec![0; 64];
    let mut src = PsiSource::open(&root, &mut buf);
    let why = src.absent().unwrap();
    assert!(why.contains("pressure/memory"), "{why}");
    assert!(why.contains("without PSI"), "{why}");
    assert_eq!(src.read(&mut buf), None);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_file_that_is_not_psi_is_absent() {
    let root = procfs("garbage", Some(b"MemTotal: 1 kB\n"));
    let mut buf = vec![0; 64];
    let src = PsiSource::open(&root, &mut buf);
    assert!(src.absent().unwrap().contains("not PSI"));
    std::fs::remove_dir_all(root).unwrap();
}
