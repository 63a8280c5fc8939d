//! Helm's `# Source:` comments: the chart template each document of rendered output came from.
//!
//! `helm template` (and `helm install --dry-run`, `helm get manifest`) writes every rendered document as
//! `---`, then `# Source: <chart>/templates/<file>`, then the document; a template that renders several
//! documents gives each of them the same comment (docs/reference/helm-source.md). Findings on those
//! documents point at lines of the rendered text; the comment says which template to edit.
//!
//! This reads lines only, as [`super::parse`] cuts documents: at `---` and `...` marker lines, with line
//! ends and numbers counted the same way (CRLF and a lone CR end a line, a byte order mark does not
//! count), so that a line [`super::parse`] reports falls in the document it belongs to here.
//!
//! ```
//! use winplace_rules::input::HelmSources;
//! let rendered = "---\n# Source: shop/templates/web.yaml\napiVersion: apps/v1\nkind: Deployment\n---\nkind: ConfigMap\n";
//! let sources = HelmSources::of(rendered);
//! assert_eq!(sources.template_at(4), Some("shop/templates/web.yaml"));
//! assert_eq!(sources.template_at(6), None);
//! ```

/// The prefix of Helm's comment (`# Source: ` in `pkg/action/action.go`).
const SOURCE: &str = "# Source:";

/// Where each document of a text starts and the template its `# Source:` comment names, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HelmSources<'a> {
    /// (1-based first line of a document's part of the text, its template), in line order.
    starts: Vec<(u32, Option<&'a str>)>,
}

/// `---` or `...` at the start of a line, followed by a blank or the end of the line (as
/// [`super::parse`] cuts documents).
fn marker<'l>(line: &'l str, m: &str) -> Option<&'l str> {
    line.strip_prefix(m)
        .filter(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

/// The template a `# Source:` comment line names.
fn source_comment(line: &str) -> Option<&str> {
    let template = line
        .trim_start_matches([' ', '\t'])
        .strip_prefix(SOURCE)?
        .trim();
    (!template.is_empty()).then_some(template)
}

/// Whether a line holds YAML content (not blank, not a comment).
fn has_content(line: &str) -> bool {
    let t = line.trim_start_matches([' ', '\t']);
    !t.is_empty() && !t.starts_with('#')
}

/// The lines of `text` as [`super::parse`] numbers them: `\n`, `\r\n` and a lone `\r` each end one.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.split('\n')
        .flat_map(|line| line.strip_suffix('\r').unwrap_or(line).split('\r'))
}

impl<'a> HelmSources<'a> {
    /// The documents of `text` and their templates (nothing to hold when no line is a `# Source:`
    /// comment).
    pub fn of(text: &'a str) -> Self {
        if !text.contains(SOURCE) {
            return HelmSources::default();
        }
        let mut starts: Vec<(u32, Option<&'a str>)> = vec![(1, None)];
        // Whether the current document has content yet: a comment after it is part of the document.
        let mut content = false;
        for (i, line) in lines(text).enumerate() {
            let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
            if let Some(rest) = marker(line, "---") {
                // A comment before `---` belongs to the document after it, as parse keeps it.
                let carried = if content {
                    None
                } else {
                    starts.last().and_then(|s| s.1)
                };
                starts.push((number, carried));
                content = has_content(rest);
            } else if marker(line, "...").is_some() {
                starts.push((number.saturating_add(1), None));
                content = false;
            } else if !content {
                if let Some(template) = source_comment(line) {
                    if let Some(last) = starts.last_mut() {
                        last.1 = Some(template);
                    }
                } else if has_content(line) {
                    content = true;
                }
            }
        }
        if starts.iter().all(|s| s.1.is_none()) {
            return HelmSources::default();
        }
        HelmSources { starts }
    }

    /// The template of the document holding 1-based `line`, when its `# Source:` comment names one.
    pub fn template_at(&self, line: u32) -> Option<&'a str> {
        let after = self.starts.partition_point(|(start, _)| *start <= line);
        self.starts.get(after.checked_sub(1)?)?.1
    }

    /// Whether no document of the text has a `# Source:` comment.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Limits, parse};

    /// Every document's lines as parse reads them get the template of the comment above it.
    #[test]
    fn each_document_gets_the_template_above_it() {
        let text = "---\n# Source: shop/templates/web.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n---\n# Source: shop/templates/web.yaml\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\n# Source: shop/charts/cache/templates/redis.yaml\n# a comment Helm kept from the template\napiVersion: v1\nkind: Pod\nmetadata: {name: redis}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n";
        let sources = HelmSources::of(text);
        let parsed = parse("rendered.yaml", text, &Limits::default());
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        let got: Vec<(String, Option<&str>)> = parsed
            .documents
            .iter()
            .map(|d| {
                (
                    d.value["kind"].as_str().unwrap_or("").to_string(),
                    sources.template_at(d.line),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("Deployment".into(), Some("shop/templates/web.yaml")),
                ("Service".into(), Some("shop/templates/web.yaml")),
                ("Pod".into(), Some("shop/charts/cache/templates/redis.yaml")),
                ("ConfigMap".into(), None),
            ]
        );
        // Any line of a document, not only its first, finds its template.
        assert_eq!(sources.template_at(6), Some("shop/templates/web.yaml"));
        assert_eq!(
            sources.template_at(17),
            Some("shop/charts/cache/templates/redis.yaml")
        );
        assert_eq!(sources.template_at(21), None);
    }

    /// A `# Source:` inside a document (after its content) is a comment of that document, not a new
    /// one; `...` ends a document, and line ends count as parse counts them.
    #[test]
    fn only_comments_before_a_document_name_it() {
        // A text, and each of its documents' first line with the template that rendered it.
        type Row<'a> = (&'a str, &'a [(u32, Option<&'a str>)]);
        let rows: [Row; 5] = [
            ("kind: Pod\n# Source: late.yaml\n", &[(1, None), (2, None)]),
            (
                "# Source: c/templates/a.yaml\nkind: Pod\n...\nkind: Node\n",
                &[(2, Some("c/templates/a.yaml")), (4, None)],
            ),
            (
                "---\r\n# Source: c/templates/a.yaml\r\nkind: Pod\r\n---\r\nkind: Node\r\n",
                &[(3, Some("c/templates/a.yaml")), (5, None)],
            ),
            (
                "\u{feff}---\r# Source: c/templates/a.yaml\rkind: Pod\r",
                &[(3, Some("c/templates/a.yaml"))],
            ),
            // A comment before `---` stays with the document after it, as parse keeps it.
            (
                "# Source: c/templates/b.yaml\n---\nkind: Pod\n",
                &[(3, Some("c/templates/b.yaml"))],
            ),
        ];
        for (text, want) in rows {
            let sources = HelmSources::of(text);
            for (line, template) in want {
                assert_eq!(
                    sources.template_at(*line),
                    *template,
                    "{text:?} line {line}"
                );
            }
        }
    }

    #[test]
    fn text_without_the_comment_holds_nothing() {
        for text in ["kind: Pod\n", "# Source:\nkind: Pod\n", ""] {
            let sources = HelmSources::of(text);
            assert!(sources.is_empty(), "{text:?}");
            assert_eq!(sources.template_at(1), None);
        }
    }
}
