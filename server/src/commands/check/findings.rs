//! The findings of a `winplace check` run, held compactly until the report is written.
//!
//! A [`Finding`] in memory is a struct and about ten separate allocations (its strings, its fix's patch
//! text), each rounded up by the allocator; the same finding as one line of compact JSON is one run of
//! bytes. 100,000 documents give 200,000 findings, so [`FindingLog`] keeps each as a JSON line in large
//! blocks, with what the summary and the exit code need (counts by severity) and what the text report
//! groups by (runs of one file) counted as they come; the report decodes them again one at a time as it
//! is written. The chart template of a finding rendered by Helm (`# Source:`) is kept beside, once per
//! run of findings of one template.

use std::sync::Arc;

use winplace_rules::{Finding, Severity};

/// Bytes per block: large enough that the blocks' own overhead does not count, small enough that the
/// last, partly filled one does not either. (Small in tests, so that they cross many blocks.)
#[cfg(not(test))]
const BLOCK: usize = 1 << 20;
#[cfg(test)]
const BLOCK: usize = 4 << 10;

/// Findings in the order they were pushed, as compact JSON lines.
#[derive(Debug, Default)]
pub struct FindingLog {
    /// Full blocks of newline-terminated JSON lines.
    blocks: Vec<Vec<u8>>,
    /// The index of each full block's first finding (to find a run without decoding what is before it).
    firsts: Vec<usize>,
    /// The block being filled, and the index of its first finding.
    open: Vec<u8>,
    open_first: usize,
    len: usize,
    /// Errors, warnings, infos.
    counts: [usize; 3],
    runs: Vec<Run>,
    /// (index of the first finding, its chart template), each time the template changes.
    templates: Vec<(usize, Option<Arc<str>>)>,
}

/// A finding decoded from the log, with the chart template its object was rendered from (Helm's
/// `# Source:` comment above its document), when one was named.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The finding.
    pub finding: Finding,
    /// The chart template (`shop/templates/web.yaml`).
    pub helm_template: Option<Arc<str>>,
}

/// Consecutive findings of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The file (`None` for findings about no file).
    pub file: Option<String>,
    /// Index of the run's first finding.
    pub start: usize,
    /// Index after its last.
    pub end: usize,
    /// Whether its findings come in line order (the text report merges them with the file's read
    /// errors without sorting when they do).
    pub by_line: bool,
    last_line: u32,
}

impl FindingLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a finding.
    pub fn push(&mut self, finding: &Finding) {
        self.push_from(finding, None);
    }

    /// Appends a finding whose object Helm rendered from `helm_template`.
    pub fn push_from(&mut self, finding: &Finding, helm_template: Option<&str>) {
        let before = self.open.len();
        // Serializing a `Finding` (strings, numbers and JSON values) into a Vec cannot fail.
        if serde_json::to_writer(&mut self.open, finding).is_err() {
            self.open.truncate(before);
            return;
        }
        self.open.push(b'\n');
        let index = self.len;
        if self.templates.last().and_then(|t| t.1.as_deref()) != helm_template {
            self.templates.push((index, helm_template.map(Arc::from)));
        }
        self.len += 1;
        if self.open.len() >= BLOCK {
            let full = std::mem::replace(&mut self.open, Vec::with_capacity(BLOCK + BLOCK / 8));
            self.blocks.push(full);
            self.firsts.push(self.open_first);
            self.open_first = self.len;
        }
        self.counts[severity_slot(finding.severity)] += 1;
        let line = finding.line.unwrap_or(0);
        match self.runs.last_mut() {
            Some(run) if run.file == finding.file => {
                run.by_line &= line >= run.last_line;
                run.last_line = line;
                run.end += 1;
            }
            _ => self.runs.push(Run {
                file: finding.file.clone(),
                start: index,
                end: index + 1,
                by_line: true,
                last_line: line,
            }),
        }
    }

    /// Number of findings.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of findings of `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.counts[severity_slot(severity)]
    }

    /// The runs of findings of one file, in order.
    pub fn runs(&self) -> &[Run] {
        &self.runs
    }

    /// Every finding, decoded again, in the order pushed.
    pub fn iter(&self) -> impl Iterator<Item = Result<Finding, serde_json::Error>> + '_ {
        self.lines_from(0).map(serde_json::from_slice)
    }

    /// The findings `run` covers: only the block where it starts is skipped through, undecoded.
    pub fn run(&self, run: &Run) -> impl Iterator<Item = Result<Finding, serde_json::Error>> + '_ {
        self.lines_from(run.start)
            .take(run.end - run.start)
            .map(serde_json::from_slice)
    }

    /// Every finding with its chart template, in the order pushed.
    pub fn entries(&self) -> impl Iterator<Item = Result<Entry, serde_json::Error>> + '_ {
        self.entries_from(0, self.len)
    }

    /// The findings `run` covers, with their chart templates.
    pub fn run_entries(
        &self,
        run: &Run,
    ) -> impl Iterator<Item = Result<Entry, serde_json::Error>> + '_ {
        self.entries_from(run.start, run.end)
    }

    fn entries_from(
        &self,
        start: usize,
        end: usize,
    ) -> impl Iterator<Item = Result<Entry, serde_json::Error>> + '_ {
        self.lines_from(start)
            .take(end.saturating_sub(start))
            .zip(start..)
            .map(|(line, index)| {
                Ok(Entry {
                    finding: serde_json::from_slice(line)?,
                    helm_template: self.template_of(index),
                })
            })
    }

    /// The chart template of the finding of index `index`.
    fn template_of(&self, index: usize) -> Option<Arc<str>> {
        let after = self.templates.partition_point(|(first, _)| *first <= index);
        self.templates.get(after.checked_sub(1)?)?.1.clone()
    }

    /// The JSON lines from the finding of index `start` on.
    fn lines_from(&self, start: usize) -> impl Iterator<Item = &[u8]> + '_ {
        // The last full block whose first finding is at or before `start` (the open block if none).
        let block = self.firsts.partition_point(|first| *first <= start);
        let (block, first) = match block.checked_sub(1) {
            Some(b) if start < self.open_first => (b, self.firsts[b]),
            _ => (self.blocks.len(), self.open_first),
        };
        self.blocks[block.min(self.blocks.len())..]
            .iter()
            .chain(std::iter::once(&self.open))
            .flat_map(|block| block.split(|b| *b == b'\n').filter(|l| !l.is_empty()))
            .skip(start.saturating_sub(first))
    }
}

fn severity_slot(severity: Severity) -> usize {
    match severity {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    }
}

impl FromIterator<Finding> for FindingLog {
    fn from_iter<I: IntoIterator<Item = Finding>>(findings: I) -> Self {
        let mut log = FindingLog::new();
        for finding in findings {
            log.push(&finding);
        }
        log
    }
}

impl serde::Serialize for FindingLog {
    /// As the sequence of the findings, decoded one at a time, each with its `helm_template` when Helm
    /// named one.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = serializer.serialize_seq(Some(self.len))?;
        for entry in self.entries() {
            let entry = entry.map_err(S::Error::custom)?;
            seq.serialize_element(&EntryJson {
                finding: &entry.finding,
                helm_template: entry.helm_template.as_deref(),
            })?;
        }
        seq.end()
    }
}

/// A finding as the JSON report writes it: the rules crate's fields, then `helm_template` when present.
#[derive(serde::Serialize)]
struct EntryJson<'a> {
    #[serde(flatten)]
    finding: &'a Finding,
    #[serde(skip_serializing_if = "Option::is_none")]
    helm_template: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use winplace_rules::ObjectRef;

    fn finding(file: Option<&str>, line: u32, severity: Severity) -> Finding {
        let mut f = Finding::new(
            "windows-pod-without-toleration",
            severity,
            ObjectRef::new("v1", "Pod", Some("ns"), "p"),
        );
        f.file = file.map(str::to_string);
        f.line = Some(line);
        f.message = "a \"quoted\"\nmessage".into();
        f.fix = Some(winplace_rules::Fix {
            description: "add".into(),
            patch: vec![
                serde_json::json!({"op": "add", "path": "/spec/tolerations", "value": [{"key": "os"}]}),
            ].into(),
        });
        f
    }

    #[test]
    fn findings_come_back_as_they_went_in_across_blocks() {
        let findings: Vec<Finding> = (0..3_000)
            .map(|i| {
                let severity = [Severity::Error, Severity::Warning, Severity::Info][i % 3];
                finding(
                    Some(["a.yaml", "b.yaml"][i / 1_000 % 2]),
                    i as u32,
                    severity,
                )
            })
            .collect();
        let log: FindingLog = findings.iter().cloned().collect();
        assert!(log.blocks.len() > 1, "the test spans blocks");
        let back: Vec<Finding> = log.iter().map(|f| f.expect("decodes")).collect();
        assert_eq!(back, findings);
        assert_eq!(log.len(), 3_000);
        assert_eq!(
            (
                log.count(Severity::Error),
                log.count(Severity::Warning),
                log.count(Severity::Info)
            ),
            (1_000, 1_000, 1_000)
        );
        let runs: Vec<(Option<&str>, usize, usize)> = log
            .runs()
            .iter()
            .map(|r| (r.file.as_deref(), r.start, r.end))
            .collect();
        assert_eq!(
            runs,
            [
                (Some("a.yaml"), 0, 1_000),
                (Some("b.yaml"), 1_000, 2_000),
                (Some("a.yaml"), 2_000, 3_000)
            ]
        );
        for run in log.runs() {
            let got: Vec<Finding> = log.run(run).map(|f| f.expect("decodes")).collect();
            assert_eq!(got, findings[run.start..run.end]);
        }
        let tail: Vec<Finding> = log
            .lines_from(2_999)
            .map(|l| serde_json::from_slice(l).expect("decodes"))
            .collect();
        assert_eq!(tail, findings[2_999..]);
        assert_eq!(
            serde_json::to_value(&log).expect("serializes"),
            serde_json::to_value(&findings).expect("serializes")
        );
    }

    /// Templates follow their findings across blocks and runs; a finding without one has none, and the
    /// JSON names it only where there is one.
    #[test]
    fn templates_follow_their_findings() {
        let mut log = FindingLog::new();
        let templates = [
            None,
            Some("c/templates/a.yaml"),
            Some("c/templates/a.yaml"),
            Some("c/templates/b.yaml"),
            None,
        ];
        for i in 0..2_000 {
            let template = templates[i / 400];
            log.push_from(
                &finding(Some("r.yaml"), i as u32, Severity::Error),
                template,
            );
        }
        assert!(log.blocks.len() > 1, "the test spans blocks");
        assert_eq!(log.templates.len(), 3, "one entry per change of template");
        let got: Vec<Option<String>> = log
            .entries()
            .map(|e| e.expect("decodes").helm_template.map(|t| t.to_string()))
            .collect();
        for (i, template) in got.iter().enumerate() {
            assert_eq!(template.as_deref(), templates[i / 400], "finding {i}");
        }
        let run = Run {
            file: None,
            start: 850,
            end: 1_250,
            by_line: true,
            last_line: 0,
        };
        let tail: Vec<Option<Arc<str>>> = log
            .run_entries(&run)
            .map(|e| e.expect("decodes").helm_template)
            .collect();
        assert_eq!(tail.len(), 400);
        assert_eq!(tail[0].as_deref(), Some("c/templates/a.yaml"));
        assert_eq!(tail[399].as_deref(), Some("c/templates/b.yaml"));
        let json = serde_json::to_value(&log).expect("serializes");
        assert!(json[0].get("helm_template").is_none(), "{}", json[0]);
        assert_eq!(json[400]["helm_template"], "c/templates/a.yaml");
        assert_eq!(json[400]["rule"], "windows-pod-without-toleration");
    }

    #[test]
    fn runs_know_whether_their_lines_are_in_order() {
        let log: FindingLog = [
            finding(Some("a.yaml"), 3, Severity::Error),
            finding(Some("a.yaml"), 3, Severity::Error),
            finding(Some("a.yaml"), 9, Severity::Error),
            finding(Some("b.yaml"), 5, Severity::Error),
            finding(Some("b.yaml"), 2, Severity::Error),
        ]
        .into_iter()
        .collect();
        let by_line: Vec<bool> = log.runs().iter().map(|r| r.by_line).collect();
        assert_eq!(by_line, [true, false]);
    }
}
