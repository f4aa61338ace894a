#!/usr/bin/env bash
# Mishap's soak run: a release `mishap serve` under every fault, delay, cycle, session, reload
# and admin call at once for a few minutes, then checked for flat memory, descriptors back to
# their count, a live server and no error but the expected ones (see scripts/soak/soak.py).
#
#   scripts/soak.sh                   3 minutes (SOAK_SECONDS=N to change)
#   scripts/soak.sh --sessions 500    any option of scripts/soak/soak.py (--help lists them)
#
# Environment: SOAK_SECONDS (default 180), SOAK_CONNECTIONS (wrk connections of the clean
# traffic, default 16), MISHAP_BIN (soak an already built binary instead of building one).
# Not part of `make test` or `make check`: `make soak` runs it. Exit status: 0 all checks
# passed, 1 a check failed, 2 the soak could not run.
set -euo pipefail

cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SCRATCH=.build-soak
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

if ! command -v wrk >/dev/null 2>&1; then
    echo "soak: installing wrk" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends wrk
fi
command -v python3 >/dev/null 2>&1 || { echo "soak: python3 is required" >&2; exit 2; }

mkdir -p "$SCRATCH"
if [ -n "${MISHAP_BIN:-}" ]; then
    mishap=$MISHAP_BIN
else
    # A build folder of its own, so that a soak of one build can run while .build is rebuilt.
    mishap=$(SWIFT="$SWIFT" scripts/build-release.sh "$SCRATCH")
fi

exec python3 scripts/soak/soak.py --mishap "$mishap" --seconds "${SOAK_SECONDS:-180}" \
    --connections "${SOAK_CONNECTIONS:-16}" "$@"
