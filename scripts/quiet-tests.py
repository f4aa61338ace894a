#!/usr/bin/env python3
"""Runs one step of `make test` (or of `make sanitize`) and prints its output without what a green
run need not say.

    scripts/quiet-tests.py [--no-warnings] [--log FILE] -- COMMAND...

COMMAND's standard output and error are read through one pipe and printed as they come, except:

- the lines of tests and suites starting and passing (Swift Testing's `◇ ... started.`, also
  when a test case's argument spans lines, and `✔ ... passed`, XCTest's `started` and `passed`), Swift Testing's header (library version,
  platform), SwiftPM's build lines of `swift test --skip-build`, and the test-less XCTest run
  that precedes every Swift Testing run; XCTest's total is kept when it ran tests;
- each `withKnownIssue` site is one line, printed when the run ends: `━ Known issue: TEST at
  FILE:LINE[, LINE...] (N issues in M cases): COMMENT`, where Swift Testing prints every issue
  it records with its expression, values and comments, several lines each.

Everything else passes unchanged, failures and their details above all. When the test process
ends without its summary line (a crash, a signal), the tests that had started and not ended are
listed. --log FILE keeps the whole, unfiltered output.

--no-warnings (for the build step): a compiler or SwiftPM warning in the output fails the step
even when the command succeeded. A build prints the warnings of the files it compiles, so a
clean build (CI's) sees them all.

Exit status: COMMAND's, or 1 when it succeeded with a warning under --no-warnings.
"""

import re
import subprocess
import sys
from typing import Optional

KNOWN_ISSUE = re.compile(
    r"^━ Test (?P<test>.+?) recorded a known issue(?: with (?P<case>.+?))?"
    r" at (?P<file>[^\s:]+):(?P<line>\d+):\d+: (?P<what>.*)$")
WARNING = re.compile(r"^(?:\S+:\d+(?::\d+)?: )?warning: ")
# Lines that start an event of Swift Testing's (or XCTest's): they end a known issue's block.
EVENT = re.compile(r"^(?:[◇✔✘━⚠↳➜]|Test (?:Suite|Case) '|\t ?Executed )")
STARTED = re.compile(r"^◇ Test (?!case |run started)(?P<test>.+) started\.$")
ENDED = re.compile(r"^[✔✘━] Test (?P<test>.+?) (?:with \d+ test cases? )?(?:passed|failed) after ")
SUMMARY = re.compile(r"^[✔✘━] Test run with ")
# A test case's start whose argument holds line breaks spans lines, up to one ending `started.`.
STARTING = re.compile(r"^◇ (?:Test|Suite) ")
STARTED_END = " started."
STARTING_LINES = 200
# XCTest's count after each suite; only the total of a run that ran XCTest cases is kept.
EXECUTED = re.compile(r"^\t ?Executed (\d+) tests?, with 0 failures")
DROPPED = (
    re.compile(r"^◇ (?:Test|Suite) .* started\.$"),
    re.compile(r"^✔ (?:Test (?!run with )|Suite ).* passed after "),
    re.compile(r"^━ (?:Test|Suite) (?!run with ).* passed after .* known issues?\.$"),
    re.compile(r"^↳ (?:Testing Library Version|Target Platform): "),
    re.compile(r"^Test Suite '.*' (?:started|passed) at "),
    re.compile(r"^Test Case '.*' (?:started at|passed \()"),
    re.compile(r"^(?:\[\d+/\d+\] Planning build|Building for debugging\.\.\.|Build complete!.*)$"),
)
TOTAL_SUITES = ("Test Suite 'All tests' passed", "Test Suite 'Selected tests' passed")


class KnownIssues:
    """The known issues of a run, grouped by test and comment, printed once at its end."""

    def __init__(self) -> None:
        self.groups: dict = {}
        self.current: Optional[dict] = None

    def start(self, match: re.Match) -> None:
        """A known issue's first line: its comment is the last `↳` line that follows."""
        self.finish()
        self.current = {"match": match, "comment": match.group("what"), "seen_detail": False}

    def take(self, line: str) -> bool:
        """Whether `line` belongs to the known issue being read (its values and comments)."""
        if self.current is None:
            return False
        if line.startswith("↳ "):
            self.current["comment"] = line[2:].strip()
            self.current["seen_detail"] = True
            return True
        if EVENT.match(line):
            self.finish()
            return False
        # Before the first `↳`: the rest of a multi-line value; after it: an indented one.
        if not self.current["seen_detail"] or line.startswith(" "):
            return True
        self.finish()
        return False

    def finish(self) -> None:
        """Files the known issue being read under its test and comment."""
        if self.current is None:
            return
        match, comment = self.current["match"], self.current["comment"]
        key = (match.group("test"), match.group("file"), comment)
        group = self.groups.setdefault(key, {"lines": [], "cases": set(), "issues": 0})
        if match.group("line") not in group["lines"]:
            group["lines"].append(match.group("line"))
        group["cases"].add(match.group("case") or "")
        group["issues"] += 1
        self.current = None

    def lines(self) -> list:
        """One line per known issue site, then forgets them."""
        self.finish()
        out = []
        for (test, file, comment), group in self.groups.items():
            counts = f"{group['issues']} issue{'s' if group['issues'] != 1 else ''}"
            if len(group["cases"]) > 1:
                counts += f" in {len(group['cases'])} cases"
            out.append(f"━ Known issue: {test} at {file}:{', '.join(group['lines'])} ({counts}): {comment}")
        self.groups = {}
        return out


def parse_arguments(arguments: list) -> tuple:
    """(--no-warnings given, the --log path or None, the command), or None when they are wrong."""
    no_warnings, log_path = False, None
    while arguments and arguments[0] != "--":
        option = arguments.pop(0)
        if option == "--no-warnings":
            no_warnings = True
        elif option == "--log" and arguments:
            log_path = arguments.pop(0)
        else:
            return None
    return (no_warnings, log_path, arguments[1:]) if len(arguments) > 1 else None


def main() -> int:
    parsed = parse_arguments(sys.argv[1:])
    if parsed is None:
        print(__doc__, file=sys.stderr)
        return 2
    no_warnings, log_path, command = parsed

    log = open(log_path, "w", encoding="utf-8") if log_path else None
    known = KnownIssues()
    running: dict = {}   # tests started and not ended, in the order they started
    warnings = 0
    summarized = False
    previous = ""
    starting: Optional[list] = None   # the lines of a start event spanning lines, held back

    def emit(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    try:
        for raw in process.stdout:
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            if log:
                log.write(line + "\n")
            if no_warnings and WARNING.match(line):
                warnings += 1
            if starting is not None:
                # The rest of a start event spanning lines, dropped with it once it ends. When
                # another event comes first or it runs long, the start was cut short (an argument
                # holding a NUL ends its line there, and the next event follows on the same
                # line): it is dropped too, unless what was held tells of a failure.
                if not EVENT.match(line) and len(starting) < STARTING_LINES:
                    starting.append(line)
                    if line.endswith(STARTED_END):
                        starting = None
                    continue
                if any("✘" in held or "error" in held for held in starting):
                    for held in starting:
                        emit(held)
                starting = None
            if STARTING.match(line) and not line.endswith(STARTED_END):
                starting = [line]
                continue
            if known.take(line):
                continue
            match = KNOWN_ISSUE.match(line)
            if match:
                known.start(match)
                continue
            started, ended = STARTED.match(line), ENDED.match(line)
            if started:
                running[started.group("test")] = True
            elif ended:
                running.pop(ended.group("test"), None)
            if SUMMARY.match(line):
                summarized = True
                for summary in known.lines():
                    emit(summary)
            executed = EXECUTED.match(line)
            if executed:
                if executed.group(1) != "0" and previous.startswith(TOTAL_SUITES):
                    emit("XCTest:" + line.strip().replace("Executed", " executed", 1))
            elif not any(pattern.match(line) for pattern in DROPPED):
                emit(line)
            previous = line
        status = process.wait()
    except KeyboardInterrupt:
        process.terminate()
        status = process.wait()
    if starting and any("✘" in held or "error" in held for held in starting):
        for held in starting:
            emit(held)
    for summary in known.lines():
        emit(summary)
    if log:
        log.close()
    if status != 0 and running and not summarized:
        emit(f"quiet-tests: the tests ended without their summary (exit status {status}); still running then:")
        for test in list(running)[:50]:
            emit(f"  {test}")
    if status == 0 and warnings:
        emit(f"quiet-tests: {warnings} warning(s) above: a green make test has none")
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
