//! `workload-api-version-removed`: a workload written in an API version the API server no longer serves
//! (docs/reference/removed-api-versions.md): Deployment, DaemonSet, ReplicaSet and StatefulSet in
//! `extensions/v1beta1`, `apps/v1beta1` or `apps/v1beta2` (not served since Kubernetes 1.16), CronJob in
//! `batch/v1beta1` (not served since 1.25). `kubectl apply` answers `no matches for kind "Deployment" in
//! version "extensions/v1beta1"`: nothing of the manifest reaches the cluster, however right its
//! placement.

use serde_json::{Value, json};

use super::{Emitter, RuleId, TemplateCx};
use crate::finding::Fix;
use crate::path::FieldPath;

/// The served version for a removed `(apiVersion, kind)`, and the release that stopped serving it.
fn replacement(api_version: &str, kind: &str) -> Option<(&'static str, &'static str)> {
    match (api_version, kind) {
        (
            "extensions/v1beta1" | "apps/v1beta1" | "apps/v1beta2",
            "Deployment" | "DaemonSet" | "ReplicaSet" | "StatefulSet",
        ) => Some(("apps/v1", "1.16")),
        ("batch/v1beta1", "CronJob") => Some(("batch/v1", "1.25")),
        _ => None,
    }
}

/// Runs the rule on a workload.
pub(crate) fn check(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let object = cx.object;
    let Some((served, removed_in)) = replacement(&object.api_version, &object.kind) else {
        return;
    };
    let path = FieldPath::root().field("apiVersion");
    let mut patch = vec![json!({"op": "replace", "path": path.to_json_pointer(), "value": served})];
    let mut todo = format!("set apiVersion: {served}");
    let mut fixable = true;
    // apps/v1 requires spec.selector (the beta versions defaulted it to the template's labels); the fix
    // writes that default down, so the workload selects the same pods.
    let needs_selector = served == "apps/v1"
        && object
            .value
            .pointer("/spec/selector")
            .is_none_or(Value::is_null);
    if needs_selector {
        if cx.template.labels.is_empty() {
            fixable = false;
            todo.push_str(" and add spec.selector, which apps/v1 requires (the pod template has no labels to select: add some)");
        } else {
            todo.push_str(" and add spec.selector.matchLabels with the pod template's labels, which apps/v1 requires (the old versions defaulted the selector to them)");
            patch.push(json!({
                "op": "add",
                "path": "/spec/selector",
                "value": {"matchLabels": cx.template.labels},
            }));
        }
    }
    let fix = fixable.then(|| Fix {
        description: if needs_selector {
            format!("set apiVersion to {served} and spec.selector.matchLabels to the pod template's labels")
        } else {
            format!("set apiVersion to {served}")
        },
        patch: patch.into(),
    });
    out.emit(
        RuleId::WorkloadApiVersionRemoved,
        &path,
        format!(
            "{} {} is no longer served (removed in Kubernetes {removed_in}), so the API server refuses this manifest: {todo}.",
            object.kind, object.api_version
        ),
        fix,
    );
}

#[cfg(test)]
mod tests {
    use crate::rules::test_kit::{apply, findings, objects};
    use crate::settings::Settings;

    const RULE: &[&str] = &["workload-api-version-removed"];

    /// The object after the finding's fix.
    fn after_fix(value: &serde_json::Value, finding: &crate::Finding) -> serde_json::Value {
        let mut value = value.clone();
        apply(&mut value, finding.fix.as_ref().expect("a fix"));
        value
    }

    fn workload(api_version: &str, kind: &str, selector: &str, labels: &str) -> String {
        format!(
            "apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: w}}\nspec:\n{selector}  template:\n    metadata: {{labels: {labels}}}\n    spec:\n      containers: [{{name: c, image: nginx:1.27}}]\n"
        )
    }

    #[test]
    fn removed_versions_are_found_and_served_ones_are_not() {
        let no_selector = "";
        let rows = [
            ("extensions/v1beta1", "Deployment", true),
            ("apps/v1beta1", "Deployment", true),
            ("apps/v1beta2", "DaemonSet", true),
            ("extensions/v1beta1", "ReplicaSet", true),
            ("apps/v1beta1", "StatefulSet", true),
            ("apps/v1", "Deployment", false),
            ("apps/v1", "StatefulSet", false),
        ];
        for (api, kind, found) in rows {
            let text = workload(api, kind, no_selector, "{app: w}");
            let got = findings(&text, None, &Settings::default(), RULE);
            assert_eq!(got.len(), usize::from(found), "{api} {kind}: {got:?}");
            if found {
                assert_eq!(got[0].path, "apiVersion");
                assert!(
                    got[0].message.starts_with(&format!(
                        "{kind} {api} is no longer served (removed in Kubernetes 1.16)"
                    )),
                    "{}",
                    got[0].message
                );
            }
        }
    }

    #[test]
    fn the_fix_moves_to_apps_v1_and_keeps_selecting_the_same_pods() {
        // (apiVersion, the spec's own selector, template labels, the selector after the fix)
        let rows = [
            // The selector the old version defaulted from the template's labels is written.
            (
                "extensions/v1beta1",
                "",
                serde_json::json!({"matchLabels": {"app": "web", "tier": "front"}}),
            ),
            // An existing selector is kept as it is.
            (
                "apps/v1beta2",
                "  selector: {matchLabels: {app: web}}\n",
                serde_json::json!({"matchLabels": {"app": "web"}}),
            ),
        ];
        for (api, selector, want) in rows {
            let text = workload(api, "Deployment", selector, "{app: web, tier: front}");
            let got = findings(&text, None, &Settings::default(), RULE);
            let fixed = after_fix(&objects(&text)[0].value, &got[0]);
            assert_eq!(fixed["apiVersion"], "apps/v1", "{api}");
            assert_eq!(fixed["spec"]["selector"], want, "{api}");
        }
        // No labels to select: no automatic fix, and the message says what to add.
        let text = workload("apps/v1beta1", "Deployment", "", "{}");
        let got = findings(&text, None, &Settings::default(), RULE);
        assert!(got[0].fix.is_none());
        assert!(
            got[0].message.contains("has no labels to select"),
            "{}",
            got[0].message
        );
    }

    #[test]
    fn cronjob_batch_v1beta1_moves_to_batch_v1() {
        let text = "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n          containers: [{name: c, image: busybox:1.36}]\n";
        let got = findings(text, None, &Settings::default(), RULE);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].message.contains("removed in Kubernetes 1.25"),
            "{}",
            got[0].message
        );
        let fixed = after_fix(&objects(text)[0].value, &got[0]);
        assert_eq!(fixed["apiVersion"], "batch/v1");
        assert!(fixed["spec"].get("selector").is_none());
    }
}
