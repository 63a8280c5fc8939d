//! The two operating systems Kubernetes places pods on, [`Os`], as `spec.os.name` and the `kubernetes.io/os`
//! label spell them.
//!
//! Every other part of the crate (pods, nodes, images, settings) speaks of the OS through this one type, so
//! the exact, case-sensitive spelling the API server requires (kubernetes-windows-rules.md §1.1) is checked
//! in one place.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// An operating system a pod or image runs on (the values of `spec.os.name` and `kubernetes.io/os`).
///
/// ```
/// use winplace_rules::windows::Os;
/// assert_eq!("windows".parse::<Os>(), Ok(Os::Windows));
/// assert!("Windows".parse::<Os>().is_err()); // exact case, as the API server requires
/// assert_eq!(Os::Linux.to_string(), "linux");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Os {
    /// `linux`.
    Linux,
    /// `windows`.
    Windows,
}

impl Os {
    /// The lowercase name, `linux` or `windows`.
    pub fn as_str(self) -> &'static str {
        match self {
            Os::Linux => "linux",
            Os::Windows => "windows",
        }
    }
}

impl fmt::Display for Os {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an [`Os`]: the text was not exactly `linux` or `windows`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidOs(pub String);

impl fmt::Display for InvalidOs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not an OS: use exactly `linux` or `windows`",
            self.0
        )
    }
}

impl std::error::Error for InvalidOs {}

impl FromStr for Os {
    type Err = InvalidOs;

    /// Accepts exactly `linux` or `windows` (case-sensitive, like `validateOS`, §1.1).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "linux" => Ok(Os::Linux),
            "windows" => Ok(Os::Windows),
            _ => Err(InvalidOs(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_text() {
        // §1.1: exactly `linux` or `windows`.
        assert_eq!("linux".parse::<Os>(), Ok(Os::Linux));
        assert_eq!("windows".parse::<Os>(), Ok(Os::Windows));
        for bad in ["Linux", "WINDOWS", " windows", "", "darwin"] {
            assert!(bad.parse::<Os>().is_err(), "{bad:?}");
        }
        assert_eq!(Os::Windows.to_string(), "windows");
        assert_eq!(
            serde_json::to_string(&Os::Linux).ok().as_deref(),
            Some("\"linux\"")
        );
        assert_eq!(
            serde_json::from_str::<Os>("\"windows\"").ok(),
            Some(Os::Windows)
        );
        assert!(serde_json::from_str::<Os>("\"Windows\"").is_err());
    }
}
