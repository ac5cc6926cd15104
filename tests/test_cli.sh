#!/usr/bin/env bash
# test_cli.sh - `pscan scan` as a user meets it: the worked example, chunked streaming against one-chunk
# scans, backends against each other, and bad input (clear message, non-zero exit, no output left behind).
#   bash test_cli.sh PATH/TO/pscan
# Prints "test_cli: P passed, F failed"; exits 1 on any failure.
set -uo pipefail

PSCAN=${1:?usage: test_cli.sh PATH/TO/pscan}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pscan-cli-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*" >&2
}

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
  fi
done

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
expect_refusal "unwritable output directory" "$WORK/example.bin" "$WORK/no/such/dir/out.bin" --type i32

# a failed scan leaves an existing OUT as it was
printf 'precious' >"$WORK/keep.out"
"$PSCAN" scan "$WORK/ten.bin" "$WORK/keep.out" --type i32 >/dev/null 2>&1
[[ $(cat "$WORK/keep.out") == precious ]] && ok || fail "a refused scan changed an existing output file"

# and nothing anywhere was left half-written
leftovers=$(find "$WORK" -name '*.tmp.*' | head -3)
[[ -z $leftovers ]] && ok || fail "temporary files left behind: $leftovers"

echo "test_cli: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
