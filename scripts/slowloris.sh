#!/usr/bin/env bash
# A slowloris flood against a release `mishap serve`: more trickling connections than its
# connection limit, and the latency of normal requests meanwhile (see scripts/slowloris.py).
#
#   scripts/slowloris.sh                     60 s of flood at --connection-limit 200
#   scripts/slowloris.sh --head-timeout 0    the server without the head deadline (fails)
#   scripts/slowloris.sh --seconds 20        any option of scripts/slowloris.py (--help lists them)
#
# Environment: MISHAP_BIN (flood an already built binary instead of building one). Not part of
# `make test` or `make check`: `make slowloris` runs it. Exit status: 0 every normal request was
# answered in time, 1 one was not, 2 the run could not be made.
set -euo pipefail

cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
# The soak's build folder: the same release binary serves both.
SCRATCH=.build-soak
command -v python3 >/dev/null 2>&1 || { echo "slowloris: python3 is required" >&2; exit 2; }

mkdir -p "$SCRATCH"
if [ -n "${MISHAP_BIN:-}" ]; then
    mishap=$MISHAP_BIN
else
    mishap=$(SWIFT="$SWIFT" scripts/build-release.sh "$SCRATCH")
fi

exec python3 scripts/slowloris.py --mishap "$mishap" "$@"
