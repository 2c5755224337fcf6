use super::size;

#[test]
fn sizes() {
    assert_eq!(size("1200x675"), Ok((1200, 675)));
    assert_eq!(size("800X600"), Ok((800, 600)));
    assert!(size("12x").unwrap_err().contains("WIDTHxHEIGHT"));
    assert!(size("1200").is_err());
    assert!(size("x600").is_err());
    assert!(size("10x10").unwrap_err().contains("320 to 8192"));
}
