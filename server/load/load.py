#!/usr/bin/env python3
"""Load on the heavy answers, with the probes timed beside it (a benchmark, not a test).

Writes a synthetic cluster (`winplace demo-snapshot`), serves it on 127.0.0.1 with `winplace serve --snapshot`,
then for a bounded time keeps CONNECTIONS keep-alive connections busy on the heavy routes (wrk, one process
per route, the connections shared among them), SSE clients on /api/events, and IDLE connections that send
nothing or their headers one byte at a time (opened again whenever the server closes them), while this
script asks /healthz and /readyz every 100 ms on fresh connections, as the kubelet does (on the probe
listener, `serve --probe-listen`, as the deployment's probes; /healthz on the main listener too, to compare),
and samples the server's memory and open file descriptors. The SSE and idle clients live in a second process, so that
their work does not delay the probes' own clock. Prints requests/s and latencies per route, the probes'
latencies, what happened to the SSE and idle clients, and the server's resident memory before, during and
after. wrk comes from Debian (installed with apt-get when missing); nothing leaves 127.0.0.1.

    python3 server/load/load.py          # 1,000 nodes / 30,000 pods; 200 connections, 500 SSE, 3,000 idle; 30 s
    python3 server/load/load.py --bin target/release/winplace --seconds 10 --connections 50 --sse 0 --idle 0
"""

import argparse
import asyncio
import multiprocessing
import os
import re
import resource
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
    p.add_argument("--connections", type=int, default=200, help="wrk connections on the heavy routes")
    p.add_argument("--sse", type=int, default=500, help="clients that hold /api/events open")
    p.add_argument("--idle", type=int, default=3000,
                   help="connections that send nothing (half) or their headers one byte every 2 s (half)")
    p.add_argument("--seconds", type=int, default=30, help="how long the load lasts (at most 600)")
    p.add_argument(
        "--routes",
        default="/api/nodes,/api/workloads,/api/workloads?state=all&limit=1000,/api/context",
        help="comma-separated paths the connections cycle through",
    )
    p.add_argument("--no-probe-listener", action="store_true",
                   help="serve without --probe-listen (the probes then share the main listener with the load)")
    p.add_argument("--accept-encoding", default="gzip", help="the load's Accept-Encoding ('' for none)")
    args = p.parse_args()
    if not 0 < args.seconds <= 600:
        p.error("--seconds must be in (0, 600]")
    if min(args.connections, args.sse, args.idle) < 0 or args.sse + args.idle > 10000:
        p.error("--connections, --sse and --idle must be >= 0, --sse + --idle at most 10,000")
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


def open_fds(pid):
    """How many file descriptors `pid` holds (its sockets, mostly)."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


async def sample_memory(pid, deadline, out):
    while time.monotonic() < deadline:
        out.append((*memory_kb(pid), open_fds(pid)))
        await asyncio.sleep(0.5)


# --- The SSE and idle clients (in their own process) -------------------------------------------------

SLOW_HEADER_GAP_S = 2.0


async def sse_client(port, deadline, out):
    """Holds /api/events open until `deadline`; records whether `hello` came and whether the server
    closed the stream early."""
    got_hello, closed_early, error = False, False, None
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), REQUEST_TIMEOUT_S)
        writer.write(request_bytes("/api/events", ""))
        await writer.drain()
        while time.monotonic() < deadline:
            try:
                line = await asyncio.wait_for(reader.readline(), max(0.1, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                break
            if not line:
                closed_early = True
                break
            got_hello = got_hello or line.startswith(b"event: hello")
        writer.close()
    except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as e:
        error = repr(e)
    out.append((got_hello, closed_early, error))


async def idle_client(port, slow, deadline, out):
    """Opens a connection that sends nothing (or a request head one byte every SLOW_HEADER_GAP_S), and
    again whenever the server closes it, until `deadline`; records each connection's lifetime and
    whether the server closed it."""
    # A head that never ends: no blank line.
    head = f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\nX-Padding: ".encode() + b"x" * 256
    while time.monotonic() < deadline:
        t0 = time.monotonic()
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), REQUEST_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError) as e:
            out.append(("connect-failed", time.monotonic() - t0, repr(e)))
            await asyncio.sleep(1)
            continue
        closed_by_server = False
        sent = 0
        try:
            while time.monotonic() < deadline:
                wait = SLOW_HEADER_GAP_S if slow else deadline - time.monotonic()
                try:
                    data = await asyncio.wait_for(reader.read(1024), max(0.05, min(wait, deadline - time.monotonic())))
                except asyncio.TimeoutError:
                    data = None
                if data == b"" or (data and not data.startswith(b"HTTP/1.1 200")):
                    # Closed (or refused with 408 and closed).
                    closed_by_server = True
                    break
                if data:
                    out.append(("answered", time.monotonic() - t0, "the server answered a head never finished"))
                    break
                if slow and sent < len(head) and time.monotonic() < deadline:
                    writer.write(head[sent:sent + 1])
                    sent += 1
                    await writer.drain()
        except (ConnectionResetError, BrokenPipeError):
            closed_by_server = True
        except OSError as e:
            out.append(("error", time.monotonic() - t0, repr(e)))
        writer.close()
        out.append(("closed" if closed_by_server else "open-at-end", time.monotonic() - t0, None))


async def hold_connections(port, sse, idle, seconds):
    deadline = time.monotonic() + seconds
    sse_rows, idle_rows = [], []
    tasks = [sse_client(port, deadline, sse_rows) for _ in range(sse)]
    tasks += [idle_client(port, i % 2 == 1, deadline, idle_rows) for i in range(idle)]
    await asyncio.gather(*tasks)
    return sse_rows, idle_rows


def holder_main(port, sse, idle, seconds, conn):
    """The second process: holds the SSE and idle clients, sends back what happened to them."""
    conn.send(asyncio.run(hold_connections(port, sse, idle, seconds)))
    conn.close()


def report_holders(sse_rows, idle_rows, sse_wanted, idle_wanted):
    if sse_wanted:
        hello = sum(1 for h, _, _ in sse_rows if h)
        early = sum(1 for _, c, _ in sse_rows if c)
        errors = [e for _, _, e in sse_rows if e]
        print(f"  SSE: {len(sse_rows)} clients, {hello} got hello, {early} closed before the end, "
              f"{len(errors)} errors{': ' + errors[0] if errors else ''}")
    if idle_wanted:
        closed = [t for kind, t, _ in idle_rows if kind == "closed"]
        still = sum(1 for kind, _, _ in idle_rows if kind == "open-at-end")
        odd = [(k, e) for k, _, e in idle_rows if k not in ("closed", "open-at-end")]
        print(f"  idle and slow-header: {idle_wanted} at a time, {len(idle_rows)} connections in all, "
              f"{len(closed)} closed by the server after p50 {percentile(closed, 0.5):.1f} s / max "
              f"{max(closed, default=0):.1f} s, {still} open at the end (opened less than a timeout before), "
              f"{len(odd)} other{': ' + str(odd[0]) if odd else ''}")


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


def listen_overflows():
    """The kernel's count of connections dropped because a listen queue was full (this network namespace)."""
    try:
        with open("/proc/net/netstat") as f:
            rows = [line.split() for line in f if line.startswith("TcpExt:")]
        return int(dict(zip(rows[0][1:], rows[1][1:]))["ListenOverflows"])
    except (OSError, KeyError, IndexError, ValueError):
        return None


async def run_load(args, port, probe_port, pid):
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
    holder, theirs = None, None
    if args.sse or args.idle:
        spawn = multiprocessing.get_context("spawn")
        ours, theirs = spawn.Pipe(duplex=False)
        holder = spawn.Process(target=holder_main, args=(port, args.sse, args.idle, args.seconds, theirs))
        holder.start()
    deadline = time.monotonic() + args.seconds
    health, ready, main_health, memory = [], [], [], []
    overflows = listen_overflows()
    await asyncio.gather(
        probe(probe_port, "/healthz", deadline, health),
        probe(probe_port, "/readyz", deadline, ready),
        *([probe(port, "/healthz", deadline, main_health)] if probe_port != port else []),
        sample_memory(pid, deadline, memory),
    )
    if overflows is not None:
        overflows = listen_overflows() - overflows
    print(f"load: {per_route * len(routes)} connections (wrk, {per_route} per route) for {args.seconds:.0f} s, "
          f"Accept-Encoding: {args.accept_encoding or '(none)'}; {args.sse} SSE clients; {args.idle} idle and "
          f"slow-header connections; load average before: {LOAD_BEFORE}")
    for path, load in zip(routes, loads):
        out, _ = load.communicate(timeout=args.seconds + REQUEST_TIMEOUT_S + 30)
        try:
            rps, pct, non2xx, errors = parse_wrk(out)
        except AttributeError:
            print(f"  {path}: wrk said:\n{out}")
            continue
        print(f"  {path}: {rps:.0f} requests/s, p50 {ms(pct.get(50, float('nan')))}, p99 {ms(pct.get(99, float('nan')))}, "
              f"non-2xx: {non2xx}, socket errors: {errors}")
    where = "probe listener" if probe_port != port else "main listener"
    rows_by_name = [(f"/healthz ({where})", health), (f"/readyz ({where})", ready)]
    if main_health:
        rows_by_name.append(("/healthz (main listener)", main_health))
    for name, rows in rows_by_name:
        times = [t for t, s in rows if s == 200]
        failed = [s for _, s in rows if s != 200]
        print(
            f"  probe {name}: {len(rows)} asked, p50 {ms(percentile(times, 0.5))}, p99 {ms(percentile(times, 0.99))}, "
            f"max {ms(max(times, default=0))}, failed: {len(failed)}"
        )
    if holder:
        if ours.poll(args.seconds + REQUEST_TIMEOUT_S + 30):
            report_holders(*ours.recv(), args.sse, args.idle)
        else:
            print("  the SSE and idle clients did not report")
        holder.join(timeout=10)
        if holder.is_alive():
            holder.terminate()
    rss = [r for r, _, _ in memory]
    fds = [f for _, _, f in memory]
    print(f"  memory during the load: RSS {min(rss, default=0) // 1024}–{max(rss, default=0) // 1024} MiB; "
          f"server file descriptors {min(fds, default=0)}–{max(fds, default=0)}")
    # Bounded or growing: the highest RSS of each tenth of the run (samples every 0.5 s).
    step = max(1, len(rss) // 10)
    windows = [max(rss[i:i + step]) // 1024 for i in range(0, len(rss), step)]
    print(f"  highest RSS per {step / 2:.0f} s: {' '.join(str(w) for w in windows)} MiB")
    print(f"  connections the kernel dropped because a listen queue was full (whole machine): {overflows}")
    print(f"  load average after: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")


LOAD_BEFORE = ""


def raise_fd_limit(wanted):
    """Raises this process's (and so the server's) open-file limit to `wanted` when the hard limit allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        new = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        if new < wanted:
            print(f"open-file limit {new} < {wanted}: some connections will fail", flush=True)


def main():
    global LOAD_BEFORE
    args = parse_args()
    raise_fd_limit(args.connections + args.sse + args.idle + 1024)
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
        probe_port = port if args.no_probe_listener else free_port()
        probe_args = [] if args.no_probe_listener else ["--probe-listen", f"{HOST}:{probe_port}"]
        server = subprocess.Popen(
            [args.bin, "serve", "--snapshot", snapshot, "--listen", f"{HOST}:{port}", *probe_args],
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
            LOAD_BEFORE = " ".join(f"{x:.1f}" for x in os.getloadavg())
            asyncio.run(run_load(args, port, probe_port, server.pid))
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
