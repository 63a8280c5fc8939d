//! The `validate` payload (AdmissionRequest + settings) through admission, validating and mutating:
//! never a panic, and a mutated object is an object that can be evaluated again.
#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use winplace_policy_wasm::admission::{Verdict, parse_payload, review};
use winplace_rules::Checker;

fuzz_target!(|data: &[u8]| {
    let Ok((request, mut settings)) = parse_payload(data) else {
        return;
    };
    let manifests = BTreeMap::new();
    for mutate in [false, true] {
        settings.mutate = mutate;
        let decision = review(request.clone(), &settings, None, &manifests);
        if let Verdict::Mutate(object) = decision.verdict {
            assert!(mutate, "mutated with mutate: false");
            assert!(object.is_object(), "mutated into a non-object: {object}");
            let _ = Checker::builder()
                .settings(&settings)
                .build()
                .check_value(object);
        }
    }
});
