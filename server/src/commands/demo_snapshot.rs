//! `winplace demo-snapshot`: a synthetic cluster as `kubectl get -o json` would print it (for demos and
//! scale tests).

use clap::Args;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `winplace demo-snapshot`.
#[derive(Debug, Clone, Args)]
pub struct DemoSnapshotArgs {
    /// Number of nodes.
    #[arg(long, default_value_t = 100)]
    pub nodes: usize,
    /// Number of pods.
    #[arg(long, default_value_t = 3000)]
    pub pods: usize,
    /// Events about the pods to add (one in five explained by winplace's error signatures, the rest
    /// ordinary: Scheduled, Pulled, Created, Started), as `kubectl get …,events -A -o json` lists them.
    #[arg(long, default_value_t = 0)]
    pub events: usize,
    /// Misplaced, unowned Windows pods to add: bare pods of a Windows image bound to Linux nodes, each a
    /// workload of its own with findings and an incident of its own (the audit's worst case per pod, for
    /// memory figures beside the demo's mostly healthy pods).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub misplaced_pods: usize,
    /// Seed: the same seed gives the same cluster.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output file (default: standard output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Runs `winplace demo-snapshot`.
pub fn run(args: DemoSnapshotArgs) -> anyhow::Result<ExitCode> {
    let (nodes, mut pods, rcs) =
        winplace_synthetic::synthetic_cluster(args.nodes, args.pods, args.seed);
    pods.extend(winplace_synthetic::misplaced_unowned_pods(
        &nodes,
        args.misplaced_pods,
        args.seed,
    ));
    match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
            write_list(&mut w, &nodes, &pods, &rcs, args.events)?;
            w.flush()?;
        }
        None => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            write_list(&mut w, &nodes, &pods, &rcs, args.events)?;
            w.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a `kubectl get -o json` List: `{"apiVersion":"v1","kind":"List","items":[...]}`, one item
/// per line, with `events` synthetic Events about the pods after the other objects.
pub fn write_list(
    w: &mut impl std::io::Write,
    nodes: &[k8s_openapi::api::core::v1::Node],
    pods: &[k8s_openapi::api::core::v1::Pod],
    rcs: &[winplace_rules::model::RuntimeClassEntry],
    events: usize,
) -> anyhow::Result<()> {
    w.write_all(b"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"},\"items\":[\n")?;
    let mut first = true;
    let mut sep = |w: &mut dyn std::io::Write| -> std::io::Result<()> {
        if !std::mem::take(&mut first) {
            w.write_all(b",\n")?;
        }
        Ok(())
    };
    for n in nodes {
        sep(w)?;
        serde_json::to_writer(&mut *w, n)?;
    }
    for p in pods {
        sep(w)?;
        serde_json::to_writer(&mut *w, p)?;
    }
    for rc in rcs {
        sep(w)?;
        let mut value = serde_json::to_value(&rc.object)?;
        if let Some(map) = value.as_object_mut() {
            map.insert("apiVersion".into(), rc.api_version.clone().into());
        }
        serde_json::to_writer(&mut *w, &value)?;
    }
    for event in winplace_synthetic::synthetic_events(pods, events) {
        sep(w)?;
        w.write_all(event.as_bytes())?;
    }
    w.write_all(b"\n]}\n")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::objects::ClusterObjects;

    #[test]
    fn demo_snapshot_round_trips_through_the_json_reader() {
        let demo = crate::source::demo::DemoSource::load().expect("demo");
        let o = demo.objects();
        let mut buf = Vec::new();
        write_list(&mut buf, &o.nodes, &o.pods, &o.runtime_classes, 0).expect("write");
        let text = String::from_utf8(buf).expect("utf-8");
        assert!(text.contains("\"kind\":\"Node\"") && text.contains("\"kind\":\"Pod\""));
        let back = ClusterObjects::parse("list.json", &text).expect("reads back");
        assert_eq!(back.nodes, o.nodes);
        assert_eq!(back.pods, o.pods);
        assert_eq!(back.runtime_classes, o.runtime_classes);
    }

    #[test]
    fn synthetic_snapshot_has_the_asked_size() {
        let (nodes, pods, rcs) = winplace_synthetic::synthetic_cluster(20, 300, 7);
        let mut buf = Vec::new();
        write_list(&mut buf, &nodes, &pods, &rcs, 1000).expect("write");
        let back = ClusterObjects::parse("s.json", std::str::from_utf8(&buf).expect("utf-8"))
            .expect("reads back");
        assert_eq!((back.nodes.len(), back.pods.len()), (20, 300));
        // One event in five is explained and kept, the others skipped.
        assert_eq!(back.events.len(), 200);
        assert_eq!(back.skipped, 800);
    }
}
