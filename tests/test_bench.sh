#!/usr/bin/env bash
# test_bench.sh PSCAN [BACKEND] - `pscan bench` on every primitive (OpenCL: those with a second input or output) (and every case of histogram, sort, select and
# partition), small sizes: the CSV has the columns pscan bench --csv promises, one copy row and at least one pscan
# row per size, positive bandwidths, the primitive named in its column, the case in the kind column; a bad
# --primitive, a case or type a primitive does not have, and scan-only flags on another primitive are usage errors
# (--exclusive and --reverse also go to segscan and scan_by_key).
set -u
PSCAN=$1
BACKEND=${2:-cpu}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
fail=0
HEADER="backend,device,algo,type,op,kind,direction,n,time_us,gbps,of_copy,of_cub,cub_time_us,in_place,spread,primitive"
# prim:type[:case]; a case is named in the kind column
SPECS=""
for prim in scan reduce select partition segscan scan_by_key reduce_by_key rle; do
    for type in i32 u8 f64; do SPECS="$SPECS $prim:$type"; done
done
SPECS="$SPECS expand:u32 expand:u64" # expand's counts
SPECS="$SPECS histogram:u32:uniform-256 histogram:u32:equal-256 histogram:u32:uniform-65536"
SPECS="$SPECS sort:u32:keys sort:u64:keys sort:u32:pairs sort:u32:keys-equal sort:u64:keys-few sort:u32:keys-low"
for prim in select partition; do # the predicate's case by name, the flags' on the types above
    SPECS="$SPECS $prim:i32:greater"
    for type in i32 u8 f64; do SPECS="$SPECS $prim:$type:flags"; done
done
# the widened scan (--widen; its kind column says so)
SPECS="$SPECS scan:i32:widen-inclusive scan:u8:widen-exclusive scan:f32:widen-inclusive"
# the segmented scans' direction and form (the direction column says reverse, the kind column exclusive)
SPECS="$SPECS segscan:i32:reverse-exclusive scan_by_key:f64:reverse-exclusive segscan:u8:reverse"
if [ "$BACKEND" = opencl ]; then
    # the primitives with a second input or output, whose buffers the bench allocates apart on OpenCL (cl_mem
    # handles take no offsets); the rest run in the OpenCL tests' own tables
    "$PSCAN" info 2>/dev/null | grep -q "^opencl: compiled in, device" || { echo "test_bench: no OpenCL device"; exit 77; }
    SPECS="select:i32:flags partition:u8:flags sort:u32:pairs segscan:i32 scan_by_key:f64:reverse-exclusive
           segscan:u8:reverse reduce_by_key:i32 rle:u8"
fi
for spec in $SPECS; do
    IFS=: read -r prim type case <<<"$spec"
    args=(--primitive "$prim" --type "$type")
    want=$case dir=forward
    case $case in
    widen-inclusive) args+=(--widen) ;;
    widen-exclusive) args+=(--widen --exclusive) ;;
    reverse-exclusive) args+=(--reverse --exclusive) want=exclusive dir=reverse ;;
    reverse) args+=(--reverse) want=inclusive dir=reverse ;;
    ?*) args+=(--case "$case") ;;
    esac
    if ! "$PSCAN" bench --backend "$BACKEND" "${args[@]}" --min-log2 10 --max-log2 12 \
        --reps 3 --csv "$DIR/$prim.csv" >"$DIR/out.txt" 2>&1; then
        echo "FAIL: bench ${args[*]} exited non-zero:"; cat "$DIR/out.txt"; fail=1; continue
    fi
    if [ "$(head -1 "$DIR/$prim.csv")" != "$HEADER" ]; then
        echo "FAIL: $spec: CSV header is '$(head -1 "$DIR/$prim.csv")'"; fail=1; continue
    fi
    # per n: exactly one copy row, >= 1 other row; every row: gbps > 0, primitive column = prim, type = type,
    # kind = the case (when there is one)
    if ! awk -F, -v prim="$prim" -v type="$type" -v want="$want" -v dir="$dir" '
        NR == 1 { next }
        { if ($16 != prim || $4 != type || !($10 > 0) || (want != "" && $6 != want) || ($3 != "copy" && $7 != dir)) {
            print "bad row: " $0; bad = 1 }
          if ($3 == "copy") copies[$8]++; else others[$8]++ }
        END { for (n = 1024; n <= 4096; n *= 2)
                if (copies[n] != 1 || others[n] < 1) { print "n=" n ": " copies[n] + 0 " copy rows, " others[n] + 0 " others"; bad = 1 }
              exit bad }' "$DIR/$prim.csv"; then
        echo "FAIL: $spec: rows above"; fail=1
    fi
done
check_usage() {
    "$PSCAN" bench --backend "$BACKEND" "$@" --max-log2 10 >"$DIR/out.txt" 2>&1
    local rc=$?
    if [ $rc -ne 2 ]; then echo "FAIL: bench $* exited $rc, expected 2 (usage)"; fail=1; fi
}
check_usage --primitive sort-of
check_usage --primitive reduce --exclusive
check_usage --primitive rle --reverse
check_usage --primitive segscan --in-place
check_usage --primitive scan_by_key --widen
check_usage --primitive select --in-place
check_usage --primitive expand --type f32
check_usage --primitive histogram --type i32
check_usage --primitive sort --type u8
check_usage --primitive sort --case uniform-256
check_usage --primitive scan --case keys
check_usage --primitive scan --widen --op max
check_usage --primitive scan --widen --in-place
check_usage --primitive reduce --widen
check_usage --primitive reduce --case flags
check_usage --primitive select --case keys
check_usage --primitive rle --op max
[ $fail = 0 ] && echo "test_bench: all passed"
exit $fail
