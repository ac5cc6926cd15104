#!/usr/bin/env python3
"""propagated_model.py - checks the propagator of src/cuda/chain/propagated.cuh on a host model before device
time is spent on it: the same loop (E batches of 32 lanes a round, the contiguous run of published aggregates
from a batch's start, the warp's inclusive Kogge-Stone scan, the carry moved on by a complete batch), with the
aggregates published at random times.

For each case it checks that every tile 0 .. tiles - 2 gets its inclusive prefix exactly once, that the loop ends,
and that each prefix is the same expression whatever the order the aggregates arrived in: the combine here builds
the expression as text, "(a+b)", so a different tree or order shows as a different string (what would change a
float sum's bits), and an integer check confirms the values. Run it after changing the propagator.

    python3 tools/tune/propagated_model.py [--cases 300] [--seed 1]
"""
import random
import sys

LANES = 32


def kogge_stone(values, combine):
    """ps_warp_inclusive: lane l combines with lane l - d for d = 1, 2, 4, ... (earlier operand first)."""
    x = list(values)
    d = 1
    while d < LANES:
        y = [x[l - d] if l >= d else x[l] for l in range(LANES)]  # shfl_up returns the lane's own below d
        x = [combine(y[l], x[l]) if l >= d else x[l] for l in range(LANES)]
        d <<= 1
    return x


def propagate(tiles, batches, arrival, combine, identity, initial):
    """The propagator's loop over rounds; arrival[t] is the round from which tile t's aggregate is readable.
    Returns {tile: inclusive prefix} and the rounds it took."""
    last = tiles - 2
    carry = initial
    base = 0
    published = 0
    v = [[identity] * LANES for _ in range(batches)]
    have = [[False] * LANES for _ in range(batches)]
    out = {}
    rnd = 0
    while base <= last:
        for e in range(batches):
            for lane in range(LANES):
                t = base + LANES * e + lane
                if not have[e][lane]:
                    if t > last:
                        v[e][lane], have[e][lane] = identity, True
                    elif arrival[t] <= rnd:
                        v[e][lane], have[e][lane] = ("A%d" % t, t), True
        for _ in range(batches):
            run = LANES
            for lane in range(LANES):
                if not have[0][lane]:
                    run = lane
                    break
            scanned = kogge_stone(v[0], combine)
            inclusive = [combine(carry, s) for s in scanned]
            for lane in range(LANES):
                if published <= lane < run and base + lane <= last:
                    t = base + lane
                    if t in out:
                        raise AssertionError("tile %d published twice" % t)
                    out[t] = inclusive[lane]
            published = max(published, run)
            if run < LANES:
                break
            carry = inclusive[LANES - 1]
            base += LANES
            published = 0
            v = v[1:] + [[identity] * LANES]
            have = have[1:] + [[False] * LANES]
            if base > last:
                break
        rnd += 1
        if rnd > 100000:
            raise AssertionError("the loop does not end")
    return out, rnd


def main(argv):
    cases, seed = 300, 1
    for i in range(0, len(argv) - 1, 2):
        if argv[i] == "--cases":
            cases = int(argv[i + 1])
        if argv[i] == "--seed":
            seed = int(argv[i + 1])
    rng = random.Random(seed)
    ident = ("I", None)

    def combine(a, b):  # expression text and integer value of a (+) b; the identity leaves the other operand
        if a is ident:
            return b
        if b is ident:
            return a
        return ("(%s+%s)" % (a[0], b[0]), None if a[1] is None or b[1] is None else a[1] + b[1])

    checked = 0
    for case in range(cases):
        tiles = rng.choice([1, 2, 3, 31, 32, 33, 63, 64, 65, 95, 96, 97, 127, 128, 129, 200, 257, 1000, 4097])
        batches = rng.choice([1, 2, 4, 8])
        init = ("init", 0)
        exprs = None
        for trial in range(3):  # three arrival orders: the expressions must match
            spread = rng.choice([0, 1, 5, 50])
            arrival = [rng.randint(0, spread) for _ in range(tiles)]
            out, _ = propagate(tiles, batches, arrival, combine, ident, init)
            want = set(range(max(0, tiles - 1)))
            if set(out) != want:
                raise AssertionError("case %d: tiles %d, E %d: published %s, expected 0..%d" %
                                     (case, tiles, batches, sorted(set(out) ^ want)[:5], tiles - 2))
            for t, (text, value) in out.items():
                if value != sum(range(t + 1)):
                    raise AssertionError("case %d: I(%d) = %s, not the sum of tiles 0..%d" % (case, t, value, t))
            texts = {t: e[0] for t, e in out.items()}
            if exprs is None:
                exprs = texts
            elif texts != exprs:
                bad = [t for t in texts if texts[t] != exprs[t]][:3]
                raise AssertionError("case %d: tiles %d, E %d: the expression of I(%s) changed with the order" %
                                     (case, tiles, batches, bad))
            checked += 1
    print("propagated_model: %d runs of %d cases: every tile's prefix once, exact, the same expression in every "
          "arrival order" % (checked, cases))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
