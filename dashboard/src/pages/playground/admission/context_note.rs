//! Why the Findings tab and the Admission view can disagree: the findings are checked against the chosen
//! cluster, while the module asks its host for the cluster only with `contextAware: true` in its settings
//! (a ClusterAdmissionPolicy granting `contextAwareResources`), and otherwise decides from its settings
//! alone. The rules linked into this page, run once with the cluster and once without, tell whether that
//! changes anything here.

use leptos::prelude::*;
use winplace_rules::{Checker, ClusterContext, Finding};

use super::super::eval::{INPUT_FILE, parse_settings, same_problem};

/// Findings that the chosen cluster adds or removes, for a policy not granted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ungranted {
    /// Findings of one check and not of the other (both ways).
    pub differ: usize,
    /// Their rules, sorted, each once.
    pub rules: Vec<String>,
}

/// `None` when the policy sees what the Findings tab sees: no cluster chosen, the cluster granted
/// (`contextAware: true`), settings the module would refuse anyway (the settings check says so), or the
/// same findings with and without the cluster.
pub fn ungranted(
    input: &str,
    settings_text: &str,
    context: Option<&ClusterContext>,
) -> Option<Ungranted> {
    let context = context?;
    let settings = parse_settings(settings_text).ok()?;
    if settings.context_aware {
        return None;
    }
    let check = |cluster: Option<&ClusterContext>| {
        Checker::builder()
            .settings(&settings)
            .cluster(cluster)
            .build()
            .report(INPUT_FILE, input)
            .findings
    };
    let with = check(Some(context));
    let without = check(None);
    let mut rules: Vec<String> = unmatched(&with, &without)
        .chain(unmatched(&without, &with))
        .map(|f| f.rule.clone())
        .collect();
    let differ = rules.len();
    rules.sort();
    rules.dedup();
    (differ > 0).then_some(Ungranted { differ, rules })
}

/// The findings of `a` with no finding of `b` for the same problem and severity (each of `b` used once).
fn unmatched<'a>(a: &'a [Finding], b: &'a [Finding]) -> impl Iterator<Item = &'a Finding> {
    let mut used = vec![false; b.len()];
    a.iter().filter(move |f| {
        let found = b
            .iter()
            .enumerate()
            .position(|(i, g)| !used[i] && same_problem(f, g) && f.severity == g.severity);
        match found {
            Some(i) => {
                used[i] = true;
                false
            }
            None => true,
        }
    })
}

/// The note above the reviews, when the policy's answers may differ from the findings for want of the
/// cluster.
#[component]
pub fn ContextNotGranted(#[prop(into)] ungranted: Signal<Option<Ungranted>>) -> impl IntoView {
    move || {
        ungranted.get().map(|u| {
            let findings = if u.differ == 1 { "finding differs" } else { "findings differ" };
            view! {
                <p class="context-note" role="note" data-differ=u.differ.to_string()>
                    "The Findings tab checks against the chosen cluster, but this policy is not granted it: without "
                    <code>"contextAware: true"</code>
                    " in its settings it decides from the settings alone, so "
                    {format!("{} {findings}", u.differ)}
                    " ("
                    {u.rules.join(", ")}
                    ")."
                </p>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINUX_DEPLOYMENT: &str =
        include_str!("../../../../examples/linux-deployment-untainted-windows-node.yaml");
    const UNTAINTED_WINDOWS: &str =
        include_str!("../../../../examples/linux-deployment-untainted-windows-node.cluster.yaml");

    #[test]
    fn a_cluster_the_policy_is_not_granted_is_named_only_when_it_changes_the_findings() {
        let cluster = super::super::super::eval::parse_context(UNTAINTED_WINDOWS)
            .context
            .expect("the example's cluster");
        // (settings, context given, a note expected)
        let rows = [
            ("", true, true),
            ("contextAware: true", true, false),
            ("", false, false),
            ("contextAware: [", true, false),
        ];
        for (settings, given, want) in rows {
            let note = ungranted(LINUX_DEPLOYMENT, settings, given.then_some(&cluster));
            assert_eq!(note.is_some(), want, "{settings:?} {given}: {note:?}");
            if let Some(n) = note {
                assert!(n.differ >= 1 && !n.rules.is_empty(), "{n:?}");
            }
        }
    }
}
