//! The rule catalogue: the metadata of every rule (id, family, default severity, title, summary, what it
//! needs, whether it is fixable), one row per [`RuleId`] ([`meta`]; [`rule`] looks a row up by its string
//! id). The rows are declared with the ids, once, in `id.rs`.
//!
//! The CLI (`winplace rules`), the dashboard's rules page and `docs/rules/README.md` all come from, or are
//! tested against, [`RULES`], so they cannot drift apart. Rule ids are stable; each has a page at
//! [`doc_url`].
//!
//! ```
//! use winplace_rules::catalog;
//! let meta = catalog::rule("windows-pod-without-os-selector").expect("known rule");
//! assert_eq!(meta.severity, winplace_rules::Severity::Error);
//! assert!(catalog::doc_url(meta.id).ends_with("/docs/rules/windows-pod-without-os-selector.md"));
//! ```

mod id;

use crate::Severity;
pub use id::{RuleId, UnknownRuleId};

/// Which part of the catalogue a rule belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Which OS the pod says it needs (`spec.os`, selectors, images) and whether that agrees.
    OsIdentity,
    /// Placement of pods that need Windows: OS selector, taint toleration, Windows build.
    WindowsPods,
    /// Linux pods that could land on Windows nodes.
    LinuxPods,
    /// RuntimeClass objects and how pods use them.
    RuntimeClass,
    /// Fields the API server would reject (or silently drop) for placement-relevant parts of a pod.
    ApiValidation,
    /// Rules that need the cluster's nodes: where the scheduler could really put a pod, and node hygiene.
    Cluster,
    /// Findings of the server's audit of running pods.
    LiveState,
}

impl Family {
    /// Every family, in catalogue order.
    pub const ALL: [Family; 7] = [
        Family::OsIdentity,
        Family::WindowsPods,
        Family::LinuxPods,
        Family::RuntimeClass,
        Family::ApiValidation,
        Family::Cluster,
        Family::LiveState,
    ];

    /// The kebab-case name used in JSON output (`windows-pods`).
    pub fn as_str(self) -> &'static str {
        match self {
            Family::OsIdentity => "os-identity",
            Family::WindowsPods => "windows-pods",
            Family::LinuxPods => "linux-pods",
            Family::RuntimeClass => "runtime-class",
            Family::ApiValidation => "api-validation",
            Family::Cluster => "cluster",
            Family::LiveState => "live-state",
        }
    }

    /// The heading used in documentation and the dashboard (`Windows pods`).
    pub fn title(self) -> &'static str {
        match self {
            Family::OsIdentity => "OS identity",
            Family::WindowsPods => "Windows pods",
            Family::LinuxPods => "Linux pods",
            Family::RuntimeClass => "RuntimeClass",
            Family::ApiValidation => "API validation",
            Family::Cluster => "Cluster",
            Family::LiveState => "Live state",
        }
    }
}

/// Metadata of one rule: the one table the CLI (`winplace rules`), the dashboard's rules page and
/// `docs/rules/README.md` come from.
#[derive(Debug, Clone, Copy, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleMeta {
    /// The rule this row describes: the row's key. Not serialized: `id` says it on the wire.
    #[serde(skip)]
    pub rule: RuleId,
    /// Stable kebab-case id (`windows-pod-without-os-selector`), `rule.as_str()`.
    pub id: &'static str,
    /// The part of the catalogue the rule belongs to.
    pub family: Family,
    /// Default severity; settings' `severity` overrides it, and a rule may raise it with cluster context
    /// (documented on the rule's page).
    pub severity: Severity,
    /// Short title (`Windows pod without OS selector`).
    pub title: &'static str,
    /// One or two sentences for an operator: what the rule detects and why it matters.
    pub summary: &'static str,
    /// Whether the rule's findings can carry a fix (`winplace check --fix`, admission `mutate`).
    pub fixable: bool,
    /// What the rule judges beyond the checked manifest. Not serialized: `needsContext` says what the
    /// dashboard and the API show of it.
    #[serde(skip)]
    pub needs: Needs,
    /// Whether the rule fires only with cluster context (nodes, RuntimeClasses) or live state
    /// ([`Needs::is_context`] of `needs`).
    pub needs_context: bool,
}

/// What a rule judges beyond the checked manifest: what a corpus case and the example on the rule's page
/// must give it for it to fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Needs {
    /// The manifest alone (Nodes and RuntimeClasses in the checked input count as cluster context too).
    Manifest,
    /// Cluster context: the cluster's Nodes and RuntimeClasses (`--cluster`, a snapshot, the live cluster).
    Cluster,
    /// A registry's answer about an image (`winplace check --resolve-images`, the server's registry
    /// client): no manifest alone triggers it, `server/tests/registry.rs` does.
    Registry,
    /// The live state of running pods (the server's audit): no manifest alone triggers it.
    LiveState,
}

impl Needs {
    /// Whether the rule fires only with cluster context or live state (`needsContext` on the wire).
    pub const fn is_context(self) -> bool {
        matches!(self, Needs::Cluster | Needs::LiveState)
    }

    /// Whether a manifest, with cluster context when needed, can trigger the rule: then it has a corpus
    /// case and its page's example runs through the crate.
    pub const fn by_manifest(self) -> bool {
        matches!(self, Needs::Manifest | Needs::Cluster)
    }
}

pub use id::RULES;

/// Whether `winplace export` turns a rule into an admission policy (docs/policy.md, "Without
/// Kubewarden"): the rule's CEL sits beside its Rust check (`rules/src/rules/cel/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Export {
    /// Exported as a ValidatingAdmissionPolicy.
    Yes,
    /// Not exported, and why.
    No(NotExported),
}

/// Why a rule is not exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotExported {
    /// It judges the cluster's Nodes or RuntimeClasses, which an admission policy does not see.
    ClusterContext,
    /// It reads image manifests from a registry.
    Registry,
    /// It judges running pods (the server's audit).
    LiveState,
    /// It judges a pod against another object (its RuntimeClass) or a whole file.
    MultiObject,
    /// It judges Nodes, RuntimeClasses or node pools, not workloads.
    NotAWorkload,
    /// It reads the retirement calendar at a date, or the node pools of infrastructure files.
    Calendar,
    /// One object is enough, but its CEL is not written yet: policy.wasm and `winplace check` have it.
    NotYetInCel,
}

impl NotExported {
    /// The reason, as `winplace export --list` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            NotExported::ClusterContext => "needs cluster context (Nodes, RuntimeClasses)",
            NotExported::Registry => "needs a registry (image manifests)",
            NotExported::LiveState => "needs live state (running pods)",
            NotExported::MultiObject => {
                "multi-object: judges a pod with its RuntimeClass or a whole file"
            }
            NotExported::NotAWorkload => "judges Nodes or RuntimeClasses, not workloads",
            NotExported::Calendar => "reads the retirement calendar at a date",
            NotExported::NotYetInCel => {
                "not yet written in CEL (policy.wasm and `winplace check` run it)"
            }
        }
    }
}

/// Whether rule `rule` is exported and, if not, why.
///
/// ```
/// use winplace_rules::catalog::{export, Export, NotExported};
/// use winplace_rules::catalog::RuleId;
/// assert_eq!(export(RuleId::OsConflict), Export::Yes);
/// assert_eq!(export(RuleId::ImageManifestUnresolved), Export::No(NotExported::Registry));
/// ```
pub const fn export(rule: RuleId) -> Export {
    use RuleId as R;
    let why = match rule {
        R::OsConflict
        | R::MixedOsContainers
        | R::WindowsPodWithoutOsSelector
        | R::WindowsPodWithoutToleration
        | R::TolerationCaseMismatch
        | R::WindowsPodWithoutBuildSelector
        | R::WindowsBuildMismatch
        | R::DeprecatedOsLabel
        | R::LinuxPodWithoutOsSelector
        | R::LinuxPodToleratesWindowsTaint
        | R::WindowsForbiddenField
        | R::LinuxForbiddenWindowsOptions
        | R::HostProcessInconsistent => return Export::Yes,
        R::RuntimeClassSelectorConflict
        | R::RuntimeClassOverheadMismatch
        | R::RuntimeClassUnchecked
        | R::NotChecked => NotExported::MultiObject,
        R::RuntimeClassDeprecatedApi
        | R::RuntimeClassDockerHandler
        | R::RuntimeClassHyperVHandler
        | R::WindowsNodeUntainted
        | R::WindowsNodeMissingBuildLabel
        | R::WindowsNodeBuildLabelMismatch
        | R::WindowsNodeUnsupportedVersion
        | R::WindowsNodeContainerdUnsupported
        | R::NodePoolBuildUnknown => NotExported::NotAWorkload,
        R::WindowsNodeBuildRetired => NotExported::Calendar,
        _ => match meta(rule).needs {
            Needs::Cluster => NotExported::ClusterContext,
            Needs::Registry => NotExported::Registry,
            Needs::LiveState => NotExported::LiveState,
            Needs::Manifest => NotExported::NotYetInCel,
        },
    };
    Export::No(why)
}

/// The metadata of `rule`.
///
/// ```
/// use winplace_rules::catalog::{self, RuleId};
/// assert_eq!(catalog::meta(RuleId::OsConflict).id, "os-conflict");
/// ```
pub const fn meta(rule: RuleId) -> &'static RuleMeta {
    &RULES[rule as usize]
}

/// The metadata of the rule whose id is `id`, or `None` for an unknown id.
pub fn rule(id: &str) -> Option<&'static RuleMeta> {
    id.parse().ok().map(meta)
}

/// The documentation page of rule `id`.
///
/// ```
/// assert_eq!(
///     winplace_rules::catalog::doc_url("os-conflict"),
///     "https://github.com/winplace/winplace/blob/main/docs/rules/os-conflict.md"
/// );
/// ```
pub fn doc_url(id: &str) -> String {
    format!("https://github.com/winplace/winplace/blob/main/docs/rules/{id}.md")
}

/// One rule as JSON: every field of the table plus `helpUri`, as `winplace rules --format json` and the
/// server's `/api/rules` print it.
pub fn rule_json(rule: &RuleMeta) -> serde_json::Value {
    serde_json::json!({
        "id": rule.id,
        "severity": rule.severity,
        "family": rule.family.as_str(),
        "title": rule.title,
        "summary": rule.summary,
        "fixable": rule.fixable,
        "needsContext": rule.needs_context,
        "helpUri": doc_url(rule.id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// `docs/rules/` beside the crate.
    fn docs_dir() -> std::path::PathBuf {
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/rules/")).to_path_buf()
    }

    fn read_doc(name: &str) -> String {
        let path = docs_dir().join(name);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    }

    /// A rule that judges Nodes is never "not yet written in CEL": there is no workload to admit.
    #[test]
    fn node_rules_say_they_judge_nodes() {
        for meta in RULES.iter().filter(|m| m.id.starts_with("windows-node-")) {
            let rule: RuleId = meta.id.parse().expect("declared");
            assert!(
                matches!(
                    export(rule),
                    Export::No(NotExported::NotAWorkload | NotExported::Calendar)
                ),
                "{}: {:?}",
                meta.id,
                export(rule)
            );
        }
    }

    fn is_kebab(id: &str) -> bool {
        !id.is_empty()
            && id.split('-').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            })
            && id.as_bytes()[0].is_ascii_lowercase()
    }

    #[test]
    fn ids_are_unique_and_kebab_case() {
        let mut seen = HashSet::new();
        for m in RULES {
            assert!(seen.insert(m.id), "duplicate rule id {}", m.id);
            assert!(is_kebab(m.id), "rule id {:?} is not kebab-case", m.id);
        }
    }

    #[test]
    fn every_rule_id_has_its_row() {
        assert_eq!(RULES.len(), RuleId::ALL.len());
        for id in RuleId::ALL {
            assert_eq!((meta(id).rule, meta(id).id), (id, id.as_str()));
            assert_eq!(rule(id.as_str()).map(|m| m.rule), Some(id));
        }
    }

    #[test]
    fn kebab_check_rejects_bad_ids() {
        for bad in [
            "",
            "Os-conflict",
            "os--conflict",
            "-os",
            "os-",
            "os_conflict",
            "1os",
        ] {
            assert!(!is_kebab(bad), "{bad:?} accepted");
        }
        assert!(is_kebab("os-conflict"));
    }

    #[test]
    fn titles_and_summaries_are_filled_in() {
        for m in RULES {
            assert!(!m.title.trim().is_empty(), "{} has no title", m.id);
            assert!(
                !m.title.contains('|'),
                "{} title breaks the README table",
                m.id
            );
            assert!(m.summary.trim().len() > 20, "{} has no summary", m.id);
        }
    }

    /// What the declarations must agree on among themselves: the live-state family is what needs live
    /// state, and nothing there can be fixed (a running pod is not rewritten); info is for notes, which
    /// have nothing to fix but one.
    #[test]
    fn needs_and_fixability_agree_with_family_and_severity() {
        for m in RULES {
            assert_eq!(
                m.family == Family::LiveState,
                m.needs == Needs::LiveState,
                "{}",
                m.id
            );
            assert_eq!(m.needs_context, m.needs.is_context(), "{}", m.id);
            // One info rule carries a fix: an exact build pin is valid today, and its fix (the range) is
            // what keeps it valid after an in-place upgrade of the pool.
            let info_with_fix = m.id == "windows-build-pin-too-narrow";
            if m.family == Family::LiveState || (m.severity == Severity::Info && !info_with_fix) {
                assert!(!m.fixable, "{} cannot be fixable", m.id);
            }
        }
        let by_manifest = |id: &str| rule(id).map(|m| m.needs.by_manifest());
        assert_eq!(by_manifest("windows-node-untainted"), Some(true));
        assert_eq!(by_manifest("image-manifest-unresolved"), Some(false));
        assert_eq!(by_manifest("pod-on-wrong-os"), Some(false));
    }

    #[test]
    fn lookup_and_doc_url() {
        assert_eq!(
            rule("unknown-field").map(|m| m.family),
            Some(Family::ApiValidation)
        );
        assert!(rule("no-such-rule").is_none());
        assert!(rule("").is_none());
        assert_eq!(
            doc_url("pod-image-os-error"),
            "https://github.com/winplace/winplace/blob/main/docs/rules/pod-image-os-error.md"
        );
    }

    #[test]
    fn serializes_for_the_dashboard() {
        let meta = rule("windows-pod-without-os-selector").expect("known rule");
        let json = serde_json::to_value(meta).expect("serializable");
        assert_eq!(json["id"], "windows-pod-without-os-selector");
        assert_eq!(json["family"], "windows-pods");
        assert_eq!(json["severity"], "error");
        assert_eq!(json["needsContext"], false);
        assert_eq!(json["fixable"], true);
        assert!(json.get("needs").is_none(), "{json}");
        for family in Family::ALL {
            assert_eq!(
                serde_json::to_value(family).expect("serializable"),
                family.as_str()
            );
        }
    }

    #[test]
    fn families_are_in_catalogue_order() {
        let order: Vec<usize> = RULES
            .iter()
            .map(|m| {
                Family::ALL
                    .iter()
                    .position(|f| *f == m.family)
                    .unwrap_or(usize::MAX)
            })
            .collect();
        assert!(
            order.windows(2).all(|w| w[0] <= w[1]),
            "RULES must be grouped by family"
        );
    }

    #[test]
    fn every_rule_has_a_docs_page_that_agrees() {
        for m in RULES {
            let page = read_doc(&format!("{}.md", m.id));
            let mut lines = page.lines();
            assert_eq!(
                lines.next(),
                Some(format!("# {}: {}", m.id, m.title).as_str()),
                "{}.md title line",
                m.id
            );
            let severity = format!("Severity: {}", m.severity.as_str());
            assert!(
                page.lines().any(|l| l.starts_with(&severity)),
                "{}.md lacks {severity:?}",
                m.id
            );
            let family = format!("Family: {}", m.family.title());
            assert!(
                page.lines().any(|l| l == family),
                "{}.md lacks {family:?}",
                m.id
            );
            for section in ["## What", "## Why", "## Fix", "## Example", "## References"] {
                assert!(
                    page.lines().any(|l| l == section),
                    "{}.md lacks {section}",
                    m.id
                );
            }
            assert!(page.contains("```yaml"), "{}.md has no YAML example", m.id);
        }
    }

    /// `readme` with the table of each family's section (`## <family title>`) written from [`RULES`]:
    /// `| [id](id.md) | severity | family | title |` rows under the table's header.
    fn with_catalogue_tables(readme: &str) -> String {
        let mut out = String::new();
        let mut family: Option<Family> = None;
        let mut lines = readme.lines().peekable();
        while let Some(line) = lines.next() {
            if let Some(heading) = line.strip_prefix("## ") {
                family = Family::ALL.into_iter().find(|f| f.title() == heading);
            }
            out.push_str(line);
            out.push('\n');
            let Some(f) = family.filter(|_| line == "|---|---|---|---|") else {
                continue;
            };
            while lines.next_if(|l| l.starts_with("| [")).is_some() {}
            for m in RULES.iter().filter(|m| m.family == f) {
                out.push_str(&format!(
                    "| [{id}]({id}.md) | {} | {} | {} |\n",
                    m.severity.as_str(),
                    f.title(),
                    m.title,
                    id = m.id
                ));
            }
        }
        out
    }

    /// `docs/rules/README.md`'s tables are the catalogue's, written from [`RULES`]; with
    /// `UPDATE_SNAPSHOTS=1` the test writes them (after a rule was declared) instead of failing.
    #[test]
    fn readme_tables_are_the_catalogue() {
        let readme = read_doc("README.md");
        let want = with_catalogue_tables(&readme);
        for f in Family::ALL {
            assert!(
                readme.lines().any(|l| l == format!("## {}", f.title())),
                "docs/rules/README.md has no section `## {}`",
                f.title()
            );
        }
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(docs_dir().join("README.md"), &want)
                .expect("write docs/rules/README.md");
            return;
        }
        assert!(
            readme == want,
            "docs/rules/README.md's tables differ from the catalogue: run \
             `UPDATE_SNAPSHOTS=1 cargo test -p winplace-rules --lib catalog` to write them"
        );
    }

    #[test]
    fn readme_tables_are_rewritten_from_the_catalogue() {
        let stale = "# t\n\n## OS identity\n\nWhich OS.\n\n| rule | severity | family | title |\n|---|---|---|---|\n| [gone](gone.md) | error | OS identity | Gone |\n\n## Other\n\n|---|---|---|---|\n| [kept](kept.md) | x | y | z |\n";
        let new = with_catalogue_tables(stale);
        assert!(!new.contains("gone"), "{new}");
        assert!(new.contains("| [kept](kept.md) | x | y | z |\n"), "{new}");
        assert!(new.contains(
            "|---|---|---|---|\n| [os-name-invalid](os-name-invalid.md) | error | OS identity | Invalid spec.os.name |\n"
        ));
        assert_eq!(with_catalogue_tables(&new), new);
    }
}
