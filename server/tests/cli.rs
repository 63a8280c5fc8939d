//! `winplace check` and `winplace rules` through the built binary: the corpus, exit codes, standard input,
//! directory walking, `--fix`, SARIF, `--platform` on every command, and the text report (snapshots in `tests/snapshots/`; set
//! `UPDATE_SNAPSHOTS=1` to rewrite them after a deliberate change, then review the diff).

use crate::common::corpus;
use crate::common::http;
use crate::common::run;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use corpus::{Case, compare, got_from_json};
use serde_json::Value;

use run::winplace;

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{}\nstderr: {}",
            stdout(out),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `check --format json` arguments for a case, run in its folder.
fn case_args(case: &Case) -> Vec<&'static str> {
    let mut args = vec!["check", "--format", "json", "input.yaml"];
    if case.cluster.is_some() {
        args.extend(["--cluster", "cluster.yaml"]);
    }
    if case.settings_text.is_some() {
        args.extend(["--settings", "settings.yaml"]);
    }
    // `check` reads the retirement calendar at today unless told; the corpus must not change with the
    // clock, so a case that sets no `lifecycle.date` is checked at the day the calendar was read.
    let dated = case.settings_text.as_deref().is_some_and(|t| {
        winplace_rules::Settings::from_text("settings.yaml", t)
            .is_ok_and(|s| s.lifecycle.date.is_some())
    });
    if !dated {
        args.extend(["--on", "2026-11-25"]);
    }
    args
}

fn cases() -> Vec<Case> {
    corpus::cases()
        .into_iter()
        .map(|c| c.expect("readable corpus case"))
        .collect()
}

#[test]
fn every_corpus_case_through_the_binary() {
    let cases = cases();
    assert!(cases.len() >= 29, "only {} corpus cases", cases.len());
    let mut report = Vec::new();
    for case in &cases {
        let out = winplace(&case.dir, &case_args(case), None);
        let value = json(&out);
        let got = got_from_json(&value);
        let lines: Vec<u32> = value["parse_errors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["file"] == "input.yaml")
            .filter_map(|e| e["line"].as_u64())
            .map(|l| l as u32)
            .collect();
        let mut diffs = compare(case, &got, &lines);
        // Exit code: 2 for unparsable input, else 1 exactly when an error was reported.
        let want = if !case.parse_error_lines.is_empty() {
            2
        } else if got.iter().any(|g| g.severity == "error") {
            1
        } else {
            0
        };
        if code(&out) != want {
            diffs.push(format!("  exit code {}, expected {want}", code(&out)));
        }
        if !diffs.is_empty() {
            report.push(format!("{}:\n{}", case.name, diffs.join("\n")));
        }
    }
    assert!(
        report.is_empty(),
        "{} of {} corpus cases differ through `winplace check`:\n{}",
        report.len(),
        cases.len(),
        report.join("\n")
    );
}

/// Every case with a `fixed.yaml`: `winplace check --fix` on a copy of its input writes exactly that text.
#[test]
fn corpus_fixed_files_through_the_binary() {
    let mut report = Vec::new();
    let mut checked = 0;
    for case in cases() {
        let Some(fixed) = &case.fixed else {
            continue;
        };
        checked += 1;
        let dir = tempfile::tempdir().expect("tempdir");
        for file in ["input.yaml", "cluster.yaml", "settings.yaml"] {
            if let Ok(text) = std::fs::read(case.dir.join(file)) {
                std::fs::write(dir.path().join(file), text).expect("copy");
            }
        }
        let mut args = case_args(&case);
        args.push("--fix");
        let out = winplace(dir.path(), &args, None);
        let written = std::fs::read_to_string(dir.path().join("input.yaml")).expect("input.yaml");
        if &written != fixed {
            report.push(format!(
                "{} (exit {}): `check --fix` wrote\n{written}\nfixed.yaml has\n{fixed}",
                case.name,
                code(&out)
            ));
        }
    }
    assert!(
        checked >= 2,
        "only {checked} corpus cases have a fixed.yaml"
    );
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// A file with nothing to check is reported as such (`not-checked`, info) in every format, so that it does
/// not look like a clean one; files given as `--cluster` context never are.
#[test]
fn a_file_with_nothing_to_check_says_so_in_every_format() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n";
    let nodes =
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: l1\n  labels: {kubernetes.io/os: linux}\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector: {kubernetes.io/os: linux}\n  containers: [{name: c, image: nginx:1.27}]\n";
    for (name, text) in [
        ("config.yaml", config),
        ("nodes.yaml", nodes),
        ("pod.yaml", pod),
    ] {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    // JSON: one info on the ConfigMap's file; the Node file and the clean pod are checked; exit 0.
    let out = winplace(
        dir.path(),
        &[
            "check",
            "--format",
            "json",
            "config.yaml",
            "nodes.yaml",
            "pod.yaml",
        ],
        None,
    );
    assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stderr));
    let value = json(&out);
    let notes: Vec<&Value> = value["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["rule"] == "not-checked")
        .collect();
    assert_eq!(notes.len(), 1, "{value}");
    assert_eq!(notes[0]["file"], "config.yaml");
    assert_eq!(notes[0]["severity"], "info");
    assert_eq!(notes[0]["object"]["kind"], "ConfigMap");
    assert_eq!(value["summary"]["infos"], 1);
    // Text: the note is printed with its file and line.
    let text = stdout(&winplace(
        dir.path(),
        &["check", "--format", "text", "config.yaml"],
        None,
    ));
    assert!(
        text.contains("config.yaml:1: info not-checked: Nothing in this file was checked"),
        "{text}"
    );
    // SARIF: a result at level "note".
    let sarif: Value = serde_json::from_str(&stdout(&winplace(
        dir.path(),
        &["check", "--format", "sarif", "config.yaml"],
        None,
    )))
    .expect("SARIF is JSON");
    let results = sarif["runs"][0]["results"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "not-checked" && r["level"] == "note"),
        "{sarif}"
    );
    // Context files are not inputs: a ConfigMap in --cluster is never reported.
    let out = winplace(
        dir.path(),
        &[
            "check",
            "--format",
            "json",
            "--cluster",
            "config.yaml",
            "pod.yaml",
        ],
        None,
    );
    assert!(!stdout(&out).contains("not-checked"), "{}", stdout(&out));
}

/// A Windows Deployment that is placed right but does not pin a build: warnings only.
const WARNINGS_ONLY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w, namespace: t}\nspec:\n  selector: {matchLabels: {app: w}}\n  template:\n    metadata: {labels: {app: w}}\n    spec:\n      nodeSelector: {kubernetes.io/os: windows}\n      tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]\n      containers: [{name: c, image: mcr.microsoft.com/windows/servercore:ltsc2022}]\n";

fn case(name: &str) -> Case {
    cases()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("corpus case {name}"))
}

#[test]
fn exit_codes_follow_fail_on() {
    let clean = case("runtimeclass-pins-placement");
    let error = case("windows-deployment-unpinned");
    let broken = case("yaml-parse-error");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("input.yaml"), WARNINGS_ONLY).expect("write");
    let warned = json(&winplace(
        dir.path(),
        &["check", "--format", "json", "input.yaml"],
        None,
    ));
    assert!(
        warned["summary"]["warnings"].as_u64() > Some(0) && warned["summary"]["errors"] == 0,
        "{warned}"
    );
    // (folder, extra args, exit code)
    let rows: [(&Path, &[&str], i32); 7] = [
        (&clean.dir, &[], 0),
        (&clean.dir, &["--fail-on", "warning"], 0),
        (dir.path(), &[], 0),
        (dir.path(), &["--fail-on", "warning"], 1),
        (&error.dir, &[], 1),
        (&broken.dir, &[], 2),
        (&clean.dir, &["--fail-on", "sometimes"], 2),
    ];
    for (folder, extra, want) in rows {
        let mut args = vec!["check", "input.yaml"];
        args.extend_from_slice(extra);
        let out = winplace(folder, &args, None);
        assert_eq!(
            code(&out),
            want,
            "{} {extra:?}:\n{}{}",
            folder.display(),
            stdout(&out),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let usage: [&[&str]; 3] = [
        &["check"],
        &["check", "missing.yaml"],
        &["check", "--format", "xml", "-"],
    ];
    for args in usage {
        assert_eq!(code(&winplace(dir.path(), args, Some(""))), 2, "{args:?}");
    }
}

#[test]
fn bad_settings_name_the_file_and_setting() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("s.yaml"),
        "supportedBuilds:\n- 10.0.20348\n- eleven\n",
    )
    .expect("write");
    let out = winplace(
        dir.path(),
        &["check", "--settings", "s.yaml", "--format", "json", "-"],
        Some(""),
    );
    assert_eq!(code(&out), 2);
    let errors = json(&out)["parse_errors"].clone();
    assert_eq!(errors[0]["file"], "s.yaml");
    assert_eq!(errors[0]["line"], 3);
    let message = errors[0]["message"].as_str().unwrap_or("");
    assert!(message.contains("supportedBuilds[1]"), "{message}");
}

/// The rule ids of a JSON report's findings: `check`'s `findings`, or `audit`'s nodes' findings.
fn rule_ids(report: &Value) -> Vec<String> {
    let check = report["findings"].as_array().into_iter().flatten();
    let audit = report["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|n| n["findings"].as_array().into_iter().flatten());
    check
        .chain(audit)
        .filter_map(|f| f["rule"].as_str().map(str::to_string))
        .collect()
}

/// `winplace serve` with `args` on a free port until it is ready: the JSON of `GET path`.
fn served(args: &[&str], path: &str) -> Value {
    use std::io::{BufRead, BufReader};
    let guard = std::time::Duration::from_secs(60);
    let mut child = Command::new(env!("CARGO_BIN_EXE_winplace"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .current_dir(server_dir())
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .stderr(Stdio::piped())
        .spawn()
        .expect("the winplace binary runs");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    // The first line that names the address; the rest is drained, so that the server never writes to a
    // closed pipe.
    let addr = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| Some(line.split("serving on http://").nth(1)?.trim().to_string()));
    std::thread::spawn(move || lines.for_each(drop));
    let answer = addr.as_ref().map(|addr| {
        // Ready once the snapshot is audited (a bounded wait for the audit, not a sleep for time to pass).
        let start = std::time::Instant::now();
        while http::get(addr, "/readyz", guard).0 != 200 && start.elapsed() < guard {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        http::get(addr, path, guard)
    });
    let _ = child.kill();
    let _ = child.wait();
    let Some((200, answer)) = answer else {
        panic!("the server did not answer {path}: {answer:?}")
    };
    let body = http::body(&answer);
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {body}"))
}

fn server_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every command that runs the rules takes `--platform` (one `SettingsArgs`), with the same effect: EKS
/// supports Windows Server 2019 (docs/reference/platforms.md §1.2), so the demo cluster's 2019 nodes are
/// unsupported generically and not on EKS; EKS taints no Windows node (§1.3), so an untolerating Windows
/// app is kept off no node. An unknown platform is a usage error everywhere.
#[test]
fn every_command_takes_platform() {
    let dir = server_dir();
    let infra = dir.join("tests/infra");
    let unsupported = "windows-node-unsupported-version".to_string();
    for (platform, generic) in [("generic", true), ("eks", false)] {
        let check = json(&winplace(
            &dir,
            &[
                "check",
                "demo/cluster.yaml",
                "--platform",
                platform,
                "--format",
                "json",
            ],
            None,
        ));
        assert_eq!(
            rule_ids(&check).contains(&unsupported),
            generic,
            "check {platform}"
        );
        let audit = json(&winplace(
            &dir,
            &[
                "audit",
                "--snapshot",
                "demo/cluster.yaml",
                "--platform",
                platform,
                "--format",
                "json",
            ],
            None,
        ));
        assert_eq!(
            rule_ids(&audit).contains(&unsupported),
            generic,
            "audit {platform}"
        );
        // The EKS example cluster loses its Windows node group (as in tests/what_if.rs).
        let plan =
            "what-if manifests.yaml --cluster eksctl-windows-2022.yaml --remove-pool windows-ng";
        let args: Vec<&str> = plan.split(' ').chain(["--platform", platform]).collect();
        let what_if = json(&winplace(
            &infra,
            &[&args[..], &["--format", "json"]].concat(),
            None,
        ));
        let iis = what_if["changes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["object"] == "Deployment/default/iis-2022")
            .expect("iis-2022 changes");
        let untolerated = iis["after"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r == "windows-pod-without-toleration");
        assert_eq!(untolerated, generic, "what-if {platform}: {iis}");
        if platform == "eks" {
            // The server audits the snapshot as `audit` does.
            let summary = served(
                &["--snapshot", "demo/cluster.yaml", "--platform", platform],
                "/api/summary",
            );
            assert_eq!(summary["summary"]["findings"], audit["summary"]["findings"]);
        }
    }
    for args in [
        &["check", "demo/cluster.yaml"][..],
        &["audit", "--snapshot", "demo/cluster.yaml"],
        &["what-if", "--snapshot", "demo/cluster.yaml"],
        &["serve", "--snapshot", "demo/cluster.yaml"],
    ] {
        let out = winplace(&dir, &[args, &["--platform", "k3s"]].concat(), None);
        assert_eq!(code(&out), 2, "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--platform"), "{args:?}: {stderr}");
    }
}

#[test]
fn standard_input_gives_the_same_findings_as_the_file() {
    let case = case("toleration-case-mismatch");
    let from_file = json(&winplace(
        &case.dir,
        &["check", "--format", "json", "input.yaml"],
        None,
    ));
    let from_stdin = json(&winplace(
        &case.dir,
        &["check", "--format", "json", "-"],
        Some(&case.input),
    ));
    let strip = |v: &Value| {
        let mut v = v.clone();
        for f in v["findings"].as_array_mut().into_iter().flatten() {
            f["file"] = Value::Null;
        }
        v
    };
    assert_eq!(strip(&from_file), strip(&from_stdin));
    for f in from_stdin["findings"].as_array().into_iter().flatten() {
        assert_eq!(f["file"], "<stdin>");
    }
}

#[test]
fn directories_are_walked_in_sorted_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Each manifest is broken, so each read file shows up as a parse error naming it.
    for name in [
        "m/b.yaml",
        "m/a.yml",
        "m/sub/c.json",
        "m/notes.txt",
        "m/README.md",
    ] {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, "kind: [oops\n").expect("write");
    }
    let out = winplace(dir.path(), &["check", "--format", "json", "m"], None);
    assert_eq!(code(&out), 2);
    let files: Vec<String> = json(&out)["parse_errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["file"].as_str().map(str::to_string))
        .collect();
    assert_eq!(files, ["m/a.yml", "m/b.yaml", "m/sub/c.json"]);
}

/// A Windows Deployment missing its selector and toleration, and an untouched document with comments.
const FIXABLE: &str = "# web tier\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # keep me\n  namespace: apps\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: mcr.microsoft.com/windows/servercore:ltsc2022 # pinned tag\n---\n# config, untouched\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}   # odd spacing\ndata:\n  a: \"1\"\n";

#[test]
fn fix_rewrites_only_what_it_must() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let clean = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n";
    let broken = format!("{FIXABLE}---\nkind: [oops\n");
    std::fs::write(root.join("fixable.yaml"), FIXABLE).expect("write");
    std::fs::write(root.join("clean.yaml"), clean).expect("write");
    std::fs::write(root.join("broken.yaml"), &broken).expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            root.join("fixable.yaml"),
            std::fs::Permissions::from_mode(0o600),
        )
        .expect("chmod");
    }

    // A parse error anywhere: that file is not touched, and the exit code is 2.
    let out = winplace(root, &["check", "--fix", "broken.yaml"], None);
    assert_eq!(code(&out), 2);
    assert_eq!(
        std::fs::read_to_string(root.join("broken.yaml")).expect("read"),
        broken
    );

    let out = winplace(
        root,
        &[
            "check",
            "--fix",
            "--format",
            "json",
            "clean.yaml",
            "fixable.yaml",
        ],
        None,
    );
    let report = json(&out);
    assert_eq!(
        std::fs::read_to_string(root.join("clean.yaml")).expect("read"),
        clean
    );
    let fixed = std::fs::read_to_string(root.join("fixable.yaml")).expect("read");
    assert_ne!(fixed, FIXABLE, "the fixable file was rewritten");
    // The untouched document keeps its comments and layout; the changed one its comments.
    assert!(
        fixed.ends_with("---\n# config, untouched\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}   # odd spacing\ndata:\n  a: \"1\"\n"),
        "{fixed}"
    );
    assert!(fixed.starts_with("# web tier\n"), "{fixed}");
    assert!(fixed.contains("  name: web # keep me\n"), "{fixed}");
    // The report is about the repaired file: no fixable error is left.
    for f in report["findings"].as_array().into_iter().flatten() {
        assert!(
            f["severity"] != "error" || f["fix"].is_null(),
            "still fixable after --fix: {f}"
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(root.join("fixable.yaml"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let mut names: Vec<String> = std::fs::read_dir(root)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["broken.yaml", "clean.yaml", "fixable.yaml"],
        "no temporary files left"
    );

    // With `-`, the repaired manifests go to standard output and the report to standard error.
    let out = winplace(root, &["check", "--fix", "-"], Some(FIXABLE));
    assert_eq!(stdout(&out), fixed);
    assert!(String::from_utf8_lossy(&out.stderr).contains("in 1 file"));
}

/// Issue 25's check: an ltsc2022 Deployment with no build selector, fixed with no context, gets required
/// node affinity `In` with both 10.0.20348 and 10.0.26100 and no build in its nodeSelector; with
/// `--platform openshift` it is pinned to exactly 10.0.20348.
#[test]
fn fix_pins_the_range_or_exactly_on_openshift() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../corpus/windows-deployment-unpinned/input.yaml"),
    )
    .expect("corpus input");
    let fixed = |extra: &[&str]| -> Value {
        let mut args = vec!["check", "--fix", "-"];
        args.extend(extra);
        let out = winplace(dir.path(), &args, Some(&input));
        assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stderr));
        let parsed = winplace_rules::input::parse(
            "fixed.yaml",
            &stdout(&out),
            &winplace_rules::input::Limits::default(),
        );
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        parsed.documents[0].value["spec"]["template"]["spec"].clone()
    };
    let range = fixed(&[]);
    assert_eq!(
        range["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"],
        serde_json::json!([{"matchExpressions": [{"key": "node.kubernetes.io/windows-build",
            "operator": "In", "values": ["10.0.20348", "10.0.26100"]}]}])
    );
    assert_eq!(
        range["nodeSelector"],
        serde_json::json!({"kubernetes.io/os": "windows"})
    );
    let exact = fixed(&["--platform", "openshift"]);
    assert_eq!(
        exact["nodeSelector"],
        serde_json::json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"})
    );
    assert!(exact.get("affinity").is_none(), "{exact}");
}

/// `--fix` through a symbolic link, on a read-only file, and on a directory with nothing to check: the
/// link's target is fixed and the link kept, the read-only file is left alone and the summary and exit
/// code say so, and an empty directory is an error rather than a clean "0 files".
#[cfg(unix)]
#[test]
fn fix_follows_links_refuses_read_only_files_and_tells_the_truth() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("real")).expect("mkdir");
    std::fs::create_dir_all(root.join("checked")).expect("mkdir");
    std::fs::create_dir_all(root.join("empty")).expect("mkdir");
    std::fs::write(root.join("real/web.yaml"), FIXABLE).expect("write");
    std::os::unix::fs::symlink("../real/web.yaml", root.join("checked/web.yaml")).expect("link");

    let out = winplace(root, &["check", "--fix", "checked"], None);
    let text = stdout(&out);
    assert!(
        text.contains("in 1 file"),
        "the linked file is checked:\n{text}"
    );
    assert!(
        std::fs::symlink_metadata(root.join("checked/web.yaml"))
            .expect("meta")
            .file_type()
            .is_symlink(),
        "the link stays a link"
    );
    let fixed = std::fs::read_to_string(root.join("real/web.yaml")).expect("read");
    assert_ne!(fixed, FIXABLE, "the link's target is fixed");
    assert_eq!(code(&out), 0, "{text}");

    std::fs::write(root.join("ro.yaml"), FIXABLE).expect("write");
    std::fs::set_permissions(root.join("ro.yaml"), std::fs::Permissions::from_mode(0o444))
        .expect("chmod");
    let out = winplace(root, &["check", "--fix", "ro.yaml"], None);
    let text = stdout(&out);
    assert_eq!(code(&out), 2, "{text}");
    assert_eq!(
        std::fs::read_to_string(root.join("ro.yaml")).expect("read"),
        FIXABLE
    );
    assert!(text.contains("read-only"), "{text}");
    assert!(text.contains("1 repaired file not written"), "{text}");
    // The errors the file still holds are counted, not those of the unwritten repair.
    assert!(!text.contains("\n0 errors"), "{text}");

    let out = winplace(root, &["check", "empty"], None);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("no manifest to check"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn sarif_has_the_shape_code_scanning_needs() {
    let case = case("windows-deployment-unpinned");
    let findings = json(&winplace(
        &case.dir,
        &["check", "--format", "json", "input.yaml"],
        None,
    ));
    let sarif = json(&winplace(
        &case.dir,
        &["check", "--format", "sarif", "input.yaml"],
        None,
    ));
    assert_eq!(sarif["version"], "2.1.0");
    assert!(
        sarif["$schema"]
            .as_str()
            .is_some_and(|s| s.contains("sarif-2.1.0"))
    );
    let run = &sarif["runs"][0];
    assert_eq!(sarif["runs"].as_array().map(Vec::len), Some(1));
    // Relative paths resolve against the directory the command ran in, as a file:// URI.
    let root = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap_or_default();
    assert!(
        root.starts_with("file:///") && root.ends_with('/'),
        "{root}"
    );
    let dir = case.dir.canonicalize().unwrap_or(case.dir.clone());
    assert!(
        root.trim_end_matches('/')
            .ends_with(&*dir.file_name().unwrap().to_string_lossy()),
        "{root}"
    );
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "winplace");
    assert!(
        driver["informationUri"]
            .as_str()
            .is_some_and(|u| u.starts_with("https://"))
    );
    let rules = driver["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), winplace_rules::catalog::RULES.len());
    for r in rules {
        assert!(r["id"].is_string(), "{r}");
        assert!(r["shortDescription"]["text"].is_string(), "{r}");
        assert!(
            r["helpUri"].as_str().is_some_and(|u| u.ends_with(".md")),
            "{r}"
        );
        let level = r["defaultConfiguration"]["level"].as_str().unwrap_or("");
        assert!(["error", "warning", "note"].contains(&level), "{r}");
    }
    let results = run["results"].as_array().expect("results");
    assert_eq!(
        results.len(),
        findings["findings"].as_array().map_or(0, Vec::len)
    );
    assert!(!results.is_empty(), "the case has findings");
    for r in results {
        assert!(r["ruleId"].is_string());
        assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap_or("")));
        assert!(r["message"]["text"].as_str().is_some_and(|t| !t.is_empty()));
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "input.yaml");
        assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        assert!(
            loc["region"]["startLine"].as_u64().is_some_and(|l| l >= 1),
            "{r}"
        );
    }
}

/// Compares `actual` with `tests/snapshots/<name>`, or rewrites it with `UPDATE_SNAPSHOTS=1`.
fn snapshot(name: &str, actual: &str) {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "snapshots", name]
        .iter()
        .collect();
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, actual).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_SNAPSHOTS=1 to create it)\nactual:\n{actual}",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{} differs (UPDATE_SNAPSHOTS=1 to accept):\n--- expected\n{expected}--- actual\n{actual}",
        path.display()
    );
}

#[test]
fn text_report_snapshots() {
    for name in [
        "yaml-parse-error",
        "toleration-case-mismatch",
        "windows-deployment-unpinned",
    ] {
        let case = case(name);
        let out = winplace(&case.dir, &["check", "input.yaml"], None);
        let text = stdout(&out);
        assert!(!text.contains('\u{1b}'), "no color when not on a terminal");
        snapshot(&format!("check-{name}.txt"), &text);
    }
}

#[test]
fn rules_lists_the_catalogue() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = stdout(&winplace(dir.path(), &["rules"], None));
    let catalog = winplace_rules::catalog::RULES;
    // The table is the catalogue, row for row in its order, each cell in the column its header starts:
    // derived from the declarations, not a second list kept by hand.
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let columns: Vec<usize> = ["ID", "SEVERITY", "FAMILY", "TITLE"]
        .iter()
        .map(|h| {
            header
                .find(h)
                .unwrap_or_else(|| panic!("no {h} in {header:?}"))
        })
        .collect();
    assert_eq!(columns[0], 0, "{header:?}");
    let rows: Vec<Vec<&str>> = lines
        .map(|line| {
            let cell = |i: usize| {
                let end = columns.get(i + 1).copied().unwrap_or(line.len());
                let cell = line.get(columns[i]..end).unwrap_or_default();
                assert!(
                    i == 3 || cell.ends_with("  "),
                    "a cell overruns its column in {line:?}"
                );
                cell.trim_end()
            };
            (0..4).map(cell).collect()
        })
        .collect();
    let want: Vec<Vec<&str>> = catalog
        .iter()
        .map(|r| vec![r.id, r.severity.as_str(), r.family.as_str(), r.title])
        .collect();
    assert_eq!(rows, want, "winplace rules:\n{text}");
    let out = winplace(dir.path(), &["rules", "--format", "json"], None);
    assert_eq!(code(&out), 0);
    let rows = json(&out);
    assert_eq!(rows.as_array().map(Vec::len), Some(catalog.len()));
    assert_eq!(rows[0]["id"], catalog[0].id);
    assert_eq!(rows[0]["family"], catalog[0].family.as_str());
}

/// Issue 29.2: every input is read through the 64 MiB cap, whatever it is: a device that never ends
/// (`/dev/zero`, by name or as standard input) is refused with the file named, exit 2, not read for ever.
#[cfg(target_os = "linux")]
#[test]
fn endless_inputs_are_cut_at_the_input_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let by_name = winplace(
        dir.path(),
        &["check", "--format", "json", "/dev/zero"],
        None,
    );
    assert_eq!(
        code(&by_name),
        2,
        "{}",
        String::from_utf8_lossy(&by_name.stderr)
    );
    let report = json(&by_name);
    let error = &report["parse_errors"][0];
    assert_eq!(error["file"], "/dev/zero", "{report}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("larger than the 64 MiB limit")),
        "{report}"
    );
    let piped = Command::new(env!("CARGO_BIN_EXE_winplace"))
        .args(["check", "--format", "json", "-"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .stdin(std::fs::File::open("/dev/zero").expect("/dev/zero"))
        .output()
        .expect("winplace runs");
    assert_eq!(code(&piped), 2);
    let report = json(&piped);
    assert_eq!(report["parse_errors"][0]["file"], "<stdin>", "{report}");
    assert!(
        report["parse_errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("64 MiB")),
        "{report}"
    );
}

/// `winplace export --format map` with `buildPinning: exact` and with `runtimeClasses`: exit 0, the
/// build fix pins the nodeSelector (or sets the runtimeClassName), and `--list` says how; `check --fix`
/// pins the same build of the same pod (the parity itself is `rules/tests/export_parity.rs`).
#[test]
fn export_map_pins_exactly_and_sets_runtime_classes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exact = "buildPinning: exact\n";
    let classes = "buildPinning: exact\nruntimeClasses:\n  \"10.0.20348\": windows-2022\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: \"mcr.microsoft.com/windows/servercore:ltsc2022\"}]\n";
    for (name, text) in [
        ("exact.yaml", exact),
        ("classes.yaml", classes),
        ("pod.yaml", pod),
    ] {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    let out = winplace(
        dir.path(),
        &["export", "--format", "map", "--settings", "exact.yaml"],
        None,
    );
    let yaml = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        yaml.contains("/nodeSelector/node.kubernetes.io~1windows-build"),
        "{yaml}"
    );
    let out = winplace(
        dir.path(),
        &["export", "--list", "--settings", "exact.yaml"],
        None,
    );
    let list = String::from_utf8_lossy(&out.stdout);
    assert!(list.contains("(buildPinning: exact)"), "{list}");
    let out = winplace(
        dir.path(),
        &["export", "--format", "map", "--settings", "classes.yaml"],
        None,
    );
    let yaml = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(yaml.contains("/runtimeClassName"), "{yaml}");
    assert!(yaml.contains("windows-2022"), "{yaml}");
    let out = winplace(
        dir.path(),
        &["check", "--settings", "exact.yaml", "--fix", "pod.yaml"],
        None,
    );
    let fixed = std::fs::read_to_string(dir.path().join("pod.yaml")).expect("fixed pod");
    assert!(
        fixed.contains("node.kubernetes.io/windows-build") && fixed.contains("10.0.20348"),
        "{fixed}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
