//! What the API server validates about the pod OS (kubernetes-windows-rules.md §1): fields forbidden on Windows pods
//! (`windows-forbidden-field`), the same fields on pods that are Windows only by inference
//! (`windows-unsupported-field`), `windowsOptions` on Linux pods (`linux-forbidden-windows-options`),
//! features Windows nodes lack (`windows-unsupported-feature`, §8) and `lifecycle.stopSignal`
//! (`stop-signal-invalid`, §1.4).
//!
//! Presence checks read the raw pod spec: a pointer field is "set" when its key is present with a non-null
//! value, which is exactly when the API server's typed object has a non-nil pointer.

use serde_json::{Value, json};

use super::{Emitter, RuleId, TemplateCx};
use crate::finding::{Fix, Severity};
use crate::model::get;
use crate::path::FieldPath;
use crate::placement::PodOs;
use crate::schedule::go_quote;
use crate::windows::Os;

use crate::model::raw_spec::raw_containers;

/// The value at `steps` under `v` when it is present and not `null` (a non-nil pointer upstream).
pub(super) fn present<'v>(v: &'v Value, steps: &[&str]) -> Option<&'v Value> {
    steps
        .iter()
        .try_fold(v, |v, s| v.get(*s))
        .filter(|v| !v.is_null())
}

/// `spec.os.name` when it is exactly `linux` or `windows` (read from the spec, so that the API-server
/// rules do not depend on how placement weighs other signals).
pub(super) fn declared_os(cx: &TemplateCx<'_>) -> Option<Os> {
    match cx.template.spec.os.as_ref().map(|os| os.name.as_str()) {
        Some("windows") => Some(Os::Windows),
        Some("linux") => Some(Os::Linux),
        _ => None,
    }
}

/// A JSON patch that removes the field at `path`.
pub(super) fn remove_fix(path: &FieldPath, what: &str) -> Fix {
    Fix {
        description: format!("remove {what}"),
        patch: vec![serde_json::json!({"op": "remove", "path": path.to_json_pointer()})].into(),
    }
}

/// When a field counts as set for `validateWindows`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Presence {
    /// A pointer, map or list field: present and not null, whatever the value.
    Set,
    /// A plain boolean: only `true`.
    True,
    /// A list: only when it has elements.
    NonEmpty,
}

/// Pod-level fields `validateWindows` forbids, in its order (kubernetes-windows-rules.md §1.2), relative to the pod spec.
pub(super) const POD_FORBIDDEN: &[(&[&str], Presence)] = &[
    (&["securityContext", "appArmorProfile"], Presence::Set),
    (&["securityContext", "seLinuxOptions"], Presence::Set),
    (&["hostUsers"], Presence::Set),
    (&["hostPID"], Presence::True),
    (&["hostIPC"], Presence::True),
    (&["securityContext", "seccompProfile"], Presence::Set),
    (&["securityContext", "fsGroup"], Presence::Set),
    (&["securityContext", "fsGroupChangePolicy"], Presence::Set),
    (&["securityContext", "sysctls"], Presence::NonEmpty),
    (&["shareProcessNamespace"], Presence::Set),
    (&["securityContext", "runAsUser"], Presence::Set),
    (&["securityContext", "runAsGroup"], Presence::Set),
    (&["securityContext", "supplementalGroups"], Presence::Set),
    (
        &["securityContext", "supplementalGroupsPolicy"],
        Presence::Set,
    ),
    (&["securityContext", "seLinuxChangePolicy"], Presence::Set),
    // `validatePodResources` (1.34+), reported with "may not be set".
    (&["resources"], Presence::Set),
];

/// Container-level `securityContext` fields `validateWindows` forbids, in its order (kubernetes-windows-rules.md §1.2).
pub(super) const CONTAINER_FORBIDDEN: &[&str] = &[
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "capabilities",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
    "procMount",
    "runAsUser",
    "runAsGroup",
];

/// One Linux-only field set in a pod spec.
struct LinuxOnlyField {
    /// Path from the object root.
    path: FieldPath,
    /// The field's name as an operator knows it (`securityContext.runAsUser`).
    name: String,
    /// The last step (`runAsUser`), for the hint.
    leaf: &'static str,
}

/// Every field of §1.2 the raw pod spec sets, pod level first, then each container in visiting order.
fn linux_only_fields(raw: &Value, prefix: &FieldPath) -> Vec<LinuxOnlyField> {
    let mut out = Vec::new();
    for (steps, presence) in POD_FORBIDDEN {
        let Some(v) = present(raw, steps) else {
            continue;
        };
        let set = match presence {
            Presence::Set => true,
            Presence::True => v.as_bool() == Some(true),
            Presence::NonEmpty => v.as_array().is_some_and(|a| !a.is_empty()),
        };
        if set {
            let path = steps.iter().fold(prefix.clone(), |p, s| p.field(*s));
            out.push(LinuxOnlyField {
                path,
                name: steps.join("."),
                leaf: steps.last().copied().unwrap_or(""),
            });
        }
    }
    for c in raw_containers(raw) {
        for field in CONTAINER_FORBIDDEN {
            if present(c.value, &["securityContext", field]).is_some() {
                out.push(LinuxOnlyField {
                    path: c.path(prefix).field("securityContext").field(*field),
                    name: format!("securityContext.{field}"),
                    leaf: field,
                });
            }
        }
    }
    out
}

/// What to use instead of a Linux-only field, when Windows has an equivalent; `host_process`: the pod is a
/// HostProcess pod already.
fn windows_hint(leaf: &str, host_process: bool) -> &'static str {
    match leaf {
        "runAsUser" | "runAsGroup" => {
            " (on Windows choose the user with securityContext.windowsOptions.runAsUserName)"
        }
        "privileged" | "capabilities" if host_process => {
            " (this HostProcess pod has the host's access already: the field adds nothing on Windows)"
        }
        "privileged" | "capabilities" => {
            " (for host access on Windows use a HostProcess container, windowsOptions.hostProcess: true)"
        }
        _ => "",
    }
}

/// Runs this family's rules on one pod template.
pub(crate) fn check(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let declared = declared_os(cx);
    match declared {
        Some(Os::Windows) => windows_forbidden_fields(cx, out),
        Some(Os::Linux) => linux_forbidden_windows_options(cx, out),
        None => windows_unsupported_fields(cx, out),
    }
    windows_unsupported_features(cx, declared, out);
    stop_signals(cx, declared, out);
}

/// `windows-forbidden-field`: `validateWindows` on a pod with `spec.os.name: windows` (§1.2).
fn windows_forbidden_fields(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    for f in linux_only_fields(cx.template.raw, &cx.template.prefix) {
        let detail = if f.leaf == "resources" && f.name == "resources" {
            "may not be set for a windows pod"
        } else {
            "cannot be set for a windows pod"
        };
        let message = format!(
            "the API server rejects this pod: `{}: Forbidden: {detail}`; Windows pods (spec.os.name: windows) may not set {}, remove it{}",
            f.path,
            f.name,
            windows_hint(f.leaf, cx.placement.host_process)
        );
        let fix = remove_fix(&f.path, &f.name);
        out.emit(RuleId::WindowsForbiddenField, &f.path, message, Some(fix));
    }
}

/// `windows-unsupported-field`: the §1.2 fields on a pod that is Windows by inference and has no `spec.os`.
fn windows_unsupported_fields(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    // A present but invalid spec.os is os-name-invalid's business; Conflict/Any/Linux are not Windows.
    if cx.placement.os != PodOs::Windows || cx.template.raw.get("os").is_some() {
        return;
    }
    let why = cx
        .placement
        .signals
        .iter()
        .find(|s| s.os == Os::Windows)
        .map(|s| format!(" ({})", s.what))
        .unwrap_or_default();
    let prefix = &cx.template.prefix;
    let all = linux_only_fields(cx.template.raw, prefix);
    // Pod-level resources break the pod on a Windows kubelet: windows-unsupported-feature says so, and
    // with them spec.os.name: windows cannot be set (the API server forbids both together).
    let can_declare = !all.iter().any(|f| f.name == "resources");
    let found: Vec<&FieldPath> = all.iter().map(|f| &f.path).collect();
    for f in all.iter().filter(|f| f.name != "resources") {
        // Remove the field, or the securityContext it is the last field of: no `securityContext: {}` left.
        let parent = f.path.parent();
        let parent_goes = parent != *prefix
            && get(&cx.object.value, &parent)
                .and_then(Value::as_object)
                .is_some_and(|m| m.keys().all(|k| found.contains(&&parent.field(k.clone()))));
        let (removed, removed_name) = if parent_goes {
            let name = f
                .name
                .rsplit_once('.')
                .map_or("securityContext", |(p, _)| p)
                .to_string();
            (parent, name)
        } else {
            (f.path.clone(), f.name.clone())
        };
        let mut patch = vec![json!({"op": "remove", "path": removed.to_json_pointer()})];
        let (todo, description) = if can_declare {
            patch.push(json!({"op": "add", "path": prefix.field("os").to_json_pointer(), "value": {"name": "windows"}}));
            (
                format!("remove {} and set spec.os.name: windows", f.name),
                format!("remove {removed_name} and set spec.os.name: windows"),
            )
        } else {
            (
                format!(
                    "remove {} (spec.os.name: windows can be set once spec.resources is gone too)",
                    f.name
                ),
                format!("remove {removed_name}"),
            )
        };
        let message = format!(
            "this pod runs on Windows{why} but sets {}, which Windows nodes do not implement; the API server accepts it only because spec.os.name is not set and rejects it once it is: {todo}{}",
            f.name,
            windows_hint(f.leaf, cx.placement.host_process)
        );
        out.emit(
            RuleId::WindowsUnsupportedField,
            &f.path,
            message,
            Some(Fix {
                description,
                patch: patch.into(),
            }),
        );
    }
}

/// `linux-forbidden-windows-options`: `validateLinux` (§1.3).
fn linux_forbidden_windows_options(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let raw = cx.template.raw;
    let prefix = &cx.template.prefix;
    let mut found: Vec<FieldPath> = Vec::new();
    if present(raw, &["securityContext", "windowsOptions"]).is_some() {
        found.push(prefix.field("securityContext").field("windowsOptions"));
    }
    for c in raw_containers(raw) {
        if present(c.value, &["securityContext", "windowsOptions"]).is_some() {
            found.push(
                c.path(prefix)
                    .field("securityContext")
                    .field("windowsOptions"),
            );
        }
    }
    for path in found {
        let message = format!(
            "the API server rejects this pod: `{path}: Forbidden: windows options cannot be set for a linux pod`; remove windowsOptions from this Linux pod (spec.os.name: linux)"
        );
        let fix = remove_fix(&path, "securityContext.windowsOptions");
        out.emit(
            RuleId::LinuxForbiddenWindowsOptions,
            &path,
            message,
            Some(fix),
        );
    }
}

/// Whether any container is effectively a HostProcess container (container value, else the pod's).
pub(super) fn any_host_process(raw: &Value) -> bool {
    let pod = present(raw, &["securityContext", "windowsOptions", "hostProcess"])
        .and_then(Value::as_bool);
    raw_containers(raw).any(|c| {
        present(
            c.value,
            &["securityContext", "windowsOptions", "hostProcess"],
        )
        .and_then(Value::as_bool)
        .or(pod)
            == Some(true)
    })
}

/// `windows-unsupported-feature`: what Windows nodes do not provide (§8), on declared or inferred Windows pods.
fn windows_unsupported_features(cx: &TemplateCx<'_>, declared: Option<Os>, out: &mut Emitter<'_>) {
    let windows = match declared {
        Some(Os::Windows) => true,
        Some(Os::Linux) => false,
        None => cx.placement.os == PodOs::Windows,
    };
    if !windows {
        return;
    }
    let raw = cx.template.raw;
    let prefix = &cx.template.prefix;
    let mut resize_policies: Vec<FieldPath> = Vec::new();
    // Pod level, in field order.
    if present(raw, &["hostNetwork"]).and_then(Value::as_bool) == Some(true)
        && !any_host_process(raw)
    {
        // A warning, not an error: the API server accepts the pod and it runs, only not on the host's
        // network (docs/reference/windows-host-network.md).
        out.emit_as(
            RuleId::WindowsUnsupportedFeature,
            Severity::Warning,
            &prefix.field("hostNetwork"),
            "this Windows pod sets hostNetwork: true without being a HostProcess pod; the API server accepts it and the pod runs, but not on the host's network: the kubelet asks for the node's network only under the WindowsHostNetwork feature gate (alpha from Kubernetes 1.26, deprecated and off from 1.33), and containerd gives every Windows pod that is not HostProcess its own pod network; remove hostNetwork, or make the pod a HostProcess pod (windowsOptions.hostProcess: true) if it needs the host's network".into(),
            None,
        );
    }
    if present(raw, &["dnsPolicy"]).and_then(Value::as_str) == Some("ClusterFirstWithHostNet") {
        // HostProcess pods are on the host's network, but on Windows containerd hands a pod its DNS
        // settings only through the CNI call that makes a pod network, which they never get
        // (docs/reference/windows-host-network.md, "dnsPolicy: ClusterFirstWithHostNet on Windows").
        let message = if any_host_process(raw) {
            "this HostProcess pod uses dnsPolicy: ClusterFirstWithHostNet, which Windows nodes do not support: the pod is on the host's network, but containerd applies a Windows pod's DNS settings only through the CNI call that sets up a pod network, which HostProcess pods never get, so the cluster DNS the kubelet asks for is dropped and the containers resolve names with the node's own DNS settings (cluster names such as my-svc.my-namespace resolve only if the node resolves them); use dnsPolicy: ClusterFirst (the default), which for a host-network pod means the node's DNS settings, what the containers get anyway, and reach cluster services through names the node resolves or their service environment variables"
        } else {
            "this Windows pod uses dnsPolicy: ClusterFirstWithHostNet, which Windows nodes do not support: the policy is meant for pods on the host's network, and on Windows only HostProcess pods are (this one gets a pod network, where the kubelet gives it cluster DNS as with ClusterFirst); use dnsPolicy: ClusterFirst (the default)"
        };
        out.emit(
            RuleId::WindowsUnsupportedFeature,
            &prefix.field("dnsPolicy"),
            message.into(),
            None,
        );
    }
    let mut emit = |path: FieldPath, what: String, todo: &str| {
        let message = format!("{what}, which Windows nodes do not support; {todo}");
        out.emit(RuleId::WindowsUnsupportedFeature, &path, message, None);
    };
    if declared != Some(Os::Windows) && present(raw, &["resources"]).is_some() {
        emit(
            prefix.field("resources"),
            "this Windows pod sets pod-level resources (spec.resources), which Windows kubelets reject".into(),
            "set resources on each container instead",
        );
    }
    if let Some(volumes) = raw.get("volumes").and_then(Value::as_array) {
        for (i, v) in volumes.iter().enumerate() {
            if present(v, &["emptyDir", "medium"]).and_then(Value::as_str) == Some("Memory") {
                emit(
                    prefix.field("volumes").index(i).field("emptyDir").field("medium"),
                    "this Windows pod uses an emptyDir volume with medium: Memory (a RAM-backed volume)".into(),
                    "remove medium so that the volume is disk-backed",
                );
            }
        }
    }
    for c in raw_containers(raw) {
        for list in ["limits", "requests"] {
            let Some(map) = present(c.value, &["resources", list]).and_then(Value::as_object)
            else {
                continue;
            };
            for key in map.keys().filter(|k| k.starts_with("hugepages-")) {
                emit(
                    c.path(prefix)
                        .field("resources")
                        .field(list)
                        .key(key.clone()),
                    format!("this Windows container {list} {key} (HugePages)"),
                    "remove the hugepages resource or run this container on Linux",
                );
            }
        }
        if let Some(mounts) = c.value.get("volumeMounts").and_then(Value::as_array) {
            for (j, m) in mounts.iter().enumerate() {
                let mode = present(m, &["mountPropagation"]).and_then(Value::as_str);
                if let Some(mode @ ("HostToContainer" | "Bidirectional")) = mode {
                    emit(
                        c.path(prefix)
                            .field("volumeMounts")
                            .index(j)
                            .field("mountPropagation"),
                        format!(
                            "this Windows container mounts a volume with mountPropagation: {mode}"
                        ),
                        "remove mountPropagation",
                    );
                }
            }
        }
        if present(c.value, &["volumeDevices"])
            .and_then(Value::as_array)
            .is_some_and(|d| !d.is_empty())
        {
            emit(
                c.path(prefix).field("volumeDevices"),
                "this Windows container uses volumeDevices (raw block volumes)".into(),
                "mount the volume as a filesystem with volumeMounts, or run this container on Linux",
            );
        }
        if present(c.value, &["resizePolicy"])
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty())
        {
            resize_policies.push(c.path(prefix).field("resizePolicy"));
        }
    }
    // A warning, as for hostNetwork: the pod is created and runs; only a later in-place resize fails
    // (kubernetes-windows-rules.md §10).
    let refused = if declared == Some(Os::Windows) {
        "the API server refuses to resize a pod with spec.os.name: windows (`Forbidden: windows pods cannot be resized`, since Kubernetes 1.32)"
    } else {
        "a Windows kubelet marks the resize of a Windows pod infeasible, and with spec.os.name: windows the API server refuses it outright (`windows pods cannot be resized`, since Kubernetes 1.32)"
    };
    for path in resize_policies {
        out.emit_as(
            RuleId::WindowsUnsupportedFeature,
            Severity::Warning,
            &path,
            format!(
                "this Windows container sets resizePolicy, but Windows pods cannot be resized in place: {refused}; the pod is created and runs, only the resize fails; remove resizePolicy and change resources by replacing the pod (a rollout)"
            ),
            None,
        );
    }
}

/// The signals `validateStopSignal` accepts on Linux pods (`supportedStopSignalsLinux`, §1.4).
pub(super) const LINUX_STOP_SIGNALS: &[&str] = &[
    "SIGABRT",
    "SIGALRM",
    "SIGBUS",
    "SIGCHLD",
    "SIGCLD",
    "SIGCONT",
    "SIGFPE",
    "SIGHUP",
    "SIGILL",
    "SIGINT",
    "SIGIO",
    "SIGIOT",
    "SIGKILL",
    "SIGPIPE",
    "SIGPOLL",
    "SIGPROF",
    "SIGPWR",
    "SIGQUIT",
    "SIGSEGV",
    "SIGSTKFLT",
    "SIGSTOP",
    "SIGSYS",
    "SIGTERM",
    "SIGTRAP",
    "SIGTSTP",
    "SIGTTIN",
    "SIGTTOU",
    "SIGURG",
    "SIGUSR1",
    "SIGUSR2",
    "SIGVTALRM",
    "SIGWINCH",
    "SIGXCPU",
    "SIGXFSZ",
    "SIGRTMIN",
    "SIGRTMIN+1",
    "SIGRTMIN+2",
    "SIGRTMIN+3",
    "SIGRTMIN+4",
    "SIGRTMIN+5",
    "SIGRTMIN+6",
    "SIGRTMIN+7",
    "SIGRTMIN+8",
    "SIGRTMIN+9",
    "SIGRTMIN+10",
    "SIGRTMIN+11",
    "SIGRTMIN+12",
    "SIGRTMIN+13",
    "SIGRTMIN+14",
    "SIGRTMIN+15",
    "SIGRTMAX-14",
    "SIGRTMAX-13",
    "SIGRTMAX-12",
    "SIGRTMAX-11",
    "SIGRTMAX-10",
    "SIGRTMAX-9",
    "SIGRTMAX-8",
    "SIGRTMAX-7",
    "SIGRTMAX-6",
    "SIGRTMAX-5",
    "SIGRTMAX-4",
    "SIGRTMAX-3",
    "SIGRTMAX-2",
    "SIGRTMAX-1",
    "SIGRTMAX",
];

/// The signals `validateStopSignal` accepts on Windows pods (`supportedStopSignalsWindows`).
pub(super) const WINDOWS_STOP_SIGNALS: &[&str] = &["SIGKILL", "SIGTERM"];

/// `stop-signal-invalid`: `validateStopSignal` for every container's `lifecycle.stopSignal` (§1.4).
fn stop_signals(cx: &TemplateCx<'_>, declared: Option<Os>, out: &mut Emitter<'_>) {
    let os_name = cx.template.spec.os.as_ref().map(|os| os.name.as_str());
    for c in raw_containers(cx.template.raw) {
        let Some(signal) = present(c.value, &["lifecycle", "stopSignal"]).and_then(Value::as_str)
        else {
            continue;
        };
        let path = c
            .path(&cx.template.prefix)
            .field("lifecycle")
            .field("stopSignal");
        let message = match (os_name, declared) {
            (None | Some(""), _) => format!(
                "the API server rejects this pod: `{path}: Forbidden: may not be set for containers with empty `spec.os.name``; set spec.os.name (windows or linux) or remove stopSignal"
            ),
            (_, Some(Os::Windows)) if !WINDOWS_STOP_SIGNALS.contains(&signal) => format!(
                "the API server rejects this pod: `{path}: Unsupported value: {}: supported values: \"SIGKILL\", \"SIGTERM\"`; Windows pods can only be stopped with SIGTERM or SIGKILL, use one of them",
                go_quote(signal)
            ),
            (_, Some(Os::Linux)) if !LINUX_STOP_SIGNALS.contains(&signal) => format!(
                "the API server rejects this pod: `{path}: Unsupported value: {}`: it is not a Linux signal name; use a name such as SIGTERM, SIGQUIT or SIGINT (upper case, with the SIG prefix)",
                go_quote(signal)
            ),
            // Valid, or spec.os.name is invalid (os-name-invalid reports it; upstream skips OS checks).
            _ => continue,
        };
        out.emit(RuleId::StopSignalInvalid, &path, message, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_kit::{
        apply, findings, object, pod, rule_path, rule_paths, run_template,
    };
    use crate::settings::Settings;

    fn run(text: &str, os: Option<PodOs>) -> Vec<(String, String)> {
        rule_paths(&run_template(text, os, check))
    }

    fn rows(rule: &str, paths: &[&str]) -> Vec<(String, String)> {
        paths.iter().map(|p| rule_path(rule, p)).collect()
    }

    /// Every §1.2 field, pod and container level, each container list.
    const ALL_FORBIDDEN: &str = "  os: {name: windows}\n  hostUsers: true\n  hostPID: true\n  hostIPC: true\n  shareProcessNamespace: false\n  resources: {limits: {cpu: '1'}}\n  securityContext:\n    appArmorProfile: {type: RuntimeDefault}\n    seLinuxOptions: {level: s0}\n    seccompProfile: {type: RuntimeDefault}\n    fsGroup: 1\n    fsGroupChangePolicy: Always\n    sysctls: [{name: a, value: b}]\n    runAsUser: 0\n    runAsGroup: 0\n    supplementalGroups: []\n    supplementalGroupsPolicy: Merge\n    seLinuxChangePolicy: Recursive\n    runAsNonRoot: true\n    windowsOptions: {runAsUserName: ContainerUser}\n  initContainers:\n  - name: i\n    securityContext: {runAsUser: 1}\n  containers:\n  - name: c\n    securityContext:\n      appArmorProfile: {type: RuntimeDefault}\n      seLinuxOptions: {level: s0}\n      seccompProfile: {type: RuntimeDefault}\n      capabilities: {}\n      readOnlyRootFilesystem: false\n      privileged: false\n      allowPrivilegeEscalation: false\n      procMount: Default\n      runAsUser: 1\n      runAsGroup: 1\n      runAsNonRoot: true\n  ephemeralContainers:\n  - name: e\n    securityContext: {privileged: false}\n";

    #[test]
    fn every_forbidden_field_is_reported_on_windows_pods() {
        // kubernetes-windows-rules.md §1.1/§1.2: presence checks, hostPID/hostIPC when true, sysctls when non-empty, all
        // container lists; runAsNonRoot and windowsOptions are allowed.
        let got = run(&pod(ALL_FORBIDDEN), None);
        let want = rows(
            "windows-forbidden-field",
            &[
                "spec.securityContext.appArmorProfile",
                "spec.securityContext.seLinuxOptions",
                "spec.hostUsers",
                "spec.hostPID",
                "spec.hostIPC",
                "spec.securityContext.seccompProfile",
                "spec.securityContext.fsGroup",
                "spec.securityContext.fsGroupChangePolicy",
                "spec.securityContext.sysctls",
                "spec.shareProcessNamespace",
                "spec.securityContext.runAsUser",
                "spec.securityContext.runAsGroup",
                "spec.securityContext.supplementalGroups",
                "spec.securityContext.supplementalGroupsPolicy",
                "spec.securityContext.seLinuxChangePolicy",
                "spec.resources",
                "spec.initContainers[0].securityContext.runAsUser",
                "spec.containers[0].securityContext.appArmorProfile",
                "spec.containers[0].securityContext.seLinuxOptions",
                "spec.containers[0].securityContext.seccompProfile",
                "spec.containers[0].securityContext.capabilities",
                "spec.containers[0].securityContext.readOnlyRootFilesystem",
                "spec.containers[0].securityContext.privileged",
                "spec.containers[0].securityContext.allowPrivilegeEscalation",
                "spec.containers[0].securityContext.procMount",
                "spec.containers[0].securityContext.runAsUser",
                "spec.containers[0].securityContext.runAsGroup",
                "spec.ephemeralContainers[0].securityContext.privileged",
            ],
        );
        assert_eq!(got, want);
    }

    #[test]
    fn forbidden_field_messages_and_fixes() {
        let text = pod(ALL_FORBIDDEN);
        let findings = run_template(&text, None, check);
        let privileged = findings
            .iter()
            .find(|f| f.path == "spec.containers[0].securityContext.privileged")
            .expect("privileged");
        assert!(
            privileged.message.contains(
                "`spec.containers[0].securityContext.privileged: Forbidden: cannot be set for a windows pod`"
            ),
            "{}",
            privileged.message
        );
        let resources = findings
            .iter()
            .find(|f| f.path == "spec.resources")
            .expect("resources");
        assert!(
            resources
                .message
                .contains("Forbidden: may not be set for a windows pod")
        );
        // Applying every fix in order leaves nothing to report.
        let mut value = object(&text).value;
        for f in &findings {
            apply(&mut value, f.fix.as_ref().expect("fixable"));
        }
        let fixed = serde_json::to_string(&value).expect("json");
        let again = run_template(&fixed, None, check);
        assert!(again.is_empty(), "{:?}", rule_paths(&again));
    }

    #[test]
    fn presence_rules_table() {
        // (spec body, os, expected paths) — kubernetes-windows-rules.md §1.1, §1.2.
        let cases: &[(&str, Option<PodOs>, &[&str])] = &[
            (
                "  os: {name: windows}\n  hostPID: false\n  hostIPC: false\n  containers: []\n",
                None,
                &[],
            ),
            (
                "  os: {name: windows}\n  securityContext: {sysctls: []}\n  containers: []\n",
                None,
                &[],
            ),
            (
                "  os: {name: windows}\n  securityContext: {runAsUser: null}\n  containers: []\n",
                None,
                &[],
            ),
            (
                "  os: {name: windows}\n  hostUsers: true\n  containers: []\n",
                None,
                &["spec.hostUsers"],
            ),
            (
                "  os: {name: windows}\n  containers: [{name: c, securityContext: {privileged: false}}]\n",
                None,
                &["spec.containers[0].securityContext.privileged"],
            ),
            // spec.os linux or invalid: validateWindows does not run.
            (
                "  os: {name: linux}\n  hostPID: true\n  containers: []\n",
                None,
                &[],
            ),
            (
                "  os: {name: Windows}\n  hostPID: true\n  containers: []\n",
                Some(PodOs::Windows),
                &[],
            ),
        ];
        for (body, os, want) in cases {
            let got = run(&pod(body), *os);
            assert_eq!(got, rows("windows-forbidden-field", want), "{body}");
        }
    }

    #[test]
    fn unsupported_field_fixes_do_what_the_message_says_and_leave_no_empty_map() {
        let body = "  securityContext: {runAsUser: 1000, runAsGroup: 3000}\n  containers: [{name: c, securityContext: {readOnlyRootFilesystem: true, windowsOptions: {runAsUserName: ContainerUser}}}]\n";
        let text = pod(body);
        let findings = run_template(&text, Some(PodOs::Windows), check);
        let unsupported: Vec<_> = findings
            .iter()
            .filter(|f| f.rule == "windows-unsupported-field")
            .collect();
        assert_eq!(unsupported.len(), 3, "{findings:?}");
        let mut value = object(&text).value;
        for f in &unsupported {
            assert!(
                f.message.contains("and set spec.os.name: windows"),
                "{}",
                f.message
            );
            let fix = f.fix.as_ref().unwrap();
            assert!(
                fix.description.ends_with("and set spec.os.name: windows"),
                "{}",
                fix.description
            );
            // Fixes of one round are applied one after the other; a removal of a map an earlier fix
            // already removed fails, as apply_fixes skips it.
            let mut next = value.clone();
            let patch: json_patch::Patch = serde_json::from_str(fix.patch.as_json()).unwrap();
            if json_patch::patch(&mut next, &patch).is_ok() {
                value = next;
            }
        }
        // The pod securityContext held only Linux-only fields: gone, not `{}`. The container's keeps
        // windowsOptions.
        assert!(value["spec"].get("securityContext").is_none(), "{value}");
        assert_eq!(
            value["spec"]["containers"][0]["securityContext"],
            serde_json::json!({"windowsOptions": {"runAsUserName": "ContainerUser"}})
        );
        assert_eq!(value["spec"]["os"], serde_json::json!({"name": "windows"}));
        // With pod-level resources, spec.os.name cannot be set yet: the fix only removes.
        let text = pod(&format!("  resources: {{limits: {{cpu: '1'}}}}\n{body}"));
        let findings = run_template(&text, Some(PodOs::Windows), check);
        for f in findings
            .iter()
            .filter(|f| f.rule == "windows-unsupported-field")
        {
            let fix = f.fix.as_ref().unwrap();
            assert!(
                !fix.description.contains("spec.os.name"),
                "{}",
                fix.description
            );
            assert!(
                f.message.contains("once spec.resources is gone too"),
                "{}",
                f.message
            );
        }
    }

    #[test]
    fn inferred_windows_pods_get_warnings_not_errors() {
        // windows-unsupported-field: Windows by inference (placement says Windows) and no spec.os.
        let body = "  hostPID: true\n  resources: {limits: {cpu: '1'}}\n  securityContext: {runAsUser: 1}\n  containers: [{name: c, securityContext: {readOnlyRootFilesystem: true}}]\n";
        let got = run(&pod(body), Some(PodOs::Windows));
        let mut want = rows(
            "windows-unsupported-field",
            &[
                "spec.hostPID",
                "spec.securityContext.runAsUser",
                "spec.containers[0].securityContext.readOnlyRootFilesystem",
            ],
        );
        // Pod-level resources are a windows-unsupported-feature without spec.os.
        want.extend(rows("windows-unsupported-feature", &["spec.resources"]));
        assert_eq!(got, want);
        let findings = run_template(&pod(body), Some(PodOs::Windows), check);
        assert!(
            findings
                .iter()
                .take(3)
                .all(|f| f.severity == crate::Severity::Warning)
        );
        // Not Windows, a conflict, or an (invalid) spec.os present: nothing.
        for os in [PodOs::Any, PodOs::Linux, PodOs::Conflict] {
            assert_eq!(run(&pod(body), Some(os)), vec![], "{os:?}");
        }
        let invalid_os = format!("  os: {{name: Windows}}\n{body}");
        let got = run(&pod(&invalid_os), Some(PodOs::Windows));
        assert_eq!(
            got,
            rows("windows-unsupported-feature", &["spec.resources"])
        );
    }

    #[test]
    fn windows_options_on_linux_pods() {
        // kubernetes-windows-rules.md §1.3.
        let body = "  os: {name: linux}\n  securityContext: {windowsOptions: {runAsUserName: a}}\n  initContainers: [{name: i, securityContext: {windowsOptions: {hostProcess: false}}}]\n  containers: [{name: c, securityContext: {windowsOptions: {runAsUserName: b}}}, {name: d}]\n  ephemeralContainers: [{name: e, securityContext: {windowsOptions: {}}}]\n";
        let findings = run_template(&pod(body), None, check);
        assert_eq!(
            rule_paths(&findings),
            rows(
                "linux-forbidden-windows-options",
                &[
                    "spec.securityContext.windowsOptions",
                    "spec.initContainers[0].securityContext.windowsOptions",
                    "spec.containers[0].securityContext.windowsOptions",
                    "spec.ephemeralContainers[0].securityContext.windowsOptions",
                ]
            )
        );
        assert!(
            findings[0]
                .message
                .contains("Forbidden: windows options cannot be set for a linux pod")
        );
        // Windows pods and pods without spec.os may have windowsOptions.
        for body in [
            "  os: {name: windows}\n  containers: [{name: c, securityContext: {windowsOptions: {runAsUserName: b}}}]\n",
            "  containers: [{name: c, securityContext: {windowsOptions: {runAsUserName: b}}}]\n",
        ] {
            assert_eq!(run(&pod(body), None), vec![], "{body}");
        }
    }

    #[test]
    fn unsupported_features_table() {
        // (spec body, os, expected paths) — kubernetes-windows-rules.md §8, docs/rules/windows-unsupported-feature.md.
        let cases: &[(&str, Option<PodOs>, &[&str])] = &[
            (
                "  volumes: [{name: s, emptyDir: {medium: Memory}}, {name: t, emptyDir: {}}]\n  containers:\n  - name: c\n    resources: {limits: {hugepages-2Mi: 1Mi, memory: 1Mi}, requests: {hugepages-1Gi: 1Gi}}\n    volumeMounts: [{name: s, mountPath: 'C:\\s', mountPropagation: HostToContainer}, {name: t, mountPath: 'C:\\t', mountPropagation: None}, {name: t, mountPath: 'C:\\u', mountPropagation: Bidirectional}]\n    volumeDevices: [{name: t, devicePath: 'C:\\d'}]\n",
                Some(PodOs::Windows),
                &[
                    "spec.volumes[0].emptyDir.medium",
                    "spec.containers[0].resources.limits[hugepages-2Mi]",
                    "spec.containers[0].resources.requests[hugepages-1Gi]",
                    "spec.containers[0].volumeMounts[0].mountPropagation",
                    "spec.containers[0].volumeMounts[2].mountPropagation",
                    "spec.containers[0].volumeDevices",
                ],
            ),
            (
                "  hostNetwork: true\n  dnsPolicy: ClusterFirstWithHostNet\n  containers: [{name: c}]\n",
                Some(PodOs::Windows),
                &["spec.hostNetwork", "spec.dnsPolicy"],
            ),
            // HostProcess pods need hostNetwork.
            (
                "  hostNetwork: true\n  securityContext: {windowsOptions: {hostProcess: true}}\n  containers: [{name: c}]\n",
                Some(PodOs::Windows),
                &[],
            ),
            (
                "  hostNetwork: true\n  containers: [{name: c, securityContext: {windowsOptions: {hostProcess: true}}}]\n",
                Some(PodOs::Windows),
                &[],
            ),
            // Declared Windows: the same, whatever placement concluded.
            (
                "  os: {name: windows}\n  containers: [{name: c, volumeDevices: [{name: t, devicePath: d}]}]\n",
                Some(PodOs::Conflict),
                &["spec.containers[0].volumeDevices"],
            ),
            // Not Windows: nothing.
            (
                "  hostNetwork: true\n  volumes: [{name: s, emptyDir: {medium: Memory}}]\n  containers: [{name: c}]\n",
                Some(PodOs::Linux),
                &[],
            ),
            (
                "  hostNetwork: true\n  containers: [{name: c}]\n",
                Some(PodOs::Any),
                &[],
            ),
            (
                "  os: {name: linux}\n  hostNetwork: true\n  containers: [{name: c}]\n",
                Some(PodOs::Conflict),
                &[],
            ),
            (
                "  volumes: [{name: s, emptyDir: {medium: ''}}]\n  containers: [{name: c, volumeDevices: []}]\n",
                Some(PodOs::Windows),
                &[],
            ),
            // In-place resize (§10): every container list; an empty list says nothing.
            (
                "  initContainers: [{name: i, restartPolicy: Always, resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired}]}]\n  containers: [{name: c, resizePolicy: [{resourceName: memory, restartPolicy: RestartContainer}]}, {name: d, resizePolicy: []}]\n",
                Some(PodOs::Windows),
                &[
                    "spec.initContainers[0].resizePolicy",
                    "spec.containers[0].resizePolicy",
                ],
            ),
            (
                "  containers: [{name: c, resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired}]}]\n",
                Some(PodOs::Linux),
                &[],
            ),
        ];
        for (body, os, want) in cases {
            let got = run(&pod(body), *os);
            assert_eq!(got, rows("windows-unsupported-feature", want), "{body}");
        }
    }

    #[test]
    fn a_resize_policy_is_a_warning_that_says_who_refuses_the_resize() {
        // kubernetes-windows-rules.md §10: ValidatePodResize refuses declared Windows pods; a Windows
        // kubelet marks the others' resize infeasible. Neither refuses the pod itself.
        let body = "  containers: [{name: c, resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired}]}]\n";
        for (os_line, os, says) in [
            (
                "  os: {name: windows}\n",
                None,
                "`Forbidden: windows pods cannot be resized`",
            ),
            (
                "",
                Some(PodOs::Windows),
                "a Windows kubelet marks the resize of a Windows pod infeasible",
            ),
        ] {
            let text = pod(&format!("{os_line}{body}"));
            let found = run_template(&text, os, check);
            let f = found
                .iter()
                .find(|f| f.rule == "windows-unsupported-feature")
                .expect("finding");
            assert_eq!(f.severity, Severity::Warning);
            assert!(f.message.contains(says), "{}", f.message);
            assert!(f.fix.is_none());
        }
    }

    #[test]
    fn cluster_first_with_host_net_gives_the_reason_for_each_kind_of_pod() {
        // windows-host-network.md: HostProcess pods are on the host's network, but containerd drops
        // their DNS settings; other Windows pods are on a pod network.
        let message = |body: &str| {
            let text = format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  os: {{name: windows}}\n  dnsPolicy: ClusterFirstWithHostNet\n{body}"
            );
            let found = findings(
                &text,
                None,
                &Settings::default(),
                &["windows-unsupported-feature"],
            );
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(found[0].path, "spec.dnsPolicy");
            found[0].message.clone()
        };
        let host_process = message(
            "  hostNetwork: true\n  securityContext: {windowsOptions: {hostProcess: true}}\n  containers: [{name: c, image: i}]\n",
        );
        assert!(
            host_process
                .starts_with("This HostProcess pod uses dnsPolicy: ClusterFirstWithHostNet")
                && host_process
                    .contains("the pod is on the host's network, but containerd applies")
                && !host_process.contains("needs host networking"),
            "{host_process}"
        );
        let ordinary = message("  containers: [{name: c, image: i}]\n");
        assert!(
            ordinary.starts_with("This Windows pod uses dnsPolicy: ClusterFirstWithHostNet")
                && ordinary.contains("only HostProcess pods are"),
            "{ordinary}"
        );
    }

    #[test]
    fn stop_signal_table() {
        // kubernetes-windows-rules.md §1.4.
        let cases: &[(&str, &str, &str)] = &[
            (
                "",
                "SIGTERM",
                "may not be set for containers with empty `spec.os.name`",
            ),
            (
                "  os: {name: windows}\n",
                "SIGINT",
                "supported values: \"SIGKILL\", \"SIGTERM\"",
            ),
            (
                "  os: {name: linux}\n",
                "SIGFOO",
                "Unsupported value: \"SIGFOO\"",
            ),
            (
                "  os: {name: linux}\n",
                "sigterm",
                "Unsupported value: \"sigterm\"",
            ),
        ];
        for (os, signal, msg) in cases {
            let body =
                format!("{os}  containers: [{{name: c, lifecycle: {{stopSignal: '{signal}'}}}}]\n");
            let findings = run_template(&pod(&body), None, check);
            assert_eq!(
                rule_paths(&findings),
                rows(
                    "stop-signal-invalid",
                    &["spec.containers[0].lifecycle.stopSignal"]
                ),
                "{body}"
            );
            assert!(findings[0].message.contains(msg), "{}", findings[0].message);
        }
        let valid = [
            ("  os: {name: windows}\n", "SIGTERM"),
            ("  os: {name: windows}\n", "SIGKILL"),
            ("  os: {name: linux}\n", "SIGQUIT"),
            ("  os: {name: linux}\n", "SIGRTMIN+15"),
            ("  os: {name: linux}\n", "SIGRTMAX-1"),
            // An invalid spec.os.name: upstream skips the OS checks (os-name-invalid reports it).
            ("  os: {name: Linux}\n", "SIGQUIT"),
        ];
        for (os, signal) in valid {
            let body =
                format!("{os}  containers: [{{name: c, lifecycle: {{stopSignal: '{signal}'}}}}]\n");
            assert_eq!(run(&pod(&body), None), vec![], "{body}");
        }
        assert_eq!(LINUX_STOP_SIGNALS.len(), 65);
    }

    #[test]
    fn workload_paths_carry_the_template_prefix() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      os: {name: windows}\n      hostPID: true\n      containers: [{name: c}]\n";
        assert_eq!(
            run(text, None),
            rows("windows-forbidden-field", &["spec.template.spec.hostPID"])
        );
    }
}
