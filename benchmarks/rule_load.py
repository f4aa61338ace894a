#!/usr/bin/env python3
"""How Mishap loads a large rule set: time and memory of `validate`, of `serve` up to its first
200, and of repeated reloads.

    python3 benchmarks/rule_load.py --mishap .build/release/mishap [--rules 100000] [--reloads 10]

A file of `--rules` simple rules (benchmarks/gen_rules.py: about 100 bytes of YAML each) is
written to a temporary folder, then:

  validate   `mishap validate FOLDER`: wall time and peak RSS (/usr/bin/time -v's maximum
             resident set size, or getrusage's when /usr/bin/time is missing)
  serve      `mishap serve` from exec to the first 200 on one of the generated endpoints: wall
             time, and the peak RSS (VmHWM) at that moment
  per rule   (serve's peak RSS - the same server's peak RSS on an empty endpoint list) / rules
  reloads    POST /__mishap/reload, `--reloads` times in a row: VmRSS after the first and the last

Figures are printed one per line as `name: value` (and returned by `measure` for bench.py). The
machine is shared: compare figures of one run. Python 3 standard library only.
"""

import argparse
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_rules import write_rules  # noqa: E402

PROBE = "/api/e000000?q=a"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for pid {pid}")


def request(port: int, method: str, path: str, timeout: float = 120.0) -> int:
    """One request on a fresh connection; the status, or 0 when nothing answered."""
    data = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(data.encode())
            head = b""
            while b"\r\n" not in head and (chunk := s.recv(4096)):
                head += chunk
    except OSError:
        return 0
    parts = head.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def validate(mishap: str, folder: Path) -> tuple:
    """(seconds, peak RSS in KiB) of `mishap validate folder`."""
    time_tool = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    started = time.perf_counter()
    if time_tool:
        done = subprocess.run([time_tool, "-v", mishap, "validate", str(folder)], capture_output=True, text=True)
        seconds = time.perf_counter() - started
        peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
        if done.returncode != 0 or not peak:
            raise RuntimeError(f"mishap validate failed:\n{done.stdout}{done.stderr[-2000:]}")
        return seconds, int(peak.group(1))
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run([mishap, "validate", str(folder)], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"mishap validate failed:\n{done.stdout}{done.stderr[-2000:]}")
    return seconds, max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def serve(mishap: str, folder: Path, probe: str, reloads: int = 0, log: Path = None) -> dict:
    """Starts `mishap serve` on `folder`: seconds to the first 200 on `probe`, VmHWM then, and
    VmRSS after the first and the last of `reloads` reloads (KiB)."""
    port = free_port()
    argv = [mishap, "serve", "--port", str(port), "--scenarios", str(folder), "--threads", "2",
            "--watch", "off", "--log-level", "info"]
    stderr = open(log, "ab") if log else subprocess.DEVNULL
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr)
    figures = {}
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"mishap serve exited with status {process.returncode}")
            if time.perf_counter() - started > 300:
                raise RuntimeError("mishap serve gave no 200 within 300 s")
            if request(port, "GET", probe, timeout=300) == 200:
                break
            time.sleep(0.002)
        figures["serve_seconds"] = time.perf_counter() - started
        figures["serve_peak_kib"] = status_kib(process.pid, "VmHWM")
        figures["serve_rss_kib"] = status_kib(process.pid, "VmRSS")
        for number in range(reloads):
            status = request(port, "POST", "/__mishap/reload", timeout=300)
            if status != 200:
                raise RuntimeError(f"reload {number + 1} answered {status}")
            if number == 0:
                figures["rss_after_first_reload_kib"] = status_kib(process.pid, "VmRSS")
        if reloads:
            figures["rss_after_last_reload_kib"] = status_kib(process.pid, "VmRSS")
            figures["peak_after_reloads_kib"] = status_kib(process.pid, "VmHWM")
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log:
            stderr.close()
    return figures


def measure(mishap: str, rules: int = 100_000, reloads: int = 10, work: Path = None, log: Path = None) -> dict:
    """Every figure of this script for a file of `rules` rules, as a dict."""
    own = work is None
    work = work or Path(tempfile.mkdtemp(prefix="mishap-rules-"))
    try:
        folder = work / "rules"
        folder.mkdir(exist_ok=True)
        written = write_rules(folder / "rules.yaml", rules, big=max(1, rules // 25))
        empty = work / "empty"
        empty.mkdir(exist_ok=True)
        (empty / "one.yaml").write_text("endpoint: GET /api/e000000\nrules:\n  - name: one\n    respond: { text: ok }\n")
        figures = {"rules": rules, "yaml_bytes": written["bytes"]}
        figures["validate_seconds"], figures["validate_peak_kib"] = validate(mishap, folder)
        reference = serve(mishap, empty, PROBE)
        figures["empty_peak_kib"] = reference["serve_peak_kib"]
        figures.update(serve(mishap, folder, PROBE, reloads, log))
        figures["bytes_per_rule"] = (figures["serve_peak_kib"] - figures["empty_peak_kib"]) * 1024 / rules
        return figures
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


def describe(figures: dict, reloads: int) -> list:
    """The figures as lines of text."""
    mib = lambda kib: f"{kib / 1024:.1f} MiB"  # noqa: E731
    lines = [
        f"rule set: {figures['rules']:,} rules, {figures['yaml_bytes'] / 1e6:.1f} MB of YAML",
        f"validate: {figures['validate_seconds']:.2f} s, peak RSS {mib(figures['validate_peak_kib'])}",
        f"serve to first 200: {figures['serve_seconds']:.2f} s, peak RSS {mib(figures['serve_peak_kib'])} "
        f"(RSS then {mib(figures['serve_rss_kib'])}; one rule: peak {mib(figures['empty_peak_kib'])})",
        f"memory per rule: {figures['bytes_per_rule']:,.0f} bytes (peak RSS over one rule's, / rules)",
    ]
    if reloads:
        lines.append(f"after {reloads} reloads: RSS {mib(figures['rss_after_first_reload_kib'])} after the first, "
                     f"{mib(figures['rss_after_last_reload_kib'])} after the last, "
                     f"peak {mib(figures['peak_after_reloads_kib'])}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mishap", required=True, help="the mishap binary (a release build)")
    parser.add_argument("--rules", type=int, default=100_000, help="rules in the generated file (default 100,000)")
    parser.add_argument("--reloads", type=int, default=10, help="reloads in a row (default 10)")
    parser.add_argument("--log", type=Path, help="append the server's log to this file")
    args = parser.parse_args()
    figures = measure(args.mishap, args.rules, args.reloads, log=args.log)
    print("\n".join(describe(figures, args.reloads)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
