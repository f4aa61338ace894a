#!/usr/bin/env bash
# Builds the tests under a sanitizer and runs them; fails on a failed test or on any sanitizer
# report, from the test process or from a `mishap` process a test started.
#
#   scripts/sanitize.sh address [GROUP...]   AddressSanitizer and LeakSanitizer (.build-asan)
#   scripts/sanitize.sh thread [GROUP...]    ThreadSanitizer (.build-tsan)
#
# The tests run in groups, each in a test process of its own, one test at a time: on two cores
# a sanitized build is several times slower, and tests running side by side starve each other
# past the bounds their timing checks allow. Groups (all of a sanitizer's by default):
#
#   main  every test but the command line ones and the scenario loader fuzzing
#   cli   MishapCLITests, which start the sanitized `mishap` binary
#   fuzz  the scenario loader fuzzing (AddressSanitizer only: it runs libyaml's C code on
#         thousands of mutated files; it is single-threaded, so ThreadSanitizer has nothing to
#         check there)
#
# Environment: SWIFT (the swift command), SCRATCH (the build folder), SKIP_BUILD=1 to run what is
# built. Reports are written under $SCRATCH/sanitizer-logs and printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
support=$PWD/scripts/sanitizers

sanitizer=${1:-}
shift || true
case "$sanitizer" in
    address)
        SCRATCH=${SCRATCH:-.build-asan}
        all_groups=(main cli fuzz)
        ;;
    thread)
        SCRATCH=${SCRATCH:-.build-tsan}
        all_groups=(main cli)
        ;;
    *)
        echo "usage: $0 address|thread [GROUP...]" >&2
        exit 64
        ;;
esac
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=("${all_groups[@]}")

# Test selection per group, as `swift test` arguments.
group_arguments() {
    # The fuzzers are one target: the HTTP fuzzer runs with main, the validate fuzzer (it runs
    # the mishap binary) with cli, and the scenario loader fuzzer alone.
    local fuzz=MishapFuzzTests
    # The suites that start processes (Foundation's Process.run can crash in a process holding
    # the in-process tests' thousands of sockets) run with cli; the Makefile's PROCESS_TESTS.
    local processes="MishapCLITests|MishapTLSTests.NameConstraintsTests|MishapTestingTests.RuntimeSetupTests"
    case "$sanitizer:$1" in
        address:main | thread:main)
            echo --skip "$processes" --skip $fuzz.LoaderFuzzTests --skip $fuzz.ValidateFuzzTests
            ;;
        address:cli | thread:cli)
            echo --filter "$processes|$fuzz.ValidateFuzzTests"
            ;;
        address:fuzz)
            echo --filter $fuzz.LoaderFuzzTests
            ;;
        *)
            echo "unknown $sanitizer group: $1 (groups: ${all_groups[*]})" >&2
            return 1
            ;;
    esac
}
for group in "${groups[@]}"; do group_arguments "$group" >/dev/null; done

logs=$PWD/$SCRATCH/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"

# Reports go to files (one per process, named after its pid), so that a report from a `mishap`
# child process is seen even when its test does not look at its standard error.
case "$sanitizer" in
    address)
        export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:detect_stack_use_after_return=1"
        export LSAN_OPTIONS="suppressions=$support/lsan.supp:print_suppressions=0"
        ;;
    thread)
        export TSAN_OPTIONS="log_path=$logs/tsan:suppressions=$support/tsan.supp:print_suppressions=0:halt_on_error=0"
        ;;
esac

seconds() { date +%s; }

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    start=$(seconds)
    echo "sanitize: building with --sanitize=$sanitizer in $SCRATCH"
    "$SWIFT" build --build-tests --sanitize="$sanitizer" --scratch-path "$SCRATCH"
    echo "sanitize: built in $(( $(seconds) - start )) s"
fi

if [ "$sanitizer" = thread ]; then
    # Lets ThreadSanitizer see Swift's Mutex when it is contended (tsan_mutex.c says how).
    clang=$(dirname "$(readlink -f "$(command -v "$SWIFT")")")/clang
    [ -x "$clang" ] || clang=clang
    "$clang" -shared -fPIC -O2 -Wall -o "$SCRATCH/libtsan_mutex.so" "$support/tsan_mutex.c" -ldl
    export LD_PRELOAD="$PWD/$SCRATCH/libtsan_mutex.so${LD_PRELOAD:+:$LD_PRELOAD}"
fi

failed=()
for group in "${groups[@]}"; do
    read -r -a arguments <<<"$(group_arguments "$group")"
    start=$(seconds)
    echo "sanitize: $sanitizer $group: swift test ${arguments[*]} --no-parallel"
    # Through scripts/quiet-tests.py: no line per started and passed test, a line per known
    # issue; failures whole, and the whole output in $SCRATCH/GROUP-tests.log.
    if ! scripts/quiet-tests.py --log "$SCRATCH/$group-tests.log" -- \
        "$SWIFT" test --skip-build --sanitize="$sanitizer" --scratch-path "$SCRATCH" "${arguments[@]}" --no-parallel; then
        failed+=("$group")
    fi
    echo "sanitize: $sanitizer $group ran in $(( $(seconds) - start )) s"
done

reports=("$logs"/*)
if [ -e "${reports[0]}" ]; then
    for report in "${reports[@]}"; do
        echo "=== $report"
        cat "$report"
    done
    echo "sanitize: ${#reports[@]} process(es) wrote $sanitizer sanitizer reports (above):" >&2
    grep -h '^SUMMARY:' "${reports[@]}" | sort | uniq -c >&2 || true
    exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
    echo "sanitize: $sanitizer: tests failed in: ${failed[*]}" >&2
    exit 1
fi
echo "sanitize: $sanitizer: no reports, every test passed"
