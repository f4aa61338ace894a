#!/usr/bin/env bash
# The Retry-After check with a full table: `mishap serve --journal-size 100000`, 100,000 answers
# carrying Retry-After to as many sessions (the table full), then, for 5 s, requests of new
# sessions answered with Retry-After (each evicts the oldest) alongside requests that carry no
# session and meet no Retry-After; prints wrk's figures for both.
#
#   benchmarks/retry-table.sh path/to/mishap [table size, default 100000]
set -euo pipefail
mishap=$1
size=${2:-100000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cat >"$work/retry.yaml" <<'YAML'
endpoints:
  - endpoint: GET /busy
    rules:
      - name: busy
        respond: { status: 503, headers: { Retry-After: "30" }, text: later }
  - endpoint: GET /plain
    rules:
      - name: plain
        respond: { text: ok }
YAML
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$mishap" serve --port "$port" --scenarios "$work" --journal-size "$size" --log-level warning --watch off >/dev/null &
pid=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/plain" >/dev/null && break; sleep 0.1; done
echo "filling the table: $size answers with Retry-After, one session each"
STOP_AFTER=$((size / 2 + 1)) wrk -t2 -c2 -d30s -s "$here/retry_sessions.lua" "http://127.0.0.1:$port/busy" | grep -E "requests in"
echo "full: new sessions meeting Retry-After (each evicts the oldest), -c2, 5 s"
SESSION_PREFIX=n wrk -t1 -c2 -d5s --latency -s "$here/retry_sessions.lua" "http://127.0.0.1:$port/busy" >"$work/busy.txt" &
busy=$!
echo "meanwhile: requests without session or Retry-After, -c1"
wrk -t1 -c1 -d5s --latency "http://127.0.0.1:$port/plain" | grep -E "Latency  |99%|Requests/sec"
wait "$busy"
echo "(the Retry-After requests)"
grep -E "Latency  |99%|Requests/sec" "$work/busy.txt"
