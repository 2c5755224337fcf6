use super::*;

#[test]
fn all_clean_finds_controls_escaped_or_raw_and_bidi() {
    for bad in [
        r#"{"a":"x\u001by"}"#,
        r#"{"a":"x\u0007"}"#,
        r#"{"a":["ok","x\ny"]}"#,
        r#"{"a":"\t"}"#,
        "{\"a\":\"x\u{202e}\"}",
        "{\"a\":\"x\u{7f}\u{9b}\"}",
    ] {
        assert!(all_clean(bad).is_err(), "{bad}");
    }
    for good in [
        r#"{"a":"x\\ny","b":"\\u001b","c":"\"q\"","d":"\u0041"}"#,
        r#"{"a":"?]52;c;ZXZpbA==?","n":1}"#,
        "{\"a\":\"日本語 👩\u{200d}💻\"}",
    ] {
        assert_eq!(all_clean(good), Ok(()), "{good}");
    }
}

#[test]
fn the_text_target_holds_for_ordinary_and_planted_text() {
    for w in crate::ORDINARY {
        assert_eq!(text_target(w, true), Ok(()), "{w}");
    }
    assert_eq!(
        text_target("\u{1b}]52;c;x\u{7}\u{202e}\u{2069}", false),
        Ok(())
    );
}

#[test]
fn every_model_seed_is_read_and_planned_not_rejected() {
    use swapsight::fit::model;
    for (kind, bytes) in crate::models::seeds() {
        assert_eq!(model_target(kind, &bytes), Ok(()), "{kind:?}");
        // A seed is a good file: its reader takes it (the mutants start
        // from something read, not from a rejection).
        let read = match kind {
            crate::models::Kind::Config => model::config::from_config(&bytes, "c").is_ok(),
            crate::models::Kind::Gguf => model::gguf::read_metadata(&bytes).is_ok(),
            crate::models::Kind::Safetensors => {
                model::safetensors::header_len(&bytes[..8], bytes.len() as u64).is_ok()
            }
        };
        assert!(read, "{kind:?} seed refused");
    }
}
