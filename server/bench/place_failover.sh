#!/usr/bin/env bash
# Placement under faults. 1,000 gated pods naming 20 distinct images, two `winplace serve --place`
# replicas, the leader killed (kill: SIGKILL; term: SIGTERM) when half the pods are placed, and with
# DOWN_SECONDS > 0 a registry that answers 500 for the first DOWN_SECONDS of the DEADLINE_SECONDS
# deadline; the time until every pod is placed, each patched once (server/examples/place_failover.rs).
#
#   bash server/bench/place_failover.sh [PODS] [IMAGES] [kill|term] [LEASE_SECONDS] [DEADLINE_SECONDS] [DOWN_SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cargo build --release -p winplace --bin winplace --example place_failover
cargo run --release -q -p winplace --example place_failover -- "$@"
