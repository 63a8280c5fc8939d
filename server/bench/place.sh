#!/usr/bin/env bash
# Issue 30's number: 1,000 gated pods naming 20 distinct images placed by `winplace serve --place`
# against Debian's docker-registry (images pushed by skopeo) and the tests' fake API server; fails
# unless every pod was placed with one registry look-up per distinct reference (server/examples/place_flood.rs).
#
#   bash server/bench/place.sh [PODS] [IMAGES]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cargo build --release -p winplace --bin winplace --example place_flood
cargo run --release -q -p winplace --example place_flood -- "$@"
