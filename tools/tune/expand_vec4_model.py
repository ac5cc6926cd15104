#!/usr/bin/env python3
"""expand_vec4_model.py - a model, in Python, of expand's first-pass index stores 4 slots a thread
(src/cuda/expand.cu: ps_expand_group_owners, ps_expand_indices_vec4, under PS_EXPAND_VEC4): a tile's start bits
and owner list built as consume builds them, then every chunk's groups of 4 slots, offset by the output's
alignment a = 0..3, against each slot's owner found directly. Checks that every slot of the chunk is written once,
with its owner, that nothing outside the chunk is written, and that the full groups' stores are 16-byte aligned.
No GPU: run it after changing those index maps (python3 tools/tune/expand_vec4_model.py).
"""
import random

THREADS, CHUNK_VT, BUDGET = 256, 32, 8
CHUNK = THREADS * CHUNK_VT


def popc(x):
    return bin(x & 0xFFFFFFFF).count("1")


def tile(counts):
    """The tile's words (x: bits, y: 2 x bits before - 2) and nz, and each slot's owner (the reference)."""
    slots = sum(counts)
    words = (BUDGET * len(counts) + 31) // 32
    x = [0] * words
    owner = []
    nz = []
    q = 0
    for i, c in enumerate(counts):
        if c:
            x[q // 32] |= 1 << (q % 32)
            nz.append(i)
        owner += [i] * c
        q += c
    y, before = [], 0
    for w in range(words):
        y.append((2 * before - 2) & 0xFFFFFFFF)
        before += popc(x[w])
    assert len(owner) == slots
    return x, y, nz, owner


def nz_at(nz, byte_offset):
    return nz[byte_offset // 2]


def group_owners(x, y, word0, c0):
    w, sh = word0 + c0 // 32, c0 % 32
    nxt = x[w + 1 if w + 1 < len(x) else w]
    bits = ((nxt << 32 | x[w]) >> sh) & 0xFFFFFFFF  # __funnelshift_r(lo, hi, sh)
    at0 = (y[w] + 2 * popc(x[w] & (0xFFFFFFFF >> (31 - sh)))) & 0xFFFFFFFF
    at1 = at0 + (bits & 2)
    at2 = at1 + (bits >> 1 & 2)
    at3 = at2 + (bits >> 2 & 2)
    return [at0, at1, at2, at3]


def indices_vec4(x, y, nz, word0, first, j0, length, a, out):
    """out: dict slot -> value, slots relative to base = j0 - a (the aligned origin)."""
    stores = []

    def group(g):
        c0 = 4 * g - a
        if c0 >= 0 and c0 + 4 <= length:
            at = group_owners(x, y, word0, c0)
            stores.append(4 * g)
            for i in range(4):
                assert 4 * g + i not in out
                out[4 * g + i] = first + nz_at(nz, at[i])
        else:
            for i in range(4):
                c = c0 + i
                if c < 0 or c >= length:
                    continue
                w = word0 + c // 32
                upto = 0xFFFFFFFF >> (31 - c % 32)
                assert 4 * g + i not in out
                out[4 * g + i] = first + nz_at(nz, (y[w] + 2 * popc(x[w] & upto)) & 0xFFFFFFFF)

    for k in range(CHUNK_VT // 4):
        for t in range(THREADS):
            g = k * THREADS + t
            if 4 * g < length + a:
                group(g)
    if CHUNK < length + a:
        group(CHUNK // 4)
    return stores


def check(counts, first, rng):
    x, y, nz, owner = tile(counts)
    slots = len(owner)
    for chunk, j in enumerate(range(0, slots, CHUNK)):
        length = min(CHUNK, slots - j)
        for a in range(4):
            out = {}
            stores = indices_vec4(x, y, nz, chunk * (CHUNK // 32), first, j, length, a, out)
            assert all(s % 4 == 0 for s in stores)
            got = {s - a: v for s, v in out.items()}  # chunk-local slots
            assert sorted(got) == list(range(length)), (a, length)
            for c in range(length):
                assert got[c] == first + owner[j + c], (a, c)


rng = random.Random(1)
cases = 0
for items in (6144, 2048, 1, 7, 100):
    for maxc in (1, 3, 8, 16):
        counts = [rng.randint(0, maxc) for _ in range(items)]
        while sum(counts) > BUDGET * items:  # a tile that writes its own slots
            counts[rng.randrange(items)] = 0
        check(counts, rng.randrange(1 << 20), rng)
        cases += 1
# one item owning the whole budget, items every 32 slots (groups crossing words), all ones
check([BUDGET * 64] + [0] * 63, 5, rng)
check([32] * 64 + [0] * 192, 0, rng)
check([1] * 6144, 0, rng)
print(f"expand_vec4_model: ok ({cases + 3} tiles, a = 0..3)")
