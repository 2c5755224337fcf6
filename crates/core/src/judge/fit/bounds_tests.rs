//! MLX's default limit as its allocator sets it, and the wired-limit
//! setting as each macOS names it.

use super::super::{answer, BoundId, Figures, Model};
use super::super::{settings, wired_sysctl};

const GIB: u64 = 1 << 30;

/// fit_tests' Mac, on the macOS `version`.
fn mac(phys: u64, rec: u64, version: Option<&str>) -> Figures {
    Figures {
        macos_version: version.map(str::to_string),
        ..super::super::tests::mac(phys, rec, 4 * GIB)
    }
}

fn size(bytes: u64) -> Model {
    Model::Size {
        bytes,
        given: String::new(),
    }
}

#[test]
fn mlxs_limit_is_the_lesser_of_one_and_a_half_working_sets_and_95_percent_of_memory() {
    // A 64 GB Mac whose working set is 48 GiB: 1.5 × is 72 GiB, past
    // memory; MLX's allocator caps it at 0.95 × 64 GiB.
    let a = answer(size(GIB), None, &mac(64 * GIB, 48 * GIB, Some("15.1")));
    let b = a
        .bounds
        .iter()
        .find(|b| b.id == BoundId::MlxMemoryLimit)
        .unwrap();
    assert_eq!(b.bytes, (0.95 * (64 * GIB) as f64) as u64);
    assert!(
        b.source
            .contains("0.95 × memory, below 1.5 × the recommended working set"),
        "{}",
        b.source
    );
    // So is a 16 GB Mac's (two thirds of memory: 1.5 × is memory itself);
    // a working set of half of memory (a low wired limit) gives 1.5 × it.
    for (phys, rec, want) in [
        (16 * GIB, 11_453_251_584, 16_320_875_724),
        (64 * GIB, 32 * GIB, 48 * GIB),
    ] {
        let a = answer(size(GIB), None, &mac(phys, rec, Some("15.1")));
        let b = a.bounds.iter().find(|b| b.id == BoundId::MlxMemoryLimit);
        assert_eq!(b.unwrap().bytes, want);
    }
}

#[test]
fn the_wired_limit_setting_is_the_form_the_running_macos_has() {
    let mb = 43_008;
    assert_eq!(
        wired_sysctl(Some("14.0"), mb).unwrap().0,
        "sudo sysctl iogpu.wired_limit_mb=43008"
    );
    assert_eq!(
        wired_sysctl(Some("15.3.1"), mb).unwrap().1,
        "sudo sysctl iogpu.wired_limit_mb=0"
    );
    assert_eq!(
        wired_sysctl(Some("13.6.1"), mb).unwrap().0,
        format!("sudo sysctl debug.iogpu.wired_limit={}", 43_008u64 << 20)
    );
    assert!(wired_sysctl(Some("12.7"), mb)
        .unwrap_err()
        .contains("macOS 12.7 has no GPU wired-limit setting"));
    assert!(wired_sysctl(None, mb)
        .unwrap_err()
        .contains("the macOS version was not read"));
    // In the answer: Ventura's sysctl, and none before it.
    let need = 38 * GIB;
    for (version, line) in [
        (Some("13.5"), Some("sudo sysctl debug.iogpu.wired_limit=")),
        (Some("12.6"), None),
    ] {
        let f = mac(51_539_607_552, 40_200_960_000, version);
        let a = answer(size(need), None, &f);
        let (s, notes) = settings(need, &f, &a.bounds);
        match line {
            Some(l) => assert!(s[0].line.starts_with(l), "{s:#?}"),
            None => {
                assert!(s.iter().all(|s| !s.line.contains("wired")), "{s:#?}");
                assert!(
                    notes
                        .iter()
                        .any(|n| n.contains("no GPU wired-limit setting")),
                    "{notes:?}"
                );
            }
        }
    }
}
