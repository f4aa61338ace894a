#!/usr/bin/env bash
# make dashboard-check: the dashboard at /__mishap/ui/ in a real browser. Selenium (from PyPI,
# in a virtual environment under .build) drives headless Chromium (Debian's chromium and
# chromium-driver, installed with apt-get when missing) through Tests/dashboard: rows appearing
# live, filters, a request's detail, near misses, rules and hit counts, sessions and reset, the
# Retry-After timeline, the Verdict tab, forcing a rule, a failed reload's problems, the admin token,
# and a stream's events and a WebSocket's messages followed as they pass (test_streams_dashboard.py).
# DASHBOARD_SCREENSHOTS=1 rewrites the screenshots in docs/ that the README shows.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT="${SWIFT:-swift}"
skip() {
    # Only the browser or Selenium is missing, not a fault of Mishap's: say so loudly, without
    # failing CI on a package mirror. The page's server side is tested in make test
    # (DashboardTests).
    echo "dashboard-check: SKIPPED: $*" >&2
    exit 0
}
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    echo "dashboard-check: installing chromium and chromium-driver"
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; } \
        || skip "chromium and chromium-driver could not be installed with apt-get"
fi
venv=.build/dashboard-venv
if ! "$venv/bin/python" -c 'import selenium' 2>/dev/null; then
    echo "dashboard-check: installing selenium in $venv"
    python3 -m venv "$venv" || skip "python3 -m venv failed (Debian: apt-get install python3-venv)"
    "$venv/bin/pip" install -q selenium || skip "selenium could not be installed with pip"
fi
"$SWIFT" build --product mishap >/dev/null
export MISHAP_BIN="$("$SWIFT" build --show-bin-path)/mishap"
exec "$venv/bin/python" -m unittest discover -s Tests/dashboard -p 'test_*.py' -v
