#!/usr/bin/env bash
# Mishap's benchmarks: Mishap against a minimal C libmicrohttpd server (benchmarks/baseline.c),
# side by side on this machine, checked against the targets of the performance issue.
#
#   benchmarks/run.sh           full run, ~8 minutes: 5 alternating rounds of wrk -d5s per case,
#                               20 startups each, a 60 s memory run; exits 1 when a target is
#                               missed by more than 25% of it (FAIL! in the table)
#   benchmarks/run.sh --smoke   a few seconds: everything once and briefly, no speed assertion;
#                               exits non-zero only if something did not build, start or answer
#   benchmarks/run.sh --instructions
#                               instruction counts under callgrind instead (benchmarks/instructions.py,
#                               ~5 minutes; installs valgrind if it is missing): deterministic figures
#   (any other option goes to benchmarks/bench.py, or instructions.py after --instructions;
#   see their --help)
#
# This script builds Mishap (release, with scripts/build-release.sh, in .build/release as `make
# release` does, so that `make install` and the image check reuse it), compiles the baseline, installs wrk if
# it is missing, and hands over to bench.py, which measures and prints the table. Ratios are
# Mishap over the reference named in each row: for req/s higher is better, for latency, startup
# and memory lower is better. Set MISHAP_BIN to measure an already built binary instead.
set -euo pipefail

cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SCRATCH=.build
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

instructions=
if [ "${1:-}" = --instructions ]; then
    instructions=1
    shift
    if ! command -v valgrind >/dev/null 2>&1; then
        echo "bench: installing valgrind" >&2
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends valgrind
    fi
elif ! command -v wrk >/dev/null 2>&1; then
    echo "bench: installing wrk" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends wrk
fi
for tool in python3 cc pkg-config; do
    command -v "$tool" >/dev/null 2>&1 || { echo "bench: $tool is required" >&2; exit 2; }
done

mkdir -p "$SCRATCH"
if [ -n "${MISHAP_BIN:-}" ]; then
    mishap=$MISHAP_BIN
else
    mishap=$(SWIFT="$SWIFT" scripts/build-release.sh "$SCRATCH")
fi

baseline=$SCRATCH/baseline
# shellcheck disable=SC2046  # pkg-config's flags must split into words
cc -O2 -Wall -o "$baseline" benchmarks/baseline.c $(pkg-config --cflags --libs libmicrohttpd) ||
    { echo "bench: compiling benchmarks/baseline.c failed" >&2; exit 2; }

[ -z "$instructions" ] || exec python3 benchmarks/instructions.py --mishap "$mishap" --baseline "$baseline" "$@"
exec python3 benchmarks/bench.py --mishap "$mishap" --baseline "$baseline" "$@"
