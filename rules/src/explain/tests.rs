//! Real messages, quoted from public issues and from the code that prints them
//! (docs/reference/error-signatures.md gives each one's source), and what winplace makes of them.

use super::*;

/// (where the message comes from, the message, cause, sandbox, rule, objects that must be read)
type Row = (
    &'static str,
    &'static str,
    Option<Cause>,
    bool,
    Option<&'static str>,
    &'static [(&'static str, &'static str)],
);

const ROWS: &[Row] = &[
    (
        "kubernetes-sigs/sig-windows-tools#72: the pause image of another build (Docker)",
        r#"  Warning  FailedCreatePodSandBox  37s  kubelet, w1  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod "kube-flannel-ds-windows-amd64-9tffg": Error response from daemon: hcsshim::CreateComputeSystem e20e69aa106e39ef9447f449e7f6d578dbed969cd31da91d1ea8a106906478fe: The container operating system does not match the host operating system."#,
        Some(Cause::BuildMismatch),
        true,
        None,
        &[
            ("pod", "kube-flannel-ds-windows-amd64-9tffg"),
            ("node", "w1"),
        ],
    ),
    (
        "MicrosoftDocs/Virtualization-Documentation#765: the kubelet's CreatePodSandboxError with 0xc0370101",
        r#"E0530 11:42:13.374889  204644 pod_workers.go:186] Error syncing pod 733a9cfc-63e3-11e8-b83f-00505697a953 ("win-webserver-c94f84797-b4qzt_default(733a9cfc-63e3-11e8-b83f-00505697a953)"), skipping: failed to "CreatePodSandbox" for"win-webserver-c94f84797-b4qzt_default(733a9cfc-63e3-11e8-b83f-00505697a953)" with CreatePodSandboxError: "CreatePodSandbox for pod \"win-webserver-c94f84797-b4qzt_default(733a9cfc-63e3-11e8-b83f-00505697a953)\" failed: rpc error: code = Unknown desc = failed to startsandbox container for pod \"win-webserver-c94f84797-b4qzt\": Error response from daemon: container 0238a43119b6620289ef8e8d747a773f999ddc1b0b160739799de102f08d4e45 encountered an error during CreateContainer: failure in a Windows system call: The operating system of the container does not match the operating system of the host. (0xc0370101)"#,
        Some(Cause::BuildMismatch),
        true,
        None,
        &[],
    ),
    (
        "Azure/acs-engine#2965: the sandbox of a 1803 pod (message cut in the issue)",
        r#"Failed create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod "olfactory-olm-app-deployment-64ddfc96dd-f6z5w": Error response from daemon: container 7929bfd27250d5465496de2bb6a37c5e41d492488ca7c8362a07637b464b5e52 encountered an error during CreateContainer: failure in a Windows system call: The operating system of the container does not match the operating system of the host. (0xc"#,
        Some(Cause::BuildMismatch),
        true,
        None,
        &[("pod", "olfactory-olm-app-deployment-64ddfc96dd-f6z5w")],
    ),
    (
        "microsoft/dotnet-framework-docker#1265: a container's image of another build",
        "hcsshim::CreateComputeSystem f0e8722996e015f45c72a2baf0e772ddf28ae6b37bbd5ed93af03358298acdbf: The container operating system does not match the host operating system.",
        Some(Cause::BuildMismatch),
        false,
        Some("windows-build-mismatch"),
        &[],
    ),
    (
        "kubernetes/kubernetes#74066: the message without its context",
        r#"Trying to start a container on a windows node results in an error "The container operating system does not match the host operating system.""#,
        Some(Cause::BuildMismatch),
        false,
        Some("windows-build-mismatch"),
        &[],
    ),
    (
        "docker/for-win#6809: moby's platform form",
        "no matching manifest for windows/amd64 10.0.18363 in the manifest list entries",
        Some(Cause::NoPlatformInManifest),
        false,
        Some("windows-build-mismatch"),
        &[
            ("platform", "windows/amd64 10.0.18363"),
            ("build", "10.0.18363"),
        ],
    ),
    (
        "docker-archive-public/docker.kitematic#5337: Windows Server 2019's build",
        "no matching manifest for windows/amd64 10.0.17763 in the manifest list entries",
        Some(Cause::NoPlatformInManifest),
        false,
        Some("windows-build-mismatch"),
        &[("build", "10.0.17763")],
    ),
    (
        "containerd/platforms FormatAll (2026 form), as moby prints it",
        "Error response from daemon: no matching manifest for windows(10.0.26200)/amd64 in the manifest list entries",
        Some(Cause::NoPlatformInManifest),
        false,
        Some("windows-build-mismatch"),
        &[
            ("platform", "windows(10.0.26200)/amd64"),
            ("build", "10.0.26200"),
        ],
    ),
    (
        "a public README quoting the 2026 form on Windows 11",
        "- If you encounter this error: 'no matching manifest for windows(10.0.22631)/amd64 in the manifest list entries'",
        Some(Cause::NoPlatformInManifest),
        false,
        Some("windows-build-mismatch"),
        &[("build", "10.0.22631")],
    ),
    (
        "a Windows-only image pulled on a Linux node (moby)",
        "no matching manifest for linux/amd64 in the manifest list entries",
        Some(Cause::NoPlatformInManifest),
        false,
        Some("windows-pod-without-os-selector"),
        &[("platform", "linux/amd64")],
    ),
    (
        "a public runbook: containerd's message in the kubelet's pull event",
        r#"  Warning  Failed              30s   kubelet          Failed to pull image "nginx:1.14.2": rpc error: code = NotFound desc = failed to pull and unpack image "nginx:1.14.2": no match for platform in manifest: not found"#,
        Some(Cause::NoPlatformInManifest),
        false,
        Some("windows-build-mismatch"),
        &[("image", "nginx:1.14.2")],
    ),
    (
        "CrlsMrls/learning-notes: the 1.27+ taint form with the preemption suffix",
        "  Warning  FailedScheduling  95s   default-scheduler  0/2 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) had untolerated taint {spray: mortein}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        Some(Cause::UntoleratedTaint),
        false,
        Some("windows-pod-without-toleration"),
        &[("nodes", "2 of 2")],
    ),
    (
        "kube-scheduler TaintToleration, the older form (Sprintf of the stored source)",
        "0/3 nodes are available: 3 node(s) had taint {os: windows}, that the pod didn't tolerate.",
        Some(Cause::UntoleratedTaint),
        false,
        Some("windows-pod-without-toleration"),
        &[("nodes", "3 of 3")],
    ),
    (
        "kube-scheduler TaintToleration, the oldest form (ErrReasonNotMatch)",
        "0/4 nodes are available: 4 node(s) had taints that the pod didn't tolerate.",
        Some(Cause::UntoleratedTaint),
        false,
        Some("windows-pod-without-toleration"),
        &[],
    ),
    (
        "a public workshop: NodeAffinity with the preemption suffix",
        "  Warning  FailedScheduling  29s   default-scheduler  0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
        Some(Cause::SelectorMismatch),
        false,
        Some("no-schedulable-node"),
        &[("nodes", "3 of 3")],
    ),
    (
        "kubelet rejectPodAdmissionBasedOnOSField (pod status message)",
        "Pod was rejected: Failed to admit pod as the OS field doesn't match node OS",
        Some(Cause::OsMismatch),
        false,
        Some("windows-pod-without-os-selector"),
        &[],
    ),
    (
        "kubelet rejectPodAdmissionBasedOnOSSelector (event)",
        "  Warning  PodOSSelectorNodeLabelDoesNotMatch  2s  kubelet  Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
        Some(Cause::OsMismatch),
        false,
        Some("windows-pod-without-os-selector"),
        &[],
    ),
    (
        "a public troubleshooting page: Docker on Windows given a Linux image",
        r#"docker: image operating system "linux" cannot be used on this platform."#,
        Some(Cause::OsMismatch),
        false,
        Some("linux-pod-without-os-selector"),
        &[],
    ),
    (
        "kube-apiserver validateWindows, as kubectl apply prints it",
        r#"The Pod "iis" is invalid: spec.containers[0].securityContext.privileged: Forbidden: cannot be set for a windows pod"#,
        Some(Cause::ForbiddenWindowsField),
        false,
        Some("windows-forbidden-field"),
        &[
            ("pod", "iis"),
            ("field", "spec.containers[0].securityContext.privileged"),
        ],
    ),
    (
        "kube-apiserver validateLinux",
        r#"The Pod "web" is invalid: spec.securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod"#,
        Some(Cause::ForbiddenWindowsField),
        false,
        Some("linux-forbidden-windows-options"),
        &[("field", "spec.securityContext.windowsOptions")],
    ),
    (
        "RuntimeClass admission prepareObjects",
        r#"Error from server (Forbidden): error when creating "pod.yaml": pods "iis" is forbidden: pod rejected: RuntimeClass "windows-2019" not found"#,
        Some(Cause::Runtimeclass),
        false,
        Some("runtimeclass-not-found"),
        &[("runtimeClass", "windows-2019"), ("pod", "iis")],
    ),
    (
        "RuntimeClass admission setScheduling",
        r#"pods "iis" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[node.kubernetes.io/windows-build] = 10.0.20348; pod.spec.nodeSelector[node.kubernetes.io/windows-build] = 10.0.17763"#,
        Some(Cause::Runtimeclass),
        false,
        Some("runtimeclass-selector-conflict"),
        &[(
            "field",
            "spec.nodeSelector[node.kubernetes.io/windows-build]",
        )],
    ),
    (
        "kube-scheduler NodeDeclaredFeatures Filter, the status its unit test expects (nodedeclaredfeatures_test.go)",
        "0/1 nodes are available: 1 node declared features check failed - unsatisfied requirements: TestFeature.",
        Some(Cause::UndeclaredFeature),
        false,
        Some("windows-pod-undeclared-feature"),
        &[],
    ),
    (
        "kube-apiserver NodeDeclaredFeatureValidator, the error its unit test expects (plugin/pkg/admission/nodedeclaredfeatures/admission_test.go)",
        r#"pod update requires features TestFeature which are not available on node "test-node-no-feature""#,
        Some(Cause::UndeclaredFeature),
        false,
        None,
        &[("node", "test-node-no-feature")],
    ),
    (
        "kube-apiserver NodeDeclaredFeatureValidator through admission.NewForbidden, as kubectl prints a resize refused",
        r#"Error from server (Forbidden): pods "web-0" is forbidden: pod update requires features InPlacePodLevelResourcesVerticalScaling, InPlacePodVerticalScalingInitContainers which are not available on node "akswin22000001""#,
        Some(Cause::UndeclaredFeature),
        false,
        None,
        &[("node", "akswin22000001"), ("pod", "web-0")],
    ),
    (
        "RuntimeClass admission setOverhead",
        "pods \"iis\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
        Some(Cause::Runtimeclass),
        false,
        Some("runtimeclass-overhead-mismatch"),
        &[],
    ),
    // Unrelated messages: no Windows cause.
    (
        "an OOMKilled container (kubectl describe)",
        "      Reason:       OOMKilled",
        None,
        false,
        None,
        &[],
    ),
    (
        "a public note: a sandbox killed by the OOM killer",
        "Warning  FailedCreatePodSandBox  pod/shop-cart-...  Failed to create pod sandbox: ... OCI runtime create failed: runc create failed: unable to start container process: container init was OOM-killed (memory limit too low?)",
        None,
        false,
        None,
        &[],
    ),
    (
        "the scheduler out of CPU",
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
        None,
        false,
        None,
        &[],
    ),
    (
        "microsoft/hcsshim#2566: an ltsc2025 image on a Windows 11 25H2 (26200) host",
        "hcsshim::PrepareLayer failed in Win32: The container image contains a layer with an unrecognized format. (0xc0370112)",
        Some(Cause::BuildMismatch),
        false,
        Some("windows-build-mismatch"),
        &[],
    ),
    (
        "the kubelet's CRI client (remote_runtime.go) around containerd's hcs error: a container's, not the sandbox's",
        r#"E1127 10:04:11.201337    4012 log.go:32] "CreateContainer in sandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to create containerd container: hcs::CreateComputeSystem web: The container operating system does not match the host operating system." podSandboxID="0b5fd1c2a7e4""#,
        Some(Cause::BuildMismatch),
        false,
        Some("windows-build-mismatch"),
        &[],
    ),
    (
        "containerd's CRI log (CreateContainer within sandbox … failed): a container's, not the sandbox's",
        r#"time="2026-11-27T10:04:11Z" level=error msg="CreateContainer within sandbox \"0b5fd1c2a7e4\" for &ContainerMetadata{Name:web,Attempt:0,} failed" error="failed to create containerd task: hcs::CreateComputeSystem web: The container operating system does not match the host operating system.""#,
        Some(Cause::BuildMismatch),
        false,
        Some("windows-build-mismatch"),
        &[],
    ),
    (
        "containerd's CRI log: RunPodSandbox of a pause image of another build",
        r#"time="2026-11-27T10:04:11Z" level=error msg="RunPodSandbox for &PodSandboxMetadata{Name:web-0,Uid:1,Namespace:shop,Attempt:0,} failed, error" error="failed to start sandbox \"0b5fd1c2a7e4\": hcs::CreateComputeSystem 0b5fd1c2a7e4: The container operating system does not match the host operating system.""#,
        Some(Cause::BuildMismatch),
        true,
        None,
        &[],
    ),
    (
        "rancher/rancher#23161: the kubelet could not pull the node's pause image (no entry for the host's build)",
        r#"E1001 14:29:03.759095    8072 remote_runtime.go:105] RunPodSandbox from runtime service failed: rpc error: code = Unknown desc = failed pulling image "k8s.gcr.io/pause:3.1": no matching manifest for windows/amd64 10.0.18362 in the manifest list entries"#,
        Some(Cause::NoPlatformInManifest),
        true,
        None,
        &[
            ("image", "k8s.gcr.io/pause:3.1"),
            ("platform", "windows/amd64 10.0.18362"),
        ],
    ),
    (
        "moby/moby#35668: Docker before moby/moby#36327 on an image of a newer build than the host's",
        r"docker: failed to register layer: re-exec error: exit status 1: output: ProcessUtilityVMImage C:\ProgramData\Docker\windowsfilter\fe83ba207a386db6e27aa72605a295fd4ba21532a387697e287a67a1b3eddd4c\UtilityVM: The system cannot find the path specified.",
        Some(Cause::BuildMismatch),
        false,
        Some("windows-build-mismatch"),
        &[],
    ),
    (
        "moby/moby#36327: Docker refuses the pull of an image of a newer build (1709 image, 1607 host)",
        "a Windows version 10.0.16299-based image is incompatible with a 10.0.14393 host",
        Some(Cause::BuildMismatch),
        false,
        Some("windows-build-mismatch"),
        &[("build", "10.0.14393")],
    ),
    (
        "docker/for-win#10760: ProcessUtilityVMImage failing otherwise (an ltsc2016 image on its own build): not a build mismatch",
        r"failed to register layer: re-exec error: exit status 1: output: hcsshim::ProcessUtilityVMImage \\?\C:\ProgramData\docker\windowsfilter\afbe4420a54d638fb4852e7743c069a69415fb61dda0835b29822000b50cb942\UtilityVM: The parameter is incorrect",
        None,
        false,
        None,
        &[],
    ),
];

fn object(objects: &Objects, key: &str) -> Option<String> {
    match key {
        "pod" => objects.pod.clone(),
        "node" => objects.node.clone(),
        "image" => objects.image.clone(),
        "platform" => objects.platform.clone(),
        "build" => objects.build.clone(),
        "nodes" => objects.nodes.clone(),
        "runtimeClass" => objects.runtime_class.clone(),
        "field" => objects.field.first().cloned(),
        other => panic!("no object {other}"),
    }
}

#[test]
fn real_messages_are_explained_with_their_cause_sandbox_rule_and_objects() {
    for (source, message, cause, sandbox, rule, objects) in ROWS {
        let found = explain_text(message, None);
        let Some(want) = cause else {
            assert!(found.is_empty(), "{source}: {found:?}");
            continue;
        };
        let m = found
            .first()
            .unwrap_or_else(|| panic!("{source}: no match for {message}"));
        assert_eq!(m.cause, *want, "{source}");
        assert_eq!(m.sandbox, *sandbox, "{source}");
        assert_eq!(m.rule.as_deref(), *rule, "{source}");
        for (key, value) in *objects {
            assert_eq!(
                object(&m.objects, key).as_deref(),
                Some(*value),
                "{source}: {key} in {:?}",
                m.objects
            );
        }
        assert!(!m.meaning.is_empty() && !m.fix.is_empty(), "{source}");
        if let Some(rule) = &m.rule {
            assert!(
                crate::catalog::rule(rule).is_some(),
                "{source}: {rule} is not a rule of the catalogue"
            );
        }
    }
    // Every cause is among the real messages.
    for cause in Cause::ALL {
        assert!(
            ROWS.iter().any(|r| r.2 == Some(cause)),
            "no real message of {cause}"
        );
    }
}

#[test]
fn the_sandbox_case_says_it_is_the_pause_image() {
    let m = &explain_text(ROWS[0].1, None)[0];
    assert!(m.meaning.contains("pause (sandbox) image"), "{}", m.meaning);
    assert!(m.fix.contains("sandbox_image"), "{}", m.fix);
}

#[test]
fn one_scheduler_message_gives_each_of_its_causes_once() {
    let text = "0/5 nodes are available: 2 node(s) had untolerated taint {os: windows}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.";
    let found = explain_text(text, None);
    let causes: Vec<(Cause, Option<&str>)> = found
        .iter()
        .map(|m| (m.cause, m.objects.nodes.as_deref()))
        .collect();
    assert_eq!(
        causes,
        [
            (Cause::UntoleratedTaint, Some("2 of 5")),
            (Cause::SelectorMismatch, Some("3 of 5"))
        ]
    );
    assert_eq!(found[0].objects.taint, ["os=windows"]);
}

fn context() -> ClusterContext {
    let text = r#"
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: win19-1
    labels: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.17763}
  spec:
    taints: [{key: os, value: windows, effect: NoSchedule}]
- apiVersion: v1
  kind: Node
  metadata:
    name: lin-1
    labels: {kubernetes.io/os: linux}
"#;
    context_of(text)
}

/// The cluster context of a YAML List of objects.
fn context_of(text: &str) -> ClusterContext {
    let parsed = crate::input::parse("c.yaml", text, &crate::input::Limits::default());
    ClusterContext::from_objects(&crate::model::objects(&parsed.documents)).0
}

#[test]
fn with_context_the_fix_names_the_tag_that_runs_on_the_node_and_the_toleration() {
    let context = context();
    let describe = "Name:         invoice-7d9-x2\nNamespace:    billing\nNode:         win19-1/10.240.0.4\nEvents:\n  Type     Reason   Age  From     Message\n  Warning  Failed   3s   kubelet  Failed to pull image \"mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022\": rpc error: code = NotFound desc = failed to pull and unpack image \"mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022\": no match for platform in manifest: not found\n";
    let found = explain_text(describe, Some(&context));
    let m = &found[0];
    assert_eq!(m.cause, Cause::NoPlatformInManifest);
    assert_eq!(m.objects.pod.as_deref(), Some("billing/invoice-7d9-x2"));
    assert_eq!(m.objects.build.as_deref(), Some("10.0.17763"));
    assert_eq!(m.objects.image_build.as_deref(), Some("10.0.20348"));
    assert!(
        m.fix.starts_with("Use mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019 (the Windows Server 2019 (10.0.17763) tag"),
        "{}",
        m.fix
    );
    // The pin is the range of the cluster's builds that run it, as fixes write it.
    assert!(
        m.fix.ends_with("pin the workload to the builds that run it, required node affinity node.kubernetes.io/windows-build In [10.0.17763]."),
        "{}",
        m.fix
    );
    let taint = explain_text(
        "0/2 nodes are available: 1 node(s) had untolerated taint {os: windows}, 1 node(s) didn't match Pod's node affinity/selector.",
        Some(&context),
    );
    assert!(
        taint[0]
            .fix
            .contains("{key: os, operator: Equal, value: windows, effect: NoSchedule}"),
        "{}",
        taint[0].fix
    );
    // A kubelet refusal on the Linux node: the pod is a Windows one.
    let os = explain_text(
        "Name: p\nNode: lin-1/10.0.0.1\n  Warning  PodOSNotSupported  1s  kubelet  Failed to admit pod as the OS field doesn't match node OS",
        Some(&context),
    );
    assert_eq!(
        os[0].rule.as_deref(),
        Some("windows-pod-without-os-selector")
    );
    assert!(
        os[0].fix.contains("kubernetes.io/os: windows"),
        "{}",
        os[0].fix
    );
}

#[test]
fn events_as_json_name_their_pod() {
    let json = r#"{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "involvedObject": {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "web-0",
                "namespace": "shop"
            },
            "kind": "Event",
            "message": "Error: failed to create containerd container: hcs::CreateComputeSystem web: The container operating system does not match the host operating system.: unknown",
            "metadata": {"name": "web-0.17a", "namespace": "shop"},
            "reason": "Failed"
        }
    ]
}"#;
    let found = explain_text(json, None);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].objects.pod.as_deref(), Some("shop/web-0"));
    let yaml = "- involvedObject:\n    kind: Pod\n    name: web-1\n    namespace: shop\n  message: 'Failed to create pod sandbox: rpc error: code = Unknown desc = The container operating system does not match the host operating system. (0xc0370101)'\n";
    let found = explain_text(yaml, None);
    assert_eq!(found[0].objects.pod.as_deref(), Some("shop/web-1"));
    assert!(found[0].sandbox);
}

#[test]
fn hostile_input_is_read_in_bounded_memory_without_panicking() {
    let mut explainer = Explainer::new(None);
    // Binary junk, a colour-coded match, a CRLF match, an endless line.
    explainer.line(&[0xff, 0x00, 0x1b, b'[', 0xfe, 0x80]);
    explainer.line(
        b"\x1b[33m0/1 nodes are available: 1 node(s) had untolerated taint {os: windows}.\x1b[0m",
    );
    explainer.line(
        b"no matching manifest for windows/amd64 10.0.17763 in the manifest list entries\r\n",
    );
    let mut long = vec![b'x'; 1 << 20];
    long.extend(b"0xc0370101");
    explainer.line(&long);
    // The same message a thousand times is one match, counted.
    for _ in 0..1000 {
        explainer.line(
            b"no matching manifest for windows/amd64 10.0.17763 in the manifest list entries",
        );
    }
    let found = explainer.finish();
    let causes: Vec<Cause> = found.iter().map(|m| m.cause).collect();
    assert_eq!(
        causes,
        [Cause::UntoleratedTaint, Cause::NoPlatformInManifest],
        "the match past the line cap is not read"
    );
    assert_eq!(found[1].count, 1001);
    assert_eq!(found[0].objects.taint, ["os=windows"]);
    // Distinct matches are capped.
    let mut explainer = Explainer::new(None);
    for i in 0..(MAX_MATCHES + 10) {
        explainer.line(format!("The Pod \"p{i}\" is invalid: spec.hostPID: Forbidden: cannot be set for a windows pod").as_bytes());
    }
    explainer.flush();
    assert_eq!(explainer.dropped(), 10);
    assert_eq!(explainer.finish().len(), MAX_MATCHES);
}

#[test]
fn the_prefilter_lets_through_every_line_a_signature_matches() {
    let prefilter = Prefilter::new();
    for (source, message, cause, ..) in ROWS {
        if cause.is_some() {
            assert!(prefilter.may_match(message), "{source}");
        }
    }
    assert!(!prefilter.may_match("I0101 12:00:00 kubelet.go:1 \"SyncLoop ADD\" source=\"api\""));
}

/// `0xc0370112` is a build problem (the host cannot read the image's layers), named as such, with the
/// node's build when the context knows the node, and never "retag to the host's build".
#[test]
fn an_unreadable_layer_is_a_build_problem() {
    let m = &explain_text(
        "hcsshim::PrepareLayer failed in Win32: The container image contains a layer with an unrecognized format. (0xc0370112)",
        None,
    )[0];
    assert_eq!(m.signature, "hcs-invalid-layer");
    assert!(m.meaning.contains("10.0.26200"), "{}", m.meaning);
    assert!(m.fix.contains("ltsc2022"), "{}", m.fix);
    let context = context();
    let describe = "Name:         web-0\nNamespace:    shop\nNode:         win19-1/10.240.0.4\nEvents:\n  Warning  Failed  3s  kubelet  Error: failed to create containerd container: hcsshim::PrepareLayer failed in Win32: The container image contains a layer with an unrecognized format. (0xc0370112)\n";
    let m = &explain_text(describe, Some(&context))[0];
    assert_eq!(m.cause, Cause::BuildMismatch);
    assert!(!m.sandbox);
    assert!(
        m.meaning
            .ends_with("Node win19-1 runs Windows Server 2019 (10.0.17763)."),
        "{}",
        m.meaning
    );
    assert!(!m.fix.starts_with("Use "), "{}", m.fix);
}

/// The pod condition the kubelet sets when no sandbox runs (`PodReadyToStartContainers` False, reason
/// `PodSandboxNotReady`, kubernetes/kubernetes#135300) makes a build mismatch whose line names no
/// operation the sandbox's; a line that names `CreateContainer` stays the container's.
#[test]
fn the_sandbox_condition_is_read() {
    let bare =
        "The container operating system does not match the host operating system. (0xc0370101)";
    let describe = format!(
        "Name:         web-0\nNamespace:    shop\nConditions:\n  Type                        Status\n  PodReadyToStartContainers   False \n  Initialized                 True \nEvents:\n  Warning  Failed  3s  kubelet  {bare}\n"
    );
    let m = &explain_text(&describe, None)[0];
    assert!(m.sandbox, "{m:?}");
    assert_eq!(m.rule, None);
    assert!(
        m.meaning
            .contains("PodReadyToStartContainers condition is False"),
        "{}",
        m.meaning
    );
    // As `kubectl get pod -o yaml` writes the condition.
    let yaml = format!(
        "status:\n  conditions:\n  - lastTransitionTime: \"2026-11-27T10:04:11Z\"\n    message: no pod sandbox exists\n    reason: PodSandboxNotReady\n    status: \"False\"\n    type: PodReadyToStartContainers\n  message: '{bare}'\n"
    );
    let m = &explain_text(&yaml, None)[0];
    assert!(m.sandbox, "{m:?}");
    assert!(
        m.meaning.contains("reason PodSandboxNotReady"),
        "{}",
        m.meaning
    );
    // With the sandbox ready, or a line that names the container's operation, it is the container's.
    let ready = describe.replace(
        "PodReadyToStartContainers   False",
        "PodReadyToStartContainers   True",
    );
    assert!(!explain_text(&ready, None)[0].sandbox);
    let named = describe.replace(
        bare,
        &format!("CreateContainer in sandbox from runtime service failed: {bare}"),
    );
    assert!(!explain_text(&named, None)[0].sandbox);
    // Without the condition, a bare line is the container's (as before).
    assert!(!explain_text(bare, None)[0].sandbox);
}

/// `buildPinning: exact` pins the node's one build with the nodeSelector, as the rules' fixes do.
#[test]
fn exact_pinning_is_honoured_in_the_fix() {
    let context = context();
    let describe = "Name:         invoice-7d9-x2\nNamespace:    billing\nNode:         win19-1/10.240.0.4\nEvents:\n  Warning  Failed   3s   kubelet  Failed to pull image \"mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022\": rpc error: code = NotFound desc = failed to pull and unpack image \"mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022\": no match for platform in manifest: not found\n";
    let mut explainer =
        Explainer::new(Some(&context)).with_build_pinning(crate::platform::BuildPinning::Exact);
    for line in describe.lines() {
        explainer.line(line.as_bytes());
    }
    let m = &explainer.finish()[0];
    assert!(
        m.fix.ends_with("pin the workload to that build with the nodeSelector node.kubernetes.io/windows-build: 10.0.17763 (setting buildPinning: exact)."),
        "{}",
        m.fix
    );
    assert!(!m.fix.contains("node affinity"), "{}", m.fix);
}

/// Without context, `buildPinning: exact` (read from settings) still rewrites the signatures' own
/// range pins: no fix proposes required node affinity `In [...]` where the settings pin exactly.
#[test]
fn exact_pinning_from_settings_is_honoured_without_context() {
    // The phrases pin_generic rewrites are the signatures' own words (edit both together).
    for (range, _) in super::context::RANGE_WORDS {
        assert!(
            SIGNATURES.iter().any(|s| s.fix.contains(range)),
            "no signature's fix says {range:?}"
        );
    }
    let exact = crate::Settings::from_text("s.yaml", "buildPinning: exact\n").expect("settings");
    let lines = [
        "hcs::CreateComputeSystem web: The container operating system does not match the host operating system.",
        "failed to prepare layer: hcs::PrepareLayer: 0xc0370112: The container image contains a layer with an unrecognized format.",
        "no matching manifest for windows/amd64 10.0.17763 in the manifest list entries",
    ];
    for line in lines {
        let ranged = explain_text(line, None);
        let pinned = explain_text_with(line, None, &exact);
        assert_eq!(ranged.len(), 1, "{line}");
        assert_eq!(pinned.len(), 1, "{line}");
        assert!(
            !pinned[0].fix.contains("required node affinity"),
            "{line}: {}",
            pinned[0].fix
        );
        if ranged[0].fix.contains("required node affinity") {
            assert!(
                pinned[0]
                    .fix
                    .contains("with the nodeSelector node.kubernetes.io/windows-build: <the ")
                    && pinned[0].fix.contains("(setting buildPinning: exact)"),
                "{line}: {}",
                pinned[0].fix
            );
        }
    }
    // The default settings keep the range (explain_text is explain_text_with the defaults).
    assert!(
        explain_text(lines[0], None)[0]
            .fix
            .contains("required node affinity node.kubernetes.io/windows-build In [...]")
    );
    // With context, the settings' exact pin names the node's build.
    let context = context();
    let describe = "Name: web-0\nNode: win19-1/10.0.0.4\n  Warning  Failed  1s  kubelet  Error: failed to pull image \"mcr.microsoft.com/windows/servercore:ltsc2022\": no match for platform in manifest: not found";
    let m = &explain_text_with(describe, Some(&context), &exact)[0];
    assert!(
        m.fix.ends_with("pin the workload to that build with the nodeSelector node.kubernetes.io/windows-build: 10.0.17763 (setting buildPinning: exact)."),
        "{}",
        m.fix
    );
}

/// `supportedBuilds` bounds the range a build fix pins: on a 2022 node the default settings'
/// range takes in 2025 (26100 hosts run ltsc2022 images), and settings that support only 2019
/// and 2022 leave it out.
#[test]
fn the_range_pin_lists_only_the_supported_builds_that_run_the_image() {
    let text = r#"
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: win22-1
    labels: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.20348}
"#;
    let context = context_of(text);
    let describe = "Name: web-0\nNode: win22-1/10.0.0.4\n  Warning  Failed  1s  kubelet  Error: failed to pull image \"mcr.microsoft.com/windows/servercore:ltsc2019\": no match for platform in manifest: not found";
    let fix = |settings: &str| {
        let settings = crate::Settings::from_text("s.yaml", settings).expect("settings");
        explain_text_with(describe, Some(&context), &settings)[0]
            .fix
            .clone()
    };
    let default = fix("{}\n");
    assert!(default.contains("In [10.0.20348, 10.0.26100]"), "{default}");
    let no_2025 = fix("supportedBuilds: [\"10.0.17763\", \"10.0.20348\"]\n");
    assert!(no_2025.contains("In [10.0.20348]"), "{no_2025}");
}

/// A sandbox line carries the node's meaning and fix whatever its cause: the pause image is the
/// node's configuration, so no manifest rule names it and the workload's fix (retag, selectors) is
/// never offered.
#[test]
fn every_cause_a_sandbox_line_carries_gets_the_nodes_fix() {
    // rancher/rancher#23161 (quoted in ROWS) and a Linux pause image configured on a Windows node
    // (moby's refusal, in the kubelet's sandbox event: constructed from the two messages' frames).
    let rows = [
        (
            r#"RunPodSandbox from runtime service failed: rpc error: code = Unknown desc = failed pulling image "k8s.gcr.io/pause:3.1": no matching manifest for windows/amd64 10.0.18362 in the manifest list entries"#,
            Cause::NoPlatformInManifest,
            "windows/amd64 10.0.18362",
        ),
        (
            r#"Failed to create pod sandbox: rpc error: code = Unknown desc = failed pulling image "k8s.gcr.io/pause:3.1": image operating system "linux" cannot be used on this platform"#,
            Cause::OsMismatch,
            "of the node's OS",
        ),
        (
            "Failed to create pod sandbox: rpc error: code = Unknown desc = hcs::CreateComputeSystem 0b5f: The container operating system does not match the host operating system.",
            Cause::BuildMismatch,
            "this host's build",
        ),
    ];
    let context = context();
    for (line, cause, words) in rows {
        for found in [explain_text(line, None), explain_text(line, Some(&context))] {
            let m = found
                .iter()
                .find(|m| m.cause == cause)
                .unwrap_or_else(|| panic!("{line}: {found:?}"));
            assert!(m.sandbox, "{line}");
            assert_eq!(
                m.rule, None,
                "{line}: a manifest rule cannot catch the node's pause image"
            );
            assert!(m.meaning.contains("pause (sandbox) image"), "{}", m.meaning);
            assert!(
                m.fix.contains("pinned_images.sandbox")
                    && m.fix.contains("--pod-infra-container-image"),
                "{}",
                m.fix
            );
            assert!(m.fix.contains(words), "{words}: {}", m.fix);
            assert!(
                !m.fix.contains("nodeSelector") && !m.fix.contains("Use a tag"),
                "{}",
                m.fix
            );
        }
    }
    let m = &explain_text(rows[0].0, None)[0];
    assert!(m.meaning.contains("k8s.gcr.io/pause:3.1"), "{}", m.meaning);
}

/// Wraps `line` as a console of `width` columns does: cut every `width` characters, in words too.
fn console_wrap(line: &str, width: usize) -> String {
    let chars: Vec<char> = line.chars().collect();
    chars
        .chunks(width)
        .map(|c| c.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Wraps `line` at the last space before `width` characters, as an editor or a mail does; `keep`
/// leaves the space at the end of the line (else the break drops it).
fn word_wrap(line: &str, width: usize, keep: bool) -> String {
    let mut out = String::new();
    let mut current = String::new();
    for word in line.split(' ') {
        if !current.is_empty() && current.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&current);
            if keep {
                out.push(' ');
            }
            out.push('\n');
            current.clear();
        } else if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    out.push_str(&current);
    out
}

/// What a text is explained as, order and repeats aside: (cause, sandbox, rule).
fn verdicts(text: &str) -> Vec<(Cause, bool, Option<String>)> {
    let mut v: Vec<_> = explain_text(text, None)
        .into_iter()
        .map(|m| (m.cause, m.sandbox, m.rule))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Every real message of ROWS, wrapped as consoles (80, 100, 120 columns, in words) and editors (at
/// spaces, the space kept at the line's end) wrap it, is explained as the message on one line is (a
/// console's pair of lines that only a third line would confirm as one message may give a cause twice,
/// once per line). An
/// editor's wrap that drops the space leaves nothing that ties the lines but a signature's text: the
/// causes are the same (a cause two lines show is found on each), and whether a line is the sandbox's
/// is read from its own line.
#[test]
fn wrapped_real_messages_are_explained_as_on_one_line() {
    let causes = |v: Vec<(Cause, bool, Option<String>)>| {
        let mut c: Vec<Cause> = v.into_iter().map(|(c, ..)| c).collect();
        c.dedup();
        c
    };
    for (source, message, cause, ..) in ROWS {
        let want = verdicts(message);
        assert_eq!(want.is_empty(), cause.is_none(), "{source}");
        for width in [80, 100, 120] {
            let text = console_wrap(message, width);
            assert_eq!(
                verdicts(&text),
                want,
                "{source}, console at {width}:\n{text}"
            );
        }
        let text = word_wrap(message, 72, true);
        assert_eq!(
            verdicts(&text),
            want,
            "{source}, words at 72, the space kept:\n{text}"
        );
        let text = word_wrap(message, 72, false);
        assert_eq!(
            causes(verdicts(&text)),
            causes(want.clone()),
            "{source}, words at 72:\n{text}"
        );
    }
}

/// Messages as issue threads show them, wrapped, each explained once at its first line.
#[test]
fn wrapped_messages_from_issue_threads_are_read_across_their_breaks() {
    let rows: &[(&str, &str, Cause, bool, Option<&str>)] = &[
        (
            // Docker's error on a 120-column PowerShell console: the signature's texts cut inside words.
            "docker/for-win#3889",
            "C:\\Program Files\\Docker\\docker.exe: failed to register layer: re-exec error: exit status 1: output: ProcessUtilityVMImag\ne \\\\?\\C:\\ProgramData\\docker\\windowsfilter\\87f245f9a302cdd6f4b10d372bdb627eb1f636dc20ddb4208295329e76e4c88b\\UtilityVM: Th\ne system cannot find the path specified.\nSee 'C:\\Program Files\\Docker\\docker.exe run --help'.",
            Cause::BuildMismatch,
            false,
            Some("windows-build-mismatch"),
        ),
        (
            // A 1803 image on a 1607 host, the path cut where the thread wrapped it.
            "microsoft/dotnet-framework-docker#167",
            "failed to register layer: re-exec error: exit status 1: output: ProcessUtilityVMImage \\\\?\\C:\\ProgramData\\Docker\\windowsfilter\\809d8aba9c405d908d95277ac28784a1aff7c59e\n532c95fbf67fc0b8d10d4445\\UtilityVM: The system cannot find the path specified.",
            Cause::BuildMismatch,
            false,
            Some("windows-build-mismatch"),
        ),
        (
            // The kubelet's CreatePodSandboxError, wrapped at spaces that stay at the lines' ends: the
            // line with the HCS text names no sandbox operation, the message does.
            "MicrosoftDocs/Virtualization-Documentation#765",
            "E0530 11:42:13.374889  204644 pod_workers.go:186] Error syncing pod 733a9cfc-63e3-11e8-b83f-00505697a953 (\"win-webserver-c94f84797-b4qzt_default(733a9cfc-63e3-11e8-b83f-00505697a953)\"), skipping: failed to \n\"CreatePodSandbox\" for\"win-webserver-c94f84797-b4qzt_default(733a9cfc-63e3-11e8-b83f-00505697a953)\" with CreatePodSandboxError: \n\"CreatePodSandbox for pod \\\"win-webserver-c94f84797-b4qzt_default(733a9cfc-63e3-11e8-b83f-00505697a953)\\\" failed: rpc error: code = Unknown desc = failed to startsandbox container for pod \\\"win-webserver-c94f84797-b4qzt\\\": \nError response from daemon: container 0238a43119b6620289ef8e8d747a773f999ddc1b0b160739799de102f08d4e45 encountered an error during CreateContainer: failure in a Windows system call: \nThe operating system of the container does not match the operating system of the host. (0xc0370101) extra info: ",
            Cause::BuildMismatch,
            true,
            None,
        ),
    ];
    for (source, text, cause, sandbox, rule) in rows {
        let found = explain_text(text, None);
        assert_eq!(found.len(), 1, "{source}: {found:?}");
        let m = &found[0];
        assert_eq!(
            (m.cause, m.sandbox, m.rule.as_deref()),
            (*cause, *sandbox, *rule),
            "{source}"
        );
        assert_eq!(m.line, Some(1), "{source}");
    }
    // Two lines that only happen to follow each other are not one message.
    let apart = "Warning  Failed  kubelet  Error: ErrImagePull\nno matching manifest for windows/amd64 10.0.17763 in the manifest list entries";
    assert_eq!(explain_text(apart, None)[0].line, Some(2));
    let unrelated = "the image is fine.\nNormal  Pulled  kubelet  Successfully pulled image";
    assert!(explain_text(unrelated, None).is_empty());
}

/// The join is bounded: a thousand lines that could all go on one message are read in parts of
/// MAX_WRAP_LINES lines, each line tested against a window around its break (linear in the input).
#[test]
fn joining_wrapped_lines_is_bounded() {
    let line = "x".repeat(200) + " \n";
    let text = line.repeat(1_000)
        + "The container operating system does not match the\nhost operating system.";
    let found = explain_text(&text, None);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].cause, Cause::BuildMismatch);
    assert!(found[0].message.len() <= crate::explain::clean::MAX_LINE);
}
