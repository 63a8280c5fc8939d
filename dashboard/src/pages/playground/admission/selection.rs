//! What the API server would send the policy on CREATE of the pasted objects: the objects its rules
//! select (API group, version and resource, as the API server matches a webhook's rules:
//! docs/reference/kubewarden-hosting.md §3), each with its AdmissionRequest, and those it never sends.

use serde_json::{Value, json};
use winplace_policy_wasm::admission::EVALUATED_KINDS;
use winplace_policy_wasm::request::{create_request, resource_of};
use winplace_rules::input::{Limits, parse};
use winplace_rules::model;

use super::super::eval::INPUT_FILE;

/// One object the API server would send the policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    /// `Kind/namespace/name` (cluster-scoped: `Kind/name`), as findings name objects.
    pub label: String,
    /// The object as pasted.
    pub object: Value,
    /// The AdmissionRequest.
    pub request: Value,
}

/// One object of the pasted text, parsed once and shared by what reads it (the images asked of the
/// server, the requests sent to the module).
#[derive(Debug, Clone, PartialEq)]
pub struct Pasted {
    /// `Kind/namespace/name` (cluster-scoped: `Kind/name`), as findings name objects.
    pub label: String,
    /// The API group (`""` for the core group).
    pub group: String,
    /// The API version within the group (`v1`, `v1beta1`).
    pub version: String,
    /// The kind.
    pub kind: String,
    /// The object as pasted.
    pub object: Value,
}

impl Pasted {
    /// `apps/v1 Deployment`, as the view names what the policy's rules do not match.
    pub fn gvk(&self) -> String {
        if self.group.is_empty() {
            format!("{} {}", self.version, self.kind)
        } else {
            format!("{}/{} {}", self.group, self.version, self.kind)
        }
    }
}

/// The objects of `text`, in order.
pub fn pasted(text: &str) -> Vec<Pasted> {
    let parsed = parse(INPUT_FILE, text, &Limits::default());
    model::objects(&parsed.documents)
        .into_iter()
        .map(|o| {
            let (group, version) = match o.api_version.rsplit_once('/') {
                Some((g, v)) => (g.to_string(), v.to_string()),
                None => (String::new(), o.api_version.clone()),
            };
            let label = match &o.namespace {
                Some(ns) => format!("{}/{ns}/{}", o.kind, o.name),
                None => format!("{}/{}", o.kind, o.name),
            };
            Pasted {
                label,
                group,
                version,
                kind: o.kind,
                object: o.value,
            }
        })
        .collect()
}

/// Whether an admission rule of the policy (metadata `rules`) selects CREATE of `kind` in
/// `group`/`version`: every one of `apiGroups`, `apiVersions`, `resources` and `operations` must match
/// (`*` matches anything), as the API server matches a webhook's rules.
fn rule_selects(rule: &Value, object: &Pasted) -> bool {
    let has = |field: &str, want: &str| {
        rule[field]
            .as_array()
            .is_some_and(|v| v.iter().any(|x| x == "*" || x == want))
    };
    let Some(resource) = resource_of(&object.kind) else {
        return false;
    };
    has("apiGroups", &object.group)
        && has("apiVersions", &object.version)
        && has("resources", resource)
        && has("operations", "CREATE")
}

/// Whether the policy sees CREATE of `object`: by its embedded metadata `rules` when it has them (what a
/// ClusterAdmissionPolicy copied from them would send), else the kinds winplace evaluates.
pub fn selects(rules: &[Value], object: &Pasted) -> bool {
    if rules.is_empty() {
        EVALUATED_KINDS.contains(&(object.group.as_str(), object.kind.as_str()))
    } else {
        rules.iter().any(|r| rule_selects(r, object))
    }
}

/// What the API server would do with the pasted objects on CREATE: the objects it sends the policy, in
/// order, with their requests (namespace `default` where the object names none, as `kubectl apply`
/// without `-n`), and those the policy's rules do not select, which it never sends.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Selection {
    /// Sent to the policy.
    pub sent: Vec<Sent>,
    /// Not sent: the policy's rules do not match their group, version and kind.
    pub skipped: Vec<Pasted>,
}

/// Splits `objects` by what `rules` select (see [`Selection`]).
pub fn requests(objects: &[Pasted], rules: &[Value]) -> Selection {
    let mut selection = Selection::default();
    for o in objects {
        if selects(rules, o) {
            selection.sent.push(Sent {
                label: o.label.clone(),
                request: create_request(&o.object, "default"),
                object: o.object.clone(),
            });
        } else {
            selection.skipped.push(o.clone());
        }
    }
    selection
}

/// The container images of `object` (containers, init and ephemeral containers at any depth), each once.
pub fn images_of(object: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    if matches!(
                        k.as_str(),
                        "containers" | "initContainers" | "ephemeralContainers"
                    ) {
                        for c in child.as_array().into_iter().flatten() {
                            if let Some(i) = c["image"].as_str()
                                && !out.iter().any(|o| o == i)
                            {
                                out.push(i.to_string());
                            }
                        }
                    } else {
                        walk(child, out);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(object, &mut out);
    out
}

/// The settings text (YAML or JSON) as the JSON policy-server hands the policy (`{}` when empty or
/// unreadable: the settings panel shows the problem).
pub fn settings_json(text: &str) -> Value {
    parse("settings.yaml", text, &Limits::default())
        .documents
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or_else(|| json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: nginx\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: w\nhandler: runhcs-wcow-process\n";

    #[test]
    fn only_what_the_policy_selects_is_sent() {
        let objects = pasted(DEPLOYMENT);
        let sent = requests(&objects, &[]).sent;
        let labels: Vec<&str> = sent.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["Deployment/default/web", "RuntimeClass/w"]);
        assert_eq!(sent[0].request["namespace"], "default");
        assert_eq!(sent[0].request["resource"]["resource"], "deployments");
        // Metadata rules that name only pods select nothing here: all three are said not sent.
        let pods = json!({"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "operations": ["CREATE"]});
        let selection = requests(&objects, &[pods]);
        assert!(selection.sent.is_empty());
        assert_eq!(selection.skipped.len(), 3);
        let all = json!({"apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "operations": ["*"]});
        assert_eq!(requests(&objects, &[all]).sent.len(), 2);
    }

    #[test]
    fn an_api_version_the_rules_do_not_name_is_not_sent() {
        let text = "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: old}\nspec: {}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: new}\nspec: {}\n";
        let apps_v1 = json!({"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"], "operations": ["CREATE", "UPDATE"]});
        let selection = requests(&pasted(text), &[apps_v1]);
        let sent: Vec<&str> = selection.sent.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(sent, ["Deployment/default/new"]);
        assert_eq!(selection.skipped.len(), 1);
        assert_eq!(selection.skipped[0].label, "Deployment/default/old");
        assert_eq!(selection.skipped[0].gvk(), "apps/v1beta1 Deployment");
        // A rule without apiVersions matches no version (the API server requires the field).
        let unversioned =
            json!({"apiGroups": ["apps"], "resources": ["deployments"], "operations": ["CREATE"]});
        assert!(requests(&pasted(text), &[unversioned]).sent.is_empty());
        // The core group's objects are `v1 Kind`.
        let pod = pasted("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n");
        assert_eq!(pod[0].gvk(), "v1 Pod");
        assert_eq!((pod[0].group.as_str(), pod[0].version.as_str()), ("", "v1"));
    }

    #[test]
    fn settings_text_becomes_json() {
        assert_eq!(settings_json(""), json!({}));
        assert_eq!(
            settings_json("mutate: true\nsupportedBuilds: [\"20348\"]\n"),
            json!({"mutate": true, "supportedBuilds": ["20348"]})
        );
    }

    #[test]
    fn images_are_found_at_any_depth() {
        let cron = json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {
            "initContainers": [{"image": "busybox"}], "containers": [{"image": "app"}, {"image": "busybox"}]}}}}}});
        assert_eq!(images_of(&cron), ["app", "busybox"]);
    }
}
