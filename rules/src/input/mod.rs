//! Reading manifests: multi-document YAML and JSON, with the line of every field.
//!
//! JSON is read by the same YAML parser (JSON is YAML's flow style), so it gets line numbers too.
//! The text is first cut into documents at `---` and `...` marker lines, so that a broken document
//! does not hide the others; each document is then parsed on its own and converted to
//! `serde_json::Value` under the YAML 1.2 core schema. Input is untrusted: see [`Limits`].
//!
//! ```
//! use winplace_rules::input::{parse, Limits};
//! let text = "apiVersion: v1\nkind: Pod\n---\nkind: [oops\n---\n{\"apiVersion\": \"v1\",\n \"kind\": \"Node\"}\n";
//! let parsed = parse("in.yaml", text, &Limits::default());
//! assert_eq!(parsed.documents.len(), 2);
//! assert_eq!(parsed.documents[1].line, 6);
//! assert_eq!(parsed.errors[0].line, 4);
//! assert_eq!(parsed.errors[0].to_string().split(':').take(2).collect::<Vec<_>>(), ["in.yaml", "4"]);
//! ```

mod blanks;
mod helm_source;
mod limits;
mod lines;
mod scalars;
mod yaml;

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use helm_source::HelmSources;
pub use limits::{LimitError, Limits, Prescan, prescan};
pub use lines::LineMap;

/// A document that could not be read, or input refused by a [`Limits`] check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseError {
    /// The input's name as given to [`parse`].
    pub file: String,
    /// 1-based line of the error.
    pub line: u32,
    /// 1-based column (in characters) of the error.
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for ParseError {}

/// One parsed document: a mapping (a Kubernetes object or a `List`).
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The input's name.
    pub file: String,
    /// 0-based position of the document in the file, counting every document that has content
    /// (including ones that failed to parse; empty documents are not counted).
    pub index: usize,
    /// 1-based line where the document's content starts.
    pub line: u32,
    /// The document as JSON.
    pub value: serde_json::Value,
    /// Line of every node and mapping key (absolute lines in the file).
    pub lines: LineMap,
}

/// Everything read from one input: the documents that parsed, and an error for each that did not.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedInput {
    /// Documents in file order.
    pub documents: Vec<Document>,
    /// Errors in file order.
    pub errors: Vec<ParseError>,
}

/// One document's text and where it starts.
struct Chunk<'a> {
    text: &'a str,
    /// 0-based line of the chunk's first line in the input.
    first_line: u32,
    /// 0-based line of the first line with content (for errors about the whole document).
    content_line: u32,
    /// What kubectl makes of the document's markers, when it does not read it as written.
    markers: Option<Markers>,
}

/// Document markers kubectl reads otherwise than YAML does: its reader (apimachinery's `YAMLReader`)
/// cuts the file at `---` lines only, and go-yaml reads one document of each part
/// (docs/reference/yaml-kubectl.md, "Documents").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Markers {
    /// Content after a `...` line with no `---` before it: go-yaml stops at the `...`, so kubectl
    /// silently never applies this document.
    AfterEnd(u32),
    /// Content on a `---` line: kubectl refuses it (`invalid Yaml document separator`).
    OnMarker(u32),
    /// A `%YAML` or `%TAG` directive: kubectl's cut leaves it without its document, and go-yaml refuses
    /// that; the document itself is read.
    Directive(u32),
}

impl Markers {
    /// The 0-based line, what to say, and whether the document is still read.
    fn refusal(self) -> (u32, &'static str, bool) {
        match self {
            Markers::AfterEnd(line) => (
                line,
                "kubectl never applies this document: it reads nothing after `...` until the next `---` line (go-yaml reads one document between two `---` lines); start the document with a `---` line",
                false,
            ),
            Markers::OnMarker(line) => (
                line,
                "kubectl refuses content on a `---` line (\"invalid Yaml document separator\"); move it to the next line",
                false,
            ),
            Markers::Directive(line) => (
                line,
                "kubectl cannot read a file with a `%YAML` or `%TAG` directive (it cuts the file at `---` lines, which leaves the directive without its document); remove the directive",
                true,
            ),
        }
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `---` or `...` at the start of a line, followed by a blank or the end of the line.
fn marker(line: &str, m: &str) -> bool {
    line.strip_prefix(m)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

/// Whether a line holds YAML content (not blank, not a comment). A `---` line with a node on it counts.
fn has_content(line: &str) -> bool {
    let rest = if marker(line, "---") {
        &line[3..]
    } else {
        line
    };
    let t = rest.trim_start_matches([' ', '\t']);
    !t.is_empty() && !t.starts_with('#')
}

/// Adds the chunk `text[from..to]` when it has content.
fn close<'a>(
    chunks: &mut Vec<Chunk<'a>>,
    text: &'a str,
    (from, to): (usize, usize),
    first_line: u32,
    (content, markers): (Option<u32>, Option<Markers>),
) {
    if let (Some(content_line), Some(text)) = (content, text.get(from..to)) {
        chunks.push(Chunk {
            text,
            first_line,
            content_line,
            markers,
        });
    }
}

/// Cuts `text` (`\n` line ends) into documents at `---` and `...` lines. Chunks without content are
/// dropped; directives and comments before a `---` stay with the document that follows. Each chunk
/// says what kubectl makes of its markers when it does not read it as written ([`Markers`]).
fn split(text: &str) -> Vec<Chunk<'_>> {
    let mut chunks = Vec::new();
    let mut start = 0usize;
    let mut first_line = 0u32;
    let mut content_line: Option<u32> = None;
    let mut markers: Option<Markers> = None;
    let mut seen_marker = false;
    // After a `...` line, until a `---` line.
    let mut after_end = false;
    let mut offset = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let i = to_u32(i);
        let body = line.strip_suffix('\n').unwrap_or(line);
        let next = offset + line.len();
        if marker(body, "---") {
            if content_line.is_some() || seen_marker {
                close(
                    &mut chunks,
                    text,
                    (start, offset),
                    first_line,
                    (content_line, markers),
                );
                start = offset;
                first_line = i;
                content_line = None;
                markers = None;
            }
            seen_marker = true;
            after_end = false;
            if has_content(body) {
                content_line = Some(i);
                markers = Some(Markers::OnMarker(i));
            }
        } else if marker(body, "...") {
            close(
                &mut chunks,
                text,
                (start, next),
                first_line,
                (content_line, markers),
            );
            start = next;
            first_line = i + 1;
            content_line = None;
            markers = None;
            seen_marker = false;
            after_end = true;
        } else if content_line.is_none() && body.starts_with('%') {
            // A directive belongs to the document after the next `---`.
            markers = markers.or(Some(Markers::Directive(i)));
        } else if content_line.is_none() && has_content(body) {
            content_line = Some(i);
            if after_end {
                markers = Some(Markers::AfterEnd(i));
            }
        }
        offset = next;
    }
    close(
        &mut chunks,
        text,
        (start, text.len()),
        first_line,
        (content_line, markers),
    );
    chunks
}

/// Line ends as `\n` (CRLF and lone CR are line breaks in YAML too) and no byte order mark, so that
/// document markers are found and lines count the same way everywhere.
fn normalize(text: &str) -> Cow<'_, str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Parses `text` (YAML or JSON, any number of documents) named `file`.
///
/// Never fails as a whole: each document that cannot be read gives a [`ParseError`] and the others are
/// still returned. Empty documents and documents holding only `null` are skipped; a document that is
/// not a mapping is an error. Input over `limits` is refused with an error at the line where the
/// limit was crossed (for `max_bytes` and `max_documents`, the rest of the input is not read).
pub fn parse(file: &str, text: &str, limits: &Limits) -> ParsedInput {
    let mut out = ParsedInput::default();
    parse_each(file, text, limits, &mut |read| match read {
        Ok(doc) => out.documents.push(doc),
        Err(e) => out.errors.push(e),
    });
    out
}

/// [`parse`], handing each document (or its error) to `on` in file order as soon as it is read, so that
/// a caller that is done with a document can drop it: memory is bounded by the largest document, not
/// by the input. Same limits, same errors as [`parse`].
///
/// ```
/// use winplace_rules::input::{Limits, parse_each};
/// let mut kinds = Vec::new();
/// parse_each("a.yaml", "kind: Pod\n---\nkind: Node\n---\n[1]\n", &Limits::default(), &mut |read| {
///     kinds.push(read.map(|doc| doc.value["kind"].to_string()).map_err(|e| e.line));
/// });
/// assert_eq!(kinds, [Ok("\"Pod\"".into()), Ok("\"Node\"".into()), Err(5)]);
/// ```
pub fn parse_each(
    file: &str,
    text: &str,
    limits: &Limits,
    on: &mut dyn FnMut(Result<Document, ParseError>),
) {
    let error = |line: u32, column: u32, message: String| ParseError {
        file: file.to_string(),
        line: line.max(1),
        column: column.max(1),
        message,
    };
    if text.len() > limits.max_bytes {
        let head = text.as_bytes().get(..limits.max_bytes).unwrap_or_default();
        let line = head.iter().filter(|b| **b == b'\n').count() + 1;
        on(Err(error(
            to_u32(line),
            1,
            format!(
                "the input is {} bytes, over the limit of {} bytes; nothing was read",
                text.len(),
                limits.max_bytes
            ),
        )));
        return;
    }
    let text = normalize(text);
    let mut index = 0usize;
    for chunk in split(&text) {
        if index >= limits.max_documents {
            on(Err(error(
                chunk.content_line + 1,
                1,
                format!(
                    "more than {} documents; this one and the rest were not read",
                    limits.max_documents
                ),
            )));
            break;
        }
        if let Some(markers) = chunk.markers {
            let (line, message, read) = markers.refusal();
            on(Err(error(line + 1, 1, message.to_string())));
            if !read {
                index += 1;
                continue;
            }
        }
        for result in yaml::parse_chunk(chunk.text, limits) {
            match result {
                Ok(doc) if doc.value.is_object() => {
                    let mut lines = doc.lines;
                    lines.shift(chunk.first_line);
                    on(Ok(Document {
                        file: file.to_string(),
                        index,
                        line: doc.line + chunk.first_line,
                        value: doc.value,
                        lines,
                    }));
                }
                Ok(doc) => on(Err(error(
                    doc.line + chunk.first_line,
                    1,
                    "a Kubernetes object must be a mapping (`apiVersion: ...`, `kind: ...`)"
                        .to_string(),
                ))),
                Err(e) => on(Err(error(e.line + chunk.first_line, e.column, e.message))),
            }
            index += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FieldPath;
    use std::time::{Duration, Instant};

    /// The repository's corpus.
    fn corpus() -> std::path::PathBuf {
        std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus"))
    }

    fn read(case: &str, file: &str) -> String {
        let path = corpus().join(case).join(file);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn ok(text: &str) -> ParsedInput {
        let parsed = parse("t.yaml", text, &Limits::default());
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        parsed
    }

    /// The 1-based line of the first line of `text` containing `needle` at or after line `from`.
    fn line_containing(text: &str, needle: &str, from: u32) -> u32 {
        let found = text
            .lines()
            .enumerate()
            .skip(from.saturating_sub(1) as usize)
            .find(|(_, l)| l.contains(needle));
        match found {
            Some((i, _)) => to_u32(i + 1),
            None => panic!("{needle:?} not in text"),
        }
    }

    #[test]
    fn every_corpus_file_parses_except_the_broken_one() {
        let mut seen = 0;
        let entries = std::fs::read_dir(corpus()).expect("corpus folder");
        for entry in entries.flatten() {
            let case = entry.file_name().to_string_lossy().to_string();
            for file in ["input.yaml", "cluster.yaml"] {
                let path = entry.path().join(file);
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                seen += 1;
                let parsed = parse(file, &text, &Limits::default());
                // The case's expect.yaml lists the lines of its parse errors (`parse_errors`).
                let expect = parse(
                    "expect.yaml",
                    &read(&case, "expect.yaml"),
                    &Limits::default(),
                );
                let wanted: Vec<u32> = expect.documents[0].value["parse_errors"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e["line"].as_u64())
                    .map(|l| to_u32(usize::try_from(l).unwrap_or(usize::MAX)))
                    .collect();
                if file == "input.yaml" && !wanted.is_empty() {
                    let lines: Vec<u32> = parsed.errors.iter().map(|e| e.line).collect();
                    assert_eq!(lines, wanted, "{case}: {:?}", parsed.errors);
                    if case == "yaml-parse-error" {
                        assert!(parsed.documents.is_empty());
                    }
                } else {
                    assert!(
                        parsed.errors.is_empty(),
                        "{case}/{file}: {:?}",
                        parsed.errors
                    );
                    assert!(!parsed.documents.is_empty(), "{case}/{file}");
                }
            }
        }
        assert!(seen >= 30, "only {seen} corpus files found");
    }

    #[test]
    fn lines_of_fields_match_the_text() {
        let text = read("toleration-case-mismatch", "input.yaml");
        let parsed = ok(&text);
        let lines = &parsed.documents[0].lines;
        let tol = line_containing(&text, "tolerations:", 1);
        let rows = [
            ("spec.template.spec.tolerations", tol),
            (
                "spec.template.spec.tolerations[0]",
                line_containing(&text, "- key: \"os\"", tol),
            ),
            (
                "spec.template.spec.tolerations[0].value",
                line_containing(&text, "value: \"Windows\"", tol),
            ),
            (
                "spec.template.spec.tolerations[0].Effect",
                line_containing(&text, "Effect:", tol),
            ),
            (
                "spec.template.spec.nodeSelector[kubernetes.io/os]",
                line_containing(&text, "kubernetes.io/os: windows", 1),
            ),
            // Missing: reported at the nearest present parent.
            (
                "spec.template.spec.tolerations[0].operator",
                line_containing(&text, "- key: \"os\"", tol),
            ),
            (
                "spec.template.spec.runtimeClassName",
                line_containing(&text, "  spec:", 10),
            ),
        ];
        for (path, want) in rows {
            assert_eq!(lines.line_of(&FieldPath::parse(path)), Some(want), "{path}");
        }
    }

    #[test]
    fn later_documents_keep_their_file_lines() {
        let text =
            "a: 1\n---\n# comment\nkind: Pod\nspec:\n  x: [1,\n    2]\n...\n---\nkind: Node\n";
        let parsed = ok(text);
        let docs = &parsed.documents;
        assert_eq!(docs.len(), 3);
        assert_eq!(
            docs.iter().map(|d| (d.index, d.line)).collect::<Vec<_>>(),
            [(0, 1), (1, 4), (2, 10)]
        );
        assert_eq!(
            docs[1].lines.line_of(&FieldPath::parse("spec.x[1]")),
            Some(7)
        );
        assert_eq!(docs[2].value["kind"], "Node");
    }

    #[test]
    fn json_gets_lines_too() {
        let text = "{\n  \"kind\": \"List\",\n  \"items\": [\n    {\n      \"kind\": \"Pod\",\n      \"spec\": {\"nodeName\": \"n1\"}\n    }\n  ]\n}\n";
        let parsed = ok(text);
        let doc = &parsed.documents[0];
        assert_eq!(doc.value["items"][0]["spec"]["nodeName"], "n1");
        assert_eq!(
            doc.lines.line_of(&FieldPath::parse("items[0].kind")),
            Some(5)
        );
        assert_eq!(
            doc.lines
                .line_of(&FieldPath::parse("items[0].spec.nodeName")),
            Some(6)
        );
        // Tab-indented JSON is fine as well.
        let tabs = ok("{\n\t\"kind\": \"Pod\",\n\t\"spec\": {}\n}\n");
        assert_eq!(
            tabs.documents[0].lines.line_of(&FieldPath::parse("spec")),
            Some(3)
        );
    }

    #[test]
    fn a_broken_document_does_not_hide_the_others() {
        let text =
            "kind: A\n---\nkind: B\n  bad: indent\n---\nkind: C\n---\n- a list\n---\nkind: [D\n";
        let parsed = parse("f.yaml", text, &Limits::default());
        let kinds: Vec<&str> = parsed
            .documents
            .iter()
            .filter_map(|d| d.value["kind"].as_str())
            .collect();
        assert_eq!(kinds, ["A", "C"]);
        let errors: Vec<(u32, bool)> = parsed
            .errors
            .iter()
            .map(|e| (e.line, e.file == "f.yaml"))
            .collect();
        assert_eq!(errors, [(4, true), (8, true), (10, true)]);
        assert!(parsed.errors[1].message.contains("must be a mapping"));
        assert_eq!(parsed.documents[1].index, 2);
    }

    #[test]
    fn crlf_and_bom_give_the_same_result() {
        let text = read("cronjob-nested-template", "input.yaml");
        let plain = ok(&text);
        let crlf = ok(&text.replace('\n', "\r\n"));
        let bom = ok(&format!("\u{feff}{text}"));
        let cr = ok(&text.replace('\n', "\r"));
        for other in [&crlf, &bom, &cr] {
            assert_eq!(other.documents, plain.documents);
        }
        let p = FieldPath::parse("spec.jobTemplate.spec.template.spec.containers[0].image");
        assert_eq!(
            crlf.documents[0].lines.line_of(&p),
            Some(line_containing(&text, "image:", 1))
        );
    }

    #[test]
    fn empty_documents_are_skipped() {
        for text in [
            "",
            "\n\n",
            "# nothing\n",
            "---\n---\n",
            "--- # c\n...\n",
            "%YAML 1.2\n---\n",
        ] {
            let parsed = ok(text);
            assert!(parsed.documents.is_empty(), "{text:?}");
        }
        let parsed = ok("---\nkind: Pod\n---\n\n---\nkind: Node\n");
        assert_eq!(
            parsed
                .documents
                .iter()
                .map(|d| (d.index, d.line))
                .collect::<Vec<_>>(),
            [(0, 2), (1, 6)]
        );
    }

    #[test]
    fn display_is_file_line_column_message() {
        let e = ParseError {
            file: "a.yaml".into(),
            line: 3,
            column: 5,
            message: "bad".into(),
        };
        assert_eq!(e.to_string(), "a.yaml:3:5: bad");
        let json = serde_json::to_string(&e).expect("serializes");
        assert_eq!(
            serde_json::from_str::<ParseError>(&json).expect("round trip"),
            e
        );
    }

    /// Parses hostile text; a hang guard only (what the limits refuse takes milliseconds, what they let
    /// through would take minutes or all memory): speed is the benchmarks' business, not a test's.
    fn fast(text: &str, limits: &Limits) -> ParsedInput {
        let start = Instant::now();
        let parsed = parse("h.yaml", text, limits);
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{:?}",
            start.elapsed()
        );
        parsed
    }

    #[test]
    fn billion_laughs_is_refused_quickly() {
        let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nl0: &l0 \"lol\"\n");
        for level in 1..=9 {
            let prev = format!("*l{}", level - 1);
            let items = [prev.as_str(); 9].join(", ");
            text.push_str(&format!("l{level}: &l{level} [{items}]\n"));
        }
        let parsed = fast(&text, &Limits::default());
        assert!(parsed.documents.is_empty());
        assert_eq!(parsed.errors.len(), 1, "{:?}", parsed.errors);
        assert!(parsed.errors[0].line > 3, "{:?}", parsed.errors);
    }

    #[test]
    fn deep_nesting_is_refused_quickly() {
        let rows = [
            ("flow", format!("a: {}", "[".repeat(20_000))),
            (
                "flow, closed",
                format!("a: {}x{}", "[".repeat(20_000), "]".repeat(20_000)),
            ),
            ("block", format!("{}x\n", "- ".repeat(20_000))),
            (
                "mappings",
                (0..150)
                    .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
                    .collect(),
            ),
        ];
        for (name, text) in rows {
            // Run with a small stack: the refusal must not recurse on the input's depth.
            let limits = Limits::default();
            let parsed = std::thread::Builder::new()
                .stack_size(512 * 1024)
                .spawn(move || fast(&text, &limits))
                .expect("thread")
                .join()
                .expect("no stack overflow");
            assert_eq!(parsed.errors.len(), 1, "{name}");
            assert!(
                parsed.errors[0].message.contains("deeper than the limit"),
                "{name}: {:?}",
                parsed.errors
            );
        }
    }

    #[test]
    fn size_and_document_limits_name_the_crossing_line() {
        let limits = Limits {
            max_bytes: 20,
            ..Limits::default()
        };
        let parsed = fast("kind: A\nkind2: B\nkind3: C\n", &limits);
        assert_eq!(parsed.errors.len(), 1);
        assert_eq!(parsed.errors[0].line, 3);
        assert!(parsed.documents.is_empty());

        let limits = Limits {
            max_documents: 2,
            ..Limits::default()
        };
        let parsed = fast("a: 1\n---\nb: 2\n---\n\n---\nc: 3\n---\nd: 4\n", &limits);
        assert_eq!(parsed.documents.len(), 2);
        assert_eq!(parsed.errors.len(), 1);
        assert_eq!(parsed.errors[0].line, 7);

        // Empty documents cost nothing and do not count.
        let many = format!("{}a: 1\n---\nb: 2\n", "---\n".repeat(200_000));
        let parsed = fast(&many, &limits);
        assert_eq!(parsed.documents.len(), 2);
        assert!(parsed.errors.is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Any text made of YAML's structural characters parses or fails cleanly, never panics, and
        /// every error points at a line of the input.
        #[test]
        fn arbitrary_text_never_panics(text in "([-?:,&*!|>'\"#{}\\[\\] \tab1\n.%~]|---\n|\r\n){0,200}") {
            let parsed = parse("p.yaml", &text, &Limits::default());
            let lines = to_u32(normalize(&text).split('\n').count());
            for e in &parsed.errors {
                proptest::prop_assert!(e.line >= 1 && e.line <= lines, "{e} in {lines} lines");
            }
            for d in &parsed.documents {
                proptest::prop_assert!(d.line >= 1 && d.line <= lines);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]
        /// Long runs of nesting tokens never reach saphyr deeper than the pre-scan allows: parsing
        /// them on a 256 KiB stack does not overflow.
        #[test]
        fn nesting_tokens_never_overflow_the_stack(tokens in proptest::collection::vec(
            proptest::sample::select(vec![
                "- ", "? ", ": ", "[", "{", "]", "}", ", ", "a: ", "a:", "\n", "  ", "&a ", "*a ", "|\n",
                "\"", "'", "# ", "--- ", "!t ", "x",
            ]),
            0..3000,
        )) {
            let text: String = tokens.concat();
            let handle = std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || parse("n.yaml", &text, &Limits::default()).errors.len());
            proptest::prop_assert!(handle.expect("thread").join().is_ok());
        }
    }

    #[test]
    fn aliases_expand_within_the_budget() {
        let text = "kind: Pod\nbase: &b {name: x}\nspec:\n  containers: [*b, *b]\n";
        let parsed = ok(text);
        assert_eq!(
            parsed.documents[0].value["spec"]["containers"][1]["name"],
            "x"
        );
    }
}
