#!/usr/bin/env python3
"""userop_blocked_model.py - a model, in Python, of one tile of ps_scan_program with BLOCKED
(src/cuda/5_decoupled_lookback.cu: reduce_blocked, tile_aggregate, consume_blocked), with string concatenation as
the (non-commutative) operator: the striped loads into the swizzled slots, each thread's serial scan of its
VECS consecutive vectors, the warp scan of thread totals, the warp totals, and the striped stores, against a
serial scan of the tile; forward and reverse, inclusive and exclusive, full and partial tiles. It also checks
that the swizzle is a permutation and conflict-free (16-byte accesses, 8 lanes a phase) both ways. No GPU:
run it after changing the BLOCKED index maps (python3 tools/tune/userop_blocked_model.py).
"""
import itertools

L, WARPS = 32, 8


def swizzle(VECS, j):
    if VECS % 2:  # an odd stride already spreads 8 lanes over 8 bank groups
        return j
    d = VECS if VECS >= 8 else 8
    return j ^ ((j // d) & 7)


def check_swizzle(VECS):
    n = VECS * 32
    sw = [swizzle(VECS, j) for j in range(n)]
    assert sorted(sw) == list(range(n)), VECS
    for pattern in (lambda l, k: 32 * k + l, lambda l, k: VECS * l + k):
        for k in range(VECS):
            for phase in range(4):
                groups = [sw[pattern(l, k)] % 8 for l in range(8 * phase, 8 * phase + 8)]
                assert len(set(groups)) == 8, (VECS, k, phase)


def run(VEC, VECS, rev, exc, valid, prefix):
    TILE_VECS = VECS * 256; TILE = VEC * TILE_VECS
    data = [f"<{i}>" for i in range(TILE)]  # physical elements of the tile
    smem = [None] * TILE_VECS
    def slot(w, j):
        return w * VECS * L + swizzle(VECS, j)
    def vector_of(w, l, k):
        fv = (w * VECS + k) * L + l
        return TILE_VECS - 1 - fv if rev else fv
    e = ""
    for w, l, k in itertools.product(range(WARPS), range(L), range(VECS)):
        pv = vector_of(w, l, k)
        smem[slot(w, k * L + l)] = [data[pv * VEC + i] if pv * VEC + i < valid else e for i in range(VEC)]
    acc = {}; before = {}; warp_total = {}
    for w in range(WARPS):
        incl = []
        for l in range(L):
            a = None
            for k in range(VECS):
                x = list(smem[slot(w, l * VECS + k)])
                for i in range(VEC):
                    q = VEC - 1 - i if rev else i
                    a = x[q] if (k == 0 and i == 0) else a + x[q]
                    x[q] = a
                smem[slot(w, l * VECS + k)] = x
            incl.append(a)
        run_ = ""
        for l in range(L):
            before[(w, l)] = run_
            run_ = run_ + incl[l]
        warp_total[w] = run_
    out = [None] * TILE
    agg = ""; wp = {}
    for w in range(WARPS):
        wp[w] = agg; agg = agg + warp_total[w]
    for w in range(WARPS):
        for l in range(L):
            base = prefix + (wp[w] + before[(w, l)]); last = base
            for k in range(VECS):
                x = list(smem[slot(w, l * VECS + k)])
                for i in range(VEC):
                    q = VEC - 1 - i if rev else i
                    inc = base + x[q]
                    x[q] = last if exc else inc
                    last = inc
                smem[slot(w, l * VECS + k)] = x
        for l in range(L):
            for k in range(VECS):
                y = smem[slot(w, k * L + l)]
                pv = vector_of(w, l, k)
                for i in range(VEC):
                    o = pv * VEC + i
                    if o < valid: out[o] = y[i]
    # reference: logical order = physical order (forward) or reversed (reverse), over valid elements
    order = list(range(valid))[::-1] if rev else list(range(valid))
    ref = [None] * TILE; a = prefix
    for o in order:
        if exc: ref[o] = a
        a = a + data[o]
        if not exc: ref[o] = a
    assert out[:valid] == ref[:valid], (VEC, VECS, rev, exc, valid)
    assert agg == "".join(data[o] for o in order), "aggregate"
for VECS in [v for v in range(1, 20) if v % 2 or v in (2, 4) or v >= 8]:
    check_swizzle(VECS)
for VEC, VECS in [(1, 8), (2, 8), (1, 4), (4, 2), (16, 8), (1, 13), (2, 11), (2, 9)]:
    T = VEC * VECS * 256
    for rev, exc in itertools.product([0, 1], [0, 1]):
        for valid in [T, T - 1, 1, T // 3 + 5]:
            run(VEC, VECS, rev, exc, valid, "P")
print("userop_blocked_model: ok")
