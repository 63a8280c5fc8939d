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
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${WINPLACE_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/winplace}
[ -x "$bin" ] || { echo "no $bin: run cargo build --release -p winplace first" >&2; exit 2; }
work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# "<wall s> s, <peak MiB> MiB" of a command, from GNU time's -v report.
measure() {
  /usr/bin/time -v "$@" >/dev/null 2>"$work/time" || true
  awk -F': ' '/Elapsed \(wall clock\)/ {split($2, t, ":"); w = (length(t) == 3) ? t[1]*3600 + t[2]*60 + t[3] : t[1]*60 + t[2]}
              /Maximum resident set size/ {m = $2 / 1024}
              END {printf "%.2f s, %.0f MiB\n", w, m}' "$work/time"
}

snap="$work/big.json"
"$bin" demo-snapshot --nodes "$nodes" --pods "$pods" -o "$snap"
echo "snapshot: $nodes nodes, $pods pods, $(du -m "$snap" | cut -f1) MiB; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "python3 json.load:          $(measure python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$snap")"
echo "winplace audit --snapshot:  $(measure "$bin" audit --snapshot "$snap" --format text)"

# serve: time until /readyz answers 200, and the server's peak memory (VmHWM) at that moment.
port=$((20000 + RANDOM % 20000))
start=$(date +%s.%N)
RUST_LOG=warn "$bin" serve --snapshot "$snap" --listen "127.0.0.1:$port" >/dev/null 2>&1 &
server=$!
ready=
for _ in $(seq 1 3000); do
  if curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; then ready=$(date +%s.%N); break; fi
  sleep 0.1
done
[ -n "$ready" ] || { echo "serve: /readyz did not answer 200 within 300 s" >&2; exit 1; }
hwm=$(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$server/status")
echo "winplace serve --snapshot:  /readyz after $(echo "$ready - $start" | bc) s, peak ${hwm} MiB"
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
