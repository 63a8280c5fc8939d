//! The audit at the Kubernetes scale envelope, with timings and memory.
//!
//! `cargo run --release --example audit_scale -- [NODES] [PODS] [--parse | --write-json DIR | --read-json DIR]`
//! (default 5,000 nodes and 150,000 pods). Prints the time of the full audit (`Audit::reset` + summary), of
//! incremental changes, and the process's resident memory after each stage (`VmHWM` is the peak). Times are
//! wall clock and this thread's CPU time (they differ when other processes compete for the cores).
//!
//! * `--parse`: the time to serialize the same cluster as `kubectl get -o json` text and parse it back with
//!   serde_json into k8s-openapi types (this holds the text and a second copy of the cluster).
//! * `--write-json DIR`: writes `DIR/nodes.json` and `DIR/pods.json` (`NodeList`, `PodList`) and exits.
//! * `--read-json DIR`: audits those files streaming, one item at a time (`Audit::begin_reset`,
//!   `reset_node`, `reset_pod`, `finish_reset`), so that the peak memory is the audit's own:
//!   `/usr/bin/time -v ... --read-json DIR` reports it as "Maximum resident set size".

use std::time::Instant;

use k8s_openapi::api::core::v1::{Node, Pod};
use winplace_rules::Settings;
use winplace_rules::audit::{Audit, Change};
use winplace_synthetic::{first_tainted_windows_node, synthetic_cluster};

fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or_else(|| "?".to_string(), |kb| format!("{} MiB", kb / 1024))
    };
    format!("rss {}, peak {}", field("VmRSS:"), field("VmHWM:"))
}

/// CPU time of this thread in milliseconds (utime + stime from /proc; 10 ms resolution), so that figures
/// stay meaningful when other processes compete for the cores.
fn cpu_ms() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse().ok())
        .collect();
    fields.iter().sum::<u64>() * 10
}

/// Wall time and CPU time since `start`.
struct Clock(Instant, u64);

impl Clock {
    fn start() -> Self {
        Clock(Instant::now(), cpu_ms())
    }
}

fn ms(start: &Clock) -> String {
    format!(
        "{:.1} ms (cpu {} ms)",
        start.0.elapsed().as_secs_f64() * 1e3,
        cpu_ms().saturating_sub(start.1)
    )
}

/// Calls `each` for every item of a `kind: *List` JSON document, deserializing one item at a time.
struct Items<'f, T, F: FnMut(T)>(&'f mut F, std::marker::PhantomData<T>);

impl<'de, T: serde::Deserialize<'de>, F: FnMut(T)> serde::de::DeserializeSeed<'de>
    for Items<'_, T, F>
{
    type Value = usize;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, T: serde::Deserialize<'de>, F: FnMut(T)> serde::de::Visitor<'de> for Items<'_, T, F> {
    type Value = usize;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of objects")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut n = 0;
        while let Some(item) = seq.next_element::<T>()? {
            (self.0)(item);
            n += 1;
        }
        Ok(n)
    }
}

/// The top-level list object: `items` is streamed, the rest ignored.
struct ListOf<'f, T, F: FnMut(T)>(&'f mut F, std::marker::PhantomData<T>);

impl<'de, T: serde::Deserialize<'de>, F: FnMut(T)> serde::de::DeserializeSeed<'de>
    for ListOf<'_, T, F>
{
    type Value = usize;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: serde::Deserialize<'de>, F: FnMut(T)> serde::de::Visitor<'de> for ListOf<'_, T, F> {
    type Value = usize;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a List object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        let mut n = 0;
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                n = map.next_value_seed(Items(&mut *self.0, std::marker::PhantomData))?;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(n)
    }
}

fn stream<T: serde::de::DeserializeOwned>(
    path: &std::path::Path,
    mut each: impl FnMut(T),
) -> usize {
    use serde::de::DeserializeSeed;
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(file));
    ListOf(&mut each, std::marker::PhantomData)
        .deserialize(&mut de)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir_after = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map(std::path::PathBuf::from)
    };
    if let Some(dir) = dir_after("--read-json") {
        println!("start: {}", memory());
        let mut audit = Audit::new(Settings::default());
        let t = Clock::start();
        audit.begin_reset();
        let nodes = stream(&dir.join("nodes.json"), |n: Node| audit.reset_node(&n));
        stream(
            &dir.join("runtimeclasses.json"),
            |rc: k8s_openapi::api::node::v1::RuntimeClass| {
                audit.reset_runtime_class(&winplace_rules::model::RuntimeClassEntry {
                    api_version: "node.k8s.io/v1".to_string(),
                    object: rc,
                })
            },
        );
        let pods = stream(&dir.join("pods.json"), |p: Pod| audit.reset_pod(&p));
        let read = ms(&t);
        let t2 = Clock::start();
        audit.finish_reset();
        let summary = audit.summary();
        println!(
            "streamed {nodes} nodes and {pods} pods from JSON in {read}; audit {} ({} workloads, {} templates) ({})",
            ms(&t2),
            summary.workloads,
            audit.template_count(),
            memory()
        );
        return;
    }
    let numbers: Vec<usize> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .filter_map(|a| a.parse().ok())
        .collect();
    let nodes_n = numbers.first().copied().unwrap_or(5_000);
    let pods_n = numbers.get(1).copied().unwrap_or(150_000);
    let parse = args.iter().any(|a| a == "--parse");
    println!("start: {}", memory());

    let t = Clock::start();
    let (nodes, pods, runtime_classes) = synthetic_cluster(nodes_n, pods_n, 1);
    println!(
        "synthetic cluster: {} nodes, {} pods in {} ({})",
        nodes.len(),
        pods.len(),
        ms(&t),
        memory()
    );

    if let Some(dir) = dir_after("--write-json") {
        let write = |name: &str, text: String| {
            std::fs::write(dir.join(name), text).unwrap_or_else(|e| panic!("{name}: {e}"));
        };
        let node_list = k8s_openapi::List::<Node> {
            items: nodes,
            metadata: Default::default(),
        };
        write(
            "nodes.json",
            serde_json::to_string(&node_list).expect("nodes"),
        );
        let pod_list = k8s_openapi::List::<Pod> {
            items: pods,
            metadata: Default::default(),
        };
        write("pods.json", serde_json::to_string(&pod_list).expect("pods"));
        let rc_list = k8s_openapi::List::<k8s_openapi::api::node::v1::RuntimeClass> {
            items: runtime_classes.into_iter().map(|e| e.object).collect(),
            metadata: Default::default(),
        };
        write(
            "runtimeclasses.json",
            serde_json::to_string(&rc_list).expect("runtime classes"),
        );
        println!(
            "wrote {}/nodes.json, pods.json and runtimeclasses.json",
            dir.display()
        );
        return;
    }
    if parse {
        let t = Clock::start();
        let node_list = k8s_openapi::List::<Node> {
            items: nodes.clone(),
            metadata: Default::default(),
        };
        let pod_list = k8s_openapi::List::<Pod> {
            items: pods.clone(),
            metadata: Default::default(),
        };
        let node_text = serde_json::to_string(&node_list).expect("serialize");
        let pod_text = serde_json::to_string(&pod_list).expect("serialize");
        drop((node_list, pod_list));
        println!(
            "kubectl-style JSON: {:.1} MiB in {} ({})",
            (node_text.len() + pod_text.len()) as f64 / 1048576.0,
            ms(&t),
            memory()
        );
        let t = Clock::start();
        let n: k8s_openapi::List<Node> = serde_json::from_str(&node_text).expect("nodes");
        let p: k8s_openapi::List<Pod> = serde_json::from_str(&pod_text).expect("pods");
        println!(
            "parse (serde_json::from_str into k8s-openapi types): {} nodes, {} pods in {} ({})",
            n.items.len(),
            p.items.len(),
            ms(&t),
            memory()
        );
        return;
    }

    let mut audit = Audit::new(Settings::default());
    let t = Clock::start();
    audit.reset(&nodes, &pods, &runtime_classes);
    let reset = ms(&t);
    // `--events N`: N Events about the pods (one in five explained), each decoded from its JSON text
    // and applied as the live source does: incidents at scale, in bounded memory.
    if let Some(n) = args
        .iter()
        .position(|a| a == "--events")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse::<usize>().ok())
    {
        let t = Clock::start();
        let mut kept = 0;
        for text in winplace_synthetic::synthetic_events(&pods, n) {
            if let Ok(Some(event)) = winplace_rules::model::events::decode_event_json(&text) {
                kept += 1;
                audit.apply(Change::Event(Box::new(event)));
            }
        }
        println!(
            "{n} events decoded, {kept} explained and applied one by one in {}: {} incidents ({})",
            ms(&t),
            audit.incidents().count(),
            memory()
        );
    }
    let t2 = Clock::start();
    let summary = audit.summary();
    println!(
        "full audit: reset {reset} + summary {} = {} ({} templates evaluated; {} workloads; {} findings) ({})",
        ms(&t2),
        ms(&t),
        audit.template_count(),
        summary.workloads,
        summary.findings.errors + summary.findings.warnings + summary.findings.infos,
        memory()
    );
    let t = Clock::start();
    drop((nodes, pods, runtime_classes));
    println!(
        "dropping the input objects (what Change::Reset adds): {} ({})",
        ms(&t),
        memory()
    );
    println!("workload states: {:?}", summary.workload_states);

    // One pod changes: a new replica of a known template moves in.
    let (_, more, _) = synthetic_cluster(nodes_n, pods_n + 1, 1);
    let pod = more.into_iter().last().expect("a pod");
    let t = Clock::start();
    let touched = audit.apply(Change::Pod(Box::new(pod)));
    println!("incremental: one pod in {} (touched {:?})", ms(&t), touched);

    // One node changes a label no pod selects on: a local change, no template is re-run (the index is
    // updated in place).
    let (mut nodes, _, _) = synthetic_cluster(nodes_n, 0, 1);
    if let Some(node) = nodes.first_mut() {
        if let Some(labels) = node.metadata.labels.as_mut() {
            labels.insert("example.com/pool-generation".into(), "2".into());
        }
        let t = Clock::start();
        let touched = audit.apply(Change::Node(Box::new(node.clone())));
        println!(
            "incremental: one node label in {} ({} nodes, {} workloads touched)",
            ms(&t),
            touched.nodes.len(),
            touched.workloads.len()
        );
    }
    // A Windows node loses its taint: read cluster-wide, so every template is re-run.
    if let Some(mut node) = first_tainted_windows_node(&nodes).cloned() {
        if let Some(spec) = node.spec.as_mut() {
            spec.taints = None;
        }
        let t = Clock::start();
        let touched = audit.apply(Change::Node(Box::new(node)));
        println!(
            "incremental: a Windows node's taint in {} ({} nodes, {} workloads touched; every template re-run)",
            ms(&t),
            touched.nodes.len(),
            touched.workloads.len()
        );
    }
    let t = Clock::start();
    let report = audit.report();
    println!(
        "report(): {} nodes, {} workloads (rows shared, not cloned) in {} ({})",
        report.nodes.len(),
        report.workloads.len(),
        ms(&t),
        memory()
    );
}
