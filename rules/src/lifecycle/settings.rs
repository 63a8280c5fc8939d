//! The `lifecycle` setting: the date the calendar is read at, whose calendar holds, and dated facts that
//! replace the calendar's where sources disagree or a team knows better.

use serde::{Deserialize, Serialize};

use super::date::{Date, KubeMinor};
use super::{Kind, LifecyclePlatform};
use crate::invalid_setting::InvalidSetting;

/// Setting `lifecycle`.
///
/// ```
/// use winplace_rules::Settings;
/// let s = Settings::from_text("s.yaml", "lifecycle:\n  date: 2026-03-02\n  overrides:\n  - {platform: aks, build: 10.0.20348, retired: 2027-03-15}\n").unwrap();
/// assert_eq!(s.lifecycle.date.map(|d| d.to_string()).as_deref(), Some("2026-03-02"));
/// let err = Settings::from_text("s.yaml", "lifecycle:\n  overrides:\n  - {platform: aks, build: ltsc2022, retired: 2027-03-15}\n").unwrap_err();
/// assert_eq!(err.setting.as_deref(), Some("lifecycle.overrides[0].build"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct LifecycleSettings {
    /// The date the calendar is read at (`YYYY-MM-DD`). The rules have no clock: `winplace check`,
    /// `audit` and `serve` fill in today when it is not set; the policy, the playground and the crate
    /// read no calendar without it (`windows-node-build-retired` stays silent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<Date>,
    /// The calendar of every node, whatever its labels say (`aks-arc`: no label tells AKS Arc nodes
    /// from AKS ones); by default the node's labels, else the `platform` setting's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<LifecyclePlatform>,
    /// Dated facts that replace the calendar's row of the same platform, build and kind.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<LifecycleOverride>,
}

/// One override: a platform's dates for a build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LifecycleOverride {
    /// Whose calendar.
    pub platform: LifecyclePlatform,
    /// The Windows build (`10.0.20348`).
    pub build: String,
    /// The date the platform retires the build (no new images, patches or pools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retired: Option<Date>,
    /// The date the platform deletes the build's images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<Date>,
    /// The highest Kubernetes minor with images of the build (quoted: `'1.36'`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_kubernetes: Option<KubeMinor>,
}

impl LifecycleOverride {
    /// The facts it sets: (kind, date, Kubernetes minor).
    pub(super) fn facts(
        &self,
    ) -> impl Iterator<Item = (Kind, Option<Date>, Option<KubeMinor>)> + '_ {
        [
            self.retired.map(|d| (Kind::Retired, Some(d), None)),
            self.removed.map(|d| (Kind::Removed, Some(d), None)),
            self.last_kubernetes
                .map(|k| (Kind::LastKubernetes, None, Some(k))),
        ]
        .into_iter()
        .flatten()
    }
}

impl LifecycleSettings {
    /// Whether nothing is set (then the setting is left out when settings are written).
    pub fn is_empty(&self) -> bool {
        *self == LifecycleSettings::default()
    }

    /// Checks the overrides; the error names the setting (`lifecycle.overrides[0].build`).
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        for (i, o) in self.overrides.iter().enumerate() {
            let at = format!("lifecycle.overrides[{i}]");
            match crate::windows::builds::WindowsVersion::parse(&o.build) {
                Some(v) if v.revision.is_none() => {}
                _ => {
                    return Err(InvalidSetting::new(
                        format!("{at}.build"),
                        format!("{:?} is not a Windows build such as 10.0.20348", o.build),
                    ));
                }
            }
            if o.facts().next().is_none() {
                return Err(InvalidSetting::new(
                    at,
                    "an override needs retired, removed or lastKubernetes",
                ));
            }
        }
        Ok(())
    }
}
