//! Windows security-context validation the API server runs on every pod, whatever `spec.os` says
//! (kubernetes-windows-rules.md §2): `runAsUserName` and gMSA options (`validateWindowsSecurityContextOptions`, §2.1) and
//! HostProcess consistency (`validateWindowsHostProcessPod`, §2.2).

use serde_json::Value;

use super::api_validation::present;
use super::{Emitter, RuleId, TemplateCx};
use crate::finding::Fix;
use crate::model::raw_spec::raw_containers;
use crate::path::FieldPath;
use crate::schedule::go_quote;
use crate::schedule::selector::is_dns1123_subdomain;

/// `maxGMSACredentialSpecLength`: 64 KiB, in bytes.
pub(crate) const MAX_GMSA_CREDENTIAL_SPEC_LENGTH: usize = 64 * 1024;
/// `maxRunAsUserNameDomainLength`: a domain must be shorter than this many bytes.
pub(crate) const MAX_RUN_AS_USER_NAME_DOMAIN_LENGTH: usize = 256;
/// `maxRunAsUserNameUserLength`: a user name may have at most this many bytes.
pub(crate) const MAX_RUN_AS_USER_NAME_USER_LENGTH: usize = 104;

/// Runs this family's rules on one pod template.
pub(crate) fn check(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let raw = cx.template.raw;
    let prefix = &cx.template.prefix;
    let mut options: Vec<(FieldPath, &Value)> = Vec::new();
    if let Some(w) = present(raw, &["securityContext", "windowsOptions"]) {
        options.push((prefix.field("securityContext").field("windowsOptions"), w));
    }
    for c in raw_containers(raw) {
        if let Some(w) = present(c.value, &["securityContext", "windowsOptions"]) {
            options.push((
                c.path(prefix)
                    .field("securityContext")
                    .field("windowsOptions"),
                w,
            ));
        }
    }
    for (path, w) in &options {
        windows_options(path, w, out);
    }
    host_process(cx, out);
}

/// `validateWindowsSecurityContextOptions` for one `windowsOptions`, in upstream order.
fn windows_options(path: &FieldPath, w: &Value, out: &mut Emitter<'_>) {
    if let Some(name) = present(w, &["gmsaCredentialSpecName"]).and_then(Value::as_str) {
        let p = path.field("gmsaCredentialSpecName");
        for m in is_dns1123_subdomain(name) {
            let message = format!(
                "the API server rejects this pod: `{p}: Invalid value: {}: {m}`; use the name of the GMSACredentialSpec resource as it is stored (lowercase letters, digits, '-' and '.')",
                go_quote(name)
            );
            out.emit(RuleId::GmsaCredentialSpecInvalid, &p, message, None);
        }
    }
    if let Some(spec) = present(w, &["gmsaCredentialSpec"]).and_then(Value::as_str) {
        let p = path.field("gmsaCredentialSpec");
        if let Some(m) = validate_gmsa_credential_spec(spec) {
            let todo = if spec.is_empty() {
                "remove the empty gmsaCredentialSpec, or give the credential spec's JSON"
            } else {
                "reference the credential spec by name with gmsaCredentialSpecName instead of inlining it"
            };
            let message =
                format!("the API server rejects this pod: `{p}: Invalid value: {m}`; {todo}");
            out.emit(RuleId::GmsaCredentialSpecInvalid, &p, message, None);
        }
    }
    if let Some(user) = present(w, &["runAsUserName"]).and_then(Value::as_str) {
        let p = path.field("runAsUserName");
        for m in validate_run_as_user_name(user) {
            let todo = if user.contains('@') && !user.contains('\\') {
                "the user@domain (UPN) form is not accepted: write the name as DOMAIN\\user"
            } else {
                "write the name as DOMAIN\\user, or a local user such as ContainerUser"
            };
            let message = format!(
                "the API server rejects this pod: `{p}: Invalid value: {}: {m}`; {todo}",
                go_quote(user)
            );
            out.emit(RuleId::RunAsUserNameInvalid, &p, message, None);
        }
    }
}

/// The `gmsaCredentialSpec` checks (§2.1): not empty, at most 64 KiB. `None` = valid.
pub(crate) fn validate_gmsa_credential_spec(spec: &str) -> Option<&'static str> {
    if spec.is_empty() {
        Some("gmsaCredentialSpec cannot be an empty string")
    } else if spec.len() > MAX_GMSA_CREDENTIAL_SPEC_LENGTH {
        Some("gmsaCredentialSpec size must be under 64 KiB")
    } else {
        None
    }
}

/// The `runAsUserName` checks of `validateWindowsSecurityContextOptions` (§2.1), in upstream order, with
/// the upstream messages. Empty result = valid: `CORP\svc` passes, `svc@corp.example.com` fails on `@`.
pub(crate) fn validate_run_as_user_name(name: &str) -> Vec<&'static str> {
    if name.is_empty() {
        return vec!["runAsUserName cannot be an empty string"];
    }
    // Go's [[:cntrl:]] is ASCII only.
    if name.chars().any(|c| c.is_ascii_control()) {
        return vec!["runAsUserName cannot contain control characters"];
    }
    let parts: Vec<&str> = name.split('\\').collect();
    let (has_domain, domain, user) = match parts.as_slice() {
        [user] => (false, "", *user),
        [domain, user] => (true, *domain, *user),
        _ => return vec!["runAsUserName cannot contain more than one backslash"],
    };
    let mut errs = Vec::new();
    if domain.len() >= MAX_RUN_AS_USER_NAME_DOMAIN_LENGTH {
        errs.push("runAsUserName's Domain length must be under 256 characters");
    }
    if has_domain && !(is_netbios_domain(domain) || is_dns_domain(domain)) {
        errs.push("runAsUserName's Domain doesn't match the NetBios nor the DNS format");
    }
    if user.is_empty() {
        errs.push("runAsUserName's User cannot be empty");
    } else if user.len() > MAX_RUN_AS_USER_NAME_USER_LENGTH {
        errs.push("runAsUserName's User length must not be longer than 104 characters");
    }
    if !user.is_empty() && user.chars().all(|c| c == '.' || c == ' ') {
        errs.push("runAsUserName's User cannot contain only periods or spaces");
    }
    if user.chars().any(|c| "\"/\\:;|=,+*?<>@[]".contains(c)) {
        errs.push(
            r#"runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]"#,
        );
    }
    errs
}

/// NetBIOS domain: `^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$` (1–15 characters, counted as Go's regexp
/// counts them: per code point).
fn is_netbios_domain(domain: &str) -> bool {
    const BAD: &str = "\\/:*?\"<>|";
    let mut chars = domain.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if BAD.contains(first) || first == '.' {
        return false;
    }
    let rest: Vec<char> = chars.collect();
    rest.len() <= 14 && rest.iter().all(|c| !BAD.contains(*c))
}

/// DNS domain: dot-separated labels of `[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?`.
fn is_dns_domain(domain: &str) -> bool {
    domain.split('.').all(|label| {
        let b = label.as_bytes();
        match (b.first(), b.last()) {
            (Some(f), Some(l)) => {
                b.len() <= 63
                    && f.is_ascii_alphanumeric()
                    && l.is_ascii_alphanumeric()
                    && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
            }
            _ => false,
        }
    })
}

/// `hostprocess-inconsistent`: `validateWindowsHostProcessPod` (§2.2).
fn host_process(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let raw = cx.template.raw;
    let prefix = &cx.template.prefix;
    let hp = |v: &Value| {
        present(v, &["securityContext", "windowsOptions", "hostProcess"]).and_then(Value::as_bool)
    };
    let pod = hp(raw);
    let mut containers = 0;
    let mut host_process_count = 0;
    for c in raw_containers(raw) {
        containers += 1;
        let own = hp(c.value);
        if let (Some(pod), Some(own)) = (pod, own)
            && pod != own
        {
            let p = c
                .path(prefix)
                .field("securityContext")
                .field("windowsOptions")
                .field("hostProcess");
            let message = format!(
                "the API server rejects this pod: `{p}: Invalid value: {own}: pod hostProcess value must be identical if both are specified, was {pod}`; make the container's hostProcess agree with the pod's, or remove one of them"
            );
            out.emit(RuleId::HostProcessInconsistent, &p, message, None);
        }
        if own.or(pod) == Some(true) {
            host_process_count += 1;
        }
    }
    if host_process_count == 0 {
        return;
    }
    if host_process_count != containers {
        let message = format!(
            "the API server rejects this pod: `{prefix}: Invalid value: \"\": If pod contains any hostProcess containers then all containers must be HostProcess containers`; set windowsOptions.hostProcess: true for every container (init and ephemeral too), or for none"
        );
        out.emit(RuleId::HostProcessInconsistent, prefix, message, None);
    }
    if present(raw, &["hostNetwork"]).and_then(Value::as_bool) != Some(true) {
        let p = prefix.field("hostNetwork");
        let message = format!(
            "the API server rejects this pod: `{p}: Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers`; set hostNetwork: true"
        );
        let fix = Fix {
            description: "set hostNetwork: true".into(),
            patch: vec![
                serde_json::json!({"op": "add", "path": p.to_json_pointer(), "value": true}),
            ]
            .into(),
        };
        out.emit(RuleId::HostProcessInconsistent, &p, message, Some(fix));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_kit::{apply, object, pod, rule_paths, run_template};

    #[test]
    fn run_as_user_name_table() {
        // kubernetes-windows-rules.md §2.1: order, exclusivity of the first three checks, several errors in step 4.
        const CHARS: &str =
            r#"runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]"#;
        let d255 = "a".repeat(255);
        let d256 = "a".repeat(256);
        let u104 = "u".repeat(104);
        let u105 = "u".repeat(105);
        let dns255 = format!(
            "{}.{}.{}.{}",
            "a".repeat(63),
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(63)
        );
        let cases: Vec<(String, Vec<&str>)> = vec![
            ("ContainerUser".into(), vec![]),
            ("CORP\\svc".into(), vec![]),
            ("NT AUTHORITY\\SYSTEM".into(), vec![]),
            ("NT AUTHORITY\\NETWORK SERVICE".into(), vec![]),
            ("corp.example.com\\svc".into(), vec![]),
            ("Corp-1.Example.COM\\svc".into(), vec![]),
            // 1. empty
            ("".into(), vec!["runAsUserName cannot be an empty string"]),
            // 2. control characters (exclusive: the backslashes are not looked at)
            (
                "a\tb".into(),
                vec!["runAsUserName cannot contain control characters"],
            ),
            (
                "a\\b\\c\u{7f}".into(),
                vec!["runAsUserName cannot contain control characters"],
            ),
            // 3. more than one backslash
            (
                "CORP\\team\\svc".into(),
                vec!["runAsUserName cannot contain more than one backslash"],
            ),
            // 4. UPN rejected because of '@'
            ("svc@corp.example.com".into(), vec![CHARS]),
            // empty domain
            (
                "\\user".into(),
                vec!["runAsUserName's Domain doesn't match the NetBios nor the DNS format"],
            ),
            // NetBIOS: 15 characters fine; 16 only if DNS; leading '.' and forbidden chars rejected
            ("ABCDEFGHIJKLMNO\\u".into(), vec![]),
            ("ABCDEFGHIJKLMNOP\\u".into(), vec![]),
            (
                "ABCDEFGH JKLMNOP\\u".into(),
                vec!["runAsUserName's Domain doesn't match the NetBios nor the DNS format"],
            ),
            (
                ".corp\\u".into(),
                vec!["runAsUserName's Domain doesn't match the NetBios nor the DNS format"],
            ),
            (
                "co:rp\\u".into(),
                vec!["runAsUserName's Domain doesn't match the NetBios nor the DNS format"],
            ),
            ("corp_x\\u".into(), vec![]),
            ("-corp\\u".into(), vec![]),
            (
                "-corp.example.com\\u".into(),
                vec!["runAsUserName's Domain doesn't match the NetBios nor the DNS format"],
            ),
            (
                "corp..example.com\\u".into(),
                vec!["runAsUserName's Domain doesn't match the NetBios nor the DNS format"],
            ),
            // domain length: 255 bytes valid (DNS form), 256 rejected
            (format!("{dns255}\\u"), vec![]),
            (
                format!("{d255}\\u"),
                vec!["runAsUserName's Domain doesn't match the NetBios nor the DNS format"],
            ),
            (
                format!("{d256}\\u"),
                vec![
                    "runAsUserName's Domain length must be under 256 characters",
                    "runAsUserName's Domain doesn't match the NetBios nor the DNS format",
                ],
            ),
            (
                format!("{}.a\\u", dns255),
                vec!["runAsUserName's Domain length must be under 256 characters"],
            ),
            // user: empty, 104 ok, 105 rejected, only periods/spaces, forbidden characters
            (
                "CORP\\".into(),
                vec!["runAsUserName's User cannot be empty"],
            ),
            (format!("CORP\\{u104}"), vec![]),
            (u104.clone(), vec![]),
            (
                format!("CORP\\{u105}"),
                vec!["runAsUserName's User length must not be longer than 104 characters"],
            ),
            (
                u105.clone(),
                vec!["runAsUserName's User length must not be longer than 104 characters"],
            ),
            (
                "CORP\\. .".into(),
                vec!["runAsUserName's User cannot contain only periods or spaces"],
            ),
            (
                "...".into(),
                vec!["runAsUserName's User cannot contain only periods or spaces"],
            ),
            ("a b.c".into(), vec![]),
            ("us[er]".into(), vec![CHARS]),
            ("CORP\\a;b".into(), vec![CHARS]),
            // several step-4 errors at once
            (
                format!("{d256}\\{}", "@".repeat(105)),
                vec![
                    "runAsUserName's Domain length must be under 256 characters",
                    "runAsUserName's Domain doesn't match the NetBios nor the DNS format",
                    "runAsUserName's User length must not be longer than 104 characters",
                    CHARS,
                ],
            ),
        ];
        for (name, want) in cases {
            assert_eq!(validate_run_as_user_name(&name), want, "{name:?}");
        }
    }

    #[test]
    fn run_as_user_name_is_checked_everywhere_whatever_the_os() {
        // kubernetes-windows-rules.md §2.1: pod and every container, regardless of spec.os.
        for os in ["", "  os: {name: linux}\n", "  os: {name: windows}\n"] {
            let body = format!(
                "{os}  securityContext: {{windowsOptions: {{runAsUserName: ''}}}}\n  initContainers: [{{name: i, securityContext: {{windowsOptions: {{runAsUserName: 'a\\b\\c'}}}}}}]\n  containers: [{{name: c, securityContext: {{windowsOptions: {{runAsUserName: 'svc@corp'}}}}}}, {{name: d, securityContext: {{windowsOptions: {{runAsUserName: 'CORP\\svc'}}}}}}]\n  ephemeralContainers: [{{name: e, securityContext: {{windowsOptions: {{runAsUserName: '\\u'}}}}}}]\n"
            );
            let findings = run_template(&pod(&body), None, check);
            let want: Vec<(String, String)> = [
                "spec.securityContext.windowsOptions.runAsUserName",
                "spec.initContainers[0].securityContext.windowsOptions.runAsUserName",
                "spec.containers[0].securityContext.windowsOptions.runAsUserName",
                "spec.ephemeralContainers[0].securityContext.windowsOptions.runAsUserName",
            ]
            .iter()
            .map(|p| ("run-as-user-name-invalid".to_string(), p.to_string()))
            .collect();
            assert_eq!(rule_paths(&findings), want, "{os}");
            assert!(
                findings[2].message.contains("DOMAIN\\user"),
                "{}",
                findings[2].message
            );
            assert!(
                findings[0]
                    .message
                    .contains("runAsUserName cannot be an empty string")
            );
        }
    }

    #[test]
    fn gmsa_table() {
        // kubernetes-windows-rules.md §2.1: name a DNS-1123 subdomain; spec not empty, at most 65536 bytes.
        let at_limit = "x".repeat(65536);
        let over = "x".repeat(65537);
        let cases: Vec<(String, Vec<&str>)> = vec![
            ("gmsaCredentialSpecName: webapp1-gmsa".into(), vec![]),
            (
                "gmsaCredentialSpecName: WebApp1_gMSA".into(),
                vec!["gmsaCredentialSpecName"],
            ),
            ("gmsaCredentialSpec: ''".into(), vec!["gmsaCredentialSpec"]),
            (format!("gmsaCredentialSpec: {at_limit}"), vec![]),
            (
                format!("gmsaCredentialSpec: {over}"),
                vec!["gmsaCredentialSpec"],
            ),
        ];
        for (opt, want) in cases {
            let body = format!(
                "  containers: [{{name: c, securityContext: {{windowsOptions: {{{opt}}}}}}}]\n"
            );
            let findings = run_template(&pod(&body), None, check);
            let got: Vec<String> = findings
                .iter()
                .map(|f| {
                    assert_eq!(f.rule, "gmsa-credential-spec-invalid");
                    f.path.rsplit('.').next().unwrap_or("").to_string()
                })
                .collect();
            assert_eq!(got, want, "{}", &opt[..opt.len().min(40)]);
        }
        assert_eq!(
            validate_gmsa_credential_spec(""),
            Some("gmsaCredentialSpec cannot be an empty string")
        );
        assert_eq!(
            validate_gmsa_credential_spec(&over),
            Some("gmsaCredentialSpec size must be under 64 KiB")
        );
    }

    #[test]
    fn host_process_table() {
        // kubernetes-windows-rules.md §2.2: (spec body, expected paths).
        let cases: &[(&str, &[&str])] = &[
            // Pod-level hostProcess, no hostNetwork.
            (
                "  securityContext: {windowsOptions: {hostProcess: true}}\n  containers: [{name: c}]\n",
                &["spec.hostNetwork"],
            ),
            (
                "  hostNetwork: true\n  securityContext: {windowsOptions: {hostProcess: true}}\n  containers: [{name: c}]\n",
                &[],
            ),
            // Container differs from pod: mismatch, and not all containers are HostProcess.
            (
                "  hostNetwork: true\n  securityContext: {windowsOptions: {hostProcess: true}}\n  containers: [{name: c}, {name: d, securityContext: {windowsOptions: {hostProcess: false}}}]\n",
                &[
                    "spec.containers[1].securityContext.windowsOptions.hostProcess",
                    "spec",
                ],
            ),
            // Only one container is HostProcess (init counts too).
            (
                "  hostNetwork: true\n  initContainers: [{name: i}]\n  containers: [{name: c, securityContext: {windowsOptions: {hostProcess: true}}}]\n",
                &["spec"],
            ),
            // Pod false, container true: mismatch; all (one) containers HostProcess; hostNetwork missing.
            (
                "  securityContext: {windowsOptions: {hostProcess: false}}\n  containers: [{name: c, securityContext: {windowsOptions: {hostProcess: true}}}]\n",
                &[
                    "spec.containers[0].securityContext.windowsOptions.hostProcess",
                    "spec.hostNetwork",
                ],
            ),
            // No HostProcess at all.
            (
                "  securityContext: {windowsOptions: {hostProcess: false}}\n  containers: [{name: c}]\n",
                &[],
            ),
            ("  containers: [{name: c}]\n", &[]),
        ];
        for (body, want) in cases {
            let got = rule_paths(&run_template(&pod(body), None, check));
            let want: Vec<(String, String)> = want
                .iter()
                .map(|p| ("hostprocess-inconsistent".to_string(), p.to_string()))
                .collect();
            assert_eq!(got, want, "{body}");
        }
    }

    #[test]
    fn host_network_fix_applies() {
        let text = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n      securityContext: {windowsOptions: {hostProcess: true}}\n      containers: [{name: c}]\n";
        let findings = run_template(text, None, check);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].path, "spec.template.spec.hostNetwork");
        assert!(
            findings[0]
                .message
                .contains("hostNetwork must be true if pod contains any hostProcess containers")
        );
        let mut value = object(text).value;
        apply(&mut value, findings[0].fix.as_ref().expect("fix"));
        assert_eq!(value["spec"]["template"]["spec"]["hostNetwork"], true);
        let fixed = serde_json::to_string(&value).expect("json");
        assert!(run_template(&fixed, None, check).is_empty());
    }
}
