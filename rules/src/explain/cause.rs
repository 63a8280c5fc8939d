//! Why a workload fails, in winplace's vocabulary: the one list the signatures and the matches share.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a workload fails, in winplace's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// The pod and the node (or the image and the node) are of different operating systems.
    OsMismatch,
    /// A Windows image of another build than the host's (process isolation).
    BuildMismatch,
    /// The image's index has no entry for the node's platform.
    NoPlatformInManifest,
    /// The pod does not tolerate a node's taint.
    UntoleratedTaint,
    /// The pod's nodeSelector or node affinity excludes the nodes.
    SelectorMismatch,
    /// The API server rejects a field of a Windows (or Linux) pod.
    ForbiddenWindowsField,
    /// RuntimeClass admission refused the pod.
    Runtimeclass,
    /// The nodes do not declare a feature the pod's spec needs (node declared features, Kubernetes 1.37).
    UndeclaredFeature,
}

impl Cause {
    /// Every cause.
    pub const ALL: [Cause; 8] = [
        Cause::OsMismatch,
        Cause::BuildMismatch,
        Cause::NoPlatformInManifest,
        Cause::UntoleratedTaint,
        Cause::SelectorMismatch,
        Cause::ForbiddenWindowsField,
        Cause::Runtimeclass,
        Cause::UndeclaredFeature,
    ];

    /// The kebab-case name (`build-mismatch`).
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::OsMismatch => "os-mismatch",
            Cause::BuildMismatch => "build-mismatch",
            Cause::NoPlatformInManifest => "no-platform-in-manifest",
            Cause::UntoleratedTaint => "untolerated-taint",
            Cause::SelectorMismatch => "selector-mismatch",
            Cause::ForbiddenWindowsField => "forbidden-windows-field",
            Cause::Runtimeclass => "runtimeclass",
            Cause::UndeclaredFeature => "undeclared-feature",
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}
