//! How every command reaches the Kubernetes API: the kubeconfig (or the pod's service account), with
//! winplace's User-Agent on every request and the proxy kubectl would use
//! (docs/reference/events-and-leases.md §5).
//!
//! kubectl (client-go) sends `User-Agent: kubectl/VERSION (…)`, which API server audit logs record and
//! priority-and-fairness rules can match; winplace sends [`USER_AGENT`]. client-go takes a proxy from
//! the kubeconfig's `proxy-url` first, else from the environment as Go's `http.ProxyFromEnvironment`
//! does: `HTTPS_PROXY` for an `https://` API server (`HTTP_PROXY` for `http://`), unless `NO_PROXY`
//! covers the API server's host (a name and its subdomains, an IP, a CIDR, `*`), and never for
//! `localhost` or a loopback address. kube-rs reads `HTTPS_PROXY` for every server and matches `NO_PROXY`
//! against the proxy's own address, not the API server's, and its in-cluster configuration reads no
//! proxy at all; so the proxy is decided here, by [`env_proxy`], for all three.

use std::path::Path;

use anyhow::Context as _;
use hyper_util::client::proxy::matcher::Matcher;
use kube::Config;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// The User-Agent of every request winplace sends (the API server, the registries).
pub const USER_AGENT: &str = concat!("winplace/", env!("CARGO_PKG_VERSION"));

/// The client configuration of kubeconfig `path` (default: `$KUBECONFIG`, else `~/.kube/config`),
/// context `context` (default: the current context), prepared ([`prepare`]).
pub async fn from_kubeconfig(path: Option<&Path>, context: Option<&str>) -> anyhow::Result<Config> {
    let kubeconfig = match path {
        Some(path) => Kubeconfig::read_from(path)
            .with_context(|| format!("cannot read kubeconfig {}", path.display()))?,
        None => Kubeconfig::read().context("cannot load the kubeconfig")?,
    };
    let options = KubeConfigOptions {
        context: context.map(str::to_string),
        ..Default::default()
    };
    let proxy = kubeconfig_proxy(&kubeconfig, context);
    let mut config = Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .context("cannot load the kubeconfig")?;
    prepare(&mut config, proxy.as_deref())?;
    Ok(config)
}

/// The pod's own service account (in a cluster), prepared ([`prepare`]).
pub fn in_cluster() -> anyhow::Result<Config> {
    let mut config = Config::incluster()?;
    prepare(&mut config, None)?;
    Ok(config)
}

/// The kubeconfig's cluster, else the in-cluster service account (as `kubectl` and kube-rs's
/// `Config::infer` look for them); `true` when in-cluster.
pub async fn infer() -> anyhow::Result<(Config, bool)> {
    match from_kubeconfig(None, None).await {
        Ok(config) => Ok((config, false)),
        Err(kubeconfig_error) => {
            let config = in_cluster().map_err(|e| {
                anyhow::anyhow!("{kubeconfig_error:#}; not in a cluster either: {e:#}")
            })?;
            Ok((config, true))
        }
    }
}

/// Sets [`USER_AGENT`] and the proxy: the kubeconfig's `proxy-url` when it names one, else what the
/// environment says for this API server ([`env_proxy`]).
pub fn prepare(config: &mut Config, kubeconfig_proxy: Option<&str>) -> anyhow::Result<()> {
    config
        .headers
        .retain(|(name, _)| name != http::header::USER_AGENT);
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(USER_AGENT),
    ));
    config.proxy_url = match kubeconfig_proxy.filter(|p| !p.is_empty()) {
        Some(proxy) => Some(
            proxy
                .parse()
                .with_context(|| format!("the kubeconfig's proxy-url {proxy:?} is not a URL"))?,
        ),
        None => env_proxy(&config.cluster_url, |name| std::env::var(name).ok()),
    };
    Ok(())
}

/// The proxy Go's `http.ProxyFromEnvironment` picks for requests to `server` (`var` reads the
/// environment): `HTTPS_PROXY`/`https_proxy` for `https`, `HTTP_PROXY`/`http_proxy` for `http`, a value
/// without a scheme taken as `http://`; none when `NO_PROXY`/`no_proxy` covers the host, and none for
/// `localhost` or a loopback address.
///
/// ```
/// use winplace::kube_client::env_proxy;
/// let env = |vars: &'static [(&'static str, &'static str)]| {
///     move |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
/// };
/// let api: http::Uri = "https://10.0.0.1:6443".parse().unwrap();
/// let proxy = env_proxy(&api, env(&[("HTTPS_PROXY", "proxy.corp:3128")])).unwrap();
/// assert_eq!(proxy.to_string(), "http://proxy.corp:3128/");
/// assert_eq!(env_proxy(&api, env(&[("HTTPS_PROXY", "proxy.corp:3128"), ("NO_PROXY", "10.0.0.0/8")])), None);
/// let local: http::Uri = "https://127.0.0.1:6443".parse().unwrap();
/// assert_eq!(env_proxy(&local, env(&[("HTTPS_PROXY", "proxy.corp:3128")])), None);
/// ```
pub fn env_proxy(server: &http::Uri, var: impl Fn(&str) -> Option<String>) -> Option<http::Uri> {
    let host = server.host()?.trim_start_matches('[').trim_end_matches(']');
    let loopback = host
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback());
    if host.eq_ignore_ascii_case("localhost") || loopback {
        return None;
    }
    let first = |names: [&str; 2]| {
        names
            .iter()
            .find_map(|n| var(n).filter(|v| !v.is_empty()))
            .unwrap_or_default()
    };
    let matcher = Matcher::builder()
        .http(first(["HTTP_PROXY", "http_proxy"]))
        .https(first(["HTTPS_PROXY", "https_proxy"]))
        .no(first(["NO_PROXY", "no_proxy"]))
        .build();
    matcher.intercept(server).map(|i| i.uri().clone())
}

/// The `proxy-url` of the cluster that `context` (default: the current one) names.
fn kubeconfig_proxy(kubeconfig: &Kubeconfig, context: Option<&str>) -> Option<String> {
    let context = context.or(kubeconfig.current_context.as_deref())?;
    let cluster = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)?
        .context
        .as_ref()?
        .cluster
        .clone();
    kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == cluster)?
        .cluster
        .as_ref()?
        .proxy_url
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_proxy_is_the_one_kubectl_would_use() {
        let https: http::Uri = "https://api.prod.example:6443".parse().unwrap();
        let plain: http::Uri = "http://api.prod.example:8080".parse().unwrap();
        let proxy = "http://proxy.corp:3128/";
        // (the server, the environment, the proxy)
        type Row<'a> = (&'a http::Uri, &'a [(&'a str, &'a str)], Option<&'a str>);
        let rows: [Row; 10] = [
            (&https, &[], None),
            (
                &https,
                &[("HTTPS_PROXY", "http://proxy.corp:3128")],
                Some(proxy),
            ),
            (&https, &[("https_proxy", "proxy.corp:3128")], Some(proxy)),
            // HTTPS_PROXY is for https servers, HTTP_PROXY for http ones.
            (&plain, &[("HTTPS_PROXY", "http://proxy.corp:3128")], None),
            (
                &plain,
                &[("HTTP_PROXY", "http://proxy.corp:3128")],
                Some(proxy),
            ),
            // NO_PROXY covers the server by name, subdomain, IP range or `*`; a name that is not its
            // domain does not.
            (
                &https,
                &[("HTTPS_PROXY", proxy), ("NO_PROXY", "prod.example")],
                None,
            ),
            (
                &https,
                &[("HTTPS_PROXY", proxy), ("NO_PROXY", ".example, 10.0.0.0/8")],
                None,
            ),
            (&https, &[("HTTPS_PROXY", proxy), ("no_proxy", "*")], None),
            (
                &https,
                &[
                    ("HTTPS_PROXY", proxy),
                    ("NO_PROXY", "other.example,proxy.corp"),
                ],
                Some(proxy),
            ),
            // Upper case first.
            (
                &https,
                &[("HTTPS_PROXY", proxy), ("https_proxy", "http://other:1")],
                Some(proxy),
            ),
        ];
        for (server, vars, want) in rows {
            let got = env_proxy(server, env(vars)).map(|u| u.to_string());
            assert_eq!(got.as_deref(), want, "{server} {vars:?}");
        }
        // Never for loopback, whatever the environment says.
        for server in [
            "https://127.0.0.1:6443",
            "https://[::1]:6443",
            "https://localhost:6443",
        ] {
            let server: http::Uri = server.parse().unwrap();
            assert_eq!(
                env_proxy(&server, env(&[("HTTPS_PROXY", proxy)])),
                None,
                "{server}"
            );
        }
    }

    #[test]
    fn every_request_says_it_is_winplace_and_the_kubeconfig_proxy_comes_first() {
        let mut config = Config::new("https://api.prod.example:6443".parse().unwrap());
        prepare(&mut config, Some("http://from-kubeconfig:3128")).unwrap();
        assert_eq!(
            config.headers,
            vec![(
                http::header::USER_AGENT,
                http::HeaderValue::from_static(USER_AGENT)
            )]
        );
        assert!(USER_AGENT.starts_with("winplace/"));
        assert_eq!(
            config.proxy_url.as_ref().map(|u| u.to_string()).as_deref(),
            Some("http://from-kubeconfig:3128/")
        );
        assert!(prepare(&mut config, Some("not a url")).is_err());
    }
}
