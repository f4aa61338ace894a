#!/usr/bin/env python3
"""Mishap's soak run: a release `mishap serve` under every kind of traffic at once for a few
minutes, checked for leaks, growth, crashes and wrong answers.

Started by scripts/soak.sh, which builds the server first (python3 standard library only).

What runs at once, for --seconds (default 180):

  clean     wrk on the non-fault paths (scripts/soak/clean.lua): every input of the default
            scenarios that gets an answer, POST /login bodies (JSON, form, malformed), forced
            rules, HEAD, unknown paths, and thousands of distinct X-Mishap-Session ids. Must show
            no socket error, no timeout, and only answers the scenarios give (status, body,
            Retry-After checked together).
  faults    a second wrk on the transport faults (scripts/soak/faults.lua): reset, dropped,
            garbage, truncated, truncatedchunked, lengthmismatch, by GET, by POST and forced.
            Its socket errors are expected and only counted.
  checker   one client sending the whole catalogue in turn on fresh connections and checking
            each answer exactly (faults included: a reset is a reset), a session's maintenance
            cycle (500, 500, then success), and a session reset restarting it.
  slow      a few clients on the timing rules: slowpoke (1.5 to 3 s), trickle (5 pieces over
            5 s), timeout (held until the client gives up after 1 to 3 s); and now and then a
            burst of 100 hanging requests let go at once, and 100 delayed ones answered at once.
  admin     the admin API in a loop: requests (filtered too), retries, scenarios, health,
            reset?session=, and a wrong method and an unknown path (405, 404); a global reset
            every 40 to 60 s only, so per-session state builds up in between.
  reloads   every few seconds, on a copy of the default scenarios: a file rewritten (picked up
            by the watcher), a file touched, POST /__mishap/reload, SIGHUP, and a broken file
            that must leave the last good scenarios serving until it is fixed.

Checked at the end (each failure is printed; the exit status is 1 when any failed):

  - RSS flat: the median of the samples in the second half of the run within 10% of the
    median of the first half (warm-up excluded); every sample is printed.
  - descriptors: /proc/PID/fd back to its count before the load within 15 s after it stops
    (2 extra allowed).
  - alive: health, an answer and a login after the load; SIGTERM then exits 0.
  - no unexpected error: none on the clean traffic, none in the checker, slow and admin clients,
    and in the server log (--log-level warning) no line but the expected reload failures.

Exit status: 0 all checks passed, 1 a check failed, 2 the soak itself could not run.
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
U = "/isUserNameAvailable?userName="
EXTRA = "soak-extra.yaml"
FAULTS = ["reset", "dropped", "garbage", "truncated", "truncatedchunked", "lengthmismatch"]
FAULT_RULES = ["reset", "dropped", "garbage", "truncated", "truncatedChunked", "lengthMismatch"]
FAULT_OUTCOMES = {"reset": "reset", "dropped": "empty", "garbage": "garbage", "truncated": "truncated",
                  "truncatedchunked": "truncated-chunked", "lengthmismatch": "overlong"}
RSS_TOLERANCE = 0.10
FD_SLACK = 2
FD_SETTLE_SECONDS = 15


class SoakError(Exception):
    """The soak could not run (no server, no wrk): not a finding about the server."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Tally:
    """Counters shared by the client threads, and the unexpected outcomes with a few samples."""

    def __init__(self):
        self.lock = threading.Lock()
        self.counts = Counter()
        self.unexpected = Counter()
        self.samples = []

    def count(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.counts[key] += n

    def fail(self, kind: str, detail: str) -> None:
        with self.lock:
            self.unexpected[kind] += 1
            if len(self.samples) < 30:
                self.samples.append(f"{kind}: {detail}")


# ---------------------------------------------------------------------------------------------
# HTTP on raw sockets, so every transport fault is seen as what it is


@dataclass
class Reply:
    outcome: str  # ok, reset, empty, garbage, truncated, truncated-chunked, overlong, timeout, ...
    status: int = 0
    headers: dict = field(default_factory=dict)
    body: bytes = b""
    elapsed: float = 0.0

    def describe(self) -> str:
        return f"{self.outcome} {self.status} {self.body[:120]!r}"


def dechunk(data: bytes):
    """The body of a chunked message, and whether its terminating chunk arrived."""
    body = b""
    while True:
        line, sep, rest = data.partition(b"\r\n")
        if not sep:
            return body, False
        try:
            size = int(line.split(b";")[0], 16)
        except ValueError:
            return body, False
        if size == 0:
            return body, True
        if len(rest) < size + 2:
            return body + rest[:size], False
        body += rest[:size]
        data = rest[size + 2:]


def parse(method: str, data: bytes, error: str, elapsed: float) -> Reply:
    if not data:
        return Reply(error or "empty", elapsed=elapsed)
    if not data.startswith(b"HTTP/1."):
        return Reply("garbage", body=data, elapsed=elapsed)
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        return Reply("partial-head", body=data, elapsed=elapsed)
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split()
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    reply = Reply("ok", status, headers, rest, elapsed)
    if method == "HEAD":
        reply.outcome = "ok" if not rest else "overlong"
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        reply.body, complete = dechunk(rest)
        reply.outcome = "ok" if complete else "truncated-chunked"
    elif "content-length" in headers:
        length = int(headers["content-length"])
        reply.body = rest[:length]
        reply.outcome = "ok" if len(rest) == length else ("truncated" if len(rest) < length else "overlong")
    if error and reply.outcome == "ok":
        reply.outcome = error
    return reply


def http(port: int, method: str, path: str, headers: dict = None, body: bytes = b"", timeout: float = 15.0) -> Reply:
    """One request on a fresh connection (Connection: close), read to its end or the timeout."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body)}")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
    data, error = b"", None
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(request)
            while True:
                s.settimeout(max(0.01, started + timeout - time.monotonic()))
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except ConnectionResetError:
        error = "reset"
    except socket.timeout:
        error = "timeout"
    except OSError as exception:
        error = f"socket error {exception.errno} ({exception.strerror})"
    return parse(method, data, error, time.monotonic() - started)


def get_json(port: int, method: str, path: str, expect_status: int = 200, timeout: float = 15.0):
    reply = http(port, method, path, timeout=timeout)
    if reply.outcome != "ok" or reply.status != expect_status:
        raise ValueError(f"{method} {path}: {reply.describe()}, expected {expect_status}")
    try:
        return json.loads(reply.body)
    except ValueError:
        raise ValueError(f"{method} {path}: not JSON: {reply.body[:200]!r}")


# ---------------------------------------------------------------------------------------------
# The server and what /proc says of it


class Server:
    def __init__(self, binary: str, scenarios: Path, log_path: Path, log_level: str, extra: list):
        self.log_path = log_path
        self.log_file = open(log_path, "ab")
        argv = [binary, "serve", "--scenarios", str(scenarios), "--port", "0", "--log-level", log_level] + extra
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log_file, bufsize=0)
        self.pid = self.process.pid
        line = self.process.stdout.readline().decode(errors="replace")
        match = re.search(r"listening on http://[^\s:]+:(\d+)\s*$", line)
        if not match:
            self.process.kill()
            raise SoakError(f"the server did not start ({line!r}); its log:\n"
                            + log_path.read_text(errors="replace")[-2000:])
        self.port = int(match.group(1))
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        while self.process.stdout.read(4096):
            pass

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def status_field(self, name: str) -> int:
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
        return 0

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def fd_kinds(self) -> dict:
        """The open descriptors by what they are (socket, pipe, eventfd, a file's path)."""
        kinds = Counter()
        for fd in os.listdir(f"/proc/{self.pid}/fd"):
            try:
                kinds[re.sub(r"\[\d+\]", "", os.readlink(f"/proc/{self.pid}/fd/{fd}"))] += 1
            except OSError:
                pass
        return dict(sorted(kinds.items()))

    def stop(self, timeout: float = 20) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                self.log_file.close()
                return -1
        self.log_file.close()
        return self.process.returncode


@dataclass
class Sample:
    t: float
    rss_kib: int
    anon_kib: int
    fds: int
    threads: int


class Sampler(threading.Thread):
    def __init__(self, server: Server, stop: threading.Event, every: float = 1.0):
        super().__init__(daemon=True)
        self.server, self.stop, self.every = server, stop, every
        self.samples: list = []

    def run(self) -> None:
        start = time.monotonic()
        while not self.stop.is_set():
            try:
                self.samples.append(Sample(time.monotonic() - start, self.server.status_field("VmRSS"),
                                           self.server.status_field("RssAnon"), self.server.fds(),
                                           self.server.status_field("Threads")))
            except (OSError, ValueError):
                return  # the process is gone: the final checks say so
            self.stop.wait(self.every)


# ---------------------------------------------------------------------------------------------
# The scenarios folder the reloads edit


def extra_yaml(version: int) -> str:
    return (f"# The soak's own endpoint, rewritten by the reload loop: its answer tells which\n"
            f"# version of the folder is being served.\n"
            f"endpoint: GET /soak/extra\n"
            f"rules:\n"
            f"  - name: version\n"
            f"    respond: {{ json: {{ soakVersion: {version} }} }}\n")


BROKEN = [
    ("a YAML syntax error", "endpoint: GET /soak/extra\nrules:\n  - name: version\n    respond: { json: { soakVersion: 1 }\n"),
    ("an unknown key", "endpoint: GET /soak/extra\nrules:\n  - name: version\n    respond: { stauts: 200 }\n"),
    ("a bad regular expression", "endpoint: GET /soak/extra\nrules:\n  - name: version\n"
                                 "    when: { query: { q: { matches: \"(\" } } }\n    respond: { status: 200 }\n"),
    ("a duplicate endpoint", "endpoint: GET /isUserNameAvailable\nrules:\n  - name: again\n    respond: { status: 200 }\n"),
]


def write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name("." + path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


# ---------------------------------------------------------------------------------------------
# The clients


class Clients:
    """The Python clients of the soak, each a thread looping until `stop` is set."""

    def __init__(self, server: Server, scenarios: Path, stop: threading.Event, slow_workers: int):
        self.server, self.port, self.scenarios, self.stop = server, server.port, scenarios, stop
        self.slow_workers = slow_workers
        self.tally = Tally()
        # A global reset starts every cycle over: the checker's cycle sequences exclude it.
        self.cycle_lock = threading.Lock()
        self.version = 0
        self.threads = []

    def start(self) -> None:
        targets = [self.checker, self.admin, self.reloads, self.bursts] + [self.slow] * self.slow_workers
        for index, target in enumerate(targets):
            thread = threading.Thread(target=self._guard, args=(target, index), daemon=True)
            thread.start()
            self.threads.append(thread)

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.1, deadline - time.monotonic()))

    def _guard(self, target, index: int) -> None:
        rng = random.Random(index * 7919 + int(time.time()))
        try:
            target(rng)
        except Exception as error:  # a bug in the soak itself must not pass as a clean run
            self.tally.fail("client crashed", f"{target.__name__}: {error!r}")

    def expect(self, kind: str, reply: Reply, outcome: str = "ok", status: int = None,
               contains: bytes = None, exact: bytes = None, header: tuple = None) -> bool:
        problems = []
        if reply.outcome != outcome:
            problems.append(f"outcome {reply.outcome}, expected {outcome}")
        if status is not None and reply.status != status:
            problems.append(f"status {reply.status}, expected {status}")
        if contains is not None and contains not in reply.body:
            problems.append(f"body lacks {contains!r}")
        if exact is not None and reply.body != exact:
            problems.append(f"body is not {exact!r}")
        if header is not None and reply.headers.get(header[0].lower()) != header[1]:
            problems.append(f"{header[0]}: {reply.headers.get(header[0].lower())!r}, expected {header[1]!r}")
        if problems:
            self.tally.fail(kind, "; ".join(problems) + f" (got {reply.describe()})")
            return False
        self.tally.count(kind)
        return True

    # --- checker: the catalogue, answered exactly

    def login(self, email: str, password: str, headers: dict = None, timeout: float = 15.0) -> Reply:
        body = json.dumps({"email": email, "password": password}).encode()
        return http(self.port, "POST", "/login", {"Content-Type": "application/json", **(headers or {})}, body, timeout)

    def checker(self, rng: random.Random) -> None:
        p = self.port
        round_number = 0
        while not self.stop.is_set():
            round_number += 1
            e = self.expect
            e("check", http(p, "GET", "/isUserNameAvailable"), status=400, contains=b"Username parameter missing")
            e("check", http(p, "GET", U), status=400, contains=b"Username must not be empty")
            e("check", http(p, "GET", U + "abc"), status=400, contains=b"Username is too short.")
            e("check", http(p, "GET", U + "superuser"), status=400, contains=b"Username is not valid: superuser.")
            e("check", http(p, "GET", U + "servererror"), status=500, contains=b"The database is corrupted", header=("Retry-After", None))
            e("check", http(p, "GET", U + "maintenance%21"), status=500, header=("Retry-After", "17"))
            e("check", http(p, "GET", U + "illegalresponse"), status=200, exact=b'{"isAvailable":false}')
            e("check", http(p, "GET", U + "ratelimited"), status=429, header=("Retry-After", "30"))
            e("check", http(p, "GET", U + "ratelimiteddate"), status=429, contains=b"Too many requests")
            e("check", http(p, "GET", U + "unavailable"), status=503, contains=b"Service unavailable")
            e("check", http(p, "GET", U + "unavailableseconds"), status=503, header=("Retry-After", "120"))
            e("check", http(p, "GET", U + "unauthorized"), status=401,
              header=("WWW-Authenticate", 'Bearer realm="mishap", error="invalid_token"'))
            e("check", http(p, "GET", U + "requesttimeout"), status=408)
            e("check", http(p, "GET", U + "badgateway"), status=502)
            e("check", http(p, "GET", U + "gatewaytimeout"), status=504)
            e("check", http(p, "GET", U + "wrongtype"), status=200, exact=b'{"isAvailable":"yes","userName":42}')
            e("check", http(p, "GET", U + "truncatedjson"), status=200, exact=b'{"isAvailable":true,"userNa')
            e("check", http(p, "GET", U + "badutf8"), status=200, contains=b'"userName":"\xff\xfe')
            e("check", http(p, "GET", U + "captiveportal"), status=200, contains=b"Welcome to Airport Wi-Fi")
            e("check", http(p, "GET", U + "notjson"), status=200, exact=b"OK")
            e("check", http(p, "GET", U + "empty"), status=200, exact=b"")
            e("check", http(p, "GET", U + "johnnyappleseed"), status=200, exact=b'{"isAvailable":false,"userName":"johnnyappleseed"}')
            e("check", http(p, "GET", U + "j%C3%B6rg"), status=200, exact='{"isAvailable":true,"userName":"jörg"}'.encode())
            e("check", http(p, "HEAD", U + "someone"), status=200, exact=b"")
            e("check", http(p, "GET", "/nothing/here"), status=404, contains=b"Not Found")
            flaky = http(p, "GET", U + "flaky")
            if flaky.status == 500:
                e("check", flaky, status=500, contains=b"Internal server error")
            else:
                e("check", flaky, status=200, exact=b'{"isAvailable":true,"userName":"flaky"}')
            e("check", self.login("john@doe.com", "onlyjohnknowsme"), status=200, exact=b'{"user_id":"123","token":"c7d83mdla_3ms"}')
            e("check", http(p, "POST", "/login", {"Content-Type": "application/x-www-form-urlencoded"},
                            b"email=john%40doe.com&password=onlyjohnknowsme"), status=200, contains=b'"token"')
            e("check", self.login("john@doe.com", "nope-nope"), status=401, contains=b"Invalid credentials.")
            e("check", self.login("", "secret"), status=400, contains=b"Email and password are required.")
            e("check", self.login("johndoe.com", "secret"), status=400, contains=b"Email is not valid.")
            e("check", self.login("john@doe.com", "abc"), status=400, contains=b"Password is too short.")
            e("check", http(p, "POST", "/login", {"Content-Type": "application/json"}, b'{"email":'), status=400,
              contains=b"Malformed request body.")
            e("check", self.login("servererror@x.com", "secret"), status=500, contains=b"The database is corrupted")
            e("check", self.login("illegalresponse@x.com", "secret"), status=200, exact=b'{"user_id":"123"}')
            e("check", self.login("nobody@x.com", "secret"), status=404, contains=b"User doesn't exist.")
            # Every transport fault, by GET, by POST and forced by name.
            for fault, rule in zip(FAULTS, FAULT_RULES):
                outcome = FAULT_OUTCOMES[fault]
                e(f"fault {fault}", http(p, "GET", U + fault, timeout=5), outcome=outcome)
                e(f"fault {fault}", self.login(f"{fault}@x.com", "secret", timeout=5), outcome=outcome)
                e(f"fault {fault}", http(p, "GET", U + "someone", {"X-Mishap-Rule": rule}, timeout=5), outcome=outcome)
            self.check_cycles(round_number)
            self.stop.wait(0.1)  # the checker samples; the load is wrk's

    def check_cycles(self, round_number: int) -> None:
        """A session's maintenance cycle, by GET and by login: 500, 500, then success; then a
        session reset, after which the cycle starts over from its first 500."""
        session = {"X-Mishap-Session": f"cycle-{round_number}"}
        with self.cycle_lock:
            statuses = [http(self.port, "GET", U + "maintenance", session).status for _ in range(3)]
            statuses += [self.login("maintenance@x.com", "secret", session).status for _ in range(3)]
            statuses.append(http(self.port, "GET", U + "maintenance", session).status)
            reset = http(self.port, "POST", f"/__mishap/reset?session=cycle-{round_number}")
            statuses += [http(self.port, "GET", U + "maintenance", session).status for _ in range(3)]
        expected = [500, 500, 200, 500, 500, 200, 500, 500, 500, 200]
        if statuses != expected or reset.status != 200:
            self.tally.fail("session cycle", f"session cycle-{round_number}: statuses {statuses}, expected {expected}; "
                                             f"reset answered {reset.status}")
        else:
            self.tally.count("session cycle")

    # --- slow: delays, hangs, trickles

    def slow(self, rng: random.Random) -> None:
        p = self.port
        while not self.stop.is_set():
            kind = rng.choice(["slowpoke", "slowpoke login", "trickle", "trickle login", "timeout", "timeout login"])
            session = {"X-Mishap-Session": f"slow-{rng.randrange(1000)}"}
            if kind == "slowpoke":
                reply = http(p, "GET", U + "slowpoke", session)
                if self.expect(kind, reply, status=200, exact=b'{"isAvailable":true,"userName":"slowpoke"}'):
                    self.check_elapsed(kind, reply, 1.4)
            elif kind == "slowpoke login":
                reply = self.login("slowpoke@x.com", "secret", session)
                if self.expect(kind, reply, status=200, contains=b'"token"'):
                    self.check_elapsed(kind, reply, 1.4)
            elif kind == "trickle":
                reply = http(p, "GET", U + "trickle", session, timeout=30)
                if self.expect(kind, reply, status=200, exact=b'{"isAvailable":true,"userName":"trickle"}'):
                    self.check_elapsed(kind, reply, 3.5)
            elif kind == "trickle login":
                reply = self.login("trickle@x.com", "secret", session, timeout=30)
                if self.expect(kind, reply, status=200, contains=b'"token"'):
                    self.check_elapsed(kind, reply, 3.5)
            elif kind == "timeout":
                self.expect(kind, http(p, "GET", U + "timeout", session, timeout=rng.uniform(1, 3)), outcome="timeout")
            else:
                self.expect(kind, self.login("timeout@x.com", "secret", session, timeout=rng.uniform(1, 3)), outcome="timeout")

    def check_elapsed(self, kind: str, reply: Reply, at_least: float) -> None:
        if reply.elapsed < at_least:
            self.tally.fail(f"{kind} too early", f"answered after {reply.elapsed:.2f} s, expected at least {at_least} s")

    def bursts(self, rng: random.Random) -> None:
        """Every 20 s: 100 hanging requests held for 2 s then let go, or 100 delayed requests
        at once, all of which must be answered."""
        which = 0
        while not self.stop.wait(20):
            which += 1
            if which % 2:
                self.hang_burst(100)
            else:
                self.delay_burst(100)

    def hang_burst(self, count: int) -> None:
        sockets = []
        try:
            for index in range(count):
                s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
                s.sendall(f"GET {U}timeout HTTP/1.1\r\nHost: x\r\nX-Mishap-Session: hang-{index}\r\n\r\n".encode())
                sockets.append(s)
            time.sleep(2)
            answered = closed = 0
            for s in sockets:
                s.setblocking(False)
                try:
                    if s.recv(1):
                        answered += 1
                    else:
                        closed += 1
                except BlockingIOError:
                    pass  # still held: as it should be
            if answered or closed:
                self.tally.fail("hang burst", f"of {count} hanging requests, {answered} were answered and "
                                              f"{closed} closed within 2 s")
            else:
                self.tally.count("hang burst")
        except OSError as error:
            self.tally.fail("hang burst", f"after {len(sockets)} connections: {error}")
        finally:
            for s in sockets:
                s.close()

    def delay_burst(self, count: int) -> None:
        replies = [None] * count

        def one(index: int) -> None:
            replies[index] = http(self.port, "GET", U + "slowpoke", {"X-Mishap-Session": f"burst-{index}"}, timeout=30)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        bad = [r for r in replies if r is None or r.outcome != "ok" or r.status != 200]
        if bad:
            self.tally.fail("delay burst", f"{len(bad)} of {count} delayed requests failed, e.g. {bad[0] and bad[0].describe()}")
        else:
            self.tally.count("delay burst")

    # --- admin

    def admin(self, rng: random.Random) -> None:
        p = self.port
        calls = [
            ("GET", "/__mishap/health", 200), ("GET", "/__mishap/requests", 200),
            ("GET", "/__mishap/requests?limit=50", 200), ("GET", "/__mishap/requests?rule=maintenance&limit=20", 200),
            ("GET", "/__mishap/requests?path=/login&method=POST&limit=20", 200),
            ("GET", "/__mishap/retries", 200), ("GET", "/__mishap/scenarios", 200),
            ("GET", "/__mishap/reset", 405), ("GET", "/__mishap/nothing", 404),
        ]
        # A global reset forgets every session: rare, so that per-session state builds up
        # between resets well past what the server keeps.
        next_reset = time.monotonic() + rng.uniform(20, 40)
        while not self.stop.wait(rng.uniform(0.02, 0.15)):
            draw = rng.random()
            if time.monotonic() > next_reset:
                next_reset = time.monotonic() + rng.uniform(40, 60)
                with self.cycle_lock:
                    reply = http(p, "POST", "/__mishap/reset")
                self.admin_reply("POST /__mishap/reset", reply, 200)
                continue
            if draw < 0.25:
                session = f"s{rng.randrange(1, 3)}-{rng.randrange(5000)}"
                method, path, status = rng.choice([("POST", "/__mishap/reset?session=", 200),
                                                   ("GET", "/__mishap/requests?session=", 200),
                                                   ("GET", "/__mishap/retries?session=", 200)])
                self.admin_reply(f"{method} {path.split('?')[0]}?session", http(p, method, path + session), status)
                continue
            method, path, status = rng.choice(calls)
            reply = http(p, method, path)
            if self.admin_reply(f"{method} {path.split('?')[0]}", reply, status) and path == "/__mishap/requests":
                entries = json.loads(reply.body).get("requests", [])
                if len(entries) > 1000:
                    self.tally.fail("admin", f"the journal holds {len(entries)} requests, more than its 1000")

    def admin_reply(self, name: str, reply: Reply, status: int) -> bool:
        if reply.outcome != "ok" or reply.status != status:
            self.tally.fail("admin", f"{name}: {reply.describe()}, expected {status}")
            return False
        try:
            json.loads(reply.body)
        except ValueError:
            self.tally.fail("admin", f"{name}: not JSON: {reply.body[:120]!r}")
            return False
        self.tally.count("admin call")
        return True

    # --- reloads

    def health(self) -> dict:
        return get_json(self.port, "GET", "/__mishap/health")

    def served_version(self):
        reply = http(self.port, "GET", "/soak/extra")
        if reply.outcome == "ok" and reply.status == 200:
            return json.loads(reply.body).get("soakVersion")
        return None

    def wait_until(self, condition, seconds: float = 8.0) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if condition():
                return True
            time.sleep(0.1)
        return condition()

    def reloads(self, rng: random.Random) -> None:
        extra = self.scenarios / EXTRA
        touched = self.scenarios / "isUserNameAvailable.yaml"
        actions = ["rewrite", "touch", "post", "sighup", "rewrite", "broken"]
        step = 0
        while not self.stop.wait(2.5):
            action = actions[step % len(actions)]
            step += 1
            before = self.health()["reloads"]
            if action == "rewrite":
                self.version += 1
                write_atomically(extra, extra_yaml(self.version))
                if self.wait_until(lambda: self.served_version() == self.version):
                    self.tally.count("reload by edit")
                else:
                    self.tally.fail("reload", f"version {self.version} of {EXTRA} not served (still {self.served_version()})")
            elif action == "touch":
                os.utime(touched)
                if self.wait_until(lambda: self.health()["reloads"] > before):
                    self.tally.count("reload by touch")
                else:
                    self.tally.fail("reload", "touching isUserNameAvailable.yaml caused no reload")
            elif action == "post":
                reply = http(self.port, "POST", "/__mishap/reload")
                # Both maintenance cycles are unchanged: they keep their positions.
                if self.expect("reload by POST", reply, status=200, contains=b'"cyclesKept":2') \
                        and self.health()["reloads"] <= before:
                    self.tally.fail("reload", "POST /__mishap/reload answered 200 but the reload count did not grow")
            elif action == "sighup":
                os.kill(self.server.pid, signal.SIGHUP)
                if self.wait_until(lambda: self.health()["reloads"] > before):
                    self.tally.count("reload by SIGHUP")
                else:
                    self.tally.fail("reload", "SIGHUP caused no reload")
            else:
                self.broken_cycle(rng, extra, (step // len(actions)) % len(BROKEN))

    def broken_cycle(self, rng: random.Random, extra: Path, which: int) -> None:
        """A broken file: the reload fails (watcher, then POST: 422 naming the file) and the last
        good version keeps serving; then the fixed file is served."""
        what, text = BROKEN[which]
        write_atomically(extra, text)
        if not self.wait_until(lambda: self.health().get("lastReloadFailed") is True):
            self.tally.fail("broken file", f"{what} in {EXTRA}: the health check never reported the failed reload")
        reply = http(self.port, "POST", "/__mishap/reload")
        if reply.status != 422 or EXTRA.encode() not in reply.body:
            self.tally.fail("broken file", f"{what}: POST /__mishap/reload answered {reply.describe()}, expected 422 naming {EXTRA}")
        scenarios = get_json(self.port, "GET", "/__mishap/scenarios")
        if not scenarios.get("lastReloadErrors"):
            self.tally.fail("broken file", f"{what}: /__mishap/scenarios lists no lastReloadErrors")
        time.sleep(rng.uniform(0.5, 2))  # traffic goes on against the broken folder
        served = self.served_version()
        if served != self.version:
            self.tally.fail("broken file", f"{what}: /soak/extra answers version {served}, expected the last good {self.version}")
        self.tally.count(f"broken file ({what})")
        self.version += 1
        write_atomically(extra, extra_yaml(self.version))
        if not self.wait_until(lambda: self.served_version() == self.version and not self.health()["lastReloadFailed"]):
            self.tally.fail("broken file", f"the fixed {EXTRA} (version {self.version}) was not served")


# ---------------------------------------------------------------------------------------------
# wrk


def start_wrk(script: str, url: str, threads: int, connections: int, seconds: int, timeout: str, args: list):
    argv = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", timeout,
            "-s", str(HERE / script), url]
    if args:
        argv += ["--"] + args
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish_wrk(name: str, process: subprocess.Popen, timeout: float) -> dict:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise SoakError(f"wrk ({name}) did not finish")
    text = out.decode(errors="replace")
    match = re.search(r"^SOAK-RESULT (.*)$", text, re.MULTILINE)
    if process.returncode != 0 or not match:
        raise SoakError(f"wrk ({name}) failed (exit {process.returncode}):\n{text}{err.decode(errors='replace')}")
    result = json.loads(match.group(1))
    sessions = re.search(r"^SOAK-SESSIONS (\d+) (\d+)$", text, re.MULTILINE)
    if sessions:
        result["session_requests"], result["distinct_sessions"] = int(sessions.group(1)), int(sessions.group(2))
    result["text"] = text
    return result


def table_of(counter: dict) -> dict:
    """Lua sends an empty table as []: make every counter a dict."""
    return counter if isinstance(counter, dict) else {}


def reconcile(clean: dict, connections: int) -> list:
    """The statuses received against the requests sent, by the status each must get. An answer
    of a status no request could get, or a count off by more than the requests still in flight
    when wrk stopped, is a wrong answer that the body check did not catch."""
    problems = []
    issued, received = table_of(clean["issued"]), table_of(clean["statuses"])
    allowed = {status for key in issued for status in key.split("|")}
    for status, count in received.items():
        if status not in allowed:
            problems.append(f"{count} answer(s) with status {status}, which no request of the clean mix should get")
    for status in allowed:
        fixed = issued.get(status, 0)
        either = sum(n for key, n in issued.items() if "|" in key and status in key.split("|"))
        got = received.get(status, 0)
        if got < fixed - connections or got > fixed + either:
            problems.append(f"status {status}: {got} answers, expected {fixed} to {fixed + either} "
                            f"(less up to {connections} in flight)")
    return problems


# ---------------------------------------------------------------------------------------------
# The log


LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT[\d:.]+Z (\w+) (.*)$")


def check_log(path: Path) -> tuple:
    """(lines by level, expected reload failures, unexpected lines)."""
    levels, unexpected, expected_failures = Counter(), [], 0
    in_failure = False
    for line in path.read_text(errors="replace").splitlines():
        match = LOG_LINE.match(line)
        if not match:
            # A continuation of a multi-line message: the problems of a failed reload.
            if not (in_failure and (EXTRA in line or re.search(r"\d+ problem\(s\)", line))):
                unexpected.append(line)
            continue
        level, message = match.groups()
        levels[level] += 1
        in_failure = False
        if level in ("error", "critical"):
            if message.startswith("reload failed; still serving the previous scenarios"):
                expected_failures += 1
                in_failure = True
            else:
                unexpected.append(line)
        elif level in ("warning",):
            unexpected.append(line)
    return levels, expected_failures, unexpected


# ---------------------------------------------------------------------------------------------
# The run


def nonzero(counts) -> str:
    shown = ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items()) if v)
    return shown or "none"


def median(values):
    return statistics.median(values) if values else 0


def mib(kib: float) -> str:
    return f"{kib / 1024:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mishap", required=True, help="the mishap binary (a release build)")
    parser.add_argument("--seconds", type=int, default=180, help="how long the load runs (default 180)")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections of the clean traffic (default 16)")
    parser.add_argument("--fault-connections", type=int, default=2,
                        help="wrk connections of the faults, each fault a new connection (default 2)")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads of the clean traffic (default 2)")
    parser.add_argument("--slow-clients", type=int, default=6, help="clients on delays, trickles and hangs (default 6)")
    parser.add_argument("--sessions", type=int, default=0,
                        help="reuse this many session ids (default 0: a new id every 4 requests)")
    parser.add_argument("--log-level", default="warning", help="the server's --log-level (default warning)")
    parser.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                        help="an extra argument for `mishap serve` (repeat it: --serve-arg=--max-sessions --serve-arg=100)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (scenarios, log)")
    options = parser.parse_args()
    if options.seconds < 10:
        parser.error("--seconds must be at least 10")

    workdir = Path(tempfile.mkdtemp(prefix="mishap-soak-"))
    scenarios = workdir / "scenarios"
    shutil.copytree(REPO / "scenarios", scenarios)
    write_atomically(scenarios / EXTRA, extra_yaml(0))
    log_path = workdir / "mishap.log"
    server = None
    try:
        server = Server(options.mishap, scenarios, log_path, options.log_level, options.serve_arg)
        return soak(server, scenarios, log_path, options)
    finally:
        if server and server.alive:
            server.stop()
        if options.keep:
            log(f"soak: kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def soak(server: Server, scenarios: Path, log_path: Path, options) -> int:
    failures = []
    port = server.port
    url = f"http://127.0.0.1:{port}"
    log(f"soak: mishap (pid {server.pid}) on {url}, {options.seconds} s of load, log in {log_path}")

    # Ready and answering. Then one of each kind of request, so what the server sets up once,
    # lazily (timers for delays, say), is in place before its descriptors are counted.
    for path, expected in [(U + "someone", b'"isAvailable":true'), ("/soak/extra", b'"soakVersion":0')]:
        reply = http(port, "GET", path)
        if reply.status != 200 or expected not in reply.body:
            raise SoakError(f"GET {path} answered {reply.describe()} before the load")
    warm_up = [threading.Thread(target=http, args=(port, "GET", U + name), kwargs={"timeout": timeout})
               for name, timeout in [("slowpoke", 10), ("trickle", 10), ("timeout", 1)] + [(f, 2) for f in FAULTS]]
    for thread in warm_up:
        thread.start()
    http(port, "POST", "/__mishap/reload")
    os.kill(server.pid, signal.SIGHUP)
    for thread in warm_up:
        thread.join()
    time.sleep(1)
    fds_before, fd_kinds_before = server.fds(), server.fd_kinds()
    rss_before = server.status_field("VmRSS")

    stop = threading.Event()
    sampling = threading.Event()
    sampler = Sampler(server, sampling)
    sampler.start()
    session_args = [f"sessions={options.sessions}"] if options.sessions else []
    clean = start_wrk("clean.lua", url, options.threads, options.connections, options.seconds, "10s", session_args)
    faults = start_wrk("faults.lua", url, 1, options.fault_connections, options.seconds, "2s", [])
    clients = Clients(server, scenarios, stop, options.slow_clients)
    started = time.monotonic()
    clients.start()
    while time.monotonic() - started < options.seconds:
        time.sleep(1)
        if not server.alive:
            break
        elapsed = int(time.monotonic() - started)
        if elapsed % 30 == 0:
            last = sampler.samples[-1] if sampler.samples else None
            if last:
                log(f"soak: {elapsed:>4} s  RSS {mib(last.rss_kib)} MiB  fds {last.fds}  threads {last.threads}")
    stop.set()
    clean_result = finish_wrk("clean", clean, 60)
    fault_result = finish_wrk("faults", faults, 60)
    clients.join(45)
    loaded_seconds = time.monotonic() - started
    sampling.set()
    sampler.join()
    stragglers = [t for t in clients.threads if t.is_alive()]
    if stragglers:
        failures.append(f"{len(stragglers)} client(s) still waiting 45 s after the load stopped: a request never ended")

    # Alive?
    alive = server.alive
    if not alive:
        failures.append(f"the server died during the load (exit status {server.process.returncode})")

    # Descriptors back to their count before the load.
    fds_after = None
    if alive:
        deadline = time.monotonic() + FD_SETTLE_SECONDS
        while True:
            fds_after = server.fds()
            if fds_after <= fds_before + FD_SLACK or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if fds_after > fds_before + FD_SLACK:
            failures.append(f"descriptors: {fds_after} open {FD_SETTLE_SECONDS} s after the load, "
                            f"{fds_before} before it\n    before: {fd_kinds_before}\n    after:  {server.fd_kinds()}")

    # Still answering, health included.
    health = {}
    if alive:
        try:
            health = get_json(port, "GET", "/__mishap/health")
            reply = http(port, "GET", U + "someone")
            if reply.status != 200 or b'"userName":"someone"' not in reply.body:
                failures.append(f"after the load, GET {U}someone answered {reply.describe()}")
            reply = clients.login("john@doe.com", "onlyjohnknowsme")
            if reply.status != 200 or b'"token"' not in reply.body:
                failures.append(f"after the load, POST /login answered {reply.describe()}")
        except ValueError as error:
            failures.append(f"after the load: {error}")
    rss_end = server.status_field("VmRSS") if alive else 0

    # RSS: the second half of the run against the first, warm-up left out.
    samples = sampler.samples
    warm = max(3, len(samples) // 10)
    steady = samples[warm:]
    half = len(steady) // 2
    first_half, second_half = [s.rss_kib for s in steady[:half]], [s.rss_kib for s in steady[half:]]
    rss_first, rss_second = median(first_half), median(second_half)
    rss_ratio = rss_second / rss_first if rss_first else 0
    if len(steady) < 4:
        failures.append(f"only {len(samples)} RSS samples: too few to compare")
    elif rss_ratio > 1 + RSS_TOLERANCE:
        failures.append(f"RSS grew: median {mib(rss_second)} MiB in the second half of the run against "
                        f"{mib(rss_first)} MiB in the first ({(rss_ratio - 1) * 100:+.1f}%, more than "
                        f"{RSS_TOLERANCE * 100:.0f}%)")

    # The clean traffic: no error of any kind, every answer one the scenarios give.
    clean_errors = {k: v for k, v in clean_result["errors"].items() if k != "status"}
    if any(clean_errors.values()):
        failures.append(f"clean traffic: socket errors {clean_errors}")
    checks = table_of(clean_result["checks"])
    if checks.get("anomaly"):
        failures.append(f"clean traffic: {checks['anomaly']} wrong answer(s), e.g.:\n    "
                        + "\n    ".join(clean_result["samples"][:10]))
    if not checks.get("ok"):
        failures.append("clean traffic: no answer was checked")
    for problem in reconcile(clean_result, options.connections):
        failures.append(f"clean traffic: {problem}")

    # The Python clients.
    tally = clients.tally
    for kind, count in sorted(tally.unexpected.items()):
        failures.append(f"client: {count} unexpected outcome(s) of {kind}")
    if tally.samples:
        failures.append("client samples:\n    " + "\n    ".join(tally.samples[:15]))
    for needed in ["check", "session cycle", "admin call", "reload by edit", "slowpoke", "timeout"]:
        if not tally.counts.get(needed):
            failures.append(f"client: no successful '{needed}' during the run")
    if options.seconds >= 60 and not any(k.startswith("broken file") for k in tally.counts):
        failures.append("client: no broken file was tried")

    # Stop: SIGTERM, exit 0.
    exit_status = server.stop() if alive else server.process.returncode
    if alive and exit_status != 0:
        failures.append(f"SIGTERM: the server exited with status {exit_status}, expected 0")

    levels, expected_failures, unexpected_lines = check_log(log_path)
    if unexpected_lines:
        failures.append(f"server log: {len(unexpected_lines)} unexpected line(s), e.g.:\n    "
                        + "\n    ".join(line[:300] for line in unexpected_lines[:10]))
    log_size = log_path.stat().st_size

    # ----- report
    print()
    print("RSS samples (MiB, one per second):")
    values = [f"{s.rss_kib / 1024:.1f}" for s in samples]
    for row in range(0, len(values), 15):
        print("  " + " ".join(f"{v:>5}" for v in values[row:row + 15]))
    print(f"descriptor samples: min {min(s.fds for s in samples)}, max {max(s.fds for s in samples)}; "
          f"threads: max {max(s.threads for s in samples)}")
    print()

    clean_requests = clean_result["requests"]
    fault_requests = fault_result["requests"]
    client_requests = sum(tally.counts.values()) + sum(tally.unexpected.values())
    distinct = clean_result.get("distinct_sessions", 0)
    # Between the medians of the two halves, about half the run's sessions arrived.
    growth_kib = rss_second - rss_first
    rows = [
        ("duration", f"{options.seconds} s of load, {loaded_seconds:.0f} s with the clients' last requests"),
        ("clean requests (wrk)", f"{clean_requests:,} ({clean_requests / (clean_result['duration_us'] / 1e6):,.0f} req/s), "
                                 f"{checks.get('ok', 0):,} checked, {checks.get('anomaly', 0)} wrong"),
        ("clean statuses", " ".join(f"{k}:{v:,}" for k, v in sorted(table_of(clean_result["statuses"]).items()))),
        ("sessions", f"{distinct:,} distinct ids over {clean_result.get('session_requests', 0):,} requests"
                     + (f" (reusing {options.sessions})" if options.sessions else "")),
        ("fault requests (wrk)", f"{sum(table_of(fault_result['sent']).values()):,} sent, {fault_requests:,} read as answers"),
        ("client requests", f"{client_requests:,} (checker, slow, bursts, admin, reloads)"),
        ("checked answers", f"catalogue {tally.counts['check']:,}, faults "
                            f"{sum(v for k, v in tally.counts.items() if k.startswith('fault')):,}, "
                            f"session cycles {tally.counts['session cycle']:,}"),
        ("slow requests", " ".join(f"{k}:{tally.counts[k]}" for k in ["slowpoke", "slowpoke login", "trickle", "trickle login",
                                                                       "timeout", "timeout login", "hang burst", "delay burst"])),
        ("admin calls", f"{tally.counts['admin call']:,}"),
        ("reloads", f"{health.get('reloads', '?')} done by the server; edits {tally.counts['reload by edit']}, "
                    f"touches {tally.counts['reload by touch']}, POST {tally.counts['reload by POST']}, "
                    f"SIGHUP {tally.counts['reload by SIGHUP']}, broken files "
                    f"{sum(v for k, v in tally.counts.items() if k.startswith('broken file'))} "
                    f"({expected_failures} failed reloads logged, as expected)"),
        ("RSS (MiB)", f"before {mib(rss_before)}, first {mib(samples[0].rss_kib)}, last {mib(samples[-1].rss_kib)}, "
                      f"max {mib(max(s.rss_kib for s in samples))}, end {mib(rss_end)}; "
                      f"median 1st half {mib(rss_first)} vs 2nd half {mib(rss_second)} ({(rss_ratio - 1) * 100:+.1f}%)"),
        ("RSS against sessions", f"{growth_kib / 1024:+.1f} MiB from the first half to the second, while about "
                                 f"{distinct // 2:,} new sessions arrived ({growth_kib * 1024 / max(1, distinct // 2):+.1f} bytes each)"
                                 if not options.sessions else f"{growth_kib / 1024:+.1f} MiB from the first half to the "
                                                              f"second, over the same {options.sessions} sessions"),
        ("RssAnon (MiB)", f"first {mib(samples[0].anon_kib)}, last {mib(samples[-1].anon_kib)}"),
        ("descriptors", f"before {fds_before}, after {fds_after} (max during load {max(s.fds for s in samples)})"),
        ("errors by kind", f"clean traffic {nonzero(clean_errors)}, wrong answers {checks.get('anomaly', 0)}; "
                           f"clients {nonzero(tally.unexpected)}; unexpected log lines {len(unexpected_lines)}; "
                           f"expected: fault wrk {nonzero(fault_result['errors'])}, "
                           f"faults seen by the checker {sum(v for k, v in tally.counts.items() if k.startswith('fault')):,}"),
        ("server log", f"{log_size:,} bytes; lines by level {dict(levels) or 'none'}"),
        ("exit on SIGTERM", f"{exit_status}"),
    ]
    width = max(len(name) for name, _ in rows)
    print("soak summary")
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")
    print()
    if failures:
        print(f"soak: FAILED, {len(failures)} check(s):")
        for failure in failures:
            print(f"  - {failure}")
        return 1
    print("soak: all checks passed (RSS flat, descriptors back, alive, no unexpected error)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SoakError as error:
        log(f"soak: {error}")
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
