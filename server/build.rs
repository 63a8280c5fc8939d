//! The binary embeds `static/` (dashboard and policy.wasm): rebuild when anything in it changes,
//! including files added after the first build.
fn main() {
    println!("cargo:rerun-if-changed=../static");
}
