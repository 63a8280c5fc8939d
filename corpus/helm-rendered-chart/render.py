"""Writes this case's input.yaml: chart/ rendered as `helm template shop chart/ -n shop` prints it.

Helm's own rendering (Helm v4's library through PyPI's helm-python-sdk: `Chart.render`) gives each
template's text; this assembles them as Helm's action package does (helm/helm pkg/action/action.go,
renderResources; pkg/release/v1/util/manifest_sorter.go and kind_sorter.go; docs/reference/helm-source.md):
templates in path order, partials (`_*`) and NOTES.txt left out, each split into its documents at `---`
lines, the documents sorted by kind in Helm's install order (stable), each written as
`---\n# Source: <template>\n<document>\n`. Run once (`python3 render.py` with helm-python-sdk installed);
the output is committed, so that the tests need no Helm.
"""

import re
from pathlib import Path

import helm_python as helm

HERE = Path(__file__).parent

# pkg/release/v1/util/kind_sorter.go, InstallOrder.
INSTALL_ORDER = [
    "PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
    "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
    "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole",
    "ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding",
    "RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
    "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService",
    "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
]
# pkg/release/v1/util/manifest.go, SplitManifests.
SEPARATOR = re.compile(r"(?m)^---[ \t]*")


def kind_of(document: str) -> str:
    found = re.search(r"(?m)^kind:\s*(\S+)", document)
    return found.group(1) if found else ""


def order(kind: str) -> tuple:
    # Known kinds in install order, then unknown ones alphabetically (lessByKind).
    if kind in INSTALL_ORDER:
        return (0, INSTALL_ORDER.index(kind), "")
    return (1, 0, kind)


def main() -> None:
    helm.disable_logging()
    with helm.Chart.load(str(HERE / "chart")) as chart:
        rendered = chart.render({}, name="shop", namespace="shop", is_install=True)
    manifests = []
    for path in sorted(rendered):
        base = path.rsplit("/", 1)[-1]
        if base.startswith("_") or base == "NOTES.txt" or not rendered[path].strip():
            continue
        for document in SEPARATOR.split(rendered[path].lstrip()):
            if document.strip():
                manifests.append((path, document.lstrip()))
    manifests.sort(key=lambda m: order(kind_of(m[1])))
    text = "".join(f"---\n# Source: {path}\n{document}\n" for path, document in manifests)
    (HERE / "input.yaml").write_text(text)


if __name__ == "__main__":
    main()
