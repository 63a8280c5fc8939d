//! `winplace check` as CI services read it: one run writes SARIF, JUnit and GitLab Code Quality files and
//! prints text, each valid for its reader and all counting the same findings; `.winplace.yaml` found
//! from a subdirectory; completions and man pages; rendered Helm charts mapped back to their templates.
//!
//! JUnit is validated with Debian's `xmllint` (libxml2-utils, installed by `cargo xtask test`) against
//! the two schemas in `tests/data/junit/`; Code Quality against the fields GitLab documents
//! (docs/reference/code-quality.md). SARIF's schema is checked in Chromium (playwright-tests/tests/sarif.spec.ts).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use quick_xml::events::Event;
use serde_json::Value;

use crate::common::run::winplace;

fn corpus(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(case)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `xmllint --noout --schema XSD FILE`: `Err` with what it said when the file is not valid.
fn xmllint(schema: &str, file: &Path) -> Result<(), String> {
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/junit")
        .join(schema);
    let out = Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(&xsd)
        .arg(file)
        .output()
        .expect(
            "xmllint runs (Debian's libxml2-utils: `cargo xtask test` installs it, or apt-get install libxml2-utils)",
        );
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Every element of an XML file: its name, attributes and text (the text of its direct children).
#[derive(Debug, Default, Clone)]
struct Element {
    name: String,
    attrs: HashMap<String, String>,
    text: String,
    /// The element's index among all, of its parent.
    parent: Option<usize>,
}

fn elements(xml: &str) -> Vec<Element> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut out: Vec<Element> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    loop {
        let event = reader.read_event().expect("well-formed XML");
        let mut start = |e: &quick_xml::events::BytesStart<'_>| -> usize {
            let attrs = e
                .attributes()
                .map(|a| {
                    let a = a.expect("attribute");
                    (
                        a.key.as_ref().to_string(),
                        a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .expect("escaped value")
                            .into_owned(),
                    )
                })
                .collect();
            out.push(Element {
                name: e.name().as_ref().to_string(),
                attrs,
                text: String::new(),
                parent: open.last().copied(),
            });
            out.len() - 1
        };
        match event {
            Event::Start(e) => {
                let i = start(&e);
                open.push(i);
            }
            Event::Empty(e) => {
                start(&e);
            }
            Event::End(_) => {
                open.pop();
            }
            Event::Text(t) => {
                if let Some(&i) = open.last() {
                    out[i].text.push_str(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) => {
                if let Some(&i) = open.last() {
                    let name = r.xml10_content();
                    let c = match name.as_ref() {
                        "lt" => '<',
                        "gt" => '>',
                        "amp" => '&',
                        "quot" => '"',
                        "apos" => '\'',
                        _ => r
                            .resolve_char_ref()
                            .expect("a character reference")
                            .unwrap_or_else(|| panic!("unexpected entity {name}")),
                    };
                    out[i].text.push(c);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

/// The counts of the text report's summary line: errors, warnings, infos.
fn text_summary(text: &str) -> (usize, usize, usize) {
    let line = text
        .lines()
        .rfind(|l| l.contains(" warning") && l.contains(" info") && l.contains(" file"))
        .unwrap_or_else(|| panic!("no summary line in:\n{text}"));
    let numbers: Vec<usize> = line
        .split([' ', ','])
        .filter_map(|w| w.parse().ok())
        .collect();
    (numbers[0], numbers[1], numbers[2])
}

/// A Linux Deployment pinned to Linux: nothing to report.
const CLEAN: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: shop}\nspec:\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec:\n      nodeSelector: {kubernetes.io/os: linux}\n      containers:\n      - {name: api, image: nginx:1.27}\n";

/// A folder of manifests: findings of every severity (an info on the pinned one), one that cannot be
/// read, a clean one.
fn inputs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("k8s")).expect("mkdir");
    for (case, name) in [
        ("windows-deployment-unpinned", "web.yaml"),
        ("daemonset-tolerates-everything", "agent.yaml"),
        ("yaml-parse-error", "broken.yaml"),
        ("windows-deployment-pinned", "pinned.yaml"),
    ] {
        std::fs::copy(
            corpus(case).join("input.yaml"),
            dir.path().join("k8s").join(name),
        )
        .expect("copy");
    }
    std::fs::write(dir.path().join("k8s/clean.yaml"), CLEAN).expect("write");
    dir
}

/// One run, four reports: the three files parse and validate, the text is printed, and every report
/// counts the same findings (and the same unreadable input).
#[test]
fn one_run_writes_sarif_junit_and_code_quality_files_and_prints_text() {
    let dir = inputs();
    let run = winplace(
        dir.path(),
        &[
            "check",
            "k8s/",
            "--format",
            "sarif",
            "--output",
            "out.sarif",
            "--format",
            "junit",
            "--output",
            "junit.xml",
            "--format",
            "codequality",
            "--output",
            "gl-code-quality.json",
            "--format",
            "text",
        ],
        None,
    );
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(run.status.code(), Some(2), "a parse error: {stdout}");
    let (errors, warnings, infos) = text_summary(&stdout);
    assert!(errors >= 3 && warnings >= 2 && infos >= 1, "{stdout}");
    assert!(stdout.contains("k8s/broken.yaml:12:"), "{stdout}");

    // SARIF: results by level, notifications for the unreadable file.
    let sarif = json(&dir.path().join("out.sarif"));
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    let level = |l: &str| results.iter().filter(|r| r["level"] == l).count();
    assert_eq!(
        (level("error"), level("warning"), level("note")),
        (errors, warnings, infos)
    );
    let notifications = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .expect("notifications")
        .len();
    assert_eq!(notifications, 1);

    // JUnit: valid against both schemas; a failed testcase per object and rule with errors, an errored
    // one per unreadable input, every error finding in a failure's body.
    let junit_path = dir.path().join("junit.xml");
    for schema in ["ant-junit.xsd", "jenkins-junit-10.xsd"] {
        xmllint(schema, &junit_path)
            .unwrap_or_else(|e| panic!("{schema}: {e}\n{}", read(&junit_path)));
    }
    let xml = elements(&read(&junit_path));
    let count = |name: &str| xml.iter().filter(|e| e.name == name).count();
    let object_rules = |lvl: &str| -> BTreeSet<(String, String)> {
        results
            .iter()
            .filter(|r| r["level"] == lvl)
            .map(|r| {
                let object = r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
                    .as_str()
                    .and_then(|n| n.split(':').next())
                    .unwrap_or_default()
                    .to_string();
                (object, r["ruleId"].as_str().unwrap_or_default().to_string())
            })
            .collect()
    };
    assert_eq!(count("failure"), object_rules("error").len());
    assert_eq!(count("error"), notifications);
    let suites: Vec<&Element> = xml.iter().filter(|e| e.name == "testsuite").collect();
    let names: Vec<&str> = suites.iter().map(|s| s.attrs["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "k8s/agent.yaml",
            "k8s/broken.yaml",
            "k8s/clean.yaml",
            "k8s/pinned.yaml",
            "k8s/web.yaml"
        ],
        "one testsuite per file, the clean one too"
    );
    let clean: Vec<&str> = xml
        .iter()
        .filter(|e| {
            e.name == "testcase"
                && e.parent.is_some_and(|p| {
                    xml[p].attrs.get("name").map(String::as_str) == Some("k8s/clean.yaml")
                })
        })
        .map(|e| e.attrs["name"].as_str())
        .collect();
    assert_eq!(clean, ["k8s/clean.yaml: no findings"]);
    let sum = |attr: &str| -> usize {
        suites
            .iter()
            .map(|s| s.attrs[attr].parse::<usize>().expect("a count"))
            .sum()
    };
    assert_eq!(sum("failures"), count("failure"));
    assert_eq!(sum("errors"), count("error"));
    assert_eq!(sum("tests"), count("testcase"));
    let failures: String = xml
        .iter()
        .filter(|e| e.name == "failure")
        .map(|e| e.text.clone())
        .collect();
    for r in results.iter().filter(|r| r["level"] == "error") {
        let message = r["message"]["text"].as_str().unwrap_or_default();
        let first = message.split(" Fix: ").next().unwrap_or_default();
        assert!(
            failures.contains(first),
            "{first} not in a failure:\n{failures}"
        );
    }
    assert!(
        failures.contains("fix: "),
        "the fix is in the body: {failures}"
    );

    // Code Quality: GitLab's documented fields; the fingerprints are SARIF's.
    let issues = json(&dir.path().join("gl-code-quality.json"));
    let issues = issues.as_array().expect("an array");
    assert_eq!(issues.len(), results.len() + notifications);
    let severities = ["info", "minor", "major", "critical", "blocker"];
    for issue in issues {
        assert!(
            issue["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{issue}"
        );
        assert!(
            issue["check_name"].as_str().is_some_and(|d| !d.is_empty()),
            "{issue}"
        );
        assert!(
            issue["fingerprint"].as_str().is_some_and(|d| !d.is_empty()),
            "{issue}"
        );
        assert!(
            severities.contains(&issue["severity"].as_str().unwrap_or("")),
            "{issue}"
        );
        let path = issue["location"]["path"].as_str().expect("location.path");
        assert!(
            path.starts_with("k8s/"),
            "relative to the repository: {issue}"
        );
        assert!(
            issue["location"]["lines"]["begin"]
                .as_u64()
                .is_some_and(|l| l >= 1),
            "{issue}"
        );
    }
    let prints = |v: Vec<&Value>| -> BTreeSet<String> {
        v.iter()
            .map(|f| f.as_str().unwrap_or_default().to_string())
            .collect()
    };
    let cq_prints = prints(
        issues
            .iter()
            .filter(|i| i["check_name"] != "input-error")
            .map(|i| &i["fingerprint"])
            .collect(),
    );
    let sarif_prints = prints(
        results
            .iter()
            .map(|r| &r["partialFingerprints"]["winplaceFinding/v1"])
            .collect(),
    );
    assert_eq!(cq_prints, sarif_prints);
    assert_eq!(
        cq_prints.len(),
        results.len(),
        "one fingerprint per finding"
    );
    let by_severity = |s: &str| issues.iter().filter(|i| i["severity"] == s).count();
    assert_eq!(
        (
            by_severity("critical"),
            by_severity("major"),
            by_severity("info"),
            by_severity("blocker")
        ),
        (errors, warnings, infos, notifications)
    );
}

/// `--fail-on warning` fails the testcases of warnings too (what the exit code counts); without it,
/// warnings pass and are listed in the suite's output.
#[test]
fn junit_failures_follow_fail_on() {
    let dir = inputs();
    let failures = |fail_on: &str| -> (usize, String) {
        let run = winplace(
            dir.path(),
            &[
                "check",
                "k8s/web.yaml",
                "--format",
                "junit",
                "--fail-on",
                fail_on,
            ],
            None,
        );
        assert_eq!(run.status.code(), Some(1));
        let text = String::from_utf8_lossy(&run.stdout).into_owned();
        let xml = elements(&text);
        let out: String = xml
            .iter()
            .filter(|e| e.name == "system-out")
            .map(|e| e.text.clone())
            .collect();
        (xml.iter().filter(|e| e.name == "failure").count(), out)
    };
    let (on_errors, out_errors) = failures("error");
    let (on_warnings, out_warnings) = failures("warning");
    assert_eq!(on_errors, 2, "two rules with errors on one Deployment");
    assert_eq!(on_warnings, 3, "and the build-selector warning");
    assert!(
        out_errors.contains("warning windows-pod-without-build-selector"),
        "{out_errors}"
    );
    assert!(
        !out_warnings.contains("windows-pod-without-build-selector"),
        "{out_warnings}"
    );
}

#[test]
fn reports_that_cannot_be_paired_or_written_are_errors() {
    let dir = inputs();
    let run = winplace(
        dir.path(),
        &[
            "check",
            "k8s/clean.yaml",
            "--format",
            "json",
            "--format",
            "text",
        ],
        None,
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("standard output"));
    let run = winplace(
        dir.path(),
        &[
            "check",
            "k8s/clean.yaml",
            "--format",
            "sarif",
            "--output",
            "no/such/dir/out.sarif",
            "--format",
            "text",
        ],
        None,
    );
    assert_eq!(
        run.status.code(),
        Some(2),
        "an unwritten report fails the run"
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("cannot write the sarif report to no/such/dir/out.sarif"),
        "{stderr}"
    );
    assert!(
        String::from_utf8_lossy(&run.stdout).contains("0 errors"),
        "the others are still written"
    );
}

/// `.winplace.yaml` at the repository's root holds the settings of a run in any subdirectory; JSON and
/// `--verbose` say which file was read; `--settings` wins; a bad one exits 2 naming file, line and
/// setting.
#[test]
fn the_repository_settings_file_is_found_from_a_subdirectory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path();
    let sub = repo.join("deploy/windows");
    std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
    std::fs::create_dir_all(&sub).expect("mkdir");
    std::fs::copy(
        corpus("windows-deployment-unpinned").join("input.yaml"),
        sub.join("web.yaml"),
    )
    .expect("copy");
    let rules = |run: &std::process::Output| -> (Value, BTreeMap<String, String>) {
        let report: Value = serde_json::from_slice(&run.stdout).expect("JSON");
        let rules = report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| {
                (
                    f["rule"].as_str().unwrap_or("").to_string(),
                    f["severity"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        (report, rules)
    };
    let (report, before) = rules(&winplace(
        &sub,
        &["check", "web.yaml", "--format", "json"],
        None,
    ));
    assert_eq!(report["settings_file"], Value::Null);
    assert_eq!(
        before
            .get("windows-pod-without-build-selector")
            .map(String::as_str),
        Some("warning")
    );

    std::fs::write(
        repo.join(".winplace.yaml"),
        "# the team's settings\ndisabledRules: [windows-pod-without-build-selector]\nseverity:\n  windows-pod-without-toleration: warning\n",
    )
    .expect("write");
    let run = winplace(
        &sub,
        &["check", "web.yaml", "--format", "json", "--verbose"],
        None,
    );
    let (report, after) = rules(&run);
    let found = repo.join(".winplace.yaml").display().to_string();
    assert_eq!(report["settings_file"], Value::String(found.clone()));
    assert!(
        !after.contains_key("windows-pod-without-build-selector"),
        "{after:?}"
    );
    assert_eq!(
        after
            .get("windows-pod-without-toleration")
            .map(String::as_str),
        Some("warning")
    );
    assert!(
        String::from_utf8_lossy(&run.stderr).contains(&format!("settings from {found}")),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );

    // --settings names another file: that one is read, and said.
    std::fs::write(sub.join("strict.yaml"), "mutate: false\n").expect("write");
    let (report, named) = rules(&winplace(
        &sub,
        &[
            "check",
            "web.yaml",
            "--format",
            "json",
            "--settings",
            "strict.yaml",
        ],
        None,
    ));
    assert_eq!(report["settings_file"], "strict.yaml");
    assert_eq!(named, before);

    // A bad file: exit 2, its name, line and setting in the report.
    std::fs::write(
        repo.join(".winplace.yaml"),
        "# the team's settings\nmutate: true\nfrobnicate: 1\n",
    )
    .expect("write");
    let run = winplace(&sub, &["check", "web.yaml"], None);
    assert_eq!(run.status.code(), Some(2));
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(text.contains(&format!("{found}:3:")), "{text}");
    assert!(text.contains("frobnicate"), "{text}");
}

#[test]
fn completions_generate_for_the_four_shells() {
    let dir = tempfile::tempdir().expect("tempdir");
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let run = winplace(dir.path(), &["completion", shell], None);
        assert_eq!(run.status.code(), Some(0), "{shell}");
        let script = String::from_utf8_lossy(&run.stdout);
        for word in ["check", "what-if", "--format", "--output"] {
            assert!(script.contains(word), "{shell}: {word} missing");
        }
        // The formats are completed as values where the shell's script lists them (PowerShell's
        // completes flags only).
        if shell != "powershell" {
            assert!(
                script.contains("codequality"),
                "{shell}: --format's values missing"
            );
        }
        if shell == "bash" {
            // The script is bash: `bash -n` parses it without running it.
            let path = dir.path().join("winplace.bash");
            std::fs::write(&path, script.as_bytes()).expect("write");
            let parsed = Command::new("bash")
                .arg("-n")
                .arg(&path)
                .output()
                .expect("bash runs");
            assert!(
                parsed.status.success(),
                "{}",
                String::from_utf8_lossy(&parsed.stderr)
            );
        }
    }
    let run = winplace(dir.path(), &["completion", "tcsh"], None);
    assert_eq!(run.status.code(), Some(2));
}

#[test]
fn man_pages_are_written_for_every_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = winplace(dir.path(), &["man", "--dir", "man"], None);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for page in [
        "winplace.1",
        "winplace-check.1",
        "winplace-completion.1",
        "winplace-serve.1",
    ] {
        let text = read(&dir.path().join("man").join(page));
        assert!(text.contains(".TH"), "{page}");
    }
    let check = read(&dir.path().join("man/winplace-check.1"));
    assert!(
        check.contains("codequality") && check.contains("\\-\\-output"),
        "{check}"
    );
    let run = winplace(dir.path(), &["man"], None);
    assert!(
        String::from_utf8_lossy(&run.stdout).starts_with(".ie"),
        "roff on standard output"
    );
}

/// The corpus case `helm-rendered-chart` (a chart rendered as `helm template` prints it): every finding
/// names its template and object, in every format.
#[test]
fn a_rendered_charts_findings_name_their_templates() {
    let case = corpus("helm-rendered-chart");
    let rendered = read(&case.join("input.yaml"));
    let dir = tempfile::tempdir().expect("tempdir");
    let run = winplace(
        dir.path(),
        &[
            "check",
            "-",
            "--format",
            "json",
            "--output",
            "out.json",
            "--format",
            "sarif",
            "--output",
            "out.sarif",
            "--format",
            "junit",
            "--output",
            "junit.xml",
            "--format",
            "codequality",
            "--output",
            "cq.json",
            "--format",
            "text",
        ],
        Some(&rendered),
    );
    assert_eq!(run.status.code(), Some(1));
    let template_of = |object: &str| -> &str {
        match object {
            o if o.ends_with("shop-storefront") => "winshop/templates/storefront.yaml",
            o if o.ends_with("shop-log-agent") => "winshop/templates/log-agent.yaml",
            o if o.ends_with("shop-reports") => "winshop/templates/reports.yaml",
            o => panic!("unexpected object {o}"),
        }
    };
    let report = json(&dir.path().join("out.json"));
    let findings = report["findings"].as_array().expect("findings");
    assert!(findings.len() >= 3, "{report}");
    let text = String::from_utf8_lossy(&run.stdout);
    for f in findings {
        let o = &f["object"];
        let object = format!(
            "{}/{}/{}",
            o["kind"].as_str().unwrap_or(""),
            o["namespace"].as_str().unwrap_or(""),
            o["name"].as_str().unwrap_or("")
        );
        assert_eq!(f["helm_template"], template_of(&object), "{f}");
        assert!(
            text.contains(&format!("from {}: {object}", template_of(&object))),
            "{text}"
        );
    }
    let sarif = json(&dir.path().join("out.sarif"));
    for r in sarif["runs"][0]["results"].as_array().expect("results") {
        let object = r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
            .as_str()
            .unwrap_or("")
            .split(':')
            .next()
            .unwrap_or("")
            .to_string();
        let template = template_of(&object);
        assert_eq!(r["properties"]["helmTemplate"], template, "{r}");
        assert_eq!(
            r["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"], template,
            "{r}"
        );
        assert!(
            r["message"]["text"]
                .as_str()
                .is_some_and(|m| m.contains(&format!("from {template} ({object})"))),
            "{r}"
        );
    }
    let xml = elements(&read(&dir.path().join("junit.xml")));
    let cases: Vec<&Element> = xml.iter().filter(|e| e.name == "testcase").collect();
    assert!(!cases.is_empty());
    for case in cases {
        let object = case.attrs["name"].split(" on ").nth(1).unwrap_or_default();
        assert_eq!(case.attrs["classname"], template_of(object), "{case:?}");
    }
    for issue in json(&dir.path().join("cq.json"))
        .as_array()
        .expect("issues")
    {
        assert!(
            issue["description"]
                .as_str()
                .is_some_and(|d| d.contains("Rendered by Helm from winshop/templates/")),
            "{issue}"
        );
    }
}
