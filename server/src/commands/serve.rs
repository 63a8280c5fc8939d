//! `winplace serve`: the dashboard, the JSON API, the live event stream and policy.wasm.

use clap::Args;
use clap::builder::TypedValueParser as _;
use futures::StreamExt as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `winplace serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", env = "WINPLACE_LISTEN")]
    pub listen: SocketAddr,
    /// Also answer `/healthz` and `/readyz` on this address, from a thread of their own that no load
    /// on `--listen` can delay (point the kubelet's probes at it; the deployment uses 0.0.0.0:8081).
    #[arg(long, value_name = "ADDR", env = "WINPLACE_PROBE_LISTEN")]
    pub probe_listen: Option<SocketAddr>,
    /// Also answer `/metrics` on this address, alone, from a thread of its own (the chart uses
    /// 0.0.0.0:9090): a scraper can be let in to it without being let in to the dashboard and the API.
    #[arg(long, value_name = "ADDR", env = "WINPLACE_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Where the cluster comes from.
    #[command(flatten)]
    pub source: crate::source::SourceArgs,
    /// Another `Host` name to answer (repeatable; comma-separated in the environment variable). On
    /// a loopback address only loopback names (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`)
    /// are answered by default, which stops DNS-rebinding pages; other requests get 421.
    #[arg(
        long = "allowed-host",
        value_name = "NAME",
        env = "WINPLACE_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,
    /// Settings and platform.
    #[command(flatten)]
    pub settings: crate::inputs::SettingsArgs,
    /// Connections served at once on `--listen`; more are answered 503 (the descriptor limit,
    /// `ulimit -n`, must allow it).
    #[arg(long, value_name = "N", env = "WINPLACE_MAX_CONNECTIONS",
          default_value_t = crate::http::conn::DEFAULT_MAX_CONNECTIONS,
          value_parser = clap::value_parser!(u64).range(1..).map(|n| n as usize))]
    pub max_connections: usize,
    /// Live event streams (`/api/events`) open at once; more are answered 503.
    #[arg(long, value_name = "N", env = "WINPLACE_MAX_EVENT_STREAMS",
          default_value_t = crate::state::event_streams::DEFAULT_MAX_EVENT_STREAMS,
          value_parser = clap::value_parser!(u64).range(1..).map(|n| n as usize))]
    pub max_event_streams: usize,
    /// Image resolution from registries (`--resolve-images` and its flags).
    #[command(flatten)]
    pub registry: ServeRegistryArgs,
    /// Placing gated pods (`--place`, docs/placement.md).
    #[command(flatten)]
    pub place: crate::place::PlaceArgs,
    /// Keeping the findings in the cluster as reports (`--reports`, docs/reports.md).
    #[command(flatten)]
    pub reports: crate::commands::live_reports::ReportsArgs,
}

/// The registry flags of `winplace serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeRegistryArgs {
    /// Resolve the live workloads' images whose name tells neither their OS nor their Windows build
    /// from their registries, in the background (and answer `GET /api/images/resolve`).
    #[arg(long, env = "WINPLACE_RESOLVE_IMAGES")]
    pub resolve_images: bool,
    /// A registry (`HOST:PORT`) reached over plain HTTP; repeatable.
    #[arg(long, value_name = "HOST:PORT")]
    pub insecure_registry: Vec<String>,
    /// Registry credentials, in the Docker config format; default `$DOCKER_CONFIG/config.json`, else
    /// `~/.docker/config.json`, else anonymous.
    #[arg(long, value_name = "FILE", env = "WINPLACE_REGISTRY_CONFIG")]
    pub registry_config: Option<PathBuf>,
    /// Time limit of one image look-up, in seconds.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = crate::inputs::parse_seconds)]
    pub registry_timeout: std::time::Duration,
}

impl ServeRegistryArgs {
    /// The resolver these flags ask for (`None` without `--resolve-images`).
    pub fn resolver(&self) -> anyhow::Result<Option<crate::registry::ImageResolver>> {
        if !self.resolve_images {
            return Ok(None);
        }
        self.any_resolver().map(Some)
    }

    /// A resolver with these flags, asked for or not (`--place` always reads registries).
    pub fn any_resolver(&self) -> anyhow::Result<crate::registry::ImageResolver> {
        let credentials = crate::registry::Credentials::load(self.registry_config.as_deref())?;
        Ok(crate::registry::ImageResolver::new(
            crate::registry::RegistryOptions {
                insecure: self.insecure_registry.clone(),
                credentials,
                timeout: self.registry_timeout,
                ..Default::default()
            },
        ))
    }
}

/// Serves until Ctrl-C or SIGTERM.
pub async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut settings = args.settings.load()?;
    // The calendar is read today (or at the settings' `lifecycle.date`, which then stays): the audit
    // thread is told each new day (clock::day_changes), so a node retired at midnight is reported
    // without a restart.
    let fixed_date = settings.lifecycle.date.is_some();
    crate::clock::date_settings(&mut settings, None);
    let source = crate::source::select(&args.source).await?;
    let state = crate::state::AppState::new(source.info(), Default::default());
    // The nodes' support horizon at today's date (or the settings' fixed one), read at each scrape.
    let mut horizon_settings = settings.clone();
    if !fixed_date {
        horizon_settings.lifecycle.date = None;
    }
    state.export(std::sync::Arc::new(
        crate::commands::support_horizon::SupportHorizon::new(state.clone(), horizon_settings),
    ));
    state.event_streams().set_limit(args.max_event_streams);
    tracing::info!("source: {}", state.source().description);
    let mut events = source.events();
    let resolver = args.registry.resolver()?.map(std::sync::Arc::new);
    // The placement Lease's election: on shutdown it stops the writes and gives the Lease up, and the
    // process waits for that before it exits (docs/placement.md, "Two replicas").
    let mut place_election = None;
    if args.place.place {
        let mut config = cluster_config(&args.source, "--place").await?;
        // The controller asks the API server again itself, within its budget and counted, and only
        // while it leads: no retry inside the client (kube's would send a write again after the Lease
        // was lost, and hold a reconcile for as long as a Retry-After says).
        config.default_retry = false;
        // Two clients: the election's own, and the controller's, whose every write is refused unless
        // this replica leads at that instant (lease::WriteGuard).
        let client = kube::Client::try_from(config.clone())?;
        let leadership = crate::lease::Leadership::new();
        let place_client = kube::client::ClientBuilder::try_from(config)?
            .with_layer(&crate::lease::WriteGuard::new(leadership.clone()))
            .build();
        let place_resolver = match &resolver {
            Some(r) => r.clone(),
            None => std::sync::Arc::new(args.registry.any_resolver()?),
        };
        let report = std::sync::Arc::new(
            crate::place::report::PlaceReport::new(place_resolver)
                .with_deadline(args.place.place_deadline),
        );
        state.set_place_report(report.clone());
        // The Lease is asked for only while the controller says it can place.
        let (can_act, can_act_rx) = tokio::sync::watch::channel(crate::lease::CanAct::No(
            "the placement controller is starting".into(),
        ));
        let (leading, election) = crate::lease::spawn(
            client,
            args.place.lease(),
            leadership,
            can_act_rx,
            state.shutdown_signal(),
        );
        place_election = Some(election);
        tokio::spawn(crate::place::run(
            place_client,
            report,
            settings.clone(),
            args.place.options(),
            leading,
            can_act,
        ));
    }
    // The reports writer's election: its own Lease, so that the replica that writes the reports need
    // not be the one that places pods (docs/reports.md).
    let mut reports_election = None;
    if args.reports.reports {
        let config = cluster_config(&args.source, "--reports").await?;
        let client = kube::Client::try_from(config.clone())?;
        let leadership = crate::lease::Leadership::new();
        let writer_client = kube::client::ClientBuilder::try_from(config)?
            .with_layer(&crate::lease::WriteGuard::new(leadership.clone()))
            .build();
        let mut lease = args.place.lease();
        lease.name = args.reports.reports_lease_name.clone();
        // The writer waits for the audit's first sync and for a fresh source itself, and writes
        // nothing until then: holding the Lease meanwhile keeps a second replica from writing stale
        // reports. The Lease is given up when the writer's task ends (its sender dropped).
        let (can_act, can_act_rx) = tokio::sync::watch::channel(crate::lease::CanAct::Yes);
        let (leading, election) = crate::lease::spawn(
            client,
            lease,
            leadership,
            can_act_rx,
            state.shutdown_signal(),
        );
        reports_election = Some(election);
        let status =
            std::sync::Arc::new(crate::commands::live_reports::writer::ReportsStatus::default());
        state.export(status.clone());
        let writer = crate::commands::live_reports::writer::run(
            writer_client,
            state.clone(),
            crate::commands::live_reports::writer::WriterOptions {
                api: args.reports.reports_format.api(),
                interval: args.reports.reports_interval,
            },
            leading,
            status,
        );
        tokio::spawn(async move {
            writer.await;
            drop(can_act);
        });
    }
    if let Some(resolver) = resolver {
        state.set_image_resolver(resolver.clone());
        let answers = crate::image_resolution::spawn(state.clone(), resolver);
        events = Box::pin(futures::stream::select(events, answers));
        tracing::info!("resolving the workloads' images from their registries");
    }
    if !fixed_date && let Some(start) = settings.lifecycle.date {
        let days = crate::clock::day_changes(
            std::sync::Arc::new(crate::clock::SystemClock),
            start,
            crate::clock::DAY_CHECK,
        )
        .map(crate::source::SourceEvent::Today);
        events = Box::pin(futures::stream::select(events, days));
    }
    // The audit thread runs until the source ends (static sources: after the first sync; with image
    // resolution, never).
    let _applier = crate::state::spawn_applier(
        state.clone(),
        winplace_rules::audit::Audit::new(settings),
        events,
    );
    let listen = crate::http::serve::Listen {
        addr: args.listen,
        probes: args.probe_listen,
        metrics: args.metrics_listen,
        allowed_hosts: args.allowed_hosts,
        max_connections: args.max_connections,
    };
    crate::http::serve::serve(listen, state).await?;
    for election in [place_election, reports_election].into_iter().flatten() {
        // Bounded by the election itself (the renew deadline twice); a hard limit besides.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(60), election).await;
    }
    Ok(ExitCode::SUCCESS)
}

/// The cluster `--kubeconfig` and `--context` name, else the one kube-rs infers (in a pod: its service
/// account); `flag` says which flag needs it.
async fn cluster_config(
    source: &crate::source::SourceArgs,
    flag: &str,
) -> anyhow::Result<kube::Config> {
    Ok(match (&source.kubeconfig, &source.context) {
        (None, None) => {
            crate::kube_client::infer()
                .await
                .map_err(|e| anyhow::anyhow!("{flag} needs a cluster: {e:#}"))?
                .0
        }
        (path, context) => {
            crate::kube_client::from_kubeconfig(path.as_deref(), context.as_deref()).await?
        }
    })
}
