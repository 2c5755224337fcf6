//! `serve` embeds ../../ui at compile time: rebuild when anything in it changes,
//! including files added since the last build.
fn main() {
    println!("cargo:rerun-if-changed=../../ui");
}
