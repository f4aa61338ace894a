#!/usr/bin/env bash
# make api-check: the admin API against its OpenAPI description (GET /__mishap/openapi.json),
# fuzzed with schemathesis (from PyPI, in a virtual environment under .build). A debug `mishap
# serve` of the default scenarios on a free port, with HTTPS (a local authority made in a
# temporary folder, so /__mishap/tls answers), a small limit on runtime rules (so the 507 comes)
# and a small journal; first the journal's paging is read through 'next' (scripts/api-check/
# traffic.py paging), then schemathesis calls every operation with examples built from the
# description, valid and invalid, while traffic.py sends requests of every kind to the
# scenarios (admin calls are not journaled: without them the journal, the unmatched list and
# the Retry-After check would be empty). Every answer is checked (scripts/api-check/
# schemathesis.toml): no 5xx but the documented 507, and status codes, content types, headers
# and JSON shapes as described. Then the server must still answer; it is stopped whatever
# happens.
#
# API_CHECK_EXAMPLES (default 100) bounds the examples per operation, API_CHECK_SEED (default 1)
# repeats a run, API_CHECK_ARGS passes options to `schemathesis run`.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
venv=.build/api-check-venv
if ! "$venv/bin/schemathesis" --version >/dev/null 2>&1 || ! "$venv/bin/python" -c 'import jsonschema' 2>/dev/null; then
    echo "api-check: installing schemathesis in $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis>=4.32,<5" jsonschema
fi
"$SWIFT" build --product mishap >/dev/null
mishap="$("$SWIFT" build --show-bin-path)/mishap"

work="$(mktemp -d)"
server=""
traffic=""
stop() {
    for pid in $traffic $server; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$work"
}
trap stop EXIT
"$mishap" serve --port 0 --scenarios scenarios --log-level warning --tls-port 0 --tls-dir "$work/tls" \
    --max-runtime-rules 5 --journal-size 100 >"$work/out" 2>"$work/err" &
server=$!
url=""
for _ in $(seq 1 600); do
    url="$(sed -n 's/^mishap listening on \(http:\/\/[^ ]*\).*/\1/p' "$work/out" | head -n 1)"
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$work/err" >&2; echo "api-check: mishap did not start" >&2; exit 1; }
    sleep 0.05
done
[ -n "$url" ] || { echo "api-check: mishap did not say where it listens" >&2; exit 1; }
description="$url/__mishap/openapi.json"

"$venv/bin/python" scripts/api-check/traffic.py paging "$url" "$description"
"$venv/bin/python" scripts/api-check/traffic.py loop "$url" 900 &
traffic=$!

# schemathesis leaves out the operation a description is loaded from: it reads the served
# description from a file instead, so GET /__mishap/openapi.json is checked as well.
curl -fsS -o "$work/openapi.json" "$description"
echo "api-check: fuzzing $url with the description it serves ($description)"
status=0
"$venv/bin/schemathesis" --config-file scripts/api-check/schemathesis.toml run "$work/openapi.json" --url "$url" \
    --max-examples "${API_CHECK_EXAMPLES:-100}" --seed "${API_CHECK_SEED:-1}" --no-color \
    ${API_CHECK_ARGS:-} || status=$?

# Whatever was sent, the server must still answer.
if ! curl -fsS -o /dev/null "$url/__mishap/health"; then
    echo "api-check: FAILED: mishap does not answer after the run" >&2
    status=1
fi
exit "$status"
