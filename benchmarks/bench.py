#!/usr/bin/env python3
"""Mishap's benchmarks, measured side by side with a minimal C libmicrohttpd server.

Started by benchmarks/run.sh, which builds both servers first (python3 standard library only).

What is measured, each against the targets of the performance issue:

  throughput   wrk req/s on one URL, the C baseline (benchmarks/baseline.c: a prebuilt
               response, nothing parsed) and Mishap run ALTERNATELY, round after round; the
               figure is the median of the rounds. ratio = mishap / baseline, higher is better.
                 - GET /isUserNameAvailable?userName=someone, default scenarios   >= 0.90
                 - GET ...?userName=maintenance (a `cycle` rule)                  >= 0.80
                 - POST /login with a JSON body (benchmarks/login.lua)            >= 0.80
                 - GET /counted, a rule that tests and sets state (no session:
                   every request takes the one shared set's lock)                 >= 0.60
               and Mishap with the request log on (the default; lines to /dev/null) against
               the same with it off                                              >= 0.80
               For the first three, the servers' CPU time per request as well, user and kernel
               (from /proc/PID/stat over each wrk run; medians, info): what the req/s follow.
  scaling      Mishap on 1,000 generated rules over 100 endpoints (plus the default scenarios)
               against Mishap on the default scenarios alone, same URL; ratio = big / default,
               >= 0.80 means a throughput drop of at most 20%. In the same folder, the last of
               the 50 `{id}` endpoints against a literal one with the same rules: >= 0.90.
  latency      wrk --latency at -c256: ratio = mishap p99 / baseline p99, lower is better, <= 1.3.
  HTTPS        the C baseline and Mishap serving HTTPS with the same certificate and key (ECDSA
               P-256, from `mishap tls init`): keep-alive GETs (>= 0.80), and GETs with
               `Connection: close`, a TLS handshake each (reported).
  proxied      wrk through Mishap started with `--upstream` pointing at the C baseline (a path no
               rule answers), against wrk at the C baseline directly (benchmarks/upstream_rows.py):
               req/s (>= 0.12x), p50 (<= 8.00x) and p99 (<= 4.00x) latency at -c32; these targets,
               set from the first measurement, are informational: marked `(info)`, never failing.
  startup      exec to the first HTTP 200, polled as fast as possible, median of 20 runs each:
               <= 10 ms, and mishap / baseline <= 2.
  memory       VmRSS of a fresh Mishap after 10 s at -c256 (<= 16 MiB), and after 60 s of the
               same load (<= 16 MiB, and against after 10 s within 0.90..1.10: no growth).
  delays       1,000 concurrent requests held by `delay: 2000`: RSS while they are held
               (<= 40 MiB), and undelayed requests answered meanwhile (slowest <= 200 ms).
  rule set     100,000 generated rules (benchmarks/gen_rules.py; 10,000 for --smoke), measured
               by benchmarks/rule_load.py: time to the first 200 and peak RSS per rule (info),
               and RSS after the last of 3 reloads against after the first (0.90..1.10).

Reading the table: `reference` is the C baseline (or, for scaling and RSS flatness, Mishap's own
first figure), `ratio` is the measured figure over the reference, `target` is the bound the
result column checks. FAIL! marks a miss by more than 25% of the target, which makes the full
run exit 1; a plain FAIL is within noise range of the target and is reported only. The load
generator shares the cores with the server under test: absolute numbers drift from run to run,
only figures of the same run are comparable. Rows marked `info` carry no target: the request
log's cost, the CPU time per request, and the anonymous part of the RSS (VmRSS also counts the pages of shared libraries the process has touched).

--smoke runs everything once and briefly (wrk -d1s, 1 round, startup 3 times, no 60 s run) and
asserts nothing about speed: it exits 0 when every server built, started and answered correctly.
Exit status: 0 fine, 1 a target missed widely (full run only), 2 something did not run.
"""

import argparse
import asyncio
import base64
import json
import os
import re
import resource
import select
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import rule_load  # noqa: E402  (benchmarks/rule_load.py)
import upstream_rows  # noqa: E402  (benchmarks/upstream_rows.py)
from dashboard_poller import DashboardPoller  # noqa: E402  (benchmarks/dashboard_poller.py)
REPO = HERE.parent
SOMEONE = "/isUserNameAvailable?userName=someone"
MAINTENANCE = "/isUserNameAvailable?userName=maintenance"
LOGIN = "/login"
DELAYED = "/delayed"
COUNTED = "/counted"
DELAY_MS = 2000
WIDE_MARGIN = 0.25  # a miss by more than this fraction of the target fails the full run


class BenchError(Exception):
    """Something did not build, start or answer: the benchmark itself failed."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Servers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    """A memory figure of /proc/PID/status in MiB: VmRSS, or RssAnon (private memory without
    the shared libraries' pages, which VmRSS includes)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise BenchError(f"no {field} for pid {pid}")


def cpu_seconds(pid: int) -> tuple:
    """The user and kernel CPU seconds a process (all its threads) has used, from /proc/PID/stat
    (fields 14 and 15, in clock ticks; the command name before them may hold spaces)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / ticks, int(fields[12]) / ticks


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Server:
    """A server process started on a free port, read from its first output line."""

    running: list = []

    def __init__(self, name: str, argv: list, log_dir: Path, discard_log: bool = False):
        self.name = name
        self.log_path = Path(os.devnull) if discard_log else log_dir / f"{name}.log"
        self.stderr = open(self.log_path, "ab")
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.stderr, bufsize=0)
        Server.running.append(self)
        line = self._first_line(timeout=30)
        match = re.search(r"listening on (https?://[^\s]+?):(\d+)\s*$", line)
        if not match:
            self.stop()
            raise BenchError(f"{name}: unexpected first output line {line!r} (see {self.log_path})")
        self.base = f"{match.group(1)}:{match.group(2)}"
        self.port = int(match.group(2))
        # Keep reading stdout so the server never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()

    def _first_line(self, timeout: float) -> str:
        data = b""
        deadline = time.monotonic() + timeout
        while not data.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.process.poll() is not None:
                break
            ready, _, _ = select.select([self.process.stdout], [], [], remaining)
            if ready:
                chunk = self.process.stdout.read(1)
                if not chunk:
                    break
                data += chunk
        if not data.endswith(b"\n"):
            code = self.process.poll()
            self.stop()
            tail = self.log_path.read_text(errors="replace")[-2000:]
            raise BenchError(f"{self.name} did not start (exit status {code}):\n{tail}")
        return data.decode(errors="replace")

    def _drain(self) -> None:
        while self.process.stdout.read(4096):
            pass

    def url(self, path: str) -> str:
        return self.base + path

    @property
    def rss(self) -> float:
        return rss_mib(self.process.pid)

    def stop(self) -> None:
        stop_process(self.process)
        self.stderr.close()
        if self in Server.running:
            Server.running.remove(self)

    @classmethod
    def stop_all(cls) -> None:
        for server in list(cls.running):
            server.stop()


def http(port: int, method: str, path: str, body: bytes = b"", headers: dict = None, timeout: float = 5.0):
    """One request on a fresh connection (Connection: close): (status, body, seconds)."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    if body:
        lines.append(f"Content-Length: {len(body)}")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    elapsed = time.perf_counter() - started
    head, _, payload = data.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].split()
    status = int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else 0
    return status, payload, elapsed


def expect(server: Server, method: str, path: str, status: int, contains: bytes, body: bytes = b"", headers=None):
    """Checks that the server answers correctly before it is measured."""
    try:
        got, payload, _ = http(server.port, method, path, body, headers)
    except OSError as error:
        raise BenchError(f"{server.name}: {method} {path} failed: {error}")
    if got != status or contains not in payload:
        raise BenchError(f"{server.name}: {method} {path} answered {got} {payload[:200]!r}, "
                         f"expected {status} with {contains!r}")


# ---------------------------------------------------------------------------------------------
# wrk


@dataclass
class WrkResult:
    requests_per_second: float
    requests: int
    p99_ms: float = None
    p50_ms: float = None
    non_2xx: int = 0
    socket_errors: int = 0
    user_us: float = None    # the server's user CPU per request, microseconds (set by alternate)
    kernel_us: float = None  # the same in the kernel


def to_ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", text)
    if not match:
        raise BenchError(f"cannot read wrk latency {text!r}")
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}[match.group(2)]
    return float(match.group(1)) * scale


def wrk(url: str, connections: int, seconds: float, threads: int, script: Path = None,
        latency: bool = False, expect_2xx: bool = True, headers: tuple = ()) -> WrkResult:
    argv = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds:g}s", "--timeout", "5s"]
    for header in headers:
        argv += ["-H", header]
    if latency:
        argv.append("--latency")
    if script:
        argv += ["-s", str(script)]
    argv.append(url)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    out = done.stdout
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    total = re.search(r"(\d+) requests in", out)
    if done.returncode != 0 or not rps or not total:
        raise BenchError(f"wrk failed on {url}:\n{out}{done.stderr}")
    result = WrkResult(float(rps.group(1)), int(total.group(1)))
    if latency:
        p99 = re.search(r"^\s*99%\s+(\S+)", out, re.MULTILINE)
        if not p99:
            raise BenchError(f"wrk printed no 99% latency:\n{out}")
        result.p99_ms = to_ms(p99.group(1))
        p50 = re.search(r"^\s*50%\s+(\S+)", out, re.MULTILINE)
        result.p50_ms = to_ms(p50.group(1)) if p50 else None
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    result.non_2xx = int(non_2xx.group(1)) if non_2xx else 0
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    result.socket_errors = sum(int(n) for n in errors.groups()) if errors else 0
    if result.requests == 0:
        raise BenchError(f"wrk got no answer from {url}:\n{out}")
    if result.socket_errors > max(10, result.requests // 100):
        raise BenchError(f"wrk saw {result.socket_errors} socket errors on {url}:\n{out}")
    if expect_2xx and result.non_2xx:
        raise BenchError(f"{result.non_2xx} of {result.requests} answers to {url} were not 2xx")
    return result


# ---------------------------------------------------------------------------------------------
# Scenario folders


def write_big_scenarios(destination: Path, endpoints: int = 100, rules_per_endpoint: int = 10) -> int:
    """The default scenarios plus `endpoints` generated endpoints of `rules_per_endpoint` rules
    each, matching on query values (equality, lists, prefixes), the last rule a catch-all. Half
    the paths are literal, half have a `{id}` segment. The generated files sort before the
    default ones, so any scan over endpoints meets them first. Returns the rule count added."""
    shutil.copytree(REPO / "scenarios", destination)
    generated = destination / "generated"
    generated.mkdir()
    for e in range(endpoints):
        path = f"/generated/e{e:03d}" + ("" if e % 2 == 0 else "/{id}")
        lines = [f"endpoint: GET {path}", "rules:"]
        for r in range(rules_per_endpoint - 1):
            condition = [f"v{r}", f"[v{r}a, v{r}b, v{r}c]", f"{{ prefix: p{r}- }}"][r % 3]
            lines += [f"  - name: r{r}",
                      f"    when: {{ query: {{ q: {condition} }} }}",
                      f"    respond: {{ status: 200, json: {{ endpoint: {e}, rule: {r}, q: \"{{{{query.q}}}}\" }} }}"]
        lines += ["  - name: catchAll",
                  f"    respond: {{ json: {{ endpoint: {e}, rule: catchAll }} }}"]
        (generated / f"e{e:03d}.yaml").write_text("\n".join(lines) + "\n")
    return endpoints * rules_per_endpoint


def write_delayed_scenarios(destination: Path) -> None:
    shutil.copytree(REPO / "scenarios", destination)
    (destination / "delayed.yaml").write_text(
        "endpoint: GET /delayed\n"
        "rules:\n"
        "  - name: delayed\n"
        f"    respond: {{ delay: {DELAY_MS}, json: {{ ok: true }} }}\n")


def write_state_scenarios(destination: Path) -> None:
    """The default scenarios and GET /counted, whose rule tests a state value and changes it on
    every request (the shape of the token and quota rules, without their early refusals)."""
    shutil.copytree(REPO / "scenarios", destination)
    (destination / "counted.yaml").write_text(
        "state: { hits: 0 }\n"
        "endpoint: GET /counted\n"
        "rules:\n"
        "  - name: counted\n"
        "    when: { state: { hits: { atLeast: 0 } } }\n"
        "    set: { hits: { increment: 1 } }\n"
        "    respond: { json: { isAvailable: true, userName: someone } }\n")


# ---------------------------------------------------------------------------------------------
# Measurements


def alternate(label: str, targets: list, path: str, args, script: Path = None, latency: bool = False,
              expect_2xx: bool = True, headers: tuple = (), connections: int = None) -> list:
    """Runs wrk against each (name, server, path) target in turn, args.rounds times, swapping
    the order every round; returns the list of WrkResults of each target. `latency` reads the
    latency distribution too, at -c256 unless `connections` says otherwise."""
    connections = connections or (256 if latency else args.connections)
    results = [[] for _ in targets]
    if not args.smoke:  # warm up each server (lazy initialisation, page faults): not recorded
        for name, server, target_path in targets:
            wrk(server.url(target_path or path), connections, 1, args.threads,
                script, expect_2xx=expect_2xx, headers=headers)
    for round_number in range(args.rounds):
        order = list(enumerate(targets))
        if round_number % 2:
            order.reverse()
        for index, (name, server, target_path) in order:
            process = getattr(server, "process", None)  # a Server; an HTTPSURL is only a URL
            before = cpu_seconds(process.pid) if process else None
            result = wrk(server.url(target_path or path), connections, args.duration, args.threads, script,
                         latency=latency, expect_2xx=expect_2xx, headers=headers)
            if before:
                user, kernel = cpu_seconds(process.pid)
                result.user_us = (user - before[0]) * 1e6 / result.requests
                result.kernel_us = (kernel - before[1]) * 1e6 / result.requests
            results[index].append(result)
            figure = f"p99 {result.p99_ms:.2f} ms, " if latency else ""
            errors = f" ({result.socket_errors} socket errors)" if result.socket_errors else ""
            cpu = f", CPU a request: user {result.user_us:.2f} us, kernel {result.kernel_us:.2f} us" if before else ""
            log(f"  {label} round {round_number + 1}: {name:<22} {figure}{result.requests_per_second:>10,.0f} req/s{cpu}{errors}")
    return results


def median_rps(results: list) -> float:
    return statistics.median(r.requests_per_second for r in results)


def time_to_first_200(argv: list, port: int, path: str) -> float:
    """Milliseconds from spawning the process to the first 200 on `path`, polling by connect."""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = started + 10
        while True:
            if time.perf_counter() > deadline or process.poll() is not None:
                raise BenchError(f"{argv[0]} gave no 200 within 10 s (exit status {process.poll()})")
            s = socket.socket()
            try:
                s.connect(("127.0.0.1", port))
                s.sendall(request)
                head = b""
                while b"\r\n" not in head and (chunk := s.recv(4096)):
                    head += chunk
                if head.startswith(b"HTTP/1.1 200"):
                    return (time.perf_counter() - started) * 1000
            except OSError:
                pass
            finally:
                s.close()
            time.sleep(0.0001)
    finally:
        stop_process(process)


async def hold_delayed(port: int, count: int, pid: int, path: str = DELAYED, session: str = "") -> dict:
    """Opens `count` connections, each sending one delayed request (`path`, in `session` when
    given: held by its network profile), and while they are held samples the server's RSS and
    times undelayed requests (without a session). Returns the figures."""
    loop = asyncio.get_running_loop()

    async def request(path: str, session: str = ""):
        started = loop.time()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        header = f"X-Mishap-Session: {session}\r\n" if session else ""
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{header}Connection: close\r\n\r\n".encode())
        await writer.drain()
        data = await reader.read()
        writer.close()
        return data.startswith(b"HTTP/1.1 200"), loop.time() - started

    started = loop.time()
    delayed = [asyncio.create_task(request(path, session)) for _ in range(count)]
    rss_samples, fd_samples, probes = [], [], []
    await asyncio.sleep(0.3)  # let every connection open and its request arrive
    while loop.time() - started < DELAY_MS / 1000 * 0.85:
        rss_samples.append(rss_mib(pid))
        fd_samples.append(len(os.listdir(f"/proc/{pid}/fd")))
        probes.append(await asyncio.wait_for(request(SOMEONE), timeout=5))
        await asyncio.sleep(0.1)
    answers = await asyncio.wait_for(asyncio.gather(*delayed, return_exceptions=True), timeout=30)
    answered = [a for a in answers if not isinstance(a, BaseException) and a[0]]
    held = [a for a in answered if a[1] >= DELAY_MS / 1000 * 0.95]
    return {
        "seconds": round(loop.time() - started, 2),
        "server_fds": max(fd_samples),
        "answered": len(answered),
        "held": len(held),
        "rss": max(rss_samples),
        "probe_ok": all(ok for ok, _ in probes),
        "probe_max_ms": max(seconds for _, seconds in probes) * 1000,
        "probes": len(probes),
    }


async def hold_streams(port: int, count: int, pid: int, open_stream, seconds: float) -> dict:
    """Opens `count` streams with `open_stream(port)` (a coroutine that connects, starts the
    stream and returns a coroutine reading until the stream has sent its second message, then
    the writer), keeps them open `seconds`, and meanwhile samples the server's RSS and times
    ordinary requests: a worker thread held by a waiting stream would make them wait. Returns the
    figures."""
    loop = asyncio.get_running_loop()

    async def probe():
        started = loop.time()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET {SOMEONE} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        data = await reader.read()
        writer.close()
        return data.startswith(b"HTTP/1.1 200"), loop.time() - started

    opened = await asyncio.wait_for(asyncio.gather(*(open_stream(port) for _ in range(count))), timeout=30)
    readers = [asyncio.create_task(read) for read, _ in opened]
    started = loop.time()
    rss_samples, probes = [], []
    while loop.time() - started < seconds:
        rss_samples.append(rss_mib(pid))
        probes.append(await asyncio.wait_for(probe(), timeout=5))
        await asyncio.sleep(0.1)
    flowing = await asyncio.wait_for(asyncio.gather(*readers, return_exceptions=True), timeout=30)
    for _, writer in opened:
        writer.close()
    return {
        "flowing": sum(1 for result in flowing if result is True),
        "rss": max(rss_samples),
        "probe_ok": all(ok for ok, _ in probes),
        "probe_max_ms": max(seconds for _, seconds in probes) * 1000,
        "probes": len(probes),
    }


async def open_event_stream(port: int):
    """A stream of Server-Sent Events from `GET /ticker` (the benchmark's streams.yaml): its
    reader returns True once two events have come."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /ticker HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    await writer.drain()

    async def read():
        seen = b""
        while seen.count(b"data: tick") < 2:
            piece = await reader.read(4096)
            if not piece:
                return False
            seen += piece
        return seen.startswith(b"HTTP/1.1 200")
    return read(), writer


async def open_web_socket(port: int):
    """A WebSocket upgraded at `GET /socket` (the benchmark's streams.yaml): its reader returns
    True once the script's two messages have come (unmasked text frames of 5 bytes)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write((f"GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    await writer.drain()

    async def read():
        seen = b""
        while b"\x81\x05again" not in seen:
            piece = await reader.read(4096)
            if not piece:
                return False
            seen += piece
        return seen.startswith(b"HTTP/1.1 101") and b"\x81\x05hello" in seen
    return read(), writer


STREAMS_YAML = """\
endpoints:
  - endpoint: GET /isUserNameAvailable
    rules:
      - name: available
        respond: { json: { isAvailable: true } }
  - endpoint: GET /ticker
    rules:
      - name: ticker
        respond:
          events:
            - { data: tick, delay: 500ms }
          repeat: true
          heartbeat: 200ms
  - endpoint: GET /socket
    rules:
      - name: socket
        respond:
          websocket:
            send: [ { text: hello }, { text: again, delay: 1s } ]
            end: { close: 1000, after: 10s }
"""


# ---------------------------------------------------------------------------------------------
# The table


@dataclass
class Row:
    what: str
    reference: str
    mishap: str
    ratio: str
    target: str
    value: float   # the figure the target checks
    op: str        # ">=", "<=", "range", or "info" (not a target)
    limit: tuple   # (bound,) or (low, high)
    informational: bool = False  # a target reported, never failing the run

    @property
    def result(self) -> str:
        if self.op == "info":
            return "-"
        if self.informational:
            return self.checked + " (info)"
        return self.checked

    @property
    def checked(self) -> str:
        """PASS, FAIL (missed within the margin) or FAIL! (missed widely)."""
        low, high = (self.limit[0], None) if self.op == ">=" else \
                    (None, self.limit[0]) if self.op == "<=" else self.limit
        if (low is None or self.value >= low) and (high is None or self.value <= high):
            return "PASS"
        wide = (low is not None and self.value < low * (1 - WIDE_MARGIN)) or \
               (high is not None and self.value > high * (1 + WIDE_MARGIN))
        return "FAIL!" if wide else "FAIL"


def print_table(rows: list) -> None:
    header = ("what", "reference", "mishap", "ratio", "target", "result")
    cells = [header] + [(r.what, r.reference, r.mishap, r.ratio, r.target, r.result) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    right = {1, 2, 3}

    def line(cols):
        return "| " + " | ".join(c.rjust(w) if i in right else c.ljust(w)
                                 for i, (c, w) in enumerate(zip(cols, widths))) + " |"

    print(line(header))
    print("|" + "|".join(("-" * (w + 1) + ":") if i in right else ("-" * (w + 2))
                         for i, w in enumerate(widths)) + "|")
    for c in cells[1:]:
        print(line(c))


def rps(x: float) -> str:
    return f"{x:,.0f}"


# ---------------------------------------------------------------------------------------------


def held_stream_rows(server, what, opener):
    """Holds 200 streams of one kind (`opener`) open on `server` for 2 s while ordinary requests
    are timed, stops the server, and returns its rows: RSS, and the slowest ordinary request."""
    try:
        held = asyncio.run(hold_streams(server.port, 200, server.process.pid, opener, 2.0))
    except (OSError, asyncio.TimeoutError) as error:
        raise BenchError(f"200 {what}: {error!r}")
    server.stop()
    log(f"  {held}")
    if held["flowing"] != 200 or not held["probe_ok"]:
        raise BenchError(f"200 {what}: {held['flowing']} of 200 flowing; probes all 200: {held['probe_ok']}")
    return [Row(f"RSS with 200 {what} open (MiB)", "", f"{held['rss']:.1f}", "", "<= 40 MiB", held["rss"], "<=", (40.0,)),
            Row(f"slowest of {held['probes']} ordinary requests meanwhile (ms)", "", f"{held['probe_max_ms']:.1f}", "",
                "<= 200 ms", held["probe_max_ms"], "<=", (200.0,))]


def rule_set_rows(args) -> list:
    """Loading a generated rule set (benchmarks/rule_load.py): 100,000 rules and 3 reloads, or
    10,000 and 2 for --smoke; the rows it adds to the table."""
    rules, reloads = (10_000, 2) if args.smoke else (100_000, 3)
    log(f"rule set: {rules:,} generated rules, validate, serve and {reloads} reloads")
    try:
        figures = rule_load.measure(args.mishap, rules, reloads)
    except RuntimeError as error:
        raise BenchError(f"rule set: {error}")
    for line in rule_load.describe(figures, reloads):
        log("  " + line)
    first, last = figures["rss_after_first_reload_kib"] / 1024, figures["rss_after_last_reload_kib"] / 1024
    return [
        Row(f"info: serve {rules:,} rules, exec to first 200 (s)", "", f"{figures['serve_seconds']:.2f}", "",
            "(none)", 0, "info", ()),
        Row(f"info: peak RSS per rule, {rules:,} rules (bytes)", "", f"{figures['bytes_per_rule']:,.0f}", "",
            "(none)", 0, "info", ()),
        Row(f"RSS after reload {reloads} vs after reload 1 (MiB; ref: reload 1)", f"{first:.1f}", f"{last:.1f}",
            f"{last / first:.2f}", "0.90x .. 1.10x", last / first, "range", (0.9, 1.1)),
    ]


class HTTPSURL:
    """An HTTPS base URL, for wrk (which does not check certificates)."""

    def __init__(self, base: str):
        self.base = base

    def url(self, path: str) -> str:
        return self.base + path


def https_get(url: str) -> bytes:
    """A GET over HTTPS without checking the certificate (the benchmarks' own, self-signed)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with urllib.request.urlopen(url, context=context, timeout=10) as response:
        return response.read()


def https_rows(args, work: Path, baseline_binary: str, mishap_binary: str, cores: int) -> list:
    """Keep-alive throughput over HTTPS, and new connections (a TLS handshake each), Mishap
    against the C baseline serving the same certificate (an ECDSA P-256 one that `mishap tls
    init` makes) through libmicrohttpd and GnuTLS."""
    folder = work / "tls"
    made = subprocess.run([mishap_binary, "tls", "init", "--dir", str(folder)], capture_output=True, text=True)
    if made.returncode != 0:
        raise BenchError(f"mishap tls init failed: {made.stderr}")
    cert, key = str(folder / "ca.pem"), str(folder / "ca-key.pem")
    c_tls = Server("baseline-https", [baseline_binary, "0", cert, key], work)
    m_tls = Server("mishap-https", [mishap_binary, "serve", "--port", "0", "--tls-port", "0", "--tls-cert", cert,
                                    "--tls-key", key, "--scenarios", str(REPO / "scenarios"), "--threads", str(cores),
                                    "--log-level", "warning"], work)
    listing = json.loads(http(m_tls.port, "GET", "/__mishap/tls")[1])
    m_https = HTTPSURL(listing["url"])
    for target in (c_tls, m_https):
        if b'"userName":"someone"' not in https_get(target.url(SOMEONE)):
            raise BenchError(f"{target.url(SOMEONE)} did not answer as expected")
    rows = []
    log("HTTPS: GET someone, keep-alive")
    c_runs, m_runs = alternate("https", [("C baseline", c_tls, None), ("mishap", m_https, None)], SOMEONE, args)
    c, m = median_rps(c_runs), median_rps(m_runs)
    log("  per-round ratios: " + ", ".join(f"{a.requests_per_second / b.requests_per_second:.2f}"
                                           for a, b in zip(m_runs, c_runs)))
    rows.append(Row("HTTPS GET someone, keep-alive (req/s)", rps(c), rps(m), f"{m / c:.2f}", ">= 0.80x",
                    m / c, ">=", (0.8,)))
    log("HTTPS: a new connection, so a TLS handshake, per request")
    c_runs, m_runs = alternate("handshakes", [("C baseline", c_tls, None), ("mishap", m_https, None)], SOMEONE, args,
                               headers=("Connection: close",))
    c, m = median_rps(c_runs), median_rps(m_runs)
    rows.append(Row("HTTPS handshakes: a new connection per request (req/s)", rps(c), rps(m), f"{m / c:.2f}",
                    "reported", m / c, "info", ()))
    c_tls.stop()
    m_tls.stop()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mishap", required=True, help="the mishap release binary")
    parser.add_argument("--baseline", required=True, help="the compiled benchmarks/baseline.c")
    parser.add_argument("--smoke", action="store_true", help="brief run, no assertion on speed")
    parser.add_argument("--rounds", type=int, help="wrk rounds per server (default 5; smoke 1)")
    parser.add_argument("--duration", type=float, help="seconds per wrk run (default 5; smoke 1)")
    parser.add_argument("--connections", type=int, default=32, help="wrk -c for throughput (default 32)")
    parser.add_argument("--threads", type=int, default=2, help="wrk -t (default 2)")
    parser.add_argument("--startups", type=int, help="startup measurements per server (default 20; smoke 3)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, scenarios)")
    args = parser.parse_args()
    args.rounds = args.rounds or (1 if args.smoke else 5)
    args.duration = args.duration or (1 if args.smoke else 5)
    args.startups = args.startups or (3 if args.smoke else 20)
    rss_seconds, long_seconds = (1, None) if args.smoke else (10, 60)

    # 1,000 held connections plus the probes need file descriptors on our side.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))

    cores = os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="mishap-bench-"))

    # Request lines are logged at info; the figures are for serving, so they are turned off
    # (one more case below measures them on).
    def mishap(name: str, folder: Path, request_log: bool = False) -> Server:
        return Server(name, [args.mishap, "serve", "--port", "0", "--scenarios", str(folder),
                             "--threads", str(cores), "--log-level", "info" if request_log else "warning"],
                      work, discard_log=request_log)

    def baseline(name: str) -> Server:
        return Server(name, [args.baseline, "0"], work)

    login_body = (HERE / "login.lua").read_text().split("wrk.body = '")[1].split("'")[0].encode()
    json_header = {"Content-Type": "application/json"}

    mode = "smoke (no speed assertions)" if args.smoke else "full"
    load = os.getloadavg()
    print(f"Mishap benchmarks, {mode}: {cores} cores, load average {load[0]:.2f} at start; "
          f"wrk -t{args.threads} -c{args.connections} -d{args.duration:g}s x {args.rounds} round(s), alternating.")
    print("The load generator runs on the same cores as the server: figures are noisy, compare within one run.")
    sys.stdout.flush()

    rows = []
    try:
        big = work / "big-scenarios"
        added = write_big_scenarios(big)
        delayed_folder = work / "delayed-scenarios"
        write_delayed_scenarios(delayed_folder)
        state_folder = work / "state-scenarios"
        write_state_scenarios(state_folder)
        for folder in (REPO / "scenarios", big, delayed_folder, state_folder):
            check = subprocess.run([args.mishap, "validate", str(folder)], capture_output=True, text=True)
            if check.returncode != 0:
                raise BenchError(f"mishap validate {folder} failed:\n{check.stdout}{check.stderr}")

        # -- startup, first: before the machine is warm from load ---------------------------
        log("startup: exec to first 200")
        startup = {"baseline": [], "mishap": []}
        for i in range(args.startups):
            for name in (["baseline", "mishap"] if i % 2 == 0 else ["mishap", "baseline"]):
                port = free_port()
                argv = [args.baseline, str(port)] if name == "baseline" else \
                    [args.mishap, "serve", "--port", str(port), "--scenarios", str(REPO / "scenarios"),
                     "--threads", str(cores)]
                startup[name].append(time_to_first_200(argv, port, SOMEONE))
        base_start, mishap_start = (statistics.median(startup[n]) for n in ("baseline", "mishap"))
        log(f"  baseline {sorted(round(t, 2) for t in startup['baseline'])}")
        log(f"  mishap   {sorted(round(t, 2) for t in startup['mishap'])}")

        # -- throughput against the C baseline ------------------------------------------------
        c_server = baseline("baseline")
        m_default = mishap("mishap-default", REPO / "scenarios")
        for server in (c_server, m_default):
            expect(server, "GET", SOMEONE, 200, b'"userName":"someone"')
            expect(server, "POST", LOGIN, 200, b'"user_id":"123"' if server is m_default else b"{",
                   login_body, json_header)
        expect(m_default, "GET", MAINTENANCE, 500, b"maintenance")

        cases = [
            ("GET someone, default scenarios (req/s)", SOMEONE, None, True, 0.9),
            ("GET maintenance, a cycle rule (req/s)", MAINTENANCE, None, False, 0.8),
            ("POST /login, JSON body (req/s)", LOGIN, HERE / "login.lua", True, 0.8),
        ]
        for what, path, script, only_2xx, target in cases:
            log(f"throughput: {what}")
            c_runs, m_runs = alternate(what.split(" (")[0], [("C baseline", c_server, None),
                                                            ("mishap", m_default, None)],
                                       path, args, script, expect_2xx=only_2xx)
            c, m = median_rps(c_runs), median_rps(m_runs)
            log("  per-round ratios: " + ", ".join(f"{a.requests_per_second / b.requests_per_second:.2f}"
                                                   for a, b in zip(m_runs, c_runs)))
            rows.append(Row(what, rps(c), rps(m), f"{m / c:.2f}", f">= {target:.2f}x", m / c, ">=", (target,)))
            short = what.split(" (")[0]
            for kind in ("user", "kernel"):
                c_cpu = statistics.median(getattr(r, kind + "_us") for r in c_runs)
                m_cpu = statistics.median(getattr(r, kind + "_us") for r in m_runs)
                rows.append(Row(f"info: {short}, {kind} CPU per request (us)", f"{c_cpu:.2f}", f"{m_cpu:.2f}",
                                f"{m_cpu / c_cpu:.2f}" if c_cpu else "-", "(none)", 0, "info", ()))

        m_state = mishap("mishap-state", state_folder)
        expect(m_state, "GET", COUNTED, 200, b'"userName":"someone"')
        what = "GET /counted, a rule that tests and sets state (req/s)"
        log(f"throughput: {what}")
        c_runs, m_runs = alternate("state", [("C baseline", c_server, SOMEONE), ("mishap", m_state, COUNTED)], SOMEONE, args)
        c, m = median_rps(c_runs), median_rps(m_runs)
        log("  per-round ratios: " + ", ".join(f"{a.requests_per_second / b.requests_per_second:.2f}"
                                               for a, b in zip(m_runs, c_runs)))
        rows.append(Row(what, rps(c), rps(m), f"{m / c:.2f}", ">= 0.60x", m / c, ">=", (0.6,)))
        hits = re.search(rb'"hits":\{"value":(\d+)', http(m_state.port, "GET", "/__mishap/state")[1])
        log(f"  hits counted by the rule: {int(hits.group(1)) if hits else '?'}; answers wrk counted: "
            f"{sum(r.requests for r in m_runs)} (plus the warm-up's, and those in flight when wrk stopped)")
        m_state.stop()

        m_logging = mishap("mishap-request-log", REPO / "scenarios", request_log=True)
        log("throughput: GET someone, with a log line per request")
        logged_runs, plain_runs = alternate("request log", [("request log on", m_logging, None),
                                                            ("request log off", m_default, None)], SOMEONE, args)
        logged, plain = median_rps(logged_runs), median_rps(plain_runs)
        log("  per-round ratios: " + ", ".join(f"{a.requests_per_second / b.requests_per_second:.2f}"
                                               for a, b in zip(logged_runs, plain_runs)))
        rows.append(Row("GET someone, a log line per request (req/s; ref: log off)", rps(plain), rps(logged),
                        f"{logged / plain:.2f}", ">= 0.80x", logged / plain, ">=", (0.8,)))
        m_logging.stop()

        # -- network profiles: what a session without one pays for another session's ---------
        m_network = mishap("mishap-network", REPO / "scenarios")
        status, _, _ = http(m_network.port, "PUT", "/__mishap/network?session=elsewhere", b'{"preset": "edge"}')
        if status != 200:
            raise BenchError(f"PUT /__mishap/network answered {status}")
        log("throughput: GET someone in a session without a network profile, another session on Edge")
        beside_runs, alone_runs = alternate("network", [("another session on Edge", m_network, None),
                                                        ("no profile anywhere", m_default, None)], SOMEONE, args,
                                            headers=("X-Mishap-Session: plain",))
        beside, alone = median_rps(beside_runs), median_rps(alone_runs)
        rows.append(Row("GET in a session, another on Edge (req/s; ref: no profile anywhere)", rps(alone), rps(beside),
                        f"{beside / alone:.2f}", ">= 0.95x", beside / alone, ">=", (0.95,)))
        m_network.stop()

        # -- the dashboard: open (polling as the page does) against closed ----------------------
        log("throughput: GET someone, with the dashboard open (its admin calls every second) and closed")
        open_runs, closed_runs, calls = [], [], 0
        for round_number in range(args.rounds):
            for page_open in ((True, False) if round_number % 2 == 0 else (False, True)):
                poller = DashboardPoller(m_default.port if page_open else None)
                with poller:
                    result = wrk(m_default.url(SOMEONE), args.connections, args.duration, args.threads)
                (open_runs if page_open else closed_runs).append(result)
                calls += poller.calls
                log(f"  dashboard round {round_number + 1}: {'open' if page_open else 'closed':<22} "
                    f"{result.requests_per_second:>10,.0f} req/s")
        opened, closed = median_rps(open_runs), median_rps(closed_runs)
        log(f"  the page's calls meanwhile: {calls}")
        rows.append(Row("GET someone, the dashboard open (req/s; ref: closed)", rps(closed), rps(opened),
                        f"{opened / closed:.2f}", ">= 0.95x", opened / closed, ">=", (0.95,)))

        # -- scaling: 1,000 more rules -------------------------------------------------------
        m_big = mishap("mishap-1000-rules", big)
        expect(m_big, "GET", SOMEONE, 200, b'"userName":"someone"')
        # The last of the 50 `{id}` endpoints against its literal neighbour: the same 10 rules,
        # the same catch-all answering, only the path lookup differs.
        pattern_path = "/generated/e099/42?q=none"
        literal_path = "/generated/e098?q=none"
        expect(m_big, "GET", pattern_path, 200, b'"rule":"catchAll"')
        expect(m_big, "GET", literal_path, 200, b'"rule":"catchAll"')
        log(f"scaling: {added} generated rules on 100 endpoints")
        small_runs, big_runs, literal_runs, pattern_runs = alternate(
            "scaling", [("default scenarios", m_default, SOMEONE), (f"+{added} rules", m_big, SOMEONE),
                        ("+rules, a literal path", m_big, literal_path),
                        ("+rules, last {id} path", m_big, pattern_path)], SOMEONE, args)
        small, large = median_rps(small_runs), median_rps(big_runs)
        literal, pattern = median_rps(literal_runs), median_rps(pattern_runs)
        rows.append(Row(f"GET someone, +{added} rules on 100 endpoints (req/s; ref: default scenarios)",
                        rps(small), rps(large), f"{large / small:.2f}", ">= 0.80x (drop <= 20%)",
                        large / small, ">=", (0.8,)))
        rows.append(Row("last of 50 {id} endpoints (req/s; ref: a literal path, same rules)",
                        rps(literal), rps(pattern), f"{pattern / literal:.2f}", ">= 0.90x",
                        pattern / literal, ">=", (0.9,)))
        m_big.stop()

        # -- latency at -c256 ---------------------------------------------------------------
        log("latency: p99 at -c256")
        c_runs, m_runs = alternate("p99 -c256", [("C baseline", c_server, None), ("mishap", m_default, None)],
                                   SOMEONE, args, latency=True)
        c99 = statistics.median(r.p99_ms for r in c_runs)
        m99 = statistics.median(r.p99_ms for r in m_runs)
        rows.append(Row("p99 latency at -c256 (ms)", f"{c99:.2f}", f"{m99:.2f}", f"{m99 / c99:.2f}",
                        "<= 1.30x", m99 / c99, "<=", (1.3,)))
        used_rss = m_default.rss
        c_server.stop()
        m_default.stop()

        # -- HTTPS: the same certificate and key on both ----------------------------------
        rows += https_rows(args, work, baseline_binary=args.baseline, mishap_binary=args.mishap, cores=cores)

        # -- proxied: Mishap --upstream in front of the C server, against it directly ------
        rows += upstream_rows.proxy_rows(sys.modules[__name__], args, work, cores)

        rows.append(Row("exec to first 200, median of %d (ms)" % args.startups, f"{base_start:.2f}",
                        f"{mishap_start:.2f}", "", "<= 10 ms", mishap_start, "<=", (10.0,)))
        rows.append(Row("exec to first 200, mishap / baseline", f"{base_start:.2f}", f"{mishap_start:.2f}",
                        f"{mishap_start / base_start:.2f}", "<= 2.00x", mishap_start / base_start, "<=", (2.0,)))

        # -- memory under load, fresh processes -------------------------------------------
        log(f"memory: RSS after {rss_seconds} s at -c256 (fresh processes)")
        fresh_c = baseline("baseline-rss")
        c_idle = fresh_c.rss
        wrk(fresh_c.url(SOMEONE), 256, rss_seconds, args.threads)
        c_rss, c_anon = fresh_c.rss, rss_mib(fresh_c.process.pid, "RssAnon")
        fresh_c.stop()
        fresh_m = mishap("mishap-rss", REPO / "scenarios")
        start_rss = fresh_m.rss
        wrk(fresh_m.url(SOMEONE), 256, rss_seconds, args.threads)
        m_rss, m_anon = fresh_m.rss, rss_mib(fresh_m.process.pid, "RssAnon")
        log(f"  baseline {c_idle:.1f} MiB idle, {c_rss:.1f} MiB after {rss_seconds} s; mishap {start_rss:.1f} MiB idle, "
            f"{m_rss:.1f} MiB after {rss_seconds} s ({used_rss:.1f} MiB after all throughput runs)")
        rows.append(Row(f"RSS after {rss_seconds} s at -c256 (MiB)", f"{c_rss:.1f}", f"{m_rss:.1f}",
                        f"{m_rss / c_rss:.2f}", "<= 16 MiB", m_rss, "<=", (16.0,)))
        rows.append(Row("info: of which anonymous, not shared libraries (MiB)", f"{c_anon:.1f}", f"{m_anon:.1f}",
                        f"{m_anon / c_anon:.2f}", "(none)", 0, "info", ()))
        if long_seconds:
            log(f"memory: {long_seconds - rss_seconds} s more of the same load")
            wrk(fresh_m.url(SOMEONE), 256, long_seconds - rss_seconds, args.threads)
            long_rss = fresh_m.rss
            rows.append(Row(f"RSS after {long_seconds} s at -c256 (MiB)", "", f"{long_rss:.1f}",
                            "", "<= 16 MiB", long_rss, "<=", (16.0,)))
            rows.append(Row(f"RSS after {long_seconds} s vs after {rss_seconds} s (MiB; ref: {rss_seconds} s)",
                            f"{m_rss:.1f}", f"{long_rss:.1f}", f"{long_rss / m_rss:.2f}", "0.90x .. 1.10x",
                            long_rss / m_rss, "range", (0.9, 1.1)))
        fresh_m.stop()

        # -- 1,000 delayed requests held ---------------------------------------------------
        log(f"delays: 1,000 concurrent requests held {DELAY_MS} ms")
        m_delay = mishap("mishap-delayed", delayed_folder)
        expect(m_delay, "GET", SOMEONE, 200, b'"userName":"someone"')
        try:
            held = asyncio.run(hold_delayed(m_delay.port, 1000, m_delay.process.pid))
        except (OSError, asyncio.TimeoutError) as error:
            raise BenchError(f"delayed requests: {error!r}")
        m_delay.stop()
        log(f"  {held}")
        if held["answered"] != 1000 or held["held"] != 1000 or not held["probe_ok"]:
            raise BenchError(f"delayed requests: {held['answered']} of 1000 answered, {held['held']} held for "
                             f"{DELAY_MS} ms; undelayed probes all 200: {held['probe_ok']}")
        rows.append(Row("RSS with 1,000 delayed requests held (MiB)", "", f"{held['rss']:.1f}", "",
                        "<= 40 MiB", held["rss"], "<=", (40.0,)))
        rows.append(Row(f"slowest of {held['probes']} undelayed requests meanwhile (ms)", "",
                        f"{held['probe_max_ms']:.1f}", "", "<= 200 ms", held["probe_max_ms"], "<=", (200.0,)))
        # -- 1,000 requests held by a network profile ------------------------------------
        log(f"network: 1,000 concurrent requests of a session held {DELAY_MS} ms by its profile, then sent at 2 kB/s")
        m_shaped = mishap("mishap-network-held", REPO / "scenarios")
        profile = ('{"latency": "%dms", "bandwidth": {"down": "2kB/s"}}' % DELAY_MS).encode()
        status, _, _ = http(m_shaped.port, "PUT", "/__mishap/network?session=held", profile)
        if status != 200:
            raise BenchError(f"PUT /__mishap/network answered {status}")
        try:
            shaped = asyncio.run(hold_delayed(m_shaped.port, 1000, m_shaped.process.pid, SOMEONE, "held"))
        except (OSError, asyncio.TimeoutError) as error:
            raise BenchError(f"requests held by a network profile: {error!r}")
        m_shaped.stop()
        log(f"  {shaped}")
        if shaped["answered"] != 1000 or shaped["held"] != 1000 or not shaped["probe_ok"]:
            raise BenchError(f"requests held by a network profile: {shaped['answered']} of 1000 answered, "
                             f"{shaped['held']} held for {DELAY_MS} ms; probes all 200: {shaped['probe_ok']}")
        rows.append(Row("RSS with 1,000 requests held by a network profile (MiB)", "", f"{shaped['rss']:.1f}", "",
                        "<= 40 MiB", shaped["rss"], "<=", (40.0,)))
        rows.append(Row(f"slowest of {shaped['probes']} requests of other sessions meanwhile (ms)", "",
                        f"{shaped['probe_max_ms']:.1f}", "", "<= 200 ms", shaped["probe_max_ms"], "<=", (200.0,)))
        # -- 200 open streams of Server-Sent Events ---------------------------------------
        log("streams: 200 event streams open at once (an event every 500 ms, heartbeats between)")
        streams_folder = work / "streams"
        streams_folder.mkdir(exist_ok=True)
        (streams_folder / "streams.yaml").write_text(STREAMS_YAML)
        rows += held_stream_rows(mishap("mishap-streams", streams_folder), "event streams", open_event_stream)
        log("streams: 200 WebSockets open at once (a message, then another a second later)")
        rows += held_stream_rows(mishap("mishap-sockets", streams_folder), "WebSockets", open_web_socket)
        # -- a large rule set: load time, memory per rule, RSS across reloads --------------
        rows += rule_set_rows(args)
    except BenchError as error:
        print(f"\nbenchmark error: {error}", file=sys.stderr)
        if rows:
            print_table(rows)
        return 2
    finally:
        Server.stop_all()
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    print()
    print_table(rows)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f} (the machine has {os.cpu_count()} cores; "
          "above that, other work competed with the benchmark)")
    targets = [r for r in rows if r.op != "info" and not r.informational]
    wide = [r for r in targets if r.result == "FAIL!"]
    missed = [r for r in targets if r.result != "PASS"]
    print()
    if args.smoke:
        print(f"smoke run: everything ran; {len(missed)} target(s) not met in this brief run (not asserted).")
        return 0
    print(f"{len(targets) - len(missed)} of {len(targets)} targets met; {len(missed) - len(wide)} missed within "
          f"{WIDE_MARGIN:.0%}, {len(wide)} missed widely (FAIL!).")
    return 1 if wide else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        Server.stop_all()
        sys.exit(130)
