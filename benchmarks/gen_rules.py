#!/usr/bin/env python3
"""Writes one large scenario file for measuring how Mishap loads many rules.

    python3 benchmarks/gen_rules.py OUT.yaml [--rules 100000] [--big-endpoint 4000]

The file has `--big-endpoint` rules on one endpoint (GET /big, each matching one value of
`q`, the last a catch-all) and the rest spread over many endpoints of 4 simple rules each
(half literal paths, half with an `{id}` segment): a query equality, a list of values, a
prefix, then a catch-all; responses are small JSON bodies, some with a header. About 100 bytes
of YAML per rule: 100,000 rules make about 10 MB. Python 3 standard library only.

Imported by benchmarks/rule_load.py, which measures loading the file.
"""

import argparse
import sys
from pathlib import Path

RULES_PER_ENDPOINT = 4


def simple_endpoint(number: int) -> list:
    """The lines of one endpoint of RULES_PER_ENDPOINT simple rules."""
    path = f"/api/e{number:06d}" + ("" if number % 2 == 0 else "/{id}")
    return [
        f"  - endpoint: GET {path}",
        "    rules:",
        "      - name: one",
        "        when: { query: { q: a } }",
        f"        respond: {{ json: {{ endpoint: {number}, rule: one }} }}",
        "      - name: list",
        "        when: { query: { q: [b, c, d] } }",
        f"        respond: {{ status: 201, headers: {{ X-Rule: list }}, json: {{ endpoint: {number} }} }}",
        "      - name: prefix",
        "        when: { query: { q: { prefix: p- } } }",
        "        respond: { status: 404, text: not here }",
        "      - name: fallback",
        "        respond: { json: { ok: true } }",
    ]


def big_endpoint(rules: int) -> list:
    """The lines of GET /big: `rules` rules, each matching one value of q, the last a catch-all."""
    lines = ["  - endpoint: GET /big", "    rules:"]
    for number in range(rules - 1):
        lines += [f"      - name: v{number}",
                  f"        when: {{ query: {{ q: v{number} }} }}",
                  f"        respond: {{ json: {{ value: {number} }} }}"]
    lines += ["      - name: fallback", "        respond: { json: { value: none } }"]
    return lines


def write_rules(destination: Path, rules: int = 100_000, big: int = 4_000) -> dict:
    """Writes the file; returns its figures: rules, endpoints, bytes."""
    big = max(1, min(big, rules))
    simple = (rules - big) // RULES_PER_ENDPOINT
    lines = ["endpoints:"]
    for number in range(simple):
        lines += simple_endpoint(number)
    # Whatever does not divide into simple endpoints goes to the big one.
    lines += big_endpoint(rules - simple * RULES_PER_ENDPOINT)
    text = "\n".join(lines) + "\n"
    destination.write_text(text)
    return {"rules": rules, "endpoints": simple + 1, "bytes": len(text.encode())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="the scenario file to write (its folder must exist)")
    parser.add_argument("--rules", type=int, default=100_000, help="rules in all (default 100,000)")
    parser.add_argument("--big-endpoint", type=int, default=4_000, help="rules of GET /big (default 4,000)")
    args = parser.parse_args()
    figures = write_rules(args.output, args.rules, args.big_endpoint)
    print(f"{args.output}: {figures['rules']:,} rules on {figures['endpoints']:,} endpoints, "
          f"{figures['bytes'] / 1e6:.1f} MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
