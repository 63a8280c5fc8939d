//! The server crate's integration tests, one file per subject, in one test binary.
//!
//! Each file of this folder was once a test binary of its own, and each linked the whole server and
//! instantiated its generic code again: fourteen binaries, 400 MB, much of the workspace's test build
//! (docs/build-times.md). As modules of one binary they are compiled and linked once. Run one subject with
//! its module path: `cargo test -p winplace --test integration live::` or one test: `… cli::corpus`.
//!
//! `Cargo.toml` sets `autotests = false`, so cargo does not make a binary of each file any more: a new
//! file must be named here, which `every_test_file_is_a_module_here` checks.

/// Counts the bytes each thread asks of the allocator, for `memory`'s guards (forwarded to the system
/// allocator unchanged; the other tests only pay a thread-local add per allocation).
#[global_allocator]
static COUNTING: winplace_synthetic::counting::Counting = winplace_synthetic::counting::Counting;

/// What several subjects share: fake servers, the router under test, report fixtures, the built binary.
mod common {
    /// The corpus and its comparison, shared with the rules crate's own corpus test.
    #[path = "../../../rules/tests/common/corpus.rs"]
    pub mod corpus;
    pub mod fake_api;
    pub mod fake_http;
    pub mod http;
    pub mod oci_registry;
    pub mod place;
    pub mod report;
    pub mod router;
    pub mod run;
}

mod answers;
mod api;
mod chart;
mod ci_files;
mod ci_formats;
mod cli;
mod connections;
mod explain;
mod infra;
mod live;
mod logs;
mod memory;
mod metrics;
mod parity;
mod place;
mod place_failures;
mod place_faults;
mod place_leader;
mod policy_report;
mod registry;
mod release;
mod reports;
mod snapshot;
mod what_if;

/// A test file this binary does not name would never run.
#[test]
fn every_test_file_is_a_module_here() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = include_str!("integration.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the tests folder") {
        let path = entry.expect("a tests folder entry").path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs")
            && stem != "integration"
            && !this.contains(&format!("\nmod {stem};\n"))
        {
            missing.push(stem.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "tests/{{{}}}.rs: not a module of tests/integration.rs, so never run",
        missing.join(",")
    );
}
