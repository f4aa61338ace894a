#!/usr/bin/env bash
# Runs the tests of `make test` that start servers and processes or measure time (everything
# but the fuzzers) ROUNDS times in a row while BUSY loops keep the processors busy, and fails on
# the first failing round. Proof that the suite is not flaky on a loaded machine: a flaky test
# blocks good work and teaches people to ignore red.
#
#   scripts/test-under-load.sh          20 rounds, 2 busy loops (ROUNDS=N BUSY=N to change)
#
# Expects the tests built (`swift build --build-tests`; `make test-under-load` builds them).
# Each round's output is kept in .build/test-under-load/ROUND-PHASE.log.
set -uo pipefail

cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
ROUNDS=${ROUNDS:-20}
BUSY=${BUSY:-2}
FUZZ_TESTS="HTTPFuzzTests|LoaderFuzzTests|ValidateFuzzTests"
LOGS=.build/test-under-load
mkdir -p "$LOGS"

busy=()
for _ in $(seq "$BUSY"); do
    (while :; do :; done) &
    busy+=("$!")
done
trap 'kill "${busy[@]}" 2>/dev/null' EXIT

started=$SECONDS
for round in $(seq "$ROUNDS"); do
    for phase in in-process processes; do
        if [ "$phase" = in-process ]; then
            selection=(--skip MishapCLITests --skip "$FUZZ_TESTS")
        else
            selection=(--filter MishapCLITests --skip "$FUZZ_TESTS")
        fi
        log="$LOGS/$round-$phase.log"
        if ! "$SWIFT" test --skip-build "${selection[@]}" >"$log" 2>&1; then
            echo "round $round, $phase tests: FAILED (log: $log)"
            grep -E "^✘ Test [^r]|recorded an issue" "$log" | head -20
            exit 1
        fi
        echo "round $round, $phase tests: $(tail -n 1 "$log")"
    done
done
echo "$ROUNDS rounds passed under $BUSY busy loops in $((SECONDS - started)) s"
