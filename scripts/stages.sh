# Stages of `make check` (scripts/check.sh) and of CI (.ci/run), sourced by both: each stage
# prints its start, runs with its output also in .build/ci/NAME.log, and adds a row (start, time,
# result) to one table, which the outermost runner prints at the end, also when it is stopped
# from outside (CI keeps the tail of the output). A failed stage's failing tests and errors are
# repeated just above the table. When .ci/run runs `make check`, both write to the same table
# (its file is passed down in MISHAP_STAGES), so the table shows every stage once.
#
#   stages_begin                    at the start of a runner: the table, the start time, the trap
#   stage_required NAME COMMAND...  runs it; its failure prints the table and ends the runner
#                                   with the command's status
#   stage_budgeted NAME SECONDS COMMAND...
#                                   runs it when its usual time (SECONDS on the reference machine,
#                                   scaled by how much slower `make test` ran here) fits in what is
#                                   left of CI_BUDGET_SECONDS, and stops it at the budget; a
#                                   failure, a skip or a stop for lack of time fails the runner at
#                                   its end (stages_end), without stopping the stages after it
#   stages_end                      prints the table (outermost runner only); returns 1 when a
#                                   budgeted stage did not pass
#
# Environment: CI_BUDGET_SECONDS (default 4800: CI's 90 minutes less a margin).
# shellcheck shell=bash

# make test's time on the reference machine (2 cores, a clean clone; 198 s in the CI run that
# CONTRIBUTING.md's CI section lists): the measure of a machine's speed for the budgeted stages'
# estimates.
STAGES_REFERENCE_TEST_SECONDS=200
STAGES_LOGS=.build/ci

# stages_begin: makes the table (or joins the one a parent runner passed down) and sets the trap.
stages_begin() {
    mkdir -p "$STAGES_LOGS"
    if [ -z "${MISHAP_STAGES:-}" ]; then
        stages_outermost=1
        export MISHAP_STAGES="$PWD/$STAGES_LOGS/stages.tsv"
        export MISHAP_STAGES_FAILURES="$PWD/$STAGES_LOGS/failures.txt"
        export MISHAP_STAGES_STARTED
        MISHAP_STAGES_STARTED=$(date +%s)
        : >"$MISHAP_STAGES"
        : >"$MISHAP_STAGES_FAILURES"
    else
        stages_outermost=0
    fi
    stages_budget=${CI_BUDGET_SECONDS:-4800}
    stages_failed=0
    stages_child=
    stages_current=
    trap stages_stopped TERM INT
}

# The seconds since the outermost runner started.
stages_elapsed() { echo $(($(date +%s) - MISHAP_STAGES_STARTED)); }

# stages_row NAME START SECONDS RESULT: one row of the table.
stages_row() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$MISHAP_STAGES"; }

# This machine's time per reference time, in percent (at least 100), from make test's row.
stages_speed() {
    local seconds
    seconds=$(awk -F'\t' '$1 == "make test" && $4 == "ok" { print $3 }' "$MISHAP_STAGES" | tail -n 1)
    if [ -z "$seconds" ] || [ $((seconds * 100 / STAGES_REFERENCE_TEST_SECONDS)) -lt 100 ]; then
        echo 100
    else
        echo $((seconds * 100 / STAGES_REFERENCE_TEST_SECONDS))
    fi
}

# stages_table: what failed, then every stage's row, then the totals.
stages_table() {
    if [ -s "$MISHAP_STAGES_FAILURES" ]; then
        echo
        echo "stages: what failed (whole logs in $STAGES_LOGS/):"
        sed 's/^/  /' "$MISHAP_STAGES_FAILURES"
    fi
    echo
    echo "stages: (seconds from the start, seconds taken, result):"
    awk -F'\t' '{ if ($2 == "") printf "  %-32s %s\n", $1, $4; else printf "  %-32s at %5d s, %5d s, %s\n", $1, $2, $3, $4 }' \
        "$MISHAP_STAGES"
    echo "stages: $(stages_elapsed) s in all, budget ${stages_budget} s, this machine at $(stages_speed)% of the reference machine's time"
}

# stages_run LIMIT LOG COMMAND...: the command under a timeout, its output also in LOG, waited for
# in the background so that a signal is handled at once (the trap stops it and prints the table).
# timeout catches SIGINT, so the command gets it back at its default action, which a background
# job of a script otherwise ignores; and timeout signals the command's whole process group.
stages_run() {
    local limit=$1 log=$2
    shift 2
    timeout -k 30 "$limit" "$@" > >(tee "$log") 2>&1 &
    stages_child=$!
    wait "$stages_child"
}

# stages_note_failures NAME LOG: the lines of LOG that say what failed (Swift Testing's and
# XCTest's failures, unittest's, compiler and lint errors, a check's FAIL), at most 20.
stages_note_failures() {
    sleep 1   # let tee write the end of the log
    grep -E '^✘ Test [^r]|recorded an issue|error: |^(FAIL|ERROR): |Test Case .* failed|: FAIL|GATE FAILED' "$2" |
        head -20 | cut -c1-400 | awk -v name="$1" '{ print name ": " $0 }' >>"$MISHAP_STAGES_FAILURES"
}

# stages_stopped: the trap for TERM and INT. Stops the running stage; the outermost runner waits
# for a runner below it to write its row (at most 40 s), then prints the table.
stages_stopped() {
    trap - TERM INT
    if [ -n "$stages_child" ]; then
        kill -TERM "$stages_child" 2>/dev/null
        local waited=0
        while kill -0 "$stages_child" 2>/dev/null && [ $waited -lt 80 ]; do
            sleep 0.5
            waited=$((waited + 1))
        done
    fi
    [ -z "$stages_current" ] || stages_row "$stages_current" "" "" "STOPPED from outside at $(stages_elapsed) s"
    if [ "$stages_outermost" = 1 ]; then
        stages_row "(the run)" "" "" "stopped from outside at $(stages_elapsed) s"
        stages_table
    fi
    exit 143
}

# stage_required NAME COMMAND...: runs it; its failure ends the runner with its exit status.
stage_required() {
    local name=$1 begin status=0 result
    shift
    begin=$(stages_elapsed)
    local log="$STAGES_LOGS/${name//[ :\/]/-}.log"
    echo "stages: $name: starting at $begin s"
    stages_current=$name
    stages_run 36000 "$log" "$@" || status=$?
    stages_current=
    if [ $status = 0 ]; then
        # A check that could not install what it needs (a browser) passes, saying SKIPPED.
        result=ok
        sleep 1   # let tee write the end of the log
        ! grep -q ': SKIPPED: ' "$log" || result="ok, but SKIPPED: $(grep -m1 -o 'SKIPPED: .*' "$log" | cut -c10-90)"
    else
        result="FAILED (exit $status)"
        stages_note_failures "$name" "$log"
    fi
    stages_row "$name" "$begin" $(($(stages_elapsed) - begin)) "$result"
    if [ $status != 0 ]; then
        [ "$stages_outermost" = 0 ] || stages_table
        exit $status
    fi
}

# stage_budgeted NAME REFERENCE_SECONDS COMMAND...: runs it if its estimated time fits in the
# budget left, under a timeout at the budget. A failure, a skip or a stop is remembered and fails
# the runner at stages_end: CI keeps enough margin that none is skipped on a 2-core machine, so a
# skip means the run took far longer than it should (CONTRIBUTING.md, CI).
stage_budgeted() {
    local name=$1 estimate begin status=0 result
    estimate=$(($2 * $(stages_speed) / 100))
    shift 2
    begin=$(stages_elapsed)
    local left=$((stages_budget - begin))
    if [ "$estimate" -gt "$left" ]; then
        echo "stages: $name: SKIPPED for lack of time: about $estimate s needed, $left s left of the ${stages_budget} s budget"
        stages_row "$name" "" "" "FAILED: SKIPPED for lack of time (about $estimate s needed, $left s left)"
        stages_failed=1
        return
    fi
    local log="$STAGES_LOGS/${name//[ :\/]/-}.log"
    echo "stages: $name: starting at $begin s (about $estimate s expected)"
    stages_current=$name
    stages_run "$left" "$log" "$@" || status=$?
    stages_current=
    case $status in
        0) result=ok ;;
        124 | 137) result="FAILED: STOPPED at the budget, after $(($(stages_elapsed) - begin)) s" ;;
        *) result="FAILED (exit $status)"; stages_note_failures "$name" "$log" ;;
    esac
    [ $status = 0 ] || stages_failed=1
    stages_row "$name" "$begin" $(($(stages_elapsed) - begin)) "$result"
}

# stages_end: the table, when this is the outermost runner; the runner's status.
stages_end() {
    [ "$stages_outermost" = 0 ] || stages_table
    return $stages_failed
}
