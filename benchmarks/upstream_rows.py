"""The proxied-traffic rows of benchmarks/bench.py: what `--upstream` costs.

wrk against a Mishap started with `--upstream` pointing at the C baseline (benchmarks/baseline.c),
on a path no rule answers, so every request goes through Mishap to the C server and back,
against wrk directly at the same C server, alternated round after round. Reported: throughput
as a ratio (proxied / direct, higher is better) and the p50 and p99 latencies (proxied / direct,
lower is better). Their targets are informational: shown as met or missed, never failing the run.
They were set from the first measurement (2026-11-26, 2 cores shared by wrk, Mishap and the C
server; 3 alternated rounds of wrk -t2 -c32 -d3s): 6,086 against 44,820 req/s (0.14; rounds
0.16, 0.14, 0.12), p50 5.06 against 0.70 ms (7.2x), p99 9.74 against 4.15 ms (2.3x), with room
for this machine's noise, so that they flag a regression rather than state an aim. A proxied
request is two HTTP exchanges, one of them through libcurl's multi interface on one thread of
its own (busy more than half the time at that load), with three processes on two cores.
"""

import statistics
from pathlib import Path

# A path none of the default scenarios answers: passed on to the upstream.
PROXIED = "/v1/orders?status=open"

# The informational targets (see the module's description).
THROUGHPUT_TARGET = 0.12   # proxied req/s >= this much of the C server's, direct
P50_TARGET = 8.0           # proxied p50 <= this many times the direct p50
P99_TARGET = 4.0           # proxied p99 <= this many times the direct p99 (p99 is noisy here)


def proxy_rows(bench, args, work: Path, cores: int) -> list:
    """Measures proxied traffic and returns its table rows. `bench` is benchmarks/bench.py's
    module: its servers, wrk runs and rows are used as they are, so the figures read as the
    other rows' do."""
    c_server = bench.Server("baseline-upstream", [args.baseline, "0"], work)
    front = bench.Server("mishap-proxy", [args.mishap, "serve", "--port", "0", "--scenarios", str(bench.REPO / "scenarios"),
                                          "--threads", str(cores), "--log-level", "warning", "--watch", "off",
                                          "--upstream", f"http://127.0.0.1:{c_server.port}"], work)
    try:
        for server in (c_server, front):
            bench.expect(server, "GET", PROXIED, 200, b'"userName":"someone"')
        # And the rules still answer: Mishap's own answer, not the C server's.
        bench.expect(front, "GET", bench.MAINTENANCE, 500, b"maintenance")

        bench.log(f"proxied: GET {PROXIED} through Mishap --upstream to the C server, against the C server directly")
        direct_runs, proxied_runs = bench.alternate(
            "proxied", [("C baseline, direct", c_server, None), ("mishap --upstream", front, None)], PROXIED, args,
            latency=True, connections=args.connections)
        bench.log("  per-round ratios: " + ", ".join(f"{p.requests_per_second / d.requests_per_second:.2f}"
                                                     for p, d in zip(proxied_runs, direct_runs)))
    finally:
        front.stop()
        c_server.stop()

    direct, proxied = bench.median_rps(direct_runs), bench.median_rps(proxied_runs)
    d50, p50 = (statistics.median(r.p50_ms for r in runs) for runs in (direct_runs, proxied_runs))
    d99, p99 = (statistics.median(r.p99_ms for r in runs) for runs in (direct_runs, proxied_runs))
    bench.log(f"  p50 {d50:.2f} ms direct, {p50:.2f} ms proxied (+{p50 - d50:.2f} ms); "
              f"p99 {d99:.2f} ms direct, {p99:.2f} ms proxied")
    c = args.connections
    return [
        bench.Row("proxied GET, --upstream to the C server (req/s; ref: the C server directly)", bench.rps(direct),
                  bench.rps(proxied), f"{proxied / direct:.2f}", f">= {THROUGHPUT_TARGET:.2f}x", proxied / direct, ">=",
                  (THROUGHPUT_TARGET,), informational=True),
        bench.Row(f"proxied GET, p50 latency at -c{c} (ms; ref: direct)", f"{d50:.2f}", f"{p50:.2f}", f"{p50 / d50:.2f}",
                  f"<= {P50_TARGET:.2f}x", p50 / d50, "<=", (P50_TARGET,), informational=True),
        bench.Row(f"proxied GET, p99 latency at -c{c} (ms; ref: direct)", f"{d99:.2f}", f"{p99:.2f}", f"{p99 / d99:.2f}",
                  f"<= {P99_TARGET:.2f}x", p99 / d99, "<=", (P99_TARGET,), informational=True),
    ]
