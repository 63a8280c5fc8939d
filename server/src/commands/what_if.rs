//! `winplace what-if`: apply a plan (remove Windows builds or node pools, upgrade pools in place, add
//! pools, move to a date or a Kubernetes version of the platform's retirement calendar) to a cluster and
//! report, per workload, its errors before and after, with what makes a newly failing workload fit.
//!
//! Exit codes: 0 when the plan breaks nothing, 1 when some workload gains an error, 2 on usage errors and
//! unreadable input.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use futures::StreamExt;
use serde::Serialize;
use winplace_rules::audit::{Audit, Change};
use winplace_rules::input::{Limits, parse};
use winplace_rules::model::cluster_objects::ClusterObject;
use winplace_rules::what_if::{self, Plan, PlanReport, PoolUpgrade};
use winplace_rules::{ClusterContext, Settings, model};

use crate::inputs::{self, SettingsArgs};
use crate::source::{SourceArgs, SourceEvent};

/// Arguments of `winplace what-if`.
#[derive(Debug, Clone, Args)]
pub struct WhatIfArgs {
    /// Manifests to plan for (files, directories); without any, the workloads running in the cluster.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Where the cluster comes from (with manifests and only --cluster files, those files are the
    /// whole cluster).
    #[command(flatten)]
    pub source: SourceArgs,
    /// A Windows build whose nodes go away (`10.0.17763`, `17763`, `2019`, `ltsc2019`); repeatable.
    #[arg(long, value_name = "BUILD")]
    pub remove_build: Vec<String>,
    /// A node pool that goes away (its pool label: AKS agentpool, EKS node group, Karpenter NodePool,
    /// GKE node pool; or the pool of a file given with --cluster); repeatable.
    #[arg(long, value_name = "NAME")]
    pub remove_pool: Vec<String>,
    /// A Windows pool whose nodes move to another build in place, `POOL=BUILD` (`win22=2025`; BUILD as
    /// for --remove-build): they keep name, labels and taints and get the new build label and node
    /// info (docs/what-if.md); repeatable.
    #[arg(long, value_name = "POOL=BUILD")]
    pub upgrade_pool: Vec<String>,
    /// Nodes that come: a Node file or an infrastructure file (anything --cluster accepts); repeatable.
    #[arg(long, value_name = "FILE")]
    pub add: Vec<PathBuf>,
    /// The date of the plan (`YYYY-MM-DD`): the Windows nodes whose platform has retired their build by
    /// then go, each retirement named with its date and source (docs/reference/lifecycle.md).
    #[arg(long, value_name = "DATE")]
    pub on: Option<winplace_rules::lifecycle::Date>,
    /// The planned cluster's Kubernetes version (`1.37`): the Windows nodes of builds their platform
    /// offers only below it (or only from a later version) go.
    /// containerd's calendar is read too: Windows nodes still on containerd 1.x past its last Kubernetes
    /// minor are named (they stay in the planned cluster). `--k8s` is the short name.
    #[arg(long, alias = "k8s", value_name = "VERSION")]
    pub kubernetes_version: Option<winplace_rules::lifecycle::KubeMinor>,
    /// Settings and platform.
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = WhatIfFormat::Text)]
    pub format: WhatIfFormat,
}

/// How `what-if` prints its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WhatIfFormat {
    /// One block per workload that changes.
    Text,
    /// `{"changes": [{"object", "before", "after", "fixes"}], "buildsBefore", "buildsAfter", "summary"}`.
    Json,
}

/// The JSON answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Answer<'a> {
    #[serde(flatten)]
    report: &'a PlanReport,
    summary: Summary,
}

#[derive(Debug, Serialize)]
struct Summary {
    broken: usize,
    fixed: usize,
    changed: usize,
}

/// Runs `winplace what-if`.
pub async fn run(args: WhatIfArgs) -> anyhow::Result<ExitCode> {
    let settings = args.settings.load()?;
    let mut the_plan = Plan::default();
    for b in &args.remove_build {
        match what_if::parse_build(b) {
            Some(build) => the_plan.remove_builds.push(build),
            None => anyhow::bail!(
                "--remove-build {b}: not a Windows build (10.0.17763, 17763, 2019 or ltsc2019)"
            ),
        }
    }
    for up in &args.upgrade_pool {
        the_plan.upgrade_pools.push(parse_upgrade(up)?);
    }
    the_plan.on = args.on;
    the_plan.kubernetes_version = args.kubernetes_version;
    the_plan.remove_pools = args.remove_pool.clone();
    if !args.add.is_empty() {
        the_plan.add = inputs::cluster_or_errors(&args.add, &settings)
            .map_err(|e| anyhow::anyhow!("--add: {e:#}"))?
            .nodes;
    }
    let report = if args.paths.is_empty() {
        plan_live(&args, &settings, &the_plan).await?
    } else {
        plan_manifests(&args, &settings, &the_plan).await?
    };
    let summary = Summary {
        broken: report.broken().count(),
        fixed: report.fixed().count(),
        changed: report.changes.len(),
    };
    let out = match args.format {
        WhatIfFormat::Json => {
            let mut s = serde_json::to_string_pretty(&Answer {
                report: &report,
                summary,
            })?;
            s.push('\n');
            s
        }
        WhatIfFormat::Text => render_text(&args, &the_plan, &report, &summary),
    };
    print!("{out}");
    Ok(ExitCode::from(if report.breaks() { 1 } else { 0 }))
}

/// `POOL=BUILD` of `--upgrade-pool`; the error names the bad value.
fn parse_upgrade(text: &str) -> anyhow::Result<PoolUpgrade> {
    let Some((pool, build)) = text.split_once('=') else {
        anyhow::bail!("--upgrade-pool {text}: write POOL=BUILD (win22=2025)");
    };
    if pool.trim().is_empty() {
        anyhow::bail!("--upgrade-pool {text}: the pool name is empty (POOL=BUILD, win22=2025)");
    }
    let Some(build) = what_if::parse_build(build) else {
        anyhow::bail!(
            "--upgrade-pool {text}: {build:?} is not a Windows build (10.0.26100, 26100, 2025 or ltsc2025)"
        );
    };
    Ok(PoolUpgrade {
        pool: pool.trim().to_string(),
        build,
    })
}

/// Manifests against the cluster: the --cluster files alone, or the source with them.
async fn plan_manifests(
    args: &WhatIfArgs,
    settings: &Settings,
    the_plan: &Plan,
) -> anyhow::Result<PlanReport> {
    let context: ClusterContext =
        crate::commands::context::cluster_context(&args.source, settings).await?;
    let (files, walk_errors) = inputs::expand_files(&args.paths);
    if let Some(e) = walk_errors.first() {
        anyhow::bail!("{e}");
    }
    let mut objects = Vec::new();
    for path in files {
        let name = path.display().to_string();
        let text = inputs::read_text(&path).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let parsed = parse(&name, &text, &Limits::default());
        if let Some(e) = parsed.errors.first() {
            anyhow::bail!("{e}");
        }
        objects.extend(model::objects(&parsed.documents));
    }
    the_plan.check(&context)?;
    Ok(what_if::plan_objects(
        &objects, &context, the_plan, settings,
    ))
}

/// The cluster's own workloads: the audit before, then the same audit after the plan's node changes.
async fn plan_live(
    args: &WhatIfArgs,
    settings: &Settings,
    the_plan: &Plan,
) -> anyhow::Result<PlanReport> {
    let source = crate::source::select(&args.source).await?;
    let mut images_by_pod: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut audit = Audit::new(settings.clone());
    let mut events = source.events();
    let pod_images = |pod: &k8s_openapi::api::core::v1::Pod| -> Vec<String> {
        pod.spec
            .iter()
            .flat_map(|s| s.containers.iter())
            .filter_map(|c| c.image.clone())
            .collect()
    };
    while let Some(event) = events.next().await {
        match event {
            SourceEvent::Change(change) => {
                if let Change::Reset { pods, .. } = &change {
                    for pod in pods {
                        images_by_pod
                            .insert(winplace_rules::audit::pod_key_of(pod), pod_images(pod));
                    }
                }
                audit.apply(change);
            }
            // A streamed list: object by object into the audit, as the server's applier does.
            SourceEvent::ListBegin => audit.begin_reset(),
            SourceEvent::Listed(object) => match object {
                ClusterObject::Node(node) => audit.reset_node(&node),
                ClusterObject::Pod(pod) => {
                    images_by_pod.insert(winplace_rules::audit::pod_key_of(&pod), pod_images(&pod));
                    audit.reset_pod(&pod);
                }
                // Every pod's images are read here: made whole.
                ClusterObject::ListedPod(listed) => {
                    let key = winplace_rules::audit::pod_key_of(&listed.pod);
                    let pod = listed
                        .into_pod()
                        .map_err(|e| anyhow::anyhow!("Pod/{key}: spec: {e}"))?;
                    images_by_pod.insert(key, pod_images(&pod));
                    audit.reset_pod(&pod);
                }
                ClusterObject::RuntimeClass(entry) => audit.reset_runtime_class(&entry),
                // What is failing now says nothing about the planned cluster.
                ClusterObject::Event(_) => {}
            },
            SourceEvent::ListDone => {
                audit.finish_reset();
            }
            SourceEvent::ListFailed(why) => anyhow::bail!("{why}"),
            SourceEvent::ImageFacts(facts) => {
                audit.set_image_facts(facts);
            }
            SourceEvent::Synced => break,
            SourceEvent::WatchError(failure) => anyhow::bail!("{}", failure.message),
            SourceEvent::WatchResumed(_) => {}
            // A plan is read at its own date (`--on`), not the clock's.
            SourceEvent::Today(_) => {}
        }
    }
    let before_ctx = audit.context().clone();
    let workload_errors = |audit: &Audit| {
        what_if::planned_errors(
            audit
                .workloads()
                .flat_map(|w| w.findings.iter().map(|f| (**f).clone())),
        )
    };
    let before = workload_errors(&audit);
    let mut images: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for w in audit.workloads() {
        let list = images.entry(w.owner.display_name()).or_default();
        for p in &w.pods {
            let key = winplace_rules::audit::pod_key(&p.namespace, &p.name);
            for i in images_by_pod.get(&key).into_iter().flatten() {
                if !list.contains(i) {
                    list.push(i.clone());
                }
            }
        }
    }
    the_plan.check(&before_ctx)?;
    // The planned cluster, applied to the audit node by node: gone, changed (upgraded in place) or new.
    let planned = the_plan.apply(&before_ctx, settings);
    let name = |n: &k8s_openapi::api::core::v1::Node| n.metadata.name.clone().unwrap_or_default();
    let after_nodes: BTreeMap<String, &k8s_openapi::api::core::v1::Node> =
        planned.context.nodes.iter().map(|n| (name(n), n)).collect();
    for node in &before_ctx.nodes {
        if !after_nodes.contains_key(&name(node)) {
            audit.apply(Change::NodeDeleted(name(node)));
        }
    }
    for node in &planned.context.nodes {
        let same = before_ctx
            .nodes
            .iter()
            .any(|b| name(b) == name(node) && b == node);
        if !same {
            audit.apply(Change::Node(Box::new(node.clone())));
        }
    }
    let after = workload_errors(&audit);
    let mut report = what_if::compare(
        &before,
        &after,
        &images,
        (&before_ctx, audit.context()),
        settings,
    );
    report.retirements = the_plan.reads_calendar().then_some(planned.retirements);
    report.runtimes = planned.runtimes;
    Ok(report)
}

fn render_text(args: &WhatIfArgs, the_plan: &Plan, report: &PlanReport, s: &Summary) -> String {
    let mut out = String::new();
    let mut steps = Vec::new();
    for b in &the_plan.remove_builds {
        steps.push(format!("remove Windows build {b}"));
    }
    for p in &the_plan.remove_pools {
        steps.push(format!("remove pool {p}"));
    }
    for up in &the_plan.upgrade_pools {
        steps.push(format!(
            "upgrade pool {} in place to Windows build {}",
            up.pool, up.build
        ));
    }
    if !args.add.is_empty() {
        steps.push(format!(
            "add {} node(s) from {}",
            the_plan.add.len(),
            args.add
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(on) = the_plan.on {
        steps.push(format!("on {on}"));
    }
    if let Some(k) = the_plan.kubernetes_version {
        steps.push(format!("on Kubernetes {k}"));
    }
    let _ = writeln!(out, "what-if: {}", steps.join("; "));
    for r in report.retirements.iter().flatten() {
        let f = &r.retirement;
        let when = when(f.kind.as_str(), f.date.as_deref(), f.kubernetes.as_deref());
        let _ = writeln!(
            out,
            "  retired: {} {} ({when}): {}; {} node(s) of {} go\n    source: {}",
            f.platform.title(),
            f.build,
            f.what,
            r.nodes,
            r.pools.join(", "),
            f.source
        );
    }
    for r in &report.runtimes {
        let f = &r.issue;
        let when = when(f.kind.as_str(), f.date.as_deref(), f.kubernetes.as_deref());
        let _ = writeln!(
            out,
            "  containerd {} ({when}): {}; {} Windows node(s) of {} (they stay)\n    source: {}",
            f.versions,
            f.what,
            r.nodes,
            r.pools.join(", "),
            f.source
        );
    }
    let matrix = |m: &BTreeMap<String, usize>| {
        if m.is_empty() {
            "none".to_string()
        } else {
            m.iter()
                .map(|(b, n)| format!("{b} ×{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let _ = writeln!(
        out,
        "Windows builds: {} → {}; Linux nodes: {} → {}\n",
        matrix(&report.builds_before),
        matrix(&report.builds_after),
        report.linux_nodes.0,
        report.linux_nodes.1
    );
    for c in &report.changes {
        let new = c.new_errors();
        let label = if !new.is_empty() {
            "BREAKS"
        } else if c.after.is_empty() {
            "FIXED "
        } else {
            "CHANGES"
        };
        let _ = writeln!(
            out,
            "{label} {}: errors [{}] → [{}]",
            c.object,
            c.before.join(", "),
            c.after.join(", ")
        );
        for f in &c.fixes {
            let _ = writeln!(out, "    {f}");
        }
    }
    let _ = writeln!(
        out,
        "\n{} workload(s) break, {} fixed, {} changed",
        s.broken, s.fixed, s.changed
    );
    out
}

/// When a calendar fact takes effect, as the report words it: its kind and its date, or the Kubernetes
/// minor it is tied to.
fn when(kind: &str, date: Option<&str>, kubernetes: Option<&str>) -> String {
    match (date, kubernetes) {
        (Some(date), _) => format!("{kind} {date}"),
        (None, Some(k)) => format!("{kind} {k}"),
        (None, None) => kind.to_string(),
    }
}
