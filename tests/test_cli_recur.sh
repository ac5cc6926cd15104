#!/usr/bin/env bash
# test_cli_recur.sh - `pscan recur` on files, against a python3 serial loop in double precision: the worked
# examples (docs/cli.md), random raw f32 and f64 files of the first and second order, forward and reverse, with
# and without initial values, on every backend the tool finds (AUTO: CUDA on a GPU machine), .npy in and out, and
# OpenCL where the tool has a device, refusals (an integer type, inputs of different lengths, --init2 in the first order, too few files) with a
# non-zero exit and no output. --at X (Horner's rule, pscan_polyval): the worked examples, random coefficients
# of both types and directions against python3's Horner loop, and its refusals.
#   bash test_cli_recur.sh PATH/TO/pscan
# Prints "test_cli_recur: P passed, F failed"; exits 1 on any failure.
set -uo pipefail

source "$(dirname "$0")/cli_common.sh" test_cli_recur "$@"

# ---- the worked examples ----------------------------------------------------------------------------------
printf '2 2 2 2' >"$WORK/a.txt"
printf '1 1 1 1' >"$WORK/b.txt"
expect "first order" "1 3 7 15" "$("$PSCAN" recur "$WORK/a.txt" "$WORK/b.txt" - --format text --type f32 2>"$WORK/err" | words)"
grep -q "pscan recur: 4 f32 elements, order 1" "$WORK/err" && ok || fail "recur summary: $(cat "$WORK/err")"
expect "first order reverse" "15 7 3 1" \
  "$("$PSCAN" recur "$WORK/a.txt" "$WORK/b.txt" - --format text --type f64 --reverse 2>/dev/null | words)"
expect "first order y0" "3 7 15 31" \
  "$("$PSCAN" recur "$WORK/a.txt" "$WORK/b.txt" - --format text --type f32 --init 1 2>/dev/null | words)"
printf '1 1 1 1 1' >"$WORK/fa.txt"
printf '0 0 0 0 0' >"$WORK/fc.txt"
expect "Fibonacci" "1 2 3 5 8" "$("$PSCAN" recur "$WORK/fa.txt" "$WORK/fa.txt" "$WORK/fc.txt" - --format text \
  --type f64 --init 1 --init2 0 2>/dev/null | words)"
expect "Fibonacci reverse" "8 5 3 2 1" "$("$PSCAN" recur "$WORK/fa.txt" "$WORK/fa.txt" "$WORK/fc.txt" - --format text \
  --type f32 --order 2 --init 1 --reverse 2>/dev/null | words)"
: >"$WORK/empty.txt"
"$PSCAN" recur "$WORK/empty.txt" "$WORK/empty.txt" "$WORK/empty.out.txt" --format text --type f32 2>"$WORK/err" &&
  [[ -e $WORK/empty.out.txt && ! -s $WORK/empty.out.txt ]] && ok || fail "empty inputs: $(cat "$WORK/err")"

# ---- random raw files against python3 ---------------------------------------------------------------------
# |a| < 1 (and |a| + |b| < 1 in the second order): errors do not grow along the chain, so the parallel
# evaluation stays within 1e-4 (f32) or 1e-10 (f64) of the double loop, relative to 1 + |y|.
python3 - "$WORK" <<'PY'
import random, struct, sys
w = sys.argv[1]
random.seed(13)
n = 300007  # more than 64 CUDA tiles of either order
for name in ("a", "b", "c"):
    if name == "a": xs = [random.choice((-1, 1)) * (0.3 + 0.3 * random.random()) for _ in range(n)]
    elif name == "b": xs = [random.choice((-1, 1)) * 0.35 * random.random() for _ in range(n)]
    else: xs = [2 * random.random() - 1 for _ in range(n)]
    for t, f in (("f32", "f"), ("f64", "d")):
        open(f"{w}/{name}.{t}.bin", "wb").write(struct.pack(f"<{n}{f}", *xs))
open(f"{w}/check.py", "w").write(r'''
import struct, sys
w, t, order, reverse, y1, y2, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", float(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
f = "f" if t == "f32" else "d"
def load(p):
    data = open(p, "rb").read()
    return struct.unpack(f"<{len(data) // struct.calcsize(f)}{f}", data)
a, b, c = load(f"{w}/a.{t}.bin"), load(f"{w}/b.{t}.bin"), load(f"{w}/c.{t}.bin")
got = load(out)
n = len(a)
if len(got) != n: sys.exit(f"{len(got)} elements, expected {n}")
tol = 1e-4 if t == "f32" else 1e-10
s0, s1 = y1, y2
for k in range(n):
    i = n - 1 - k if reverse else k
    v = a[i] * s0 + b[i] if order == 1 else a[i] * s0 + b[i] * s1 + c[i]
    s1, s0 = s0, v
    if abs(got[i] - v) > tol * (1 + abs(v)): sys.exit(f"element {i}: {got[i]} against {v}")
''')
PY
for t in f32 f64; do
  for order in 1 2; do
    for reverse in 0 1; do
      files=("$WORK/a.$t.bin" "$WORK/b.$t.bin")
      [[ $order == 2 ]] && files+=("$WORK/c.$t.bin")
      opts=(--type "$t")
      [[ $reverse == 1 ]] && opts+=(--reverse)
      y1=0 y2=0
      if [[ $reverse == 1 ]]; then
        y1=0.75
        opts+=(--init 0.75)
        [[ $order == 2 ]] && y2=-0.5 && opts+=(--init2 -0.5)
      fi
      name="recur $t order $order reverse $reverse"
      if "$PSCAN" recur "${files[@]}" "$WORK/y.bin" "${opts[@]}" --quiet 2>"$WORK/err"; then
        python3 "$WORK/check.py" "$WORK" $t $order $reverse $y1 $y2 "$WORK/y.bin" && ok || fail "$name: differs from python3"
      else
        fail "$name: exit $? ($(cat "$WORK/err"))"
      fi
    done
  done
done
# OpenCL, where the tool has a device (PoCL in CI): both orders and Horner's rule against the same loops
if "$PSCAN" info 2>/dev/null | grep -q "^opencl: compiled in, device"; then
  "$PSCAN" recur "$WORK/a.f32.bin" "$WORK/b.f32.bin" "$WORK/c.f32.bin" "$WORK/y.bin" --type f32 --reverse --init 0.75 \
    --init2 -0.5 --backend opencl --quiet && python3 "$WORK/check.py" "$WORK" f32 2 1 0.75 -0.5 "$WORK/y.bin" && ok ||
    fail "recur f32 order 2 reverse on OpenCL"
  "$PSCAN" recur "$WORK/a.f64.bin" "$WORK/b.f64.bin" "$WORK/y.bin" --type f64 --backend opencl --quiet &&
    python3 "$WORK/check.py" "$WORK" f64 1 0 0 0 "$WORK/y.bin" && ok || fail "recur f64 order 1 on OpenCL"
  OPENCL_HORNER=1
fi
# the CPU backend's threaded path and the serial one give the same answer within the tolerance too
"$PSCAN" recur "$WORK/a.f64.bin" "$WORK/b.f64.bin" "$WORK/y.bin" --type f64 --backend cpu --algo threads --quiet &&
  python3 "$WORK/check.py" "$WORK" f64 1 0 0 0 "$WORK/y.bin" && ok || fail "recur f64 cpu threads"

# .npy in and out: the dtype sets the type
python3 - "$WORK" <<'PY'
import struct, sys
w = sys.argv[1]
def npy(path, descr, fmt, xs):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(xs))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack(f"<{len(xs)}{fmt}", *xs))
npy(f"{w}/a.npy", "<f8", "d", [2.0, 2.0, 2.0, 2.0])
npy(f"{w}/b.npy", "<f8", "d", [1.0, 1.0, 1.0, 1.0])
PY
"$PSCAN" recur "$WORK/a.npy" "$WORK/b.npy" "$WORK/y.npy" --quiet 2>"$WORK/err" && ok || fail "recur .npy: $(cat "$WORK/err")"
expect "recur .npy" "1.0 3.0 7.0 15.0" "$(python3 - "$WORK/y.npy" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:6] == b"\x93NUMPY" and b"'<f8'" in data[:128], "not an f64 .npy"
hl = struct.unpack("<H", data[8:10])[0]
body = data[10 + hl:]
print(" ".join(str(x) for x in struct.unpack(f"<{len(body) // 8}d", body)))
PY
)"

# ---- --at X: Horner's rule ---------------------------------------------------------------------------------
printf '1 2 3' >"$WORK/poly.txt"
expect "Horner" "1 4 11" "$("$PSCAN" recur "$WORK/poly.txt" - --at 2 --format text --type f64 2>"$WORK/err" | words)"
grep -q "pscan recur: 3 f64 coefficients, Horner's rule at 2" "$WORK/err" && ok || fail "--at summary: $(cat "$WORK/err")"
expect "Horner reverse" "17 8 3" "$("$PSCAN" recur "$WORK/poly.txt" - --at 2 --reverse --format text --type f32 \
  2>/dev/null | words)"
# random coefficients in [-1, 1) at |x| < 1: every Horner prefix within 1e-4 (f32) or 1e-10 (f64) of the loop
cat >"$WORK/horner.py" <<'PY'
import struct, sys
c_path, t, x, reverse, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
f = "f" if t == "f32" else "d"
def load(p):
    data = open(p, "rb").read()
    return struct.unpack(f"<{len(data) // struct.calcsize(f)}{f}", data)
c, got = load(c_path), load(out)
if len(got) != len(c): sys.exit(f"{len(got)} elements, expected {len(c)}")
x = struct.unpack(f"<{f}", struct.pack(f"<{f}", x))[0]  # the point as the type holds it
tol = 1e-4 if t == "f32" else 1e-10
v = 0.0
for k in range(len(c)):
    i = len(c) - 1 - k if reverse else k
    v = x * v + c[i]
    if abs(got[i] - v) > tol * (1 + abs(v)): sys.exit(f"element {i}: {got[i]} against {v}")
PY
for t in f32 f64; do
  for reverse in 0 1; do
    opts=(--type "$t" --at -0.8125)
    [[ $reverse == 1 ]] && opts+=(--reverse)
    name="recur --at $t reverse $reverse"
    if "$PSCAN" recur "$WORK/c.$t.bin" "$WORK/y.bin" "${opts[@]}" --quiet 2>"$WORK/err"; then
      python3 "$WORK/horner.py" "$WORK/c.$t.bin" $t -0.8125 $reverse "$WORK/y.bin" && ok || fail "$name: differs from python3"
    else
      fail "$name: exit $? ($(cat "$WORK/err"))"
    fi
  done
done

if [[ ${OPENCL_HORNER:-0} == 1 ]]; then
  "$PSCAN" recur "$WORK/c.f64.bin" "$WORK/y.bin" --type f64 --at -0.8125 --reverse --backend opencl --quiet &&
    python3 "$WORK/horner.py" "$WORK/c.f64.bin" f64 -0.8125 1 "$WORK/y.bin" && ok || fail "recur --at on OpenCL"
fi

# ---- refusals: a message, a non-zero exit, no output left behind ------------------------------------------
refuse "i32 coefficients" 2 recur "$WORK/a.f32.bin" "$WORK/b.f32.bin" "$WORK/refused.bin" --type i32
refuse "one input" 2 recur "$WORK/a.f32.bin" "$WORK/refused.bin" --type f32
refuse "--order 2 with two inputs" 2 recur "$WORK/a.f32.bin" "$WORK/b.f32.bin" "$WORK/refused.bin" --type f32 --order 2
refuse "--init2 in the first order" 2 recur "$WORK/a.f32.bin" "$WORK/b.f32.bin" "$WORK/refused.bin" --type f32 --init2 1
refuse "a bad --init" 2 recur "$WORK/a.f32.bin" "$WORK/b.f32.bin" "$WORK/refused.bin" --type f32 --init x
head -c 4000 "$WORK/b.f32.bin" >"$WORK/short.bin"
refuse "inputs of different lengths" 1 recur "$WORK/a.f32.bin" "$WORK/short.bin" "$WORK/refused.bin" --type f32
refuse "a missing input" 1 recur "$WORK/a.f32.bin" "$WORK/nope.bin" "$WORK/refused.bin" --type f32
refuse "--at with two inputs" 2 recur "$WORK/a.f32.bin" "$WORK/b.f32.bin" "$WORK/refused.bin" --type f32 --at 2
refuse "--at with --init" 2 recur "$WORK/c.f32.bin" "$WORK/refused.bin" --type f32 --at 2 --init 1
refuse "--at on i32" 2 recur "$WORK/c.f32.bin" "$WORK/refused.bin" --type i32 --at 2
refuse "a bad --at" 2 recur "$WORK/c.f32.bin" "$WORK/refused.bin" --type f32 --at x

finish
