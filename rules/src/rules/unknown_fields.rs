//! `unknown-field`: keys that are not fields of the Kubernetes schema, where placement is decided
//! (tolerations, node affinity, pod and container `securityContext`, `spec.os`, and a RuntimeClass's
//! `scheduling` and `overhead`).
//!
//! Typed decoding drops unknown keys, so this reads the raw object. The schema tables below list the
//! fields of k8s-openapi's types; a test builds each type with every field set and compares.

use serde_json::Value;

use super::{Emitter, ObjectCx, RuleId, TemplateCx};
use crate::finding::Fix;
use crate::model::raw_spec::raw_containers;
use crate::path::FieldPath;

/// What the value of a known field is.
#[derive(Debug, Clone, Copy)]
enum Child {
    /// Not looked into (scalars, lists of scalars, maps with free keys, parts outside placement).
    Leaf,
    /// An object of this schema.
    Object(&'static Schema),
    /// A list of objects of this schema.
    List(&'static Schema),
}

/// The fields of one Kubernetes type.
#[derive(Debug)]
struct Schema {
    /// The type's name, for messages (`toleration`).
    name: &'static str,
    /// Its fields, with what each holds.
    fields: &'static [(&'static str, Child)],
}

use Child::{Leaf, List, Object};

const TOLERATION: Schema = Schema {
    name: "toleration",
    fields: &[
        ("effect", Leaf),
        ("key", Leaf),
        ("operator", Leaf),
        ("tolerationSeconds", Leaf),
        ("value", Leaf),
    ],
};
const NODE_SELECTOR_REQUIREMENT: Schema = Schema {
    name: "node selector requirement",
    fields: &[("key", Leaf), ("operator", Leaf), ("values", Leaf)],
};
const NODE_SELECTOR_TERM: Schema = Schema {
    name: "node selector term",
    fields: &[
        ("matchExpressions", List(&NODE_SELECTOR_REQUIREMENT)),
        ("matchFields", List(&NODE_SELECTOR_REQUIREMENT)),
    ],
};
const NODE_SELECTOR: Schema = Schema {
    name: "node selector",
    fields: &[("nodeSelectorTerms", List(&NODE_SELECTOR_TERM))],
};
const PREFERRED_SCHEDULING_TERM: Schema = Schema {
    name: "preferred scheduling term",
    fields: &[
        ("preference", Object(&NODE_SELECTOR_TERM)),
        ("weight", Leaf),
    ],
};
const NODE_AFFINITY: Schema = Schema {
    name: "nodeAffinity",
    fields: &[
        (
            "preferredDuringSchedulingIgnoredDuringExecution",
            List(&PREFERRED_SCHEDULING_TERM),
        ),
        (
            "requiredDuringSchedulingIgnoredDuringExecution",
            Object(&NODE_SELECTOR),
        ),
    ],
};
const AFFINITY: Schema = Schema {
    name: "affinity",
    fields: &[
        ("nodeAffinity", Object(&NODE_AFFINITY)),
        ("podAffinity", Leaf),
        ("podAntiAffinity", Leaf),
    ],
};
const WINDOWS_OPTIONS: Schema = Schema {
    name: "windowsOptions",
    fields: &[
        ("gmsaCredentialSpec", Leaf),
        ("gmsaCredentialSpecName", Leaf),
        ("hostProcess", Leaf),
        ("runAsUserName", Leaf),
    ],
};
const PROFILE: Schema = Schema {
    name: "profile",
    fields: &[("localhostProfile", Leaf), ("type", Leaf)],
};
const CAPABILITIES: Schema = Schema {
    name: "capabilities",
    fields: &[("add", Leaf), ("drop", Leaf)],
};
const SE_LINUX_OPTIONS: Schema = Schema {
    name: "seLinuxOptions",
    fields: &[
        ("level", Leaf),
        ("role", Leaf),
        ("type", Leaf),
        ("user", Leaf),
    ],
};
const SYSCTL: Schema = Schema {
    name: "sysctl",
    fields: &[("name", Leaf), ("value", Leaf)],
};
const POD_SECURITY_CONTEXT: Schema = Schema {
    name: "pod securityContext",
    fields: &[
        ("appArmorProfile", Object(&PROFILE)),
        ("fsGroup", Leaf),
        ("fsGroupChangePolicy", Leaf),
        ("runAsGroup", Leaf),
        ("runAsNonRoot", Leaf),
        ("runAsUser", Leaf),
        ("seLinuxChangePolicy", Leaf),
        ("seLinuxOptions", Object(&SE_LINUX_OPTIONS)),
        ("seccompProfile", Object(&PROFILE)),
        ("supplementalGroups", Leaf),
        ("supplementalGroupsPolicy", Leaf),
        ("sysctls", List(&SYSCTL)),
        ("windowsOptions", Object(&WINDOWS_OPTIONS)),
    ],
};
const SECURITY_CONTEXT: Schema = Schema {
    name: "container securityContext",
    fields: &[
        ("allowPrivilegeEscalation", Leaf),
        ("appArmorProfile", Object(&PROFILE)),
        ("capabilities", Object(&CAPABILITIES)),
        ("privileged", Leaf),
        ("procMount", Leaf),
        ("readOnlyRootFilesystem", Leaf),
        ("runAsGroup", Leaf),
        ("runAsNonRoot", Leaf),
        ("runAsUser", Leaf),
        ("seLinuxOptions", Object(&SE_LINUX_OPTIONS)),
        ("seccompProfile", Object(&PROFILE)),
        ("windowsOptions", Object(&WINDOWS_OPTIONS)),
    ],
};
const POD_OS: Schema = Schema {
    name: "spec.os",
    fields: &[("name", Leaf)],
};
const RC_SCHEDULING: Schema = Schema {
    name: "RuntimeClass scheduling",
    fields: &[("nodeSelector", Leaf), ("tolerations", List(&TOLERATION))],
};
const RC_OVERHEAD: Schema = Schema {
    name: "RuntimeClass overhead",
    fields: &[("podFixed", Leaf)],
};

/// Runs this family's rules on one pod template.
pub(crate) fn check(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let raw = cx.template.raw;
    let prefix = &cx.template.prefix;
    let pod_parts: [(&str, Child); 4] = [
        ("os", Object(&POD_OS)),
        ("affinity", Object(&AFFINITY)),
        ("tolerations", List(&TOLERATION)),
        ("securityContext", Object(&POD_SECURITY_CONTEXT)),
    ];
    for (field, child) in pod_parts {
        if let Some(v) = raw.get(field) {
            walk_child(v, child, &prefix.field(field), out);
        }
    }
    for c in raw_containers(raw) {
        if let Some(sc) = c.value.get("securityContext") {
            walk(
                sc,
                &SECURITY_CONTEXT,
                &c.path(prefix).field("securityContext"),
                out,
            );
        }
    }
}

/// `unknown-field` in a RuntimeClass's `scheduling` and `overhead` (under `spec` for `v1alpha1`).
pub(super) fn check_runtime_class(cx: &ObjectCx<'_>, out: &mut Emitter<'_>) {
    let base = if cx.object.api_version == "node.k8s.io/v1alpha1" {
        FieldPath::root().field("spec")
    } else {
        FieldPath::root()
    };
    let Some(root) = crate::model::get(&cx.object.value, &base) else {
        return;
    };
    if let Some(s) = root.get("scheduling") {
        walk(s, &RC_SCHEDULING, &base.field("scheduling"), out);
    }
    if let Some(o) = root.get("overhead") {
        walk(o, &RC_OVERHEAD, &base.field("overhead"), out);
    }
}

fn walk_child(value: &Value, child: Child, path: &FieldPath, out: &mut Emitter<'_>) {
    match child {
        Leaf => {}
        Object(schema) => walk(value, schema, path, out),
        List(schema) => {
            for (i, item) in value.as_array().into_iter().flatten().enumerate() {
                walk(item, schema, &path.index(i), out);
            }
        }
    }
}

/// Reports the unknown keys of `value` (an object of `schema` at `path`) and descends into known ones.
fn walk(value: &Value, schema: &Schema, path: &FieldPath, out: &mut Emitter<'_>) {
    let Some(map) = value.as_object() else {
        return;
    };
    for (key, v) in map {
        match schema.fields.iter().find(|(name, _)| name == key) {
            // A leaf holds no keys to check: no path to build for it.
            Some((_, Leaf)) => {}
            Some((name, child)) => walk_child(v, *child, &path.field(*name), out),
            None => report(map, key, schema, path, out),
        }
    }
}

/// Path step for a key as written: a field, unless it cannot be printed as one.
fn step(path: &FieldPath, key: &str) -> FieldPath {
    if key.is_empty() || key.contains(['.', '/', '[', ']']) {
        path.key(key.to_string())
    } else {
        path.field(key.to_string())
    }
}

fn report(
    map: &serde_json::Map<String, Value>,
    key: &str,
    schema: &Schema,
    path: &FieldPath,
    out: &mut Emitter<'_>,
) {
    let at = step(path, key);
    let same_but_case = schema
        .fields
        .iter()
        .map(|(name, _)| *name)
        .find(|name| name.eq_ignore_ascii_case(key));
    let near = schema
        .fields
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| edit_distance(&name.to_ascii_lowercase(), &key.to_ascii_lowercase()) <= 2)
        .min_by_key(|name| edit_distance(name, key));
    let consequence = if schema.name == "toleration" {
        " (a toleration that loses its effect, key or value tolerates more than intended)"
    } else {
        ""
    };
    let head = format!(
        "`{key}` is not a field of a {}: strict clients such as kubectl reject the manifest, others have the API server drop the key silently{consequence}",
        schema.name
    );
    let (todo, fix) = match same_but_case.or(near) {
        Some(name) if map.contains_key(name) => {
            (format!("remove `{key}` (`{name}` is already set)"), None)
        }
        Some(name) if same_but_case.is_some() => {
            let to = path.field(name);
            let fix = Fix {
                description: format!("rename `{key}` to `{name}`"),
                patch: vec![serde_json::json!({
                    "op": "move",
                    "from": at.to_json_pointer(),
                    "path": to.to_json_pointer(),
                })]
                .into(),
            };
            (
                format!("rename it to `{name}` (field names are case-sensitive)"),
                Some(fix),
            )
        }
        Some(name) => (format!("did you mean `{name}`? Correct or remove it"), None),
        None => {
            let known: Vec<&str> = schema.fields.iter().map(|(n, _)| *n).collect();
            (
                format!("remove it; the fields are {}", known.join(", ")),
                None,
            )
        }
    };
    out.emit(RuleId::UnknownField, &at, format!("{head}; {todo}"), fix);
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_kit::{apply, object, pod, rule_paths, run_object, run_template};
    use crate::settings::Settings;
    use k8s_openapi::api::core::v1 as core;
    use std::collections::BTreeSet;

    fn names(schema: &Schema) -> BTreeSet<String> {
        schema.fields.iter().map(|(n, _)| n.to_string()).collect()
    }

    fn keys<T: serde::Serialize>(value: &T) -> BTreeSet<String> {
        let v = serde_json::to_value(value).expect("serializes");
        v.as_object().expect("object").keys().cloned().collect()
    }

    /// The tables hold exactly k8s-openapi's fields: every struct below is built without `..Default`, so a
    /// new upstream field breaks the build here.
    #[test]
    fn schema_tables_match_k8s_openapi() {
        let s = || Some(String::new());
        let profile = core::SeccompProfile {
            localhost_profile: s(),
            type_: String::new(),
        };
        let windows = core::WindowsSecurityContextOptions {
            gmsa_credential_spec: s(),
            gmsa_credential_spec_name: s(),
            host_process: Some(true),
            run_as_user_name: s(),
        };
        let se = core::SELinuxOptions {
            level: s(),
            role: s(),
            type_: s(),
            user: s(),
        };
        let tol = core::Toleration {
            effect: s(),
            key: s(),
            operator: s(),
            toleration_seconds: Some(1),
            value: s(),
        };
        assert_eq!(keys(&tol), names(&TOLERATION));
        assert_eq!(keys(&windows), names(&WINDOWS_OPTIONS));
        assert_eq!(keys(&profile), names(&PROFILE));
        let apparmor = core::AppArmorProfile {
            localhost_profile: s(),
            type_: String::new(),
        };
        assert_eq!(keys(&apparmor), names(&PROFILE));
        assert_eq!(keys(&se), names(&SE_LINUX_OPTIONS));
        let caps = core::Capabilities {
            add: Some(vec![]),
            drop: Some(vec![]),
        };
        assert_eq!(keys(&caps), names(&CAPABILITIES));
        let sysctl = core::Sysctl {
            name: String::new(),
            value: String::new(),
        };
        assert_eq!(keys(&sysctl), names(&SYSCTL));
        let pod_sc = core::PodSecurityContext {
            app_armor_profile: Some(apparmor.clone()),
            fs_group: Some(1),
            fs_group_change_policy: s(),
            run_as_group: Some(1),
            run_as_non_root: Some(true),
            run_as_user: Some(1),
            se_linux_change_policy: s(),
            se_linux_options: Some(se.clone()),
            seccomp_profile: Some(profile.clone()),
            supplemental_groups: Some(vec![]),
            supplemental_groups_policy: s(),
            sysctls: Some(vec![]),
            windows_options: Some(windows.clone()),
        };
        assert_eq!(keys(&pod_sc), names(&POD_SECURITY_CONTEXT));
        let sc = core::SecurityContext {
            allow_privilege_escalation: Some(true),
            app_armor_profile: Some(apparmor),
            capabilities: Some(caps),
            privileged: Some(true),
            proc_mount: s(),
            read_only_root_filesystem: Some(true),
            run_as_group: Some(1),
            run_as_non_root: Some(true),
            run_as_user: Some(1),
            se_linux_options: Some(se),
            seccomp_profile: Some(profile),
            windows_options: Some(windows),
        };
        assert_eq!(keys(&sc), names(&SECURITY_CONTEXT));
        let req = core::NodeSelectorRequirement {
            key: String::new(),
            operator: String::new(),
            values: Some(vec![]),
        };
        assert_eq!(keys(&req), names(&NODE_SELECTOR_REQUIREMENT));
        let term = core::NodeSelectorTerm {
            match_expressions: Some(vec![]),
            match_fields: Some(vec![]),
        };
        assert_eq!(keys(&term), names(&NODE_SELECTOR_TERM));
        let sel = core::NodeSelector {
            node_selector_terms: vec![],
        };
        assert_eq!(keys(&sel), names(&NODE_SELECTOR));
        let pref = core::PreferredSchedulingTerm {
            preference: term,
            weight: 1,
        };
        assert_eq!(keys(&pref), names(&PREFERRED_SCHEDULING_TERM));
        let na = core::NodeAffinity {
            preferred_during_scheduling_ignored_during_execution: Some(vec![]),
            required_during_scheduling_ignored_during_execution: Some(sel),
        };
        assert_eq!(keys(&na), names(&NODE_AFFINITY));
        let aff = core::Affinity {
            node_affinity: Some(na),
            pod_affinity: Some(Default::default()),
            pod_anti_affinity: Some(Default::default()),
        };
        assert_eq!(keys(&aff), names(&AFFINITY));
        assert_eq!(
            keys(&core::PodOS {
                name: String::new()
            }),
            names(&POD_OS)
        );
        let sched = k8s_openapi::api::node::v1::Scheduling {
            node_selector: Some(Default::default()),
            tolerations: Some(vec![]),
        };
        assert_eq!(keys(&sched), names(&RC_SCHEDULING));
        let overhead = k8s_openapi::api::node::v1::Overhead {
            pod_fixed: Some(Default::default()),
        };
        assert_eq!(keys(&overhead), names(&RC_OVERHEAD));
    }

    #[test]
    fn unknown_keys_table() {
        // (spec body, expected paths, whether the first finding has a rename fix).
        let cases: &[(&str, &[&str], bool)] = &[
            (
                "  tolerations: [{key: os, value: Windows, Effect: NoSchedule}]\n  containers: [{name: c}]\n",
                &["spec.tolerations[0].Effect"],
                true,
            ),
            (
                "  tolerations: [{key: os, operator: Exists, effect: NoExecute, tolerationSecond: 5}]\n  containers: [{name: c}]\n",
                &["spec.tolerations[0].tolerationSecond"],
                false,
            ),
            (
                "  tolerations: [{key: os, effect: NoSchedule, Effect: NoExecute}]\n  containers: [{name: c}]\n",
                &["spec.tolerations[0].Effect"],
                false,
            ),
            (
                "  tolerations: [{key: os, operator: Exists, color: blue}]\n  containers: [{name: c}]\n",
                &["spec.tolerations[0].color"],
                false,
            ),
            (
                "  os: {name: windows, Name: x}\n  containers: [{name: c}]\n",
                &["spec.os.Name"],
                false,
            ),
            (
                "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions: [{key: kubernetes.io/os, Operator: In, values: [windows]}]\n          matchfields: []\n      preferredDuringSchedulingIgnoredDuringExecution:\n      - {weight: 1, preference: {matchExpressions: [{key: a, operator: In, value: [b]}]}}\n  containers: [{name: c}]\n",
                &[
                    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].Operator",
                    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchfields",
                    "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].value",
                ],
                true,
            ),
            (
                "  securityContext:\n    runAsNonroot: true\n    windowsOptions: {runAsUsername: x}\n    seccompProfile: {Type: RuntimeDefault}\n    sysctls: [{name: a, value: b, Value: c}]\n  containers: [{name: c, securityContext: {capabilities: {Drop: [ALL]}, seLinuxOptions: {Level: s0}, appArmorProfile: {type: RuntimeDefault, localHostProfile: x}, windowsOptions: {hostprocess: true}, Privileged: true}}]\n",
                &[
                    "spec.securityContext.runAsNonroot",
                    "spec.securityContext.windowsOptions.runAsUsername",
                    "spec.securityContext.seccompProfile.Type",
                    "spec.securityContext.sysctls[0].Value",
                    "spec.containers[0].securityContext.capabilities.Drop",
                    "spec.containers[0].securityContext.seLinuxOptions.Level",
                    "spec.containers[0].securityContext.appArmorProfile.localHostProfile",
                    "spec.containers[0].securityContext.windowsOptions.hostprocess",
                    "spec.containers[0].securityContext.Privileged",
                ],
                true,
            ),
            // Known everywhere, or outside the placement parts: nothing.
            (
                "  tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule, tolerationSeconds: null}]\n  nodeSelector: {Kubernetes.io/os: windows}\n  Tolerations: []\n  containers: [{name: c, Image: x, securityContext: {windowsOptions: {runAsUserName: a}}}]\n",
                &[],
                false,
            ),
        ];
        for (body, want, renamed) in cases {
            let findings = run_template(&pod(body), None, check);
            let got = rule_paths(&findings);
            let want: Vec<(String, String)> = want
                .iter()
                .map(|p| ("unknown-field".to_string(), p.to_string()))
                .collect();
            // serde_json maps are sorted: compare as sets.
            let (mut g, mut w) = (got.clone(), want.clone());
            g.sort();
            w.sort();
            assert_eq!(g, w, "{body}");
            assert_eq!(findings.iter().any(|f| f.fix.is_some()), *renamed, "{body}");
        }
    }

    #[test]
    fn rename_fixes_apply_together() {
        let text = pod(
            "  tolerations: [{key: os, value: windows, Effect: NoSchedule, Operator: Equal}]\n  securityContext: {windowsOptions: {RunAsUserName: x}}\n  containers: [{name: c}]\n",
        );
        let findings = run_template(&text, None, check);
        assert_eq!(findings.len(), 3);
        let mut value = object(&text).value;
        for f in &findings {
            apply(&mut value, f.fix.as_ref().expect("rename"));
        }
        assert_eq!(value["spec"]["tolerations"][0]["effect"], "NoSchedule");
        assert_eq!(value["spec"]["tolerations"][0]["operator"], "Equal");
        assert_eq!(
            value["spec"]["securityContext"]["windowsOptions"]["runAsUserName"],
            "x"
        );
        let fixed = serde_json::to_string(&value).expect("json");
        assert!(run_template(&fixed, None, check).is_empty());
        assert!(
            findings[0].message.contains("rename it to `effect`"),
            "{}",
            findings[0].message
        );
    }

    #[test]
    fn runtime_class_scheduling_and_overhead() {
        let rc = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: rc}\nhandler: runhcs-wcow-process\nscheduling:\n  nodeSelector: {kubernetes.io/os: windows}\n  Tolerations: []\n  tolerations: [{key: os, Effect: NoSchedule}]\noverhead: {podfixed: {cpu: 1}}\n";
        let got = rule_paths(&run_object(rc, &Settings::default(), check_runtime_class));
        let mut got_sorted = got.clone();
        got_sorted.sort();
        let want: Vec<(String, String)> = [
            "overhead.podfixed",
            "scheduling.Tolerations",
            "scheduling.tolerations[0].Effect",
        ]
        .iter()
        .map(|p| ("unknown-field".to_string(), p.to_string()))
        .collect();
        assert_eq!(got_sorted, want);
        let alpha = "apiVersion: node.k8s.io/v1alpha1\nkind: RuntimeClass\nmetadata: {name: rc}\nspec:\n  runtimeHandler: x\n  scheduling: {nodeselector: {}}\n";
        assert_eq!(
            rule_paths(&run_object(
                alpha,
                &Settings::default(),
                check_runtime_class
            )),
            vec![(
                "unknown-field".to_string(),
                "spec.scheduling.nodeselector".to_string()
            )]
        );
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("tolerationseconds", "tolerationsecond"), 1);
        assert_eq!(edit_distance("effect", "efect"), 1);
        assert_eq!(edit_distance("abc", "xyz"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
