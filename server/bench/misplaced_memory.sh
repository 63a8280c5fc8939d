#!/usr/bin/env bash
# Memory with misplaced, unowned Windows pods (docs/limits.md): the demo's cluster plus N bare Windows
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
source "$(dirname "$0")/common.sh"

snap="$work/misplaced.json"
"$bin" demo-snapshot --misplaced-pods "$count" -o "$snap"
echo "snapshot: demo-snapshot --misplaced-pods $count, $(du -m "$snap" | cut -f1) MiB; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "winplace audit --snapshot: $(measure "$bin" audit --snapshot "$snap" --format text) peak"

serve_snapshot "$snap"
curl -sf -o /dev/null "127.0.0.1:$port/api/summary"
curl -sf -o /dev/null "127.0.0.1:$port/api/workloads"
hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$server/status")
rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$server/status")
printf 'winplace serve --snapshot: ready after %.2f s, %s MiB peak (VmHWM), %s MiB held (VmRSS)\n' \
  "$ready_after" "$hwm" "$rss"
# What a long-running server keeps: mimalloc hands the pages of the load's transients (the snapshot's
# decoding) back to the kernel lazily, on later allocator activity, so wait and ask once more.
sleep 15
curl -sf -o /dev/null "127.0.0.1:$port/api/summary"
sleep 2
settled=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$server/status")
printf 'winplace serve --snapshot: %s MiB held once settled (VmRSS 15 s later, after one more request)\n' "$settled"
