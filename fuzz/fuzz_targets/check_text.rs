//! Text → findings, and the repaired text of `--fix`: never a panic, and a repaired text that parses
//! again as the same number of documents.
#![no_main]

use libfuzzer_sys::fuzz_target;
use winplace_rules::input::{Limits, parse};
use winplace_rules::{Checker, fix};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let checker = Checker::builder().build();
    let mut findings = 0usize;
    let parse_errors = checker.check_text("fuzz.yaml", text, |_| findings += 1);
    if !parse_errors.is_empty() {
        return;
    }
    let repair = fix::repair_text(&checker, "fuzz.yaml", text);
    if repair.applied.is_empty() {
        assert_eq!(repair.text, text, "nothing applied, yet the text changed");
        return;
    }
    let before = parse("fuzz.yaml", text, &Limits::default());
    let after = parse("fuzz.yaml", &repair.text, &Limits::default());
    assert!(
        after.errors.is_empty(),
        "the repaired text does not parse: {:?}\n--- input\n{text}\n--- repaired\n{}",
        after.errors,
        repair.text
    );
    assert_eq!(
        after.documents.len(),
        before.documents.len(),
        "the repair changed the number of documents\n--- input\n{text}\n--- repaired\n{}",
        repair.text
    );
});
