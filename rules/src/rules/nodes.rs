//! Node hygiene (kubernetes-windows-rules.md §3.2, §5.2, §5.4): `windows-node-untainted`, `windows-node-missing-build-label`,
//! `windows-node-build-label-mismatch`, `windows-node-unsupported-version`, `windows-node-build-retired`,
//! `windows-node-containerd-unsupported` (on Nodes only: a pool's nodes have no runtime version yet),
//! for every Windows Node of the input (and of the cluster context, when the caller evaluates those
//! objects too).
//!
//! The Nodes made from a pool of an infrastructure file ([`crate::infra::NodePool::nodes`]) do not exist
//! yet: their findings speak of the pool and its file (`taints` in node group windows-ng of
//! eksctl.yaml), not of `kubectl` commands on a node, and [`check_pool`] reports them once per pool.
//! Such nodes get no `windows-node-missing-build-label`: the kubelet sets that label on every Windows node
//! it registers (§5.4), and a pool whose build the file does not tell is `node-pool-build-unknown`'s.

use k8s_openapi::api::core::v1::{Node, Taint};

use super::{Emitter, ObjectCx, RuleId};
use crate::finding::{Finding, Severity};
use crate::infra::{NodePool, POOL_ANNOTATION, POOL_TAINTS_ANNOTATION};
use crate::lifecycle;
use crate::model::{Object, decode, node_os};
use crate::path::FieldPath;
use crate::schedule::taints::{filters, is_condition_taint, taint_display};
use crate::settings::Settings;
use crate::windows::builds::{WindowsVersion, build_display};

/// The Windows build label the kubelet sets (`node.kubernetes.io/windows-build`, §5.4).
pub(crate) const BUILD_LABEL: &str = "node.kubernetes.io/windows-build";

/// What the node rules speak of, with the paths their findings point at.
enum Subject<'a> {
    /// A Node, by its name (`kubectl taint nodes <name> …`).
    Node(&'a str),
    /// The nodes a pool of an infrastructure file will make: the pool as messages name it
    /// (`node group windows-ng of eksctl.yaml`) and where its file writes taints (`taints`).
    Pool { pool: &'a str, taints: &'a str },
}

/// Where the findings of a [`Subject`] point: a Node's own fields, or the pool's fields in its file.
struct Paths {
    taints: FieldPath,
    build: FieldPath,
}

impl Paths {
    fn of_node() -> Paths {
        Paths {
            taints: FieldPath::root().field("spec").field("taints"),
            build: label_path(),
        }
    }
}

fn label_path() -> FieldPath {
    FieldPath::root()
        .field("metadata")
        .field("labels")
        .key(BUILD_LABEL)
}

/// The pool a node made from an infrastructure file stands for (its annotations), if it is one.
fn subject<'a>(node: &'a Node, name: &'a str) -> Subject<'a> {
    let annotations = node.metadata.annotations.as_ref();
    let get = |k: &str| annotations.and_then(|a| a.get(k)).map(String::as_str);
    match (get(POOL_ANNOTATION), get(POOL_TAINTS_ANNOTATION)) {
        (Some(pool), taints) => Subject::Pool {
            pool,
            taints: taints.unwrap_or("taints"),
        },
        _ => Subject::Node(name),
    }
}

/// Runs the node rules on one object (nothing unless it is a `v1` Node).
pub(crate) fn check(cx: &ObjectCx<'_>, out: &mut Emitter<'_>) {
    if cx.object.kind != "Node" || cx.object.api_version != "v1" {
        return;
    }
    let node: Node = match decode(&cx.object.value, &FieldPath::root()) {
        Ok(node) => node,
        Err(e) => {
            let message = super::invalid_message(&e.message);
            out.emit(RuleId::ManifestInvalid, &e.path, message, None);
            return;
        }
    };
    if node_os(&node) != Some("windows") {
        return;
    }
    let who = subject(&node, &cx.object.name);
    run(cx.settings, &node, &who, &Paths::of_node(), out);
}

/// The node rules on the Windows nodes of `pool`, once for the pool: reported on the pool's object,
/// at its line, with paths of its file (`nodeGroups[0].taints`). Nothing for a pool of another OS or
/// of an OS the file does not tell.
pub(crate) fn check_pool(
    pool: &NodePool,
    object: &Object,
    settings: &Settings,
    findings: &mut Vec<Finding>,
) {
    // One node stands for the pool: they are all alike but for their names.
    let one = NodePool {
        count: 1,
        ..pool.clone()
    };
    let Some(node) = one.nodes().into_iter().next() else {
        return;
    };
    if node_os(&node) != Some("windows") {
        return;
    }
    let at = FieldPath::parse(&pool.path);
    let paths = Paths {
        taints: at.join(&FieldPath::parse(pool.format.taints_field())),
        build: at,
    };
    let described = pool.describe();
    let who = Subject::Pool {
        pool: &described,
        taints: pool.format.taints_field(),
    };
    run(
        settings,
        &node,
        &who,
        &paths,
        &mut Emitter::new(object, settings, findings),
    );
}

fn run(settings: &Settings, node: &Node, who: &Subject<'_>, paths: &Paths, out: &mut Emitter<'_>) {
    untainted(settings, node, who, &paths.taints, out);
    if let Subject::Node(name) = who {
        build_label(name, node, out);
    }
    unsupported_version(settings, node, who, &paths.build, out);
    build_retired(settings, node, who, &paths.build, out);
    if let Subject::Node(_) = who {
        containerd_unsupported(settings, node, out);
    }
}

/// `windows-node-untainted`: no taint keeps pods without a toleration off the node.
///
/// The node is protected when it carries every taint of settings `windowsTaints`, or any other
/// `NoSchedule`/`NoExecute` taint that is not a node-condition taint (a cluster may use its own Windows
/// taint). `PreferNoSchedule` never filters (§3.2).
fn untainted(
    settings: &Settings,
    node: &Node,
    who: &Subject<'_>,
    path: &FieldPath,
    out: &mut Emitter<'_>,
) {
    let taints: &[Taint] = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or(&[]);
    let condition = |t: &Taint| is_condition_taint(&t.key);
    let own_filtering = taints.iter().any(|t| filters(t) && !condition(t));
    let wanted = &settings.windows_taints;
    let carries_settings = !wanted.is_empty()
        && wanted.iter().all(|w| {
            taints
                .iter()
                .any(|t| t.key == w.key && t.value == w.value && t.effect == w.effect)
        });
    if own_filtering || carries_settings {
        return;
    }
    let suggested = wanted
        .iter()
        .find(|t| filters(t))
        .map(taint_display)
        .unwrap_or_else(|| "os=windows:NoSchedule".to_string());
    // Say what the node carries: no taint at all, or only taints that do not keep pods off it.
    let has = if taints.is_empty() {
        match who {
            Subject::Node(_) => "has no taint".to_string(),
            Subject::Pool { .. } => "have no taint".to_string(),
        }
    } else {
        let mut why = Vec::new();
        if taints.iter().any(|t| !filters(t)) {
            why.push("PreferNoSchedule only lowers its score");
        }
        if taints.iter().any(|t| filters(t) && condition(t)) {
            why.push("node-condition taints go when the condition clears");
        }
        let shown: Vec<String> = taints.iter().map(taint_display).collect();
        let carry = match who {
            Subject::Node(_) => "carries only taints that do not keep pods off it",
            Subject::Pool { .. } => "carry only taints that do not keep pods off them",
        };
        format!("{carry} ({}: {})", shown.join(", "), why.join("; "))
    };
    let message = match who {
        Subject::Node(name) => match managed_pool(node) {
            // A managed pool makes its new nodes (scale-out, node image upgrade) from its own settings:
            // a taint set on a node with kubectl is not on them.
            Some(pool) => format!(
                "this Windows node {has}, so the scheduler may place Linux pods without an OS selector on it, where they cannot run; taint its node pool, not the node (a node's taint is lost when the pool adds or replaces nodes): {}, and give Windows pods the matching toleration",
                pool.command(&suggested)
            ),
            None => format!(
                "this Windows node {has}, so the scheduler may place Linux pods without an OS selector on it, where they cannot run; taint it (`kubectl taint nodes {name} {suggested}`) and give Windows pods the matching toleration"
            ),
        },
        Subject::Pool { pool, taints } => format!(
            "the Windows nodes of {pool} will {has}, so the scheduler may place Linux pods without an OS selector on them, where they cannot run; add the taint {suggested} under `{taints}:` in {pool} and give Windows pods the matching toleration"
        ),
    };
    out.emit(RuleId::WindowsNodeUntainted, path, message, None);
}

/// The managed node pool a node belongs to, by the label its platform sets (platforms.md §1.4, §3.3,
/// §4.4): its taints are the pool's.
enum ManagedPool<'n> {
    Aks(&'n str),
    Eks(&'n str),
    Gke(&'n str),
}

impl ManagedPool<'_> {
    /// How to give the pool the taint `taint` (`os=windows:NoSchedule`).
    fn command(&self, taint: &str) -> String {
        match self {
            ManagedPool::Aks(pool) => format!(
                "`az aks nodepool update --resource-group <group> --cluster-name <cluster> --name {pool} --node-taints {taint}` (AKS applies the pool's --node-taints to every node it makes)"
            ),
            ManagedPool::Eks(group) => format!(
                "add {taint} to the taints of node group {group} (eksctl's nodeGroups[].taints, or `aws eks update-nodegroup-config --taints` for a managed node group)"
            ),
            ManagedPool::Gke(pool) => format!(
                "`gcloud container node-pools update {pool} --cluster <cluster> --node-taints={taint}` (GKE applies the pool's taints to every node it makes)"
            ),
        }
    }
}

/// The managed node pool of `node`, from AKS's, EKS's and GKE's pool labels.
fn managed_pool(node: &Node) -> Option<ManagedPool<'_>> {
    let labels = node.metadata.labels.as_ref()?;
    let get = |k: &str| labels.get(k).map(String::as_str);
    get("kubernetes.azure.com/agentpool")
        .map(ManagedPool::Aks)
        .or_else(|| get("eks.amazonaws.com/nodegroup").map(ManagedPool::Eks))
        .or_else(|| get("alpha.eksctl.io/nodegroup-name").map(ManagedPool::Eks))
        .or_else(|| get("cloud.google.com/gke-nodepool").map(ManagedPool::Gke))
}

/// The node's kernel version as a Windows version (`status.nodeInfo.kernelVersion`).
fn kernel_version(node: &Node) -> Option<WindowsVersion> {
    let kv = node
        .status
        .as_ref()?
        .node_info
        .as_ref()?
        .kernel_version
        .as_str();
    WindowsVersion::from_kernel_version(kv)
}

fn label(node: &Node) -> Option<&str> {
    node.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(BUILD_LABEL))
        .map(String::as_str)
}

/// `windows-node-missing-build-label` and `windows-node-build-label-mismatch` (§5.4), on a Node (not
/// on a pool's nodes: the kubelet labels them, and they have no kernel version yet).
fn build_label(name: &str, node: &Node, out: &mut Emitter<'_>) {
    let path = label_path();
    let kernel = kernel_version(node).map(|v| v.label());
    match (label(node), kernel) {
        (None, kernel) => {
            let value = kernel.unwrap_or_else(|| "<major.minor.build>".to_string());
            let message = format!(
                "this Windows node has no {BUILD_LABEL} label, so pods that select a Windows build never land on it; label it with the build of its kernel version (`kubectl label node {name} {BUILD_LABEL}={value}`)"
            );
            out.emit(RuleId::WindowsNodeMissingBuildLabel, &path, message, None);
        }
        (Some(label), Some(kernel)) if label != kernel => {
            let message = format!(
                "this Windows node's {BUILD_LABEL} label says {label} but its kernel version is build {kernel}: pods pinned to {label} land here and fail with `The operating system of the container does not match the operating system of the host`; correct the label (`kubectl label node {name} --overwrite {BUILD_LABEL}={kernel}`)"
            );
            out.emit(RuleId::WindowsNodeBuildLabelMismatch, &path, message, None);
        }
        _ => {}
    }
}

/// The node's build (kernel version, else label) and the path of the field it was read from (the
/// label's is `label_at`: the Node's label, or the pool's field in its file).
fn node_build(node: &Node, label_at: &FieldPath) -> Option<(WindowsVersion, FieldPath)> {
    match kernel_version(node) {
        Some(v) => Some((v, FieldPath::parse("status.nodeInfo.kernelVersion"))),
        None => label(node)
            .and_then(WindowsVersion::parse)
            .map(|v| (v, label_at.clone())),
    }
}

/// `windows-node-unsupported-version`: the node's build (kernel version, else label) is not in
/// settings `supportedBuilds`.
fn unsupported_version(
    settings: &Settings,
    node: &Node,
    who: &Subject<'_>,
    label_at: &FieldPath,
    out: &mut Emitter<'_>,
) {
    let Some((version, path)) = node_build(node, label_at) else {
        return;
    };
    let key = |v: &WindowsVersion| (v.major, v.minor, v.build);
    let supported: Vec<WindowsVersion> = settings
        .supported_builds
        .iter()
        .filter_map(|b| WindowsVersion::parse(b))
        .collect();
    if supported.iter().any(|s| key(s) == key(&version)) {
        return;
    }
    let list: Vec<String> = supported.iter().map(|s| build_display(s.build)).collect();
    let running = if (version.major, version.minor) == (10, 0) {
        build_display(version.build)
    } else {
        version.label()
    };
    let list = if list.is_empty() {
        "none configured".to_string()
    } else {
        list.join(", ")
    };
    let message = match who {
        Subject::Node(_) => format!(
            "this Windows node runs {running}, which is not a supported build ({list}); replace it with a node of a supported build and move its workloads to matching images, or add the build to supportedBuilds if you run it deliberately"
        ),
        Subject::Pool { pool, .. } => format!(
            "the Windows nodes of {pool} will run {running}, which is not a supported build ({list}); give the pool a supported Windows Server release and move its workloads to matching images, or add the build to supportedBuilds if you run it deliberately"
        ),
    };
    out.emit(RuleId::WindowsNodeUnsupportedVersion, &path, message, None);
}

/// `windows-node-build-retired`: the node's platform (its labels, else the settings') has retired its
/// build by the date of setting `lifecycle.date`, or Microsoft's extended support of it has ended
/// (`lifecycle.md`). Silent without a date: the rules have no clock.
fn build_retired(
    settings: &Settings,
    node: &Node,
    who: &Subject<'_>,
    label_at: &FieldPath,
    out: &mut Emitter<'_>,
) {
    let lifecycle_settings = &settings.lifecycle;
    let Some(on) = lifecycle_settings.date else {
        return;
    };
    let Some((version, path)) = node_build(node, label_at) else {
        return;
    };
    let build = WindowsVersion::new(version.build).label();
    let platform = lifecycle::node_platform(node, lifecycle_settings, settings.platform);
    let Some(r) = lifecycle::retirement(lifecycle_settings, platform, &build, Some(on), None)
    else {
        return;
    };
    let owner = r.platform.title();
    let when = r.date.as_deref().unwrap_or("");
    let removed = (r.kind == lifecycle::Kind::Retired)
        .then(|| lifecycle::removal(lifecycle_settings, r.platform, &build))
        .flatten()
        .map(|d| {
            if lifecycle::Kind::Removed.holds(d.effective(), on) {
                format!("; its node images were removed on {d}, so the pool can no longer scale or reimage")
            } else {
                format!("; its node images are removed on {d}, after which the pool cannot scale or reimage")
            }
        })
        .unwrap_or_default();
    let how = match r.kind {
        lifecycle::Kind::ExtendedEnd => {
            format!(
                "Microsoft's extended support of it ended after {when}, its last supported day: no more security updates"
            )
        }
        lifecycle::Kind::Removed => format!("{owner} removed its node images on {when}"),
        _ => format!(
            "{owner} retired it on {when}: no new node images or patches, and no new pools of it"
        ),
    };
    let running = build_display(version.build);
    let (fact, what, source) = (&r.fact, &r.what, &r.source);
    let message = match who {
        Subject::Node(_) => format!(
            "this Windows node runs {running}, and as of {on} {how}{removed} ({fact}: {what}; source: {source}); move its workloads to images of a build {owner} still supports and replace the node with one of that build"
        ),
        Subject::Pool { pool, .. } => format!(
            "the Windows nodes of {pool} will run {running}, and as of {on} {how}{removed} ({fact}: {what}; source: {source}); give the pool a Windows Server release {owner} still supports and move its workloads to matching images"
        ),
    };
    out.emit(RuleId::WindowsNodeBuildRetired, &path, message, None);
}

/// The kubelet's minor (`v1.36.2` → 1.36) from `status.nodeInfo.kubeletVersion`.
fn kubelet_minor(node: &Node) -> Option<lifecycle::KubeMinor> {
    let v = node
        .status
        .as_ref()?
        .node_info
        .as_ref()?
        .kubelet_version
        .as_str();
    let v = v.trim().strip_prefix('v').unwrap_or(v.trim());
    let mut parts = v.split(['.', '-', '+']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some(lifecycle::KubeMinor::new(major, minor))
}

/// `windows-node-containerd-unsupported`: the node's containerd (`status.nodeInfo.containerRuntimeVersion`)
/// is a release known to be broken, a line past its end of life at setting `lifecycle.date`, or a line
/// the node's own kubelet minor is past the support of (`lifecycle.md`, "containerd").
fn containerd_unsupported(settings: &Settings, node: &Node, out: &mut Emitter<'_>) {
    use lifecycle::containerd::{self, ContainerdVersion, RuntimeKind};
    let Some(info) = node.status.as_ref().and_then(|s| s.node_info.as_ref()) else {
        return;
    };
    let Some(version) = ContainerdVersion::parse(&info.container_runtime_version) else {
        return;
    };
    let kubelet = kubelet_minor(node);
    let path = FieldPath::parse("status.nodeInfo.containerRuntimeVersion");
    for issue in containerd::issues(version, settings.lifecycle.date, kubelet) {
        let (fact, what, source) = (&issue.fact, &issue.what, &issue.source);
        let lines = &issue.versions;
        let message = match issue.kind {
            RuntimeKind::Broken => format!(
                "this Windows node runs containerd {version}, which fails every pod sandbox when its sandbox (pause) image is configured in a form the release mishandles: {what} ({fact}; source: {source}); winplace cannot see the node's containerd configuration: if pods start on this node it is not affected, else upgrade containerd to 2.3.4 or later (a newer node image), or configure the sandbox image by its full name with a tag alone or the digest alone"
            ),
            // No date checked in the words: the server re-runs the node rules each day, and a message
            // that named the day would change every node's finding every day.
            RuntimeKind::EndOfLife => format!(
                "this Windows node runs containerd {version}: its line {lines} is past its end of life ({}): no more fixes, security fixes included ({fact}: {what}; source: {source}); move the node to a node image with a supported containerd line",
                issue.date.as_deref().unwrap_or("")
            ),
            RuntimeKind::LastKubernetes | RuntimeKind::LastKubelet => format!(
                "this Windows node runs containerd {version} under kubelet {}, past Kubernetes {}, the last minor for containerd {lines} ({fact}: {what}; source: {source}); move the node to containerd 2.x (a newer node image) before or with the Kubernetes upgrade",
                kubelet.map(|k| k.to_string()).unwrap_or_default(),
                issue.kubernetes.as_deref().unwrap_or("")
            ),
        };
        // A release that breaks only some configurations, which the Node does not show: said, not
        // warned about (a healthy node gets no warning).
        let severity = match issue.kind {
            RuntimeKind::Broken => Severity::Info,
            _ => crate::catalog::meta(RuleId::WindowsNodeContainerdUnsupported).severity,
        };
        out.emit_as(
            RuleId::WindowsNodeContainerdUnsupported,
            severity,
            &path,
            message,
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_kit::{findings, rule_paths, run_object};
    use crate::settings::Settings;
    use crate::test_kit::{NodeBuilder, node};
    use serde_json::{Value, json};

    /// The Windows node `n1` (OS label, `nodeInfo.operatingSystem`) with the build label when given, these
    /// taints and this kernelVersion.
    fn windows_n1(build_label: Option<&str>, taints: Value, kernel: &str) -> NodeBuilder {
        let n = node("n1").os("windows");
        let n = match build_label {
            Some(build) => n.build(build),
            None => n,
        };
        n.taints(taints)
            .info("operatingSystem", "windows")
            .kernel(kernel)
    }

    /// The Windows taint, the one taint of most of these nodes.
    fn os_taint() -> Value {
        json!([{"key": "os", "value": "windows", "effect": "NoSchedule"}])
    }

    /// A node of the table and the (rule, path) of the findings it gets.
    struct NodeCase {
        build_label: Option<&'static str>,
        taints: Value,
        kernel: &'static str,
        want: Vec<(&'static str, &'static str)>,
    }

    #[test]
    fn node_rules_table() {
        // kubernetes-windows-rules.md §3.2, §5.2, §5.4.
        let label_path = "metadata.labels[node.kubernetes.io/windows-build]";
        let cases = vec![
            NodeCase {
                build_label: Some("10.0.20348"),
                taints: os_taint(),
                kernel: "10.0.20348.2762",
                want: vec![],
            },
            NodeCase {
                build_label: Some("10.0.26100"),
                taints: os_taint(),
                kernel: "10.0.26100.1",
                want: vec![],
            },
            // Untainted; PreferNoSchedule and condition taints do not count; another NoExecute taint does.
            NodeCase {
                build_label: Some("10.0.20348"),
                taints: json!([]),
                kernel: "10.0.20348.2762",
                want: vec![("windows-node-untainted", "spec.taints")],
            },
            NodeCase {
                build_label: Some("10.0.20348"),
                taints: json!([{"key": "os", "value": "windows", "effect": "PreferNoSchedule"}]),
                kernel: "10.0.20348.2762",
                want: vec![("windows-node-untainted", "spec.taints")],
            },
            NodeCase {
                build_label: Some("10.0.20348"),
                taints: json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]),
                kernel: "10.0.20348.2762",
                want: vec![("windows-node-untainted", "spec.taints")],
            },
            NodeCase {
                build_label: Some("10.0.20348"),
                taints: json!([{"key": "sku", "value": "win", "effect": "NoExecute"}]),
                kernel: "10.0.20348.2762",
                want: vec![],
            },
            // GKE's Windows taint is under node.kubernetes.io/ but is no node-condition taint (platforms.md §4.3).
            NodeCase {
                build_label: Some("10.0.20348"),
                taints: json!([{"key": "node.kubernetes.io/os", "value": "windows", "effect": "NoSchedule"}]),
                kernel: "10.0.20348.2762",
                want: vec![],
            },
            // Missing label (build known from the kernel, supported).
            NodeCase {
                build_label: None,
                taints: os_taint(),
                kernel: "10.0.20348.2762",
                want: vec![("windows-node-missing-build-label", label_path)],
            },
            // Label differs from the kernel.
            NodeCase {
                build_label: Some("10.0.17763"),
                taints: os_taint(),
                kernel: "10.0.20348.2762",
                want: vec![("windows-node-build-label-mismatch", label_path)],
            },
            // Unsupported: from the kernel, else from the label.
            NodeCase {
                build_label: Some("10.0.17763"),
                taints: os_taint(),
                kernel: "10.0.17763.6414",
                want: vec![(
                    "windows-node-unsupported-version",
                    "status.nodeInfo.kernelVersion",
                )],
            },
            NodeCase {
                build_label: Some("10.0.17763"),
                taints: os_taint(),
                kernel: "",
                want: vec![("windows-node-unsupported-version", label_path)],
            },
            // Legacy kernel version form.
            NodeCase {
                build_label: Some("10.0.14393"),
                taints: os_taint(),
                kernel: "10.0 14393 (14393.1715.amd64fre.rs1_release_inmarket.170906-1810)",
                want: vec![(
                    "windows-node-unsupported-version",
                    "status.nodeInfo.kernelVersion",
                )],
            },
            // Missing label and unknown build: only the label finding.
            NodeCase {
                build_label: None,
                taints: os_taint(),
                kernel: "",
                want: vec![("windows-node-missing-build-label", label_path)],
            },
        ];
        for case in cases {
            let text = windows_n1(case.build_label, case.taints, case.kernel).yaml();
            let got = rule_paths(&run_object(&text, &Settings::default(), check));
            let want: Vec<(String, String)> = case
                .want
                .iter()
                .map(|(r, p)| (r.to_string(), p.to_string()))
                .collect();
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn linux_nodes_and_other_kinds_are_ignored() {
        let linux = "apiVersion: v1\nkind: Node\nmetadata: {name: l, labels: {kubernetes.io/os: linux}}\nstatus: {nodeInfo: {operatingSystem: linux, kernelVersion: 6.1.0}}\n";
        assert!(run_object(linux, &Settings::default(), check).is_empty());
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n";
        assert!(run_object(pod, &Settings::default(), check).is_empty());
        // OS from nodeInfo only.
        let bare = "apiVersion: v1\nkind: Node\nmetadata: {name: w}\nstatus: {nodeInfo: {operatingSystem: windows, kernelVersion: 10.0.20348.1}}\n";
        let got: Vec<String> = run_object(bare, &Settings::default(), check)
            .into_iter()
            .map(|f| f.rule)
            .collect();
        assert_eq!(
            got,
            ["windows-node-untainted", "windows-node-missing-build-label"]
        );
    }

    #[test]
    fn settings_change_taints_and_builds() {
        let settings: Settings = serde_json::from_str(
            r#"{"windowsTaints": [{"key": "os", "value": "windows", "effect": "PreferNoSchedule"}], "supportedBuilds": ["10.0.17763"]}"#,
        )
        .expect("settings");
        let text = windows_n1(
            Some("10.0.17763"),
            json!([{"key": "os", "value": "windows", "effect": "PreferNoSchedule"}]),
            "10.0.17763.1",
        )
        .yaml();
        assert!(run_object(&text, &settings, check).is_empty());
        let f = run_object(
            &windows_n1(None, json!([]), "10.0.20348.1").yaml(),
            &Settings::default(),
            check,
        );
        assert!(
            f[0].message
                .contains("kubectl taint nodes n1 os=windows:NoSchedule"),
            "{}",
            f[0].message
        );
        assert!(
            f[1].message
                .contains("node.kubernetes.io/windows-build=10.0.20348"),
            "{}",
            f[1].message
        );
    }

    #[test]
    fn retired_builds_by_platform_and_date() {
        // (AKS pool label, if any; kernelVersion, settings, expected message parts; none = no finding) —
        // lifecycle.md.
        let aks = "win19";
        let rows: &[(&str, &str, &str, Option<&[&str]>)] = &[
            // No date: the rules have no clock, so no calendar is read.
            (aks, "10.0.17763.6414", "{}", None),
            (
                aks,
                "10.0.17763.6414",
                r#"{"lifecycle": {"date": "2026-02-28"}}"#,
                None,
            ),
            (
                aks,
                "10.0.17763.6414",
                r#"{"lifecycle": {"date": "2026-03-02"}}"#,
                Some(&[
                    "Windows Server 2019 (10.0.17763)",
                    "as of 2026-03-02 AKS retired it on 2026-03-01",
                    "images are removed on 2027-04-01",
                    "A1:",
                    "windows-server-2019-retirement.md",
                ]),
            ),
            (
                aks,
                "10.0.17763.6414",
                r#"{"lifecycle": {"date": "2027-04-02"}}"#,
                Some(&[
                    "AKS retired it on 2026-03-01",
                    "images were removed on 2027-04-01",
                ]),
            ),
            // A node without platform labels: Microsoft's calendar only, unless the preset names one.
            (
                "",
                "10.0.17763.6414",
                r#"{"lifecycle": {"date": "2026-03-02"}}"#,
                None,
            ),
            (
                "",
                "10.0.17763.6414",
                r#"{"platform": "aks", "lifecycle": {"date": "2026-03-02"}}"#,
                Some(&["AKS retired it"]),
            ),
            (
                "",
                "10.0.17763.6414",
                r#"{"lifecycle": {"date": "2029-01-09"}}"#,
                None,
            ),
            (
                "",
                "10.0.17763.6414",
                r#"{"lifecycle": {"date": "2029-01-10"}}"#,
                Some(&[
                    "Microsoft's extended support of it ended after 2029-01-09, its last supported day",
                    "M4:",
                ]),
            ),
            // AKS Arc by setting, though the node carries AKS's labels: month-only R1.
            (
                aks,
                "10.0.17763.6414",
                r#"{"lifecycle": {"date": "2026-03-02", "platform": "aks-arc"}}"#,
                Some(&["AKS Arc retired it on 2026-03", "R1:"]),
            ),
            // An override replaces the row.
            (
                aks,
                "10.0.20348.2762",
                r#"{"lifecycle": {"date": "2027-03-15", "overrides": [{"platform": "aks", "build": "10.0.20348", "retired": "2027-03-15"}]}}"#,
                Some(&[
                    "AKS retired it on 2027-03-15",
                    "settings: lifecycle.overrides[0]",
                ]),
            ),
            (
                aks,
                "10.0.20348.2762",
                r#"{"lifecycle": {"date": "2027-03-15"}}"#,
                None,
            ),
        ];
        for (extra, kernel, settings, want) in rows {
            let settings: Settings = serde_json::from_str(settings).expect("settings");
            let mut n = windows_n1(Some("10.0.17763"), os_taint(), kernel);
            if !extra.is_empty() {
                n = n.label("kubernetes.azure.com/agentpool", extra);
            }
            let found = findings(&n.yaml(), None, &settings, &["windows-node-build-retired"]);
            match want {
                None => assert!(found.is_empty(), "{extra} {kernel} {settings:?}: {found:?}"),
                Some(parts) => {
                    assert_eq!(found.len(), 1, "{extra} {kernel}: {found:?}");
                    assert_eq!(found[0].path, "status.nodeInfo.kernelVersion");
                    assert_eq!(found[0].severity, crate::Severity::Warning);
                    for part in *parts {
                        assert!(
                            found[0].message.contains(part),
                            "{part:?} not in {}",
                            found[0].message
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn containerd_per_line() {
        // A Windows node per containerd line (containerRuntimeVersion as the kubelet reports it), with its
        // kubelet version; lifecycle.md "containerd".
        let at = |runtime: &str, kubelet: &str, date: &str| {
            let text = windows_n1(Some("10.0.20348"), os_taint(), "10.0.20348.2762")
                .info("containerRuntimeVersion", runtime)
                .info("kubeletVersion", kubelet)
                .yaml();
            let settings: Settings =
                serde_json::from_str(&format!(r#"{{"lifecycle": {{"date": "{date}"}}}}"#))
                    .expect("settings");
            findings(
                &text,
                None,
                &settings,
                &["windows-node-containerd-unsupported"],
            )
        };
        // (runtime, kubelet, date, expected message parts; empty = no finding)
        let rows: &[(&str, &str, &str, &[&str])] = &[
            ("containerd://1.7.27", "v1.35.3", "2026-09-30", &[]),
            (
                "containerd://1.7.27",
                "v1.35.3",
                "2026-10-01",
                &["C1:", "past its end of life (2026-09)"],
            ),
            (
                "containerd://1.7.27",
                "v1.36.1",
                "2026-05-01",
                &["under kubelet 1.36, past Kubernetes 1.35", "C7:"],
            ),
            ("containerd://2.0.6", "v1.33.2", "2026-11-25", &[]),
            (
                "containerd://2.1.5",
                "v1.34.1",
                "2026-11-25",
                &["C3:", "(2026-07-03)"],
            ),
            (
                "containerd://2.2.5",
                "v1.35.0",
                "2026-11-06",
                &["C4:", "(2026-11-06)"],
            ),
            ("containerd://2.2.5", "v1.35.0", "2026-11-05", &[]),
            (
                "containerd://2.3.1",
                "v1.36.1",
                "2026-11-25",
                &[
                    "if pods start on this node it is not affected",
                    "C10;",
                    "2.3.4 or later",
                ],
            ),
            ("containerd://2.3.4", "v1.37.0", "2026-11-25", &[]),
            ("containerd://2.4.0", "v1.37.0", "2026-11-25", &[]),
            ("docker://20.10.7", "v1.23.0", "2026-11-25", &[]),
        ];
        for (runtime, kubelet, date, parts) in rows {
            let found = at(runtime, kubelet, date);
            if parts.is_empty() {
                assert!(found.is_empty(), "{runtime} {kubelet} {date}: {found:?}");
                continue;
            }
            assert_eq!(found.len(), 1, "{runtime} {kubelet} {date}: {found:?}");
            assert_eq!(found[0].path, "status.nodeInfo.containerRuntimeVersion");
            for part in *parts {
                assert!(
                    found[0].message.contains(part),
                    "{part:?} not in {}",
                    found[0].message
                );
            }
        }
    }

    #[test]
    fn nodes_made_from_a_pool_are_spoken_of_as_the_pool() {
        // The annotations infra::NodePool::nodes puts on the nodes it makes; no build label, untainted.
        let text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: win-3\n  labels: {kubernetes.io/os: windows}\n  annotations: {winplace.io/node-pool: node group win of c.yaml, winplace.io/node-pool-taints: taints}\n";
        let got = run_object(text, &Settings::default(), check);
        let rules: Vec<&str> = got.iter().map(|f| f.rule.as_str()).collect();
        assert_eq!(rules, ["windows-node-untainted"]);
        assert_eq!(got[0].path, "spec.taints");
        assert!(
            got[0]
                .message
                .starts_with("The Windows nodes of node group win of c.yaml will have no taint")
                && got[0]
                    .message
                    .contains("under `taints:` in node group win of c.yaml"),
            "{}",
            got[0].message
        );
    }

    #[test]
    fn undecodable_nodes_are_manifest_invalid() {
        let text = "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {kubernetes.io/os: [windows]}}\n";
        let got = rule_paths(&run_object(text, &Settings::default(), check));
        assert_eq!(
            got,
            vec![(
                "manifest-invalid".to_string(),
                "metadata.labels[kubernetes.io/os]".to_string()
            )]
        );
    }

    #[test]
    fn the_untainted_message_says_what_the_node_carries() {
        let message = |taints: Value| {
            let found = findings(
                &windows_n1(Some("10.0.20348"), taints.clone(), "10.0.20348.2762").yaml(),
                None,
                &Settings::default(),
                &["windows-node-untainted"],
            );
            assert_eq!(found.len(), 1, "{taints}: {found:?}");
            found[0].message.clone()
        };
        assert!(message(json!([])).starts_with("This Windows node has no taint, so"));
        let m = message(json!([
            {"key": "os", "value": "windows", "effect": "PreferNoSchedule"},
            {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}
        ]));
        assert!(
            m.starts_with("This Windows node carries only taints that do not keep pods off it (os=windows:PreferNoSchedule, node.kubernetes.io/not-ready:NoExecute: PreferNoSchedule only lowers its score; node-condition taints go when the condition clears), so"),
            "{m}"
        );
    }
}
