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
# The flags of `make release`: the Makefile passes them as RELEASE_FLAGS, read from
# scripts/release-flags, which this reads itself when run by hand.
read -r -a RELEASE <<<"${RELEASE_FLAGS:-$(cat scripts/release-flags)}"
[ ${#RELEASE[@]} -gt 0 ] || { echo "soak: no release flags (scripts/release-flags)" >&2; exit 2; }
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
    # Sources may change under a running build (others edit the tree): retry a few times then.
    echo "soak: building mishap (release, $SCRATCH/)" >&2
    for attempt in 1 2 3; do
        if "$SWIFT" build "${RELEASE[@]}" --scratch-path "$SCRATCH" --product mishap >"$SCRATCH/build.log" 2>&1; then
            break
        fi
        if [ "$attempt" = 3 ] || ! grep -q "modified during the build" "$SCRATCH/build.log"; then
            cat "$SCRATCH/build.log" >&2
            echo "soak: building mishap failed" >&2
            exit 2
        fi
        echo "soak: sources changed during the build, building again" >&2
    done
    mishap=$("$SWIFT" build "${RELEASE[@]}" --scratch-path "$SCRATCH" --show-bin-path)/mishap
fi

exec python3 scripts/soak/soak.py --mishap "$mishap" --seconds "${SOAK_SECONDS:-180}" \
    --connections "${SOAK_CONNECTIONS:-16}" "$@"
