//! Platform presets: the Windows-taint and Windows-build conventions of a managed platform, assumed when
//! no cluster context is given (`platforms.md §6`), and how its fixes pin builds (`platforms.md §8`).
//!
//! ```
//! use winplace_rules::{Settings, platform::Platform};
//! let s = Settings::for_platform(Platform::Eks);
//! assert!(s.windows_taints.is_empty()); // EKS taints no Windows node
//! assert_eq!(s.supported_builds, ["10.0.17763", "10.0.20348", "10.0.26100"]);
//! ```

use k8s_openapi::api::core::v1::Taint;
use serde::{Deserialize, Serialize};

/// A platform whose conventions winplace knows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// No platform: the defaults (`os=windows:NoSchedule`, Windows Server 2022 and 2025).
    #[default]
    Generic,
    /// Amazon EKS (eksctl, managed node groups, Karpenter).
    Eks,
    /// Azure Kubernetes Service.
    Aks,
    /// Google Kubernetes Engine.
    Gke,
    /// OpenShift with the Windows Machine Config Operator.
    Openshift,
}

impl Platform {
    /// Every platform.
    pub const ALL: [Platform; 5] = [
        Platform::Generic,
        Platform::Eks,
        Platform::Aks,
        Platform::Gke,
        Platform::Openshift,
    ];

    /// The name in settings and on the command line (`eks`).
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Generic => "generic",
            Platform::Eks => "eks",
            Platform::Aks => "aks",
            Platform::Gke => "gke",
            Platform::Openshift => "openshift",
        }
    }

    /// The taints the platform puts on Windows nodes (`platforms.md` §1.3, §3.3, §4.3, §5.2).
    pub fn windows_taints(self) -> Vec<Taint> {
        let taint = |key: &str, value: &str| Taint {
            key: key.into(),
            value: Some(value.into()),
            effect: "NoSchedule".into(),
            time_added: None,
        };
        match self {
            Platform::Generic => vec![taint("os", "windows")],
            Platform::Eks | Platform::Aks => Vec::new(),
            Platform::Gke => vec![taint("node.kubernetes.io/os", "windows")],
            Platform::Openshift => vec![taint("os", "Windows")],
        }
    }

    /// The Windows builds the platform offers node images for (`platforms.md` §1.2, §2.2, §3.2, §4.2,
    /// §6).
    pub fn supported_builds(self) -> Vec<String> {
        let builds: &[&str] = match self {
            Platform::Generic => &["10.0.20348", "10.0.26100"],
            Platform::Eks | Platform::Aks => &["10.0.17763", "10.0.20348", "10.0.26100"],
            Platform::Gke | Platform::Openshift => &["10.0.17763", "10.0.20348"],
        };
        builds.iter().map(|b| b.to_string()).collect()
    }
}

impl Platform {
    /// How the platform wants fixes to pin a Windows pod's build: `exact` on OpenShift, whose Windows
    /// Machine Config Operator requires the container base image to be "the same Windows OS version and
    /// build number that is running on the node" (`platforms.md` §8); `range` elsewhere (`platforms.md`
    /// §7: a pool upgraded in place keeps running images its new build runs).
    pub fn build_pinning(self) -> BuildPinning {
        match self {
            Platform::Openshift => BuildPinning::Exact,
            Platform::Generic | Platform::Eks | Platform::Aks | Platform::Gke => {
                BuildPinning::Range
            }
        }
    }
}

impl std::str::FromStr for Platform {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Platform::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| format!("unknown platform {s:?} (generic, eks, aks, gke, openshift)"))
    }
}

/// How a fix pins the Windows build of a pod (setting `buildPinning`).
///
/// ```
/// use winplace_rules::{Settings, settings::BuildPinning};
/// assert_eq!(Settings::default().build_pinning, BuildPinning::Range);
/// let s = Settings::from_text("s.yaml", "platform: openshift\n").unwrap();
/// assert_eq!(s.build_pinning, BuildPinning::Exact);
/// let err = Settings::from_text("s.yaml", "buildPinning: loose\n").unwrap_err();
/// assert_eq!(err.setting.as_deref(), Some("buildPinning"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildPinning {
    /// Every build of `supportedBuilds` and of the cluster that runs the pod's images, as required node
    /// affinity `node.kubernetes.io/windows-build In [...]`: the pin survives an in-place upgrade of the
    /// pool to a newer build that still runs the image (platforms.md §7).
    #[default]
    Range,
    /// The one build the image was built for, as the nodeSelector `node.kubernetes.io/windows-build`:
    /// for platforms that support only a container whose base image matches the node's build (OpenShift's
    /// Windows Machine Config Operator, platforms.md §8).
    Exact,
}

impl BuildPinning {
    /// The name in settings (`range`).
    pub fn as_str(self) -> &'static str {
        match self {
            BuildPinning::Range => "range",
            BuildPinning::Exact => "exact",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Settings;

    #[test]
    fn presets_fill_only_what_settings_left_at_default() {
        let s = Settings::from_text("s.yaml", "platform: gke\n").expect("valid");
        assert_eq!(s.platform, Platform::Gke);
        assert_eq!(s.windows_taints[0].key, "node.kubernetes.io/os");
        assert_eq!(s.supported_builds, ["10.0.17763", "10.0.20348"]);
        let s = Settings::from_text(
            "s.yaml",
            "platform: openshift\nsupportedBuilds: [10.0.26100]\n",
        )
        .expect("valid");
        assert_eq!(s.windows_taints[0].value.as_deref(), Some("Windows"));
        assert_eq!(s.supported_builds, ["10.0.26100"]);
        assert_eq!(s.build_pinning, BuildPinning::Exact);
        let s = Settings::from_text("s.yaml", "platform: openshift\nbuildPinning: range\n")
            .expect("valid");
        assert_eq!(s.build_pinning, BuildPinning::Range);
        let s = Settings::for_platform(Platform::Openshift);
        assert_eq!(s.build_pinning, BuildPinning::Exact);
        let err = Settings::from_text("s.yaml", "mutate: false\nplatform: k3s\n").expect_err("bad");
        assert_eq!((err.line, err.setting.as_deref()), (2, Some("platform")));
        assert_eq!(Settings::default().platform, Platform::Generic);
        for p in Platform::ALL {
            assert_eq!(p.as_str().parse::<Platform>(), Ok(p));
            let s = Settings::for_platform(p);
            assert!(s.validate().is_ok());
            assert_eq!(s.windows_taints, p.windows_taints());
            // Every reader of a `platform` setting gets the same settings.
            let json = format!("{{\"platform\": \"{}\"}}", p.as_str());
            assert_eq!(
                Settings::from_json("s.json", json.as_bytes()),
                Ok(s.clone())
            );
            assert_eq!(
                Settings::from_json_value("s", &serde_json::json!({"platform": p.as_str()})),
                Ok(s.clone())
            );
            assert_eq!(Settings::from_text_on("s.yaml", "", Some(p)), Ok(s));
        }
    }
}
