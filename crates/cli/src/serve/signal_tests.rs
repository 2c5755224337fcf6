use super::*;

#[test]
fn the_stop_line_names_the_finished_recording() {
    assert_eq!(
        stopped_line(Ok(("/r/a.jsonl".into(), 12))),
        "swapsight: stopped; finished the recording /r/a.jsonl (12 samples)"
    );
    assert_eq!(
        stopped_line(Err(LiveError::NotRecording)),
        "swapsight: stopped"
    );
    assert!(
        stopped_line(Err(LiveError::AlreadyRecording("/r/b.jsonl".into())))
            .contains("could not be finished")
    );
}
