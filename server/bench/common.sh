# Sourced by the benchmark scripts beside it (not run alone): the repository root, the release binary
# ($WINPLACE_BIN, else $CARGO_TARGET_DIR/release/winplace, default target/), a temporary folder removed at
# exit with the processes the script started ($server, $registry) stopped, and the shared measurements.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${WINPLACE_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/winplace}
[ -x "$bin" ] || { echo "no $bin: run cargo build --release -p winplace first" >&2; exit 2; }
work=$(mktemp -d)
server= registry=
cleanup() { for p in $server $registry; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

# `measure CMD…`: CMD's wall time and peak resident memory, as "12.34 s, 567 MiB".
measure() {
  /usr/bin/time -v "$@" >/dev/null 2>"$work/time" || true
  awk -F': ' '/Elapsed \(wall clock\)/ {split($2, t, ":"); w = (length(t) == 3) ? t[1]*3600 + t[2]*60 + t[3] : t[1]*60 + t[2]}
              /Maximum resident set size/ {m = $2 / 1024}
              END {printf "%.2f s, %.0f MiB\n", w, m}' "$work/time"
}

# `serve_snapshot SNAPSHOT`: starts `winplace serve --snapshot` on a free 127.0.0.1 port ($port, its pid in
# $server) and waits until /readyz answers 200 ($ready_after: the seconds that took); gives up after 300 s.
serve_snapshot() {
  port=$((20000 + RANDOM % 20000))
  local start ready=
  start=$(date +%s.%N)
  RUST_LOG=warn "$bin" serve --snapshot "$1" --listen "127.0.0.1:$port" >/dev/null 2>&1 &
  server=$!
  for _ in $(seq 1 3000); do
    if curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; then ready=$(date +%s.%N); break; fi
    sleep 0.1
  done
  [ -n "$ready" ] || { echo "serve: /readyz did not answer 200 within 300 s" >&2; exit 1; }
  ready_after=$(echo "$ready - $start" | bc)
}
