//! `winplace check --format junit`: JUnit XML, as Azure DevOps (`PublishTestResults@2`), Jenkins and
//! GitLab's test reports read it (docs/reference/junit.md).
//!
//! One `<testsuite>` per input file, in the order the files were checked; one `<testcase>` per object and
//! rule (`windows-pod-without-toleration on Deployment/shop/web`), failed when its findings reach
//! `--fail-on`, with every finding's message, place and fix in the failure's body; a finding below
//! `--fail-on` leaves its testcase passed and is listed in the suite's `<system-out>`. Input that could
//! not be read is a testcase with an `<error>`; a file without findings is one passed testcase. The file
//! is valid against both schemas CI services document: the Apache Ant schema Azure DevOps links
//! (`windyroad/JUnit-Schema`), the stricter, and Jenkins' (`junit-10.xsd`); `server/tests/ci_formats.rs`
//! validates it with `xmllint`.
//!
//! Every text goes through quick-xml's escaping; characters XML 1.0 cannot hold at all (control
//! characters a manifest may smuggle into a name or a message) are replaced first.

use std::collections::HashMap;
use std::io::Write;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};
use winplace_rules::{ParseError, Severity};

use super::Outcome;
use super::findings::Entry;

/// The rule name a read error is reported under, as in the text report.
const INPUT_ERROR: &str = "input-error";

/// One testcase: an object and a rule, and its findings in file order.
struct Case {
    name: String,
    classname: String,
    entries: Vec<Entry>,
}

/// Writes the JUnit report of `outcome`; findings at or above `fail_on` fail their testcase.
pub fn write(outcome: &Outcome, fail_on: Severity, out: &mut dyn Write) -> std::io::Result<()> {
    let mut xml = Writer::new_with_indent(out, b' ', 2);
    xml.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let timestamp = crate::clock::now_utc_seconds();
    let hostname = hostname::get()
        .ok()
        .and_then(|h| h.into_string().ok())
        .filter(|h| !h.trim().is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    let errors_of = group_errors(&outcome.errors);
    xml.create_element("testsuites")
        .write_inner_content(|xml| {
            for (id, file) in files(outcome).iter().enumerate() {
                let mut entries = Vec::new();
                for run in outcome.findings.runs() {
                    if run.file.as_deref().unwrap_or("-") == file.as_str() {
                        for entry in outcome.findings.run_entries(run) {
                            entries.push(entry.map_err(std::io::Error::other)?);
                        }
                    }
                }
                let errors = errors_of.get(file.as_str()).map_or(&[][..], Vec::as_slice);
                let suite = Suite {
                    id,
                    file,
                    cases: cases(file, entries),
                    errors,
                    fail_on,
                    timestamp: &timestamp,
                    hostname: &hostname,
                };
                suite.write(xml)?;
            }
            Ok(())
        })?;
    xml.get_mut().write_all(b"\n")
}

/// The files of the report in first-seen order: those checked, those with read errors, those of
/// findings (a `--cluster` file's, `-` for findings about no file).
fn files(outcome: &Outcome) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    let names = outcome
        .checked
        .iter()
        .map(String::as_str)
        .chain(outcome.errors.iter().map(|e| e.file.as_str()))
        .chain(
            outcome
                .findings
                .runs()
                .iter()
                .map(|r| r.file.as_deref().unwrap_or("-")),
        );
    for name in names {
        if !order.iter().any(|o| o == name) {
            order.push(name.to_string());
        }
    }
    order
}

fn group_errors(errors: &[ParseError]) -> HashMap<&str, Vec<&ParseError>> {
    let mut by_file: HashMap<&str, Vec<&ParseError>> = HashMap::new();
    for e in errors {
        by_file.entry(e.file.as_str()).or_default().push(e);
    }
    by_file
}

/// A file's findings as testcases: one per object and rule, in the order of their first finding. The
/// class is the chart template Helm rendered the object from when one is named (what to edit), else
/// the file.
fn cases(file: &str, entries: Vec<Entry>) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    for entry in entries {
        let object = entry.finding.object.display_name();
        let key = (object.clone(), entry.finding.rule.clone());
        let at = *index.entry(key).or_insert_with(|| {
            cases.push(Case {
                name: format!("{} on {object}", entry.finding.rule),
                classname: entry.helm_template.as_deref().unwrap_or(file).to_string(),
                entries: Vec::new(),
            });
            cases.len() - 1
        });
        cases[at].entries.push(entry);
    }
    cases
}

/// One `<testsuite>`.
struct Suite<'a> {
    id: usize,
    file: &'a str,
    cases: Vec<Case>,
    errors: &'a [&'a ParseError],
    fail_on: Severity,
    timestamp: &'a str,
    hostname: &'a str,
}

impl Suite<'_> {
    fn fails(&self, case: &Case) -> bool {
        case.entries
            .iter()
            .any(|e| e.finding.severity >= self.fail_on)
    }

    fn write<W: Write>(&self, xml: &mut Writer<W>) -> std::io::Result<()> {
        let failures = self.cases.iter().filter(|c| self.fails(c)).count();
        // A file without findings or errors still shows that it was checked: one passed testcase.
        let clean = self.cases.is_empty() && self.errors.is_empty();
        let tests = self.cases.len() + self.errors.len() + usize::from(clean);
        let (id, tests, failures, errors) = (
            self.id.to_string(),
            tests.to_string(),
            failures.to_string(),
            self.errors.len().to_string(),
        );
        let name = xml_text(self.file);
        xml.create_element("testsuite")
            .with_attributes([
                ("name", name.as_str()),
                ("package", "winplace"),
                ("id", id.as_str()),
                ("timestamp", self.timestamp),
                ("hostname", self.hostname),
                ("tests", tests.as_str()),
                ("failures", failures.as_str()),
                ("errors", errors.as_str()),
                ("skipped", "0"),
                ("time", "0"),
            ])
            .write_inner_content(|xml| {
                xml.create_element("properties")
                    .write_inner_content(|xml| {
                        xml.create_element("property")
                            .with_attributes([
                                ("name", "winplace.version"),
                                ("value", env!("CARGO_PKG_VERSION")),
                            ])
                            .write_empty()?;
                        Ok(())
                    })?;
                for error in self.errors {
                    let name = format!("{INPUT_ERROR} at line {}", error.line);
                    let message = xml_text(&error.message);
                    xml.create_element("testcase")
                        .with_attributes([
                            ("name", name.as_str()),
                            ("classname", name_or_dash(&xml_text(self.file))),
                            ("time", "0"),
                        ])
                        .write_inner_content(|xml| {
                            xml.create_element("error")
                                .with_attributes([
                                    ("type", INPUT_ERROR),
                                    ("message", message.as_str()),
                                ])
                                .write_text_content(BytesText::new(&xml_text(
                                    &error.to_string(),
                                )))?;
                            Ok(())
                        })?;
                }
                if clean {
                    let name = format!("{}: no findings", self.file);
                    xml.create_element("testcase")
                        .with_attributes([
                            ("name", xml_text(&name).as_str()),
                            ("classname", name_or_dash(&xml_text(self.file))),
                            ("time", "0"),
                        ])
                        .write_empty()?;
                }
                let mut below = String::new();
                for case in &self.cases {
                    self.write_case(xml, case, &mut below)?;
                }
                xml.create_element("system-out")
                    .write_text_content(BytesText::new(&xml_text(&below)))?;
                xml.create_element("system-err")
                    .write_text_content(BytesText::new(""))?;
                Ok(())
            })?;
        Ok(())
    }

    /// A testcase: failed with every finding in the failure's body when it reaches `--fail-on`; else
    /// passed, its findings added to `below` (the suite's `<system-out>`).
    fn write_case<W: Write>(
        &self,
        xml: &mut Writer<W>,
        case: &Case,
        below: &mut String,
    ) -> std::io::Result<()> {
        let (name, classname) = (xml_text(&case.name), xml_text(&case.classname));
        let element = xml.create_element("testcase").with_attributes([
            ("name", name.as_str()),
            ("classname", name_or_dash(&classname)),
            ("time", "0"),
        ]);
        let body: String = case.entries.iter().map(describe).collect();
        if !self.fails(case) {
            below.push_str(&body);
            element.write_empty()?;
            return Ok(());
        }
        let first = &case.entries[0].finding;
        let message = match case.entries.len() {
            1 => first.message.clone(),
            n => format!("{} ({n} findings)", first.message),
        };
        let message = xml_text(&message);
        element.write_inner_content(|xml| {
            xml.create_element("failure")
                .with_attributes([("type", first.rule.as_str()), ("message", message.as_str())])
                .write_text_content(BytesText::new(&xml_text(&body)))?;
            Ok(())
        })?;
        Ok(())
    }
}

/// A finding as the lines of a failure's body: place, severity, rule and message, then where Helm
/// rendered it from, then the fix.
fn describe(entry: &Entry) -> String {
    let f = &entry.finding;
    let mut out = format!(
        "{}:{}: {} {}: {}",
        f.file.as_deref().unwrap_or("-"),
        f.line.map_or("-".to_string(), |l| l.to_string()),
        f.severity.as_str(),
        f.rule,
        f.message
    );
    if !f.path.is_empty() {
        out.push_str(&format!(" ({})", f.path));
    }
    if let Some(template) = &entry.helm_template {
        out.push_str(&format!(
            "\n    from {template}: {}",
            f.object.display_name()
        ));
    }
    if let Some(fix) = &f.fix {
        out.push_str(&format!("\n    fix: {}", fix.description));
    }
    out.push('\n');
    out
}

/// An empty class name is not a valid `xs:token` of length ≥ 1 for every reader: `-` instead.
fn name_or_dash(name: &str) -> &str {
    if name.trim().is_empty() { "-" } else { name }
}

/// `text` with the characters XML 1.0 cannot hold, escaped or not (control characters other than tab,
/// line feed and carriage return; U+FFFE and U+FFFF), replaced by U+FFFD.
fn xml_text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_xml_cannot_hold_are_replaced() {
        assert_eq!(
            xml_text("a\u{0}b\u{1b}c\td\ne"),
            "a\u{fffd}b\u{fffd}c\td\ne"
        );
        assert_eq!(xml_text("<&>\"'"), "<&>\"'", "escaping is quick-xml's");
    }
}
