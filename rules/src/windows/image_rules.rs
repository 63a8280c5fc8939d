//! The settings' image rules ([`ImageRule`]): an operator's globs that say which OS and builds their own
//! images need (docs/settings.md).
//!
//! No table knows private images; a rule does, and it is consulted before the built-in tables
//! ([`super::classify_image`]), so an operator can also correct a table.

use serde::{Deserialize, Serialize};

use super::builds::WindowsVersion;
use super::os::Os;
use super::reference::parse_image_ref;
use crate::invalid_setting::InvalidSetting;

/// A settings image rule: a glob on the image reference (`*` matches any run of characters, `/` included,
/// `?` exactly one), e.g. `myregistry.io/win/*`.
///
/// The pattern is matched against the reference as written in the pod **and** against its normalized form
/// (`docker.io/library/nginx:1.27` for `nginx:1.27`), so `docker.io/library/nginx*` also matches `nginx:1.27`.
/// A pattern without `*` must equal the whole reference, tag included.
///
/// ```
/// use winplace_rules::windows::{classify_image, ImageOs, ImageRule, Os};
/// let rule = ImageRule { pattern: "myregistry.io/win/*".into(), os: Os::Windows, builds: vec!["10.0.20348".into()] };
/// let class = classify_image("myregistry.io/win/app:1.0", &[rule]);
/// assert_eq!(class.os, ImageOs::Windows { builds: vec![20348] });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageRule {
    /// The glob pattern.
    pub pattern: String,
    /// The OS of matching images.
    pub os: Os,
    /// For Windows images, the builds they were built for, as `10.0.20348` (empty: unknown build).
    #[serde(default)]
    pub builds: Vec<String>,
}

impl ImageRule {
    /// Whether the rule's pattern matches `image` as written or in its normalized form.
    pub fn matches(&self, image: &str) -> bool {
        if glob_match(&self.pattern, image) {
            return true;
        }
        match parse_image_ref(image) {
            Some(reference) => {
                let normalized = reference.to_string();
                normalized != image && glob_match(&self.pattern, &normalized)
            }
            None => false,
        }
    }

    /// Checks the rule for settings validation: a non-empty pattern, builds only for Windows, and every build
    /// in the `10.0.20348` form. The error names the field (`pattern`, `builds`) and says what to do.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        if self.pattern.trim().is_empty() {
            return Err(InvalidSetting::new("pattern", "must not be empty"));
        }
        if self.os == Os::Linux && !self.builds.is_empty() {
            return Err(InvalidSetting::new(
                "builds",
                "only a Windows image rule can list builds",
            ));
        }
        for (i, build) in self.builds.iter().enumerate() {
            if WindowsVersion::parse(build).is_none() {
                return Err(InvalidSetting::new(
                    format!("builds[{i}]"),
                    format!("`{build}` is not a Windows build such as 10.0.20348"),
                ));
            }
        }
        Ok(())
    }

    /// The rule's build numbers, sorted and deduplicated; entries that do not parse are skipped
    /// ([`ImageRule::validate`] rejects them up front).
    pub fn build_numbers(&self) -> Vec<u32> {
        let mut builds: Vec<u32> = self
            .builds
            .iter()
            .filter_map(|b| WindowsVersion::parse(b))
            .map(|v| v.build)
            .collect();
        builds.sort_unstable();
        builds.dedup();
        builds
    }
}

/// Glob match: `*` matches any run of characters (including none and `/`), `?` exactly one character,
/// everything else itself (case-sensitive).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0usize, 0usize);
    // Position of the last `*` seen and the text position it was tried at; backtracking to it is enough
    // because a later `*` can absorb anything an earlier one could.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob() {
        let cases = [
            ("myregistry.io/win/*", "myregistry.io/win/app:1", true),
            ("myregistry.io/win/*", "myregistry.io/win/a/b/c", true),
            ("myregistry.io/win/*", "myregistry.io/linux/app", false),
            ("*", "", true),
            ("", "", true),
            ("", "a", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("*:ltsc2022", "x/y:ltsc2022", true),
            ("*:ltsc2022", "x/y:ltsc2019", false),
            ("*a*b*c", "xxaxxbxxbxc", true),
            ("*a*b*c", "xxaxxbxxbx", false),
            ("exact", "exact", true),
            ("exact", "exactly", false),
            ("**", "anything", true),
            ("é?", "éé", true),
        ];
        for (pattern, text, expected) in cases {
            assert_eq!(glob_match(pattern, text), expected, "{pattern} ~ {text}");
        }
    }

    #[test]
    fn image_rule_serde_and_validation() {
        let rule: Result<ImageRule, _> = serde_json::from_str(
            r#"{"pattern": "acme.io/*", "os": "windows", "builds": ["10.0.26100"]}"#,
        );
        let rule = rule.ok();
        assert_eq!(rule.as_ref().map(|r| r.build_numbers()), Some(vec![26100]));
        assert_eq!(rule.as_ref().map(|r| r.validate()), Some(Ok(())));
        let no_builds: Option<ImageRule> =
            serde_json::from_str(r#"{"pattern": "x", "os": "linux"}"#).ok();
        assert_eq!(no_builds.map(|r| r.builds.len()), Some(0));
        for bad in [
            r#"{"pattern": "x", "os": "Windows"}"#,
            r#"{"pattern": "x", "os": "windows", "build": []}"#,
            r#"{"os": "windows"}"#,
        ] {
            assert!(serde_json::from_str::<ImageRule>(bad).is_err(), "{bad}");
        }
        let rule = |pattern: &str, os: Os, builds: &[&str]| ImageRule {
            pattern: pattern.into(),
            os,
            builds: builds.iter().map(|b| b.to_string()).collect(),
        };
        assert!(rule(" ", Os::Windows, &[]).validate().is_err());
        assert!(rule("x", Os::Linux, &["10.0.20348"]).validate().is_err());
        let err = rule("x", Os::Windows, &["10.0.20348", "ltsc2022"]).validate();
        assert_eq!(
            err.map_err(|e| e.to_string()),
            Err("builds[1]: `ltsc2022` is not a Windows build such as 10.0.20348".to_string())
        );
        assert_eq!(
            rule("x", Os::Windows, &["junk"]).build_numbers(),
            Vec::<u32>::new()
        );
    }
}
