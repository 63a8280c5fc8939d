#!/usr/bin/env bash
# The Kubernetes envelope end to end (issue 13): wall time and peak memory of `winplace audit --snapshot`
# beside python's json.load of the same file, `winplace serve --snapshot` until /readyz answers 200, and
# `winplace check` of 100,000 documents. Figures go into docs/benchmarks.md.
#
#   cargo build --release -p winplace && bash server/bench/envelope.sh [NODES] [PODS]
#
# Uses $CARGO_TARGET_DIR/release/winplace (default target/), writes its inputs to a temporary folder
# (removed at the end), listens on 127.0.0.1 only, and gives up on the server after 300 s.
set -euo pipefail
nodes=${1:-5000}
pods=${2:-150000}
source "$(dirname "$0")/common.sh"

snap="$work/big.json"
"$bin" demo-snapshot --nodes "$nodes" --pods "$pods" -o "$snap"
echo "snapshot: $nodes nodes, $pods pods, $(du -m "$snap" | cut -f1) MiB; load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Side by side in one run (issue 40 item 5: audit ≤ 0.2× python's parse of the same file), then each
# format's time and peak (issue 40 item 1: every format under 512 MiB).
py=$(measure python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$snap")
text=$(measure "$bin" audit --snapshot "$snap" --format text)
echo "python3 json.load:          $py"
echo "winplace audit --snapshot:  $text (--format text): $(echo "$text $py" | awk '{printf "%.2f", $1 / $5}')× python's time"
for format in json openreports policyreport; do
  echo "winplace audit --snapshot --format $format: $(measure "$bin" audit --snapshot "$snap" --format "$format")"
done

# serve: time until /readyz answers 200, and the server's peak memory (VmHWM) at that moment.
serve_snapshot "$snap"
hwm=$(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$server/status")
echo "winplace serve --snapshot:  /readyz after $ready_after s, peak ${hwm} MiB"
kill "$server"; wait "$server" 2>/dev/null || true; server=

# check: 100,000 small Pod documents (about 20 MB of YAML).
python3 - "$work/pods.yaml" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(100_000):
        f.write(f"""apiVersion: v1
kind: Pod
metadata:
  name: web-{i}
  namespace: team-{i % 50}
spec:
  nodeSelector:
    kubernetes.io/os: windows
  containers:
  - name: app
    image: mcr.microsoft.com/windows/servercore:ltsc2022
---
""")
PY
echo "winplace check, 100,000 documents ($(du -m "$work/pods.yaml" | cut -f1) MiB): $(measure "$bin" check "$work/pods.yaml" --format json)"
