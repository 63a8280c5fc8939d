//! Settings as YAML or JSON (the CLI's `--settings` and the policy's `validate_settings`): never a
//! panic; an error names where it is.
#![no_main]

use libfuzzer_sys::fuzz_target;
use winplace_policy_wasm::admission::parse_settings;
use winplace_rules::Settings;

fuzz_target!(|data: &[u8]| {
    let _ = parse_settings(data);
    if let Ok(text) = std::str::from_utf8(data)
        && let Err(e) = Settings::from_text("fuzz.yaml", text)
    {
        assert!(!e.message.is_empty(), "an error without a message");
    }
});
