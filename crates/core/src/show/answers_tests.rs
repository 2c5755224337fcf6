use super::*;
use serde_json::json;

fn j(v: impl Serialize) -> serde_json::Value {
    serde_json::to_value(v).unwrap()
}

#[test]
fn small_answers_as_json() {
    assert_eq!(j(Pinned { pinned: Some(7) }), json!({ "pinned": 7 }));
    assert_eq!(j(Pinned { pinned: None }), json!({ "pinned": null }));
    assert_eq!(j(Done::OK), json!({ "ok": true }));
    let p = Path::new("/data/swapsight-recordings/run.jsonl");
    assert_eq!(j(RecordingInfo::started(p)), json!({ "name": "run.jsonl" }));
    assert_eq!(
        j(RecordingInfo::stopped(p, 12)),
        json!({ "name": "run.jsonl", "samples": 12 })
    );
}
