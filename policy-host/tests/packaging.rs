//! The policy's packaging agrees with itself: metadata.yml, artifacthub-pkg.yml and the
//! ClusterAdmissionPolicies in deploy/policy/ cover every kind the policy evaluates, with the same rules,
//! the same contextAwareResources and consistent mutation settings.

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::PathBuf;
use winplace_policy_wasm::admission::{CONTEXT_RESOURCES, EVALUATED_KINDS};
use winplace_rules::input::{Limits, parse};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every YAML document of a file, as JSON.
fn yaml(path: &str) -> Vec<Value> {
    let full = root().join(path);
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()));
    let parsed = parse(path, &text, &Limits::default());
    assert!(parsed.errors.is_empty(), "{path}: {:?}", parsed.errors);
    parsed.documents.into_iter().map(|d| d.value).collect()
}

fn metadata() -> Value {
    yaml("policy-wasm/metadata.yml").remove(0)
}

/// The plural resource of each evaluated kind, by API group.
fn resource(kind: &str) -> String {
    format!("{}s", kind.to_lowercase()).replace("classs", "classes")
}

/// `(group, resource, operation)` triples a rules list admits.
fn covered(rules: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for rule in rules.as_array().expect("rules is a list") {
        let strings = |k: &str| -> Vec<String> {
            rule[k]
                .as_array()
                .unwrap_or(&Vec::new())
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        };
        assert_eq!(strings("apiVersions"), ["v1"], "{rule}");
        for g in strings("apiGroups") {
            for r in strings("resources") {
                for o in strings("operations") {
                    out.push((g.clone(), r.clone(), o.clone()));
                }
            }
        }
    }
    out.sort();
    out
}

fn context_resources() -> Value {
    CONTEXT_RESOURCES
        .iter()
        .map(|(v, k)| json!({"apiVersion": v, "kind": k}))
        .collect()
}

#[test]
fn metadata_covers_every_evaluated_kind_for_create_and_update_and_ephemeral_containers() {
    let m = metadata();
    let mut want: Vec<(String, String, String)> = EVALUATED_KINDS
        .iter()
        .flat_map(|(g, k)| {
            ["CREATE", "UPDATE"].map(|o| (g.to_string(), resource(k), o.to_string()))
        })
        .collect();
    // And the ephemeral containers `kubectl debug` adds: an UPDATE of the Pod's subresource, reviewed
    // when they are added (policy-wasm/src/admission/scope.rs).
    want.push((
        String::new(),
        "pods/ephemeralcontainers".into(),
        "UPDATE".into(),
    ));
    want.sort();
    assert_eq!(covered(&m["rules"]), want);
    assert_eq!(m["mutating"], json!(true));
    assert_eq!(m["backgroundAudit"], json!(true));
    assert_eq!(m["executionMode"], json!("kubewarden-wapc"));
    assert_eq!(m["policyType"], json!("kubernetes"));
    assert_eq!(m["contextAwareResources"], context_resources());
    assert!(
        m["minimumKubewardenVersion"]
            .as_str()
            .is_some_and(|v| v >= "1.11.0")
    );
    let a = &m["annotations"];
    for key in [
        "title",
        "version",
        "description",
        "author",
        "url",
        "source",
        "license",
        "ociUrl",
        "severity",
        "category",
    ] {
        let value = a[format!("io.kubewarden.policy.{key}")]
            .as_str()
            .unwrap_or_default();
        assert!(!value.is_empty(), "io.kubewarden.policy.{key}");
    }
    for key in ["displayName", "resources", "keywords"] {
        assert!(
            a[format!("io.artifacthub.{key}")].is_string(),
            "io.artifacthub.{key}"
        );
    }
    assert_eq!(
        a["io.kubewarden.policy.version"],
        json!(env!("CARGO_PKG_VERSION"))
    );
    let resources = a["io.artifacthub.resources"].as_str().unwrap_or_default();
    for (_, kind) in EVALUATED_KINDS {
        assert!(
            resources.split(", ").any(|r| r == *kind),
            "io.artifacthub.resources lacks {kind}"
        );
    }
}

#[test]
fn artifacthub_package_matches_the_metadata() {
    let m = metadata();
    let p = yaml("policy-wasm/artifacthub-pkg.yml").remove(0);
    let a = &m["annotations"];
    assert_eq!(p["version"], a["io.kubewarden.policy.version"]);
    assert_eq!(p["license"], a["io.kubewarden.policy.license"]);
    assert_eq!(p["description"], a["io.kubewarden.policy.description"]);
    assert_eq!(p["annotations"]["kubewarden/mutation"], json!("true"));
    assert_eq!(
        p["annotations"]["kubewarden/resources"],
        a["io.artifacthub.resources"]
    );
    let embedded = |key: &str| {
        // The reader takes objects at the top: wrap the embedded list in one.
        let text = p["annotations"][key].as_str().unwrap_or_default();
        let wrapped: String = text.lines().map(|l| format!("  {l}\n")).collect();
        let parsed = parse(key, &format!("list:\n{wrapped}"), &Limits::default());
        assert!(parsed.errors.is_empty(), "{key}: {:?}", parsed.errors);
        parsed
            .documents
            .into_iter()
            .next()
            .map(|d| d.value["list"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(embedded("kubewarden/rules"), m["rules"]);
    assert_eq!(
        embedded("kubewarden/contextAwareResources"),
        m["contextAwareResources"]
    );
    let image = p["containersImages"][0]["image"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        image,
        format!(
            "{}:v{}",
            a["io.kubewarden.policy.ociUrl"]
                .as_str()
                .unwrap_or_default(),
            p["version"].as_str().unwrap_or_default()
        )
    );
}

#[test]
fn cluster_admission_policies_are_consistent_with_the_metadata() {
    let m = metadata();
    let version = m["annotations"]["io.kubewarden.policy.version"]
        .as_str()
        .unwrap_or_default();
    let oci = m["annotations"]["io.kubewarden.policy.ociUrl"]
        .as_str()
        .unwrap_or_default();
    // (file, mutating, context-aware).
    let rows = [
        ("deploy/policy/validate.yaml", false, false),
        ("deploy/policy/mutate.yaml", true, false),
        ("deploy/policy/cluster-aware.yaml", false, true),
    ];
    for (file, mutating, aware) in rows {
        let docs = yaml(file);
        assert_eq!(docs.len(), 1, "{file}");
        let cap = &docs[0];
        assert_eq!(
            cap["apiVersion"],
            json!("policies.kubewarden.io/v1"),
            "{file}"
        );
        assert_eq!(cap["kind"], json!("ClusterAdmissionPolicy"), "{file}");
        let spec = &cap["spec"];
        assert_eq!(
            spec["module"],
            json!(format!("registry://{oci}:v{version}")),
            "{file}"
        );
        assert_eq!(
            spec["rules"], m["rules"],
            "{file}: rules differ from metadata.yml"
        );
        // policy-server refuses a mutation the policy is not allowed to make: the flag and the setting agree.
        assert_eq!(spec["mutating"], json!(mutating), "{file}");
        assert_eq!(spec["settings"]["mutate"], json!(mutating), "{file}");
        assert_eq!(spec["backgroundAudit"], m["backgroundAudit"], "{file}");
        // The policy asks for the cluster only when told it is granted (`contextAware`).
        assert_eq!(
            spec["settings"]["contextAware"].as_bool().unwrap_or(false),
            aware,
            "{file}: settings contextAware and contextAwareResources go together"
        );
        if aware {
            assert_eq!(
                spec["contextAwareResources"], m["contextAwareResources"],
                "{file}"
            );
        } else {
            assert!(spec["contextAwareResources"].is_null(), "{file}");
        }
        // The settings are valid settings, read as the policy reads them.
        let settings = winplace_rules::Settings::from_json_value(file, &spec["settings"])
            .unwrap_or_else(|e| panic!("{file}: settings: {e}"));
        // A ClusterAdmissionPolicy is granted every host capability (kubewarden-packaging.md, "The grant
        // side"): the examples let the policy read image manifests.
        assert!(settings.registry_aware, "{file}: registryAware");
    }
}

/// The capability paths kwctl 1.35 knows (`CAPABILITY_TREE`, docs/reference/kubewarden-packaging.md,
/// "hostCapabilities"): `(namespace, operation)`.
const KNOWN_CAPABILITIES: [(&str, &str); 11] = [
    ("oci", "v1/verify"),
    ("oci", "v1/manifest_digest"),
    ("oci", "v1/oci_manifest"),
    ("oci", "v1/oci_manifest_config"),
    ("oci", "v2/verify"),
    ("net", "v1/dns_lookup_host"),
    ("crypto", "v1/is_certificate_trusted"),
    ("kubernetes", "list_resources_by_namespace"),
    ("kubernetes", "list_resources_all"),
    ("kubernetes", "get_resource"),
    ("kubernetes", "can_i"),
];

/// Whether `needle` occurs in `hay` on its own: not as the start of a longer known operation
/// (`v1/oci_manifest` inside `v1/oci_manifest_config`), as kwctl's scanner counts it.
fn occurs_alone(hay: &[u8], needle: &str) -> bool {
    let longer: Vec<&str> = KNOWN_CAPABILITIES
        .iter()
        .map(|(_, op)| *op)
        .filter(|op| op.len() > needle.len() && op.starts_with(needle))
        .collect();
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle.as_bytes())
        .any(|(at, _)| !longer.iter().any(|l| hay[at..].starts_with(l.as_bytes())))
}

/// kwctl 1.35 `annotate` warns when the capabilities it finds in the module's data differ from
/// metadata.yml's `hostCapabilities`: the declared list is what the module's strings show, and every
/// host call the policy makes (`policy-wasm/src/lib.rs`) is declared.
#[test]
fn host_capabilities_are_declared_as_kwctl_detects_them() {
    let declared: Vec<String> = metadata()["hostCapabilities"]
        .as_array()
        .expect("metadata.yml declares hostCapabilities")
        .iter()
        .filter_map(|c| c.as_str().map(String::from))
        .collect();
    assert_eq!(
        declared,
        [
            "kubernetes/list_resources_all",
            "kubernetes/get_resource",
            "oci/v1/oci_manifest",
            "oci/v1/oci_manifest_config"
        ]
    );
    let module = winplace_policy_host::built_policy().expect("policy.wasm");
    let mut data = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(&module) {
        if let Ok(wasmparser::Payload::DataSection(reader)) = payload {
            for segment in reader.into_iter().flatten() {
                data.extend_from_slice(segment.data);
            }
        }
    }
    // kwctl compares sets.
    let detected: BTreeSet<String> = KNOWN_CAPABILITIES
        .iter()
        .filter(|(ns, op)| occurs_alone(&data, ns) && occurs_alone(&data, op))
        .map(|(ns, op)| format!("{ns}/{op}"))
        .collect();
    assert_eq!(
        detected,
        declared.into_iter().collect(),
        "what kwctl would detect in policy.wasm"
    );
}

/// The built policy.wasm carries metadata.yml as `kwctl annotate` writes it: JSON in the
/// `io.kubewarden.metadata` custom section, with `protocolVersion` (docs/reference/kubewarden-hosting.md §3).
#[test]
fn the_built_module_is_annotated_with_its_metadata() {
    let module = winplace_policy_host::built_policy().expect("policy.wasm");
    let mut sections = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(&module) {
        if let Ok(wasmparser::Payload::CustomSection(reader)) = payload
            && reader.name() == "io.kubewarden.metadata"
        {
            sections.push(reader.data().to_vec());
        }
    }
    assert_eq!(sections.len(), 1, "one metadata section");
    let embedded: Value = serde_json::from_slice(&sections[0]).expect("the section is JSON");
    let mut expected = metadata();
    expected["protocolVersion"] = json!("v1");
    assert_eq!(embedded, expected);
}

// What `kwctl scaffold artifacthub` needs of metadata.yml and derives from it, and what Artifact Hub
// requires of artifacthub-pkg.yml: the rules of their own sources, written down with those sources in
// docs/reference/kubewarden-packaging.md (policy-evaluator's `policy_artifacthub.rs`, Artifact Hub's
// `internal/pkg/metadata.go`).

/// `io.kubewarden.policy.author` as kwctl reads it: an address list, comma-separated `Name <email>`.
fn kwctl_maintainers(author: &str) -> Result<Vec<Value>, String> {
    author
        .split(',')
        .map(|entry| {
            let entry = entry.trim();
            let (name, rest) = entry
                .split_once('<')
                .ok_or_else(|| format!("`{entry}` is not `Name <email>`"))?;
            let email = rest
                .strip_suffix('>')
                .ok_or_else(|| format!("`{entry}`: no closing `>`"))?;
            let (local, domain) = email
                .split_once('@')
                .ok_or_else(|| format!("`{email}` is not an email address"))?;
            let valid_part = |p: &str| {
                !p.is_empty() && !p.contains(|c: char| c.is_whitespace() || "<>@,".contains(c))
            };
            if name.trim().is_empty()
                || !valid_part(local)
                || !valid_part(domain)
                || !domain.contains('.')
            {
                return Err(format!("`{entry}` is not `Name <email>`"));
            }
            Ok(json!({"name": name.trim(), "email": email}))
        })
        .collect()
}

/// A SemVer 2 version (`MAJOR.MINOR.PATCH`, optional `-pre` and `+build`), as both kwctl (`semver`) and
/// Artifact Hub (`Masterminds/semver`) require.
fn is_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or_default();
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars().all(|c| c.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
        })
}

/// An RFC 3339 timestamp (`2025-11-21T00:00:00Z`, `…T00:00:00.123+02:00`), Artifact Hub's `createdAt`.
fn is_rfc3339(t: &str) -> bool {
    let b = t.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if b.len() < 20 || !digits(0..4) || !digits(5..7) || !digits(8..10) || !digits(11..13) {
        return false;
    }
    if b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return false;
    }
    if !digits(14..16) || !digits(17..19) {
        return false;
    }
    let mut rest = &t[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.chars().take_while(char::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    matches!(rest, "Z" | "z")
        || (rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[3] == b':'
            && rest[1..3].chars().all(|c| c.is_ascii_digit())
            && rest[4..6].chars().all(|c| c.is_ascii_digit()))
}

/// The fields `kwctl scaffold artifacthub` derives from metadata.yml (all but `createdAt`, the time of
/// the run, and `install`, its own prose), or why it would fail.
fn kwctl_scaffold(m: &Value) -> Result<Value, String> {
    let a = &m["annotations"];
    let get = |key: &str| a[key].as_str().map(str::to_string);
    let required = |key: &str| get(key).ok_or_else(|| format!("missing annotation {key}"));
    let version = required("io.kubewarden.policy.version")?;
    if !is_semver(&version) {
        return Err(format!(
            "io.kubewarden.policy.version `{version}` is not SemVer"
        ));
    }
    let oci = required("io.kubewarden.policy.ociUrl")?;
    let keywords: Option<Vec<String>> = get("io.artifacthub.keywords")
        .map(|k| k.split(',').map(|w| w.trim().to_string()).collect());
    if keywords.iter().flatten().any(String::is_empty) {
        return Err("io.artifacthub.keywords has an empty keyword".into());
    }
    let source = get("io.kubewarden.policy.source");
    let links = source.as_ref().map(|s| {
        let mut links = Vec::new();
        if s.starts_with("https://github.com/") {
            links.push(json!({"name": "policy", "url": format!("{s}/releases/download/v{version}/policy.wasm")}));
        }
        links.push(json!({"name": "source", "url": s}));
        links
    });
    let maintainers = get("io.kubewarden.policy.author")
        .map(|author| kwctl_maintainers(&author))
        .transpose()
        .map_err(|e| format!("io.kubewarden.policy.author: {e}"))?;
    let mut annotations = serde_json::Map::new();
    annotations.insert(
        "kubewarden/mutation".into(),
        json!(m["mutating"].as_bool().unwrap_or(false).to_string()),
    );
    if let Some(r) = get("io.artifacthub.resources") {
        annotations.insert("kubewarden/resources".into(), json!(r));
    }
    let mut pkg = json!({
        "version": version,
        "name": required("io.kubewarden.policy.title")?,
        "displayName": required("io.artifacthub.displayName")?,
        "description": required("io.kubewarden.policy.description")?,
        "containersImages": [{"name": "policy", "image": format!("{oci}:v{version}")}],
        "provider": {"name": "kubewarden"},
        "recommendations": [{"url": "https://artifacthub.io/packages/helm/kubewarden/kubewarden-controller"}],
    });
    for (key, value) in [
        (
            "license",
            get("io.kubewarden.policy.license").map(Value::from),
        ),
        ("homeURL", get("io.kubewarden.policy.url").map(Value::from)),
        ("keywords", keywords.map(Value::from)),
        ("links", links.map(Value::from)),
        ("maintainers", maintainers.map(Value::from)),
    ] {
        if let Some(value) = value {
            pkg[key] = value;
        }
    }
    pkg["annotations"] = Value::Object(annotations);
    Ok(pkg)
}

/// Artifact Hub's checks of a Kubewarden package (`ValidatePackageMetadata`): every problem found.
fn artifact_hub_problems(p: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let text = |key: &str| p[key].as_str().unwrap_or_default();
    if !is_semver(text("version")) {
        problems.push("version: SemVer required".to_string());
    }
    for key in ["name", "displayName", "description"] {
        if text(key).is_empty() {
            problems.push(format!("{key} not provided"));
        }
    }
    if !is_rfc3339(text("createdAt")) {
        problems.push("createdAt: RFC 3339 required".to_string());
    }
    for m in p["maintainers"].as_array().into_iter().flatten() {
        if m["email"].as_str().unwrap_or_default().is_empty() {
            problems.push("maintainer email not provided".to_string());
        }
    }
    let images: Vec<&str> = p["containersImages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| i["name"].as_str().unwrap_or_default())
        .collect();
    let mut sorted = images.clone();
    sorted.sort();
    if !(sorted == ["policy"] || sorted == ["policy", "policy-alternative-location"]) {
        problems.push(format!("containersImages: a `policy` image (and at most a `policy-alternative-location`), got {images:?}"));
    }
    problems
}

#[test]
fn kwctl_scaffold_artifacthub_accepts_the_metadata_and_derives_the_package() {
    let m = metadata();
    let want =
        kwctl_scaffold(&m).unwrap_or_else(|e| panic!("kwctl scaffold artifacthub would fail: {e}"));
    let p = yaml("policy-wasm/artifacthub-pkg.yml").remove(0);
    for (key, value) in want.as_object().unwrap() {
        if key == "annotations" {
            for (k, v) in value.as_object().unwrap() {
                assert_eq!(
                    &p["annotations"][k], v,
                    "artifacthub-pkg.yml annotations.{k}"
                );
            }
        } else {
            assert_eq!(&p[key], value, "artifacthub-pkg.yml {key}");
        }
    }
    let image = want["containersImages"][0]["image"].as_str().unwrap();
    assert!(
        p["install"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("kwctl pull {image}")),
        "install names the image"
    );
    // The rules can fail: the author winplace had before, a package without createdAt.
    let mut old = m.clone();
    old["annotations"]["io.kubewarden.policy.author"] = json!("winplace developers");
    assert!(
        kwctl_scaffold(&old)
            .unwrap_err()
            .contains("io.kubewarden.policy.author")
    );
    assert_eq!(
        kwctl_maintainers("A <a@example.com>, B b <b@example.org>").map(|m| m.len()),
        Ok(2)
    );
    assert!(kwctl_maintainers("A <a@example.com>,").is_err());
    assert!(kwctl_maintainers("A <not an email>").is_err());
}

#[test]
fn artifact_hub_accepts_the_package() {
    let p = yaml("policy-wasm/artifacthub-pkg.yml").remove(0);
    assert_eq!(artifact_hub_problems(&p), Vec::<String>::new());
    // And the checks can fail.
    let mut bad = p.clone();
    bad.as_object_mut().unwrap().remove("createdAt");
    bad["version"] = json!("0.1");
    bad["maintainers"] = json!([{"name": "x", "email": ""}]);
    bad["containersImages"][0]["name"] = json!("image");
    assert_eq!(
        artifact_hub_problems(&bad).len(),
        4,
        "{:?}",
        artifact_hub_problems(&bad)
    );
    for (t, ok) in [
        ("2025-11-21T00:00:00Z", true),
        ("2024-07-02T16:13:12.222650791Z", true),
        ("2025-11-21T00:00:00+02:00", true),
        ("2025-11-21", false),
        ("2025-11-21 00:00:00Z", false),
    ] {
        assert_eq!(is_rfc3339(t), ok, "{t}");
    }
}
