#!/usr/bin/env bash
# Memory of `winplace serve --resolve-images` against a registry that answers every read fault docs/limits.md lists
# (server/bench/hostile_registry.py: a 50 MB manifest, an endless one, 60 MB config blobs announced and
# hidden, an index of 100,000 entries and one of 15,000 under 4 MiB) beside BENIGN small images. Prints the
# server's peak (VmHWM) and current (VmRSS) memory once every image was looked up, and the findings' words;
# first, the peak of `winplace check --resolve-images` of the same pods (its findings stream).
#
#   cargo build --release -p winplace && bash server/bench/registry_memory.sh [BENIGN]
#
# Uses $WINPLACE_BIN, else $CARGO_TARGET_DIR/release/winplace (default target/); listens on 127.0.0.1
# only, writes its inputs to a temporary folder (removed at the end).
set -euo pipefail
benign=${1:-500}
source "$(dirname "$0")/common.sh"

reg_port=$((20000 + RANDOM % 20000)); port=$((reg_port + 1))
python3 "$root/server/bench/hostile_registry.py" "$reg_port" & registry=$!
# It builds its big indexes before it listens: wait for it, or every look-up would fail as unreachable.
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$reg_port/v2/" >/dev/null && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$reg_port/v2/" >/dev/null || { echo "the hostile registry did not start" >&2; exit 1; }
hostile="huge-manifest endless big-config lying-config wide-index many-entries"

# One Windows node; one pod without an OS per image (their names say nothing, so every image is looked up).
python3 - "$work/snap.json" "127.0.0.1:$reg_port" "$benign" $hostile <<'PY'
import json, sys
out, registry, benign, hostile = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
images = [f"{registry}/hostile/{h}:1" for h in hostile] + [f"{registry}/ok/app-{i}:1" for i in range(benign)]
node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "win-0", "labels": {
    "kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}},
    "spec": {"taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]},
    "status": {"nodeInfo": {"kernelVersion": "10.0.20348.2762", "operatingSystem": "windows"}}}
pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{i}", "namespace": "bench"},
         "spec": {"containers": [{"name": "c", "image": image}]}} for i, image in enumerate(images)]
json.dump({"apiVersion": "v1", "kind": "List", "items": [node] + pods}, open(out, "w"))
PY
total=$((benign + 6))

# The same pods as one manifest file: `check` resolves every image, then streams its findings out.
/usr/bin/time -v "$bin" check "$work/snap.json" --resolve-images --insecure-registry "127.0.0.1:$reg_port" \
  --registry-timeout 30 --image-cache-ttl 0 --format json >"$work/check.json" 2>"$work/check.time" || true
echo "check --resolve-images, $total images: $(awk -F': ' '/Maximum resident set size/ {printf "peak %.0f MiB", $2 / 1024}
  /Elapsed \(wall clock\)/ {w = $2} END {printf ", %s wall", w}' "$work/check.time"); findings $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$work/check.json" 2>/dev/null || echo '?')"

RUST_LOG=warn "$bin" serve --snapshot "$work/snap.json" --listen "127.0.0.1:$port" --resolve-images \
  --insecure-registry "127.0.0.1:$reg_port" --registry-timeout 30 >/dev/null 2>&1 &
server=$!
metric() { curl -sf "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
start=$(date +%s)
until [ "$(metric winplace_image_lookups_total || echo 0)" -ge "$total" ] 2>/dev/null \
   && [ "$(metric winplace_image_lookup_failures_total || echo 0)" -ge 6 ] 2>/dev/null; do
  sleep 0.2
  [ $(( $(date +%s) - start )) -lt 300 ] || { echo "the look-ups did not finish within 300 s" >&2; exit 1; }
done
# The batch's answers reach the audit: the six hostile images' findings are served.
unresolved() { curl -sf "http://127.0.0.1:$port/api/workloads?state=all&rule=image-manifest-unresolved" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])'; }
until [ "$(unresolved || echo 0)" -ge 6 ] 2>/dev/null; do
  sleep 0.2
  [ $(( $(date +%s) - start )) -lt 300 ] || { echo "the findings did not arrive within 300 s" >&2; exit 1; }
done
mem() { awk '/VmHWM/ {h = $2 / 1024} /VmRSS/ {r = $2 / 1024} END {printf "peak %.0f MiB, now %.0f MiB", h, r}' "/proc/$server/status"; }
echo "serve --resolve-images, $total images ($benign benign, 6 hostile), after $(( $(date +%s) - start )) s: $(mem); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "lookups $(metric winplace_image_lookups_total), failures $(metric winplace_image_lookup_failures_total), cache hits $(metric winplace_image_cache_hits_total)"
# The rows count findings; each workload's own answer lists them.
curl -sf "http://127.0.0.1:$port/api/workloads?state=all&rule=image-manifest-unresolved" \
  | python3 -c 'import json,sys; [print("/".join(w["owner"][k] for k in ("namespace","kind","name"))) for w in json.load(sys.stdin)["workloads"]]' \
  | while read -r workload; do curl -sf "http://127.0.0.1:$port/api/workloads/$workload"; echo; done \
  | python3 -c 'import json,sys; ms=[f["message"] for l in sys.stdin if l.strip() for f in json.loads(l)["workload"]["findings"] if f["rule"]=="image-manifest-unresolved"]; [print("  ", m[:190]) for m in sorted(set(ms))[:6]]'
