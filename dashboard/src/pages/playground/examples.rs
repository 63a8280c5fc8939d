//! Example manifests for the scenarios users hit, embedded at compile time from `dashboard/examples/`
//! (copies of corpus cases, so the build does not depend on the corpus).

/// One example: a title for the menu, the manifests, and the cluster they are meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    /// Stable id (the corpus case it was copied from).
    pub id: &'static str,
    /// What the example shows, for the menu.
    pub title: &'static str,
    /// The manifests.
    pub input: &'static str,
    /// Nodes and RuntimeClasses to paste as context, when the example needs a cluster.
    pub cluster: Option<&'static str>,
}

/// Shorthand for the table below.
macro_rules! example {
    ($id:literal, $title:literal) => {
        Example {
            id: $id,
            title: $title,
            input: include_str!(concat!("../../../examples/", $id, ".yaml")),
            cluster: None,
        }
    };
    ($id:literal, $title:literal, cluster) => {
        Example {
            id: $id,
            title: $title,
            input: include_str!(concat!("../../../examples/", $id, ".yaml")),
            cluster: Some(include_str!(concat!(
                "../../../examples/",
                $id,
                ".cluster.yaml"
            ))),
        }
    };
}

/// Every example, in menu order.
pub const EXAMPLES: &[Example] = &[
    example!(
        "windows-deployment-unpinned",
        "Windows Deployment with no selector or toleration"
    ),
    example!(
        "windows-deployment-pinned",
        "Windows Deployment pinned correctly (nothing to report)"
    ),
    example!(
        "linux-deployment-untainted-windows-node",
        "Linux Deployment, Windows node without a taint",
        cluster
    ),
    example!("build-mismatch", "2019 image pinned to 2022 nodes"),
    example!("os-conflict", "spec.os.name contradicts the node selector"),
    example!(
        "toleration-case-mismatch",
        "Toleration that differs from the taint by case"
    ),
    example!(
        "runtimeclass-pins-placement",
        "RuntimeClass that carries the placement"
    ),
    example!(
        "daemonset-tolerates-everything",
        "Linux DaemonSet that tolerates every taint"
    ),
    example!("mixed-os-containers", "Windows app with a Linux sidecar"),
    example!("yaml-parse-error", "YAML with a mis-indented key"),
];

/// Every example but the broken one, repeated: a few hundred documents that exercise the parser and
/// most rules (the page evaluates it once while idle so that a large paste runs optimized code).
pub fn warm_up_text() -> String {
    let docs: Vec<&str> = EXAMPLES
        .iter()
        .filter(|e| e.id != "yaml-parse-error")
        .map(|e| e.input)
        .collect();
    let one = docs.join("\n---\n");
    [one.as_str(); 20].join("\n---\n")
}

/// The example with id `id`.
pub fn find(id: &str) -> Option<&'static Example> {
    EXAMPLES.iter().find(|e| e.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use winplace_rules::{Checker, Report};

    fn check_text(file: &str, text: &str) -> Report {
        Checker::builder().build().report(file, text)
    }

    #[test]
    fn every_example_parses_or_fails_as_its_title_says() {
        for e in EXAMPLES {
            let report = check_text("input.yaml", e.input);
            let broken = e.id == "yaml-parse-error";
            assert_eq!(!report.parse_errors.is_empty(), broken, "{}", e.id);
            if let Some(cluster) = e.cluster {
                let ctx = super::super::eval::parse_context(cluster);
                assert!(ctx.problems.is_empty(), "{}: {:?}", e.id, ctx.problems);
            }
            assert_eq!(find(e.id), Some(e));
        }
        let warm = check_text("w.yaml", &warm_up_text());
        assert!(warm.parse_errors.is_empty(), "{:?}", warm.parse_errors);
        assert!(warm.findings.len() > 100, "{}", warm.findings.len());
        let quiet = check_text("input.yaml", EXAMPLES[1].input);
        assert!(
            quiet
                .findings
                .iter()
                .all(|f| f.severity != winplace_rules::Severity::Error)
        );
    }
}
