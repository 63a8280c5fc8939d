//! Misplaced and at-risk workloads: a filterable table whose rows open their images (OS, build, and where
//! they came from) and findings, each with its explanation, a link to the rule's documentation and the fix
//! as a YAML patch to copy.
//!
//! The server filters, orders (worst first) and pages the workloads: the page holds one page of rows
//! ([`PAGE`]), whatever the cluster size, and the filter's choices come with the answer. A row counts its
//! findings; opened, it asks `/api/workloads/{namespace}/{kind}/{name}` for them, its images and incidents.

use crate::components::finding::FindingItem;
use crate::components::images::ImageList;
use crate::components::live::Live;
use crate::components::{ErrorNote, Loading, StateBadge, plural};
use leptos::prelude::*;
use leptos_router::NavigateOptions;
use leptos_router::hooks::{use_navigate, use_query_map};
use std::collections::BTreeSet;
use std::sync::Arc;
use winplace_api::{DEFAULT_PAGE, StateFilter, WorkloadFilter, WorkloadRow, WorkloadsResponse};
use winplace_rules::placement::PodOs;
use winplace_rules::{ObjectRef, Severity};

/// Rows on one page.
const PAGE: usize = DEFAULT_PAGE;

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
            ..WorkloadFilter::default()
        })
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

/// The filter's choices: the namespaces and rules of every workload (from the last answer).
#[derive(Debug, Clone, Default, PartialEq)]
struct Choices {
    namespaces: Vec<String>,
    rules: Vec<String>,
}

/// The page asked for: its filters and the offset of its first row (a new filter starts at 0).
fn offset_for(page: &(Filters, usize), filters: &Filters) -> usize {
    if &page.0 == filters { page.1 } else { 0 }
}

/// The workloads view.
#[component]
pub fn WorkloadsPage() -> impl IntoView {
    let live = Live::get();
    let query = use_query_map();
    let filters = Memo::new(move |_| {
        let q = query.get();
        let mut f = Filters::default();
        for key in Filters::KEYS {
            f.set(key, q.get(key).unwrap_or_default());
        }
        f
    });
    let page = RwSignal::new((Filters::default(), 0usize));
    let choices = RwSignal::new(Choices::default());
    let answer = LocalResource::new(move || {
        live.workloads_rev.track();
        let f = filters.get();
        let offset = offset_for(&page.get(), &f);
        async move {
            // A value no filter knows matches nothing, rather than everything.
            let Some(mut filter) = f.filter() else {
                return Ok(None);
            };
            filter.offset = (offset > 0).then_some(offset);
            filter.limit = Some(PAGE);
            let answer = crate::api::workloads(filter).await?;
            choices.set(Choices {
                namespaces: answer.namespaces.clone(),
                rules: answer.rules.clone(),
            });
            Ok::<_, String>(Some(answer))
        }
    });
    let expanded = RwSignal::new(BTreeSet::<String>::new());
    view! {
        <section aria-labelledby="workloads-title">
            <h1 id="workloads-title">"Workloads"</h1>
            <FilterForm filters choices/>
            <Transition fallback=|| view! { <Loading what="the workloads"/> }>
                {move || answer.get().map(|result| match result {
                    Ok(answer) => view! { <WorkloadTable answer filters page expanded/> }.into_any(),
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
    options: Signal<Vec<(String, String)>>,
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
                {move || {
                    let mut options = options.get();
                    // A value the URL names stays selectable even when no workload has it now.
                    let current = filters.get().get(key).to_string();
                    if !options.iter().any(|(v, _)| *v == current) {
                        options.push((current.clone(), current));
                    }
                    options.into_iter().map(|(value, text)| {
                        let v = value.clone();
                        view! { <option value=value selected=move || filters.get().get(key) == v>{text}</option> }
                    }).collect_view()
                }}
        </select>
    }
}

#[component]
fn FilterForm(filters: Memo<Filters>, choices: RwSignal<Choices>) -> impl IntoView {
    let any = |s: &str| vec![(String::new(), s.to_string())];
    let ns_options = Signal::derive(move || {
        let mut options = any("all namespaces");
        options.extend(choices.get().namespaces.into_iter().map(|n| (n.clone(), n)));
        options
    });
    let rule_options = Signal::derive(move || {
        let mut options = any("any rule");
        options.extend(choices.get().rules.into_iter().map(|r| (r.clone(), r)));
        options
    });
    let mut sev_options = any("any severity");
    sev_options.extend(
        [Severity::Error, Severity::Warning, Severity::Info]
            .map(|s| (s.as_str().into(), s.as_str().into())),
    );
    let mut os_options = any("any OS");
    os_options.extend(
        [PodOs::Windows, PodOs::Linux, PodOs::Any, PodOs::Conflict]
            .map(|os| (os.as_str().into(), os.as_str().into())),
    );
    let state_options = vec![
        (String::new(), "misplaced or at risk".to_string()),
        ("misplaced".into(), "misplaced".into()),
        ("at-risk".into(), "at risk".into()),
        ("fine".into(), "fine".into()),
        ("all".into(), "all".into()),
    ];
    view! {
        <form class="toolbar filters" role="search" aria-label="Filter workloads" on:submit=|ev| ev.prevent_default()>
            <FilterSelect key="namespace" label="Namespace" options=ns_options filters/>
            <FilterSelect key="rule" label="Rule" options=rule_options filters/>
            <FilterSelect key="severity" label="Severity" options=Signal::stored(sev_options) filters/>
            <FilterSelect key="os" label="OS" options=Signal::stored(os_options) filters/>
            <FilterSelect key="state" label="State" options=Signal::stored(state_options) filters/>
        </form>
    }
}

#[component]
fn WorkloadTable(
    answer: Option<WorkloadsResponse>,
    filters: Memo<Filters>,
    page: RwSignal<(Filters, usize)>,
    expanded: RwSignal<BTreeSet<String>>,
) -> impl IntoView {
    let (total, offset, rows) = match answer {
        Some(a) => (a.total, a.offset, a.workloads),
        None => (0, 0, Vec::new()),
    };
    let shown = rows.len();
    let (first_page, last_page) = (offset == 0, offset + shown >= total);
    let go = move |offset: usize| page.set((filters.get_untracked(), offset));
    // Effects run after the DOM is updated: the mark times the table's render.
    Effect::new(move |_| mark_rendered());
    view! {
        <p class="muted" role="status">{plural(total, "workload", "workloads")}</p>
        <table class="workloads">
            <caption>"Workloads and their findings; open a row to see its images (OS, build, where they came from) and each finding's explanation and fix"</caption>
            <thead>
                <tr>
                    <th scope="col">"Workload"</th>
                    <th scope="col">"OS"</th>
                    <th scope="col">"State"</th>
                    <th scope="col">"Pods"</th>
                    <th scope="col">"Findings"</th>
                </tr>
            </thead>
            {rows.into_iter().map(|w| view! { <WorkloadRows w=Arc::new(w) expanded/> }).collect_view()}
        </table>
        {(total > shown || offset > 0).then(|| view! {
            <nav class="more pager" aria-label="Pages of workloads">
                {format!("Showing {}–{} of {total}. ", (offset + 1).min(total), offset + shown)}
                <button type="button" disabled=first_page
                    on:click=move |_| go(offset.saturating_sub(PAGE))>"Previous page"</button>
                " "
                <button type="button" disabled=last_page
                    on:click=move |_| go(offset + PAGE)>"Next page"</button>
            </nav>
        })}
    }
}

/// Marks the moment the table is in the DOM, for the benchmark (`performance.getEntriesByName`).
fn mark_rendered() {
    if let Some(perf) = web_sys::window().and_then(|w| w.performance()) {
        let _ = perf.mark("winplace:workloads-rendered");
    }
}

#[component]
fn WorkloadRows(w: Arc<WorkloadRow>, expanded: RwSignal<BTreeSet<String>>) -> impl IntoView {
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
    let (errors, warnings, infos) = (w.findings.errors, w.findings.warnings, w.findings.infos);
    let owner = w.owner.clone();
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
                <td>{w.pods.total()}</td>
                <td class="counts">
                    {(errors > 0).then(|| view! { <span class="sev sev-error">{plural(errors, "error", "errors")}</span> })}
                    {(warnings > 0).then(|| view! { <span class="sev sev-warning">{plural(warnings, "warning", "warnings")}</span> })}
                    {(infos > 0).then(|| view! { <span class="sev sev-info">{plural(infos, "info", "infos")}</span> })}
                </td>
            </tr>
            <Show when=move || open.get()>
                <tr class="details" id=id.clone()>
                    <td colspan="5">
                        <WorkloadDetailsView owner=owner.clone()/>
                    </td>
                </tr>
            </Show>
        </tbody>
    }
}

/// An opened row: its images, incidents and findings, asked of the server when the row opens (the list's
/// rows only count them), and again when a change touches workloads.
#[component]
fn WorkloadDetailsView(owner: ObjectRef) -> impl IntoView {
    let live = Live::get();
    let details = LocalResource::new(move || {
        live.workloads_rev.track();
        crate::api::workload(owner.clone())
    });
    view! {
        <Transition fallback=|| view! { <Loading what="the findings"/> }>
            {move || details.get().map(|result| match result {
                Ok(answer) => {
                    let w = answer.workload;
                    let more = w.findings_total.saturating_sub(w.findings_offset + w.findings.len());
                    view! {
                        <ImageList images=w.images/>
                        {(!w.incidents.is_empty()).then(|| view! {
                            <h3 class="incidents-title">"Failing now"</h3>
                            <crate::components::incidents::IncidentList incidents=w.incidents.clone()/>
                        })}
                        <ul class="findings">
                            {w.findings.iter().map(|f| view! { <FindingItem finding=(**f).clone()/> }).collect_view()}
                        </ul>
                        {w.findings.is_empty().then(|| view! { <p class="muted">"No findings."</p> })}
                        {(more > 0).then(|| view! {
                            <p class="muted">{format!("{} more not listed (winplace audit lists them all).", more)}</p>
                        })}
                    }.into_any()
                }
                Err(e) => view! { <ErrorNote message=e/> }.into_any(),
            })}
        </Transition>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                os: Some(PodOs::Windows),
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
        }
    }

    #[test]
    fn a_new_filter_starts_on_the_first_page() {
        let shop = Filters {
            namespace: "shop".into(),
            ..Filters::default()
        };
        let page = (shop.clone(), 400);
        assert_eq!(offset_for(&page, &shop), 400);
        assert_eq!(offset_for(&page, &Filters::default()), 0);
    }
}
