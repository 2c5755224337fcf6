use super::*;

#[test]
fn every_tool_has_an_object_input_and_output_schema() {
    let list = Tools::list();
    assert_eq!(list.len(), 6);
    for t in &list {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert_eq!(t["outputSchema"]["type"], "object", "{t}");
    }
}
