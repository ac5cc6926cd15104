# cli_common.sh - what the CLI tests (test_cli*.sh) share, sourced as
#   source "$(dirname "$0")/cli_common.sh" NAME "$@"
# with the test's name and its arguments (the pscan binary first). Sets PSCAN and WORK (a fresh folder, removed
# on exit) and counts checks: ok, fail MESSAGE, expect NAME WANT GOT, refuse NAME EXIT ARGS... (a call that must
# fail with that exit status, say why on stderr, write nothing to stdout and leave no output file behind), and
# finish (the closing line "NAME: P passed, F failed", and the status: 1 on any failure).
CLI_TEST=$1
PSCAN=${2:?usage: $CLI_TEST.sh PATH/TO/pscan}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pscan-$CLI_TEST.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*" >&2
}
# expect NAME WANT GOT
expect() { [[ $3 == "$2" ]] && ok || fail "$1: got '$3', expected '$2'"; }
# words: the input's words on one line, single spaces
words() { tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }
# refuse NAME EXIT ARGS...: the outputs a refused call must not leave are $WORK/refused.bin and $WORK/refused2.bin
refuse() {
  local name=$1 want=$2
  shift 2
  rm -f "$WORK/refused.bin" "$WORK/refused2.bin"
  "$PSCAN" "$@" 2>"$WORK/err" >"$WORK/stdout"
  local rc=$?
  [[ $rc == "$want" ]] && ok || fail "$name: exit $rc, expected $want ($(cat "$WORK/err"))"
  [[ -s $WORK/err ]] && ok || fail "$name: no message"
  [[ ! -s $WORK/stdout ]] && ok || fail "$name: wrote to stdout"
  [[ ! -e $WORK/refused.bin && ! -e $WORK/refused2.bin ]] && ok || fail "$name: left an output behind"
}
finish() {
  echo "$CLI_TEST: $passed passed, $failed failed"
  [[ $failed == 0 ]]
}
