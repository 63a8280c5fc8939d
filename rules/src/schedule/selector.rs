//! `spec.nodeSelector` as the scheduler reads it (`labels.SelectorFromSet`, kubernetes-windows-rules.md §3.3), and the
//! apimachinery syntax checks for label keys, label values and DNS names (`util/validation`), with their
//! upstream messages.

use std::collections::BTreeMap;

/// Whether a pod's `nodeSelector` selects a node with these labels (`labels.SelectorFromSet(..).Matches`).
///
/// Every pair is an `Equals` requirement: the label must be present and equal the value exactly
/// (case-sensitive; `""` needs a present label with an empty value). An empty selector selects every node.
///
/// ```
/// use std::collections::BTreeMap;
/// use winplace_rules::schedule::selector::node_selector_matches;
/// let sel = BTreeMap::from([("kubernetes.io/os".to_string(), "windows".to_string())]);
/// let node = BTreeMap::from([("kubernetes.io/os".to_string(), "Windows".to_string())]);
/// assert!(!node_selector_matches(&sel, &node));
/// ```
pub fn node_selector_matches(
    selector: &BTreeMap<String, String>,
    labels: &BTreeMap<String, String>,
) -> bool {
    // SelectorFromSet does no validation: an invalid key or value simply never matches a real label.
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// One problem `ValidateLabels` finds in a label map (a nodeSelector, a RuntimeClass's
/// `scheduling.nodeSelector`): the offending key, whether the key or the value is wrong, and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelProblem {
    /// The map key the problem is about.
    pub key: String,
    /// `true` when the value (not the key) is invalid.
    pub in_value: bool,
    /// The upstream message (`name part must be ...`, `must be no more than 63 characters`, ...).
    pub message: String,
}

/// `ValidateLabels`: every key a qualified name, every value a label value.
pub fn validate_labels(labels: &BTreeMap<String, String>) -> Vec<LabelProblem> {
    let mut out = Vec::new();
    for (k, v) in labels {
        for message in is_qualified_name(k) {
            out.push(LabelProblem {
                key: k.clone(),
                in_value: false,
                message,
            });
        }
        for message in is_valid_label_value(v) {
            out.push(LabelProblem {
                key: k.clone(),
                in_value: true,
                message,
            });
        }
    }
    out
}

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";

/// `validation.RegexError`: the message, examples and the pattern, formatted as upstream (including its
/// double space before `or`).
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = String::from(msg);
    out.push_str(" (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(e);
        out.push_str("', ");
    }
    out.push_str("regex used for validation is '");
    out.push_str(fmt);
    out.push_str("')");
    out
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, anchored.
fn matches_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, anchored.
fn matches_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    let lower_alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            lower_alnum(f) && lower_alnum(l) && b.iter().all(|c| lower_alnum(c) || *c == b'-')
        }
        _ => false,
    }
}

/// `validation.IsQualifiedName`: a label key (`[prefix/]name`). Empty result = valid.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    is_dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !matches_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `validation.IsValidLabelValue`: empty, or ≤63 characters of the qualified-name alphabet.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !value.is_empty() && !matches_qualified_name_part(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `validation.IsDNS1123Subdomain` (node names, RuntimeClass names, label-key prefixes).
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !value.split('.').all(matches_dns1123_label) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `validation.IsDNS1123Label` (a RuntimeClass `handler`).
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !matches_dns1123_label(value) {
        errs.push(regex_error(
            DNS1123_LABEL_ERR,
            DNS1123_LABEL_FMT,
            &["my-name", "123-abc"],
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn node_selector_table() {
        // kubernetes-windows-rules.md §3.3.
        /// A nodeSelector, the node labels and whether they match.
        struct SelectorCase<'a> {
            selector: &'a [(&'a str, &'a str)],
            labels: &'a [(&'a str, &'a str)],
            want: bool,
        }
        let table: &[SelectorCase] = &[
            // nil/empty map selects everything
            SelectorCase {
                selector: &[],
                labels: &[],
                want: true,
            },
            SelectorCase {
                selector: &[],
                labels: &[("kubernetes.io/os", "linux")],
                want: true,
            },
            // exact equality
            SelectorCase {
                selector: &[("kubernetes.io/os", "windows")],
                labels: &[("kubernetes.io/os", "windows")],
                want: true,
            },
            SelectorCase {
                selector: &[("kubernetes.io/os", "windows")],
                labels: &[("kubernetes.io/os", "linux")],
                want: false,
            },
            // label must exist
            SelectorCase {
                selector: &[("kubernetes.io/os", "windows")],
                labels: &[],
                want: false,
            },
            // case-sensitive values and keys
            SelectorCase {
                selector: &[("kubernetes.io/os", "windows")],
                labels: &[("kubernetes.io/os", "Windows")],
                want: false,
            },
            SelectorCase {
                selector: &[("kubernetes.io/os", "windows")],
                labels: &[("Kubernetes.io/os", "windows")],
                want: false,
            },
            // "" requires a present label with an empty value
            SelectorCase {
                selector: &[("gpu", "")],
                labels: &[("gpu", "")],
                want: true,
            },
            SelectorCase {
                selector: &[("gpu", "")],
                labels: &[],
                want: false,
            },
            SelectorCase {
                selector: &[("gpu", "")],
                labels: &[("gpu", "x")],
                want: false,
            },
            // every pair must hold (AND)
            SelectorCase {
                selector: &[("a", "1"), ("b", "2")],
                labels: &[("a", "1"), ("b", "2"), ("c", "3")],
                want: true,
            },
            SelectorCase {
                selector: &[("a", "1"), ("b", "2")],
                labels: &[("a", "1")],
                want: false,
            },
            // no trimming
            SelectorCase {
                selector: &[("a", "1")],
                labels: &[("a", "1 ")],
                want: false,
            },
        ];
        for (
            i,
            SelectorCase {
                selector: sel,
                labels,
                want,
            },
        ) in table.iter().enumerate()
        {
            assert_eq!(
                node_selector_matches(&map(sel), &map(labels)),
                *want,
                "row {i}"
            );
        }
    }

    #[test]
    fn qualified_name_table() {
        let name_regex = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        let table: &[(&str, &[&str])] = &[
            ("kubernetes.io/os", &[]),
            ("node.kubernetes.io/windows-build", &[]),
            ("os", &[]),
            ("My_Key.1", &[]),
            ("", &["name part must be non-empty", name_regex]),
            ("-a", &[name_regex]),
            ("a-", &[name_regex]),
            ("a b", &[name_regex]),
            ("/a", &["prefix part must be non-empty"]),
            (
                "Example.com/a",
                &[
                    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                ],
            ),
            (
                "a/b/c",
                &[
                    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                ],
            ),
        ];
        for (input, want) in table {
            assert_eq!(
                is_qualified_name(input),
                want.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                "{input:?}"
            );
        }
        let long = "a".repeat(64);
        assert_eq!(
            is_qualified_name(&long),
            vec!["name part must be no more than 63 characters".to_string()]
        );
        assert!(is_qualified_name(&"a".repeat(63)).is_empty());
    }

    #[test]
    fn label_value_table() {
        let regex = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
        let table: &[(&str, &[&str])] = &[
            ("", &[]),
            ("windows", &[]),
            ("10.0.20348", &[]),
            ("Windows_Server-2022", &[]),
            ("win dows", &[regex]),
            (".x", &[regex]),
            ("x/", &[regex]),
            ("wïndows", &[regex]),
        ];
        for (input, want) in table {
            assert_eq!(
                is_valid_label_value(input),
                want.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                "{input:?}"
            );
        }
        assert_eq!(
            is_valid_label_value(&"a".repeat(64)),
            vec!["must be no more than 63 characters".to_string()]
        );
    }

    #[test]
    fn dns_table() {
        assert!(is_dns1123_subdomain("node-1.example.com").is_empty());
        assert!(!is_dns1123_subdomain("Node1").is_empty());
        assert!(!is_dns1123_subdomain("a..b").is_empty());
        assert!(!is_dns1123_subdomain("").is_empty());
        assert_eq!(
            is_dns1123_subdomain(&"a".repeat(254)),
            vec!["must be no more than 253 characters".to_string()]
        );
        assert_eq!(is_dns1123_subdomain("A".repeat(254).as_str()).len(), 2);
        assert!(is_dns1123_label("runhcs-wcow-process").is_empty());
        assert!(!is_dns1123_label("runhcs.wcow").is_empty());
        assert!(!is_dns1123_label("-a").is_empty());
    }

    #[test]
    fn validate_labels_reports_key_and_value() {
        let problems = validate_labels(&map(&[("ok", "fine"), ("bad key", "bad value")]));
        assert_eq!(problems.len(), 2);
        assert_eq!(
            (problems[0].key.as_str(), problems[0].in_value),
            ("bad key", false)
        );
        assert_eq!(
            (problems[1].key.as_str(), problems[1].in_value),
            ("bad key", true)
        );
        assert!(validate_labels(&map(&[("kubernetes.io/os", "windows")])).is_empty());
    }
}
