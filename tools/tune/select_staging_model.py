#!/usr/bin/env python3
"""select_staging_model.py - a model of the index math of src/cuda/select.cu's vector form (vec_place,
vec_stage_items, vec_out, vec_values_wide): for random tiles of every key width x payload width, select and
partition, it stages each item at its slot (passes of chunk indices where the payloads pass the 32 KiB staging),
writes the runs out as the 16-byte blocks and partial edges of vec_out, and checks that no slot collides, no slot
lies past the staging plus SLACK bytes, and the output equals the reference. Not part of the build or the tests: a
check for whoever changes the staging (it models the code; it does not run it).

    python3 tools/tune/select_staging_model.py 48   # the staging's slack in bytes (select.cu: 48)

The thirty-sixth session's run found that 32 bytes of slack let a 64-row i16 or 32-row i32 partition tile stage
up to 10 bytes past the buffer (three alignment gaps of up to 15 bytes each); 48 passes."""
import random
import sys

THREADS, STAGE = 256, 32768  # select.cu: PS_SELECT_THREADS, PS_SELECT_STAGE_BYTES
SLACK = int(sys.argv[1]) if len(sys.argv) > 1 else 48


def run(K, V, ROWS, partition, rng):
    """One full tile of ROWS rows of K-byte keys with V-byte items moved (V == K: the keys or same-width payloads)."""
    TILE = ROWS * THREADS
    VI = 16 // K                      # VEC_ITEMS: items a 16-byte vector of keys
    CH = TILE // VI // THREADS        # VEC_CHUNKS
    ROW = THREADS * VI                # the items of one chunk index across the block
    FIT = STAGE // (ROW * V)
    G = 1 if FIT < 1 else min(FIT, CH)  # chunk indices a pass
    assert ROW * V <= STAGE and CH % G == 0
    SUB = VI if VI * V < 16 else 16 // V  # items a load
    ratio = rng.choice([0.0, 0.01, 0.5, 0.99, 1.0]) if rng.random() < 0.3 else 0.5
    keep = [rng.random() < ratio for _ in range(TILE)]
    words = [sum(1 << j for j in range(32) if keep[32 * w + j]) for w in range(TILE // 32)]  # the ballot words
    offs, acc = [], 0                 # s.offsets: kept items before each word
    for w in words:
        offs.append(acc)
        acc += bin(w).count("1")
    kept = acc
    payload = [rng.getrandbits(8 * V) for _ in range(TILE)]
    prefix = rng.randrange(0, 1 << 20)
    rejected_at = rng.randrange(0, 1 << 20) + prefix + kept if partition else 0
    base_addr = rng.randrange(0, 1 << 16) * V  # the output: aligned to its item only
    mem = {}

    def addr(i):
        return base_addr + i * V

    for g0 in range(0, CH, G):
        o0, o1 = g0 * ROW, (g0 + G) * ROW
        k0 = offs[o0 // 32]
        k1 = offs[o1 // 32] if o1 < TILE else kept
        j0, j1 = o0 - k0, o1 - k1
        per = 16 // V                 # vec_place
        kept_at, rest_at = addr(prefix + k0), addr(rejected_at + j0)
        a = (kept_at & 15) // V
        r = (a + (k1 - k0) + per - 1) // per * per + (rest_at & 15) // V if partition else 0
        staged = {}
        for t in range(THREADS):      # vec_stage_items, a load of SUB items at a time
            for c in range(g0, g0 + G):
                for b in range(VI // SUB):
                    o = (c * THREADS + t) * VI + b * SUB
                    word = o // 32
                    mask = words[word]
                    bits = (mask >> (o % 32)) & ((1 << SUB) - 1)
                    before = offs[word] + bin(mask & ((1 << (o % 32)) - 1)).count("1")
                    rank, other = before - k0, o - before - j0
                    for j in range(SUB):
                        if (bits >> j) & 1:
                            slot, rank = a + rank, rank + 1
                        elif partition:
                            slot, other = r + other, other + 1
                        else:
                            continue
                        assert slot not in staged, ("collision", slot, K, V, ROWS)
                        assert (slot + 1) * V <= STAGE + SLACK, ("overflow", slot, K, V, ROWS)
                        staged[slot] = payload[o + j]

        def vec_out(first, count, at):
            lo_b, end = first * V, first * V + count * V
            base = at - lo_b
            assert base % 16 == 0
            for blk in range(lo_b // 16, (end + 15) // 16):
                lo, hi = max(16 * blk, lo_b), min(16 * blk + 16, end)
                for byte in range(lo, hi):
                    slot, sub = divmod(byte, V)
                    assert slot in staged, ("unstaged", slot)
                    mem[base + byte] = (staged[slot] >> (8 * sub)) & 255

        vec_out(a, k1 - k0, kept_at)
        if partition:
            vec_out(r, j1 - j0, rest_at)
    want = {}
    groups = [(prefix, [payload[i] for i in range(TILE) if keep[i]])]
    if partition:
        groups.append((rejected_at, [payload[i] for i in range(TILE) if not keep[i]]))
    for start, items in groups:
        for i, x in enumerate(items):
            for sub in range(V):
                want[addr(start + i) + sub] = (x >> (8 * sub)) & 255
    assert mem == want, ("output differs", K, V, ROWS, partition)


rng = random.Random(1)
count = 0
for K, ROWS in [(1, 64), (1, 128), (1, 32), (2, 64), (2, 32), (4, 32), (4, 16)]:
    for V in [1, 2, 4, 8]:
        for partition in [0, 1]:
            for _ in range(2):
                run(K, V, ROWS, partition, rng)
                count += 1
print("ok", count, "tiles, slack", SLACK)
