//! `winplace explain` and the audit's incidents through the built binary: text and JSON, standard input,
//! an unrelated message said plainly, the concrete fix with `--snapshot` context, and `audit --snapshot`
//! listing the incident of a pod in CreateContainerError on a Windows Server 2019 node.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::run;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/incidents")
}

/// Runs `winplace args...` in the data folder with `stdin`.
fn winplace(args: &[&str], stdin: Option<&str>) -> Output {
    run::winplace(&data(), args, stdin)
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{}\nstderr: {}",
            text(out),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn explain_reads_stdin_and_files_in_text_and_json_and_says_plainly_when_nothing_matches() {
    // One pasted line on standard input, the sandbox case of kubernetes-sigs/sig-windows-tools#72.
    let pasted = r#"Warning  FailedCreatePodSandBox  37s  kubelet, w1  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod "kube-flannel-ds-windows-amd64-9tffg": Error response from daemon: hcsshim::CreateComputeSystem e20e: The container operating system does not match the host operating system."#;
    let out = winplace(&["explain"], Some(pasted));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.starts_with("-:1: build-mismatch [pod sandbox: the pause image]"),
        "{t}"
    );
    assert!(
        t.contains("pause (sandbox) image") && t.contains("sandbox_image"),
        "{t}"
    );

    // A describe output as JSON: the pod and node come from its header, the rule is named.
    let out = winplace(&["explain", "--format", "json", "describe.txt"], None);
    assert_eq!(out.status.code(), Some(0));
    let j = json(&out);
    let m = &j["matches"][0];
    assert_eq!(j["matches"].as_array().map(Vec::len), Some(1), "{j}");
    assert_eq!(m["cause"], "build-mismatch");
    assert_eq!(m["sandbox"], false);
    assert_eq!(m["rule"], "windows-build-mismatch");
    assert_eq!(m["objects"]["pod"], "billing/invoice-0");
    assert_eq!(m["objects"]["node"], "aks-win19-0");
    assert_eq!(m["file"], "describe.txt");
    assert_eq!(m["line"], 17);
    for key in ["meaning", "fix", "source"] {
        assert!(m[key].as_str().is_some_and(|s| !s.is_empty()), "{key}");
    }

    // An OOMKilled container (CRLF lines): no Windows cause, exit 1, said in words.
    let out = winplace(&["explain", "oomkilled.txt"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).starts_with("No Windows placement cause in 3 line(s)")
            && text(&out).contains("a feature the node does not declare"),
        "{}",
        text(&out)
    );
    let out = winplace(
        &["explain", "--format", "json", "-"],
        Some("Reason: OOMKilled\n"),
    );
    assert_eq!(json(&out)["matches"], serde_json::json!([]));

    // An unreadable file is an error naming it.
    let out = winplace(&["explain", "missing.log"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.log: cannot read"));
}

#[test]
fn with_a_snapshot_explain_names_the_builds_and_the_tag_that_runs_and_audit_lists_the_incident() {
    // The snapshot is the context: the node runs Windows Server 2019, the image is a 2022 one.
    let out = winplace(
        &[
            "explain",
            "--snapshot",
            "cluster.json",
            "--format",
            "json",
            "describe.txt",
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = &json(&out)["matches"][0];
    assert_eq!(m["objects"]["build"], "10.0.17763");
    assert_eq!(m["objects"]["imageBuild"], "10.0.20348");
    let fix = m["fix"].as_str().unwrap_or("");
    assert!(
        fix.starts_with("Use mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019 (the Windows Server 2019 (10.0.17763) tag of the same image)"),
        "{fix}"
    );

    // The audit of the same snapshot: one build-mismatch incident for the pod, from its status and its
    // Event (counted 12 times, since the event's first timestamp); the unrelated event gives none.
    let out = winplace(
        &["audit", "--snapshot", "cluster.json", "--format", "json"],
        None,
    );
    let j = json(&out);
    let incidents = j["incidents"].as_array().cloned().unwrap_or_default();
    assert_eq!(incidents.len(), 1, "{}", j["incidents"]);
    let i = &incidents[0];
    assert_eq!(i["object"], "Pod/billing/invoice-0");
    assert_eq!(i["workload"], "Pod/billing/invoice-0");
    assert_eq!(i["cause"], "build-mismatch");
    assert_eq!(i["count"], 12);
    assert_eq!(i["since"], "2026-11-25T09:14:03Z");
    assert_eq!(i["rule"], "windows-build-mismatch");
    assert!(
        i["fix"].as_str().is_some_and(|f| f.contains("ltsc2019")),
        "{}",
        i["fix"]
    );
    let workload = j["workloads"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["owner"]["name"] == "invoice-0"))
        .expect("the pod's workload");
    assert_eq!(workload["incidents"][0]["cause"], "build-mismatch");
    let out = winplace(
        &["audit", "--snapshot", "cluster.json", "--format", "text"],
        None,
    );
    let t = text(&out);
    assert!(t.contains("FAILING NOW: 1 incident(s)"), "{t}");
    assert!(
        t.contains("Pod/billing/invoice-0 (Pod/billing/invoice-0): build-mismatch ×12, since 2026-11-25T09:14:03Z"),
        "{t}"
    );
}

#[test]
fn explain_follows_the_settings_build_pinning_and_names_a_bad_setting() {
    // The same describe and snapshot as above: the default range pin, then the settings' exact pin.
    let args = |settings: Option<&'static str>| {
        let mut a = vec![
            "explain",
            "--snapshot",
            "cluster.json",
            "--format",
            "json",
            "describe.txt",
        ];
        if let Some(s) = settings {
            a.extend(["--settings", s]);
        }
        a
    };
    let fix = |out: &Output| {
        json(out)["matches"][0]["fix"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let ranged = winplace(&args(None), None);
    assert_eq!(ranged.status.code(), Some(0));
    assert!(
        fix(&ranged).contains("required node affinity node.kubernetes.io/windows-build In ["),
        "{}",
        fix(&ranged)
    );
    let exact = winplace(&args(Some("exact.yaml")), None);
    assert_eq!(
        exact.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&exact.stderr)
    );
    let f = fix(&exact);
    assert!(
        f.ends_with("pin the workload to that build with the nodeSelector node.kubernetes.io/windows-build: 10.0.17763 (setting buildPinning: exact)."),
        "{f}"
    );
    assert!(!f.contains("node affinity"), "{f}");

    // Without context, the settings still pin exactly (the signature's words, the node's build unnamed).
    let line = "hcs::CreateComputeSystem web: The container operating system does not match the host operating system.";
    let out = winplace(
        &["explain", "--settings", "exact.yaml", "--format", "json"],
        Some(line),
    );
    let f = fix(&out);
    assert!(
        f.contains("with the nodeSelector node.kubernetes.io/windows-build: <the node's build> (setting buildPinning: exact)")
            && !f.contains("required node affinity"),
        "{f}"
    );
    // --platform openshift pins exactly too (its preset), as check does.
    let out = winplace(
        &["explain", "--platform", "openshift", "--format", "json"],
        Some(line),
    );
    assert!(
        fix(&out).contains("(setting buildPinning: exact)"),
        "{}",
        fix(&out)
    );

    // A bad settings file: exit 2, the error names the file, the line and the setting.
    let out = winplace(&["explain", "--settings", "bad-pinning.yaml"], Some(line));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad-pinning.yaml:2:") && err.contains("buildPinning"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "{}", text(&out));
    // A missing one: the same, naming it.
    let out = winplace(&["explain", "--settings", "none.yaml"], Some(line));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("none.yaml"));
}
