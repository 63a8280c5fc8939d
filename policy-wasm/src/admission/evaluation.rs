//! One object evaluated as the policy sees it: a JSON object (no file, no lines) through the rules crate,
//! with the cluster and what image manifests said.

use std::collections::BTreeMap;

use serde_json::Value;
use winplace_rules::finding::Finding;
use winplace_rules::input::{Document, LineMap};
use winplace_rules::model::{self, ClusterContext};
use winplace_rules::settings::Settings;
use winplace_rules::windows::ImageClass;

/// Evaluates one object (JSON) with the context and the manifest classifications.
pub fn evaluate(
    object: &Value,
    context: Option<&ClusterContext>,
    settings: &Settings,
    manifests: &BTreeMap<String, ImageClass>,
) -> Vec<Finding> {
    evaluate_owned(object.clone(), context, settings, manifests)
}

/// [`evaluate`] of an object the caller gives up (no copy of it is made).
pub(super) fn evaluate_owned(
    object: Value,
    context: Option<&ClusterContext>,
    settings: &Settings,
    manifests: &BTreeMap<String, ImageClass>,
) -> Vec<Finding> {
    let document = Document {
        file: String::new(),
        index: 0,
        line: 1,
        value: object,
        lines: LineMap::default(),
    };
    let objects = model::into_objects(document);
    winplace_rules::rules::evaluate_with_manifests(&objects, context, settings, manifests)
}
