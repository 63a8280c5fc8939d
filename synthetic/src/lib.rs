//! A synthetic mixed cluster of any size, for the demo (`winplace demo-snapshot --nodes N --pods M`), the
//! scale benchmark and tests.
//!
//! Nodes: tainted Windows pools on Windows Server 2019, 2022 and 2025, one untainted 2022 pool, a Linux
//! system pool and a Linux apps pool over three zones (a few cordoned); one 2025 node without its build label
//! and one 2022 node whose label says 2019. Pods: DaemonSets (kube-proxy, node-exporter, a log agent that
//! tolerates everything and selects no OS, Windows HostProcess kube-proxy, a Windows CSI node plugin without
//! a build selector), then Deployments, StatefulSets, Jobs and bare pods of every kind of placement, most
//! right, some at risk and a few misplaced in every way the live-state rules know: on the wrong OS, on an
//! incompatible build, pending on a taint, and waiting on an image OS error. Deterministic for a seed.

#![warn(missing_docs)]

pub mod counting;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, ContainerPort, ContainerState, ContainerStateRunning, ContainerStateTerminated,
    ContainerStateWaiting, ContainerStatus, Node, NodeAddress, NodeCondition, NodeSpec, NodeStatus,
    NodeSystemInfo, Pod, PodCondition, PodSecurityContext, PodSpec, PodStatus,
    ResourceRequirements, Taint, Toleration, Volume, VolumeMount, WindowsSecurityContextOptions,
};
use k8s_openapi::api::node::v1::{RuntimeClass, Scheduling};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use winplace_rules::model::RuntimeClassEntry;

/// splitmix64: small, deterministic, good enough to shuffle a demo.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next() % n as u64) as usize
    }

    /// A lowercase alphanumeric suffix like the ones controllers generate.
    fn suffix(&mut self, len: usize) -> String {
        const CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..len)
            .map(|_| char::from(CHARS[self.below(CHARS.len())]))
            .collect()
    }
}

/// The node pools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Pool {
    Win19,
    Win22,
    Win25,
    /// Windows Server 2022 without the Windows taint.
    Win22Open,
    LinuxSystem,
    LinuxApps,
}

impl Pool {
    fn name(self) -> &'static str {
        match self {
            Pool::Win19 => "win19",
            Pool::Win22 => "win22",
            Pool::Win25 => "win25",
            Pool::Win22Open => "win22open",
            Pool::LinuxSystem => "system",
            Pool::LinuxApps => "apps",
        }
    }

    fn build(self) -> Option<u32> {
        match self {
            Pool::Win19 => Some(17763),
            Pool::Win22 | Pool::Win22Open => Some(20348),
            Pool::Win25 => Some(26100),
            Pool::LinuxSystem | Pool::LinuxApps => None,
        }
    }

    fn windows(self) -> bool {
        self.build().is_some()
    }
}

const WINDOWS_TAINT: (&str, &str) = ("os", "windows");

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn quantities(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
        .collect()
}

/// Nodes per pool for `n` nodes: 6 % 2019, 14 % 2022, 6 % 2025, 2 % open 2022 (each at least one when
/// there are 8 nodes or more), 8 % Linux system, the rest Linux apps.
fn pool_sizes(n: usize) -> Vec<(Pool, usize)> {
    let share = |pct: usize| if n >= 8 { (n * pct / 100).max(1) } else { 0 };
    let mut sizes = vec![
        (Pool::Win19, share(6)),
        (Pool::Win22, share(14)),
        (Pool::Win25, share(6)),
        (Pool::Win22Open, share(2)),
        (Pool::LinuxSystem, share(8)),
    ];
    let used: usize = sizes.iter().map(|(_, c)| c).sum();
    sizes.push((Pool::LinuxApps, n.saturating_sub(used)));
    sizes
}

fn node(pool: Pool, i: usize, ordinal: usize, rng: &mut Rng) -> Node {
    let name = format!("{}-{:06}", pool.name(), i);
    let zone = format!("eastus-{}", 1 + ordinal % 3);
    let os = if pool.windows() { "windows" } else { "linux" };
    let mut l = labels(&[
        ("kubernetes.io/os", os),
        ("beta.kubernetes.io/os", os),
        ("kubernetes.io/arch", "amd64"),
        ("beta.kubernetes.io/arch", "amd64"),
        ("kubernetes.io/hostname", &name),
        ("topology.kubernetes.io/zone", &zone),
        ("agentpool", pool.name()),
        (
            "node.kubernetes.io/instance-type",
            if pool.windows() {
                "Standard_D4s_v5"
            } else {
                "Standard_D8s_v5"
            },
        ),
    ]);
    let mut taints = Vec::new();
    let (kernel, os_image) = match pool.build() {
        Some(build) => {
            l.insert(
                "node.kubernetes.io/windows-build".into(),
                format!("10.0.{build}"),
            );
            if pool != Pool::Win22Open {
                taints.push(Taint {
                    key: WINDOWS_TAINT.0.into(),
                    value: Some(WINDOWS_TAINT.1.into()),
                    effect: "NoSchedule".into(),
                    time_added: None,
                });
            }
            let image = match build {
                17763 => "Windows Server 2019 Datacenter",
                20348 => "Windows Server 2022 Datacenter",
                _ => "Windows Server 2025 Datacenter",
            };
            (
                format!("10.0.{build}.{}", 2000 + rng.below(900)),
                image.to_string(),
            )
        }
        None => {
            if pool == Pool::LinuxSystem {
                taints.push(Taint {
                    key: "CriticalAddonsOnly".into(),
                    value: Some("true".into()),
                    effect: "NoSchedule".into(),
                    time_added: None,
                });
            }
            (
                "5.15.0-1071-azure".to_string(),
                "Ubuntu 22.04.5 LTS".to_string(),
            )
        }
    };
    // Label hygiene problems the node rules find.
    if pool == Pool::Win25 && ordinal == 0 {
        l.remove("node.kubernetes.io/windows-build");
    }
    if pool == Pool::Win22 && ordinal == 1 {
        l.insert(
            "node.kubernetes.io/windows-build".into(),
            "10.0.17763".into(),
        );
    }
    let cordoned = pool == Pool::LinuxApps && ordinal % 211 == 7;
    Node {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            labels: Some(l),
            annotations: Some(
                [("node.alpha.kubernetes.io/ttl".to_string(), "0".to_string())].into(),
            ),
            uid: Some(format!("{:016x}", rng.next())),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec {
            taints: Some(taints).filter(|t| !t.is_empty()),
            unschedulable: cordoned.then_some(true),
            provider_id: Some(format!("azure:///subscriptions/demo/{name}")),
            pod_cidr: (!pool.windows()).then(|| format!("10.244.{}.0/24", i % 256)),
            ..NodeSpec::default()
        }),
        status: Some(NodeStatus {
            node_info: Some(NodeSystemInfo {
                architecture: "amd64".into(),
                container_runtime_version: "containerd://1.7.22".into(),
                kernel_version: kernel,
                kubelet_version: "v1.31.2".into(),
                operating_system: os.into(),
                os_image,
                machine_id: format!("{:016x}", rng.next()),
                boot_id: format!("{:016x}", rng.next()),
                system_uuid: format!("{:016x}", rng.next()),
                ..NodeSystemInfo::default()
            }),
            addresses: Some(vec![
                NodeAddress {
                    type_: "InternalIP".into(),
                    address: format!("10.{}.{}.{}", 1 + i / 65536, (i / 256) % 256, i % 256),
                },
                NodeAddress {
                    type_: "Hostname".into(),
                    address: name,
                },
            ]),
            capacity: Some(quantities(&[
                ("cpu", "8"),
                ("memory", "32863640Ki"),
                ("pods", "110"),
            ])),
            allocatable: Some(quantities(&[
                ("cpu", "7820m"),
                ("memory", "28362136Ki"),
                ("pods", "110"),
            ])),
            conditions: Some(
                [
                    ("MemoryPressure", "False", "KubeletHasSufficientMemory"),
                    ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
                    ("PIDPressure", "False", "KubeletHasSufficientPID"),
                    ("Ready", "True", "KubeletReady"),
                ]
                .iter()
                .map(|(t, s, r)| NodeCondition {
                    type_: t.to_string(),
                    status: s.to_string(),
                    reason: Some(r.to_string()),
                    ..NodeCondition::default()
                })
                .collect(),
            ),
            ..NodeStatus::default()
        }),
    }
}

/// How a workload's pods are placed, and what goes wrong with some of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Archetype {
    /// Linux, pinned: fine.
    LinuxPinned,
    /// Linux without an OS selector: at risk; some pods land on the untainted Windows pool and fail to pull.
    LinuxUnpinned,
    /// Windows 2022, pinned and tolerating: fine.
    Win22Pinned,
    /// Windows 2025 through its RuntimeClass: fine.
    Win25RuntimeClass,
    /// Windows 2019, pinned: fine.
    Win19Pinned,
    /// A 2019 image pinned to Windows but not to a build: some pods on 2022 nodes fail with 0xc0370101.
    Win19NoBuild,
    /// Pinned to 2025 without the toleration: pending.
    WinNoToleration,
    /// A Windows image tolerating the taint without an OS selector: some pods land on Linux.
    WinUnpinned,
}

const ARCHETYPES: &[(Archetype, usize)] = &[
    (Archetype::LinuxPinned, 50),
    (Archetype::LinuxUnpinned, 10),
    (Archetype::Win22Pinned, 16),
    (Archetype::Win25RuntimeClass, 6),
    (Archetype::Win19Pinned, 6),
    (Archetype::Win19NoBuild, 4),
    (Archetype::WinNoToleration, 2),
    (Archetype::WinUnpinned, 3),
];

const NAMESPACES: &[&str] = &[
    "shop", "finance", "web", "batch", "data", "identity", "search", "legacy",
];
const LINUX_IMAGES: &[&str] = &[
    "nginx:1.27",
    "ghcr.io/example/shop-api:2.3.1",
    "redis:7.4",
    "ghcr.io/example/worker:1.9.0",
    "python:3.12-slim",
    "ghcr.io/example/search-indexer:4.1.2",
];
const WIN22_IMAGES: &[&str] = &[
    "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022",
    "mcr.microsoft.com/windows/servercore:ltsc2022",
    "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
];
const WIN19_IMAGE: &str =
    "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019";
const WIN25_IMAGE: &str = "mcr.microsoft.com/windows/servercore:ltsc2025";

/// What goes wrong with one pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trouble {
    None,
    /// Pending: the scheduler's message.
    Pending,
    /// A Linux image pulled on Windows, or a Windows image on Linux (containerd's message).
    NoPlatform,
    /// Docker's wording for a Windows image on Linux.
    DockerOs,
    /// hcsshim's 0xc0370101.
    HcsMismatch,
    /// The job finished.
    Succeeded,
}

struct Builder<'a> {
    rng: Rng,
    pools: BTreeMap<Pool, Vec<&'a str>>,
    cursor: BTreeMap<Pool, usize>,
    total_nodes: usize,
    pods: Vec<Pod>,
    serial: usize,
}

fn toleration_windows() -> Toleration {
    Toleration {
        key: Some(WINDOWS_TAINT.0.into()),
        operator: Some("Equal".into()),
        value: Some(WINDOWS_TAINT.1.into()),
        effect: Some("NoSchedule".into()),
        toleration_seconds: None,
    }
}

fn toleration_everything() -> Toleration {
    Toleration {
        operator: Some("Exists".into()),
        ..Toleration::default()
    }
}

/// The tolerations the DefaultTolerationSeconds admission plugin adds to every pod.
fn default_tolerations() -> Vec<Toleration> {
    [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    .iter()
    .map(|k| Toleration {
        key: Some(k.to_string()),
        operator: Some("Exists".into()),
        effect: Some("NoExecute".into()),
        toleration_seconds: Some(300),
        value: None,
    })
    .collect()
}

fn container(name: &str, image: &str) -> Container {
    Container {
        name: name.into(),
        image: Some(image.into()),
        image_pull_policy: Some("IfNotPresent".into()),
        ports: Some(vec![ContainerPort {
            container_port: 8080,
            protocol: Some("TCP".into()),
            ..ContainerPort::default()
        }]),
        resources: Some(ResourceRequirements {
            requests: Some(quantities(&[("cpu", "100m"), ("memory", "128Mi")])),
            limits: Some(quantities(&[("memory", "512Mi")])),
            ..ResourceRequirements::default()
        }),
        termination_message_path: Some("/dev/termination-log".into()),
        termination_message_policy: Some("File".into()),
        ..Container::default()
    }
}

fn spec(images: &[&str], node_selector: &[(&str, &str)], tolerations: Vec<Toleration>) -> PodSpec {
    let mut all = tolerations;
    all.extend(default_tolerations());
    PodSpec {
        containers: images
            .iter()
            .enumerate()
            .map(|(i, image)| container(if i == 0 { "app" } else { "sidecar" }, image))
            .collect(),
        node_selector: Some(labels(node_selector)).filter(|s| !s.is_empty()),
        tolerations: Some(all),
        restart_policy: Some("Always".into()),
        dns_policy: Some("ClusterFirst".into()),
        service_account_name: Some("default".into()),
        scheduler_name: Some("default-scheduler".into()),
        termination_grace_period_seconds: Some(30),
        enable_service_links: Some(true),
        priority: Some(0),
        ..PodSpec::default()
    }
}

/// A workload: owner reference, labels and spec shared by its pods.
struct Workload {
    namespace: String,
    /// Owner (`apiVersion`, `kind`, `name`), or `None` for a bare pod.
    owner: Option<(&'static str, &'static str, String)>,
    /// The pod name prefix.
    prefix: String,
    labels: BTreeMap<String, String>,
    spec: PodSpec,
}

impl<'a> Builder<'a> {
    /// The next node of `pool` (round robin), if the pool has nodes.
    fn next_node(&mut self, pool: Pool) -> Option<String> {
        let nodes = self.pools.get(&pool)?;
        if nodes.is_empty() {
            return None;
        }
        let c = self.cursor.entry(pool).or_default();
        let name = nodes[*c % nodes.len()].to_string();
        *c += 1;
        Some(name)
    }

    fn pool_len(&self, pool: Pool) -> usize {
        self.pools.get(&pool).map_or(0, Vec::len)
    }

    /// Adds a pod of `w`, named `name` or `<prefix>-<unique suffix>`.
    fn pod(&mut self, w: &Workload, name: Option<String>, node: Option<String>, trouble: Trouble) {
        self.serial += 1;
        let name = name.unwrap_or_else(|| format!("{}-{}", w.prefix, unique_suffix(self.serial)));
        let mut spec = w.spec.clone();
        spec.node_name = node.clone();
        let token = format!("kube-api-access-{}", self.rng.suffix(5));
        spec.volumes = Some(vec![Volume {
            name: token.clone(),
            ..Volume::default()
        }]);
        for c in &mut spec.containers {
            c.volume_mounts = Some(vec![VolumeMount {
                name: token.clone(),
                mount_path: "/var/run/secrets/kubernetes.io/serviceaccount".into(),
                read_only: Some(true),
                ..VolumeMount::default()
            }]);
        }
        let image = spec
            .containers
            .first()
            .and_then(|c| c.image.clone())
            .unwrap_or_default();
        let condition = |t: &str, ok: bool| PodCondition {
            type_: t.into(),
            status: if ok { "True" } else { "False" }.into(),
            ..PodCondition::default()
        };
        let statuses = |state: ContainerState, last: Option<ContainerState>, ready: bool| {
            spec.containers
                .iter()
                .enumerate()
                .map(|(i, c)| ContainerStatus {
                    name: c.name.clone(),
                    image: c.image.clone().unwrap_or_default(),
                    image_id: String::new(),
                    ready: ready || i > 0,
                    restart_count: if last.is_some() && i == 0 { 7 } else { 0 },
                    started: Some(ready || i > 0),
                    state: Some(if i == 0 {
                        state.clone()
                    } else {
                        ContainerState {
                            running: Some(ContainerStateRunning::default()),
                            ..ContainerState::default()
                        }
                    }),
                    last_state: if i == 0 { last.clone() } else { None },
                    ..ContainerStatus::default()
                })
                .collect::<Vec<_>>()
        };
        let running = ContainerState {
            running: Some(ContainerStateRunning::default()),
            ..ContainerState::default()
        };
        let waiting = |reason: &str, message: String| ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some(reason.into()),
                message: Some(message),
            }),
            ..ContainerState::default()
        };
        let status = match trouble {
            Trouble::None => PodStatus {
                phase: Some("Running".into()),
                conditions: Some(vec![
                    condition("PodReadyToStartContainers", true),
                    condition("Initialized", true),
                    condition("Ready", true),
                    condition("ContainersReady", true),
                    condition("PodScheduled", true),
                ]),
                container_statuses: Some(statuses(running, None, true)),
                qos_class: Some("Burstable".into()),
                host_ip: Some("10.1.0.4".into()),
                pod_ip: Some(format!(
                    "10.244.{}.{}",
                    (self.serial / 256) % 256,
                    self.serial % 256
                )),
                ..PodStatus::default()
            },
            Trouble::Succeeded => PodStatus {
                phase: Some("Succeeded".into()),
                conditions: Some(vec![condition("PodScheduled", true)]),
                container_statuses: Some(statuses(
                    ContainerState {
                        terminated: Some(ContainerStateTerminated {
                            exit_code: 0,
                            reason: Some("Completed".into()),
                            ..ContainerStateTerminated::default()
                        }),
                        ..ContainerState::default()
                    },
                    None,
                    false,
                )),
                ..PodStatus::default()
            },
            Trouble::Pending => {
                let tainted = self.pool_len(Pool::Win25);
                let n = self.total_nodes;
                PodStatus {
                    phase: Some("Pending".into()),
                    conditions: Some(vec![PodCondition {
                        type_: "PodScheduled".into(),
                        status: "False".into(),
                        reason: Some("Unschedulable".into()),
                        message: Some(format!(
                            "0/{n} nodes are available: {tainted} node(s) had untolerated taint {{os: windows}}, {} node(s) didn't match Pod's node affinity/selector. preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling.",
                            n.saturating_sub(tainted)
                        )),
                        ..PodCondition::default()
                    }]),
                    qos_class: Some("Burstable".into()),
                    ..PodStatus::default()
                }
            }
            Trouble::NoPlatform | Trouble::DockerOs | Trouble::HcsMismatch => {
                let (reason, message) = match trouble {
                    Trouble::NoPlatform => (
                        "ErrImagePull",
                        format!(
                            "failed to pull and unpack image \"{image}\": no match for platform in manifest: not found"
                        ),
                    ),
                    Trouble::DockerOs => (
                        "ErrImagePull",
                        "image operating system \"windows\" cannot be used on this platform"
                            .to_string(),
                    ),
                    _ => (
                        "CreateContainerError",
                        "failed to create containerd container: hcs::CreateComputeSystem app: The operating system of the container does not match the operating system of the host. (0xc0370101)".to_string(),
                    ),
                };
                PodStatus {
                    phase: Some("Pending".into()),
                    conditions: Some(vec![
                        condition("Initialized", true),
                        condition("Ready", false),
                        condition("ContainersReady", false),
                        condition("PodScheduled", true),
                    ]),
                    container_statuses: Some(statuses(waiting(reason, message), None, false)),
                    qos_class: Some("Burstable".into()),
                    ..PodStatus::default()
                }
            }
        };
        let owner_references = w.owner.as_ref().map(|(api, kind, owner)| {
            vec![OwnerReference {
                api_version: api.to_string(),
                kind: kind.to_string(),
                name: owner.clone(),
                uid: format!("{:016x}", self.rng.next()),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]
        });
        self.pods.push(Pod {
            metadata: ObjectMeta {
                name: Some(name),
                namespace: Some(w.namespace.clone()),
                labels: Some(w.labels.clone()),
                owner_references,
                uid: Some(format!("{:016x}", self.rng.next())),
                resource_version: Some(self.serial.to_string()),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
            status: Some(status),
        });
    }

    fn budget_left(&self, total: usize) -> usize {
        total.saturating_sub(self.pods.len())
    }

    /// A DaemonSet with one pod per node of `pools`; `trouble` says what goes wrong on which pool.
    fn daemonset(
        &mut self,
        namespace: &str,
        name: &str,
        mut spec: PodSpec,
        pools: &[Pool],
        trouble: impl Fn(Pool) -> Trouble,
    ) {
        let hash = self.rng.suffix(10);
        let mut l = labels(&[("app.kubernetes.io/name", name)]);
        l.insert("controller-revision-hash".into(), hash);
        spec.tolerations
            .get_or_insert_with(Vec::new)
            .insert(0, toleration_everything());
        let w = Workload {
            namespace: namespace.into(),
            owner: Some(("apps/v1", "DaemonSet", name.into())),
            prefix: name.into(),
            labels: l,
            spec,
        };
        let nodes: Vec<(Pool, String)> = pools
            .iter()
            .flat_map(|p| {
                self.pools
                    .get(p)
                    .into_iter()
                    .flatten()
                    .map(move |n| (*p, n.to_string()))
            })
            .collect();
        for (pool, node) in nodes {
            let mut pod_spec = w.spec.clone();
            // The DaemonSet controller pins each pod to its node with matchFields.
            pod_spec.affinity = Some(daemonset_pin(&node));
            let pinned = Workload {
                spec: pod_spec,
                namespace: w.namespace.clone(),
                owner: w.owner.clone(),
                prefix: w.prefix.clone(),
                labels: w.labels.clone(),
            };
            self.pod(&pinned, None, Some(node), trouble(pool));
        }
    }
}

/// A 5-character suffix like a controller's, distinct for every `serial` below 27⁵ (multiplying by a number
/// prime to 27⁵ permutes the residues).
fn unique_suffix(serial: usize) -> String {
    const CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    const SPACE: u64 = 27 * 27 * 27 * 27 * 27;
    let mut x = (serial as u64 % SPACE).wrapping_mul(7_368_787) % SPACE;
    (0..5)
        .map(|_| {
            let c = CHARS[(x % 27) as usize];
            x /= 27;
            char::from(c)
        })
        .collect()
}

fn daemonset_pin(node: &str) -> k8s_openapi::api::core::v1::Affinity {
    use k8s_openapi::api::core::v1::{
        Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
    };
    Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_fields: Some(vec![NodeSelectorRequirement {
                        key: "metadata.name".into(),
                        operator: "In".into(),
                        values: Some(vec![node.to_string()]),
                    }]),
                    match_expressions: None,
                }],
            }),
            preferred_during_scheduling_ignored_during_execution: None,
        }),
        ..Affinity::default()
    }
}

fn runtime_class(name: &str, handler: &str, build: Option<u32>) -> RuntimeClassEntry {
    RuntimeClassEntry {
        api_version: "node.k8s.io/v1".into(),
        object: RuntimeClass {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            handler: handler.into(),
            overhead: None,
            scheduling: build.map(|b| Scheduling {
                node_selector: Some(labels(&[
                    ("kubernetes.io/os", "windows"),
                    ("node.kubernetes.io/windows-build", &format!("10.0.{b}")),
                ])),
                tolerations: Some(vec![toleration_windows()]),
            }),
        },
    }
}

/// A realistic mixed cluster of `nodes` nodes and exactly `pods` pods (see the module docs), the same for
/// the same arguments.
///
/// ```
/// let (nodes, pods, rcs) = winplace_synthetic::synthetic_cluster(50, 400, 1);
/// assert_eq!((nodes.len(), pods.len()), (50, 400));
/// assert!(rcs.iter().any(|rc| rc.object.metadata.name.as_deref() == Some("windows-2025")));
/// ```
pub fn synthetic_cluster(
    nodes: usize,
    pods: usize,
    seed: u64,
) -> (Vec<Node>, Vec<Pod>, Vec<RuntimeClassEntry>) {
    let mut rng = Rng(seed ^ 0x005E_ED0F_C1A5);
    let mut all_nodes = Vec::with_capacity(nodes);
    let mut i = 0;
    for (pool, count) in pool_sizes(nodes) {
        for ordinal in 0..count {
            all_nodes.push(node(pool, i, ordinal, &mut rng));
            i += 1;
        }
    }
    let runtime_classes = vec![
        runtime_class("windows-2019", "runhcs-wcow-process", Some(17763)),
        runtime_class("windows-2022", "runhcs-wcow-process", Some(20348)),
        runtime_class("windows-2025", "runhcs-wcow-process", Some(26100)),
        runtime_class("windows-docker", "docker", None),
    ];
    let mut b = Builder {
        rng: Rng(rng.next()),
        pools: pools_of(&all_nodes),
        cursor: BTreeMap::new(),
        total_nodes: nodes,
        pods: Vec::with_capacity(pods),
        serial: 0,
    };
    add_daemonsets(&mut b, pods);
    add_workloads(&mut b, pods);
    let pods_out = std::mem::take(&mut b.pods);
    (all_nodes, pods_out, runtime_classes)
}

/// `total` nodes of which `windows` run Windows, with the pools of [`synthetic_cluster`]: its Windows
/// nodes picked evenly across their pools from a cluster large enough, then its Linux nodes, in the
/// cluster's order. The Kubernetes envelope with a Windows share other than the demo's 28 % (e.g.
/// 5,000 nodes of which 500 run Windows, the admission benchmark's).
///
/// ```
/// let nodes = winplace_synthetic::mixed_nodes(100, 10, 1);
/// assert_eq!(nodes.len(), 100);
/// let windows = nodes.iter().filter(|n| n.metadata.labels.as_ref().unwrap()["kubernetes.io/os"] == "windows");
/// assert_eq!(windows.count(), 10);
/// ```
pub fn mixed_nodes(total: usize, windows: usize, seed: u64) -> Vec<Node> {
    let windows = windows.min(total);
    let counts = |n: usize| {
        let sizes = pool_sizes(n);
        let w: usize = sizes
            .iter()
            .filter(|(p, _)| p.windows())
            .map(|(_, c)| c)
            .sum();
        (w, n - w)
    };
    let mut n = total;
    while counts(n).0 < windows || counts(n).1 < total - windows {
        n += 1;
    }
    let (all, _, _) = synthetic_cluster(n, 0, seed);
    let is_windows = |node: &Node| {
        node.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("kubernetes.io/os"))
            == Some(&"windows".to_string())
    };
    let available = counts(n).0;
    // The k-th Windows node kept is the ⌊k·available/windows⌋-th: evenly across the pools.
    let mut picked = (0..windows).map(|k| k * available / windows).peekable();
    let (mut w, mut linux) = (0, 0);
    all.into_iter()
        .filter(|node| {
            if is_windows(node) {
                let keep = picked.next_if_eq(&w).is_some();
                w += 1;
                keep
            } else {
                linux += 1;
                linux <= total - windows
            }
        })
        .collect()
}

/// The nodes' names by pool (their `agentpool` label).
fn pools_of(nodes: &[Node]) -> BTreeMap<Pool, Vec<&str>> {
    let mut pools: BTreeMap<Pool, Vec<&str>> = BTreeMap::new();
    for n in nodes {
        let pool = n
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("agentpool"))
            .map(String::as_str);
        let pool = match pool {
            Some("win19") => Pool::Win19,
            Some("win22") => Pool::Win22,
            Some("win25") => Pool::Win25,
            Some("win22open") => Pool::Win22Open,
            Some("system") => Pool::LinuxSystem,
            _ => Pool::LinuxApps,
        };
        pools
            .entry(pool)
            .or_default()
            .push(n.metadata.name.as_deref().unwrap_or(""));
    }
    pools
}

/// `count` misplaced, unowned Windows pods: bare pods (no owner, so each is a workload and a template of
/// its own) running a Windows Server 2022 image, tolerating the Windows taint but selecting no OS, bound
/// round robin to the Linux apps nodes of `nodes` (of [`synthetic_cluster`]), where the pull finds no
/// Linux entry. The worst case of the audit's memory per pod: every pod carries catalogue findings, a
/// live-state finding and an incident of its own. Pending, unbound, when there is no Linux apps node.
///
/// ```
/// let (nodes, _, _) = winplace_synthetic::synthetic_cluster(20, 0, 1);
/// let pods = winplace_synthetic::misplaced_unowned_pods(&nodes, 50, 1);
/// assert_eq!(pods.len(), 50);
/// assert!(pods.iter().all(|p| p.metadata.owner_references.is_none()));
/// assert!(pods.iter().all(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref())
///     .is_some_and(|n| n.starts_with("apps-"))));
/// ```
pub fn misplaced_unowned_pods(nodes: &[Node], count: usize, seed: u64) -> Vec<Pod> {
    let mut b = Builder {
        rng: Rng(seed ^ 0x0057_7A4E_D0D5),
        pools: pools_of(nodes),
        cursor: BTreeMap::new(),
        total_nodes: nodes.len(),
        pods: Vec::with_capacity(count),
        serial: 0,
    };
    let image = WIN22_IMAGES[1];
    for i in 0..count {
        let w = Workload {
            namespace: NAMESPACES[i % NAMESPACES.len()].to_string(),
            owner: None,
            prefix: "stray-win".into(),
            labels: labels(&[("app", "stray-win")]),
            spec: spec(&[image], &[], vec![toleration_windows()]),
        };
        let node = b.next_node(Pool::LinuxApps);
        let trouble = if node.is_some() {
            Trouble::NoPlatform
        } else {
            Trouble::Pending
        };
        b.pod(&w, None, node, trouble);
    }
    b.pods
}

/// The DaemonSets, each only while the DaemonSets together stay under 40 % of the pod budget.
fn add_daemonsets(b: &mut Builder<'_>, pods: usize) {
    use Pool::*;
    let linux = [LinuxSystem, LinuxApps];
    let windows = [Win19, Win22, Win25, Win22Open];
    let all = [Win19, Win22, Win25, Win22Open, LinuxSystem, LinuxApps];
    let count = |b: &Builder<'_>, ps: &[Pool]| ps.iter().map(|p| b.pool_len(*p)).sum::<usize>();
    let cap = pods * 2 / 5;
    let linux_pinned = || {
        spec(
            &["registry.k8s.io/kube-proxy:v1.31.2"],
            &[("kubernetes.io/os", "linux")],
            vec![],
        )
    };
    let mut hostprocess = spec(
        &["ghcr.io/example/kube-proxy-windows:v1.31.2-hostprocess"],
        &[("kubernetes.io/os", "windows")],
        vec![],
    );
    hostprocess.security_context = Some(PodSecurityContext {
        windows_options: Some(WindowsSecurityContextOptions {
            host_process: Some(true),
            run_as_user_name: Some("NT AUTHORITY\\system".into()),
            ..WindowsSecurityContextOptions::default()
        }),
        ..PodSecurityContext::default()
    });
    hostprocess.host_network = Some(true);
    let sets: Vec<(&str, &str, PodSpec, Vec<Pool>)> = vec![
        ("kube-system", "kube-proxy", linux_pinned(), linux.to_vec()),
        (
            "monitoring",
            "node-exporter",
            spec(
                &["quay.io/prometheus/node-exporter:v1.8.2"],
                &[("kubernetes.io/os", "linux")],
                vec![],
            ),
            linux.to_vec(),
        ),
        (
            "kube-system",
            "kube-proxy-windows",
            hostprocess,
            windows.to_vec(),
        ),
        (
            "logging",
            "fluent-bit",
            spec(&["cr.fluentbit.io/fluent/fluent-bit:3.1.9"], &[], vec![]),
            all.to_vec(),
        ),
        (
            "kube-system",
            "csi-smb-node-win",
            spec(
                &["mcr.microsoft.com/windows/nanoserver:ltsc2022"],
                &[("kubernetes.io/os", "windows")],
                vec![],
            ),
            windows.to_vec(),
        ),
    ];
    let mut used = 0;
    for (ns, name, s, ps) in sets {
        let n = count(b, &ps);
        if n == 0 || used + n > cap {
            continue;
        }
        used += n;
        let trouble = move |pool: Pool| match name {
            // Linux image on Windows nodes: the pull finds no Windows entry.
            "fluent-bit" if pool.windows() => Trouble::NoPlatform,
            // A 2022 image on 2019 hosts.
            "csi-smb-node-win" if pool == Win19 => Trouble::HcsMismatch,
            _ => Trouble::None,
        };
        b.daemonset(ns, name, s, &ps, trouble);
    }
}

/// Replica counts: most workloads are small, a few are large.
fn replicas(rng: &mut Rng) -> usize {
    const SIZES: &[usize] = &[1, 2, 2, 3, 3, 3, 5, 5, 8, 10, 12, 20, 30, 50, 100, 300];
    SIZES[rng.below(SIZES.len())]
}

fn pick(rng: &mut Rng) -> Archetype {
    let total: usize = ARCHETYPES.iter().map(|(_, w)| w).sum();
    let mut r = rng.below(total);
    for (a, w) in ARCHETYPES {
        if r < *w {
            return *a;
        }
        r -= w;
    }
    Archetype::LinuxPinned
}

fn add_workloads(b: &mut Builder<'_>, total: usize) {
    // A few fixed ones first (when the budget allows): a StatefulSet of each OS, a Job, bare pods.
    let mut serial = 0usize;
    let mut first = true;
    while b.budget_left(total) > 0 {
        serial += 1;
        let left = b.budget_left(total);
        let namespace = NAMESPACES[b.rng.below(NAMESPACES.len())].to_string();
        if first {
            first = false;
            fixed_workloads(b, total);
            continue;
        }
        // One of each first, so that even a small cluster shows every kind.
        let archetype = match ARCHETYPES.get(serial - 2) {
            Some((a, _)) => *a,
            None => pick(&mut b.rng),
        };
        let n = replicas(&mut b.rng).min(left);
        let name = format!("{}-{serial}", archetype_name(archetype));
        let (s, pools): (PodSpec, Vec<Pool>) = archetype_spec(archetype, &mut b.rng);
        // Every 10th Deployment is mid-rollout: two ReplicaSets.
        let rollout = serial.is_multiple_of(10) && n >= 2;
        let hashes: Vec<String> = (0..if rollout { 2 } else { 1 })
            .map(|_| b.rng.suffix(9))
            .collect();
        for (h, hash) in hashes.iter().enumerate() {
            let count = if rollout {
                if h == 0 { n / 2 } else { n - n / 2 }
            } else {
                n
            };
            let mut l = labels(&[("app", &name)]);
            l.insert("pod-template-hash".into(), hash.clone());
            let mut pod_spec = s.clone();
            if h == 1
                && let Some(c) = pod_spec.containers.first_mut()
            {
                // The new revision changes an environment variable.
                c.env = Some(vec![k8s_openapi::api::core::v1::EnvVar {
                    name: "REVISION".into(),
                    value: Some("2".into()),
                    value_from: None,
                }]);
            }
            let rs = format!("{name}-{hash}");
            let w = Workload {
                namespace: namespace.clone(),
                owner: Some(("apps/v1", "ReplicaSet", rs.clone())),
                prefix: rs,
                labels: l,
                spec: pod_spec,
            };
            for k in 0..count {
                let (node, trouble) = place(b, archetype, &pools, k);
                b.pod(&w, None, node, trouble);
            }
        }
    }
}

fn archetype_name(a: Archetype) -> &'static str {
    match a {
        Archetype::LinuxPinned => "api",
        Archetype::LinuxUnpinned => "cart",
        Archetype::Win22Pinned => "iis-web",
        Archetype::Win25RuntimeClass => "win25-svc",
        Archetype::Win19Pinned => "legacy-app",
        Archetype::Win19NoBuild => "report-renderer",
        Archetype::WinNoToleration => "pdf-export",
        Archetype::WinUnpinned => "win-agent",
    }
}

fn archetype_spec(a: Archetype, rng: &mut Rng) -> (PodSpec, Vec<Pool>) {
    use Pool::*;
    let linux_image = LINUX_IMAGES[rng.below(LINUX_IMAGES.len())];
    let win22_image = WIN22_IMAGES[rng.below(WIN22_IMAGES.len())];
    let win = ("kubernetes.io/os", "windows");
    match a {
        Archetype::LinuxPinned => (
            spec(&[linux_image], &[("kubernetes.io/os", "linux")], vec![]),
            vec![LinuxApps],
        ),
        Archetype::LinuxUnpinned => (spec(&[linux_image], &[], vec![]), vec![LinuxApps]),
        Archetype::Win22Pinned => (
            spec(
                &[win22_image],
                &[win, ("node.kubernetes.io/windows-build", "10.0.20348")],
                vec![toleration_windows()],
            ),
            vec![Win22],
        ),
        Archetype::Win25RuntimeClass => {
            // As RuntimeClass admission leaves it: the class's selector and toleration merged in.
            let mut s = spec(
                &[WIN25_IMAGE],
                &[win, ("node.kubernetes.io/windows-build", "10.0.26100")],
                vec![toleration_windows()],
            );
            s.runtime_class_name = Some("windows-2025".into());
            (s, vec![Win25])
        }
        Archetype::Win19Pinned => (
            spec(
                &[WIN19_IMAGE],
                &[win, ("node.kubernetes.io/windows-build", "10.0.17763")],
                vec![toleration_windows()],
            ),
            vec![Win19],
        ),
        Archetype::Win19NoBuild => (
            spec(&[WIN19_IMAGE], &[win], vec![toleration_windows()]),
            vec![Win19],
        ),
        Archetype::WinNoToleration => (
            spec(
                &[WIN25_IMAGE],
                &[win, ("node.kubernetes.io/windows-build", "10.0.26100")],
                vec![],
            ),
            vec![],
        ),
        Archetype::WinUnpinned => (
            spec(&[win22_image], &[], vec![toleration_windows()]),
            vec![Win22],
        ),
    }
}

/// Where the `k`-th pod of a workload runs, and what goes wrong with it.
fn place(b: &mut Builder<'_>, a: Archetype, pools: &[Pool], k: usize) -> (Option<String>, Trouble) {
    use Pool::*;
    let (pool, trouble) = match a {
        // Every 25th lands on the untainted Windows pool (nothing keeps it off) and cannot pull.
        Archetype::LinuxUnpinned if k % 25 == 24 && b.pool_len(Win22Open) > 0 => {
            (Win22Open, Trouble::NoPlatform)
        }
        // Every 3rd lands on a 2022 node that cannot run the 2019 image.
        Archetype::Win19NoBuild if k % 3 == 2 && b.pool_len(Win22) > 0 => {
            (Win22, Trouble::HcsMismatch)
        }
        Archetype::WinNoToleration => return (None, Trouble::Pending),
        // Every 8th lands on Linux (it tolerates the taint but selects no OS).
        Archetype::WinUnpinned if k % 8 == 7 => (
            LinuxApps,
            if k % 16 == 15 {
                Trouble::DockerOs
            } else {
                Trouble::NoPlatform
            },
        ),
        _ => (pools.first().copied().unwrap_or(LinuxApps), Trouble::None),
    };
    match b.next_node(pool) {
        Some(node) => (Some(node), trouble),
        // A cluster too small for the pool: leave the pod pending on its selector.
        None => (None, Trouble::Pending),
    }
}

/// A Windows and a Linux StatefulSet, a Job with finished pods, and bare pods (one a Linux debug pod bound
/// by `nodeName` to a tainted Windows node).
fn fixed_workloads(b: &mut Builder<'_>, total: usize) {
    use Pool::*;
    let sts = |name: &str, s: PodSpec| Workload {
        namespace: "data".into(),
        owner: Some(("apps/v1", "StatefulSet", name.to_string())),
        prefix: name.to_string(),
        labels: labels(&[
            ("app", name),
            ("controller-revision-hash", &format!("{name}-7c9d5f6b8")),
        ]),
        spec: s,
    };
    let postgres = sts(
        "postgres",
        spec(&["postgres:16.4"], &[("kubernetes.io/os", "linux")], vec![]),
    );
    let sql = sts(
        "mssql-win",
        spec(
            &[WIN22_IMAGES[1]],
            &[
                ("kubernetes.io/os", "windows"),
                ("node.kubernetes.io/windows-build", "10.0.20348"),
            ],
            vec![toleration_windows()],
        ),
    );
    for (w, pool) in [(postgres, LinuxApps), (sql, Win22)] {
        for k in 0..3 {
            if b.budget_left(total) == 0 {
                return;
            }
            let node = b.next_node(pool);
            let trouble = if node.is_some() {
                Trouble::None
            } else {
                Trouble::Pending
            };
            b.pod(&w, Some(format!("{}-{k}", w.prefix)), node, trouble);
        }
    }
    let mut job_spec = spec(
        &["ghcr.io/example/nightly-report:2.0"],
        &[("kubernetes.io/os", "linux")],
        vec![],
    );
    job_spec.restart_policy = Some("Never".into());
    let job = Workload {
        namespace: "batch".into(),
        owner: Some(("batch/v1", "Job", "nightly-report-28911240".into())),
        prefix: "nightly-report-28911240".into(),
        labels: labels(&[("job-name", "nightly-report-28911240")]),
        spec: job_spec,
    };
    for _ in 0..4 {
        if b.budget_left(total) == 0 {
            return;
        }
        let node = b.next_node(LinuxApps);
        b.pod(&job, None, node, Trouble::Succeeded);
    }
    let debug = Workload {
        namespace: "default".into(),
        owner: None,
        prefix: "debug-shell".into(),
        labels: labels(&[("run", "debug-shell")]),
        spec: spec(&["busybox:1.36"], &[], vec![]),
    };
    if b.budget_left(total) > 0 {
        let node = b.next_node(Win22).or_else(|| b.next_node(LinuxApps));
        let trouble = if node.as_deref().is_some_and(|n| n.starts_with("win")) {
            Trouble::NoPlatform
        } else {
            Trouble::None
        };
        b.pod(&debug, Some("debug-shell".into()), node, trouble);
    }
}

/// The first Windows node of `nodes` that carries a taint: the node whose taint the benchmarks take away
/// (a change every template reads, since the Windows nodes' taints are cluster-wide facts).
pub fn first_tainted_windows_node(nodes: &[Node]) -> Option<&Node> {
    nodes.iter().find(|n| {
        let os = n
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("kubernetes.io/os"));
        os.map(String::as_str) == Some("windows")
            && n.spec
                .as_ref()
                .and_then(|s| s.taints.as_ref())
                .is_some_and(|t| !t.is_empty())
    })
}

/// `count` Events about `pods`, as `kubectl get events -A -o json` items (one JSON object per string):
/// round-robin over the pods, alternately `v1` and `events.k8s.io/v1`; one in five says what winplace
/// explains (a Windows pod's container of another build, a pending pod's untolerated taint), the rest
/// is the ordinary traffic of a cluster (`Scheduled`, `Pulled`, `Created`, `Started`). For the audit's
/// scale test with Events (README "Numbers").
///
/// ```
/// let (_, pods, _) = winplace_synthetic::synthetic_cluster(10, 50, 1);
/// let events: Vec<String> = winplace_synthetic::synthetic_events(&pods, 100).collect();
/// assert_eq!(events.len(), 100);
/// assert!(events[0].contains("\"kind\":\"Event\""));
/// assert_eq!(events.iter().filter(|e| e.contains("does not match the host")).count()
///     + events.iter().filter(|e| e.contains("untolerated taint")).count(), 20);
/// ```
pub fn synthetic_events(pods: &[Pod], count: usize) -> impl Iterator<Item = String> + '_ {
    (0..count).filter_map(move |i| {
        let pod = pods.get(i % pods.len().max(1))?;
        let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
        let name = pod.metadata.name.as_deref().unwrap_or("");
        let bound = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some();
        let (reason, message) = match i % 5 {
            0 if bound => (
                "Failed",
                "Error: failed to create containerd container: hcs::CreateComputeSystem 4b1c: The container operating system does not match the host operating system.: unknown",
            ),
            0 => (
                "FailedScheduling",
                "0/5000 nodes are available: 1200 node(s) had untolerated taint {os: windows}, 3800 node(s) didn't match Pod's node affinity/selector. preemption: 0/5000 nodes are available: 5000 Preemption is not helpful for scheduling.",
            ),
            1 => ("Scheduled", "Successfully assigned the pod to a node"),
            2 => ("Pulled", "Container image \\\"nginx:1.27\\\" already present on machine"),
            3 => ("Created", "Created container: app"),
            _ => ("Started", "Started container app"),
        };
        Some(if i % 2 == 0 {
            format!(
                "{{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{{\"name\":\"{name}.{i:x}\",\"namespace\":\"{ns}\"}},\"involvedObject\":{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"{name}\",\"namespace\":\"{ns}\"}},\"reason\":\"{reason}\",\"type\":\"Warning\",\"count\":{},\"firstTimestamp\":\"2026-11-25T09:00:00Z\",\"lastTimestamp\":\"2026-11-25T09:30:00Z\",\"source\":{{\"component\":\"kubelet\"}},\"message\":\"{message}\"}}",
                1 + i % 7
            )
        } else {
            format!(
                "{{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{{\"name\":\"{name}.{i:x}\",\"namespace\":\"{ns}\"}},\"regarding\":{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"{name}\",\"namespace\":\"{ns}\"}},\"reason\":\"{reason}\",\"type\":\"Warning\",\"action\":\"Binding\",\"reportingController\":\"default-scheduler\",\"reportingInstance\":\"default-scheduler-0\",\"eventTime\":\"2026-11-25T09:00:00.000000Z\",\"note\":\"{message}\"}}"
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_determinism() {
        for (n, m) in [(0, 0), (3, 10), (20, 200), (120, 3_000)] {
            let (nodes, pods, rcs) = synthetic_cluster(n, m, 42);
            assert_eq!((nodes.len(), pods.len()), (n, m), "{n} {m}");
            assert_eq!(rcs.len(), 4);
            let again = synthetic_cluster(n, m, 42);
            assert_eq!(again.1, pods, "same seed, same cluster");
        }
        let a = synthetic_cluster(20, 200, 1).1;
        let b = synthetic_cluster(20, 200, 2).1;
        assert_ne!(a, b, "another seed, another cluster");
    }

    #[test]
    fn names_are_unique_and_pods_bound_to_known_nodes() {
        let (nodes, pods, _) = synthetic_cluster(200, 5_000, 3);
        let names: std::collections::BTreeSet<&str> = nodes
            .iter()
            .filter_map(|n| n.metadata.name.as_deref())
            .collect();
        assert_eq!(names.len(), 200);
        let keys: std::collections::BTreeSet<(String, String)> = pods
            .iter()
            .map(|p| {
                (
                    p.metadata.namespace.clone().unwrap_or_default(),
                    p.metadata.name.clone().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(keys.len(), 5_000, "pod names are unique");
        for p in &pods {
            if let Some(n) = p.spec.as_ref().and_then(|s| s.node_name.as_deref()) {
                assert!(names.contains(n), "{n}");
            }
        }
    }
}
