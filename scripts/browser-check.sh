#!/usr/bin/env bash
# make browser-check: CORS proven by a real browser. A page served from one origin (Python's
# http.server) fetches from a Mishap started with --cors for that origin (a credentialed GET
# with a custom header, so preflighted, reading Retry-After; a JSON POST), and from a Mishap
# that allows another origin only (the browser must block it). Then the admin API against what
# a page can do: a page on that other local origin posts a proxy rule with a no-cors fetch and
# resets from a sandboxed frame's form (Origin: null), and nothing may change; a page Mishap
# serves under a name Chromium resolves to 127.0.0.1 (what DNS rebinding achieves) may not read
# the journal. Headless Chromium runs the pages; installed with apt-get when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
if ! command -v chromium >/dev/null 2>&1; then
    echo "browser-check: installing chromium"
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
        # Only the browser is missing, not a fault of Mishap's: say so loudly, without failing CI
        # on a package mirror. Everything the browser checks is also checked over raw sockets
        # in make test (CORSTests).
        echo "browser-check: SKIPPED: chromium could not be installed with apt-get" >&2
        exit 0
    fi
fi
"$SWIFT" build --product mishap >/dev/null
mishap="$("$SWIFT" build --show-bin-path)/mishap"
work=$(mktemp -d /tmp/mishap-browser.XXXXXX)
pids=()
# Servers started inside $(start_mishap ...) run in a subshell, so their pids are kept in a file.
cleanup() {
    for pid in "${pids[@]}" $(cat "$work/pids" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "browser-check: $*" >&2; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
page_port=$(free_port)
page_origin="http://127.0.0.1:$page_port"
start_mishap() {  # name, --cors value, scenarios folder
    "$mishap" serve --port 0 --scenarios "${3:-scenarios}" --cors "$2" >"$work/$1.out" 2>"$work/$1.err" &
    echo $! >>"$work/pids"
    for _ in $(seq 1 100); do
        url=$(sed -n 's/^mishap listening on //p' "$work/$1.out")
        [ -n "$url" ] && { echo "$url" | sed 's/127.0.0.1/localhost/'; return; }
        sleep 0.1
    done
    fail "mishap did not start: $(cat "$work/$1.err")"
}
allowed=$(start_mishap allowed "$page_origin")
other=$(start_mishap other "http://elsewhere.test")
sed "s|MISHAP_URL|$allowed|g; s|OTHER_URL|$other|g" scripts/browser/cors.html >"$work/index.html"
python3 -m http.server "$page_port" --bind 127.0.0.1 --directory "$work" >/dev/null 2>&1 &
pids+=($!)
sleep 0.5
out=$(timeout 90 chromium --headless=new --no-sandbox --disable-gpu --virtual-time-budget=10000 \
      --dump-dom "$page_origin/index.html" 2>/dev/null | sed -n '/<pre id="out">/,/<\/pre>/p')
expected_get='GET 429 retry-after=30 body={"error":true,"reason":"Too many requests"}'
expected_post='POST 200 body={"user_id":"123","token":"c7d83mdla_3ms"}'
echo "$out" | grep -qF "$expected_get" || fail "the credentialed GET did not read as expected: $out"
echo "$out" | grep -qF "$expected_post" || fail "the JSON POST did not read as expected: $out"
echo "$out" | grep -qF "OTHER blocked" || fail "a Mishap allowing another origin was not blocked: $out"
grep -q "OPTIONS /isUserNameAvailable status=204" "$work/allowed.err" || fail "no preflight answered: $(cat "$work/allowed.err")"

# Cross-site request forgery: the page's no-cors POST and its sandboxed form reach Mishap, and
# are refused; the journal keeps what it had and no rule is added.
curl -fsS "$allowed/isUserNameAvailable?userName=before-the-page" >/dev/null
sed "s|MISHAP_URL|$allowed|g" scripts/browser/csrf.html >"$work/csrf.html"
csrf=$(timeout 90 chromium --headless=new --no-sandbox --disable-gpu --virtual-time-budget=10000 \
       --dump-dom "$page_origin/csrf.html" 2>/dev/null | sed -n '/<pre id="out">/,/<\/pre>/p')
echo "$csrf" | grep -qF "RULES sent" || fail "the page did not send its rule: $csrf"
grep -q "POST /__mishap/rules status=403" "$work/allowed.err" || fail "the page's rule was not refused: $(cat "$work/allowed.err")"
grep -q "POST /__mishap/reset status=403" "$work/allowed.err" || fail "the Origin: null form was not refused: $(cat "$work/allowed.err")"
[ "$(curl -fsS "$allowed/__mishap/rules")" = '{"rules":[]}' ] || fail "a rule was added: $(curl -sS "$allowed/__mishap/rules")"
curl -fsS "$allowed/__mishap/requests?path=/isUserNameAvailable" | grep -q before-the-page || fail "the journal was reset"

# DNS rebinding: the page is same-origin with Mishap under a name of its own, and is refused.
mkdir -p "$work/rebound" && cp scripts/browser/rebound.yaml "$work/rebound/"
rebound=$(start_mishap rebound "http://elsewhere.test" "$work/rebound")
rebound_port=${rebound##*:}
read_out=$(timeout 90 chromium --headless=new --no-sandbox --disable-gpu --virtual-time-budget=10000 \
           --host-resolver-rules="MAP rebound.test 127.0.0.1" \
           --dump-dom "http://rebound.test:$rebound_port/rebound.html" 2>/dev/null | sed -n '/<pre id="out">/,/<\/pre>/p')
echo "$read_out" | grep -qF "REBOUND 403" || fail "a page under a rebound name read the admin API: $read_out"
echo "browser-check: ok (headless Chromium: preflight, credentialed GET reading Retry-After, JSON POST; other origin blocked;"
echo "  a page's no-cors rule and Origin-null form refused, nothing changed; a rebound name refused the journal)"
