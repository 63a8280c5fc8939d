//! The CEL of the Windows-pod family (`rules/src/rules/windows_pods.rs`), without cluster context: the
//! taints are the settings' `windowsTaints`, the builds the settings' and the table's.

use super::image::lit;
use super::{
    CelSettings, FixCel, RuleCel, has_path, json_patch, str_map, tolerates,
    tolerates_after_respelling,
};
use super::{PINNED_BY_NAME, pinned_by_name};
use crate::catalog::RuleId;
use crate::placement::{BETA_ARCH_LABEL, BETA_OS_LABEL};

/// The family's exported rules.
pub(super) fn cel(cx: &CelSettings) -> Vec<RuleCel> {
    let windows = "variables.os == 'windows'";
    // A taint no toleration of the pod tolerates (`missing_windows_tolerations`).
    let untolerated: Vec<String> = cx
        .taints
        .iter()
        .map(|taint| {
            format!(
                "!variables.tolerations.exists(u, {})",
                tolerates("u", taint)
            )
        })
        .collect();
    // A toleration that tolerates a taint nothing tolerates once respelt (`toleration_case_mismatch`).
    let almost: Vec<String> = cx
        .taints
        .iter()
        .map(|taint| {
            format!(
                "({} && !variables.tolerations.exists(u, {}))",
                tolerates_after_respelling("t", taint),
                tolerates("u", taint)
            )
        })
        .collect();
    let or_false = |parts: Vec<String>| {
        if parts.is_empty() {
            "false".to_string()
        } else {
            format!("({})", parts.join(" || "))
        }
    };
    let beta = format!("['{BETA_OS_LABEL}', '{BETA_ARCH_LABEL}']");
    let spec = "variables.spec";
    let preferred = has_path(
        spec,
        &[
            "affinity",
            "nodeAffinity",
            "preferredDuringSchedulingIgnoredDuringExecution",
        ],
    );
    vec![
        // `windows_pod_without_os_selector` (`fix_plan::windows_needs_os_selector`).
        RuleCel {
            rule: RuleId::WindowsPodWithoutOsSelector,
            fires: WINDOWS_NEEDS_OS_SELECTOR.into(),
            message: None,
        },
        // `windows_pod_without_toleration`.
        RuleCel {
            rule: RuleId::WindowsPodWithoutToleration,
            fires: format!(
                "{windows} && !variables.runtimeClassUnchecked && !{PINNED_BY_NAME} && {}",
                or_false(untolerated)
            ),
            message: untolerated_message(cx),
        },
        // `toleration_case_mismatch` (the RuntimeClass's tolerations need cluster context).
        RuleCel {
            rule: RuleId::TolerationCaseMismatch,
            fires: format!(
                "{windows} && !{PINNED_BY_NAME} && variables.tolerations.exists(t, {})",
                or_false(almost)
            ),
            message: None,
        },
        // `windows_pod_without_build_selector` (`fix_plan::needs_build_selector`).
        RuleCel {
            rule: RuleId::WindowsPodWithoutBuildSelector,
            fires: NEEDS_BUILD_SELECTOR.into(),
            message: None,
        },
        // `windows_build_mismatch`, unless `windows_images_build_conflict` fires; for an affinity inside
        // the size guard (read first: the rest is evaluated only then).
        RuleCel {
            rule: RuleId::WindowsBuildMismatch,
            fires: format!(
                "variables.affinityBounded && {windows} && !variables.hostProcess && !(variables.imageBuilds.size() > 0 && variables.imageHosts.size() == 0) && variables.pinnedBuildMismatch"
            ),
            message: None,
        },
        // `deprecated_os_label`: any pod, in the nodeSelector or node affinity; the message is the first
        // finding's (the nodeSelector's keys in order, then the required affinity's, the preferred's).
        RuleCel {
            rule: RuleId::DeprecatedOsLabel,
            fires: format!(
                "(has({spec}.nodeSelector) && {beta}.exists(k, k in {spec}.nodeSelector)) || variables.terms.exists(t, has(t.matchExpressions) && t.matchExpressions.exists(r, r.key in {beta})) || ({preferred} && {spec}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.exists(p, has(p.preference) && has(p.preference.matchExpressions) && p.preference.matchExpressions.exists(r, r.key in {beta})))"
            ),
            message: Some(deprecated_message()),
        },
    ]
}

/// `windows_pod_without_toleration`'s message: the settings' taints the pod does not tolerate
/// (`taint_display`), as `check` words it without cluster context.
fn untolerated_message(cx: &CelSettings) -> Option<String> {
    if cx.taints.is_empty() {
        return None;
    }
    let missing = |show: fn(&k8s_openapi::api::core::v1::Taint) -> String| {
        let parts: Vec<String> = cx
            .taints
            .iter()
            .map(|taint| {
                format!(
                    "(!variables.tolerations.exists(u, {}) ? [{}] : [])",
                    tolerates("u", taint),
                    lit(&show(taint))
                )
            })
            .collect();
        format!("({})", parts.join(" + "))
    };
    let list = missing(crate::schedule::taints::taint_display);
    let tolerations = missing(crate::schedule::taints::toleration_display);
    Some(format!(
        "'This Windows pod does not tolerate the taint ' + {list}.join(', ') + ' of the Windows nodes (settings windowsTaints), so the scheduler keeps it off them and it stays Pending (node(s) had untolerated taint). Add to its tolerations ' + {tolerations}.join(' and ') + '.'"
    ))
}

/// `deprecated_os_label`'s message for its first finding: the deprecated key and where it is
/// (`deprecated_label_message`).
fn deprecated_message() -> String {
    let spec = "variables.spec";
    let beta = format!("['{BETA_ARCH_LABEL}', '{BETA_OS_LABEL}']");
    let first_key = |list: &str| {
        format!(
            "{list}.filter(t, has(t.matchExpressions) && t.matchExpressions.exists(r, r.key in {beta})).map(t, t.matchExpressions.filter(r, r.key in {beta})[0].key)"
        )
    };
    let selector =
        format!("(has({spec}.nodeSelector) ? {beta}.filter(k, k in {spec}.nodeSelector) : [])");
    let required = first_key("variables.terms");
    let preferred = first_key(&format!(
        "({} ? {spec}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.filter(p, has(p.preference)).map(p, p.preference) : [])",
        has_path(
            spec,
            &[
                "affinity",
                "nodeAffinity",
                "preferredDuringSchedulingIgnoredDuringExecution"
            ]
        )
    ));
    let message = |key: &str, place: &str| {
        format!(
            "'The {place} uses the deprecated label ' + {key} + '; it still works because the kubelet still sets it, but it is on its way out. Use ' + ({key} == '{BETA_OS_LABEL}' ? 'kubernetes.io/os' : 'kubernetes.io/arch') + ' (the GA label since Kubernetes 1.14) with the same value.'"
        )
    };
    format!(
        "{selector}.size() > 0 ? {} : ({required}.size() > 0 ? {} : {})",
        message(&format!("{selector}[0]"), "nodeSelector"),
        message(&format!("{required}[0]"), "required node affinity"),
        message(&format!("{preferred}[0]"), "preferred node affinity"),
    )
}

/// `fix_plan::windows_needs_os_selector`.
const WINDOWS_NEEDS_OS_SELECTOR: &str = concat!(
    "variables.os == 'windows' && variables.osPin == 'none' && !variables.runtimeClassUnchecked && !",
    pinned_by_name!()
);

/// `fix_plan::needs_build_selector`, for an affinity inside the size guard (read first: the rest is evaluated
/// only then).
// `[-2]` is a multi-OS image's class (`image::MULTI_OS`): a pod whose every image is one needs no pin.
const _: () = assert!(super::image::MULTI_OS == -2);
const NEEDS_BUILD_SELECTOR: &str = concat!(
    "variables.affinityBounded && variables.os == 'windows' && !variables.hostProcess && !variables.buildPinned && !variables.runtimeClassUnchecked && (variables.imageBuilds.size() == 0 || variables.imageHosts.size() > 0) && !(variables.classes.size() > 0 && variables.classes.all(c, c == [-2])) && !",
    pinned_by_name!()
);

// The most node selector terms the build-range fix adds its requirement to (a JSON patch names each
// term by index, and CEL has no index loop) is the build rules' guard: a pod with more terms is not
// judged by them and gets no range from the policy.
use super::MAX_TERMS;

/// The family's fixes, without `runtimeClasses` ([`super::fixes`] checks): with `buildPinning: range` the
/// build range in the required node affinity, with `exact` the build nodeSelector ([`exact_pin`]).
pub(super) fn fixes(cx: &CelSettings, settings: &crate::settings::Settings) -> Vec<FixCel> {
    let exact = settings.build_pinning == crate::settings::BuildPinning::Exact;
    let pin = exact_pin(settings);
    // `windows_pod_without_toleration`: the tolerations of the missing taints, except those a
    // case-mismatched toleration almost covers (the case fix repairs those).
    let to_add: Vec<String> = cx
        .taints
        .iter()
        .map(|taint| {
            let toleration = match taint.value.as_deref().filter(|v| !v.is_empty()) {
                Some(v) => str_map(&[
                    ("key", &taint.key),
                    ("operator", "Equal"),
                    ("value", v),
                    ("effect", &taint.effect),
                ]),
                None => str_map(&[
                    ("key", &taint.key),
                    ("operator", "Exists"),
                    ("effect", &taint.effect),
                ]),
            };
            format!(
                "(!variables.tolerations.exists(u, {}) && !variables.tolerations.exists(t, {}) ? [{toleration}] : [])",
                tolerates("u", taint),
                tolerates_after_respelling("t", taint)
            )
        })
        .collect();
    let toleration_rule = !to_add.is_empty()
        && !settings
            .disabled_rules
            .iter()
            .any(|r| r == RuleId::WindowsPodWithoutToleration.as_str());
    // The toleration fix's patch: the tolerations added to the list, or the list added.
    let list = to_add.join(" + ");
    let toleration_patches = format!(
        "(variables.os == 'windows' && !variables.runtimeClassUnchecked ? (has(variables.spec.tolerations) ? ({list}).map(t, {}) : (({list}).size() > 0 ? [{}] : [])) : [])",
        json_patch("add", "variables.prefix + '/tolerations/-'", "t"),
        json_patch("add", "variables.prefix + '/tolerations'", &list)
    );
    let classes = RuntimeClasses::new(
        settings,
        &pin,
        toleration_rule.then(|| toleration_patches.clone()),
    );
    let mut out = vec![FixCel {
        rule: RuleId::WindowsPodWithoutOsSelector,
        patches: classes.os_fix(if exact {
            windows_selector_patch(&pin)
        } else {
            super::linux_pods::selector_patch(WINDOWS_NEEDS_OS_SELECTOR, "windows")
        }),
    }];
    if !to_add.is_empty() {
        out.push(FixCel {
            rule: RuleId::WindowsPodWithoutToleration,
            patches: toleration_patches,
        });
    }
    // `windows_pod_without_build_selector` with `build_range::range_builds` (no context: the supported
    // builds that run every image) and `build_range::pin_ops` (ANDed into every non-empty term).
    let mut supported = settings.supported_build_numbers();
    supported.sort_unstable();
    supported.dedup();
    let supported: Vec<String> = supported.iter().map(u32::to_string).collect();
    let range = format!(
        "[{}].filter(b, b in variables.imageHosts)",
        supported.join(", ")
    );
    // `dyn(…)`: Kubernetes' CEL takes map literals of one value type only
    // (`cel.HomogeneousAggregateLiterals`), and a requirement mixes strings with a list.
    let expr = format!(
        "{{'key': dyn('{}'), 'operator': dyn('In'), 'values': dyn({range}.map(b, '10.0.' + string(b)))}}",
        crate::placement::BUILD_LABEL
    );
    let required =
        "variables.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
    let selector = format!("{{'nodeSelectorTerms': [{{'matchExpressions': [{expr}]}}]}}");
    let non_empty = |t: &str| {
        format!(
            "((has({t}.matchExpressions) && {t}.matchExpressions.size() > 0) || (has({t}.matchFields) && {t}.matchFields.size() > 0))"
        )
    };
    let per_term: Vec<String> = (0..MAX_TERMS)
        .map(|i| {
            let t = format!("{required}.nodeSelectorTerms[{i}]");
            let path = format!("variables.prefix + '/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/{i}/matchExpressions'");
            format!(
                "({required}.nodeSelectorTerms.size() > {i} && {} ? [has({t}.matchExpressions) ? {} : {}] : [])",
                non_empty(&t),
                json_patch("add", &format!("{path} + '/-'"), &expr),
                json_patch("add", &path, &format!("[{expr}]"))
            )
        })
        .collect();
    let terms = format!(
        "({required}.nodeSelectorTerms.size() <= {MAX_TERMS} ? {} : [])",
        per_term.join(" + ")
    );
    if exact {
        out.push(FixCel {
            rule: RuleId::WindowsPodWithoutBuildSelector,
            patches: classes.build_fix(exact_build_patch(&pin)),
        });
        return out;
    }
    out.push(FixCel {
        rule: RuleId::WindowsPodWithoutBuildSelector,
        patches: classes.build_fix(format!(
            "{NEEDS_BUILD_SELECTOR} && variables.imageBuilds.size() > 0 && {range}.size() > 0 ? (!has(variables.spec.affinity) ? [{}] : (!has(variables.spec.affinity.nodeAffinity) ? [{}] : (!{} || !has({required}.nodeSelectorTerms) ? [{}] : {terms}))) : []",
            json_patch(
                "add",
                "variables.prefix + '/affinity'",
                &format!("{{'nodeAffinity': {{'requiredDuringSchedulingIgnoredDuringExecution': {selector}}}}}")
            ),
            json_patch(
                "add",
                "variables.prefix + '/affinity/nodeAffinity'",
                &format!("{{'requiredDuringSchedulingIgnoredDuringExecution': {selector}}}")
            ),
            has_path("variables.spec", &["affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"]),
            json_patch(
                "add",
                "variables.prefix + '/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution'",
                &selector
            )
        )),
    });
    out
}

/// The settings' `runtimeClasses` in the fixes (`fix_plan::plan`): where the build an exact pin would name
/// ([`exact_pin`], whatever the pinning) is mapped to a RuntimeClass and the pod has no build pin, the OS
/// and build fixes set `runtimeClassName` instead of their selectors.
///
/// `check --fix` sets it in the same round as it adds the Windows tolerations, and a pod with a
/// runtimeClassName gets no toleration fix (without cluster context its RuntimeClass is unchecked). The
/// policy that sets the class adds the tolerations in the same patch, so that the class is set in the
/// first pass of the MutatingAdmissionPolicies whatever their order: the RuntimeClass admission plugin,
/// an in-tree plugin that runs before them, merges the class's scheduling and overhead into the pod when
/// the chain is reinvoked (docs/reference/admission-policies.md §3).
struct RuntimeClasses {
    /// Whether the pin is mapped (its build label is a key of the settings' map), or `None` without a map.
    mapped: Option<String>,
    /// The patch that sets runtimeClassName to the mapped class.
    patch: String,
    /// The toleration fix's patches (`None` when it is not exported or disabled).
    tolerations: Option<String>,
}

impl RuntimeClasses {
    fn new(settings: &crate::settings::Settings, pin: &str, tolerations: Option<String>) -> Self {
        let entries: Vec<(&str, &str)> = settings
            .runtime_classes
            .iter()
            .map(|(b, c)| (b.as_str(), c.as_str()))
            .collect();
        let map = str_map(&entries);
        let label = format!("('10.0.' + string({pin}[0]))");
        RuntimeClasses {
            mapped: (!entries.is_empty())
                .then(|| format!("({pin}.size() > 0 && {label} in {map})")),
            patch: json_patch(
                "add",
                "variables.prefix + '/runtimeClassName'",
                &format!("{map}[{label}]"),
            ),
            tolerations,
        }
    }

    /// The RuntimeClass, with the tolerations the toleration fix would add.
    fn set(&self) -> String {
        match &self.tolerations {
            Some(tolerations) => format!("([{}] + {tolerations})", self.patch),
            None => format!("[{}]", self.patch),
        }
    }

    /// The OS fix `selectors` (the kubernetes.io/os patch) with the mapping: the pod's build pin
    /// (`variables.buildPinned`) is read inside the affinity guard only; beyond it, where the mapping
    /// would apply, the policy leaves the pod alone rather than pin it otherwise than `check --fix`.
    fn os_fix(&self, selectors: String) -> String {
        match &self.mapped {
            None => selectors,
            Some(mapped) => format!(
                "{WINDOWS_NEEDS_OS_SELECTOR} && {mapped} ? (variables.affinityBounded ? (!variables.buildPinned ? {} : {selectors}) : []) : {selectors}",
                self.set()
            ),
        }
    }

    /// The build fix `pin_patch` (range or exact) with the mapping (`NEEDS_BUILD_SELECTOR` reads the
    /// guard first, and holds only without a build pin).
    fn build_fix(&self, pin_patch: String) -> String {
        match &self.mapped {
            None => pin_patch,
            Some(mapped) => format!(
                "{NEEDS_BUILD_SELECTOR} && {mapped} ? {} : {pin_patch}",
                self.set()
            ),
        }
    }
}

/// The build an exact pin names without cluster context (`fix_plan::choose_build` with none): the images' own
/// builds (a build some Windows image of the pod was built for) that are supported (settings
/// `supportedBuilds`) and run every image (`variables.imageHosts`), newest first; the pin is the first.
/// Empty when no image build is known or none of the images' own builds qualifies.
fn exact_pin(settings: &crate::settings::Settings) -> String {
    let mut supported = settings.supported_build_numbers();
    supported.sort_unstable_by(|a, b| b.cmp(a));
    supported.dedup();
    let supported: Vec<String> = supported.iter().map(u32::to_string).collect();
    format!(
        "[{}].filter(b, b in variables.imageHosts && variables.imageBuilds.exists(c, b in c))",
        supported.join(", ")
    )
}

/// Whether the exact build pin is planned (`fix_plan::plan`: the pod needs a build pin and one is chosen),
/// for an affinity inside the size guard.
fn exact_planned(pin: &str) -> String {
    format!("({NEEDS_BUILD_SELECTOR} && {pin}.size() > 0)")
}

/// The planned nodeSelector (`SelectorPlan::entries`) as a CEL map: the OS entry when `os` holds, the
/// build entry when `build` holds (Kubernetes' CEL takes no map concatenation, so one literal per case).
fn planned_entries(os: &str, build: &str, pin: &str) -> String {
    let os_label = crate::placement::OS_LABEL;
    let build_label = crate::placement::BUILD_LABEL;
    let label = format!("'10.0.' + string({pin}[0])");
    let both = format!(
        "{{{}: 'windows', {}: {label}}}",
        lit(os_label),
        lit(build_label)
    );
    let only_os = str_map(&[(os_label, "windows")]);
    let only_build = format!("{{{}: {label}}}", lit(build_label));
    format!("({os} ? ({build} ? {both} : {only_os}) : {only_build})")
}

/// `fix_plan::selector_ops` for kubernetes.io/os: windows with `buildPinning: exact`: the key added to the
/// nodeSelector, or the nodeSelector added with every planned entry (the exact build's too).
fn windows_selector_patch(pin: &str) -> String {
    let label = crate::placement::OS_LABEL;
    format!(
        "{WINDOWS_NEEDS_OS_SELECTOR} ? [has(variables.spec.nodeSelector) ? {} : {}] : []",
        json_patch(
            "add",
            &format!(
                "variables.prefix + '/nodeSelector/{}'",
                super::pointer_key(label)
            ),
            "'windows'"
        ),
        json_patch(
            "add",
            "variables.prefix + '/nodeSelector'",
            &planned_entries("true", &exact_planned(pin), pin)
        )
    )
}

/// `fix_plan::build_pin_ops` of an exact pin (`selector_ops` for the build label): the entry added to the
/// nodeSelector, or the nodeSelector added with every planned entry (the OS's too, when it needs one).
fn exact_build_patch(pin: &str) -> String {
    let label = crate::placement::BUILD_LABEL;
    // Read the size guard first (`NEEDS_BUILD_SELECTOR` starts with it): nothing else is evaluated for an
    // affinity beyond it.
    format!(
        "{NEEDS_BUILD_SELECTOR} && {pin}.size() > 0 ? [has(variables.spec.nodeSelector) ? {} : {}] : []",
        json_patch(
            "add",
            &format!(
                "variables.prefix + '/nodeSelector/{}'",
                super::pointer_key(label)
            ),
            &format!("'10.0.' + string({pin}[0])")
        ),
        json_patch(
            "add",
            "variables.prefix + '/nodeSelector'",
            &planned_entries(WINDOWS_NEEDS_OS_SELECTOR, "true", pin)
        )
    )
}
