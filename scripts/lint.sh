#!/usr/bin/env bash
# make lint: every Swift file of the project (Sources, Tests, Package.swift) against the rules
# .swift-format enables, with `swift format lint` (swift-format ships with the Swift 6
# toolchain), plus two plain checks: no trailing whitespace and no tabs. Fails on any finding.
#
# Layout (indentation, line breaks, line length) is not linted: swift-format checks it by
# comparing a file with what its pretty-printer would write, which cannot be switched off rule by
# rule (swift-format issues 764 and 964) and would rewrite the continuation lines this code
# aligns under their opening parenthesis (about 3,000 findings). So the pretty-printer's pass is
# left out with --debug-disable-pretty-print (a debugging flag, in swift-format's
# Documentation/Development.md, that runs the rules alone), and `swift format` is never run in
# place here. CONTRIBUTING.md (CI) says why each rule is on or off.
#
# First, the lint proves it can fail: a sample breaking one enabled rule must be refused, so a
# configuration that enables nothing (an unknown key, a misspelt rule) cannot pass silently.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}

if ! "$SWIFT" format --version >/dev/null 2>&1; then
    echo "lint: '$SWIFT format' is missing: swift-format ships with the Swift toolchain from 6.0 on" >&2
    exit 2
fi
lint() { "$SWIFT" format lint --strict --debug-disable-pretty-print --configuration .swift-format "$@"; }

sample=$'/// A sample that breaks UseShorthandTypeNames.\nlet sample: Array<Int> = [1]\n'
if findings=$(lint --assume-filename Sources/LintSample.swift - <<<"$sample" 2>&1) ||
    ! grep -q '\[UseShorthandTypeNames\]' <<<"$findings"; then
    echo "lint: FAIL: a file breaking UseShorthandTypeNames was not refused for it (is .swift-format read?)" >&2
    exit 1
fi

status=0
mapfile -t files < <(find Sources Tests Package.swift -name '*.swift' -type f | sort)
echo "lint: swift format lint over ${#files[@]} files"
lint --parallel "${files[@]}" || status=1
if grep -nE '[[:space:]]+$' "${files[@]}"; then
    echo "lint: the lines above end in whitespace" >&2
    status=1
fi
if grep -nP '\t' "${files[@]}"; then
    echo "lint: the lines above hold tabs (indentation is four spaces)" >&2
    status=1
fi
[ $status = 0 ] && echo "lint: ok"
exit $status
