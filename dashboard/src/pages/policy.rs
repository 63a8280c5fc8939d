//! The admission policy: download `policy.wasm`, and turn a settings form into a Kubewarden
//! ClusterAdmissionPolicy manifest, validated live with `Settings::validate`.

use crate::components::copy::CopyButton;
use crate::components::yaml::to_yaml;
use leptos::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use winplace_rules::Settings;
use winplace_rules::settings::BuildPinning;
// The taint text of `kubectl taint` and AKS node pools, read and written by the rules crate.
use winplace_rules::infra::parse_taint;
use winplace_rules::schedule::taints::taint_display;

/// Where the policy is published.
pub const MODULE: &str = "registry://ghcr.io/winplace/policies/winplace:v0.1.0";

/// The form's text, as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    /// One taint per line: `key=value:Effect` or `key:Effect`.
    pub windows_taints: String,
    /// Builds separated by commas or spaces.
    pub supported_builds: String,
    /// `requireBuildSelector`.
    pub require_build_selector: bool,
    /// `mutate` (and the policy's `mutating`).
    pub mutate: bool,
    /// Namespaces separated by commas or spaces.
    pub exempt_namespaces: String,
    /// Rule ids separated by commas or spaces.
    pub disabled_rules: String,
    /// One `build=RuntimeClass` per line.
    pub runtime_classes: String,
    /// `buildPinning`: how fixes pin a Windows pod's build.
    pub build_pinning: BuildPinning,
}

impl Default for Form {
    fn default() -> Self {
        let s = Settings::default();
        Form {
            windows_taints: s
                .windows_taints
                .iter()
                .map(taint_display)
                .collect::<Vec<_>>()
                .join("\n"),
            supported_builds: s.supported_builds.join(", "),
            require_build_selector: s.require_build_selector,
            mutate: s.mutate,
            exempt_namespaces: s.exempt_namespaces.join(", "),
            disabled_rules: s.disabled_rules.join(", "),
            runtime_classes: s
                .runtime_classes
                .iter()
                .map(|(b, c)| format!("{b}={c}"))
                .collect::<Vec<_>>()
                .join("\n"),
            build_pinning: s.build_pinning,
        }
    }
}

fn list(text: &str) -> Vec<String> {
    text.split([',', ' ', '\n', '\t'])
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .map(str::trim)
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
}

impl Form {
    /// The settings the form describes; errors name the field and line.
    pub fn settings(&self) -> Result<Settings, String> {
        let mut windows_taints = Vec::new();
        for (i, line) in lines(&self.windows_taints) {
            windows_taints
                .push(parse_taint(line).map_err(|e| format!("windowsTaints line {}: {e}", i + 1))?);
        }
        let mut runtime_classes = BTreeMap::new();
        for (i, line) in lines(&self.runtime_classes) {
            let (build, class) = line.split_once('=').ok_or_else(|| {
                format!(
                    "runtimeClasses line {}: {line:?} is not build=RuntimeClass",
                    i + 1
                )
            })?;
            runtime_classes.insert(build.trim().to_string(), class.trim().to_string());
        }
        Ok(Settings {
            windows_taints,
            supported_builds: list(&self.supported_builds),
            require_build_selector: self.require_build_selector,
            runtime_classes,
            mutate: self.mutate,
            exempt_namespaces: list(&self.exempt_namespaces),
            disabled_rules: list(&self.disabled_rules),
            build_pinning: self.build_pinning,
            ..Settings::default()
        })
    }
}

/// The ClusterAdmissionPolicy for `settings`: every workload kind, on create and update.
pub fn manifest(settings: &Settings) -> Value {
    let mut settings_json = serde_json::to_value(settings).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut settings_json {
        // Leave out what the form does not set and is empty: the defaults apply.
        map.retain(|k, v| !(matches!(k.as_str(), "imageRules" | "severity") && is_empty(v)));
    }
    let ops = json!(["CREATE", "UPDATE"]);
    json!({
        "apiVersion": "policies.kubewarden.io/v1",
        "kind": "ClusterAdmissionPolicy",
        "metadata": {"name": "winplace"},
        "spec": {
            "module": MODULE,
            "mode": "protect",
            "mutating": settings.mutate,
            "rules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods", "replicationcontrollers"], "operations": ops},
                {"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments", "replicasets", "statefulsets", "daemonsets"], "operations": ops},
                {"apiGroups": ["batch"], "apiVersions": ["v1"], "resources": ["jobs", "cronjobs"], "operations": ops},
                // The containers `kubectl debug` adds, judged when they are added.
                {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/ephemeralcontainers"], "operations": ["UPDATE"]},
            ],
            "settings": settings_json,
        }
    })
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// The policy view.
#[component]
pub fn PolicyPage() -> impl IntoView {
    let form = RwSignal::new(Form::default());
    let checked = Memo::new(move |_| {
        form.with(|f| {
            f.settings()
                .and_then(|s| s.validate().map(|()| s).map_err(|e| e.to_string()))
        })
    });
    let text = |get: fn(&Form) -> String, set: fn(&mut Form, String)| {
        (
            move || form.with(get),
            move |ev| form.update(|f| set(f, event_target_value(&ev))),
        )
    };
    let (taints, on_taints) = text(|f| f.windows_taints.clone(), |f, v| f.windows_taints = v);
    let (builds, on_builds) = text(
        |f| f.supported_builds.clone(),
        |f, v| f.supported_builds = v,
    );
    let (exempt, on_exempt) = text(
        |f| f.exempt_namespaces.clone(),
        |f, v| f.exempt_namespaces = v,
    );
    let (disabled, on_disabled) = text(|f| f.disabled_rules.clone(), |f, v| f.disabled_rules = v);
    let (classes, on_classes) = text(|f| f.runtime_classes.clone(), |f, v| f.runtime_classes = v);
    view! {
        <section aria-labelledby="policy-title">
            <h1 id="policy-title">"Policy"</h1>
            <section aria-labelledby="download-title">
                <h2 id="download-title">"The admission policy"</h2>
                <p>
                    "The same rules as this dashboard, as a Kubewarden policy: "
                    <a class="download" href="/policy.wasm" download="policy.wasm">
                        "Download policy.wasm"
                    </a> " · "<a href="/policy/metadata.yml">"metadata.yml"</a>
                </p>
            </section>
            <div class="policy-columns">
                <form
                    class="settings-form"
                    aria-labelledby="settings-title"
                    on:submit=|ev| ev.prevent_default()
                >
                    <h2 id="settings-title">"Settings"</h2>
                    <label for="s-taints">
                        "Windows node taints (one per line, key=value:Effect)"
                    </label>
                    <textarea
                        id="s-taints"
                        rows="3"
                        spellcheck="false"
                        prop:value=taints
                        on:input=on_taints
                    ></textarea>
                    <label for="s-builds">"Supported Windows builds"</label>
                    <input
                        id="s-builds"
                        type="text"
                        spellcheck="false"
                        prop:value=builds
                        on:input=on_builds
                    />
                    <label class="check">
                        <input
                            type="checkbox"
                            prop:checked=move || form.with(|f| f.require_build_selector)
                            on:change=move |ev| {
                                form.update(|f| {
                                    f.require_build_selector = event_target_checked(&ev);
                                })
                            }
                        />
                        " Require a Windows build selector"
                    </label>
                    <label class="check">
                        <input
                            type="checkbox"
                            prop:checked=move || form.with(|f| f.mutate)
                            on:change=move |ev| {
                                form.update(|f| f.mutate = event_target_checked(&ev))
                            }
                        />
                        " Mutate: repair fixable workloads instead of rejecting them"
                    </label>
                    <label for="s-exempt">"Exempt namespaces"</label>
                    <input
                        id="s-exempt"
                        type="text"
                        spellcheck="false"
                        placeholder="kube-system, monitoring"
                        prop:value=exempt
                        on:input=on_exempt
                    />
                    <label for="s-disabled">"Disabled rules (rule ids)"</label>
                    <input
                        id="s-disabled"
                        type="text"
                        spellcheck="false"
                        list="rule-ids"
                        prop:value=disabled
                        on:input=on_disabled
                    />
                    <datalist id="rule-ids">
                        {winplace_rules::catalog::RULES
                            .iter()
                            .map(|r| view! { <option value=r.id></option> })
                            .collect_view()}
                    </datalist>
                    <label for="s-pinning">"Build pinning (how fixes pin a Windows build)"</label>
                    <select
                        id="s-pinning"
                        on:change=move |ev| {
                            form.update(|f| {
                                f.build_pinning = match event_target_value(&ev).as_str() {
                                    "exact" => BuildPinning::Exact,
                                    _ => BuildPinning::Range,
                                };
                            })
                        }
                    >
                        <option
                            value="range"
                            selected=move || form.with(|f| f.build_pinning == BuildPinning::Range)
                        >
                            "range: every build that runs the image (node affinity In)"
                        </option>
                        <option
                            value="exact"
                            selected=move || form.with(|f| f.build_pinning == BuildPinning::Exact)
                        >
                            "exact: the image's own build (nodeSelector; OpenShift)"
                        </option>
                    </select>
                    <label for="s-classes">"RuntimeClasses (one per line, build=name)"</label>
                    <textarea
                        id="s-classes"
                        rows="2"
                        spellcheck="false"
                        placeholder="10.0.20348=windows-2022"
                        prop:value=classes
                        on:input=on_classes
                    ></textarea>
                    <p
                        class="validation"
                        role="status"
                        aria-live="polite"
                        data-valid=move || checked.with(|c| c.is_ok()).to_string()
                    >
                        {move || match checked.get() {
                            Ok(_) => "Settings are valid.".to_string(),
                            Err(e) => format!("Invalid settings: {e}"),
                        }}
                    </p>
                </form>
                <section class="manifest" aria-labelledby="manifest-title">
                    <h2 id="manifest-title">"ClusterAdmissionPolicy"</h2>
                    {move || match checked.get() {
                        Ok(settings) => {
                            let text = to_yaml(&manifest(&settings));
                            view! {
                                <pre
                                    class="yaml"
                                    tabindex="0"
                                    aria-label="ClusterAdmissionPolicy manifest"
                                >
                                    {text.clone()}
                                </pre>
                                <CopyButton
                                    text
                                    label="Copy the ClusterAdmissionPolicy manifest".to_string()
                                />
                            }
                                .into_any()
                        }
                        Err(_) => {
                            view! { <p class="muted">"Fix the settings to get the manifest."</p> }
                                .into_any()
                        }
                    }}
                </section>
            </div>
            <section class="admission-policies" aria-labelledby="vap-title">
                <h2 id="vap-title">"In the API server: admission policies"</h2>
                <p>
                    "Without Kubewarden: the rules that need neither the cluster nor a registry as ValidatingAdmissionPolicies, and their fixes as MutatingAdmissionPolicies, for these settings ("
                    <code>"winplace export"</code>"; they can run beside policy.wasm)."
                </p>
                {move || match checked.get() {
                    Ok(settings) => admission_policies(&settings).into_any(),
                    Err(_) => {
                        view! { <p class="muted">"Fix the settings to get the policies."</p> }
                            .into_any()
                    }
                }}
            </section>
        </section>
    }
}

/// The exported policies for `settings`: a download and a copy button for each format, and the
/// validating YAML to read.
fn admission_policies(settings: &Settings) -> impl IntoView + use<> {
    use winplace_rules::export::{self, Naming};
    let vap = export::to_yaml_stream(&export::validating(settings, Naming::Cluster));
    let map = export::to_yaml_stream(&export::mutating(settings, Naming::Cluster));
    view! {
        <p class="vap">
            <a class="download" href=yaml_data_url(&vap) download="winplace-vap.yaml">
                "Download the ValidatingAdmissionPolicies"
            </a>
            " "
            <CopyButton text=vap.clone() label="Copy the ValidatingAdmissionPolicies".to_string() />
        </p>
        <p class="map">
            <a class="download" href=yaml_data_url(&map) download="winplace-map.yaml">
                "Download the MutatingAdmissionPolicies"
            </a>
            " "
            <CopyButton text=map.clone() label="Copy the MutatingAdmissionPolicies".to_string() />
        </p>
        <details>
            <summary>"The ValidatingAdmissionPolicies (YAML)"</summary>
            <pre class="yaml" tabindex="0" aria-label="ValidatingAdmissionPolicies">
                {vap}
            </pre>
        </details>
    }
}

/// A `data:` URL of YAML text, percent-encoded (RFC 3986 unreserved characters kept).
fn yaml_data_url(text: &str) -> String {
    let mut out = String::from("data:application/yaml;charset=utf-8,");
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_form_is_the_default_settings() {
        assert_eq!(Form::default().settings(), Ok(Settings::default()));
    }

    #[test]
    fn taint_lines_become_the_windows_taints_and_back() {
        let form = Form {
            windows_taints: "os=windows:NoSchedule\n\n  dedicated:NoExecute  \n".into(),
            ..Form::default()
        };
        let settings = form.settings().expect("valid");
        let taints: Vec<(&str, Option<&str>, &str)> = settings
            .windows_taints
            .iter()
            .map(|t| (t.key.as_str(), t.value.as_deref(), t.effect.as_str()))
            .collect();
        assert_eq!(
            taints,
            [
                ("os", Some("windows"), "NoSchedule"),
                ("dedicated", None, "NoExecute")
            ]
        );
        // The defaults are written as `kubectl taint` writes them.
        assert_eq!(Form::default().windows_taints, "os=windows:NoSchedule");
        let bad = Form {
            windows_taints: "os=windows:NoSchedule\nos=windows".into(),
            ..Form::default()
        };
        let error = bad.settings().expect_err("no effect");
        assert!(error.starts_with("windowsTaints line 2: "), "{error}");
    }

    /// An edit of the form, and the setting the error must name.
    type Case = (fn(&mut Form), &'static str);

    #[test]
    fn bad_settings_are_reported_by_name() {
        let cases: [Case; 4] = [
            (
                |f| f.supported_builds = "10.0.20348, 2022".into(),
                "supportedBuilds[1]",
            ),
            (
                |f| f.disabled_rules = "no-such-rule".into(),
                "disabledRules[0]",
            ),
            // The rules crate's taint reader refuses the effect itself (as `kubectl taint` does).
            (
                |f| f.windows_taints = "os=windows:Sometimes".into(),
                "windowsTaints line 1: `os=windows:Sometimes`: effect `Sometimes` is not one of",
            ),
            (
                |f| f.runtime_classes = "10.0.20348".into(),
                "runtimeClasses line 1",
            ),
        ];
        for (edit, want) in cases {
            let mut form = Form::default();
            edit(&mut form);
            let err = form
                .settings()
                .and_then(|s| s.validate().map_err(|e| e.to_string()))
                .expect_err(want);
            assert!(err.contains(want), "{err} should name {want}");
        }
    }

    #[test]
    fn the_manifest_follows_the_mutate_box_and_carries_the_settings() {
        for mutate in [false, true] {
            let form = Form {
                mutate,
                exempt_namespaces: "kube-system".into(),
                ..Form::default()
            };
            let m = manifest(&form.settings().expect("valid"));
            assert_eq!(m["kind"], "ClusterAdmissionPolicy");
            assert_eq!(m["apiVersion"], "policies.kubewarden.io/v1");
            assert_eq!(m["spec"]["mutating"], mutate);
            assert_eq!(m["spec"]["settings"]["mutate"], mutate);
            assert_eq!(
                m["spec"]["settings"]["exemptNamespaces"],
                json!(["kube-system"])
            );
            assert!(m["spec"]["settings"].get("imageRules").is_none());
            assert_eq!(m["spec"]["settings"]["buildPinning"], "range");
            let resources: Vec<&str> = m["spec"]["rules"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|r| r["resources"].as_array().into_iter().flatten())
                .filter_map(Value::as_str)
                .collect();
            for kind in [
                "pods",
                "deployments",
                "replicasets",
                "statefulsets",
                "daemonsets",
                "jobs",
                "cronjobs",
                "replicationcontrollers",
            ] {
                assert!(resources.contains(&kind), "{kind}");
            }
            let text = to_yaml(&m);
            assert!(
                text.contains("module: registry://ghcr.io/winplace/policies/winplace:v0.1.0\n"),
                "{text}"
            );
            assert!(text.contains("  - \"10.0.20348\"\n"), "{text}");
        }
    }

    #[test]
    fn the_admission_policies_download_as_percent_encoded_yaml() {
        let url = yaml_data_url("a: \"b c\"\n# é");
        assert_eq!(
            url,
            "data:application/yaml;charset=utf-8,a%3A%20%22b%20c%22%0A%23%20%C3%A9"
        );
    }

    #[test]
    fn build_pinning_goes_into_the_settings() {
        let form = Form {
            build_pinning: BuildPinning::Exact,
            ..Form::default()
        };
        let settings = form.settings().expect("valid");
        assert_eq!(settings.build_pinning, BuildPinning::Exact);
        assert_eq!(
            manifest(&settings)["spec"]["settings"]["buildPinning"],
            "exact"
        );
    }
}
