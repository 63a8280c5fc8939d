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
pub mod input;
pub mod model;
pub mod path;
pub mod placement;
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
    let parsed = input::parse(file, text, &input::Limits::default());
    let objects = model::objects(&parsed.documents);
    let mut report = Report {
        findings: rules::evaluate(&objects, context, settings),
        parse_errors: parsed.errors,
    };
    report.sort();
    report
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
        parse_errors: parsed.errors,
    };
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
