#!/usr/bin/env bash
# make test's Python helpers: jsonschema and PyYAML for the python3 that runs Tests/python (the
# scenario schema tests: docs/scenario.schema.json against the files and the loader), urllib3
# (the verdict tests drive its Retry, a client retry library of the field), and websockets (the
# WebSocket tests' client). Does nothing when all
# import; else installs them quietly with pip (into the environment python3
# runs in, or the user's site-packages where that is not writable or is managed by the system),
# or, with no pip, Debian's python3-jsonschema and python3-yaml with apt-get.
set -euo pipefail
importable() { python3 -c 'import jsonschema, yaml, urllib3, websockets' 2>/dev/null; }
importable && exit 0
echo "mishap: installing jsonschema, PyYAML, urllib3 and websockets for $(command -v python3) (the scenario schema tests)"
pip=(python3 -m pip install --quiet --disable-pip-version-check)
if python3 -m pip --version >/dev/null 2>&1; then
    "${pip[@]}" jsonschema pyyaml urllib3 websockets 2>/dev/null \
        || "${pip[@]}" --user jsonschema pyyaml urllib3 websockets 2>/dev/null \
        || "${pip[@]}" --user --break-system-packages jsonschema pyyaml urllib3 websockets \
        || true
elif command -v apt-get >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-jsonschema python3-yaml python3-urllib3 python3-websockets >/dev/null \
        || true
fi
importable || { echo "mishap: python3 cannot import jsonschema, yaml, urllib3 and websockets; install them (pip install jsonschema pyyaml urllib3 websockets)" >&2; exit 1; }
