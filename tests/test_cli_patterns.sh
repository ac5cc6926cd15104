#!/usr/bin/env bash
# test_cli_patterns.sh - `pscan reduce`, `pscan compact`, `pscan split` and `pscan expand` on files, against
# python3 references: the worked examples, random raw files of several types (predicates, flags files,
# payloads), expand's indices, ranks and gathered values, .npy and text in and out, every other backend present
# (OpenCL, CUDA) against the CPU's bytes, and refusals (a bad --keep, a missing flags file, files of different
# lengths, a wrong counts type) with a non-zero exit and no output.
#   bash test_cli_patterns.sh PATH/TO/pscan
# Prints "test_cli_patterns: P passed, F failed"; exits 1 on any failure.
set -uo pipefail

source "$(dirname "$0")/cli_common.sh" test_cli_patterns "$@"

# ---- the worked examples (docs/api.md) --------------------------------------------------------------------
ex() { printf '3 1 7 0 4 1 6 3'; }
expect "reduce sum" 25 "$(ex | "$PSCAN" reduce - --format text --type i32 2>"$WORK/err")"
expect "reduce max" 7 "$(ex | "$PSCAN" reduce - --format text --type i32 --op max 2>"$WORK/err")"
expect "reduce init" 125 "$(ex | "$PSCAN" reduce - --format text --type i32 --init 100 2>"$WORK/err")"
expect "reduce empty" 0 "$(printf '' | "$PSCAN" reduce - --format text --type i32 2>"$WORK/err")"
expect "compact >2" "3 7 4 6 3" "$(ex | "$PSCAN" compact - - --format text --type i32 --keep '>2' 2>"$WORK/err" | words)"
grep -q "pscan compact: kept 5 of 8 i32 elements" "$WORK/err" && ok || fail "compact summary: $(cat "$WORK/err")"
printf '1 0 1 0 1 0 1 0' >"$WORK/flags.txt"
expect "compact unique" "3 1 -0 0 5 3" "$(printf '3\n3\n1\n1\n1\n-0.0\n0.0\n0.0\n5\n3\n' |
  "$PSCAN" compact - - --format text --type f32 --keep unique --quiet | words)"
expect "compact flags" "3 7 4 6" \
  "$(ex | "$PSCAN" compact - - --format text --type i32 --flags "$WORK/flags.txt" 2>"$WORK/err" | words)"
expect "split >2" "3 7 4 6 3 1 0 1" "$(ex | "$PSCAN" split - - --format text --type i32 --keep '>2' 2>"$WORK/err" | words)"
grep -q "pscan split: kept 5 of 8 i32 elements" "$WORK/err" && ok || fail "split summary: $(cat "$WORK/err")"
printf '0 1 2 3 4 5 6 7' >"$WORK/vals.txt"
expect "compact keys" "3 7 4 6 3" "$(ex | "$PSCAN" compact - - --format text --type i32 --keep '>2' \
  --values "$WORK/vals.txt" "$WORK/vals.out.txt" --value-type u16 2>"$WORK/err" | words)"
expect "compact values" "0 2 4 6 7" "$(words <"$WORK/vals.out.txt")"
printf '2 0 3 1' >"$WORK/counts.txt"
printf '10 20 30 40' >"$WORK/cvals.txt"
expect "expand indices" "0 0 2 2 2 3" "$("$PSCAN" expand "$WORK/counts.txt" - --format text --type u32 \
  --ranks "$WORK/ranks.txt" --values "$WORK/cvals.txt" "$WORK/cvals.out.txt" --value-type f32 2>"$WORK/err" | words)"
expect "expand ranks" "0 1 0 1 2 0" "$(words <"$WORK/ranks.txt")"
expect "expand values" "10 10 30 30 30 40" "$(words <"$WORK/cvals.out.txt")"
grep -q "pscan expand: 4 items -> 6 slots" "$WORK/err" && ok || fail "expand summary: $(cat "$WORK/err")"

# ---- random raw files against python3 ---------------------------------------------------------------------
python3 - "$WORK" <<'PY'
import random, struct, sys
w = sys.argv[1]
random.seed(10)
n = 100003
for t, f in (("i8", "b"), ("u16", "H"), ("i32", "i"), ("u64", "Q"), ("f32", "f"), ("f64", "d")):
    if t.startswith("f"): xs = [float(random.randint(-9, 9)) / 2 for _ in range(n)]
    elif t.startswith("u"): xs = [random.randint(0, 9) for _ in range(n)]
    else: xs = [random.randint(-9, 9) for _ in range(n)]
    open(f"{w}/{t}.bin", "wb").write(struct.pack(f"<{n}{f}", *xs))
open(f"{w}/flags.bin", "wb").write(bytes(random.choice([0, 0, 1, 7]) for _ in range(n)))
open(f"{w}/payload.bin", "wb").write(struct.pack(f"<{n}I", *range(n)))
counts = [random.choice([0, 0, 1, 2, 5, 64]) for _ in range(20011)]
counts[1234] = 300000
open(f"{w}/counts.bin", "wb").write(struct.pack(f"<{len(counts)}Q", *counts))
PY
# reference.py TYPE CMD ... -> the expected output file(s) of the command
cat >"$WORK/reference.py" <<'PY'
import operator, struct, sys
w, t, cmd = sys.argv[1], sys.argv[2], sys.argv[3]
fmt = {"i8": "b", "u16": "H", "i32": "i", "u64": "Q", "f32": "f", "f64": "d"}[t]
data = open(f"{w}/{t}.bin", "rb").read()
xs = list(struct.unpack(f"<{len(data) // struct.calcsize(fmt)}{fmt}", data))
n = len(xs)
if cmd == "reduce":
    op = sys.argv[4]
    if op == "sum": r = sum(xs); r = r if t.startswith("f") else r  # wrap below
    elif op == "max": r = max(xs)
    elif op == "min": r = min(xs)
    if not t.startswith("f"):
        bits = struct.calcsize(fmt) * 8
        r &= (1 << bits) - 1
        if t[0] == "i" and r >= 1 << (bits - 1): r -= 1 << bits
        print(r)
    else:
        print(repr(float(r)))
    sys.exit()
mode = sys.argv[4]
if mode == "flags":
    keep = [b != 0 for b in open(f"{w}/flags.bin", "rb").read()]
elif mode == "unique":  # bit for bit against the item before
    raw = [struct.pack("<" + fmt, x) for x in xs]
    keep = [i == 0 or raw[i] != raw[i - 1] for i in range(n)]
else:
    ops = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne}
    sym = mode.rstrip("-.0123456789"); c = float(mode[len(sym):])
    keep = [ops[sym](x, c) for x in xs]
idx = [i for i in range(n) if keep[i]] + ([i for i in range(n) if not keep[i]] if cmd == "split" else [])
open(f"{w}/want.bin", "wb").write(struct.pack(f"<{len(idx)}{fmt}", *[xs[i] for i in idx]))
open(f"{w}/want.payload.bin", "wb").write(struct.pack(f"<{len(idx)}I", *idx))
PY
for t in i8 u16 i32 u64 f32 f64; do
  for backend in cpu; do
    want=$(python3 "$WORK/reference.py" "$WORK" $t reduce sum)
    got=$("$PSCAN" reduce "$WORK/$t.bin" --type $t --backend $backend 2>"$WORK/err")
    if [[ $t == f* ]]; then
      python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-6 * max(1, abs(b)))" "$got" "$want" &&
        ok || fail "reduce $t: got '$got', expected '$want'"
    else
      expect "reduce $t" "$want" "$got"
    fi
    expect "reduce $t max" "$(python3 "$WORK/reference.py" "$WORK" $t reduce max | sed 's/\.0$//')" \
      "$("$PSCAN" reduce "$WORK/$t.bin" --type $t --op max 2>"$WORK/err")"
  done
  for cmd in compact split; do
    for mode in flags '>2' '<=-1' '==3' '!=0' '>=4.5' unique; do
      [[ $t == u* && $mode == '<=-1' ]] && continue
      [[ $t != f* && $mode == '>=4.5' ]] && continue
      python3 "$WORK/reference.py" "$WORK" $t $cmd "$mode"
      if [[ $mode == flags ]]; then sel=(--flags "$WORK/flags.bin"); else sel=(--keep "$mode"); fi
      if "$PSCAN" $cmd "$WORK/$t.bin" "$WORK/got.bin" --type $t "${sel[@]}" --values "$WORK/payload.bin" \
        "$WORK/got.payload.bin" --value-type u32 --quiet 2>"$WORK/err"; then
        cmp -s "$WORK/got.bin" "$WORK/want.bin" && cmp -s "$WORK/got.payload.bin" "$WORK/want.payload.bin" && ok ||
          fail "$cmd $t $mode: output differs from python3"
      else
        fail "$cmd $t $mode exited non-zero: $(cat "$WORK/err")"
      fi
    done
  done
done
# expand: one huge count among many small ones, u64 counts, u32 indices, ranks, through .npy
python3 - "$WORK" <<'PY'
import struct, sys
w = sys.argv[1]
d = open(f"{w}/counts.bin", "rb").read()
counts = struct.unpack(f"<{len(d) // 8}Q", d)
idx = [i for i, c in enumerate(counts) for _ in range(c)]
rk = [r for c in counts for r in range(c)]
open(f"{w}/want.idx.bin", "wb").write(struct.pack(f"<{len(idx)}I", *idx))
open(f"{w}/want.rank.bin", "wb").write(struct.pack(f"<{len(rk)}I", *rk))
PY
if "$PSCAN" expand "$WORK/counts.bin" "$WORK/idx.bin" --type u64 --index-type u32 --ranks "$WORK/rank.bin" --quiet \
  2>"$WORK/err"; then
  cmp -s "$WORK/idx.bin" "$WORK/want.idx.bin" && cmp -s "$WORK/rank.bin" "$WORK/want.rank.bin" && ok ||
    fail "expand u64 counts: output differs from python3"
else
  fail "expand u64 counts exited non-zero: $(cat "$WORK/err")"
fi
if "$PSCAN" expand "$WORK/counts.bin" "$WORK/idx.npy" --type u64 --quiet 2>"$WORK/err"; then
  python3 -c "
import struct, sys
d = open(sys.argv[1], 'rb').read(); hl = struct.unpack('<H', d[8:10])[0]; h = d[10:10 + hl].decode()
w = open(sys.argv[2], 'rb').read(); n = len(w) // 4
ok = \"'<u8'\" in h and d[10 + hl:] == struct.pack(f'<{n}Q', *struct.unpack(f'<{n}I', w))
sys.exit(0 if ok else 1)" "$WORK/idx.npy" "$WORK/want.idx.bin" && ok || fail "expand to .npy differs"
else
  fail "expand to .npy exited non-zero: $(cat "$WORK/err")"
fi

# ---- every other backend present: one of each command gives the CPU's bytes --------------------------------
# (a backend not compiled in, or without a device, fails the probe and is left out)
same() { # name args... : the command's output file $WORK/b.out on --backend cpu and on $backend are the same
  local name=$1
  shift
  if "$PSCAN" "$@" --backend cpu --quiet 2>"$WORK/err" && mv "$WORK/b.out" "$WORK/b.cpu" &&
    "$PSCAN" "$@" --backend "$backend" --quiet 2>"$WORK/err"; then
    cmp -s "$WORK/b.out" "$WORK/b.cpu" && ok || fail "$name --backend $backend differs from --backend cpu"
  else
    fail "$name --backend $backend exited non-zero: $(cat "$WORK/err")"
  fi
}
for backend in opencl cuda; do
  ex | "$PSCAN" reduce - --format text --type i32 --backend $backend >/dev/null 2>&1 || continue
  for op in sum min; do
    expect "reduce u64 $op --backend $backend" "$("$PSCAN" reduce "$WORK/u64.bin" --type u64 --op $op 2>/dev/null)" \
      "$("$PSCAN" reduce "$WORK/u64.bin" --type u64 --op $op --backend $backend 2>"$WORK/err")"
  done
  same "compact i32 >2" compact "$WORK/i32.bin" "$WORK/b.out" --type i32 --keep '>2'
  same "compact f64 unique" compact "$WORK/f64.bin" "$WORK/b.out" --type f64 --keep unique
  same "split f32 flags" split "$WORK/f32.bin" "$WORK/b.out" --type f32 --flags "$WORK/flags.bin"
  same "expand u64 counts" expand "$WORK/counts.bin" "$WORK/b.out" --type u64 --index-type u32
  same "histogram f32 range" histogram "$WORK/f32.bin" --type f32 --bins 100 --range -3:5 --out "$WORK/b.out"
  same "histogram i32 range" histogram "$WORK/i32.bin" --type i32 --bins 7 --range -10:12 --out "$WORK/b.out"
done

# ---- refusals: a message, a non-zero exit, no output left behind ------------------------------------------
refuse "bad --keep" 2 compact "$WORK/i32.bin" "$WORK/refused.bin" --type i32 --keep '~3'
refuse "--keep without a number" 2 compact "$WORK/i32.bin" "$WORK/refused.bin" --type i32 --keep '>'
refuse "--keep out of range" 2 compact "$WORK/i8.bin" "$WORK/refused.bin" --type i8 --keep '>300'
refuse "both --keep and --flags" 2 split "$WORK/i32.bin" "$WORK/refused.bin" --type i32 --keep '>0' --flags "$WORK/flags.bin"
refuse "neither --keep nor --flags" 2 split "$WORK/i32.bin" "$WORK/refused.bin" --type i32
refuse "missing flags file" 1 compact "$WORK/i32.bin" "$WORK/refused.bin" --type i32 --flags "$WORK/nope.bin"
head -c 1000 "$WORK/flags.bin" >"$WORK/short-flags.bin"
refuse "flags of another length" 1 compact "$WORK/i32.bin" "$WORK/refused.bin" --type i32 --flags "$WORK/short-flags.bin"
refuse "values of another length" 1 split "$WORK/i32.bin" "$WORK/refused.bin" --type i32 --keep '>0' \
  --values "$WORK/short-flags.bin" "$WORK/refused.bin" --value-type u8
refuse "--values without --value-type" 2 compact "$WORK/i32.bin" "$WORK/refused.bin" --type i32 --keep '>0' \
  --values "$WORK/payload.bin" "$WORK/refused.bin"
refuse "i32 counts" 2 expand "$WORK/i32.bin" "$WORK/refused.bin" --type i32
refuse "--index-type i16" 2 expand "$WORK/counts.bin" "$WORK/refused.bin" --type u64 --index-type i16
refuse "reduce xor on floats" 2 reduce "$WORK/f32.bin" --type f32 --op xor
refuse "unknown option" 2 reduce "$WORK/i32.bin" --type i32 --keep '>0'

finish
