//! What the admission tests share: the AdmissionReview fixtures of `test_data/`, the cluster of
//! `test_data/context/`, and a verdict in one letter.

use std::collections::BTreeMap;

use serde_json::Value;
use winplace_rules::model::ClusterContext;
use winplace_rules::settings::Settings;
use winplace_rules::windows::ImageClass;

use super::{AdmissionRequest, Decision, Verdict, context_from_lists};

/// A JSON file of `test_data/`.
pub fn fixture(name: &str) -> Value {
    let path = format!("{}/test_data/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The request of the AdmissionReview fixture `name` (without `.json`).
pub fn request(name: &str) -> AdmissionRequest {
    serde_json::from_value(fixture(&format!("{name}.json"))["request"].clone())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The cluster of `test_data/context/`: Linux and Windows Server 2022 nodes, one RuntimeClass.
pub fn cluster() -> ClusterContext {
    context_from_lists(
        &fixture("context/nodes.json"),
        &fixture("context/runtimeclasses.json"),
    )
    .unwrap()
}

/// Settings from their JSON, read as the policy reads them.
pub fn settings(json: Value) -> Settings {
    Settings::from_json_value("settings", &json).unwrap()
}

/// No image manifest read.
pub fn no_manifests() -> BTreeMap<String, ImageClass> {
    BTreeMap::new()
}

/// `A`ccept, `M`utate or `R`eject, and the message.
pub fn verdict(d: &Decision) -> (char, String) {
    match &d.verdict {
        Verdict::Accept => ('A', String::new()),
        Verdict::Mutate(_) => ('M', String::new()),
        Verdict::Reject(m) => ('R', m.clone()),
    }
}
