use super::*;

#[test]
fn numbers_are_found_and_replaced() {
    let mut b = br#"{"a":12,"b":[3,-4.5e2],"c":"x9"}"#.to_vec();
    let ns = numbers(&b);
    let found: Vec<&[u8]> = ns.iter().map(|r| &b[r.clone()]).collect();
    assert_eq!(found, vec![&b"12"[..], b"3", b"-4.5e2"]);
    b.splice(ns[2].clone(), "18446744073709551615".bytes());
    assert_eq!(&b[..], br#"{"a":12,"b":[3,18446744073709551615],"c":"x9"}"#);
}

#[test]
fn string_values_are_found_and_replaced() {
    let mut b = br#"{"a":"x","b":["p","q\"r"],"c":{"d":""}}"#.to_vec();
    let ss = strings(&b);
    let found: Vec<&[u8]> = ss.iter().map(|r| &b[r.clone()]).collect();
    assert_eq!(
        found,
        vec![&br#""x""#[..], br#""p""#, br#""q\"r""#, br#""""#]
    );
    b.splice(ss[1].clone(), TEXTS[1].bytes());
    assert_eq!(
        &b[..],
        br#"{"a":"x","b":["\u001b[2J","q\"r"],"c":{"d":""}}"#
    );
}

#[test]
fn seeds_read_cleanly() {
    for (name, bytes) in seeds() {
        let t = swapsight::trace::read_from(&bytes[..], std::path::Path::new(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(t.samples.len() >= 5, "{name}");
        assert_eq!(t.bad_lines, 0, "{name}: {:?}", t.problems);
    }
}
