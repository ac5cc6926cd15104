#!/usr/bin/env bash
# test_cli.sh - `pscan scan` as a user meets it: the worked example, chunked streaming against one-chunk
# scans, backends against each other, OUT written as what it is (a null device, a FIFO, a symlink, a hard
# link, a read-only file, a file's mode, stdout), the formats (raw, text, CSV, .npy) from files and pipes
# against a serial reference in python3, --widen (narrow in, 64-bit out), and bad input (clear message, non-zero
# exit, no output left behind).
#   bash test_cli.sh PATH/TO/pscan
# Prints "test_cli: P passed, F failed"; exits 1 on any failure.
set -uo pipefail

source "$(dirname "$0")/cli_common.sh" test_cli "$@"

# ---- the worked example: 8 i32 values 3 1 7 0 4 1 6 3 ----------------------------------------------------
printf '\x03\x00\x00\x00\x01\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x01\x00\x00\x00\x06\x00\x00\x00\x03\x00\x00\x00' \
  >"$WORK/example.bin"
expect_example() { # expected-values flags...
  local want=$1
  shift
  if "$PSCAN" scan "$WORK/example.bin" "$WORK/example.out" --type i32 "$@" 2>"$WORK/err"; then
    local got
    got=$(od -An -v -td4 "$WORK/example.out" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
    [[ $got == "$want" ]] && ok || fail "pscan scan --type i32 $*: got '$got', expected '$want'"
  else
    fail "pscan scan --type i32 $* exited non-zero: $(cat "$WORK/err")"
  fi
}
expect_example "3 4 11 11 15 16 22 25"
expect_example "0 3 4 11 11 15 16 22" --exclusive
expect_example "25 22 21 14 14 10 9 3" --reverse
expect_example "110 113 114 121 121 125 126 132" --exclusive --init 110
expect_example "0 3 3 7 7 7 7 7" --op max --exclusive --init 0

# ---- --widen: u8 200 200 200 summed into u64 (known bytes), on the CPU and every backend present ---------
printf '\xc8\xc8\xc8' >"$WORK/u8.bin"
expect_widen() { # backend expected-values flags...
  local backend=$1 want=$2
  shift 2
  if "$PSCAN" scan "$WORK/u8.bin" "$WORK/wide.out" --format raw --type u8 --widen --backend "$backend" "$@" \
    2>"$WORK/err"; then
    local got
    got=$(od -An -v -tu8 "$WORK/wide.out" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
    [[ $got == "$want" && $(stat -c %s "$WORK/wide.out") -eq 24 ]] && ok ||
      fail "--widen --backend $backend $*: got '$got' ($(stat -c %s "$WORK/wide.out") bytes), expected '$want'"
  else
    fail "--widen --backend $backend $* exited non-zero: $(cat "$WORK/err")"
  fi
}
for backend in cpu opencl cuda; do
  [[ $backend == cpu ]] ||
    "$PSCAN" scan "$WORK/example.bin" "$WORK/probe.out" --type i32 --backend "$backend" >/dev/null 2>&1 || continue
  expect_widen "$backend" "200 400 600"
  expect_widen "$backend" "405 205 5" --exclusive --reverse --init 5
  expect_widen "$backend" "200 40000 8000000" --op product
done

# IN may be OUT: scanned in place, via the temporary file and rename
cp "$WORK/example.bin" "$WORK/inplace.bin"
if "$PSCAN" scan "$WORK/inplace.bin" "$WORK/inplace.bin" --type i32 --exclusive 2>"$WORK/err"; then
  got=$(od -An -v -td4 "$WORK/inplace.bin" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
  [[ $got == "0 3 4 11 11 15 16 22" ]] && ok || fail "in-place file scan: got '$got'"
else
  fail "in-place file scan exited non-zero: $(cat "$WORK/err")"
fi

# ---- streaming: 1 MiB chunks carry the scan across chunk boundaries exactly like one chunk ---------------
# 3 MiB + 5 bytes of random data: every element size divides 3 MiB, so the 5 extra bytes are cut per type.
head -c $((3 * 1048576 + 5)) /dev/urandom >"$WORK/random.raw"
stream_case() { # type bytes flags...
  local type=$1 size=$2
  shift 2
  local n=$(((3 * 1048576 + 5) / size * size))
  head -c "$n" "$WORK/random.raw" >"$WORK/in.bin"
  if ! "$PSCAN" scan "$WORK/in.bin" "$WORK/whole.bin" --type "$type" --backend cpu "$@" 2>"$WORK/err"; then
    fail "pscan scan --type $type $* (one chunk): $(cat "$WORK/err")"
    return
  fi
  if ! "$PSCAN" scan "$WORK/in.bin" "$WORK/chunked.bin" --type "$type" --backend cpu --chunk-mb 1 "$@" \
    2>"$WORK/err"; then
    fail "pscan scan --type $type $* --chunk-mb 1: $(cat "$WORK/err")"
    return
  fi
  cmp -s "$WORK/whole.bin" "$WORK/chunked.bin" && ok || fail "--chunk-mb 1 differs from one chunk: --type $type $*"
  [[ $(stat -c %s "$WORK/whole.bin") -eq $n ]] && ok || fail "output size differs from input: --type $type $*"
}
stream_case i32 4
stream_case u8 1 --op xor --exclusive --reverse --init 0x5a
stream_case i64 8 --op sum --reverse
stream_case i16 2 --op product --exclusive --init 3
stream_case u32 4 --op max --init 7
stream_case i8 1 --op min --reverse --exclusive

# Integer scans are exact, so every backend present must produce the same bytes as the CPU.
for backend in opencl cuda; do
  if "$PSCAN" scan "$WORK/example.bin" "$WORK/probe.out" --type i32 --backend "$backend" >/dev/null 2>&1; then
    head -c $((3 * 1048576)) "$WORK/random.raw" >"$WORK/in.bin"
    "$PSCAN" scan "$WORK/in.bin" "$WORK/cpu.bin" --type u32 --exclusive --backend cpu 2>/dev/null
    if "$PSCAN" scan "$WORK/in.bin" "$WORK/dev.bin" --type u32 --exclusive --backend "$backend" --chunk-mb 1 \
      2>"$WORK/err"; then
      cmp -s "$WORK/cpu.bin" "$WORK/dev.bin" && ok || fail "--backend $backend differs from --backend cpu"
    else
      fail "--backend $backend: $(cat "$WORK/err")"
    fi
    # widened, through separate device buffers for the narrow input and the wide output
    "$PSCAN" scan "$WORK/in.bin" "$WORK/cpu.bin" --type i16 --widen --exclusive --backend cpu 2>/dev/null
    if "$PSCAN" scan "$WORK/in.bin" "$WORK/dev.bin" --type i16 --widen --exclusive --backend "$backend" --chunk-mb 1 \
      2>"$WORK/err"; then
      cmp -s "$WORK/cpu.bin" "$WORK/dev.bin" && ok || fail "--widen --backend $backend differs from --backend cpu"
    else
      fail "--widen --backend $backend: $(cat "$WORK/err")"
    fi
  fi
done

# ---- OUT is written as what it is ------------------------------------------------------------------------
# A regular file is replaced atomically, through symlinks, keeping its mode and its hard links; anything else
# (/dev/null, a FIFO, stdout) is written straight through; a read-only file is refused and left as it was.
want_bytes() { "$PSCAN" scan "$WORK/example.bin" "$WORK/want.bin" --type i32 2>/dev/null; }
want_bytes
scan_to() { "$PSCAN" scan "$WORK/example.bin" "$1" --type i32 2>"$WORK/err"; }
# As root, a pscan with the old bug would replace the system's /dev/null and /dev/stdout: test on private
# stand-ins (a null device node of our own, a symlink to /dev/stdout), which behave the same.
null=/dev/null
[[ $(id -u) -eq 0 ]] && mknod "$WORK/null" c 1 3 2>/dev/null && null=$WORK/null
if scan_to "$null" && [[ -c $null ]]; then ok; else fail "OUT = a null device: $(cat "$WORK/err"); $(ls -l "$null")"; fi
mkfifo "$WORK/fifo"
timeout 20 cat "$WORK/fifo" >"$WORK/from-fifo" & # bounded: a pscan that replaces the FIFO never opens it
reader=$!
if scan_to "$WORK/fifo"; then
  [[ -p $WORK/fifo ]] || kill "$reader" 2>/dev/null
  wait "$reader"
  [[ -p $WORK/fifo ]] && cmp -s "$WORK/from-fifo" "$WORK/want.bin" && ok || fail "OUT = a FIFO: not read through it"
else
  kill "$reader" 2>/dev/null
  fail "OUT = a FIFO: $(cat "$WORK/err")"
fi
printf 'old' >"$WORK/target.bin"
ln -s target.bin "$WORK/link.bin"
if scan_to "$WORK/link.bin" && [[ -L $WORK/link.bin ]] && cmp -s "$WORK/target.bin" "$WORK/want.bin"; then ok
else fail "OUT = a symlink: not written through it: $(ls -l "$WORK/link.bin") $(cat "$WORK/err")"; fi
printf 'old' >"$WORK/hard1.bin"
ln "$WORK/hard1.bin" "$WORK/hard2.bin"
if scan_to "$WORK/hard1.bin" && [[ $WORK/hard1.bin -ef $WORK/hard2.bin ]] && cmp -s "$WORK/hard2.bin" "$WORK/want.bin"
then ok; else fail "OUT = a hard link: the link was broken or not written: $(cat "$WORK/err")"; fi
printf 'precious' >"$WORK/readonly.bin"
chmod 0444 "$WORK/readonly.bin"
if scan_to "$WORK/readonly.bin"; then fail "OUT read-only: exit status 0"
elif [[ $(cat "$WORK/readonly.bin") != precious || $(stat -c %a "$WORK/readonly.bin") != 444 ]]; then
  fail "OUT read-only: changed"
elif ! grep -q read-only "$WORK/err"; then fail "OUT read-only: no clear message: $(cat "$WORK/err")"
else ok; fi
printf 'old' >"$WORK/mode.bin"
chmod 0640 "$WORK/mode.bin"
scan_to "$WORK/mode.bin" && [[ $(stat -c %a "$WORK/mode.bin") == 640 ]] && cmp -s "$WORK/mode.bin" "$WORK/want.bin" \
  && ok || fail "OUT mode 0640 not kept, or not written: $(stat -c %a "$WORK/mode.bin") $(cat "$WORK/err")"
if "$PSCAN" scan - - --type i32 <"$WORK/example.bin" >"$WORK/dash.bin" 2>"$WORK/err" &&
  cmp -s "$WORK/dash.bin" "$WORK/want.bin"; then ok; else fail "- - (stdin to stdout): $(cat "$WORK/err")"; fi
ln -s /dev/stdout "$WORK/stdout"
if "$PSCAN" scan "$WORK/example.bin" "$WORK/stdout" --type i32 >"$WORK/stdout.bin" 2>"$WORK/err" &&
  cmp -s "$WORK/stdout.bin" "$WORK/want.bin"; then ok; else fail "OUT = /dev/stdout: $(cat "$WORK/err")"; fi

# ---- formats and streaming against a serial reference (python3, no numpy needed) -------------------------
# ref.py gen T N SEED FORMAT PATH writes N seeded values of type T as raw, text (mixed separators and
# comments), csv (value in column 3, a quoted name with commas in column 2) or npy; ref.py expect T N SEED
# FLAGS PATH writes the serial scan (sum, wrapping integers; floats are multiples of 1/8, so sums are exact)
# one number per line as pscan prints them (FLAGS: excl, rev, widen: summed and printed in the 64-bit type);
# ref.py npy2txt PATH prints a .npy file's values the same way;
# ref.py npyhead DICT PATH writes a .npy of 8 zero bytes under that header.
cat >"$WORK/ref.py" <<'PY'
import ast, random, struct, sys
INT = {'i8': (8, 1), 'u8': (8, 0), 'i16': (16, 1), 'u16': (16, 0), 'i32': (32, 1), 'u32': (32, 0),
       'i64': (64, 1), 'u64': (64, 0)}
CODE = {'i8': 'b', 'u8': 'B', 'i16': 'h', 'u16': 'H', 'i32': 'i', 'u32': 'I', 'i64': 'q', 'u64': 'Q',
        'f32': 'f', 'f64': 'd'}
WIDE = {'i8': 'i64', 'i16': 'i64', 'i32': 'i64', 'u8': 'u64', 'u16': 'u64', 'u32': 'u64', 'f32': 'f64'}
DESCR = {v: k for k, v in {'i8': '|i1', 'u8': '|u1', 'i16': '<i2', 'u16': '<u2', 'i32': '<i4', 'u32': '<u4',
                           'i64': '<i8', 'u64': '<u8', 'f32': '<f4', 'f64': '<f8'}.items()}
def values(t, n, seed):
    r = random.Random(seed)
    if t in INT:
        bits, signed = INT[t]
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        return [r.randint(lo, hi) for _ in range(n)]
    return [r.randint(-4000, 4000) / 8 for _ in range(n)]
def wrap(t, v):
    if t not in INT: return v
    bits, signed = INT[t]
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v
def show(t, v): return '%.9g' % v if t == 'f32' else '%.17g' % v if t == 'f64' else str(v)
def npy(t, xs):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % ({v: k for k, v in DESCR.items()}[t], len(xs))
    d += ' ' * (63 - (10 + len(d)) % 64) + '\n'
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(d)) + d.encode() + struct.pack('<%d%s' % (len(xs), CODE[t]), *xs)
cmd = sys.argv[1]
if cmd == 'gen':
    t, n, seed, form, path = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
    xs, r = values(t, n, seed), random.Random(seed + 1)
    if form == 'raw': data = struct.pack('=%d%s' % (n, CODE[t]), *xs)
    elif form == 'npy': data = npy(t, xs)
    elif form == 'text':
        seps = [' ', '\n', ',', '\t', ', ', '\r\n', '  # a comment, 1 2 3\n']
        data = ('# generated\n' + ''.join(show(t, x) + r.choice(seps) for x in xs)).encode()
    else:
        data = ('id,"name, quoted",value\n' + ''.join('%d,"a, ""b""",%s\n' % (i, show(t, x)) for i, x in enumerate(xs))).encode()
    open(path, 'wb').write(data)
elif cmd == 'expect':
    t, n, seed, flags, path = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
    xs = values(t, n, seed)
    w = WIDE.get(t, t) if 'widen' in flags else t
    if 'rev' in flags: xs = xs[::-1]
    out, acc = [], 0
    for x in xs:
        if 'excl' in flags: out.append(acc)
        acc = wrap(w, acc + x)
        if 'excl' not in flags: out.append(acc)
    if 'rev' in flags: out = out[::-1]
    open(path, 'w').write(''.join(show(w, v) + '\n' for v in out))
elif cmd == 'npyhead':  # a .npy of 8 zero bytes under the header dict given
    d = sys.argv[2] + ' ' * (117 - len(sys.argv[2])) + '\n'
    open(sys.argv[3], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(d)) + d.encode() + bytes(8))
elif cmd == 'npy2txt':
    b = open(sys.argv[2], 'rb').read()
    assert b[:8] == b'\x93NUMPY\x01\x00', 'magic'
    hl = struct.unpack('<H', b[8:10])[0]
    assert (10 + hl) % 64 == 0, 'header not 64-byte aligned'
    h = ast.literal_eval(b[10:10 + hl].decode())
    t = DESCR[h['descr']]
    assert h['fortran_order'] is False and len(h['shape']) == 1
    n = h['shape'][0]
    xs = struct.unpack('<%d%s' % (n, CODE[t]), b[10 + hl:])
    sys.stdout.write(''.join(show(t, x) + '\n' for x in xs))
PY
if command -v python3 >/dev/null 2>&1; then
  # FORMAT TYPE N FLAGS: a file of that format scanned into text, and the same bytes through a pipe with
  # 1 MiB chunks (N large enough for several), both compared with the serial reference.
  format_case() {
    local form=$1 type=$2 n=$3 flags=$4 args=()
    [[ $flags == *excl* ]] && args+=(--exclusive)
    [[ $flags == *rev* ]] && args+=(--reverse)
    [[ $flags == *widen* ]] && args+=(--widen)
    [[ $form == csv ]] && args+=(--column value)
    python3 "$WORK/ref.py" gen "$type" "$n" 7 "$form" "$WORK/in.$form"
    python3 "$WORK/ref.py" expect "$type" "$n" 7 "$flags" "$WORK/expect.txt"
    if "$PSCAN" scan "$WORK/in.$form" "$WORK/got.txt" --type "$type" "${args[@]}" -q 2>"$WORK/err" &&
      cmp -s "$WORK/got.txt" "$WORK/expect.txt"; then ok
    else fail "$form $type $flags (file): $(cat "$WORK/err") $(cmp "$WORK/got.txt" "$WORK/expect.txt" 2>&1)"; fi
    if cat "$WORK/in.$form" | "$PSCAN" scan - - --in-format "$form" --out-format text --type "$type" --chunk-mb 1 \
      "${args[@]}" -q >"$WORK/got.txt" 2>"$WORK/err" && cmp -s "$WORK/got.txt" "$WORK/expect.txt"; then ok
    else fail "$form $type $flags (pipe, 1 MiB chunks): $(cat "$WORK/err") $(cmp "$WORK/got.txt" "$WORK/expect.txt" 2>&1)"; fi
  }
  format_case raw i32 300000 ""
  format_case raw u8 3000000 "excl rev"
  format_case text i64 300000 "rev"
  format_case text f64 200000 "excl"
  format_case text i8 2000 ""
  format_case csv u16 600000 "excl"
  format_case csv f32 5000 "rev"
  format_case npy u32 300000 "excl rev"
  format_case npy f64 1000 ""
  # --widen: sums that wrap in the narrow type do not here; the pipe's 1 MiB chunks hold 131072 wide elements
  format_case raw u8 3000000 "widen excl rev"
  format_case text i32 300000 "widen"
  format_case csv i16 600000 "widen rev"
  format_case npy f32 5000 "widen excl"

  # writing .npy: from a file (count known), from text in a pipe (header fixed at the end), reverse from a
  # pipe (spooled), reverse from a .npy file (written at offsets)
  python3 "$WORK/ref.py" gen i16 70000 3 text "$WORK/in.text"
  python3 "$WORK/ref.py" gen i16 70000 3 npy "$WORK/in16.npy"
  python3 "$WORK/ref.py" expect i16 70000 3 "" "$WORK/expect.txt"
  python3 "$WORK/ref.py" expect i16 70000 3 "rev" "$WORK/expect-rev.txt"
  python3 "$WORK/ref.py" expect i16 70000 3 "widen" "$WORK/expect-widen.txt"
  python3 "$WORK/ref.py" expect i16 70000 3 "widen rev" "$WORK/expect-widen-rev.txt"
  for how in file pipe pipe-rev npy-rev npy-widen npy-widen-rev; do
    rm -f "$WORK/out.npy"
    case $how in
      file) "$PSCAN" scan "$WORK/in.text" "$WORK/out.npy" --format text --out-format npy --type i16 -q 2>"$WORK/err" ;;
      pipe) "$PSCAN" scan - "$WORK/out.npy" --in-format text --type i16 -q <"$WORK/in.text" 2>"$WORK/err" ;;
      pipe-rev) "$PSCAN" scan - "$WORK/out.npy" --in-format text --type i16 --reverse -q <"$WORK/in.text" 2>"$WORK/err" ;;
      npy-rev) "$PSCAN" scan "$WORK/in16.npy" "$WORK/out.npy" --reverse --chunk-mb 1 -q 2>"$WORK/err" ;;
      # a .npy of i64 (its header says so) from one of i16
      npy-widen) "$PSCAN" scan "$WORK/in16.npy" "$WORK/out.npy" --widen --chunk-mb 1 -q 2>"$WORK/err" ;;
      npy-widen-rev) "$PSCAN" scan "$WORK/in16.npy" "$WORK/out.npy" --widen --reverse --chunk-mb 1 -q 2>"$WORK/err" ;;
    esac
    expect=$WORK/expect.txt
    [[ $how == *-rev ]] && expect=$WORK/expect-rev.txt
    [[ $how == npy-widen* ]] && expect=$WORK/expect-widen${how#npy-widen}.txt
    if python3 "$WORK/ref.py" npy2txt "$WORK/out.npy" >"$WORK/got.txt" 2>>"$WORK/err" && cmp -s "$WORK/got.txt" "$expect"
    then ok; else fail "writing .npy ($how): $(cat "$WORK/err")"; fi
  done
  # .npy sets the type; a .npy round trip through pscan keeps the bytes of a raw scan
  python3 "$WORK/ref.py" gen f32 1000 5 npy "$WORK/f.npy"
  python3 "$WORK/ref.py" expect f32 1000 5 "" "$WORK/expect.txt"
  "$PSCAN" scan "$WORK/f.npy" "$WORK/f-out.npy" -q 2>"$WORK/err" && python3 "$WORK/ref.py" npy2txt "$WORK/f-out.npy" \
    >"$WORK/got.txt" && cmp -s "$WORK/got.txt" "$WORK/expect.txt" && ok || fail ".npy without --type: $(cat "$WORK/err")"
  # a CSV column by number, with its header found (not a number) and written back
  printf 'price,qty\n1.5,2\n"2.25",3\n' >"$WORK/small.csv"
  "$PSCAN" scan "$WORK/small.csv" "$WORK/small-out.csv" --type f64 --column 1 -q 2>"$WORK/err"
  [[ $(tr '\n' ' ' 2>/dev/null <"$WORK/small-out.csv") == "price 1.5 3.75 " ]] && ok || fail "CSV --column 1: $(cat "$WORK/small-out.csv" "$WORK/err")"
  printf '1\n2\n' | "$PSCAN" scan - - --format csv --type i32 --header -q >"$WORK/got.txt" 2>"$WORK/err"
  [[ $(tr '\n' ' ' <"$WORK/got.txt") == "1 2 " ]] && ok || fail "CSV --header: $(cat "$WORK/got.txt" "$WORK/err")"
else
  echo "test_cli: python3 not found, format tests skipped"
fi

# the summary line: on stderr, unless --quiet
"$PSCAN" scan "$WORK/example.bin" "$WORK/s.bin" --type i32 2>"$WORK/err" >/dev/null
grep -q "pscan scan: 8 i32 elements (raw -> raw) in .* GB/s .*backend cpu" "$WORK/err" && ok ||
  fail "no summary line: $(cat "$WORK/err")"
"$PSCAN" scan "$WORK/u8.bin" "$WORK/s.bin" --format raw --type u8 --widen 2>"$WORK/err" >/dev/null
grep -q "pscan scan: 3 u8 elements widened to u64 (raw -> raw)" "$WORK/err" && ok ||
  fail "no widened summary line: $(cat "$WORK/err")"
"$PSCAN" scan "$WORK/example.bin" "$WORK/s.bin" --type i32 --quiet 2>"$WORK/err" >/dev/null
[[ ! -s $WORK/err ]] && ok || fail "--quiet still printed: $(cat "$WORK/err")"

# ---- bad input: a message on stderr, a non-zero exit, and no output file --------------------------------
expect_refusal() { # description in out args...
  local what=$1 in=$2 out=$3
  shift 3
  rm -f "$out"
  if "$PSCAN" scan "$in" "$out" "$@" >/dev/null 2>"$WORK/err"; then
    fail "$what: exit status 0"
  elif [[ ! -s $WORK/err ]]; then
    fail "$what: no message on stderr"
  elif [[ -e $out ]]; then
    fail "$what: left $out behind"
  elif compgen -G "$out.*" >/dev/null || compgen -G "$(dirname "$out")/.$(basename "$out")*" >/dev/null; then
    fail "$what: left a temporary file next to $out"
  else
    ok
  fi
}
head -c 10 /dev/urandom >"$WORK/ten.bin"
expect_refusal "unknown type" "$WORK/example.bin" "$WORK/bad.out" --type i128
expect_refusal "missing --type" "$WORK/example.bin" "$WORK/bad.out"
expect_refusal "size not a multiple of the element size" "$WORK/ten.bin" "$WORK/bad.out" --type i32
expect_refusal "xor on floats" "$WORK/example.bin" "$WORK/bad.out" --type f32 --op xor
expect_refusal "unknown operator" "$WORK/example.bin" "$WORK/bad.out" --type i32 --op mean
expect_refusal "unreadable input" "$WORK/does-not-exist.bin" "$WORK/bad.out" --type i32
expect_refusal "bad initial value" "$WORK/example.bin" "$WORK/bad.out" --type u8 --init banana
expect_refusal "--widen of max" "$WORK/example.bin" "$WORK/bad.out" --type i32 --widen --op max
grep -q -- "--op max does not widen" "$WORK/err" && ok || fail "--widen --op max message: $(cat "$WORK/err")"
expect_refusal "unwritable output directory" "$WORK/example.bin" "$WORK/no/such/dir/out.bin" --type i32

# bad data and formats: the line number, the reason, no output
printf '1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\nabc\n' >"$WORK/bad17.txt"
expect_refusal "a bad number in text" "$WORK/bad17.txt" "$WORK/bad.txt" --type i32
grep -q "line 17: 'abc' is not a valid i32" "$WORK/err" && ok || fail "bad text message: $(cat "$WORK/err")"
# the same in the fourth chunk (1 MiB of i32: 262144 numbers) of a pipeline (the reader thread fails while chunks are on the device and
# in the writer): the message with its line, no output, no hang
seq 1 800000 >"$WORK/bad-late.txt" && echo 'xyz' >>"$WORK/bad-late.txt"
expect_refusal "a bad number after three chunks" "$WORK/bad-late.txt" "$WORK/bad.txt" --type i32 --chunk-mb 1
grep -q "line 800001: 'xyz' is not a valid i32" "$WORK/err" && ok || fail "late bad text message: $(cat "$WORK/err")"
printf '1\n256\n' >"$WORK/range.txt"
expect_refusal "out of range for u8" "$WORK/range.txt" "$WORK/bad.txt" --type u8
grep -q "line 2: '256' is out of range for u8" "$WORK/err" && ok || fail "range message: $(cat "$WORK/err")"
printf '3 1 7 0\n' >"$WORK/numbers.dat"
expect_refusal "text with an unknown extension" "$WORK/numbers.dat" "$WORK/bad.out" --type i32
expect_refusal "text named .bin" "$WORK/numbers.dat" "$WORK/bad.bin" --type i32 --out-format raw
printf 'a,b\n1,2\n' >"$WORK/two.csv"
expect_refusal "CSV of two columns without --column" "$WORK/two.csv" "$WORK/bad.csv" --type i32
expect_refusal "CSV column name not in the header" "$WORK/two.csv" "$WORK/bad.csv" --type i32 --column c
expect_refusal "--column on raw input" "$WORK/example.bin" "$WORK/bad.out" --type i32 --column 2
expect_refusal "unknown --format" "$WORK/example.bin" "$WORK/bad.out" --type i32 --format parquet
if command -v python3 >/dev/null 2>&1; then
  python3 "$WORK/ref.py" npyhead "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }" "$WORK/big.npy"
  expect_refusal "big-endian .npy" "$WORK/big.npy" "$WORK/bad.npy"
  grep -q "big-endian" "$WORK/err" && ok || fail "big-endian message: $(cat "$WORK/err")"
  python3 "$WORK/ref.py" npyhead "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1), }" "$WORK/two-d.npy"
  expect_refusal "2-D .npy" "$WORK/two-d.npy" "$WORK/bad.npy"
  grep -q "2-D" "$WORK/err" && ok || fail "2-D message: $(cat "$WORK/err")"
  python3 "$WORK/ref.py" gen i32 4 1 npy "$WORK/i32.npy"
  expect_refusal ".npy of i32 with --type f32" "$WORK/i32.npy" "$WORK/bad.npy" --type f32
  head -c 140 "$WORK/i32.npy" >"$WORK/cut.npy"
  expect_refusal "truncated .npy" "$WORK/cut.npy" "$WORK/bad.npy"
fi

# a failed scan leaves an existing OUT as it was
printf 'precious' >"$WORK/keep.out"
"$PSCAN" scan "$WORK/ten.bin" "$WORK/keep.out" --type i32 >/dev/null 2>&1
[[ $(cat "$WORK/keep.out") == precious ]] && ok || fail "a refused scan changed an existing output file"

# and nothing anywhere was left half-written
leftovers=$(find "$WORK" -name '*.tmp.*' | head -3)
[[ -z $leftovers ]] && ok || fail "temporary files left behind: $leftovers"

finish
