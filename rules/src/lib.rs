//! winplace rules: which OS and which Windows build a Kubernetes workload needs, where the scheduler could
//! put it, and what is wrong with it.
//!
//! The crate is pure (no I/O, no clocks, no globals) so that the same findings come out of the Kubewarden
//! policy (`wasm32-wasip1`), the browser playground (`wasm32-unknown-unknown`) and the native CLI and server.
//!
//! Where the code follows Kubernetes or Windows, its comments cite `kubernetes-windows-rules.md §N`: the
//! section of `docs/reference/kubernetes-windows-rules.md` (in the repository) that holds the upstream
//! fact, with its source.
//!
//! ```
//! let input = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n";
//! let report = winplace_rules::check_text("pod.yaml", input, None, &winplace_rules::Settings::default());
//! assert!(report.findings.iter().any(|f| f.rule == "windows-pod-without-os-selector"));
//! ```

#![warn(missing_docs)]

pub mod audit;
pub mod finding;
pub mod fix;
pub mod infra;
pub mod input;
pub mod model;
pub mod path;
pub mod placement;
pub mod plan;
pub mod platform;
pub mod rules;
pub mod schedule;
pub mod settings;
pub mod windows;

pub use finding::{Finding, Fix, ObjectRef, Report, Severity};
pub use input::{ParseError, ParsedInput};
pub use model::{ClusterContext, Object};
pub use path::FieldPath;
pub use settings::Settings;

/// Parses `text` (multi-document YAML or JSON, `List` objects allowed) and evaluates every object in it.
///
/// `file` names the input in findings and parse errors; `context` is the cluster (Nodes, RuntimeClasses)
/// when known.
pub fn check_text(
    file: &str,
    text: &str,
    context: Option<&ClusterContext>,
    settings: &Settings,
) -> Report {
    let limits = input::Limits::default();
    // Nodes and RuntimeClasses anywhere in the text are context for every object in it: a first pass
    // keeps only those, so that the second can evaluate and drop one document at a time.
    // Infrastructure files (eksctl, Karpenter, AKS/GKE pool lists, MachineSets) are kept too: they are
    // checked as the nodes they would make, and a Karpenter NodePool needs its EC2NodeClass.
    let mut own = Vec::new();
    let mut pools = Vec::new();
    if may_hold_context(text) {
        input::parse_each(file, text, &limits, &mut |read| {
            if let Ok(doc) = read {
                own.extend(
                    model::objects(std::slice::from_ref(&doc))
                        .into_iter()
                        .filter(|o| matches!(o.kind.as_str(), "Node" | "RuntimeClass")),
                );
                if may_describe_pools(&doc) {
                    pools.push(doc);
                }
            }
        });
    }
    let pools = infra::read(&pools);
    let pool_findings = infra::pool_findings(&pools, settings);
    let mut coverage = rules::coverage::Coverage::default();
    if !pools.pools.is_empty() || !pools.errors.is_empty() {
        coverage.saw_node_pools();
    }
    drop(pools);
    let merged = rules::merged_context(&own, context);
    drop(own);
    let context = merged.as_ref();
    let resolver = placement::Resolver::new(context, settings);
    let index = context
        .filter(|c| !c.nodes.is_empty())
        .map(placement::NodeIndex::from_context);
    let mut report = Report::default();
    input::parse_each(file, text, &limits, &mut |read| match read {
        Ok(doc) => {
            let objects = model::objects(std::slice::from_ref(&doc));
            coverage.see(&objects, settings);
            rules::evaluate_prepared(
                &objects,
                (context, &resolver, index.as_ref()),
                settings,
                &mut report.findings,
            );
        }
        Err(e) => report.parse_errors.push(e),
    });
    coverage.finish(settings, &mut report.findings);
    report.findings.extend(pool_findings);
    report.sort();
    report
}

/// Whether `text` may hold a Node or a RuntimeClass: a `kind` is written `Node` or `RuntimeClass` in
/// YAML and JSON, unless escaped (`\u004e`, YAML's `"\x4e"`), hence the backslash.
fn may_hold_context(text: &str) -> bool {
    text.contains("Node")
        || text.contains("RuntimeClass")
        || text.contains('\\')
        || text.contains("ClusterConfig")
        || text.contains("MachineSet")
        // `az aks nodepool list` and `gcloud container node-pools list` print JSON arrays.
        || text.trim_start().starts_with('[')
}

/// Whether a document may be an infrastructure file's (see [`infra::read`]): the kinds it reads, or
/// no kind at all (AKS and GKE pool lists).
fn may_describe_pools(doc: &input::Document) -> bool {
    matches!(
        doc.value.get("kind").and_then(|k| k.as_str()),
        None | Some("ClusterConfig" | "NodePool" | "EC2NodeClass" | "MachineSet")
    )
}

/// [`check_text`] with what a registry client learnt about the images ([`rules::ImageFacts`]; see
/// [`rules::evaluate_with_image_facts`]): `winplace check --resolve-images`.
pub fn check_text_with_images(
    file: &str,
    text: &str,
    context: Option<&ClusterContext>,
    settings: &Settings,
    facts: &rules::ImageFacts,
) -> Report {
    let parsed = input::parse(file, text, &input::Limits::default());
    let objects = model::objects(&parsed.documents);
    let mut report = Report {
        findings: rules::evaluate_with_image_facts(&objects, context, settings, facts),
        parse_errors: Vec::new(),
    };
    let pools = infra::read(&parsed.documents);
    report
        .findings
        .extend(infra::pool_findings(&pools, settings));
    let mut coverage = rules::coverage::Coverage::default();
    coverage.see(&objects, settings);
    if !pools.pools.is_empty() || !pools.errors.is_empty() {
        coverage.saw_node_pools();
    }
    coverage.finish(settings, &mut report.findings);
    report.parse_errors = parsed.errors;
    report.sort();
    report
}

/// Evaluates one object given as JSON (an admission request's object, a live cluster object).
///
/// Findings carry no file or line: the object did not come from text.
pub fn check_value(
    value: serde_json::Value,
    context: Option<&ClusterContext>,
    settings: &Settings,
) -> Vec<Finding> {
    let document = input::Document {
        file: String::new(),
        index: 0,
        line: 1,
        value,
        lines: input::LineMap::default(),
    };
    let objects = model::objects(std::slice::from_ref(&document));
    rules::evaluate(&objects, context, settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `check_text` did before it streamed: every document and object held at once.
    fn all_at_once(file: &str, text: &str, context: Option<&ClusterContext>) -> Report {
        let settings = Settings::default();
        let parsed = input::parse(file, text, &input::Limits::default());
        let objects = model::objects(&parsed.documents);
        let mut report = Report {
            findings: rules::evaluate(&objects, context, &settings),
            parse_errors: parsed.errors,
        };
        let mut coverage = rules::coverage::Coverage::default();
        coverage.see(&objects, &settings);
        coverage.finish(&settings, &mut report.findings);
        report.sort();
        report
    }

    #[test]
    fn streaming_check_equals_the_whole_text_at_once_with_context_anywhere_in_it() {
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  runtimeClassName: win\n  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n";
        // The Node and the RuntimeClass come after the pod and in a List: still its context.
        let later = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: w1\n    labels: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.17763}\n- apiVersion: node.k8s.io/v1\n  kind: RuntimeClass\n  metadata: {name: win}\n  handler: runhcs-wcow-process\n";
        let broken = "kind: [\n";
        let text = format!("{pod}---\n{broken}---\n{later}");
        let streamed = check_text("t.yaml", &text, None, &Settings::default());
        assert_eq!(streamed, all_at_once("t.yaml", &text, None));
        assert_eq!(streamed.parse_errors.len(), 1);
        let without_context = check_text("p.yaml", pod, None, &Settings::default());
        assert_ne!(
            streamed
                .findings
                .iter()
                .map(|f| &f.rule)
                .collect::<Vec<_>>(),
            without_context
                .findings
                .iter()
                .map(|f| &f.rule)
                .collect::<Vec<_>>(),
            "the later Node and RuntimeClass change the findings"
        );
        // With context given too, over every corpus input.
        let corpus = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus"));
        let mut inputs = 0;
        for entry in std::fs::read_dir(corpus).expect("corpus").flatten() {
            let Ok(text) = std::fs::read_to_string(entry.path().join("input.yaml")) else {
                continue;
            };
            let context = std::fs::read_to_string(entry.path().join("cluster.yaml"))
                .ok()
                .map(|c| {
                    let parsed = input::parse("c", &c, &input::Limits::default());
                    ClusterContext::from_objects(&model::objects(&parsed.documents)).0
                });
            assert_eq!(
                check_text("i.yaml", &text, context.as_ref(), &Settings::default()),
                all_at_once("i.yaml", &text, context.as_ref()),
                "{}",
                entry.path().display()
            );
            inputs += 1;
        }
        assert!(inputs > 10, "{inputs} corpus inputs");
    }
}
