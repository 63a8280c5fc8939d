//! The workloads table as a CSV file: every row the filters match, all pages (the server pages the
//! table; the download asks for every page of the same filter and checks that they come from one state
//! of the cluster).

use winplace_api::{MAX_PAGE, WorkloadFilter, WorkloadRow, WorkloadsResponse};

/// The file's name.
pub const FILE_NAME: &str = "workloads.csv";

/// The columns, in order.
pub const HEADER: [&str; 11] = [
    "namespace",
    "kind",
    "name",
    "os",
    "state",
    "pods",
    "errors",
    "warnings",
    "infos",
    "incidents",
    "rules",
];

/// The CSV of `rows` (RFC 4180 quoting by the csv crate), a header first; a row's rules are separated
/// by spaces.
pub fn to_csv(rows: &[WorkloadRow]) -> Result<String, String> {
    let mut out = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| format!("cannot write the CSV: {e}");
    out.write_record(HEADER).map_err(fail)?;
    for w in rows {
        out.write_record([
            w.owner.namespace.as_deref().unwrap_or(""),
            &w.owner.kind,
            &w.owner.name,
            w.os.as_str(),
            w.state.as_str(),
            &w.pods.total().to_string(),
            &w.findings.errors.to_string(),
            &w.findings.warnings.to_string(),
            &w.findings.infos.to_string(),
            &w.incidents.to_string(),
            &w.rules.join(" "),
        ])
        .map_err(fail)?;
    }
    let bytes = out
        .into_inner()
        .map_err(|e| format!("cannot write the CSV: {e}"))?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

/// How many times the pages are asked again when the cluster changed while they were read.
const TRIES: usize = 3;

/// Every row `filter` matches, all pages, from one revision of the server's state: `fetch` answers one
/// page (the server's `/api/workloads`).
pub async fn all_rows<F, Fut>(filter: &WorkloadFilter, fetch: F) -> Result<Vec<WorkloadRow>, String>
where
    F: Fn(WorkloadFilter) -> Fut,
    Fut: std::future::Future<Output = Result<WorkloadsResponse, String>>,
{
    'tries: for _ in 0..TRIES {
        let mut rows = Vec::new();
        let mut revision = None;
        loop {
            let mut page = filter.without_page();
            page.offset = Some(rows.len());
            page.limit = Some(MAX_PAGE);
            let answer = fetch(page).await?;
            let this = answer.meta.freshness.revision;
            if *revision.get_or_insert(this) != this {
                // The cluster changed between two pages: rows may have moved; read them again.
                continue 'tries;
            }
            let got = answer.workloads.len();
            rows.extend(answer.workloads);
            if got == 0 || rows.len() >= answer.total {
                return Ok(rows);
            }
        }
    }
    Err(format!(
        "the cluster changed while its workloads were read, {TRIES} times: try again"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use winplace_api::{Freshness, Meta, SourceInfo, SourceKind, StateCounts};
    use winplace_rules::ObjectRef;
    use winplace_rules::audit::{PlacementState, SeverityCounts};
    use winplace_rules::placement::PodOs;

    fn row(ns: &str, name: &str) -> WorkloadRow {
        WorkloadRow {
            owner: ObjectRef::new("apps/v1", "Deployment", Some(ns), name),
            os: PodOs::Windows,
            state: PlacementState::Misplaced,
            pods: StateCounts {
                misplaced: 2,
                ..StateCounts::default()
            },
            findings: SeverityCounts {
                errors: 1,
                warnings: 2,
                infos: 0,
            },
            rules: vec!["a-rule".into(), "b-rule".into()],
            incidents: 1,
        }
    }

    #[test]
    fn rows_become_quoted_csv_records() {
        let csv = to_csv(&[row("shop", "web"), row("shop", "a \"quoted\", name")]).expect("csv");
        assert_eq!(
            csv,
            "namespace,kind,name,os,state,pods,errors,warnings,infos,incidents,rules\n\
             shop,Deployment,web,windows,misplaced,2,1,2,0,1,a-rule b-rule\n\
             shop,Deployment,\"a \"\"quoted\"\", name\",windows,misplaced,2,1,2,0,1,a-rule b-rule\n"
        );
    }

    fn answer(
        total: usize,
        offset: usize,
        rows: Vec<WorkloadRow>,
        revision: u64,
    ) -> WorkloadsResponse {
        WorkloadsResponse {
            meta: Meta {
                source: SourceInfo {
                    kind: SourceKind::Demo,
                    description: "demo".into(),
                },
                freshness: Freshness {
                    revision,
                    ..Freshness::default()
                },
            },
            total,
            offset,
            workloads: rows,
            namespaces: vec![],
            rules: vec![],
        }
    }

    /// A fake server: `total` rows, pages of at most `page`, the revision moving once after `bump`
    /// answers.
    fn server(
        total: usize,
        page: usize,
        bump: Option<usize>,
    ) -> (
        Cell<usize>,
        impl Fn(WorkloadFilter, &Cell<usize>) -> WorkloadsResponse,
    ) {
        let calls = Cell::new(0);
        let answer_of = move |filter: WorkloadFilter, calls: &Cell<usize>| {
            calls.set(calls.get() + 1);
            let revision = match bump {
                Some(b) if calls.get() > b => 2,
                _ => 1,
            };
            let (offset, limit) = filter.page();
            let end = (offset + limit.min(page)).min(total);
            let rows = (offset.min(total)..end)
                .map(|i| row("ns", &format!("w{i}")))
                .collect();
            answer(total, offset, rows, revision)
        };
        (calls, answer_of)
    }

    /// Runs a future that never waits (the tests' fake server answers at once).
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        use std::task::{Context, Poll, Waker};
        let mut f = std::pin::pin!(f);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
                return out;
            }
        }
    }

    #[test]
    fn every_page_is_read_with_the_same_filter() {
        let filter = WorkloadFilter {
            namespace: Some("ns".into()),
            offset: Some(400),
            limit: Some(10),
            ..WorkloadFilter::default()
        };
        for (total, page) in [(0, 1000), (5, 1000), (2500, 1000), (7, 3)] {
            let (calls, answer_of) = server(total, page, None);
            let seen = std::cell::RefCell::new(Vec::new());
            let rows = block_on(all_rows(&filter, |f| {
                seen.borrow_mut().push(f.clone());
                let a = answer_of(f, &calls);
                async move { Ok(a) }
            }))
            .expect("rows");
            let names: Vec<String> = rows.iter().map(|r| r.owner.name.clone()).collect();
            let want: Vec<String> = (0..total).map(|i| format!("w{i}")).collect();
            assert_eq!(names, want, "{total} rows in pages of {page}");
            for f in seen.borrow().iter() {
                assert_eq!(f.namespace.as_deref(), Some("ns"), "the filter is kept");
                assert_eq!(f.limit, Some(MAX_PAGE));
            }
        }
    }

    #[test]
    fn a_change_between_pages_reads_them_again() {
        let filter = WorkloadFilter::default();
        // The revision moves after the first answer: the second try reads every page again.
        let (calls, answer_of) = server(2500, 1000, Some(1));
        let rows = block_on(all_rows(&filter, |f| {
            let a = answer_of(f, &calls);
            async move { Ok(a) }
        }))
        .expect("rows");
        assert_eq!(rows.len(), 2500);
        assert_eq!(calls.get(), 2 + 3);
        // A cluster that never stops changing is an error, not a mixed file.
        let changing = Cell::new(0u64);
        let err = block_on(all_rows(&filter, |f| {
            changing.set(changing.get() + 1);
            let (offset, _) = f.page();
            let a = answer(2500, offset, vec![row("ns", "w"); 1000], changing.get());
            async move { Ok(a) }
        }))
        .expect_err("changing");
        assert!(err.contains("changed"), "{err}");
    }
}
