use super::*;

fn p(pid: u32) -> ProcessSample {
    ProcessSample {
        pid,
        ..ProcessSample::default()
    }
}

#[test]
fn a_process_between_users_is_nobodys_own() {
    assert_eq!(owner(1000, 1000, 1000), Some(1000));
    // sudo run by 1000: its arguments are not root's, nor 1000's alone.
    assert_eq!(owner(1000, 0, 0), None);
    assert_eq!(owner(0, 1000, 0), None);
    assert_eq!(owner(0, 0, 1000), None);
}

#[test]
fn only_the_owners_command_line_is_kept() {
    let with = |uid| ProcessSample {
        cmdline: Some("db --password=hunter2".into()),
        uid,
        ..p(1)
    };
    let mut own = with(Some(1000));
    own.keep_command_of(1000);
    assert_eq!(own.cmdline.as_deref(), Some("db --password=hunter2"));
    for uid in [Some(1001), Some(0), None] {
        let mut other = with(uid);
        other.keep_command_of(1000);
        assert_eq!(other.cmdline, None, "{uid:?}");
    }
}

#[test]
fn a_failed_scan_keeps_the_last_known_list() {
    let mut last = LastKnown::default();
    assert!(last.update::<()>(Err(())).is_empty());
    assert_eq!(last.update::<()>(Ok(vec![p(1), p(2)])).len(), 2);
    // The scan failed: the tree is still there, not gone.
    let kept = last.update::<()>(Err(()));
    assert_eq!(kept.iter().map(|q| q.pid).collect::<Vec<_>>(), [1, 2]);
    // A good scan replaces it, also with an empty list.
    assert!(last.update::<()>(Ok(vec![])).is_empty());
}

#[test]
fn withholding_drops_every_per_process_swap_figure() {
    let mut q = ProcessSample {
        footprint_bytes: 10,
        swap_bytes: Some(1),
        swapin_bytes: Some(2),
        decompressions: Some(3),
        compressed_bytes: Some(4),
        gpu_bytes: Some(5),
        ..ProcessSample::default()
    };
    assert_eq!(q.swapped_bytes(), Some(1));
    assert_eq!(q.owned_bytes(), 11);
    q.withhold_process_swap();
    assert_eq!(q.swapped_bytes(), None);
    assert_eq!((q.swapin_bytes, q.decompressions), (None, None));
    assert_eq!(q.owned_bytes(), 10);
    // GPU memory is not swap: kept.
    assert_eq!(q.gpu_bytes, Some(5));
}

#[test]
fn used_and_free_bytes_are_over_usable_memory() {
    let s = SystemSample {
        phys_bytes: 48 << 30,
        usable_bytes: 40 << 30,
        free_pct: 25.0,
        ..SystemSample::default()
    };
    assert_eq!(s.free_bytes(), 10 << 30);
    assert_eq!(s.used_bytes(), 30 << 30);
    let linux = SystemSample {
        phys_bytes: 16 << 30,
        free_pct: 150.0,
        ..SystemSample::default()
    };
    assert_eq!((linux.free_bytes(), linux.used_bytes()), (16 << 30, 0));
    let nan = SystemSample {
        phys_bytes: 16 << 30,
        free_pct: f64::NAN,
        ..SystemSample::default()
    };
    assert_eq!(nan.used_bytes(), 16 << 30);
}

/// macOS 26's tag storage is a figure of its own: written only where the
/// kernel gave it, read back as written, and never part of used memory
/// (its tag-holding pages are wired already).
#[test]
fn tag_storage_is_its_own_figure_written_only_when_present() {
    let plain = SystemSample {
        phys_bytes: 16 << 30,
        memory_used_bytes: Some(6 << 30),
        ..SystemSample::default()
    };
    let json = serde_json::to_value(plain).unwrap();
    assert!(json.get("tag_storage_bytes").is_none(), "{json}");
    let mte = SystemSample {
        tag_storage_bytes: Some(512 << 20),
        ..plain
    };
    let json = serde_json::to_string(&mte).unwrap();
    assert!(json.contains("\"tag_storage_bytes\":536870912"), "{json}");
    let back: SystemSample = serde_json::from_str(&json).unwrap();
    assert_eq!(back, mte);
    assert_eq!(mte.used_bytes(), plain.used_bytes());
}
