//! The rules in CEL: what `winplace export` turns into ValidatingAdmissionPolicies (docs/policy.md: "The API
//! server as a fourth place").
//!
//! Each rule family that can be exported declares its rules' CEL in a sibling file here
//! (`os_identity.rs`, `windows_pods.rs`, `linux_pods.rs`, `api_validation.rs`), next to the family's
//! Rust check in `rules/src/rules/<family>.rs`; the placement that every family reads
//! ([`crate::placement::resolve`] without cluster context) is [`variables`], shared by every policy.
//! Settings are baked into the expressions (docs/reference/admission-policies.md says why).
//!
//! A rule's CEL is a *firing condition* over `variables.*` (true when `winplace check` reports the rule
//! on the object); the policy's validation is its negation. The parity test
//! (`rules/tests/export_parity.rs`) evaluates them with kube-cel over every corpus case.

mod api_validation;
pub mod image;
mod linux_pods;
mod os_identity;
mod windows_pods;

use k8s_openapi::api::core::v1::Taint;

use crate::catalog::RuleId;
use crate::settings::Settings;
use image::{lit, str_list};

/// One CEL variable of a policy (`spec.variables[]`): a name and its expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// The name (`variables.<name>` in later expressions).
    pub name: &'static str,
    /// The CEL expression.
    pub expression: String,
}

/// The CEL of one exported rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleCel {
    /// The rule.
    pub rule: RuleId,
    /// True exactly when the rule reports the object (over `object` and [`variables`]).
    pub fires: String,
    /// The finding's message as `winplace check` writes it, for a rule whose message names something
    /// of the object (a taint it does not tolerate, a label it uses): a CEL string over `object` and
    /// [`variables`], evaluated only where [`RuleCel::fires`] holds (the policy's `messageExpression`).
    pub message: Option<String>,
}

/// The CEL of one exported fix: the JSON patch a MutatingAdmissionPolicy applies where the rule's fix
/// would (`winplace check --fix`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixCel {
    /// The rule whose fix it is.
    pub rule: RuleId,
    /// A CEL list of `JSONPatch{op, path, value}` over `object` and [`variables`] (empty: nothing to do).
    pub patches: String,
}

/// The fixes a MutatingAdmissionPolicy applies (no network, no cluster context), in the order policy.wasm's
/// `mutate` would find them: the OS selector (Windows, Linux), the Windows tolerations, the build pin
/// (`buildPinning: range`: the range of builds that run the images; `exact`: the nodeSelector of the
/// newest supported build the images were built for, as `check --fix` pins it without cluster context),
/// or, where settings `runtimeClasses` map that build, the runtimeClassName.
pub fn fixes(settings: &Settings) -> Vec<FixCel> {
    let cx = CelSettings {
        taints: crate::placement::fix_plan::windows_taints(None, settings),
    };
    let mut out = windows_pods::fixes(&cx, settings);
    out.extend(linux_pods::fixes(&cx, settings));
    out.sort_by_key(|f| f.rule);
    out
}

/// A `JSONPatch{op, path, value}` literal of a MutatingAdmissionPolicy's JSONPatch mutation.
pub(crate) fn json_patch(op: &str, path: &str, value: &str) -> String {
    format!("JSONPatch{{op: {}, path: {path}, value: {value}}}", lit(op))
}

/// A JSON pointer's key part (RFC 6901: `~` → `~0`, `/` → `~1`).
pub(crate) fn pointer_key(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A CEL map literal of string keys and values.
pub(crate) fn str_map(entries: &[(&str, &str)]) -> String {
    let items: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{}: {}", lit(k), lit(v)))
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// The settings the CEL is generated from, read once.
pub(crate) struct CelSettings {
    /// The settings' Windows taints that keep pods off (NoSchedule, NoExecute).
    pub(crate) taints: Vec<Taint>,
}

/// The CEL of every exported rule for `settings`, in catalogue order (disabled rules included: the
/// generator leaves them out).
pub fn rules(settings: &Settings) -> Vec<RuleCel> {
    let cx = CelSettings {
        taints: crate::placement::fix_plan::windows_taints(None, settings),
    };
    let mut out = Vec::new();
    out.extend(os_identity::cel(&cx));
    out.extend(windows_pods::cel(&cx));
    out.extend(linux_pods::cel(&cx));
    out.extend(api_validation::cel(&cx));
    out.sort_by_key(|r| r.rule);
    out
}

/// The rules [`rules`] exports, whatever the settings.
pub const EXPORTED: &[RuleId] = &[
    RuleId::LinuxPodWithoutOsSelector,
    RuleId::OsConflict,
    RuleId::MixedOsContainers,
    RuleId::WindowsPodWithoutOsSelector,
    RuleId::WindowsPodWithoutToleration,
    RuleId::TolerationCaseMismatch,
    RuleId::WindowsPodWithoutBuildSelector,
    RuleId::WindowsBuildMismatch,
    RuleId::DeprecatedOsLabel,
    RuleId::LinuxPodToleratesWindowsTaint,
    RuleId::WindowsForbiddenField,
    RuleId::LinuxForbiddenWindowsOptions,
    RuleId::HostProcessInconsistent,
];

/// `has(a.b.c)` for every step of a path below `root`: `has(root.a) && has(root.a.b) && …`.
pub(crate) fn has_path(root: &str, steps: &[&str]) -> String {
    let mut out = Vec::new();
    let mut at = root.to_string();
    for s in steps {
        out.push(format!("has({at}.{s})"));
        at = format!("{at}.{s}");
    }
    out.join(" && ")
}

/// The pod spec's field `steps` or `default` when absent.
fn or_default(root: &str, steps: &[&str], default: &str) -> String {
    format!(
        "({} ? {root}.{} : {default})",
        has_path(root, steps),
        steps.join(".")
    )
}

/// Whether the admitted object holds a pod spec where its kind keeps it (a matchCondition: it may not
/// read variables).
pub fn has_pod_spec() -> String {
    format!(
        "object.kind == 'Pod' ? {} : (object.kind == 'CronJob' ? {} : {})",
        has_path("object", &["spec"]),
        has_path(
            "object",
            &["spec", "jobTemplate", "spec", "template", "spec"]
        ),
        has_path("object", &["spec", "template", "spec"])
    )
}

/// The OS label keys a selector may pin the OS with (GA first).
/// Every term of the required node affinity pins the pod to nodes by name: `TemplateCx::pinned_node_names`
/// (a DaemonSet's pod). A macro so that constant expressions can be built with it (`concat!`).
macro_rules! pinned_by_name {
    () => {
        "(variables.terms.size() > 0 && variables.terms.all(t, has(t.matchFields) && t.matchFields.exists(f, f.key == 'metadata.name' && f.operator == 'In')))"
    };
}
pub(super) use pinned_by_name;

/// [`pinned_by_name!`] as a value.
pub(super) const PINNED_BY_NAME: &str = pinned_by_name!();

const OS_KEYS: [&str; 2] = [crate::placement::OS_LABEL, crate::placement::BETA_OS_LABEL];

/// A node selector requirement `r` that parses (`parse_label_requirement`): known operator, qualified
/// key, value counts, integer comparands, valid label values.
fn requirement_valid(r: &str) -> String {
    let values = format!("(has({r}.values) ? {r}.values : [])");
    let key_re = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";
    let value_re = "^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$";
    format!(
        "({r}.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'] && {r}.key.matches('{key_re}') && {values}.all(v, v.matches('{value_re}')) && ({r}.operator in ['In', 'NotIn'] ? {values}.size() > 0 : ({r}.operator in ['Exists', 'DoesNotExist'] ? {values}.size() == 0 : ({values}.size() == 1 && {values}[0].matches('^[-+]?[0-9]+$')))))"
    )
}

/// Whether requirement `r` holds for a node whose label (the requirement's key) has the value `label`,
/// or is absent when `label` is `None`. The value is known when the policy is generated, so whether it
/// is an integer (for `Gt` and `Lt`) is decided here: cel-go folds a conversion of a constant when it
/// plans a program, and `int('windows')` would fail the whole policy at creation even on a branch
/// never taken (docs/reference/admission-policies.md §8).
fn requirement_matches(r: &str, label: Option<&str>) -> String {
    let values = format!("(has({r}.values) ? {r}.values : [])");
    match label {
        None => format!("({r}.operator in ['NotIn', 'DoesNotExist'])"),
        Some(value) => {
            let l = lit(value);
            let compared = match integer_label(value) {
                Some(n) => format!(
                    "({values}[0].matches('^[-+]?[0-9]{{1,18}}$') && ({r}.operator == 'Gt' ? {n} > int({values}[0]) : {n} < int({values}[0])))"
                ),
                // Not an integer: `Gt` and `Lt` never match it (`parse_label_requirement`).
                None => "false".to_string(),
            };
            format!(
                "({r}.operator == 'In' ? {l} in {values} : ({r}.operator == 'NotIn' ? !({l} in {values}) : ({r}.operator == 'Exists' ? true : ({r}.operator == 'DoesNotExist' ? false : {compared}))))"
            )
        }
    }
}

/// A label value as the scheduler reads it for `Gt` and `Lt`: an integer of at most 18 digits, with an
/// optional sign (the pattern the CEL applies to a label it reads from the object).
fn integer_label(value: &str) -> Option<i64> {
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    if digits.is_empty() || digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

/// The required node affinity admits a node (`admits` of pins.rs): some term of `validTerms` (non-empty,
/// every requirement parses) whose every requirement on one of `keys` holds for the node's label value
/// `label(key)` (`None`: absent).
fn affinity_admits<'a>(keys: &[&str], label: impl Fn(&str) -> Option<&'a str>) -> String {
    let on_key: Vec<String> = keys
        .iter()
        .map(|k| {
            format!(
                "(r.key == {} ? {} : true)",
                lit(k),
                requirement_matches("r", label(k))
            )
        })
        .collect();
    format!(
        "(!variables.hasRequired || variables.validTerms.exists(t, (has(t.matchExpressions) ? t.matchExpressions : []).all(r, {})))",
        on_key.join(" && ")
    )
}

/// Whether the build requirement `q` (of `variables.buildReqs`: its operator, then its values) holds for
/// a node labelled `l` (`n`: the label as an integer, in a list of at most one; `None` when `l` is known not
/// to be one, so that `Gt` and `Lt` never match it), or without the label when `label` is `None`
/// (`requirement_matches` of pins.rs). `l` is among the values when it occurs in `q` more often than as
/// its operator.
fn build_requirement_matches(q: &str, label: Option<(&str, Option<&str>)>) -> String {
    match label {
        None => format!("({q}[0] in ['NotIn', 'DoesNotExist'])"),
        Some((l, n)) => {
            let among = format!("({q}.filter(x, x == {l}).size() > ({q}[0] == {l} ? 1 : 0))");
            let compared = match n {
                Some(n) => format!(
                    "{n}.size() == 1 && ({q}[0] == 'Gt' ? {n}[0] > int({q}[1]) : {n}[0] < int({q}[1]))"
                ),
                None => "false".to_string(),
            };
            format!(
                "({q}[0] == 'In' ? {among} : ({q}[0] == 'NotIn' ? !{among} : ({q}[0] == 'Exists' ? true : ({q}[0] in ['Gt', 'Lt'] ? {compared} : false))))"
            )
        }
    }
}

/// The most node selector terms the build rules (windows-pod-without-build-selector,
/// windows-build-mismatch and the build-range fix) judge: with [`MAX_TERM_EXPRESSIONS`],
/// [`MAX_BUILD_REQUIREMENTS`] and [`MAX_REQUIREMENT_VALUES`], the size guard (`variables.affinityBounded`)
/// that bounds their CEL cost; a larger affinity is admitted without them (docs/reference/admission-policies.md §5).
pub const MAX_TERMS: usize = 4;
/// The most requirements (`matchExpressions`) per node selector term the build rules judge.
pub const MAX_TERM_EXPRESSIONS: usize = 8;
/// The most requirements on the build label per node selector term the build rules judge.
pub const MAX_BUILD_REQUIREMENTS: usize = 2;
/// The most values per requirement the build rules judge.
pub const MAX_REQUIREMENT_VALUES: usize = 8;

/// Whether toleration `t` tolerates `taint` (`tolerates` of taints.rs, comparison operators off).
pub(crate) fn tolerates(t: &str, taint: &Taint) -> String {
    tolerates_parts(
        &field(t, "key"),
        &field(t, "operator"),
        &field(t, "value"),
        &field(t, "effect"),
        taint,
    )
}

/// A string field of an object, `''` when absent.
fn field(o: &str, f: &str) -> String {
    format!("(has({o}.{f}) ? {o}.{f} : '')")
}

/// [`tolerates`] over the toleration's four parts as CEL string expressions.
fn tolerates_parts(key: &str, op: &str, value: &str, effect: &str, taint: &Taint) -> String {
    let tv = taint.value.as_deref().unwrap_or("");
    format!(
        "(({effect} == '' || {effect} == {e}) && ({key} == '' || {key} == {k}) && ({op} in ['', 'Equal'] ? {value} == {v} : {op} == 'Exists'))",
        e = lit(&taint.effect),
        k = lit(&taint.key),
        v = lit(tv),
    )
}

/// Whether toleration `t` tolerates `taint` once the parts that differ only in letter case are respelt
/// (`case_differences` of taints.rs), and not as written.
pub(crate) fn tolerates_after_respelling(t: &str, taint: &Taint) -> String {
    let respell = |written: String, wanted: &str| {
        format!(
            "({written}.lowerAscii() == {w} ? {wanted} : {written})",
            w = lit(&wanted.to_ascii_lowercase()),
            wanted = lit(wanted)
        )
    };
    let op = format!(
        "({o}.lowerAscii() == 'equal' ? 'Equal' : ({o}.lowerAscii() == 'exists' ? 'Exists' : {o}))",
        o = field(t, "operator")
    );
    let value = format!(
        "({op} == 'Exists' ? {v} : {r})",
        v = field(t, "value"),
        r = respell(field(t, "value"), taint.value.as_deref().unwrap_or(""))
    );
    let fixed = tolerates_parts(
        &respell(field(t, "key"), &taint.key),
        &op,
        &value,
        &respell(field(t, "effect"), &taint.effect),
        taint,
    );
    format!("(!{} && {fixed})", tolerates(t, taint))
}

/// The variables every policy carries, in order (a variable reads only the ones before it): the pod
/// spec, its containers and images, their classes, the OS signals and the OS of
/// [`crate::placement::resolve`] without cluster context, the OS and build pins.
pub fn variables(settings: &Settings) -> Vec<Variable> {
    let supported = settings.supported_build_numbers();
    let candidates = image::host_candidates(&supported);
    let candidate_labels: Vec<String> = candidates
        .iter()
        .map(|b| crate::windows::builds::WindowsVersion::new(*b).label())
        .collect();
    let spec = "variables.spec";
    let os_allowed = |os: &str| {
        let selector = format!(
            "(!has({spec}.nodeSelector) || {keys}.all(k, !(k in {spec}.nodeSelector) || {spec}.nodeSelector[k] == {os}))",
            keys = str_list(OS_KEYS),
            os = lit(os)
        );
        let affinity = affinity_admits(&OS_KEYS, |_| Some(os));
        (selector, affinity)
    };
    let (win_selector, win_affinity) = os_allowed("windows");
    let (linux_selector, linux_affinity) = os_allowed("linux");
    let build = crate::placement::BUILD_LABEL;
    // The pod passes a build label `v` whose integer is `n` (None: a Windows node without it): `passes`
    // of pins.rs `build_pin`, over the valid terms' build requirements (`variables.buildReqs`).
    let passes = |v: Option<(&str, Option<&str>)>| {
        let selector = match v {
            None => format!(
                "!has({spec}.nodeSelector) || !({b} in {spec}.nodeSelector)",
                b = lit(build)
            ),
            Some((v, _)) => format!(
                "!has({spec}.nodeSelector) || !({b} in {spec}.nodeSelector) || {spec}.nodeSelector[{b}] == {v}",
                b = lit(build)
            ),
        };
        let requirement = build_requirement_matches("q", v);
        format!(
            "(({selector}) && (!variables.hasRequired || variables.buildReqs.exists(rs, rs.all(q, {requirement}))))"
        )
    };
    // A build label `l` as an integer, in a list of at most one (`[]`: not one), bound once per value by
    // a comprehension over a list of one, not read once per requirement. (Kubernetes' CEL takes list and
    // map literals of one element type only, `cel.HomogeneousAggregateLiterals`, so the label and its
    // integer are bound apart.)
    let int = "[l.matches('^[-+]?[0-9]{1,18}$') ? [int(l)] : []]";
    // The pod's own OS selectors that name an OS, GA first (`pins::selector_signals`).
    let selector_signals = format!(
        "{keys}.filter(k, has({spec}.nodeSelector) && k in {spec}.nodeSelector && {spec}.nodeSelector[k] in ['linux', 'windows']).map(k, {spec}.nodeSelector[k])",
        keys = str_list(OS_KEYS)
    );
    // Some requirement of the required affinity is on an OS label (`first_expression_on`).
    let on_os_keys = format!(
        "variables.terms.exists(t, has(t.matchExpressions) && t.matchExpressions.exists(r, r.key in {}))",
        str_list(OS_KEYS)
    );
    let vars: Vec<(&'static str, String)> = vec![
        (
            "prefix",
            "object.kind == 'Pod' ? '/spec' : (object.kind == 'CronJob' ? '/spec/jobTemplate/spec/template/spec' : '/spec/template/spec')".into(),
        ),
        (
            "spec",
            "object.kind == 'Pod' ? object.spec : (object.kind == 'CronJob' ? object.spec.jobTemplate.spec.template.spec : object.spec.template.spec)".into(),
        ),
        (
            "containers",
            format!(
                "{} + {} + {}",
                or_default(spec, &["initContainers"], "[]"),
                or_default(spec, &["containers"], "[]"),
                or_default(spec, &["ephemeralContainers"], "[]")
            ),
        ),
        (
            "images",
            "variables.containers.filter(c, has(c.image) && c.image != '').map(c, c.image)".into(),
        ),
        ("buildTags", image::build_tags(false)),
        ("variantTags", image::build_tags(true)),
        ("knownImages", image::known_images()),
        (
            "refs",
            image::with_family(&image::reference_parts("variables.images"), &settings.image_rules),
        ),
        (
            "classes",
            format!(
                "variables.refs.map(r, {})",
                image::classify("r", &settings.image_rules)
            ),
        ),
        (
            "windowsImages",
            "variables.classes.filter(c, c.size() == 0 || c[0] > 0).size()".into(),
        ),
        (
            "linuxImages",
            format!("variables.classes.filter(c, c == [{}]).size()", image::LINUX),
        ),
        (
            "declaredOs",
            format!(
                "has({spec}.os) && has({spec}.os.name) && {spec}.os.name in ['linux', 'windows'] ? {spec}.os.name : ''"
            ),
        ),
        (
            "hasRequired",
            has_path(
                spec,
                &["affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"],
            ),
        ),
        (
            "terms",
            format!(
                "variables.hasRequired && has({spec}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms) ? {spec}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms : []"
            ),
        ),
        (
            "validTerms",
            format!(
                "variables.terms.filter(t, ((has(t.matchExpressions) && t.matchExpressions.size() > 0) || (has(t.matchFields) && t.matchFields.size() > 0)) && (has(t.matchExpressions) ? t.matchExpressions : []).all(r, {}))",
                requirement_valid("r")
            ),
        ),
        (
            "affinityBounded",
            format!(
                "variables.terms.size() <= {MAX_TERMS} && variables.terms.all(t, !has(t.matchExpressions) || (t.matchExpressions.size() <= {MAX_TERM_EXPRESSIONS} && t.matchExpressions.filter(r, r.key == {b}).size() <= {MAX_BUILD_REQUIREMENTS} && t.matchExpressions.all(r, !has(r.values) || r.values.size() <= {MAX_REQUIREMENT_VALUES})))",
                b = lit(build)
            ),
        ),
        (
            "buildReqs",
            // Per valid term, its requirements on the build label as `[operator] + values` (one element
            // type: Kubernetes' CEL takes no mixed literals); a Gt or Lt whose comparand has more than 18
            // digits (no label matches it: `^[-+]?[0-9]{1,18}$`) as `Never`. The term is valid, so Gt and
            // Lt have one value of `^[-+]?[0-9]+$`.
            format!(
                "variables.validTerms.map(t, (has(t.matchExpressions) ? t.matchExpressions : []).filter(r, r.key == {b}).map(r, [r.operator in ['Gt', 'Lt'] && !(r.values[0].size() <= 18 || (r.values[0].size() == 19 && (r.values[0].startsWith('+') || r.values[0].startsWith('-')))) ? 'Never' : r.operator] + (has(r.values) ? r.values : [])))",
                b = lit(build)
            ),
        ),
        (
            "buildValues",
            format!(
                "variables.terms.map(t, has(t.matchExpressions) ? t.matchExpressions.filter(r, r.key == {b} && has(r.values)).map(r, r.values) : [])",
                b = lit(build)
            ),
        ),
        ("affinityAdmitsWindows", win_affinity),
        ("affinityAdmitsLinux", linux_affinity),
        (
            "podSignals",
            format!(
                "(variables.declaredOs != '' ? [variables.declaredOs] : []) + {selector_signals} + ({on_os_keys} && variables.affinityAdmitsWindows != variables.affinityAdmitsLinux ? [variables.affinityAdmitsWindows ? 'windows' : 'linux'] : [])"
            ),
        ),
        (
            "minority",
            "variables.windowsImages > 0 && variables.linuxImages > 0 ? (variables.windowsImages < variables.linuxImages || (variables.windowsImages == variables.linuxImages && 'linux' in variables.podSignals && !('windows' in variables.podSignals)) ? 'windows' : 'linux') : ''".into(),
        ),
        (
            "strongSignals",
            format!(
                "variables.podSignals + variables.classes.filter(c, c.size() == 0 || c[0] > 0 || c == [{l}]).map(c, c == [{l}] ? 'linux' : 'windows').filter(o, o != variables.minority)",
                l = image::LINUX
            ),
        ),
        (
            "hostProcess",
            format!(
                "variables.containers.exists(c, {own} ? c.securityContext.windowsOptions.hostProcess : ({pod} && {spec}.securityContext.windowsOptions.hostProcess))",
                own = has_path("c", &["securityContext", "windowsOptions", "hostProcess"]),
                pod = has_path(spec, &["securityContext", "windowsOptions", "hostProcess"]),
            ),
        ),
        (
            "os",
            format!(
                "variables.strongSignals.exists(o, o != variables.strongSignals[0]) ? 'conflict' : (variables.strongSignals.size() > 0 ? variables.strongSignals[0] : ({pod_wo} || variables.containers.exists(c, {c_wo}) ? 'windows' : (variables.classes.exists(c, c == [{u}]) ? 'linux' : 'any')))",
                pod_wo = has_path(spec, &["securityContext", "windowsOptions"]),
                c_wo = has_path("c", &["securityContext", "windowsOptions"]),
                u = image::UNRECOGNIZED
            ),
        ),
        (
            "osPin",
            format!(
                "({ws} && variables.affinityAdmitsWindows) ? (({ls} && variables.affinityAdmitsLinux) ? 'none' : 'windows') : (({ls} && variables.affinityAdmitsLinux) ? 'linux' : 'nothing')",
                ws = win_selector,
                ls = linux_selector
            ),
        ),
        (
            "runtimeClassUnchecked",
            format!("has({spec}.runtimeClassName) && {spec}.runtimeClassName != ''"),
        ),
        (
            "selectorBuild",
            format!(
                "has({spec}.nodeSelector) && {b} in {spec}.nodeSelector ? [{spec}.nodeSelector[{b}]] : []",
                b = lit(build)
            ),
        ),
        // The build values `build_pin` tries that pass (the candidate hosts' labels, the nodeSelector's
        // build, per term the values of the affinity's requirements on the build label), each tried
        // once: the pod is pinned when one does not pass, and mismatched when one that passes cannot
        // run an image.
        (
            "passingCandidates",
            format!("{}.filter(l, {})", str_list(candidate_labels.iter().map(String::as_str)), passes(Some(("l", None)))),
        ),
        (
            "passingSelector",
            format!("variables.selectorBuild.filter(l, {int}.all(n, {}))", passes(Some(("l", Some("n"))))),
        ),
        (
            "passingValues",
            format!("variables.buildValues.map(tv, tv.map(vs, vs.filter(l, {int}.all(n, {}))))", passes(Some(("l", Some("n"))))),
        ),
        (
            "buildPinned",
            format!(
                "!{} && (variables.passingCandidates.size() < {} || variables.passingSelector.size() < variables.selectorBuild.size() || variables.buildValues.exists(tv, tv.exists(vs, vs.exists(l, !variables.passingValues.exists(pt, pt.exists(pv, l in pv))))))",
                passes(None),
                candidate_labels.len()
            ),
        ),
        (
            "imageBuilds",
            "variables.classes.filter(c, c.size() > 0 && c[0] > 0)".into(),
        ),
        (
            "imageHosts",
            format!(
                "[{}].filter(h, variables.imageBuilds.all(b, b.exists(x, {})))",
                candidates.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
                image::host_runs("h", "x")
            ),
        ),
        (
            "pinnedBuildMismatch",
            {
                let mismatch = format!(
                    "l.matches('^(0|[1-9][0-9]*)\\\\.(0|[1-9][0-9]*)\\\\.(0|[1-9][0-9]{{0,8}})$') && [int(l.split('.')[2])].exists(h, variables.imageBuilds.exists(b, !b.exists(x, {})))",
                    image::host_runs("h", "x")
                );
                format!(
                    "variables.buildPinned && ((variables.passingCandidates + variables.passingSelector).exists(l, {mismatch}) || variables.passingValues.exists(pt, pt.exists(pv, pv.exists(l, {mismatch}))))"
                )
            },
        ),
        (
            "tolerations",
            or_default(spec, &["tolerations"], "[]"),
        ),
    ];
    let mut vars = vars;
    if settings.placement_gate {
        vars.push(("gateOpen", gate_open(settings)));
    }
    vars.into_iter()
        .map(|(name, expression)| Variable { name, expression })
        .collect()
}

/// `gate::pod_needs_gate` without cluster context or manifests, for the object's pod (or its template's
/// pods, which are gated when created): `placementGate` applies to the request's namespace, and the images
/// leave the OS or the Windows build open while nothing already places the pod (a node name, an OS
/// conflict, a runtimeClassName, a Linux pin or none possible, a Windows pin with a build pin or
/// HostProcess). Beyond the build rules' size guard a Windows pin counts as pinned.
fn gate_open(settings: &Settings) -> String {
    let spec = "variables.spec";
    let namespaces = if settings.placement_gate_namespaces.is_empty() {
        "true".to_string()
    } else {
        format!(
            "request.namespace in {}",
            str_list(
                settings
                    .placement_gate_namespaces
                    .iter()
                    .map(String::as_str)
            )
        )
    };
    format!(
        "{namespaces} && !(has({spec}.nodeName) && {spec}.nodeName != '') && variables.os != 'conflict' && !variables.runtimeClassUnchecked && !(variables.osPin in ['linux', 'nothing']) && !(variables.osPin == 'windows' && (variables.hostProcess || !variables.affinityBounded || variables.buildPinned)) && variables.classes.exists(c, c == [{u}] || (c.size() == 0 && !variables.hostProcess))",
        u = image::UNRECOGNIZED
    )
}

/// The name of a variable's twin over `oldObject`: `spec` → `oldSpec`.
pub fn old_name(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => format!("old{}{}", first.to_ascii_uppercase(), chars.as_str()),
        None => "old".to_string(),
    }
}

/// `expression` read on the object before an UPDATE: the identifier `object` becomes `oldObject` and
/// `variables.<name>` the twin `variables.<old_name>` ([`old_variables`]). String literals are copied as
/// they are; a field named `object` (`x.object`) is not the identifier.
pub fn on_old_object(expression: &str) -> String {
    let mut out = String::with_capacity(expression.len() + 64);
    let chars: Vec<char> = expression.chars().collect();
    let mut i = 0;
    // The last character copied that is not white space: a `.` before an identifier makes it a field.
    let mut last = ' ';
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' || c == '"' {
            out.push(c);
            i += 1;
            while i < chars.len() {
                out.push(chars[i]);
                if chars[i] == '\\' && i + 1 < chars.len() {
                    out.push(chars[i + 1]);
                    i += 2;
                    continue;
                }
                i += 1;
                if chars[i - 1] == c {
                    break;
                }
            }
            last = c;
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let is_field = last == '.';
            if !is_field && word == "object" {
                out.push_str("oldObject");
            } else if !is_field && word == "variables" && chars.get(i) == Some(&'.') {
                let name_start = i + 1;
                let mut end = name_start;
                while end < chars.len() && (chars[end].is_ascii_alphanumeric() || chars[end] == '_')
                {
                    end += 1;
                }
                let name: String = chars[name_start..end].iter().collect();
                out.push_str("variables.");
                out.push_str(&old_name(&name));
                i = end;
            } else {
                out.push_str(&word);
            }
            last = 'a';
            continue;
        }
        if !c.is_whitespace() {
            last = c;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The twins over `oldObject` of `variables` (each read with [`on_old_object`]), in the same order: what
/// an UPDATE's finding is compared with (docs/reference/admission-policies.md §2, "Operations").
pub fn old_variables(variables: &[Variable]) -> Vec<(String, String)> {
    variables
        .iter()
        .map(|v| (old_name(v.name), on_old_object(&v.expression)))
        .collect()
}

/// The pod spec of `root` (`object` or `oldObject`) where its kind keeps it, `null` when absent (an
/// object before an UPDATE is not checked by `has-pod-spec`).
pub fn pod_spec_of(root: &str) -> String {
    let or_null = |steps: &[&str]| {
        format!(
            "({} ? {root}.{} : null)",
            has_path(root, steps),
            steps.join(".")
        )
    };
    format!(
        "({root}.kind == 'Pod' ? {} : ({root}.kind == 'CronJob' ? {} : {}))",
        or_null(&["spec"]),
        or_null(&["spec", "jobTemplate", "spec", "template", "spec"]),
        or_null(&["spec", "template", "spec"])
    )
}

#[cfg(test)]
mod old_object_tests {
    use super::*;

    #[test]
    fn an_expression_is_read_on_the_old_object() {
        assert_eq!(
            on_old_object(
                "object.kind == 'object' && variables.osPin != variables.os && c.object.x"
            ),
            "oldObject.kind == 'object' && variables.oldOsPin != variables.oldOs && c.object.x"
        );
        assert_eq!(
            on_old_object(r#"has(object.spec) ? 'it\'s object' : "variables.os""#),
            r#"has(oldObject.spec) ? 'it\'s object' : "variables.os""#
        );
        assert_eq!(old_name("spec"), "oldSpec");
        // Every shared variable has a twin that reads only `oldObject` and twins.
        let all = variables(&Settings::default());
        for (name, expression) in old_variables(&all) {
            assert!(name.starts_with("old"), "{name}");
            assert!(
                !expression.starts_with("object.")
                    && !expression.contains(" object.")
                    && !expression.contains("(object."),
                "{name} reads object"
            );
            for v in &all {
                assert!(
                    !expression.contains(&format!("variables.{} ", v.name))
                        && !expression.contains(&format!("variables.{})", v.name)),
                    "{name} reads {}",
                    v.name
                );
            }
        }
    }
}
