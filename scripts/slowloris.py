#!/usr/bin/env python3
"""A slowloris flood against a release `mishap serve`, and what normal clients see meanwhile.

Started by scripts/slowloris.sh (`make slowloris`), which builds the server first; python3
standard library only.

The server runs with a small --connection-limit (200 by default) and its --head-timeout
(10 s by default; --head-timeout 0 shows the server without it). The flood opens more
connections than the limit (220), each sending a request line and then one header line every
few seconds (5), never ending its head; a connection the server closes is opened again at once,
as an attacker would. While the flood runs, a normal client sends a request on a new connection
every half second and measures how long its answer takes.

Printed: the normal requests' latency before and during the flood (median, 90th percentile,
max, and how many got no answer within --probe-timeout), how many flood connections the server
closed, the server's open descriptors during the flood (about the connection limit when it is
full), and the server's log lines about closing them.

Exit status: 0 when every normal request during the flood was answered within --max-latency
(the head timeout plus 5 s by default), 1 when one was not (expected with --head-timeout 0),
2 when the run itself could not be made.
"""

import argparse
import re
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PATH = "/isUserNameAvailable?userName=abc"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Server:
    """`mishap serve` on a free port, its log in a file."""

    def __init__(self, binary: str, args: argparse.Namespace, log_path: Path):
        self.log_path = log_path
        argv = [binary, "serve", "--scenarios", str(REPO / "scenarios"), "--port", "0",
                "--threads", str(args.threads), "--connection-limit", str(args.connection_limit),
                "--head-timeout", str(args.head_timeout), "--log-level", "debug"]
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=open(log_path, "wb"), bufsize=0)
        line = self.process.stdout.readline().decode(errors="replace")
        match = re.search(r"listening on http://[^\s:]+:(\d+)\s*$", line)
        if not match:
            self.process.kill()
            raise SystemExit(f"slowloris: the server did not start ({line!r}):\n{log_path.read_text(errors='replace')[-2000:]}")
        self.port = int(match.group(1))
        threading.Thread(target=lambda: [None for _ in iter(lambda: self.process.stdout.read(4096), b"")],
                         daemon=True).start()

    def descriptors(self) -> int:
        try:
            return len(list(Path(f"/proc/{self.process.pid}/fd").iterdir()))
        except OSError:
            return -1

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return -9


class Flood:
    """`count` connections each trickling a header line every `interval` seconds, on a thread."""

    def __init__(self, port: int, count: int, interval: float):
        self.port, self.count, self.interval = port, count, interval
        self.closed_by_server = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join()

    def _open(self, selector: selectors.BaseSelector, due: dict, now: float) -> None:
        try:
            connection = socket.create_connection(("127.0.0.1", self.port), timeout=2)
            connection.setblocking(False)
            connection.send(f"GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode())
        except OSError:
            return
        selector.register(connection, selectors.EVENT_READ)
        # Spread the trickles over the interval.
        due[connection] = now + self.interval * (len(due) % 10 + 1) / 10

    def _close(self, selector: selectors.BaseSelector, due: dict, connection: socket.socket) -> None:
        selector.unregister(connection)
        del due[connection]
        connection.close()
        self.closed_by_server += 1

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        due: dict = {}
        line = 0
        while not self.stopping.is_set():
            now = time.monotonic()
            while len(due) < self.count and not self.stopping.is_set():
                self._open(selector, due, now)
                if len(due) < self.count and time.monotonic() - now > 1:
                    break
            for key, _ in selector.select(timeout=0.05):
                try:
                    data = key.fileobj.recv(4096)
                except OSError:
                    data = b""
                # The head never ends: anything read is the server's close (or its answer to it).
                self._close(selector, due, key.fileobj)
            now = time.monotonic()
            for connection, at in list(due.items()):
                if at > now:
                    continue
                line += 1
                try:
                    connection.send(f"X-Trickle-{line}: a\r\n".encode())
                    due[connection] = now + self.interval
                except OSError:
                    self._close(selector, due, connection)
        for connection in list(due):
            connection.close()


def request(port: int, timeout: float) -> float | None:
    """One GET on a new connection; seconds until the whole answer, or None without one."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
            connection.settimeout(max(0.1, timeout - (time.monotonic() - started)))
            connection.sendall(f"GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            received = b""
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    break
                received += chunk
    except OSError:
        return None
    return time.monotonic() - started if received.startswith(b"HTTP/1.1 ") else None


def describe(latencies: list, failures: int) -> str:
    if not latencies:
        return f"none answered, {failures} without an answer"
    ordered = sorted(latencies)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return (f"{len(latencies)} answered, median {statistics.median(ordered) * 1000:.1f} ms, "
            f"p90 {p90 * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms; {failures} without an answer")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mishap", required=True, help="the mishap binary")
    parser.add_argument("--seconds", type=float, default=60, help="how long the flood runs (60)")
    parser.add_argument("--connection-limit", type=int, default=200, help="the server's --connection-limit (200)")
    parser.add_argument("--head-timeout", type=int, default=10, help="the server's --head-timeout (10; 0 turns it off)")
    parser.add_argument("--threads", type=int, default=2, help="the server's --threads (2)")
    parser.add_argument("--flood", type=int, default=None, help="trickling connections (the limit plus 10%%)")
    parser.add_argument("--interval", type=float, default=5, help="seconds between a flood connection's header lines (5)")
    parser.add_argument("--probe-every", type=float, default=0.5, help="seconds between normal requests (0.5)")
    parser.add_argument("--probe-timeout", type=float, default=20, help="how long a normal request waits (20 s)")
    parser.add_argument("--max-latency", type=float, default=None, help="the slowest acceptable answer (head timeout + 5 s)")
    args = parser.parse_args()
    flood_count = args.flood or args.connection_limit + max(1, args.connection_limit // 10)
    max_latency = args.max_latency or (args.head_timeout or 10) + 5

    with tempfile.TemporaryDirectory(prefix="mishap-slowloris-") as folder:
        server = Server(args.mishap, args, Path(folder) / "server.log")
        log(f"slowloris: mishap serve --connection-limit {args.connection_limit} --head-timeout {args.head_timeout} "
            f"--threads {args.threads}; {flood_count} trickling connections, a header line every {args.interval:g} s each")
        before = [request(server.port, args.probe_timeout) for _ in range(20)]
        log(f"  before the flood: {describe([b for b in before if b is not None], before.count(None))}")

        flood = Flood(server.port, flood_count, args.interval)
        flood.start()
        time.sleep(2)  # the flood fills the limit
        latencies, failures, descriptors = [], 0, []
        lock = threading.Lock()

        def probe() -> None:
            nonlocal failures
            took = request(server.port, args.probe_timeout)
            with lock:
                if took is None:
                    failures += 1
                else:
                    latencies.append(took)

        probes = []
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            thread = threading.Thread(target=probe, daemon=True)
            thread.start()
            probes.append(thread)
            descriptors.append(server.descriptors())
            time.sleep(args.probe_every)
        for thread in probes:
            thread.join()
        flood.stop()

        slow = sum(1 for took in latencies if took > max_latency)
        log(f"  during the flood ({args.seconds:g} s): {describe(latencies, failures)}")
        log(f"  answered later than {max_latency:g} s: {slow}")
        log(f"  flood connections the server closed (each reopened at once): {flood.closed_by_server}")
        log(f"  server descriptors during the flood: median {statistics.median(descriptors):g}, max {max(descriptors)}")
        after = request(server.port, args.probe_timeout)
        log(f"  after the flood: {'answered in %.1f ms' % (after * 1000) if after is not None else 'no answer'}")
        status = server.stop()
        lines = [line for line in server.log_path.read_text(errors="replace").splitlines()
                 if "request head" in line]
        log(f"  server log ({len(lines)} lines about slow heads):")
        for line in lines[:6]:
            log(f"    {line}")
        ok = failures == 0 and slow == 0 and after is not None and status == 0
        log(f"slowloris: {'every normal request was answered' if ok else 'FAILED: normal requests went unanswered or late'}"
            f" (server exit status {status})")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
