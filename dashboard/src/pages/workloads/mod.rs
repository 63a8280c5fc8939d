//! Misplaced and at-risk workloads: a filterable table whose rows open their images (OS, build, and where
//! they came from) and findings, each with its explanation, a link to the rule's documentation and the fix
//! as a YAML patch to copy.
//!
//! The server filters (a name search among them), orders (worst first) and pages the workloads: the page
//! holds one page of rows ([`PAGE`]), whatever the cluster size, and the filter's choices come with the
//! answer. A row counts its findings; opened, it asks `/api/workloads/{namespace}/{kind}/{name}` for them,
//! its images and incidents. The filters are the URL's query and the opened row its path
//! (`/workloads/shop/Deployment/web?state=all`): a link to paste into a ticket, and back and forward move
//! between rows opened. "Download CSV" writes every row the filters match, all pages ([`csv_file`]).

mod csv_file;

use crate::components::finding::FindingItem;
use crate::components::images::ImageList;
use crate::components::live::Live;
use crate::components::{ErrorNote, Loading, StateBadge, plural};
use leptos::prelude::*;
use leptos_router::NavigateOptions;
use leptos_router::hooks::{use_location, use_navigate, use_params_map, use_query_map};
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
    /// Text the owner's name contains (any case).
    pub name: String,
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
    const KEYS: [&'static str; 6] = ["namespace", "name", "rule", "severity", "os", "state"];

    fn get(&self, key: &str) -> &str {
        match key {
            "namespace" => &self.namespace,
            "name" => &self.name,
            "rule" => &self.rule,
            "severity" => &self.severity,
            "os" => &self.os,
            _ => &self.state,
        }
    }

    fn set(&mut self, key: &str, value: String) {
        match key {
            "namespace" => self.namespace = value,
            "name" => self.name = value,
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
        let name = self.name.trim();
        Some(WorkloadFilter {
            namespace: some(&self.namespace),
            name: (!name.is_empty()).then(|| name.to_string()),
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

/// The URL of the workloads view with `owner` opened (`/workloads/shop/Deployment/web`) or none, and
/// the filters' query.
fn workloads_path(owner: Option<&ObjectRef>, filters: &Filters) -> String {
    let path = match owner {
        Some(o) => format!(
            "/workloads/{}/{}/{}",
            crate::api::encode(o.namespace.as_deref().unwrap_or_default()),
            crate::api::encode(&o.kind),
            crate::api::encode(&o.name)
        ),
        None => "/workloads".to_string(),
    };
    format!("{path}{}", filters.query())
}

/// The workload the URL opens: `/workloads/{namespace}/{kind}/{name}` (all three, or none).
fn opened_of(
    namespace: Option<String>,
    kind: Option<String>,
    name: Option<String>,
) -> Option<ObjectRef> {
    match (namespace, kind, name) {
        (Some(ns), Some(kind), Some(name))
            if !ns.is_empty() && !kind.is_empty() && !name.is_empty() =>
        {
            Some(ObjectRef::new("", &kind, Some(ns.as_str()), &name))
        }
        _ => None,
    }
}

/// The workloads view.
#[component]
pub fn WorkloadsPage() -> impl IntoView {
    let live = Live::get();
    let query = use_query_map();
    let params = use_params_map();
    let filters = Memo::new(move |_| {
        let q = query.get();
        let mut f = Filters::default();
        for key in Filters::KEYS {
            f.set(key, q.get(key).unwrap_or_default());
        }
        f
    });
    let opened = Memo::new(move |_| {
        params.with(|p| opened_of(p.get("namespace"), p.get("kind"), p.get("name")))
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
    view! {
        <section aria-labelledby="workloads-title">
            <h1 id="workloads-title">"Workloads"</h1>
            <FilterForm filters choices />
            <Transition fallback=|| {
                view! { <Loading what="the workloads" /> }
            }>
                {move || {
                    answer
                        .get()
                        .map(|result| match result {
                            Ok(answer) => {
                                view! { <WorkloadTable answer filters page opened /> }.into_any()
                            }
                            Err(e) => view! { <ErrorNote message=e /> }.into_any(),
                        })
                }}
            </Transition>
        </section>
    }
}

/// Navigates to the same view (the opened row kept) with other filters, replacing the history entry: a
/// filter is not a place to go back to.
fn set_filters(navigate: &impl Fn(&str, NavigateOptions), path: Memo<String>, filters: &Filters) {
    let path = path.get_untracked();
    navigate(
        &format!("{path}{}", filters.query()),
        NavigateOptions {
            replace: true,
            ..Default::default()
        },
    );
}

#[component]
fn FilterSelect(
    key: &'static str,
    label: &'static str,
    options: Signal<Vec<(String, String)>>,
    filters: Memo<Filters>,
) -> impl IntoView {
    let navigate = use_navigate();
    let path = use_location().pathname;
    let on_change = move |ev| {
        let mut f = filters.get_untracked();
        f.set(key, event_target_value(&ev));
        set_filters(&navigate, path, &f);
    };
    let id = format!("filter-{key}");
    view! {
        <label class="filter" for=id.clone()>
            {label}
        </label>
        <select
            id=id
            name=key
            on:change=on_change
            prop:value=move || filters.get().get(key).to_string()
        >
            {move || {
                let mut options = options.get();
                let current = filters.get().get(key).to_string();
                if !options.iter().any(|(v, _)| *v == current) {
                    options.push((current.clone(), current));
                }
                options
                    .into_iter()
                    .map(|(value, text)| {
                        let v = value.clone();
                        // A value the URL names stays selectable even when no workload has it now.
                        view! {
                            <option value=value selected=move || filters.get().get(key) == v>
                                {text}
                            </option>
                        }
                    })
                    .collect_view()
            }}
        </select>
    }
}

/// The name search: the server matches the text anywhere in the owner's name, whatever its case.
#[component]
fn NameSearch(filters: Memo<Filters>) -> impl IntoView {
    let navigate = use_navigate();
    let path = use_location().pathname;
    let on_input = move |ev| {
        let mut f = filters.get_untracked();
        f.set("name", event_target_value(&ev));
        set_filters(&navigate, path, &f);
    };
    view! {
        <label class="filter" for="filter-name">
            "Name"
        </label>
        <input
            type="search"
            id="filter-name"
            name="name"
            placeholder="name contains…"
            autocomplete="off"
            prop:value=move || filters.get().name
            on:input=on_input
        />
    }
}

/// "Download CSV": every row the filters match, all pages, as `workloads.csv`.
#[component]
fn CsvDownload(filters: Memo<Filters>) -> impl IntoView {
    let status = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let download = move |_| {
        let Some(filter) = filters.get_untracked().filter() else {
            status.set("No workload matches these filters.".into());
            return;
        };
        busy.set(true);
        status.set("Reading every page…".into());
        leptos::task::spawn_local(async move {
            let result = async {
                let rows = csv_file::all_rows(&filter, crate::api::workloads).await?;
                let text = csv_file::to_csv(&rows)?;
                crate::components::download::download_text(csv_file::FILE_NAME, "text/csv", &text)?;
                Ok::<_, String>(rows.len())
            }
            .await;
            busy.set(false);
            status.set(match result {
                Ok(n) => format!(
                    "Downloaded {} as {}.",
                    plural(n, "workload", "workloads"),
                    csv_file::FILE_NAME
                ),
                Err(e) => e,
            });
        });
    };
    view! {
        <button type="button" class="csv-download" on:click=download disabled=move || busy.get()>
            "Download CSV"
        </button>
        <span class="muted csv-status" aria-live="polite">
            {move || status.get()}
        </span>
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
        <form
            class="toolbar filters"
            role="search"
            aria-label="Filter workloads"
            on:submit=|ev| ev.prevent_default()
        >
            <NameSearch filters />
            <FilterSelect key="namespace" label="Namespace" options=ns_options filters />
            <FilterSelect key="rule" label="Rule" options=rule_options filters />
            <FilterSelect
                key="severity"
                label="Severity"
                options=Signal::stored(sev_options)
                filters
            />
            <FilterSelect key="os" label="OS" options=Signal::stored(os_options) filters />
            <FilterSelect key="state" label="State" options=Signal::stored(state_options) filters />
            <CsvDownload filters />
        </form>
    }
}

#[component]
fn WorkloadTable(
    answer: Option<WorkloadsResponse>,
    filters: Memo<Filters>,
    page: RwSignal<(Filters, usize)>,
    opened: Memo<Option<ObjectRef>>,
) -> impl IntoView {
    let (total, offset, rows) = match answer {
        Some(a) => (a.total, a.offset, a.workloads),
        None => (0, 0, Vec::new()),
    };
    let shown = rows.len();
    let (first_page, last_page) = (offset == 0, offset + shown >= total);
    let go = move |offset: usize| page.set((filters.get_untracked(), offset));
    let keys: Vec<String> = rows.iter().map(|w| w.owner.display_name()).collect();
    // A row the URL opens that this page does not show (another page, another filter) is shown above.
    let elsewhere = move || {
        opened
            .get()
            .filter(|o| !keys.contains(&o.display_name()))
            .map(|owner| view! { <OpenedElsewhere owner filters /> })
    };
    // Effects run after the DOM is updated: the mark times the table's render.
    Effect::new(move |_| mark_rendered());
    view! {
        {elsewhere}
        <p class="muted" role="status">
            {plural(total, "workload", "workloads")}
        </p>
        <table class="workloads">
            <caption>
                "Workloads and their findings; open a row to see its images (OS, build, where they came from) and each finding's explanation and fix"
            </caption>
            <thead>
                <tr>
                    <th scope="col">"Workload"</th>
                    <th scope="col">"OS"</th>
                    <th scope="col">"State"</th>
                    <th scope="col">"Pods"</th>
                    <th scope="col">"Findings"</th>
                </tr>
            </thead>
            {rows
                .into_iter()
                .map(|w| view! { <WorkloadRows w=Arc::new(w) filters opened /> })
                .collect_view()}
        </table>
        {(total > shown || offset > 0)
            .then(|| {
                view! {
                    <nav class="more pager" aria-label="Pages of workloads">
                        {format!(
                            "Showing {}–{} of {total}. ",
                            (offset + 1).min(total),
                            offset + shown,
                        )}
                        <button
                            type="button"
                            disabled=first_page
                            on:click=move |_| go(offset.saturating_sub(PAGE))
                        >
                            "Previous page"
                        </button>
                        " "
                        <button
                            type="button"
                            disabled=last_page
                            on:click=move |_| go(offset + PAGE)
                        >
                            "Next page"
                        </button>
                    </nav>
                }
            })}
    }
}

/// The opened workload when the table's page does not hold it: its details, and a way to close it.
#[component]
fn OpenedElsewhere(owner: ObjectRef, filters: Memo<Filters>) -> impl IntoView {
    let navigate = use_navigate();
    let key = owner.display_name();
    view! {
        <section
            class="opened-workload"
            data-workload=key.clone()
            aria-label=format!("Opened workload {key}")
        >
            <div class="detail-head">
                <h2>{key.clone()}</h2>
                <button
                    type="button"
                    aria-label="Close the workload"
                    on:click=move |_| navigate(
                        &workloads_path(None, &filters.get_untracked()),
                        NavigateOptions::default(),
                    )
                >
                    "×"
                </button>
            </div>
            <WorkloadDetailsView owner />
        </section>
    }
}

/// Marks the moment the table is in the DOM, for the benchmark (`performance.getEntriesByName`).
fn mark_rendered() {
    if let Some(perf) = web_sys::window().and_then(|w| w.performance()) {
        let _ = perf.mark("winplace:workloads-rendered");
    }
}

#[component]
fn WorkloadRows(
    w: Arc<WorkloadRow>,
    filters: Memo<Filters>,
    opened: Memo<Option<ObjectRef>>,
) -> impl IntoView {
    let key = w.owner.display_name();
    let id = format!("findings-{}", key.replace(['/', '.'], "-"));
    let open = {
        let key = key.clone();
        Memo::new(move |_| opened.with(|o| o.as_ref().is_some_and(|o| o.display_name() == key)))
    };
    let navigate = use_navigate();
    let toggle = {
        let owner = w.owner.clone();
        // A new history entry: back closes the row again, forward reopens it.
        move |_| {
            let target = (!open.get_untracked()).then_some(&owner);
            navigate(
                &workloads_path(target, &filters.get_untracked()),
                NavigateOptions::default(),
            );
        }
    };
    let (errors, warnings, infos) = (w.findings.errors, w.findings.warnings, w.findings.infos);
    let owner = w.owner.clone();
    let controls = id.clone();
    view! {
        <tbody class="workload" data-workload=key.clone() data-state=w.state.as_str()>
            <tr>
                <th scope="row">
                    <button
                        type="button"
                        class="expand"
                        aria-expanded=move || open.get().to_string()
                        aria-controls=controls
                        on:click=toggle
                    >
                        <span class="chevron" aria-hidden="true">
                            {move || if open.get() { "▾" } else { "▸" }}
                        </span>
                        " "
                        {key.clone()}
                    </button>
                </th>
                <td>{w.os.as_str()}</td>
                <td>
                    <StateBadge state=w.state />
                </td>
                <td>{w.pods.total()}</td>
                <td class="counts">
                    {(errors > 0)
                        .then(|| {
                            view! {
                                <span class="sev sev-error">
                                    {plural(errors, "error", "errors")}
                                </span>
                            }
                        })}
                    {(warnings > 0)
                        .then(|| {
                            view! {
                                <span class="sev sev-warning">
                                    {plural(warnings, "warning", "warnings")}
                                </span>
                            }
                        })}
                    {(infos > 0)
                        .then(|| {
                            view! {
                                <span class="sev sev-info">{plural(infos, "info", "infos")}</span>
                            }
                        })}
                </td>
            </tr>
            <Show when=move || open.get()>
                <tr class="details" id=id.clone()>
                    <td colspan="5">
                        <WorkloadDetailsView owner=owner.clone() />
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
        <Transition fallback=|| {
            view! { <Loading what="the findings" /> }
        }>
            {move || {
                details
                    .get()
                    .map(|result| match result {
                        Ok(answer) => {
                            let w = answer.workload;
                            let more = w
                                .findings_total
                                .saturating_sub(w.findings_offset + w.findings.len());
                            view! {
                                <ImageList images=w.images />
                                {(!w.incidents.is_empty())
                                    .then(|| {
                                        view! {
                                            <h3 class="incidents-title">"Failing now"</h3>
                                            <crate::components::incidents::IncidentList incidents=w
                                                .incidents
                                                .clone() />
                                        }
                                    })}
                                <ul class="findings">
                                    {w
                                        .findings
                                        .iter()
                                        .map(|f| view! { <FindingItem finding=(**f).clone() /> })
                                        .collect_view()}
                                </ul>
                                {w
                                    .findings
                                    .is_empty()
                                    .then(|| view! { <p class="muted">"No findings."</p> })}
                                {(more > 0)
                                    .then(|| {
                                        view! {
                                            <p class="muted">
                                                {format!(
                                                    "{} more not listed (winplace audit lists them all).",
                                                    more,
                                                )}
                                            </p>
                                        }
                                    })}
                            }
                                .into_any()
                        }
                        Err(e) => view! { <ErrorNote message=e /> }.into_any(),
                    })
            }}
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
        // The name search is trimmed; blank is no search.
        assert_eq!(
            f(&[("name", "  web ")]).filter().and_then(|w| w.name),
            Some("web".into())
        );
        assert_eq!(f(&[("name", "   ")]).filter().and_then(|w| w.name), None);
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
    fn only_a_full_path_opens_a_workload() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            opened_of(s("shop"), s("Deployment"), s("web")).map(|o| o.display_name()),
            Some("Deployment/shop/web".into())
        );
        assert_eq!(opened_of(s("shop"), s("Deployment"), None), None);
        assert_eq!(opened_of(s("shop"), None, None), None);
        assert_eq!(opened_of(s(""), s("Deployment"), s("web")), None);
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
