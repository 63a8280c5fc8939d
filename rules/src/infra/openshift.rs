//! OpenShift `MachineSet` (`machine.openshift.io/v1beta1`) (`platforms.md §5`).
//!
//! A MachineSet whose machine template carries `machine.openshift.io/os-id: Windows` makes Windows
//! nodes, which the Windows Machine Config Operator (WMCO) taints `os=Windows:NoSchedule`. The build is
//! read from the image when the image names one Windows Server release: the Azure image SKU
//! (`2022-datacenter-smalldisk`), the vSphere template name, the GCP image (`windows-2022-core`); an
//! AWS AMI id tells nothing, and the build is then reported unknown. Labels and taints are the machine
//! template's `spec.metadata.labels` and `spec.taints`.

use serde_json::Value;

use super::value::{FieldError, Reader, kubernetes_effect};
use super::{
    Format, InfraRead, NodePool, aws_arch, azure_arch, ltsc_build, read_document, single_year,
    taint,
};
use crate::finding::ObjectRef;
use crate::input::Document;
use crate::path::FieldPath;
use crate::windows::Os;

/// `apiVersion` of the format.
pub const API_VERSION: &str = "machine.openshift.io/v1beta1";

/// Whether a document is an OpenShift `MachineSet`.
pub fn is_machine_set(kind: &str, api_version: &str) -> bool {
    kind == "MachineSet" && api_version == API_VERSION
}

/// Reads one MachineSet.
pub fn read(doc: &Document, out: &mut InfraRead) {
    read_document(doc, out, "MachineSet", "/metadata/name", |r, name| {
        machine_set(r, name).map(std::iter::once)
    });
}

fn machine_set(r: &Reader<'_>, name: &str) -> Result<NodePool, FieldError> {
    let template = FieldPath::parse("spec.template");
    let os_id = r.str(
        &template
            .field("metadata")
            .field("labels")
            .key("machine.openshift.io/os-id"),
    )?;
    let provider = template.field("spec").field("providerSpec").field("value");
    let windows = os_id == Some("Windows");
    let (build, unknown, image_arch) = if windows {
        let (source, text) = image_text(r, &provider)?;
        match text.and_then(single_year).and_then(ltsc_build) {
            Some(b) => (Some(b.to_string()), None, None),
            None => (
                None,
                Some(match text {
                    Some(t) => format!("{source} `{t}` does not name one Windows Server release"),
                    None => format!("{source} does not name the Windows Server release"),
                }),
                None,
            ),
        }
    } else {
        let arch = match (
            r.str(&provider.field("instanceType"))?,
            r.str(&provider.field("vmSize"))?,
        ) {
            (Some(t), _) => Some(aws_arch(t)),
            (None, Some(s)) => Some(azure_arch(s)),
            _ => None,
        };
        (None, None, arch)
    };
    let labels = r.labels(&template.field("spec").field("metadata").field("labels"))?;
    let mut taints = r.taints(&template.field("spec").field("taints"), kubernetes_effect)?;
    if windows
        && !taints
            .iter()
            .any(|t| t.key == "os" && t.effect == "NoSchedule")
    {
        taints.push(taint("os", "Windows", "NoSchedule"));
    }
    let count = r.count(&FieldPath::parse("spec.replicas"))?.unwrap_or(1);
    let namespace = r
        .doc
        .value
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    let object = ObjectRef::new(API_VERSION, "MachineSet", namespace, name);
    Ok(NodePool {
        os: Some(if windows { Os::Windows } else { Os::Linux }),
        arch: Some(image_arch.unwrap_or("amd64").to_string()),
        build,
        unknown,
        labels,
        taints,
        count: count.max(1),
        ..NodePool::at(r, &FieldPath::root(), Format::OpenShift, object, name)
    })
}

/// The field of the provider spec that names the Windows image, and its text.
fn image_text<'a>(
    r: &Reader<'a>,
    provider: &FieldPath,
) -> Result<(&'static str, Option<&'a str>), FieldError> {
    if let Some(sku) = r.str(&provider.field("image").field("sku"))? {
        return Ok(("the Azure image SKU", Some(sku)));
    }
    if let Some(template) = r.str(&provider.field("template"))? {
        return Ok(("the vSphere template", Some(template)));
    }
    if let Some(image) = r.str(&provider.field("disks").index(0).field("image"))? {
        return Ok(("the GCP image", Some(image)));
    }
    if let Some(ami) = r.str(&provider.field("ami").field("id"))? {
        return Ok(("the AWS AMI id", Some(ami)));
    }
    Ok(("the provider spec", None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infra::read;
    use crate::input::{Limits, parse};

    fn machine_set(provider: &str) -> String {
        format!(
            "apiVersion: machine.openshift.io/v1beta1\nkind: MachineSet\nmetadata: {{name: win, namespace: openshift-machine-api}}\nspec:\n  replicas: 2\n  template:\n    metadata:\n      labels:\n        machine.openshift.io/os-id: Windows\n    spec:\n      metadata:\n        labels:\n          node-role.kubernetes.io/worker: \"\"\n      providerSpec:\n        value:\n{provider}"
        )
    }

    #[test]
    fn build_from_image_or_unknown() {
        let rows = [
            (
                "          image: {offer: WindowsServer, publisher: MicrosoftWindowsServer, sku: 2022-datacenter-smalldisk, version: latest}\n",
                Some("10.0.20348"),
            ),
            (
                "          template: windows-server-2019-golden\n",
                Some("10.0.17763"),
            ),
            (
                "          disks:\n          - image: projects/windows-cloud/global/images/family/windows-2022-core\n",
                Some("10.0.20348"),
            ),
            ("          ami: {id: ami-0123456789abcdef0}\n", None),
            ("          template: windows-golden\n", None),
        ];
        for (provider, build) in rows {
            let read = read(&parse("m.yaml", &machine_set(provider), &Limits::default()).documents);
            assert!(read.errors.is_empty(), "{:?}", read.errors);
            let p = &read.pools[0];
            assert_eq!(p.os, Some(Os::Windows));
            assert_eq!(p.build.as_deref(), build, "{provider}");
            assert_eq!(p.unknown.is_some(), build.is_none(), "{provider}");
            assert_eq!(p.count, 2);
            assert_eq!(p.labels["node-role.kubernetes.io/worker"], "");
            let t = &p.taints[0];
            assert_eq!(
                (t.key.as_str(), t.value.as_deref(), t.effect.as_str()),
                ("os", Some("Windows"), "NoSchedule")
            );
        }
    }

    #[test]
    fn linux_machine_sets_are_untainted_linux_pools() {
        let text = "apiVersion: machine.openshift.io/v1beta1\nkind: MachineSet\nmetadata: {name: workers}\nspec:\n  template:\n    spec:\n      providerSpec:\n        value: {instanceType: m6g.xlarge}\n";
        let read = read(&parse("m.yaml", text, &Limits::default()).documents);
        let p = &read.pools[0];
        assert_eq!(
            (p.os, p.arch.as_deref(), p.taints.len()),
            (Some(Os::Linux), Some("arm64"), 0)
        );
    }
}
