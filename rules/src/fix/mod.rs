//! Applying fixes: JSON patches on values ([`apply_fixes`]), whole manifests repaired as text
//! ([`repair_text`]: `winplace check --fix`, the playground) and single objects repaired as values
//! ([`repair_value`]: admission `mutate`), both through one loop of rounds.
//!
//! ```
//! use winplace_rules::{fix, Checker};
//! let text = "# our web server\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n";
//! let repair = fix::repair_text(&Checker::builder().build(), "pod.yaml", text);
//! assert!(repair.text.starts_with("# our web server\n"));
//! assert!(repair.remaining.findings.iter().all(|f| !fix::is_fixable_error(f)));
//! ```

mod emit;
mod flow;
mod text;

use serde_json::Value;

use crate::catalog;
use crate::check::Checker;
use crate::finding::{Finding, Fix, Report, Severity};
use crate::input::{self, Limits};
use crate::model;

/// Most evaluate → fix rounds a repair runs (a fix can reveal another finding, e.g. an added OS
/// selector makes the pod need a toleration).
pub const MAX_ROUNDS: usize = 5;

/// Applies `fixes` to `value` in order; a fix whose patch does not apply is skipped whole.
///
/// Returns the patched value and, for each skipped fix, its index in `fixes` and why.
///
/// ```
/// use winplace_rules::{fix::apply_fixes, Fix};
/// use serde_json::json;
/// let good = Fix { description: "set".into(), patch: vec![json!({"op": "add", "path": "/a", "value": 1})].into() };
/// let bad = Fix { description: "bad".into(), patch: vec![json!({"op": "remove", "path": "/missing"})].into() };
/// let (value, skipped) = apply_fixes(&json!({}), &[&bad, &good]);
/// assert_eq!(value, json!({"a": 1}));
/// assert_eq!(skipped[0].0, 0);
/// ```
pub fn apply_fixes(value: &Value, fixes: &[&Fix]) -> (Value, Vec<(usize, String)>) {
    let mut current = value.clone();
    let mut skipped = Vec::new();
    for (i, fix) in fixes.iter().enumerate() {
        let patch = match serde_json::from_str::<json_patch::Patch>(fix.patch.as_json()) {
            Ok(p) => p,
            Err(e) => {
                skipped.push((i, format!("the patch is not valid RFC 6902: {e}")));
                continue;
            }
        };
        // Applied to a copy so that a failing operation leaves nothing half done.
        let mut next = current.clone();
        match json_patch::patch_unsafe(&mut next, &patch.0) {
            Ok(()) => current = next,
            Err(e) => skipped.push((i, e.to_string())),
        }
    }
    (current, skipped)
}

/// Whether `finding` is an error that `--fix` is expected to remove: its rule is fixable (catalogue)
/// and it carries a fix.
pub fn is_fixable_error(finding: &Finding) -> bool {
    finding.severity == Severity::Error
        && finding.fix.is_some()
        && catalog::rule(&finding.rule).is_some_and(|r| r.fixable)
}

/// A fix that could not be applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// The finding whose fix it was.
    pub finding: Finding,
    /// Why the patch did not apply.
    pub reason: String,
}

/// The result of [`repair_text`].
#[derive(Debug, Clone, PartialEq)]
pub struct Repair {
    /// The repaired text: untouched documents byte for byte as given, changed ones edited in place,
    /// flow style in flow style, each line keeping its line end (a document without anchors is
    /// rewritten as block YAML, JSON as pretty JSON, when an in-place edit is not possible; one with
    /// anchors, aliases or merge keys is left as it was and its fixes are [`Repair::skipped`]).
    pub text: String,
    /// The findings whose fixes were applied, in the order they were applied.
    pub applied: Vec<Finding>,
    /// Fixes that did not apply (a later round may have fixed the finding another way).
    pub skipped: Vec<Skipped>,
    /// The evaluation of the repaired text.
    pub remaining: Report,
}

/// Repairs every fixable finding of `text` (named `file`), as `checker` finds them, and writes the
/// manifests back as text.
///
/// Rounds of evaluate → apply every fix of every object run until no finding carries a fix, a round
/// changes nothing, or [`MAX_ROUNDS`] is reached (the loop [`repair_value`] runs too). Text with a parse error is
/// returned unchanged (a broken document cannot be written back safely). Pure: no I/O.
pub fn repair_text(checker: &Checker<'_>, file: &str, text: &str) -> Repair {
    repair_text_with(checker, file, text, |_| true)
}

/// [`repair_text`] restricted to the findings `select` accepts (the playground's "apply this fix").
///
/// `select` sees each finding as [`Checker::check_text`] reports it (file, object, rule, path); fixes of
/// other findings are left out in every round.
///
/// ```
/// use winplace_rules::{fix, Checker};
/// let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n";
/// let only = |f: &winplace_rules::Finding| f.rule == "windows-pod-without-os-selector";
/// let repair = fix::repair_text_with(&Checker::builder().build(), "pod.yaml", text, only);
/// assert!(repair.applied.iter().all(|f| f.rule == "windows-pod-without-os-selector"));
/// assert!(repair.remaining.findings.iter().any(|f| f.rule == "windows-pod-without-toleration"));
/// ```
pub fn repair_text_with(
    checker: &Checker<'_>,
    file: &str,
    text: &str,
    select: impl Fn(&Finding) -> bool,
) -> Repair {
    let bom = text.starts_with('\u{feff}');
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Lines keep their own `\r\n` or `\n` (the edits keep them); only lone CRs (old Mac line ends,
    // line breaks to YAML too) are normalized, and then every line end comes out as the file's
    // first one.
    let lone_cr = body.replace("\r\n", "").contains('\r');
    let crlf = body.contains("\r\n");
    let mut manifests = TextManifests {
        file,
        current: if lone_cr {
            body.replace("\r\n", "\n").replace('\r', "\n")
        } else {
            body.to_string()
        },
        documents: Vec::new(),
        edited: Vec::new(),
        refused: Vec::new(),
    };
    let (applied, skipped) = repair(checker, &mut manifests, select);
    let current = manifests.current;
    let remaining = checker.report(file, &current);
    let text = if applied.is_empty() {
        // Nothing changed: the input exactly as given.
        text.to_string()
    } else {
        let mut out = if lone_cr && crlf {
            current.replace('\n', "\r\n")
        } else {
            current
        };
        if bom {
            out.insert(0, '\u{feff}');
        }
        out
    };
    Repair {
        text,
        applied,
        skipped,
        remaining,
    }
}

/// One object (JSON: an admission request's object) with every fix `checker` finds applied, in rounds as
/// [`repair_text`] applies them: the admission policy's `mutate`.
///
/// ```
/// use serde_json::json;
/// use winplace_rules::{fix, Checker};
/// let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
///     "spec": {"containers": [{"name": "app", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]}});
/// let repaired = fix::repair_value(&Checker::builder().build(), &pod);
/// assert_eq!(repaired.value["spec"]["nodeSelector"]["kubernetes.io/os"], "windows");
/// assert!(repaired.applied.iter().any(|f| f.rule == "windows-pod-without-os-selector"));
/// ```
pub fn repair_value(checker: &Checker<'_>, object: &Value) -> RepairedValue {
    let mut manifest = ValueManifest {
        current: object.clone(),
        next: Value::Null,
    };
    let (applied, _skipped) = repair(checker, &mut manifest, |_| true);
    RepairedValue {
        value: manifest.current,
        applied,
    }
}

/// The result of [`repair_value`].
#[derive(Debug, Clone, PartialEq)]
pub struct RepairedValue {
    /// The object with the fixes applied (the object as given when none applied).
    pub value: Value,
    /// The findings whose fixes were applied, in the order they were applied; each carries its fix.
    pub applied: Vec<Finding>,
}

/// What [`repair`] edits: manifests as text, or one object as a value.
trait Manifests {
    /// The objects as they stand at the start of a round, or `None` when they cannot be read (text with
    /// a parse error).
    fn objects(&mut self) -> Option<Vec<model::Object>>;

    /// The value `object` is read from, to patch in this round, and the unit it belongs to (a document
    /// of text), or `None` when it cannot be edited (a document whose edits were refused, an item of a
    /// nested List).
    fn target(&mut self, object: &model::Object) -> Option<(usize, &mut Value)>;

    /// Ends a round: writes the patched values back and says whether anything changed and which units'
    /// edits were refused (their fixes are skipped with [`REFUSED_ANCHORS`]).
    fn end_round(&mut self) -> RoundEnd;
}

/// How a round of [`repair`] ended.
struct RoundEnd {
    /// Whether the manifests changed.
    changed: bool,
    /// Units whose edits were refused.
    refused: Vec<usize>,
}

/// The one repair loop: rounds of evaluate → apply every selected fix of every object, until no
/// finding carries a fix, a round changes nothing, or [`MAX_ROUNDS`] (a fix can reveal another finding:
/// an added OS selector makes the pod need a toleration). Returns the findings whose fixes were applied
/// and the fixes that were not. A round that changes nothing applies nothing.
fn repair(
    checker: &Checker<'_>,
    manifests: &mut impl Manifests,
    select: impl Fn(&Finding) -> bool,
) -> (Vec<Finding>, Vec<Skipped>) {
    let mut applied = Vec::new();
    let mut skipped = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let Some(mut objects) = manifests.objects() else {
            break;
        };
        // Findings name the object they are about through their file: tag each object with its index.
        let real: Vec<String> = objects.iter().map(|o| o.file.clone()).collect();
        for (i, o) in objects.iter_mut().enumerate() {
            o.file = i.to_string();
        }
        let mut findings = Vec::new();
        checker.check_objects(&objects, &mut findings);
        let mut by_object: Vec<Vec<Finding>> = vec![Vec::new(); objects.len()];
        for mut f in findings {
            let Some(i) = f.file.as_deref().and_then(|t| t.parse::<usize>().ok()) else {
                continue;
            };
            if f.fix.is_none() {
                continue;
            }
            f.file = real.get(i).cloned().filter(|s| !s.is_empty());
            if !select(&f) {
                continue;
            }
            if let Some(list) = by_object.get_mut(i) {
                list.push(f);
            }
        }
        if by_object.iter().all(Vec::is_empty) {
            break;
        }
        // This round's applied fixes, with the unit they were applied in.
        let mut round: Vec<(usize, Finding)> = Vec::new();
        for (object, found) in objects.iter().zip(by_object) {
            if found.is_empty() {
                continue;
            }
            let Some((unit, target)) = manifests.target(object) else {
                continue;
            };
            let fixes: Vec<&Fix> = found.iter().filter_map(|f| f.fix.as_ref()).collect();
            let (value, failed) = apply_fixes(target, &fixes);
            *target = value;
            let failed_at: Vec<usize> = failed.iter().map(|(i, _)| *i).collect();
            for (i, reason) in failed {
                if let Some(finding) = found.get(i) {
                    skipped.push(Skipped {
                        finding: finding.clone(),
                        reason,
                    });
                }
            }
            round.extend(
                found
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| !failed_at.contains(i))
                    .map(|(_, f)| (unit, f)),
            );
        }
        let end = manifests.end_round();
        for (unit, finding) in round {
            if end.refused.contains(&unit) {
                skipped.push(Skipped {
                    finding,
                    reason: REFUSED_ANCHORS.to_string(),
                });
            } else if end.changed {
                applied.push(finding);
            }
        }
        if !end.changed {
            break;
        }
    }
    (applied, skipped)
}

/// Manifests as text: each round parses the text, patches the documents' values, and writes the
/// changed documents back in place ([`text::render`]).
struct TextManifests<'f> {
    file: &'f str,
    /// The text as it stands.
    current: String,
    /// This round's documents.
    documents: Vec<input::Document>,
    /// This round's patched values, by document.
    edited: Vec<Option<Value>>,
    /// Documents whose fixes could not be written in place (anchors): not tried again.
    refused: Vec<usize>,
}

impl Manifests for TextManifests<'_> {
    fn objects(&mut self) -> Option<Vec<model::Object>> {
        let parsed = input::parse(self.file, &self.current, &Limits::default());
        if !parsed.errors.is_empty() {
            return None;
        }
        let objects = model::objects(&parsed.documents);
        self.edited = vec![None; parsed.documents.len()];
        self.documents = parsed.documents;
        Some(objects)
    }

    fn target(&mut self, object: &model::Object) -> Option<(usize, &mut Value)> {
        let d = self
            .documents
            .iter()
            .position(|d| d.index == object.doc_index)?;
        if self.refused.contains(&d) {
            return None;
        }
        let document = &self.documents[d];
        let doc_value = self
            .edited
            .get_mut(d)?
            .get_or_insert_with(|| document.value.clone());
        let target = match object.item {
            None => Some(doc_value),
            Some(i) => doc_value
                .get_mut("items")
                .and_then(|items| items.get_mut(i)),
        };
        // Items of nested lists (and anything else that does not match) are left alone.
        target.filter(|t| same_object(t, object)).map(|t| (d, t))
    }

    fn end_round(&mut self) -> RoundEnd {
        let rendered = text::render(&self.current, &self.documents, &self.edited);
        self.refused.extend(rendered.refused.iter().copied());
        let changed = rendered.text != self.current;
        self.current = rendered.text;
        RoundEnd {
            changed,
            refused: rendered.refused,
        }
    }
}

/// One object as a value: each round patches a copy, which replaces it when it changed.
struct ValueManifest {
    /// The value as it stands.
    current: Value,
    /// This round's patched copy.
    next: Value,
}

impl Manifests for ValueManifest {
    fn objects(&mut self) -> Option<Vec<model::Object>> {
        self.next = self.current.clone();
        Some(model::into_objects(input::Document {
            file: String::new(),
            index: 0,
            line: 1,
            value: self.current.clone(),
            lines: input::LineMap::default(),
        }))
    }

    fn target(&mut self, object: &model::Object) -> Option<(usize, &mut Value)> {
        let target = match object.item {
            None => Some(&mut self.next),
            Some(i) => self
                .next
                .get_mut("items")
                .and_then(|items| items.get_mut(i)),
        };
        target.filter(|t| same_object(t, object)).map(|t| (0, t))
    }

    fn end_round(&mut self) -> RoundEnd {
        let changed = self.next != self.current;
        if changed {
            self.current = std::mem::take(&mut self.next);
        }
        RoundEnd {
            changed,
            refused: Vec::new(),
        }
    }
}

/// Why the fixes of a document with anchors, aliases or merge keys were not applied.
pub const REFUSED_ANCHORS: &str = "not applied: the fix touches a part of the document that uses YAML anchors, aliases or merge keys (`<<:`), which cannot be edited in place without expanding them and losing comments; apply it by hand";

/// Whether `value` is the object `object` was read from (same kind, apiVersion and name).
fn same_object(value: &Value, object: &model::Object) -> bool {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    s(value.get("kind")) == object.kind
        && s(value.get("apiVersion")) == object.api_version
        && model::Object::from_value("", 0, value.clone(), input::LineMap::default())
            .is_some_and(|o| o.name == object.name && o.namespace == object.namespace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fix(patch: Value) -> Fix {
        Fix {
            description: "d".into(),
            patch: patch.as_array().cloned().unwrap_or_default().into(),
        }
    }

    #[test]
    fn fixes_apply_in_order_and_bad_ones_are_skipped_whole() {
        let start = json!({"spec": {"tolerations": [{"key": "os"}]}});
        let f0 = fix(
            json!([{"op": "add", "path": "/spec/nodeSelector", "value": {"kubernetes.io/os": "windows"}}]),
        );
        // Second op fails: the first op of the same fix must not stay applied.
        let f1 = fix(json!([
            {"op": "add", "path": "/spec/x", "value": 1},
            {"op": "remove", "path": "/spec/absent"}
        ]));
        let f2 = fix(
            json!([{"op": "add", "path": "/spec/nodeSelector/node.kubernetes.io~1windows-build", "value": "10.0.20348"}]),
        );
        let f3 = fix(json!([{"op": "frobnicate", "path": "/"}]));
        let f4 = fix(json!([{"op": "remove", "path": "/spec/tolerations/0"}]));
        let (value, skipped) = apply_fixes(&start, &[&f0, &f1, &f2, &f3, &f4]);
        assert_eq!(
            value,
            json!({"spec": {"tolerations": [], "nodeSelector": {
                "kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}}})
        );
        assert_eq!(skipped.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [1, 3]);
        assert!(skipped[1].1.contains("RFC 6902"), "{}", skipped[1].1);
    }

    #[test]
    fn text_with_a_parse_error_is_left_alone() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c, image: mcr.microsoft.com/windows/nanoserver:ltsc2022}]\n---\nkind: [oops\n";
        let repair = repair_text(&Checker::builder().build(), "f.yaml", text);
        assert_eq!(repair.text, text);
        assert!(repair.applied.is_empty());
        assert_eq!(repair.remaining.parse_errors.len(), 1);
    }

    #[test]
    fn repair_text_with_applies_only_the_selected_fixes() {
        // Reference "Windows pods": OS selector and toleration are separate fixes of separate rules.
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: mcr.microsoft.com/windows/servercore:ltsc2022\n";
        let rows: [(&str, &[&str], &[&str]); 3] = [
            (
                "windows-pod-without-os-selector",
                &["windows-pod-without-os-selector"],
                &["windows-pod-without-toleration"],
            ),
            (
                "windows-pod-without-toleration",
                &["windows-pod-without-toleration"],
                &["windows-pod-without-os-selector"],
            ),
            ("no-such-rule", &[], &["windows-pod-without-os-selector"]),
        ];
        for (rule, applied, left) in rows {
            let repair = repair_text_with(&Checker::builder().build(), "f.yaml", text, |f| {
                f.rule == rule
            });
            let got: Vec<&str> = repair.applied.iter().map(|f| f.rule.as_str()).collect();
            assert_eq!(got, applied, "{rule}");
            for l in left {
                assert!(
                    repair.remaining.findings.iter().any(|f| f.rule == *l),
                    "{rule}: {l} should remain"
                );
            }
            assert_eq!(repair.text == text, applied.is_empty(), "{rule}");
        }
    }

    #[test]
    fn clean_text_is_returned_byte_for_byte() {
        let text = "\u{feff}# c\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: a}\r\n";
        let repair = repair_text(&Checker::builder().build(), "f.yaml", text);
        assert_eq!(repair.text, text);
        assert!(repair.applied.is_empty());
    }

    #[test]
    fn each_line_keeps_its_own_line_end() {
        // Half CRLF, half LF (a file edited on both systems); the fixes add lines inside both halves.
        let text = "apiVersion: apps/v1\r\nkind: Deployment\r\nmetadata:\r\n  name: w\r\nspec:\n  template:\n    spec:\n      containers:\r\n      - name: c\n        image: mcr.microsoft.com/windows/servercore:ltsc2022\n";
        let repair = repair_text(&Checker::builder().build(), "f.yaml", text);
        assert!(!repair.applied.is_empty());
        let out = &repair.text;
        for line in text.split_inclusive('\n') {
            assert!(out.contains(line), "{line:?} lost its line end:\n{out:?}");
        }
        // New lines take the line end of the line they follow (here LF: the last line).
        assert!(out.contains("ltsc2022\n      affinity:\n"), "{out:?}");
        assert!(
            out.contains("\n      nodeSelector:\n        kubernetes.io/os: windows\n"),
            "{out:?}"
        );
        assert!(repair.remaining.parse_errors.is_empty());
    }

    #[test]
    fn crlf_files_stay_crlf() {
        let text = "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  name: p\r\nspec:\r\n  containers:\r\n  - name: c\r\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\r\n";
        let repair = repair_text(&Checker::builder().build(), "f.yaml", text);
        assert!(!repair.applied.is_empty());
        assert!(repair.text.len() > text.len());
        assert_eq!(
            repair.text.matches('\n').count(),
            repair.text.matches("\r\n").count()
        );
    }

    #[test]
    fn flow_style_manifests_are_edited_in_flow_style() {
        // The Kubernetes docs write small examples in flow style.
        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: iis, labels: {app: iis}}\nspec: {containers: [{name: iis, image: \"mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022\"}]}\n";
        let repair = repair_text(&Checker::builder().build(), "f.yaml", text);
        assert!(!repair.applied.is_empty());
        let lines: Vec<&str> = repair.text.lines().collect();
        assert_eq!(lines.len(), 4, "{}", repair.text);
        assert_eq!(lines[..3], text.lines().collect::<Vec<_>>()[..3]);
        assert!(
            lines[3].starts_with("spec: {containers: [{name: iis, image: \"mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022\"}], affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: node.kubernetes.io/windows-build, operator: In, values: [\"10.0.20348\", \"10.0.26100\"]}]}]}}}, nodeSelector: {kubernetes.io/os: windows}, "),
            "{}",
            repair.text
        );
        assert!(
            repair
                .remaining
                .findings
                .iter()
                .all(|f| !is_fixable_error(f))
        );
    }

    #[test]
    fn fixes_that_touch_anchored_parts_are_refused_with_a_reason() {
        let text = "# shared OS\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n  spec:\n    os: &os {name: Windows}\n    nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.20348\"}\n    tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]\n    containers: [{name: c, image: mcr.microsoft.com/windows/nanoserver:ltsc2022}]\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: b}\n  spec:\n    os: *os\n    nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.20348\"}\n    tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]\n    containers: [{name: c, image: mcr.microsoft.com/windows/nanoserver:ltsc2022}]\n";
        let before = Checker::builder().build().report("f.yaml", text);
        assert!(
            before.findings.iter().any(|f| f.rule == "os-name-invalid"),
            "{before:?}"
        );
        let repair = repair_text(&Checker::builder().build(), "f.yaml", text);
        assert_eq!(repair.text, text, "the document is left as it was");
        assert!(repair.applied.is_empty(), "{:?}", repair.applied);
        assert!(!repair.skipped.is_empty());
        assert!(repair.skipped.iter().all(|s| s.reason == REFUSED_ANCHORS));
        assert!(
            repair
                .remaining
                .findings
                .iter()
                .any(|f| f.rule == "os-name-invalid")
        );
    }

    #[test]
    fn anchors_elsewhere_do_not_stop_a_minimal_edit() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web # keep\n  labels: &labels {app: web}\n  annotations: *labels\nspec:\n  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n";
        let repair = repair_text(&Checker::builder().build(), "f.yaml", text);
        assert!(!repair.applied.is_empty());
        assert!(repair.skipped.is_empty(), "{:?}", repair.skipped);
        assert!(
            repair.text.starts_with("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web # keep\n  labels: &labels {app: web}\n  annotations: *labels\n"),
            "{}",
            repair.text
        );
    }

    #[test]
    fn same_object_matches_identity() {
        let parsed = input::parse(
            "t.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n",
            &Limits::default(),
        );
        let objects = model::objects(&parsed.documents);
        let rows = [
            (
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}),
                true,
            ),
            (
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}}),
                false,
            ),
            (
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "x"}}),
                false,
            ),
            (
                json!({"apiVersion": "v1", "kind": "List", "items": []}),
                false,
            ),
        ];
        for (value, want) in rows {
            assert_eq!(same_object(&value, &objects[0]), want, "{value}");
        }
    }
}
