//! The snapshot reader of `winplace serve --snapshot` (kubectl's JSON or YAML lists): never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = winplace::source::objects::ClusterObjects::parse("fuzz.json", text);
});
