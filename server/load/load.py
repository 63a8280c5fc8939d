#!/usr/bin/env python3
"""Load on the heavy answers, with the probes timed beside it (a benchmark, not a test).

Writes a synthetic cluster (`winplace demo-snapshot`), serves it on 127.0.0.1 with `winplace serve --snapshot`,
then for a bounded time keeps CONNECTIONS keep-alive connections busy on the heavy routes (wrk, one process
per route, the connections shared among them) while this script asks /healthz and /readyz every 100 ms on
fresh connections, as the kubelet does, and samples the server's memory. Prints requests/s and latencies
per route, the probes' latencies, and the server's resident memory before, during and after. wrk comes
from Debian (installed with apt-get when missing); nothing leaves 127.0.0.1.

    python3 server/load/load.py                                   # 1,000 nodes / 30,000 pods, 200 connections, 30 s
    python3 server/load/load.py --bin target/release/winplace --seconds 10 --connections 50
"""

import argparse
import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HOST = "127.0.0.1"
# The longest any step waits: the server's first audit of a big snapshot, one request.
STARTUP_TIMEOUT_S = 300
REQUEST_TIMEOUT_S = 60


def parse_args():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    default_bin = os.path.join(target, "release", "winplace")
    if not os.path.exists(default_bin):
        default_bin = os.path.join(target, "debug", "winplace")
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=default_bin, help="the winplace binary (default: release, else debug, build)")
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--pods", type=int, default=30000)
    p.add_argument("--snapshot", help="serve this snapshot instead of writing one")
    p.add_argument("--connections", type=int, default=200)
    p.add_argument("--seconds", type=int, default=30, help="how long the load lasts (at most 600)")
    p.add_argument(
        "--routes",
        default="/api/nodes,/api/workloads,/api/workloads?state=all&limit=1000,/api/context",
        help="comma-separated paths the connections cycle through",
    )
    p.add_argument("--accept-encoding", default="gzip", help="the load's Accept-Encoding ('' for none)")
    args = p.parse_args()
    if not 0 < args.seconds <= 600:
        p.error("--seconds must be in (0, 600]")
    return args


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def memory_kb(pid):
    """(VmRSS, VmHWM) of `pid` in kB, from /proc."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    return fields.get("VmRSS", 0), fields.get("VmHWM", 0)


async def read_response(reader):
    """Reads one HTTP/1.1 response; returns (status, body length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    if "content-length" in headers:
        n = int(headers["content-length"])
        await reader.readexactly(n)
        return status, n
    if headers.get("transfer-encoding", "").lower() == "chunked":
        total = 0
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            total += size
            if size == 0:
                return status, total
    raise RuntimeError(f"a response without length: {lines[0]}")


def request_bytes(path, accept):
    lines = [f"GET {path} HTTP/1.1", f"Host: {HOST}"]
    if accept:
        lines.append(f"Accept-Encoding: {accept}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def probe(port, path, deadline, out):
    """Asks `path` every 100 ms on a fresh connection (as the kubelet does)."""
    while time.monotonic() < deadline:
        t0 = time.monotonic()
        try:
            reader, writer = await asyncio.open_connection(HOST, port)
            writer.write(request_bytes(path, ""))
            await writer.drain()
            status, _ = await asyncio.wait_for(read_response(reader), REQUEST_TIMEOUT_S)
            writer.close()
            out.append((time.monotonic() - t0, status))
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as e:
            out.append((time.monotonic() - t0, repr(e)))
        await asyncio.sleep(0.1)


async def sample_memory(pid, deadline, out):
    while time.monotonic() < deadline:
        out.append(memory_kb(pid))
        await asyncio.sleep(0.5)


def percentile(values, q):
    values = sorted(values)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(q * len(values)))]


def ms(seconds):
    return f"{seconds * 1000:.1f} ms"


def ensure_wrk():
    """The path of wrk, installed from Debian when missing (as `cargo xtask test` installs chromium)."""
    wrk = shutil.which("wrk")
    if wrk:
        return wrk
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    print("wrk is missing: apt-get install wrk", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo + ["apt-get", "install", "-y", "wrk"], check=True, env=env, timeout=STARTUP_TIMEOUT_S)
    wrk = shutil.which("wrk")
    if not wrk:
        sys.exit("wrk is still missing after apt-get install wrk")
    return wrk


def parse_wrk(text):
    """(requests/s, {percentile: seconds}, non-2xx, socket errors) from wrk's --latency report."""
    def seconds(value, unit):
        return float(value) * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[unit]

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    pct = {int(p): seconds(v, u) for p, v, u in re.findall(r"^\s+(\d+)%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M)}
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    errors = re.search(r"Socket errors:(.*)", text)
    return rps, pct, int(non2xx.group(1)) if non2xx else 0, errors.group(1).strip() if errors else "none"


async def run_load(args, port, pid):
    routes = args.routes.split(",")
    wrk = ensure_wrk()
    per_route = max(1, args.connections // len(routes))
    headers = ["-H", f"Accept-Encoding: {args.accept_encoding}"] if args.accept_encoding else []
    loads = [
        subprocess.Popen(
            [wrk, "-t1", f"-c{per_route}", f"-d{int(args.seconds)}s", f"--timeout={REQUEST_TIMEOUT_S}s", "--latency",
             *headers, f"http://{HOST}:{port}{path}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        for path in routes
    ]
    deadline = time.monotonic() + args.seconds
    health, ready, memory = [], [], []
    await asyncio.gather(
        probe(port, "/healthz", deadline, health),
        probe(port, "/readyz", deadline, ready),
        sample_memory(pid, deadline, memory),
    )
    print(f"load: {per_route * len(routes)} connections (wrk, {per_route} per route) for {args.seconds:.0f} s, "
          f"Accept-Encoding: {args.accept_encoding or '(none)'}")
    for path, load in zip(routes, loads):
        out, _ = load.communicate(timeout=args.seconds + REQUEST_TIMEOUT_S + 30)
        try:
            rps, pct, non2xx, errors = parse_wrk(out)
        except AttributeError:
            print(f"  {path}: wrk said:\n{out}")
            continue
        print(f"  {path}: {rps:.0f} requests/s, p50 {ms(pct.get(50, float('nan')))}, p99 {ms(pct.get(99, float('nan')))}, "
              f"non-2xx: {non2xx}, socket errors: {errors}")
    for name, rows in (("/healthz", health), ("/readyz", ready)):
        times = [t for t, s in rows if s == 200]
        failed = [s for _, s in rows if s != 200]
        print(
            f"  probe {name}: {len(rows)} asked, p50 {ms(percentile(times, 0.5))}, p99 {ms(percentile(times, 0.99))}, "
            f"max {ms(max(times, default=0))}, failed: {len(failed)}"
        )
    rss = [r for r, _ in memory]
    print(f"  memory during the load: RSS {min(rss, default=0) // 1024}–{max(rss, default=0) // 1024} MiB")


def main():
    args = parse_args()
    if not os.path.exists(args.bin):
        sys.exit(f"{args.bin} does not exist: build it first (cargo build --release -p winplace)")
    with tempfile.TemporaryDirectory(prefix="winplace-load-") as tmp:
        snapshot = args.snapshot
        if not snapshot:
            snapshot = os.path.join(tmp, "cluster.json")
            subprocess.run(
                [args.bin, "demo-snapshot", "--nodes", str(args.nodes), "--pods", str(args.pods), "-o", snapshot],
                check=True, timeout=STARTUP_TIMEOUT_S,
            )
        port = free_port()
        server = subprocess.Popen(
            [args.bin, "serve", "--snapshot", snapshot, "--listen", f"{HOST}:{port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            t0 = time.monotonic()
            while True:
                if server.poll() is not None:
                    sys.exit(f"winplace serve exited with {server.returncode}")
                try:
                    with urllib.request.urlopen(f"http://{HOST}:{port}/readyz", timeout=5) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() - t0 > STARTUP_TIMEOUT_S:
                    sys.exit(f"/readyz did not answer 200 within {STARTUP_TIMEOUT_S} s")
                time.sleep(0.2)
            rss, hwm = memory_kb(server.pid)
            print(f"{args.bin}: {args.nodes if not args.snapshot else '?'} nodes, ready after {time.monotonic() - t0:.1f} s; "
                  f"RSS {rss // 1024} MiB (peak so far {hwm // 1024} MiB)")
            asyncio.run(run_load(args, port, server.pid))
            time.sleep(1)
            rss, hwm = memory_kb(server.pid)
            print(f"  after the load: RSS {rss // 1024} MiB, peak RSS over the whole run {hwm // 1024} MiB")
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    main()
