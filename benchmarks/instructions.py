#!/usr/bin/env python3
"""Mishap's instruction counts under callgrind, beside the C baseline: figures that do not move
with the machine's noise, unlike req/s.

Started by `benchmarks/run.sh --instructions` (make bench-instructions), which builds both
servers and installs valgrind when it is missing. Every figure counts the instructions of ALL
the server's threads (callgrind's totals), from exec until the server exits on SIGTERM:

  per request   a client sends N1, then (in another run) N2 keep-alive GETs of
                /isUserNameAvailable?userName=someone, one after the other on one connection;
                per request = (I(N2) - I(N1)) / (N2 - N1), so startup, the first request's
                warm-up and shutdown cancel out. Measured for the C baseline, Mishap with the
                request log off (--log-level warning) and Mishap with it on (the default, info,
                lines to a file as a daemon would write them).
                Targets: log off <= 0.90x C; log on <= 1.20x C. And POST /login with the JSON
                body of the seed's successful login (log off), for information; and, for
                information, GETs of a session (X-Mishap-Session) with no network profile, first
                while no session has one, then while another session is on Edge (PUT
                /__mishap/network): what a session without a profile pays for profiles existing.
  startup       exec, serving, one GET answered 200, SIGTERM, exit: I(1) of the same runs
                with the default scenarios. Target <= 6x C.

Each configuration runs twice and the figures must agree within 1% (they are deterministic up
to timers and scheduling); the table shows the first.

The gate, which CI runs (make check, through --smoke) and which every run checks: a regression
check that cannot flake, as these counts do not move with the machine's load.
  - per request with the request log on (the default) at most 1.20x the C server's, measured in
    the same run;
  - startup (the row above) at most 10% over the baseline committed in
    benchmarks/instructions-baseline.txt. A change that costs more on purpose moves the baseline
    (--write-baseline writes the startup just measured into it) and says why in its commit
    message and in the file's comment.

--smoke runs each configuration once, with fewer requests, and asserts the gate only, not the
targets. Exit status: 0 every target (--smoke: the gate) met, 1 one missed, 2 something did not
run.
"""

import argparse
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PATH = "/isUserNameAvailable?userName=someone"
BASELINE = HERE / "instructions-baseline.txt"
# The gate: per request (log on) against the C server's in the same run; startup against the
# committed baseline.
GATE_PER_REQUEST_RATIO = 1.20
GATE_STARTUP_MARGIN = 0.10


class BenchError(Exception):
    pass


def log(message: str) -> None:
    print(f"[instructions] {message}", file=sys.stderr, flush=True)


def read_first_line(process: subprocess.Popen, timeout: float) -> str:
    data = b""
    deadline = time.monotonic() + timeout
    while not data.endswith(b"\n") and time.monotonic() < deadline and process.poll() is None:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            chunk = process.stdout.read(1)
            if not chunk:
                break
            data += chunk
    return data.decode(errors="replace")


LOGIN_BODY = b'{"email":"john@doe.com","password":"onlyjohnknowsme"}'


def keep_alive_requests(port: int, count: int, login: bool = False, session: str = "") -> None:
    """`count` GETs (or POST /login), one after the other on one keep-alive connection; each
    must answer 200. With `session`, the GETs carry it in X-Mishap-Session."""
    if login:
        request = (f"POST /login HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(LOGIN_BODY)}\r\n\r\n").encode() + LOGIN_BODY
    else:
        header = f"X-Mishap-Session: {session}\r\n" if session else ""
        request = f"GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{header}\r\n".encode()
    with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
        buffer = b""
        for i in range(count):
            s.sendall(request)
            while b"\r\n\r\n" not in buffer:
                chunk = s.recv(65536)
                if not chunk:
                    raise BenchError(f"connection closed after {i} answers")
                buffer += chunk
            head, _, buffer = buffer.partition(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 200"):
                raise BenchError(f"answer {i}: {head[:80]!r}")
            length = int(re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head).group(1))
            while len(buffer) < length:
                chunk = s.recv(65536)
                if not chunk:
                    raise BenchError(f"connection closed in answer {i}")
                buffer += chunk
            buffer = buffer[length:]


def put_network(port: int, session: str, body: bytes) -> None:
    """Sets `session`'s network profile (PUT /__mishap/network), which must answer 200."""
    request = (f"PUT /__mishap/network?session={session} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
    with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
        s.sendall(request)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    if not answer.startswith(b"HTTP/1.1 200"):
        raise BenchError(f"PUT /__mishap/network: {answer[:120]!r}")


def count_instructions(argv: list, requests: int, work: Path, name: str, stderr_path: Path, login: bool = False,
                       session: str = "", other_session_network: bytes = b"") -> int:
    """Total instructions of every thread of `argv` run under callgrind while `requests`
    keep-alive GETs are answered, from exec to exit (after another session's network profile is
    set, with `other_session_network`)."""
    out = work / f"{name}-{requests}.callgrind"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no",
               "--compress-strings=no", *argv]
    # No debuginfod: with DEBUGINFOD_URLS set, valgrind asks a server over the network for the
    # debug information of every library, which on a machine without that access only waits.
    environment = {key: value for key, value in os.environ.items() if key != "DEBUGINFOD_URLS"}
    # Swift seeds its hashing per process: dictionary probes, and so the counts, would differ
    # by a few hundred instructions per request from one process to the next.
    environment["SWIFT_DETERMINISTIC_HASHING"] = "1"
    with open(stderr_path, "ab") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, bufsize=0, env=environment)
        try:
            line = read_first_line(process, timeout=120)
            match = re.search(r"listening on http://[^\s]+?:(\d+)\s*$", line)
            if not match:
                raise BenchError(f"{name}: unexpected first line {line!r} (see {stderr_path})")
            port = int(match.group(1))
            if other_session_network:
                put_network(port, "elsewhere", other_session_network)
            keep_alive_requests(port, requests, login, session)
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    totals = re.search(r"^(?:summary|totals):\s*(\d+)", out.read_text(errors="replace"), re.M)
    if not totals:
        raise BenchError(f"{name}: no totals in {out}")
    return int(totals.group(1))


def read_baseline() -> dict:
    """The committed baseline's figures (`name value` lines; `#` starts a comment)."""
    figures = {}
    for line in BASELINE.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) == 2:
            figures[words[0]] = int(words[1].replace(",", ""))
    if "startup" not in figures:
        raise BenchError(f"{BASELINE} has no 'startup' line")
    return figures


def write_baseline(startup: int) -> None:
    """Replaces the baseline's `startup` figure, keeping its comments."""
    lines = BASELINE.read_text().splitlines()
    lines = [f"startup {startup}" if line.split("#", 1)[0].split()[:1] == ["startup"] else line for line in lines]
    BASELINE.write_text("\n".join(lines) + "\n")


def gate(figures: dict, baseline: dict) -> list:
    """The gate's rows: (what, reference, measured, limit, passed)."""
    c_request = figures["baseline"][1]
    logged_request = figures["mishap-logged"][1]
    startup = figures["mishap-logged"][0]
    request_limit = GATE_PER_REQUEST_RATIO * c_request
    startup_limit = (1 + GATE_STARTUP_MARGIN) * baseline["startup"]
    return [
        (f"per request, log on, vs {GATE_PER_REQUEST_RATIO:.2f}x the C server's", c_request, logged_request,
         request_limit, logged_request <= request_limit),
        (f"exec to one 200 and stop, vs the baseline + {GATE_STARTUP_MARGIN:.0%}", baseline["startup"], startup,
         startup_limit, startup <= startup_limit),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mishap", required=True, help="the mishap release binary")
    parser.add_argument("--baseline", required=True, help="the compiled benchmarks/baseline.c")
    parser.add_argument("--smoke", action="store_true", help="each configuration once, fewer requests; asserts the gate only")
    parser.add_argument("--write-baseline", action="store_true",
                        help=f"write the startup measured into {BASELINE.name} (a change that costs more on purpose)")
    parser.add_argument("--requests", type=int, help="N2 - N1, the requests measured (default 5000; smoke 500)")
    parser.add_argument("--keep", action="store_true", help="keep the callgrind files")
    args = parser.parse_args()
    measured = args.requests or (500 if args.smoke else 5000)
    try:
        baseline = read_baseline()
    except (BenchError, OSError) as error:
        print(f"instructions: the gate's baseline: {error}", file=sys.stderr)
        return 2
    first = 1
    cores = str(os.cpu_count() or 1)
    work = Path(tempfile.mkdtemp(prefix="mishap-instructions-"))
    scenarios = str(REPO / "scenarios")
    # Valgrind cannot read the DWARF 5 debug information Swift writes: measure a copy without it
    # (symbols stay, for callgrind_annotate with --keep).
    stripped = work / "mishap"
    subprocess.run(["objcopy", "--strip-debug", args.mishap, str(stripped)], check=True)
    args.mishap = str(stripped)

    quiet = [args.mishap, "serve", "--port", "0", "--scenarios", scenarios, "--threads", cores, "--log-level", "warning"]
    configurations = [
        ("C baseline", "baseline", [args.baseline, "0"], False),
        ("mishap, request log off", "mishap-quiet", quiet, False),
        ("mishap, request log on (default)", "mishap-logged",
         [args.mishap, "serve", "--port", "0", "--scenarios", scenarios, "--threads", cores], False),
        ("C baseline, POST /login", "baseline-login", [args.baseline, "0"], True),
        ("mishap, POST /login, request log off", "mishap-login", quiet, True),
        ("mishap, a session, no network profile anywhere, log off", "mishap-session", quiet, False),
        ("mishap, a session, another session on Edge, log off", "mishap-session-network", quiet, False),
    ]
    sessions = {"mishap-session": ("plain", b""), "mishap-session-network": ("plain", b'{"preset": "edge"}')}
    print(f"Mishap instruction counts under callgrind (all threads), {measured} keep-alive GETs of {PATH}"
          f"{' (smoke: the gate only)' if args.smoke else ''}")
    sys.stdout.flush()
    figures = {}
    try:
        for label, name, argv, login in configurations:
            runs = []
            session, network = sessions.get(name, ("", b""))
            for attempt in range(1 if args.smoke else 2):
                log(f"{label}: {first} request(s)")
                small = count_instructions(argv, first, work, f"{name}-{attempt}", work / f"{name}.log", login, session, network)
                log(f"{label}: {first + measured} requests")
                large = count_instructions(argv, first + measured, work, f"{name}-{attempt}", work / f"{name}.log", login,
                                           session, network)
                runs.append((small, (large - small) / measured))
            if len(runs) == 2:
                for index, what in ((0, "startup"), (1, "per request")):
                    a, b = runs[0][index], runs[1][index]
                    if abs(a - b) > 0.01 * max(a, b):
                        log(f"  note: {label} {what} moved between runs: {a:,.0f} vs {b:,.0f}")
            figures[name] = runs[0]
            log(f"  startup {runs[0][0]:,} instructions; {runs[0][1]:,.0f} per request")
    except (BenchError, OSError, subprocess.TimeoutExpired) as error:
        print(f"\ninstructions: {error}", file=sys.stderr)
        return 2
    finally:
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    c_start, c_request = figures["baseline"]
    rows = [
        ("instructions per request, request log off", c_request, figures["mishap-quiet"][1], 0.90),
        ("instructions per request, request log on (default)", c_request, figures["mishap-logged"][1], 1.20),
        ("instructions from exec to serving one 200, then stop", c_start, figures["mishap-logged"][0], 6.0),
        ("instructions per POST /login (JSON body), log off", figures["baseline-login"][1], figures["mishap-login"][1], None),
        ("per GET of a session, no network profile anywhere", c_request, figures["mishap-session"][1], None),
        ("per GET of a session without one, another on Edge", c_request, figures["mishap-session-network"][1], None),
    ]
    print()
    print(f"| {'what':<54} | {'C baseline':>12} | {'mishap':>12} | {'ratio':>6} | {'target':>8} | result |")
    print(f"|{'-' * 56}|{'-' * 14}|{'-' * 14}|{'-' * 8}|{'-' * 10}|--------|")
    missed = 0
    for what, c, m, target in rows:
        ratio = m / c
        ok = target is None or ratio <= target
        missed += 0 if ok else 1
        print(f"| {what:<54} | {c:>12,.0f} | {m:>12,.0f} | {ratio:>6.2f} | "
              f"{'<= %.2fx' % target if target else '(info)':>8} | {('PASS' if ok else 'FAIL') if target else '':<6} |")
    plain, beside = figures["mishap-session"][1], figures["mishap-session-network"][1]
    print()
    print(f"A session without a network profile while another session has one: {beside - plain:+,.0f} instructions "
          f"per request ({(beside - plain) / plain:+.1%}) against no profile anywhere.")
    print()
    print(f"The gate (a regression check; baseline: {BASELINE.relative_to(REPO)}):")
    print()
    print(f"| {'what':<54} | {'reference':>12} | {'mishap':>12} | {'limit':>12} | result |")
    print(f"|{'-' * 56}|{'-' * 14}|{'-' * 14}|{'-' * 14}|--------|")
    gate_rows = gate(figures, baseline)
    for what, reference, measured_value, limit, passed in gate_rows:
        print(f"| {what:<54} | {reference:>12,.0f} | {measured_value:>12,.0f} | {limit:>12,.0f} | "
              f"{'PASS' if passed else 'FAIL':<6} |")
    print()
    gate_failed = sum(1 for row in gate_rows if not row[4])
    if args.write_baseline:
        write_baseline(figures["mishap-logged"][0])
        print(f"Wrote startup {figures['mishap-logged'][0]:,} into {BASELINE.relative_to(REPO)}: say why in "
              f"its comment and in the commit message.")
        gate_failed = sum(1 for row in gate_rows[:1] if not row[4])
    if gate_failed:
        print(f"GATE FAILED: {gate_failed} of {len(gate_rows)} checks above. A change that costs more on purpose "
              f"moves the baseline (--write-baseline) and says why.")
    else:
        print(f"The gate passed ({len(gate_rows)} checks).")
    if args.smoke:
        print("smoke run: the targets above are not asserted.")
        return 1 if gate_failed else 0
    targets = sum(1 for row in rows if row[3] is not None)
    print(f"{targets - missed} of {targets} targets met.")
    return 1 if missed or gate_failed else 0


if __name__ == "__main__":
    sys.exit(main())
