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
pub mod explain;
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
/// when known. The findings are sorted by line, rule and path ([`Report::sort`]).
pub fn check_text(
    file: &str,
    text: &str,
    context: Option<&ClusterContext>,
    settings: &Settings,
) -> Report {
    let mut report = Report::default();
    report.parse_errors = check_text_each(file, text, context, settings, &mut |finding| {
        report.findings.push(finding)
    });
    report
}

/// [`check_text`], handing each finding to `sink` as soon as its document is evaluated, in the order
/// [`check_text`] reports them, and returning the parse errors: a caller that writes the findings out
/// (`winplace check` on 100,000 documents) never holds those of the whole text.
///
/// ```
/// let input = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c, image: mcr.microsoft.com/windows/nanoserver:ltsc2022}]\n---\nkind: [\n";
/// let settings = winplace_rules::Settings::default();
/// let mut rules = Vec::new();
/// let errors = winplace_rules::check_text_each("pods.yaml", input, None, &settings, &mut |f| rules.push(f.rule));
/// assert!(rules.contains(&"windows-pod-without-os-selector".to_string()));
/// assert_eq!(errors.len(), 1);
/// ```
pub fn check_text_each(
    file: &str,
    text: &str,
    context: Option<&ClusterContext>,
    settings: &Settings,
    sink: &mut dyn FnMut(Finding),
) -> Vec<ParseError> {
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
    // The node pools' findings are known before the documents are evaluated: merged into their order.
    let mut pool_findings = infra::pool_findings(&pools, settings);
    pool_findings.sort_by(finding::order);
    let mut ordered = InOrder::new(pool_findings, sink);
    let mut coverage = rules::coverage::Coverage::default();
    if !pools.pools.is_empty() || !pools.errors.is_empty() {
        coverage.saw_node_pools();
    }
    drop(pools);
    let merged = rules::merged_context(&own, context);
    drop(own);
    let context = merged.as_deref();
    let resolver = placement::Resolver::new(context, settings);
    let index = context
        .filter(|c| !c.nodes.is_empty())
        .map(placement::NodeIndex::from_context);
    let mut parse_errors = Vec::new();
    let mut batch = Vec::new();
    input::parse_each(file, text, &limits, &mut |read| match read {
        Ok(doc) => {
            let objects = model::into_objects(doc);
            coverage.see(&objects, settings);
            rules::evaluate_prepared(
                &objects,
                (context, &resolver, index.as_ref()),
                settings,
                &mut batch,
            );
            // A document's findings lie on its own lines, after those of the documents before it.
            batch.sort_by(finding::order);
            ordered.send(batch.drain(..));
        }
        Err(e) => parse_errors.push(e),
    });
    let mut last = Vec::new();
    coverage.finish(settings, &mut last);
    ordered.send(last.into_iter());
    ordered.finish();
    parse_errors
}

/// Hands findings to a sink in [`Report::sort`]'s order, merging in findings known beforehand (sorted)
/// as the ones sent in order pass them.
struct InOrder<'s> {
    known: std::collections::VecDeque<Finding>,
    sink: &'s mut dyn FnMut(Finding),
}

impl<'s> InOrder<'s> {
    fn new(known: Vec<Finding>, sink: &'s mut dyn FnMut(Finding)) -> Self {
        InOrder {
            known: known.into(),
            sink,
        }
    }

    /// Sends `findings` (sorted, and after every finding sent before), each after the known findings
    /// that sort before it; on a tie the sent one goes first, as in a stable sort of the two appended.
    fn send(&mut self, findings: impl Iterator<Item = Finding>) {
        for finding in findings {
            while self
                .known
                .front()
                .is_some_and(|k| finding::order(k, &finding).is_lt())
            {
                if let Some(k) = self.known.pop_front() {
                    (self.sink)(k);
                }
            }
            (self.sink)(finding);
        }
    }

    /// Sends the known findings not sent yet.
    fn finish(self) {
        for k in self.known {
            (self.sink)(k);
        }
    }
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
    rules::evaluate(&model::into_objects(document), context, settings)
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
        let pools = infra::read(&parsed.documents);
        let mut coverage = rules::coverage::Coverage::default();
        coverage.see(&objects, &settings);
        if !pools.pools.is_empty() || !pools.errors.is_empty() {
            coverage.saw_node_pools();
        }
        coverage.finish(&settings, &mut report.findings);
        report
            .findings
            .extend(infra::pool_findings(&pools, &settings));
        report.sort();
        report
    }

    #[test]
    fn node_pools_findings_are_merged_in_line_order() {
        // Pods before, between and after an eksctl ClusterConfig whose Windows node group is
        // untainted: the pool's findings come out among the pods' in line order, as a sort would put them.
        let pod = |name: &str| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n"
            )
        };
        let eksctl = "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: eu-west-1}\nnodeGroups:\n- name: win\n  amiFamily: WindowsServer2022CoreContainer\n  desiredCapacity: 2\n- name: lin\n  amiFamily: AmazonLinux2023\n";
        let text = format!("{}---\n{eksctl}---\n{}---\n{eksctl}", pod("a"), pod("b"));
        let streamed = check_text("t.yaml", &text, None, &Settings::default());
        assert_eq!(streamed, all_at_once("t.yaml", &text, None));
        let lines: Vec<u32> = streamed.findings.iter().filter_map(|f| f.line).collect();
        let pools_first_line = 9;
        assert!(
            lines.iter().any(|l| *l < pools_first_line)
                && lines.iter().any(|l| *l >= pools_first_line),
            "{lines:?}"
        );
        assert!(
            streamed.findings.iter().any(|f| f.object.kind != "Pod"),
            "the node groups have findings: {:?}",
            streamed
                .findings
                .iter()
                .map(|f| (&f.rule, f.line))
                .collect::<Vec<_>>()
        );
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
