//! The findings list: severity, rule, object, line and message; a click shows the line, a button
//! proposes the fix.

use std::sync::Arc;

use leptos::prelude::*;
use winplace_rules::catalog;
use winplace_rules::fix::is_fixable_error;
use winplace_rules::{Finding, ParseError, Severity};

/// Findings rendered before "Show all" (a thousand-document paste can have thousands).
const FIRST: usize = 200;

/// Which text a finding or error is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The manifests.
    Input,
    /// The pasted Nodes and RuntimeClasses.
    Context,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Source::Input => "input",
            Source::Context => "context",
        }
    }
}

/// The list entry the user selected: its source and index among that source's findings.
pub type Selection = (Source, usize);

/// `2 errors, 1 warning, 0 info`.
fn counts(findings: &[Finding]) -> String {
    let n = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let plural =
        |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    format!(
        "{}, {}, {}",
        plural(n(Severity::Error), "error", "errors"),
        plural(n(Severity::Warning), "warning", "warnings"),
        plural(n(Severity::Info), "info", "info")
    )
}

/// One finding.
#[component]
fn FindingItem(
    finding: Finding,
    source: Source,
    index: usize,
    selected: RwSignal<Option<Selection>>,
    on_show: impl Fn(Source, u32) + Copy + Send + Sync + 'static,
    on_fix: impl Fn(Finding) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let line = finding.line;
    let fix = (source == Source::Input)
        .then(|| finding.fix.clone())
        .flatten()
        .map(|x| x.description);
    let fixable = is_fixable_error(&finding);
    let title = catalog::rule(&finding.rule).map(|r| r.title);
    let doc = catalog::doc_url(&finding.rule);
    let object = finding.object.display_name();
    let show = move || {
        selected.set(Some((source, index)));
        if let Some(l) = line {
            on_show(source, l);
        }
    };
    let fix_button = fix.map(|description| {
        let finding = finding.clone();
        view! {
            <button class="fix" title=description.clone() on:click=move |_| on_fix(finding.clone())>
                "Fix: "
                {description.clone()}
            </button>
        }
    });
    view! {
        <li
            class="finding"
            class:selected=move || selected.get() == Some((source, index))
            data-rule=finding.rule.clone()
            data-object=object.clone()
            data-line=line.map(|l| l.to_string())
            data-path=finding.path.clone()
            data-severity=finding.severity.as_str()
            data-source=source.as_str()
            data-fixable=fixable.to_string()
        >
            <button class="goto" title="Show the line" on:click=move |_| show()>
                <span class="severity">{finding.severity.as_str()}</span>
                " "
                <code class="rule" title=title>
                    {finding.rule.clone()}
                </code>
                " "
                <span class="object">{object.clone()}</span>
                " "
                <span class="line">{line.map(|l| format!("line {l}")).unwrap_or_default()}</span>
            </button>
            <p class="message">
                {finding.message.clone()}" " <a href=doc target="_blank" rel="noopener">
                    "rule docs"
                </a>
            </p>
            {fix_button}
        </li>
    }
}

/// Parse errors, then findings of the manifests, then findings of the pasted context.
#[component]
pub fn FindingsList(
    /// Findings of the manifests.
    #[prop(into)]
    findings: Signal<Arc<Vec<Finding>>>,
    /// Parse errors of the manifests.
    #[prop(into)]
    parse_errors: Signal<Arc<Vec<ParseError>>>,
    /// Findings of the pasted context's own objects.
    #[prop(into)]
    context_findings: Signal<Arc<Vec<Finding>>>,
    /// The selected entry.
    selected: RwSignal<Option<Selection>>,
    /// Show a line of a source.
    on_show: impl Fn(Source, u32) + Copy + Send + Sync + 'static,
    /// Propose the fix of one finding.
    on_fix: impl Fn(Finding) + Copy + Send + Sync + 'static,
    /// Propose every fix.
    on_fix_all: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let show_all = RwSignal::new(false);
    let any_fix = move || findings.read().iter().any(|f| f.fix.is_some());
    let list = move |source: Source, items: Arc<Vec<Finding>>| {
        let limit = if show_all.get() { usize::MAX } else { FIRST };
        items
            .iter()
            .take(limit)
            .enumerate()
            .map(|(index, f)| {
                view! { <FindingItem finding=f.clone() source index selected on_show on_fix /> }
            })
            .collect_view()
    };
    let hidden = move || findings.read().len().saturating_sub(FIRST);
    view! {
        <div class="findings-panel">
            <div class="findings-head">
                <span class="counts" aria-live="polite">
                    {move || counts(&findings.read())}
                </span>
                <Show when=any_fix>
                    <button class="fix-all" on:click=move |_| on_fix_all()>
                        "Fix all"
                    </button>
                </Show>
            </div>
            <ul class="findings">
                {move || {
                    parse_errors
                        .get()
                        .iter()
                        .map(|e| {
                            let line = e.line;
                            view! {
                                <li
                                    class="parse-error"
                                    data-line=line.to_string()
                                    data-source="input"
                                >
                                    <button
                                        class="goto"
                                        title="Show the line"
                                        on:click=move |_| on_show(Source::Input, line)
                                    >
                                        <span class="severity">"parse error"</span>
                                        " "
                                        <span class="line">
                                            {format!("line {}:{}", e.line, e.column)}
                                        </span>
                                    </button>
                                    <p class="message">{e.message.clone()}</p>
                                </li>
                            }
                        })
                        .collect_view()
                }} {move || list(Source::Input, findings.get())}
            </ul>
            <Show when=move || !show_all.get() && hidden() != 0>
                <button class="show-all" on:click=move |_| show_all.set(true)>
                    {move || format!("Show {} more", hidden())}
                </button>
            </Show>
            <Show when=move || !context_findings.read().is_empty()>
                <h3 class="context-findings-title">"In the pasted cluster"</h3>
                <ul class="findings context-findings">
                    {move || list(Source::Context, context_findings.get())}
                </ul>
            </Show>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_name_each_severity() {
        let report = winplace_rules::Checker::builder().build().report(
            "f.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: w}\nspec:\n  containers:\n  - name: c\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n",
        );
        let text = counts(&report.findings);
        assert!(text.starts_with("2 errors, 1 warning"), "{text}");
        assert_eq!(counts(&[]), "0 errors, 0 warnings, 0 info");
    }
}
