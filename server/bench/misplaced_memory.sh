#!/usr/bin/env bash
# Memory with misplaced, unowned Windows pods (issue 29 item 4): the demo's cluster plus N bare Windows
# pods bound to Linux nodes (`demo-snapshot --misplaced-pods N`), each a workload of its own with six
# findings and an incident: the audit's worst case per pod. Prints the peak memory of
# `winplace audit --snapshot` and of `winplace serve --snapshot` (until /readyz answers 200 and the
# summary and first workloads page were asked once: VmHWM and VmRSS then; VmRSS again once settled,
# 15 s and one request later). Figures go into docs/benchmarks.md.
#
#   cargo build --release -p winplace && bash server/bench/misplaced_memory.sh [N]
#
# Uses $CARGO_TARGET_DIR/release/winplace (default target/; WINPLACE_BIN names another), writes its
# snapshot to a temporary folder (removed at the end), listens on 127.0.0.1 only.
set -euo pipefail
count=${1:-20000}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${WINPLACE_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/winplace}
[ -x "$bin" ] || { echo "no $bin: run cargo build --release -p winplace first" >&2; exit 2; }
work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

snap="$work/misplaced.json"
"$bin" demo-snapshot --misplaced-pods "$count" -o "$snap"
echo "snapshot: demo-snapshot --misplaced-pods $count, $(du -m "$snap" | cut -f1) MiB; load average $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -v "$bin" audit --snapshot "$snap" --format text >/dev/null 2>"$work/time" || true
awk -F': ' '/Elapsed \(wall clock\)/ {split($2, t, ":"); w = t[1]*60 + t[2]}
            /Maximum resident set size/ {m = $2 / 1024}
            END {printf "winplace audit --snapshot: %.2f s, %.0f MiB peak\n", w, m}' "$work/time"

port=$((20000 + RANDOM % 20000))
start=$(date +%s.%N)
RUST_LOG=warn "$bin" serve --snapshot "$snap" --listen "127.0.0.1:$port" >/dev/null 2>&1 &
server=$!
for _ in $(seq 3000); do
  curl -sf -o /dev/null "127.0.0.1:$port/readyz" && break
  sleep 0.1
done
ready=$(date +%s.%N)
curl -sf -o /dev/null "127.0.0.1:$port/api/summary"
curl -sf -o /dev/null "127.0.0.1:$port/api/workloads"
hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$server/status")
rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$server/status")
printf 'winplace serve --snapshot: ready after %.2f s, %s MiB peak (VmHWM), %s MiB held (VmRSS)\n' \
  "$(echo "$ready - $start" | bc)" "$hwm" "$rss"
# What a long-running server keeps: mimalloc hands the pages of the load's transients (the snapshot's
# decoding) back to the kernel lazily, on later allocator activity, so wait and ask once more.
sleep 15
curl -sf -o /dev/null "127.0.0.1:$port/api/summary"
sleep 2
settled=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$server/status")
printf 'winplace serve --snapshot: %s MiB held once settled (VmRSS 15 s later, after one more request)\n' "$settled"
