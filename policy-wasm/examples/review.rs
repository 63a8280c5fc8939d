//! Reviews an AdmissionReview file the way `policy.wasm` does, natively: parse the `validate` payload,
//! ask which image manifests would be looked up, review. Prints the decision; with a count, also the
//! time per review over that many rounds (what `policy-host`'s admission bench calls the native part).
//!
//! ```text
//! cargo run --release -p winplace-policy-wasm --example review -- policy-wasm/test_data/pod-windows-pinned.json
//! cargo run --release -p winplace-policy-wasm --example review -- policy-wasm/test_data/pod-windows-pinned.json 5000
//! ```
//!
//! Under `valgrind --tool=callgrind` the count gives instructions per review, a figure that a busy
//! machine does not change.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use winplace_policy_wasm::admission::{self, Verdict};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(file), rounds) = (args.next(), args.next()) else {
        eprintln!("usage: review ADMISSION_REVIEW.json [ROUNDS]");
        return ExitCode::from(2);
    };
    let rounds: usize = match rounds.map(|r| r.parse()) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("ROUNDS: {e}");
            return ExitCode::from(2);
        }
    };
    let review: serde_json::Value = match std::fs::read_to_string(&file)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The payload policy-server sends: the AdmissionRequest and the policy's settings (defaults here).
    let payload = serde_json::json!({"request": review["request"], "settings": {}}).to_string();
    let once = || {
        let (request, settings) = admission::parse_payload(payload.as_bytes())?;
        let lookups = admission::manifest_lookups(&request, None, &settings);
        let decision = admission::review(request, &settings, None, &BTreeMap::new());
        Ok::<_, admission::InputError>((lookups, decision))
    };
    let (lookups, decision) = match once() {
        Ok(answer) => answer,
        Err(e) => {
            eprintln!("{file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match &decision.verdict {
        Verdict::Accept => println!("accepted"),
        Verdict::Mutate(_) => println!("accepted with a patch"),
        Verdict::Reject(message) => println!("rejected: {message}"),
    }
    for warning in &decision.warnings {
        println!("warning: {warning}");
    }
    if !lookups.is_empty() {
        println!(
            "manifests it would ask the host for: {}",
            lookups.join(", ")
        );
    }
    if rounds > 0 {
        let start = Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(once().ok());
        }
        let each = start.elapsed().as_secs_f64() * 1e6 / rounds as f64;
        println!("{rounds} reviews: {each:.1} µs each");
    }
    ExitCode::SUCCESS
}
