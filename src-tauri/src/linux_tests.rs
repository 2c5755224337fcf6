use super::ppid_and_comm;

#[test]
fn stat_lines_give_parent_and_name() {
    // As the kernel writes them (fs/proc/array.c: do_task_stat).
    let net =
        "31657 (WebKitNetworkPr) S 31615 31615 31560 0 -1 4194560 2581 0 0 0 6 2 0 0 20 0 4 0";
    assert_eq!(ppid_and_comm(net), Some((31615, "WebKitNetworkPr")));
    let odd = "42 (a) b (c)) R 7 42 42 0 -1 0";
    assert_eq!(ppid_and_comm(odd), Some((7, "a) b (c)")));
    assert_eq!(ppid_and_comm(""), None);
    assert_eq!(ppid_and_comm("12 (x) S"), None);
    assert_eq!(ppid_and_comm("12 (x) S -3 1"), None);
}
