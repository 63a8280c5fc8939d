#!/usr/bin/env bash
# Issue 26's numbers: `winplace explain` of a 100 MB log (wall time, peak memory), and `winplace audit
# --snapshot` of 5,000 nodes / 150,000 pods with 300,000 Events (peak memory under 1 GiB). Figures go
# into the benchmark table.
#
#   cargo build --release -p winplace && bash server/bench/explain.sh [LOG_MB] [NODES] [PODS] [EVENTS]
#
# The log mixes what a kubelet and containerd print (most lines explain nothing), colour codes, CRLF
# line ends, a line of binary junk, one line of 8 MB without a newline break, and the messages of every
# cause. Uses $CARGO_TARGET_DIR/release/winplace (default target/); inputs in a temporary folder.
set -euo pipefail
log_mb=${1:-100}
nodes=${2:-5000}
pods=${3:-150000}
events=${4:-300000}
source "$(dirname "$0")/common.sh"

log="$work/kubelet.log"
python3 - "$log" "$log_mb" <<'PY'
import sys
path, mb = sys.argv[1], int(sys.argv[2])
ordinary = [
    'I1125 09:14:03.118204    4312 kubelet.go:2421] "SyncLoop ADD" source="api" pods=["shop/web-7d9-x2"]\n',
    'I1125 09:14:03.514420    4312 kuberuntime_manager.go:1041] "Creating PodSandbox for pod" pod="shop/web-7d9-x2"\n',
    'time="2026-11-25T09:14:04.0012Z" level=info msg="PullImage \\"nginx:1.27\\" returns image reference"\r\n',
    '\x1b[32mI1125 09:14:05.100001\x1b[0m    4312 prober.go:107] "Probe succeeded" probeType="Readiness" pod="shop/web-7d9-x2"\n',
    'E1125 09:14:06.3 4312 pod_workers.go:1301] "Error syncing pod, skipping" err="failed to \\"StartContainer\\" for \\"app\\" with CrashLoopBackOff" pod="shop/api-0"\n',
]
explained = [
    'E1125 09:14:07.2 4312 kuberuntime_manager.go:1172] "CreatePodSandbox for pod failed" err="rpc error: code = Unknown desc = hcs::CreateComputeSystem 4b1c: The container operating system does not match the host operating system." pod="billing/invoice-0"\n',
    'E1125 09:14:08.9 4312 remote_image.go:180] "PullImage from image service failed" err="rpc error: code = NotFound desc = failed to pull and unpack image \\"mcr.microsoft.com/windows/servercore:ltsc2025\\": no match for platform in manifest: not found" image="mcr.microsoft.com/windows/servercore:ltsc2025"\n',
    'Warning  FailedScheduling  95s  default-scheduler  0/5 nodes are available: 2 node(s) had untolerated taint {os: windows}, 3 node(s) didn\'t match Pod\'s node affinity/selector.\n',
]
size = mb * 1024 * 1024
with open(path, 'wb') as f:
    f.write(b'\xff\xfe\x00binary junk\x01\x02\n')
    f.write(b'x' * (8 * 1024 * 1024) + b'\n')
    written, i = 8 * 1024 * 1024, 0
    while written < size:
        line = (explained[i // 100 % 3] if i % 100 == 0 else ordinary[i % 5]).encode()
        f.write(line)
        written += len(line)
        i += 1
PY
echo "log: $(du -m "$log" | cut -f1) MiB, $(wc -l < "$log") lines; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "winplace explain (text):   $(measure "$bin" explain "$log")"
echo "winplace explain (json):   $(measure "$bin" explain --format json "$log")"

snap="$work/big.json"
"$bin" demo-snapshot --nodes "$nodes" --pods "$pods" --events "$events" -o "$snap"
echo "snapshot: $nodes nodes, $pods pods, $events events, $(du -m "$snap" | cut -f1) MiB; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "winplace audit --snapshot: $(measure "$bin" audit --snapshot "$snap" --format json)"
"$bin" audit --snapshot "$snap" --format json | python3 -c "import json,sys; r=json.load(sys.stdin); print('incidents:', len(r['incidents']))"
