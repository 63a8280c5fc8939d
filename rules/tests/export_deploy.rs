//! `deploy/vap/` holds what `winplace export` writes with the default settings, so that it cannot
//! drift from the generator: `validating.yaml` (`--format vap`) and `mutating.yaml` (`--format map`).
//! With `UPDATE_SNAPSHOTS=1` the test writes them instead of failing.

use winplace_rules::Settings;
use winplace_rules::export::{self, Naming};

fn check(file: &str, want: &str) {
    let path =
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/vap")).join(file);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, want).expect("write deploy/vap");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} differs from `winplace export`: run `UPDATE_SNAPSHOTS=1 cargo test -p winplace-rules --test export_deploy`",
        path.display()
    );
}

#[test]
fn deploy_vap_is_what_export_writes() {
    let settings = Settings::default();
    check(
        "validating.yaml",
        &export::to_yaml_stream(&export::validating(&settings, Naming::Cluster)),
    );
    check(
        "mutating.yaml",
        &export::to_yaml_stream(&export::mutating(&settings, Naming::Cluster)),
    );
}
