//! The objects a message names: the pod, the node, the image, the platform and its Windows build, the
//! taints, the field, the RuntimeClass. Each reader looks for the fixed text the printing code puts
//! around the name (`image "…"`, `for pod "…"`, `{key: value}`), one forward scan each.

use serde::{Deserialize, Serialize};

/// What a message names (empty fields are left out of the JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Objects {
    /// The pod (`namespace/name` when the namespace is known, else `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    /// The node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The platform the runtime asked the image for (`windows/amd64 10.0.17763`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// A Windows build the message names, or (with context) the node's (`10.0.17763`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// The image's Windows builds, when the context tells them (`10.0.20348`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_build: Option<String>,
    /// Taints the scheduler names, `key=value`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taint: Vec<String>,
    /// Fields the API server names (`spec.containers[0].securityContext.privileged`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub field: Vec<String>,
    /// The RuntimeClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_class: Option<String>,
    /// How many of the cluster's nodes the scheduler excluded for this cause (`3 of 5`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
}

impl Objects {
    /// What is named, each as `what value`, in a fixed order: the one wording of the CLI's text and the
    /// playground.
    ///
    /// ```
    /// use winplace_rules::explain::Objects;
    /// let o = Objects { node: Some("win-1".into()), taint: vec!["os=windows".into()], ..Objects::default() };
    /// assert_eq!(o.named(), ["node win-1", "taint os=windows"]);
    /// ```
    pub fn named(&self) -> Vec<String> {
        let mut named: Vec<String> = [
            ("pod", &self.pod),
            ("node", &self.node),
            ("image", &self.image),
            ("platform", &self.platform),
            ("build", &self.build),
            ("image build", &self.image_build),
            ("RuntimeClass", &self.runtime_class),
            ("nodes excluded", &self.nodes),
        ]
        .into_iter()
        .filter_map(|(what, value)| Some(format!("{what} {}", value.as_ref()?)))
        .collect();
        if !self.taint.is_empty() {
            named.push(format!("taint {}", self.taint.join(", ")));
        }
        if !self.field.is_empty() {
            named.push(format!("field {}", self.field.join(", ")));
        }
        named
    }
}

/// The text after `prefix` up to (not including) `end`, for the first `prefix` in `line`.
fn between<'a>(line: &'a str, prefix: &str, end: char) -> Option<&'a str> {
    let at = line.find(prefix)? + prefix.len();
    let rest = &line[at..];
    let stop = rest.find(end)?;
    let found = &rest[..stop];
    (!found.is_empty() && found.len() <= 512).then_some(found)
}

/// The image a kubelet or runtime message names: `image "…"`.
pub(crate) fn image(line: &str) -> Option<String> {
    between(line, "image \"", '"').map(str::to_string)
}

/// The pod a message names: the sandbox's `for pod "…"`, a kubelet log's `pod="ns/name"`, the API
/// server's `The Pod "…" is invalid` / `pods "…" is forbidden`, an events table's `pod/name`.
pub(crate) fn pod(line: &str) -> Option<String> {
    between(line, "for pod \"", '"')
        .or_else(|| between(line, "pod=\"", '"'))
        .or_else(|| between(line, "The Pod \"", '"'))
        .or_else(|| between(line, "pods \"", '"'))
        .map(str::to_string)
        .or_else(|| {
            let at = line.find("pod/").or_else(|| line.find("Pod/"))?;
            let boundary = at == 0 || line[..at].ends_with([' ', '\t']);
            let name: String = line[at + 4..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'))
                .collect();
            (boundary && !name.is_empty()).then_some(name)
        })
}

/// The node a kubelet message names: `node="…"` in its logs, `kubelet, NODE` in old events' source;
/// the NodeDeclaredFeatureValidator's `not available on node "…"`.
pub(crate) fn node(line: &str) -> Option<String> {
    between(line, "node=\"", '"')
        .or_else(|| between(line, "available on node \"", '"'))
        .map(str::to_string)
        .or_else(|| {
            let rest = &line[line.find("kubelet, ")? + "kubelet, ".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'))
                .collect();
            (!name.is_empty()).then_some(name)
        })
}

/// The platform a pull error names, and its Windows build: moby's `windows/amd64 10.0.17763` and
/// containerd/platforms' `windows(10.0.26200)/amd64` (OS features after a `+` inside the parentheses).
pub(crate) fn platform(line: &str) -> Option<(String, Option<String>)> {
    let rest = &line[line.find("no matching manifest for ")? + "no matching manifest for ".len()..];
    let end = rest.find(" in the manifest list entries")?;
    let platform = rest[..end].trim();
    if platform.is_empty() || platform.len() > 200 {
        return None;
    }
    let build = if let Some(open) = platform.find('(') {
        // windows(10.0.26200)/amd64, windows(10.0.26200+win32k)/amd64
        let inner = &platform[open + 1..platform[open..].find(')').map(|c| open + c)?];
        inner.split('+').next().map(str::to_string)
    } else {
        // windows/amd64 10.0.17763
        platform.split_whitespace().nth(1).map(str::to_string)
    };
    let build = build.filter(|b| crate::windows::WindowsVersion::parse(b).is_some());
    Some((platform.to_string(), build))
}

/// The image's and the host's Windows builds in moby's refusal of an image of a newer build
/// (`a Windows version 10.0.16299-based image is incompatible with a 10.0.14393 host`), in that order.
pub(crate) fn uplevel_builds(line: &str) -> Option<(String, String)> {
    let image = between(line, "a Windows version ", '-')?;
    let host = between(line, "-based image is incompatible with a ", ' ')?;
    let valid = |b: &str| crate::windows::WindowsVersion::parse(b).is_some();
    (valid(image) && valid(host)).then(|| (image.to_string(), host.to_string()))
}

/// The OS of a platform string (`windows` of `windows(10.0.26200)/amd64`).
pub(crate) fn platform_os(platform: &str) -> &str {
    let end = platform.find(['/', '(', ' ']).unwrap_or(platform.len());
    &platform[..end]
}

/// The taints a scheduler message names: every `{key: value}` after `taint `, as `key=value`
/// (`key` alone when the value is empty).
pub(crate) fn taints(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("taint {") {
        rest = &rest[at + "taint {".len()..];
        let Some(end) = rest.find('}') else { break };
        let inner = &rest[..end];
        rest = &rest[end..];
        let (key, value) = inner.split_once(':').unwrap_or((inner, ""));
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() || key.len() > 317 {
            continue;
        }
        let taint = if value.is_empty() {
            key.to_string()
        } else {
            format!("{key}={value}")
        };
        if !out.contains(&taint) && out.len() < 16 {
            out.push(taint);
        }
    }
    out
}

/// How many of the nodes the scheduler's `0/N nodes are available: …` frame excludes for clauses
/// holding `needle` (`3 of 5`), reading the frame before its `preemption:` suffix only.
pub(crate) fn excluded_nodes(line: &str, needle: &str) -> Option<String> {
    let frame = &line[line.find("0/")?..];
    let frame = &frame[..frame.find("preemption:").unwrap_or(frame.len())];
    let total: String = frame[2..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let body = &frame[frame.find(": ")? + 2..];
    let mut excluded: u64 = 0;
    for clause in body.split(", ") {
        if clause.contains(needle) {
            let n: String = clause
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            excluded += n.parse::<u64>().unwrap_or(0);
        }
    }
    (!total.is_empty() && excluded > 0).then(|| format!("{excluded} of {total}"))
}

/// The fields an API server validation error names: `path: Forbidden: …` (one or a list of them).
pub(crate) fn forbidden_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(": Forbidden") {
        let before = &rest[..at];
        let start = before.rfind([' ', ',']).map(|i| i + 1).unwrap_or(0);
        let field = before[start..].trim_start_matches('[');
        if !field.is_empty() && field.len() <= 300 && !out.iter().any(|f| f == field) {
            out.push(field.to_string());
        }
        rest = &rest[at + ": Forbidden".len()..];
        if out.len() >= 32 {
            break;
        }
    }
    out
}

/// The RuntimeClass a RuntimeClass admission error names, and the conflicting selector key.
pub(crate) fn runtime_class(line: &str) -> (Option<String>, Option<String>) {
    let name = between(line, "RuntimeClass \"", '"').map(str::to_string);
    let key = between(line, "runtimeClass.scheduling.nodeSelector[", ']')
        .map(|k| format!("spec.nodeSelector[{k}]"));
    (name, key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_read_from_the_text_around_them() {
        assert_eq!(
            image(
                r#"Failed to pull image "mcr.microsoft.com/windows/servercore:ltsc2022": rpc error"#
            )
            .as_deref(),
            Some("mcr.microsoft.com/windows/servercore:ltsc2022")
        );
        assert_eq!(
            pod(r#"failed to start sandbox container for pod "kube-flannel-ds-windows-amd64-9tffg": Error"#).as_deref(),
            Some("kube-flannel-ds-windows-amd64-9tffg")
        );
        assert_eq!(
            pod("Warning   FailedScheduling   pod/cat-cka22-trb   0/3 nodes").as_deref(),
            Some("cat-cka22-trb")
        );
        assert_eq!(pod("nopod/x").as_deref(), None);
        assert_eq!(
            node("Warning  FailedCreatePodSandBox  37s  kubelet, w1  Failed").as_deref(),
            Some("w1")
        );
        assert_eq!(
            platform(
                "no matching manifest for windows/amd64 10.0.17763 in the manifest list entries"
            ),
            Some(("windows/amd64 10.0.17763".into(), Some("10.0.17763".into())))
        );
        assert_eq!(
            platform(
                "no matching manifest for windows(10.0.26200)/amd64 in the manifest list entries"
            ),
            Some((
                "windows(10.0.26200)/amd64".into(),
                Some("10.0.26200".into())
            ))
        );
        assert_eq!(
            platform("no matching manifest for linux/arm64/v8 in the manifest list entries"),
            Some(("linux/arm64/v8".into(), None))
        );
        assert_eq!(platform_os("windows(10.0.26200)/amd64"), "windows");
        assert_eq!(
            taints(
                "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) had untolerated taint {spray: mortein}."
            ),
            ["node-role.kubernetes.io/control-plane", "spray=mortein"]
        );
        assert_eq!(
            excluded_nodes("0/5 nodes are available: 2 node(s) had untolerated taint {os: windows}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.", "untolerated taint").as_deref(),
            Some("2 of 5")
        );
        assert_eq!(
            forbidden_fields(
                r#"The Pod "w" is invalid: [spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod, spec.containers[0].securityContext.privileged: Forbidden: cannot be set for a windows pod]"#
            ),
            [
                "spec.securityContext.runAsUser",
                "spec.containers[0].securityContext.privileged"
            ]
        );
        assert_eq!(
            runtime_class(
                r#"pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[kubernetes.io/os] = windows; pod.spec.nodeSelector[kubernetes.io/os] = linux"#
            ),
            (None, Some("spec.nodeSelector[kubernetes.io/os]".into()))
        );
    }
}
