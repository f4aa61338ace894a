#!/usr/bin/env bash
# make check: what CI requires, in this order; the first failure ends it with that stage's exit
# status. .ci/run runs this, then the sanitizers; this is the one list of CI's required stages.
#
#   lint                 swift format's rules (.swift-format), seconds
#   test                 every test, and a build without compiler warnings
#   install-check        make install into a temporary PREFIX, served from elsewhere
#   image-check          the Dockerfile's runtime stage, without Docker
#   bench-smoke          the benchmark harness, once and briefly (no speed asserted)
#   instructions-gate    make bench-instructions' smoke pass, under callgrind: per request (log
#                        on) at most 1.20x the C server's, startup at most 10% over
#                        benchmarks/instructions-baseline.txt
#   dashboard-check      the dashboard in headless Chromium through Selenium (it skips loudly,
#                        without failing, only when the browser or Selenium cannot be installed)
#
#   scripts/check.sh                  every stage (make check, CI)
#   scripts/check.sh STAGE...         only those, in the order above (make check
#                                     CHECK_ONLY="lint bench-smoke"): the stages left out show
#                                     as NOT RUN in the table; CI never passes any
#
# They share one debug build (make test's) and one release build (scripts/build-release.sh's,
# made by install-check). Each stage prints its start, keeps its output in .build/ci/, and ends
# with a table of every stage's time and result, with a failed stage's failing tests above it
# (scripts/stages.sh); under .ci/run, that table is .ci/run's, printed at its end.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/stages.sh
. scripts/stages.sh
make_=(make --no-print-directory SWIFT="${SWIFT:-swift}")

stages=(lint test install-check image-check bench-smoke instructions-gate dashboard-check api-check)
only=" $* "
for stage in "$@"; do
    [[ " ${stages[*]} " == *" $stage "* ]] || { echo "check: no stage '$stage' (stages: ${stages[*]})" >&2; exit 2; }
done

# check_stage STAGE COMMAND...: a required stage, named as the table shows it, unless left out.
check_stage() {
    local stage=$1 name
    shift
    name=$([ "$stage" = instructions-gate ] && echo "instructions gate" || echo "make $stage")
    if [ "$only" != "  " ] && [[ "$only" != *" $stage "* ]]; then
        stages_row "$name" "" "" "NOT RUN (not asked for)"
        return
    fi
    stage_required "$name" "$@"
}

stages_begin
check_stage lint "${make_[@]}" lint
check_stage test "${make_[@]}" test
check_stage install-check "${make_[@]}" install-check
check_stage image-check "${make_[@]}" image-check
check_stage bench-smoke "${make_[@]}" bench-smoke
check_stage instructions-gate "${make_[@]}" bench-instructions INSTRUCTIONS_ARGS=--smoke
check_stage dashboard-check "${make_[@]}" dashboard-check
# The admin API fuzzed with schemathesis against its OpenAPI description.
check_stage api-check "${make_[@]}" api-check
stages_end
