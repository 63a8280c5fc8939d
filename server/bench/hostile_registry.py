#!/usr/bin/env python3
"""A registry that answers every read fault docs/limits.md lists at once (a benchmark fixture, stdlib only).

    python3 server/bench/hostile_registry.py PORT

Repositories under /v2/ (any tag):
  hostile/huge-manifest   a 50 MB manifest with its Content-Length
  hostile/endless         a manifest streamed without a length, never ending
  hostile/big-config      a manifest whose config descriptor says 60 MB (the blob is 60 MB)
  hostile/lying-config    a manifest whose config says 100 bytes; the blob is 60 MB
  hostile/wide-index      an index of 100,000 entries (about 25 MB)
  hostile/many-entries    an index of 15,000 entries, under 4 MiB
  ok/app-N                a small Windows index, of its own digest for each N
Listens on 127.0.0.1 only.
"""

import http.server
import json
import sys

MIB = 1024 * 1024


def entry(i):
    return {
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": "sha256:%064x" % i,
        "size": 1000,
        "platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.%d" % (i % 3000)},
    }


def index(n):
    return json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [entry(i) for i in range(n)],
    }).encode()


def manifest(config_size):
    return json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": "sha256:" + "c" * 64, "size": config_size},
        "layers": [],
    }).encode()


WIDE = index(100_000)
MANY = index(15_000)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_body(self, body, content_type="application/json"):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_spaces(self, length):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        self.end_headers()
        chunk = b" " * MIB
        for _ in range(length // MIB):
            self.wfile.write(chunk)

    def do_GET(self):
        path = self.path
        try:
            if path == "/v2/":
                return self.send_body(b"{}")
            if "/blobs/" in path:
                return self.send_spaces(60 * MIB)
            if "/hostile/huge-manifest/" in path:
                return self.send_spaces(50 * MIB)
            if "/hostile/endless/" in path:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b" " * (64 * 1024)
                while True:
                    self.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            if "/hostile/big-config/" in path:
                return self.send_body(manifest(60 * MIB))
            if "/hostile/lying-config/" in path:
                return self.send_body(manifest(100))
            if "/hostile/wide-index/" in path:
                return self.send_body(WIDE)
            if "/hostile/many-entries/" in path:
                return self.send_body(MANY)
            if path.startswith("/v2/ok/app-"):
                n = int(path.split("/")[3].split("-")[1])
                return self.send_body(json.dumps({
                    "schemaVersion": 2,
                    "mediaType": "application/vnd.oci.image.index.v1+json",
                    "manifests": [entry(1_000_000 + n)],
                }).encode())
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
        except (BrokenPipeError, ConnectionResetError):
            pass


if __name__ == "__main__":
    port = int(sys.argv[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()
