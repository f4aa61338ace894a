#!/usr/bin/env bash
# Builds the release `mishap`, the one way every harness gets it: `make release` (and so `make
# run`, `make install`, install-check), the benchmarks, the instruction counts, the soak, the
# slowloris run and the image check all call this script. The flags are in scripts/release-flags
# (the Swift runtime linked in, a non-PIE executable), which the Dockerfile reads too.
#
#   scripts/build-release.sh [SCRATCH]    builds into SCRATCH (default .build, where `make
#                                         release` builds) and prints the binary's path
#
# PRODUCT=mishap-import builds the importer (`mishap import`) instead, with the same flags:
# `make install` puts it beside `mishap`.
#
# The build's own output goes to SCRATCH/release-build.log, and is printed only when the build
# fails. When the sources change under a running build (an editor saving), it builds again, at
# most three times. Environment: SWIFT (the swift command). Exit status 2 when the build fails.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
PRODUCT=${PRODUCT:-mishap}
scratch=${1:-.build}

read -r -a flags <scripts/release-flags || true
[ ${#flags[@]} -gt 0 ] || { echo "build-release: scripts/release-flags is missing or empty" >&2; exit 2; }

mkdir -p "$scratch"
log=$scratch/release-build.log
echo "build-release: building $PRODUCT (release, $scratch/)" >&2
for attempt in 1 2 3; do
    if "$SWIFT" build "${flags[@]}" --scratch-path "$scratch" --product "$PRODUCT" >"$log" 2>&1; then
        break
    fi
    if [ "$attempt" = 3 ] || ! grep -q "modified during the build" "$log"; then
        cat "$log" >&2
        echo "build-release: building $PRODUCT failed" >&2
        exit 2
    fi
    echo "build-release: sources changed during the build, building again" >&2
done
echo "$("$SWIFT" build "${flags[@]}" --scratch-path "$scratch" --show-bin-path)/$PRODUCT"
