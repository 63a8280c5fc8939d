//! Misplaced and at-risk workloads: a filterable table whose rows open their findings, each with its
//! explanation, a link to the rule's documentation and the fix as a YAML patch to copy.

use crate::components::finding::FindingItem;
use crate::components::live::Live;
use crate::components::{ErrorNote, Loading, StateBadge, plural};
use leptos::prelude::*;
use leptos_router::NavigateOptions;
use leptos_router::hooks::{use_navigate, use_query_map};
use std::collections::BTreeSet;
use std::sync::Arc;
use winplace_api::{StateFilter, WorkloadFilter};
use winplace_rules::Severity;
use winplace_rules::audit::{WorkloadOs, WorkloadReport};

/// Rows drawn before "Show more".
const FIRST_ROWS: usize = 200;

/// The filters, as the URL's query carries them (`?namespace=shop&severity=error`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    /// Namespace of the owner.
    pub namespace: String,
    /// A rule id some finding has.
    pub rule: String,
    /// A severity some finding has.
    pub severity: String,
    /// The OS the workload needs.
    pub os: String,
    /// `misplaced`, `at-risk`, `fine`, `all`; empty means misplaced or at risk.
    pub state: String,
}

impl Filters {
    const KEYS: [&'static str; 5] = ["namespace", "rule", "severity", "os", "state"];

    fn get(&self, key: &str) -> &str {
        match key {
            "namespace" => &self.namespace,
            "rule" => &self.rule,
            "severity" => &self.severity,
            "os" => &self.os,
            _ => &self.state,
        }
    }

    fn set(&mut self, key: &str, value: String) {
        match key {
            "namespace" => self.namespace = value,
            "rule" => self.rule = value,
            "severity" => self.severity = value,
            "os" => self.os = value,
            _ => self.state = value,
        }
    }

    /// The API's filter for these selections (the server applies the same one to `/api/workloads`):
    /// an empty state means misplaced or at risk; a value the filter does not know matches nothing.
    pub fn filter(&self) -> Option<WorkloadFilter> {
        let some = |v: &String| (!v.is_empty()).then(|| v.clone());
        let state = match self.state.as_str() {
            "" => StateFilter::Problems,
            s => serde_json::from_value(serde_json::Value::String(s.to_string())).ok()?,
        };
        Some(WorkloadFilter {
            namespace: some(&self.namespace),
            rule: some(&self.rule),
            severity: match self.severity.as_str() {
                "" => None,
                s => Some(s.parse::<Severity>().ok()?),
            },
            os: match self.os.as_str() {
                "" => None,
                s => Some(serde_json::from_value(serde_json::Value::String(s.to_string())).ok()?),
            },
            state: Some(state),
        })
    }

    /// Whether `w` passes every filter.
    pub fn accepts(&self, w: &WorkloadReport) -> bool {
        self.filter().is_some_and(|f| f.accepts(w))
    }

    /// The query string (`?a=b&c=d`, empty when no filter is set).
    pub fn query(&self) -> String {
        let parts: Vec<String> = Self::KEYS
            .iter()
            .filter(|k| !self.get(k).is_empty())
            .map(|k| format!("{k}={}", crate::api::encode(self.get(k))))
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!("?{}", parts.join("&"))
        }
    }
}

/// Workloads first by state (worst first), then by name.
fn sort_rows(rows: &mut [Arc<WorkloadReport>]) {
    rows.sort_by(|a, b| b.state.cmp(&a.state).then_with(|| a.owner.cmp(&b.owner)));
}

/// The workloads view.
#[component]
pub fn WorkloadsPage() -> impl IntoView {
    let live = Live::get();
    let workloads = LocalResource::new(move || {
        live.workloads_rev.track();
        crate::api::workloads()
    });
    let query = use_query_map();
    let filters = Memo::new(move |_| {
        let q = query.get();
        let mut f = Filters::default();
        for key in Filters::KEYS {
            f.set(key, q.get(key).unwrap_or_default());
        }
        f
    });
    let expanded = RwSignal::new(BTreeSet::<String>::new());
    view! {
        <section aria-labelledby="workloads-title">
            <h1 id="workloads-title">"Workloads"</h1>
            <Transition fallback=|| view! { <Loading what="the workloads"/> }>
                {move || workloads.get().map(|result| match result {
                    Ok(answer) => {
                        let mut rows: Vec<Arc<WorkloadReport>> = answer.workloads.into_iter().map(Arc::new).collect();
                        sort_rows(&mut rows);
                        view! { <WorkloadTable rows=Arc::new(rows) filters expanded/> }.into_any()
                    }
                    Err(e) => view! { <ErrorNote message=e/> }.into_any(),
                })}
            </Transition>
        </section>
    }
}

#[component]
fn FilterSelect(
    key: &'static str,
    label: &'static str,
    options: Vec<(String, String)>,
    filters: Memo<Filters>,
) -> impl IntoView {
    let navigate = use_navigate();
    let on_change = move |ev| {
        let mut f = filters.get_untracked();
        f.set(key, event_target_value(&ev));
        navigate(
            &format!("/workloads{}", f.query()),
            NavigateOptions {
                replace: true,
                ..Default::default()
            },
        );
    };
    let id = format!("filter-{key}");
    view! {
        <label class="filter" for=id.clone()>{label}</label>
        <select id=id name=key on:change=on_change prop:value=move || filters.get().get(key).to_string()>
                {options.into_iter().map(|(value, text)| {
                    let v = value.clone();
                    view! { <option value=value selected=move || filters.get().get(key) == v>{text}</option> }
                }).collect_view()}
        </select>
    }
}

#[component]
fn WorkloadTable(
    rows: Arc<Vec<Arc<WorkloadReport>>>,
    filters: Memo<Filters>,
    expanded: RwSignal<BTreeSet<String>>,
) -> impl IntoView {
    let any = |s: &str| vec![(String::new(), s.to_string())];
    let namespaces: BTreeSet<String> = rows
        .iter()
        .filter_map(|w| w.owner.namespace.clone())
        .collect();
    let rules: BTreeSet<String> = rows
        .iter()
        .flat_map(|w| w.findings.iter().map(|f| f.rule.clone()))
        .collect();
    let mut ns_options = any("all namespaces");
    ns_options.extend(namespaces.into_iter().map(|n| (n.clone(), n)));
    let mut rule_options = any("any rule");
    rule_options.extend(rules.into_iter().map(|r| (r.clone(), r)));
    let mut sev_options = any("any severity");
    sev_options.extend(
        [Severity::Error, Severity::Warning, Severity::Info]
            .map(|s| (s.as_str().into(), s.as_str().into())),
    );
    let mut os_options = any("any OS");
    os_options.extend(
        [
            WorkloadOs::Windows,
            WorkloadOs::Linux,
            WorkloadOs::Any,
            WorkloadOs::Conflict,
        ]
        .map(|os| (os.as_str().into(), os.as_str().into())),
    );
    let state_options = vec![
        (String::new(), "misplaced or at risk".to_string()),
        ("misplaced".into(), "misplaced".into()),
        ("at-risk".into(), "at risk".into()),
        ("fine".into(), "fine".into()),
        ("all".into(), "all".into()),
    ];
    let shown = RwSignal::new(FIRST_ROWS);
    let visible = move || -> Vec<Arc<WorkloadReport>> {
        let f = filters.get();
        rows.iter().filter(|w| f.accepts(w)).cloned().collect()
    };
    let visible = Memo::new(move |_| visible());
    view! {
        <form class="toolbar filters" role="search" aria-label="Filter workloads" on:submit=|ev| ev.prevent_default()>
            <FilterSelect key="namespace" label="Namespace" options=ns_options filters/>
            <FilterSelect key="rule" label="Rule" options=rule_options filters/>
            <FilterSelect key="severity" label="Severity" options=sev_options filters/>
            <FilterSelect key="os" label="OS" options=os_options filters/>
            <FilterSelect key="state" label="State" options=state_options filters/>
        </form>
        <p class="muted" role="status">{move || plural(visible.get().len(), "workload", "workloads")}</p>
        <table class="workloads">
            <caption>"Workloads and their findings; open a row to see each finding's explanation and fix"</caption>
            <thead>
                <tr>
                    <th scope="col">"Workload"</th>
                    <th scope="col">"OS"</th>
                    <th scope="col">"State"</th>
                    <th scope="col">"Pods"</th>
                    <th scope="col">"Findings"</th>
                </tr>
            </thead>
            {move || visible.get().into_iter().take(shown.get()).map(|w| view! { <WorkloadRows w expanded/> }).collect_view()}
        </table>
        {move || {
            let total = visible.get().len();
            (total > shown.get()).then(|| view! {
                <p class="more">
                    {format!("Showing {} of {total}. ", shown.get())}
                    <button type="button" on:click=move |_| shown.update(|s| *s += FIRST_ROWS)>"Show more"</button>
                </p>
            })
        }}
    }
}

#[component]
fn WorkloadRows(w: Arc<WorkloadReport>, expanded: RwSignal<BTreeSet<String>>) -> impl IntoView {
    let key = w.owner.display_name();
    let id = format!("findings-{}", key.replace(['/', '.'], "-"));
    let open = {
        let key = key.clone();
        Memo::new(move |_| expanded.with(|e| e.contains(&key)))
    };
    let toggle = {
        let key = key.clone();
        move |_| {
            expanded.update(|e| {
                if !e.remove(&key) {
                    e.insert(key.clone());
                }
            })
        }
    };
    let count = |s: Severity| w.findings.iter().filter(|f| f.severity == s).count();
    let (errors, warnings, infos) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
    );
    let findings = w.findings.clone();
    let controls = id.clone();
    view! {
        <tbody class="workload" data-workload=key.clone() data-state=w.state.as_str()>
            <tr>
                <th scope="row">
                    <button type="button" class="expand" aria-expanded=move || open.get().to_string()
                        aria-controls=controls on:click=toggle>
                        <span class="chevron" aria-hidden="true">{move || if open.get() { "▾" } else { "▸" }}</span>
                        " "{key.clone()}
                    </button>
                </th>
                <td>{w.os.as_str()}</td>
                <td><StateBadge state=w.state/></td>
                <td>{w.pods.len()}</td>
                <td class="counts">
                    {(errors > 0).then(|| view! { <span class="sev sev-error">{plural(errors, "error", "errors")}</span> })}
                    {(warnings > 0).then(|| view! { <span class="sev sev-warning">{plural(warnings, "warning", "warnings")}</span> })}
                    {(infos > 0).then(|| view! { <span class="sev sev-info">{plural(infos, "info", "infos")}</span> })}
                </td>
            </tr>
            <Show when=move || open.get()>
                <tr class="details" id=id.clone()>
                    <td colspan="5">
                        <ul class="findings">
                            {findings.iter().map(|f| view! { <FindingItem finding=f.clone()/> }).collect_view()}
                        </ul>
                        {findings.is_empty().then(|| view! { <p class="muted">"No findings."</p> })}
                    </td>
                </tr>
            </Show>
        </tbody>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use winplace_rules::audit::PlacementState;
    use winplace_rules::{Finding, ObjectRef};

    fn workload(
        ns: &str,
        os: WorkloadOs,
        state: PlacementState,
        rules: &[(&str, Severity)],
    ) -> WorkloadReport {
        let owner = ObjectRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some(ns.into()),
            name: "w".into(),
        };
        WorkloadReport {
            owner: owner.clone(),
            os,
            state,
            pods: vec![],
            findings: rules
                .iter()
                .map(|(rule, severity)| Finding::new(rule, *severity, owner.clone()))
                .collect(),
        }
    }

    /// What the filters match is the API's business (winplace-api tests it); here: the page's selections
    /// become that filter, an empty state meaning "misplaced or at risk".
    #[test]
    fn selections_become_the_api_filter() {
        let f = |pairs: &[(&str, &str)]| {
            let mut f = Filters::default();
            for (k, v) in pairs {
                f.set(k, v.to_string());
            }
            f
        };
        let problems = Some(StateFilter::Problems);
        assert_eq!(
            f(&[]).filter(),
            Some(WorkloadFilter {
                state: problems,
                ..Default::default()
            })
        );
        assert_eq!(
            f(&[("state", "all")]).filter().and_then(|w| w.state),
            Some(StateFilter::All)
        );
        assert_eq!(
            f(&[
                ("namespace", "shop"),
                ("severity", "warning"),
                ("os", "windows")
            ])
            .filter(),
            Some(WorkloadFilter {
                namespace: Some("shop".into()),
                severity: Some(Severity::Warning),
                os: Some(WorkloadOs::Windows),
                state: problems,
                ..Default::default()
            })
        );
        // A value no filter knows matches nothing, rather than everything.
        for bad in [
            f(&[("os", "macos")]),
            f(&[("severity", "fatal")]),
            f(&[("state", "gone")]),
        ] {
            assert_eq!(bad.filter(), None, "{bad:?}");
            let any = workload("shop", WorkloadOs::Linux, PlacementState::AtRisk, &[]);
            assert!(!bad.accepts(&any));
        }
    }

    #[test]
    fn worst_rows_come_first() {
        use PlacementState::*;
        let mut rows = vec![
            Arc::new(workload("b", WorkloadOs::Linux, Fine, &[])),
            Arc::new(workload("a", WorkloadOs::Linux, AtRisk, &[])),
            Arc::new(workload("c", WorkloadOs::Linux, Misplaced, &[])),
        ];
        sort_rows(&mut rows);
        let states: Vec<PlacementState> = rows.iter().map(|w| w.state).collect();
        assert_eq!(states, [Misplaced, AtRisk, Fine]);
    }
}
