#!/usr/bin/env python3
"""trace_summary.py - reads the per-tile traces that tune_scan writes in a -DPS_CHAIN_TRACE=1 build
(tune_scan --types trace --trace-dir DIR: one CSV a variant and size) and prints what a tile's time is made of.

    python3 tools/tune/trace_summary.py DIR/trace-i32-v13.b4.e2.async-28.csv [...] [--window 64]

Per file: medians of a tile's load (start to aggregate), wait (aggregate to prefix) and finish (prefix to done);
what arrived last in its look-back (the base I(k - W) alone, a tie with the last aggregate, an aggregate alone, or
nothing to wait for); the share of tiles that found an aggregate of their window unpublished after their load; the
wait split into the gate (until every earlier tile's aggregate is out: the loads' spread) and the hand-off (from
then until the prefix is known: what the chain's messages cost); the poll round (wait / rounds); the chain's step, prefixed(k) - prefixed(k - W); and the lag (start to prefix) by
stretch of tiles, which tells a start-up effect (the first wave) from the steady state. Times are %globaltimer
nanoseconds from the call's first block (32 ns steps on an H200). W is the look-back window (32 x
PS_CHAIN_LANE_ENTRIES; 64 unless the build changed it). docs/performance.md (sixteenth session) reads these.
"""
import csv
import sys


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if v else 0


def quantile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * q))] if v else 0


def summarize(path, window):
    with open(path, newline="") as f:
        rows = sorted(({k: int(v) for k, v in r.items()} for r in csv.DictReader(f)), key=lambda r: r["tile"])
    n = len(rows)
    if n < 2:
        print(f"{path}: {n} tiles, nothing to summarize")
        return
    us = 1e-3
    load = [r["loaded"] - r["start"] for r in rows]
    wait = [r["prefixed"] - r["loaded"] for r in rows]
    fin = [r["done"] - r["prefixed"] for r in rows]
    last = {"base alone": 0, "tie": 0, "aggregate alone": 0, "none": 0}
    late_aggregate = 0
    for r in rows[1:]:
        late_aggregate += r["aggregate_round"] > 0
        if r["rounds"] <= 1:
            last["none"] += 1
        elif r["base_round"] > r["aggregate_round"]:
            last["base alone"] += 1
        elif r["base_round"] == r["aggregate_round"]:
            last["tie"] += 1
        else:
            last["aggregate alone"] += 1
    rounds = [(r["prefixed"] - r["loaded"]) / r["rounds"] for r in rows[1:] if r["rounds"] > 1]
    step = [rows[k]["prefixed"] - rows[k - window]["prefixed"] for k in range(window, n)]
    span = max(r["done"] for r in rows) - min(r["start"] for r in rows)
    print(f"{path}: {n} tiles, span {span * us:.1f} us")
    print(f"  median load {median(load) * us:.2f} us (p90 {quantile(load, 0.9) * us:.2f}), wait "
          f"{median(wait) * us:.2f} (p90 {quantile(wait, 0.9) * us:.2f}), finish {median(fin) * us:.2f}")
    shares = ", ".join(f"{k} {100.0 * v / (n - 1):.1f}%" for k, v in last.items())
    print(f"  last arrival: {shares}; an aggregate unpublished after the load: {100.0 * late_aggregate / (n - 1):.1f}%")
    print(f"  poll round {median(rounds):.0f} ns; chain step over W = {window}: {median(step) * us:.2f} us "
          f"(p10 {quantile(step, 0.1) * us:.2f}, p90 {quantile(step, 0.9) * us:.2f})")
    # What the wait is made of: the gate (until every earlier tile has its aggregate: the loads' spread) and the
    # hand-off (from then until this tile has its prefix: what the chain's messages cost, whatever the driver).
    gate, handoff, ready = [], [], rows[0]["loaded"]
    for r in rows[1:]:
        gate.append(max(0, ready - r["loaded"]))
        handoff.append(r["prefixed"] - max(ready, r["loaded"]))
        ready = max(ready, r["loaded"])
    print(f"  wait = gate {median(gate) * us:.2f} us (every earlier aggregate out; p90 {quantile(gate, 0.9) * us:.2f}) "
          f"+ hand-off {median(handoff) * us:.2f} (then to the prefix; p90 {quantile(handoff, 0.9) * us:.2f})")
    edges = sorted({0, min(n, 528), min(n, 2112), n // 2, max(0, n - 200), n})
    parts = []
    for a, b in zip(edges, edges[1:]):
        if b > a:
            seg = rows[a:b]
            parts.append(f"{a}-{b}: {median([r['prefixed'] - r['start'] for r in seg]) * us:.1f}")
    print("  lag (start to prefix) by tiles, us: " + "; ".join(parts))


def main(argv):
    window = 64
    paths = []
    i = 0
    while i < len(argv):
        if argv[i] == "--window" and i + 1 < len(argv):
            window = int(argv[i + 1])
            i += 2
            continue
        paths.append(argv[i])
        i += 1
    if not paths:
        print(__doc__.strip())
        return 2
    for p in paths:
        summarize(p, window)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
