//! OS identity: `os-name-invalid`, `os-conflict`, `mixed-os-containers`.

use serde_json::json;

use super::{Emitter, RuleId, TemplateCx};
use crate::finding::Fix;
use crate::placement::{OsSignal, os_word};
use crate::windows::Os;

/// Runs the OS-identity rules.
pub(crate) fn check(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    os_name_invalid(cx, out);
    os_conflict(cx, out);
    mixed_os_containers(cx, out);
}

/// `os-name-invalid`: `spec.os.name` is not exactly `linux` or `windows`. Reported where the API server
/// reports it (§1.1, `validateOS`): an empty name at `spec.os.name` (Required value), any other name at
/// `spec.os` (Unsupported value).
fn os_name_invalid(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let Some(name) = cx.placement.os_name.as_deref() else {
        return;
    };
    if name.parse::<Os>().is_ok() {
        return;
    }
    let os_path = cx.template.prefix.field("os");
    let fixed = name.trim().to_ascii_lowercase();
    let fix = (fixed == "linux" || fixed == "windows").then(|| Fix {
        description: format!("set spec.os.name to {fixed}"),
        patch: vec![json!({
            "op": "replace",
            "path": os_path.field("name").to_json_pointer(),
            "value": fixed,
        })]
        .into(),
    });
    let (path, upstream) = if name.is_empty() {
        let name_path = os_path.field("name");
        let upstream = format!("{name_path}: Required value: cannot be empty");
        (name_path, upstream)
    } else {
        let upstream = format!(
            "{os_path}: Unsupported value: {name:?}: supported values: \"linux\", \"windows\""
        );
        (os_path.clone(), upstream)
    };
    let advice = match &fix {
        Some(_) => format!("write `{fixed}` in lowercase"),
        None => "use exactly `linux` or `windows`".to_string(),
    };
    out.emit(
        RuleId::OsNameInvalid,
        &path,
        format!("The API server rejects this pod template ({upstream}); {advice}."),
        fix,
    );
}

/// The failure a pair of contradicting signals leads to.
fn consequence(first: &OsSignal, other: &OsSignal) -> &'static str {
    let path = |s: &OsSignal| s.path.to_string();
    let is_declared = |s: &OsSignal| path(s).ends_with("os.name");
    let is_selector =
        |s: &OsSignal| path(s).contains("nodeSelector[") || path(s).contains("affinity");
    let is_image = |s: &OsSignal| path(s).ends_with(".image");
    let is_rc = |s: &OsSignal| path(s).ends_with("runtimeClassName");
    if (is_declared(first) && is_selector(other)) || (is_selector(first) && is_declared(other)) {
        "the scheduler follows the selector and the kubelet then refuses the pod (PodOSNotSupported)"
    } else if is_selector(first) && is_selector(other) {
        "nodeSelector and required affinity must both match, so no node fits and the pod stays Pending"
    } else if is_rc(first) || is_rc(other) {
        "the pod is placed by one and cannot run what the other needs"
    } else if is_image(first) || is_image(other) {
        "the image cannot run on the nodes the pod is sent to"
    } else {
        "the pod cannot run anywhere"
    }
}

/// `os-conflict`: two signals name different operating systems.
fn os_conflict(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let Some(conflict) = &cx.placement.conflict else {
        return;
    };
    let (first, other) = (&conflict.first, &conflict.other);
    out.emit(
        RuleId::OsConflict,
        &other.path,
        format!(
            "This pod's OS signals disagree: {} ({}), but {} ({}); {}. Decide which OS the workload needs and make every signal say it.",
            first.what,
            first.path,
            other.what,
            other.path,
            consequence(first, other)
        ),
        None,
    );
}

/// `mixed-os-containers`: Windows and Linux images in one pod.
fn mixed_os_containers(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let p = cx.placement;
    let Some(mixed) = &p.mixed else {
        return;
    };
    let Some(minority) = p.images.get(mixed.first_minority) else {
        return;
    };
    let list = |os: Os| {
        p.images
            .iter()
            .filter(|i| i.class.os.os() == Some(os))
            .map(|i| i.image.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let majority = match mixed.minority {
        Os::Linux => Os::Windows,
        Os::Windows => Os::Linux,
    };
    out.emit(
        RuleId::MixedOsContainers,
        &minority.path,
        format!(
            "This pod mixes {} images ({}) with {} images ({}); a pod runs on one node, so some of its containers can never start. Move the {} container(s) to a separate workload, or use a {} build or multi-OS tag of the image.",
            os_word(majority),
            list(majority),
            os_word(mixed.minority),
            list(mixed.minority),
            os_word(mixed.minority),
            os_word(majority),
        ),
        None,
    );
}

#[cfg(test)]
mod tests {
    use crate::rules::test_kit::{
        Case, apply, findings, object, pod, rule_path, sorted_rule_paths,
    };
    use crate::settings::Settings;

    const RULES: &[&str] = &["os-name-invalid", "os-conflict", "mixed-os-containers"];
    const WIN: &str = "mcr.microsoft.com/windows/servercore:ltsc2022";

    fn run(spec: &str) -> Vec<(String, String)> {
        sorted_rule_paths(&findings(&pod(spec), None, &Settings::default(), RULES))
    }

    #[test]
    fn triggers_and_non_triggers() {
        let rows = vec![
            Case { reference: "§1.1 wrong case", yaml: format!("  os: {{name: Windows}}\n  containers: [{{name: c, image: {WIN}}}]\n"), want: vec![rule_path("os-name-invalid", "spec.os")] },
            Case { reference: "§1.1 empty name: Required value at spec.os.name", yaml: "  os: {name: \"\"}\n  containers: [{name: c, image: busybox}]\n".into(), want: vec![rule_path("os-name-invalid", "spec.os.name")] },
            Case { reference: "§1.1 valid", yaml: "  os: {name: linux}\n  containers: [{name: c, image: busybox}]\n".into(), want: vec![] },
            Case { reference: "§1.6 declared vs selector", yaml: "  os: {name: windows}\n  nodeSelector: {kubernetes.io/os: linux}\n  containers: [{name: c, image: busybox}]\n".into(), want: vec![rule_path("os-conflict", "spec.nodeSelector[kubernetes.io/os]")] },
            Case { reference: "signals agree", yaml: format!("  os: {{name: windows}}\n  nodeSelector: {{kubernetes.io/os: windows}}\n  containers: [{{name: c, image: {WIN}}}]\n"), want: vec![] },
            Case { reference: "unrecognized image takes the declared OS", yaml: "  os: {name: windows}\n  containers: [{name: c, image: registry.example.com/app:1}]\n".into(), want: vec![] },
            Case { reference: "§8 mixed", yaml: format!("  containers: [{{name: a, image: {WIN}}}, {{name: b, image: nginx:1.27}}]\n"), want: vec![rule_path("mixed-os-containers", "spec.containers[1].image")] },
            Case { reference: "multi-OS is neutral", yaml: format!("  containers: [{{name: a, image: {WIN}}}, {{name: b, image: registry.k8s.io/pause:3.10}}]\n"), want: vec![] },
        ];
        for Case {
            reference,
            yaml: spec,
            want,
        } in rows
        {
            assert_eq!(run(&spec), want, "{reference}");
        }
    }

    #[test]
    fn os_name_fix_lowercases() {
        let text = pod(&format!(
            "  os: {{name: ' Windows'}}\n  containers: [{{name: c, image: {WIN}}}]\n"
        ));
        let found = findings(&text, None, &Settings::default(), RULES);
        let fix = found[0].fix.as_ref().expect("a fix");
        let mut value: serde_json::Value = object(&text).value;
        apply(&mut value, fix);
        assert_eq!(value["spec"]["os"]["name"], "windows");
        let again = findings(&value.to_string(), None, &Settings::default(), RULES);
        assert!(again.is_empty(), "{again:?}");
        // No automatic fix for a value that is not an OS name.
        let other = findings(
            &pod("  os: {name: win}\n  containers: [{name: c, image: busybox}]\n"),
            None,
            &Settings::default(),
            RULES,
        );
        assert!(other[0].fix.is_none());
        assert!(
            other[0].message.contains(r#"Unsupported value: "win""#),
            "{}",
            other[0].message
        );
    }
}
