//! Placement's throughput: PODS gated pods naming IMAGES distinct images, placed by `winplace serve
//! --place` against Debian's `docker-registry` on 127.0.0.1 (the images pushed by `skopeo`) and the
//! tests' fake API server (real HTTP: list, watch, JSON patches), set up by the placement test kit
//! (`tests/common/place.rs`).
//!
//! `cargo build --release -p winplace && cargo run --release -p winplace --example place_flood -- [PODS] [IMAGES]`
//! (or `bash server/bench/place.sh`; `WINPLACE_BIN` names another binary). Prints the time from the
//! controller's start until every pod is ungated, and fails unless every pod was placed with one
//! registry look-up per distinct reference (read from the controller's `/metrics`). A wall-clock figure
//! for docs/benchmarks.md (with the machine's load), not an assertion.

#[path = "../tests/common/fake_api.rs"]
mod fake_api;
#[path = "../tests/common/fake_http.rs"]
mod fake_http;
#[path = "../tests/common/oci_registry.rs"]
mod oci_registry;
#[path = "../tests/common/place.rs"]
mod place;

use place::{Launch, Log, cluster, gated, gated_pod_in, public_images};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let pods: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let images: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let work = tempfile::tempdir().expect("tempdir");

    let pushed = Instant::now();
    let (registry, references) = public_images(work.path(), images);
    eprintln!(
        "pushed {images} images in {:.1} s",
        pushed.elapsed().as_secs_f64()
    );
    let api = cluster();
    api.apply_all(
        "Pod",
        (0..pods).map(|i| {
            gated_pod_in(
                "bench",
                &format!("p-{i}"),
                &references[i % images],
                json!({}),
            )
        }),
    );
    let url = api.serve().await;

    let started = Instant::now();
    let mut launch = Launch::new(work.path(), &url, "bench")
        .insecure(&[registry.host()])
        .deadline("120")
        .args(&["--place-lease-namespace", "bench"]);
    launch.rust_log = "winplace=warn".into();
    launch.log = Log::Inherit;
    let controller = launch.start();
    while gated(&api) > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "{} pods still gated after 300 s",
            gated(&api)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = started.elapsed();
    let placed = controller
        .metric("winplace_place_placed_total")
        .unwrap_or(-1.0);
    let looked_up = controller
        .metric("winplace_image_registry_requests_total{outcome=\"ok\"}")
        .unwrap_or(-1.0);
    drop(controller);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "{pods} gated pods, {images} distinct images: all ungated {:.2} s after the controller started; placed {placed}, registry look-ups {looked_up}; load average {}",
        took.as_secs_f64(),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    assert_eq!(placed as usize, pods, "every pod placed");
    assert_eq!(
        looked_up as usize, images,
        "one registry look-up per distinct reference"
    );
}
