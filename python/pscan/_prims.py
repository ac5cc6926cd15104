"""sort, histogram, segmented_scan, run_length_encode and expand over numpy, CuPy, PyTorch and any CUDA array.

The same pattern as _api.py: adapt the arrays (zero-copy, _arrays.py), check in Python only what the C library
cannot see (layout, sizes, devices, dtypes), run on the cached context of the input's device and current
stream, return arrays of the input's own library. Every input is read flattened (C order), as select does.
Counts the C library writes to device memory (runs, the expansion's total) are read back, which waits for
the GPU; sort, histogram and segmented_scan queue their work and return without waiting.
"""
from __future__ import annotations

import operator
from typing import Any, Optional, Tuple, Union

import numpy as np

from . import _arrays as A
from . import _context
from ._api import ArrayLike, _op_id
from ._errors import PscanTypeError, error
from ._lib import (ALGO_AUTO, HISTOGRAM_MAX_BINS, SCAN_EXCLUSIVE, SCAN_REVERSE, SEGMENTS_HEAD_FLAGS,
                   SEGMENTS_OFFSETS, SEGSCAN_CHECK_OFFSETS, SORT_DESCENDING, TYPE_IDS, ffi, lib)

_I64 = np.dtype(np.int64)
_UNSIGNED_ID = {4: TYPE_IDS["u32"], 8: TYPE_IDS["u64"]}  # count and index types by item size


def _same_device(b: A.Array, a: A.Array, what: str, n: Optional[int] = None, of: str = "x") -> None:
    if b.device != a.device:
        raise error("PSCAN_ERROR_INVALID_VALUE", f"{what} must be on {of}'s device")
    if n is not None and b.size != n:
        raise error("PSCAN_ERROR_INVALID_VALUE", f"{what} has {b.size} items, {of} has {n}")


def _payload(values: Any, a: A.Array, n: int, of: str = "keys") -> Optional[A.Array]:
    """The Array of a payload moved with its keys: n items of 1, 2, 4 or 8 bytes on a's device."""
    if values is None:
        return None
    v = A.adapt(values, "values")
    if v.dtype.itemsize not in (1, 2, 4, 8):
        raise error("PSCAN_ERROR_UNSUPPORTED_TYPE", f"values has dtype {v.dtype}; items of 1, 2, 4 or 8 bytes")
    _same_device(v, a, "values", n, of)
    return v


def _flags(flags: Any, a: A.Array, n: int) -> A.Array:
    f = A.adapt(flags, "flags")
    if f.dtype.itemsize != 1 or f.dtype.kind not in "bu":
        raise error("PSCAN_ERROR_UNSUPPORTED_TYPE", f"flags has dtype {f.dtype}; bool or uint8 expected")
    _same_device(f, a, "flags", n)
    return f


def _index(v: Any, what: str) -> int:
    """v as a Python int (numpy integers too); PscanValueError for anything else."""
    try:
        return operator.index(v)
    except TypeError:
        raise error("PSCAN_ERROR_INVALID_VALUE", f"{what} = {v!r} is not an integer") from None


def _count(c: A.Array) -> int:
    return int(c.obj[0])  # reading a device count waits for the GPU


# ---- sort ----------------------------------------------------------------------------------------------------
def sort(keys: ArrayLike, values: Any = None, descending: bool = False, begin_bit: int = 0, end_bit: int = 0, *,
         out: Any = None, values_out: Any = None) -> Any:
    """Stable radix sort of keys (flattened), as ``numpy.sort(keys, axis=None, kind="stable")``.

    values: a payload of keys' size (any dtype of 1, 2, 4 or 8 bytes) moved with its key; then the result is
    (keys, values). descending: the exact reverse order, still stable (equal keys keep their input order).
    begin_bit, end_bit: only bits [begin_bit, end_bit) of the order-preserving unsigned map of the key take
    part (end_bit 0: all of them); keys equal in those bits keep their input order. Floats: -0.0 sorts before
    +0.0, and NaNs after +inf in their input order (first when descending). out, values_out: 1-d arrays of
    keys' size to write into. The inputs are never changed (out of place; out may not overlap keys).

    Example::

        >>> pscan.sort(numpy.array([3, 1, 7, 0, 4, 1, 6, 3]))
        array([0, 1, 1, 3, 3, 4, 6, 7])
        >>> pscan.sort(numpy.array([3, 1, 7, 0, 4, 1, 6, 3]), values=numpy.arange(8), descending=True)
        (array([7, 6, 4, 3, 3, 1, 1, 0]), array([2, 6, 4, 0, 7, 1, 5, 3]))
    """
    a = A.adapt(keys, "keys")
    tid = A.type_of(a.dtype, "keys")
    n = a.size
    begin, end = _index(begin_bit, "begin_bit"), _index(end_bit, "end_bit")
    if begin < 0 or end < 0:
        raise error("PSCAN_ERROR_INVALID_VALUE", f"the bit range [{begin}, {end}) is negative")
    v = _payload(values, a, n)
    o = A.check_out(out, a, (n,), a.dtype) if out is not None else A.empty(a, (n,), a.dtype)
    vo = None
    if v is not None:
        vo = A.check_out(values_out, a, (n,), v.dtype, "values_out") if values_out is not None else \
            A.empty(a, (n,), v.dtype)
    desc = ffi.new("pscan_sort_desc *", [tid, v.dtype.itemsize if v is not None else 0,
                                         SORT_DESCENDING if descending else 0, begin, end, ALGO_AUTO])
    ctx, lock = _context.get(a.device, a.stream)
    with lock:
        lock.call("pscan_sort", lib.pscan_sort, ctx, desc, a.ptr, v.ptr if v is not None else ffi.NULL, n, o.ptr,
                  vo.ptr if vo is not None else ffi.NULL, ffi.NULL, 0)
    return o.obj if vo is None else (o.obj, vo.obj)


def argsort(keys: ArrayLike, descending: bool = False, begin_bit: int = 0, end_bit: int = 0, *,
            out: Any = None) -> Any:
    """The indices that sort keys (flattened), stably, as ``numpy.argsort(keys, axis=None, kind="stable")``:
    int64, of keys' array library and device. descending, begin_bit and end_bit as for sort (descending is the
    exact reverse order with equal keys still in input order, which numpy's argsort()[::-1] is not). out: a 1-d
    int64 array of keys' size to write into. It is sort with the payload 0, 1, ..., n - 1.

    Example::

        >>> pscan.argsort(numpy.array([3, 1, 7, 0, 4, 1, 6, 3]))
        array([3, 1, 5, 0, 7, 4, 6, 2])
    """
    a = A.adapt(keys, "keys")
    if out is not None:
        A.check_out(out, a, (a.size,), np.dtype(np.int64))
    index = A.arange(a, a.size, np.dtype(np.int64))
    _, order = sort(keys, values=index.obj, descending=descending, begin_bit=begin_bit, end_bit=end_bit,
                    values_out=out)
    return order


# ---- histogram -----------------------------------------------------------------------------------------------
def _bounds(lo: Any, hi: Any, dt: np.dtype):
    """The host buffers of range=(lo, hi): int64 for signed samples, uint64 for unsigned ones (exact), and
    the sample's own float type for floats (rounded to it, as numpy.float32(0.1) is)."""
    if dt.kind == "f":
        try:
            return np.asarray([lo], dtype=np.float64).astype(dt), np.asarray([hi], dtype=np.float64).astype(dt)
        except (TypeError, ValueError):
            raise error("PSCAN_ERROR_INVALID_VALUE", f"range = ({lo!r}, {hi!r}) is not two numbers") from None
    bt = np.dtype(np.int64 if dt.kind == "i" else np.uint64)
    return A.host_scalar(lo, bt, "range[0]"), A.host_scalar(hi, bt, "range[1]")


def histogram(x: ArrayLike, bins: Union[int, Any] = 10, range: Optional[Tuple[Any, Any]] = None, *,
              edges: Any = None, count_dtype: Any = np.uint64, out: Any = None,
              accumulate: bool = False) -> Tuple[Any, Any]:
    """Counts of x's items (flattened) in bins, as numpy.histogram: returns (counts, edges).

    Evenly spaced bins: ``bins`` (1 .. 65536) over ``range=(lo, hi)``, which is required (numpy defaults to
    x's min and max). Or given edges: ``edges=`` (or ``bins=`` an array, as numpy allows), an ascending array
    of x's dtype and device with bins + 1 items. count_dtype: uint64 (default), uint32, or int64 / int32 (the
    same counts, read signed: torch lacks unsigned types in places); counts wrap modulo 2^width.
    out: an array of bins counts of count_dtype to write into; accumulate=True adds to what it holds.

    Differences from numpy.histogram: every bin is half-open, the last too (numpy closes the last bin, so
    x == hi counts there; here it counts nowhere); NaNs and samples outside the bins are not counted; for
    integer samples the bounds must be integers and the bins are exact in integers (bin
    floor((v - lo) * bins / (hi - lo))); for float samples lo and hi are rounded to x's dtype and each bin is
    computed in that dtype, so a sample within rounding of an edge may land one bin off numpy's; no density
    or weights. The edges returned for range= are numpy.linspace(lo, hi, bins + 1) (float64, on the host,
    whatever x's device); for edges= they are the array passed.

    Example::

        >>> x = numpy.array([3, 1, 7, 0, 4, 1, 6, 3], numpy.int32)
        >>> pscan.histogram(x, 4, range=(0, 8))
        (array([3, 2, 1, 2], dtype=uint64), array([0., 2., 4., 6., 8.]))
        >>> pscan.histogram(x, edges=numpy.array([0, 1, 2, 4, 8], numpy.int32), count_dtype=numpy.int64)[0]
        array([1, 2, 2, 3])
    """
    a = A.adapt(x)
    tid = A.type_of(a.dtype, "x")
    cdt = np.dtype(count_dtype)
    if cdt.kind not in "iu" or cdt.itemsize not in _UNSIGNED_ID:
        raise error("PSCAN_ERROR_UNSUPPORTED_TYPE", f"count_dtype {cdt}: uint64, uint32, int64 or int32 expected")
    if edges is None and not isinstance(bins, (int, np.integer)):
        edges = bins
    lo = hi = None
    if edges is not None:
        e = A.adapt(edges, "edges")
        if e.dtype != a.dtype:
            raise PscanTypeError("PSCAN_ERROR_INVALID_VALUE", f"edges has dtype {e.dtype}, x has {a.dtype}")
        _same_device(e, a, "edges")
        if e.size < 2:
            raise error("PSCAN_ERROR_INVALID_VALUE", "edges needs at least 2 items (one bin)")
        nbins, edges_p, edges_ret = e.size - 1, e.ptr, edges
    else:
        if range is None:
            raise error("PSCAN_ERROR_INVALID_VALUE", "histogram needs range=(lo, hi) or edges=")
        nbins = _index(bins, "bins")
        lo, hi = _bounds(range[0], range[1], a.dtype)
        edges_p, edges_ret = ffi.NULL, None
    if not 1 <= nbins <= HISTOGRAM_MAX_BINS:
        raise error("PSCAN_ERROR_INVALID_VALUE", f"{nbins} bins; 1 to {HISTOGRAM_MAX_BINS}")
    if accumulate and out is None:
        raise error("PSCAN_ERROR_INVALID_VALUE", "accumulate=True adds to out=: pass it")
    o = A.check_out(out, a, (nbins,), cdt) if out is not None else A.empty(a, (nbins,), cdt)
    desc = ffi.new("pscan_histogram_desc *", [tid, _UNSIGNED_ID[cdt.itemsize], nbins,
                                              ffi.from_buffer(lo) if lo is not None else ffi.NULL,
                                              ffi.from_buffer(hi) if hi is not None else ffi.NULL,
                                              edges_p, 1 if accumulate else 0, ALGO_AUTO])
    ctx, lock = _context.get(a.device, a.stream)
    with lock:
        lock.call("pscan_histogram", lib.pscan_histogram, ctx, desc, a.ptr, a.size, o.ptr, ffi.NULL, 0)
    if edges_ret is None:
        edges_ret = np.linspace(float(lo[0]), float(hi[0]), nbins + 1)
    return (out if out is not None else o.obj), edges_ret


# ---- segmented scan ------------------------------------------------------------------------------------------
def segmented_scan(x: ArrayLike, offsets: Any = None, flags: Any = None, op: str = "sum", exclusive: bool = False,
                   reverse: bool = False, init: Any = None, *, out: Any = None, check_offsets: bool = False) -> Any:
    """A scan of x (flattened) that starts again at every segment, with init in front of each.

    Segments, one of: ``offsets``, segment_count + 1 ascending int64 or uint64 items (CSR: segment k is
    x[offsets[k]:offsets[k+1]], offsets[0] == 0, offsets[-1] == x.size, empty segments allowed); or
    ``flags``, a bool or uint8 array of x's size where nonzero starts a segment (item 0 always starts one).
    op, exclusive, reverse, init and out as for pscan.scan (out may be x: in place); the result is 1-d with
    x's dtype. Bad offsets raise PSCAN_ERROR_INVALID_VALUE on the CPU; on a GPU the offsets are checked on the
    device and a bad set writes nothing, but the call returns before that verdict unless check_offsets=True
    (which waits for it).

    Example::

        >>> x = numpy.array([3, 1, 7, 0, 4, 1, 6, 3])
        >>> pscan.segmented_scan(x, offsets=numpy.array([0, 3, 5, 8]))
        array([ 3,  4, 11,  0,  4,  1,  7, 10])
        >>> pscan.segmented_scan(x, flags=numpy.array([1, 0, 0, 1, 0, 1, 0, 0], bool), exclusive=True)
        array([0, 3, 4, 0, 0, 0, 1, 7])
    """
    opid = _op_id(op)
    a = A.adapt(x)
    tid = A.type_of(a.dtype, "x")
    n = a.size
    if (offsets is None) == (flags is None):
        raise error("PSCAN_ERROR_INVALID_VALUE", "pass exactly one of offsets= and flags=")
    if offsets is not None:
        s = A.adapt(offsets, "offsets")
        if s.dtype.kind not in "iu" or s.dtype.itemsize != 8:
            raise error("PSCAN_ERROR_UNSUPPORTED_TYPE", f"offsets has dtype {s.dtype}; int64 or uint64 expected")
        _same_device(s, a, "offsets")
        if s.size < 1:
            raise error("PSCAN_ERROR_INVALID_VALUE", "offsets needs segment_count + 1 items, at least [0]")
        kind, count = SEGMENTS_OFFSETS, s.size - 1
    else:
        s = _flags(flags, a, n)
        kind, count = SEGMENTS_HEAD_FLAGS, 0
    o = A.check_out(out, a, (n,), a.dtype) if out is not None else A.empty(a, (n,), a.dtype)
    ibuf = A.host_scalar(init, a.dtype, "init") if init is not None else None
    fl = (SCAN_EXCLUSIVE if exclusive else 0) | (SCAN_REVERSE if reverse else 0) | \
        (SEGSCAN_CHECK_OFFSETS if check_offsets else 0)
    desc = ffi.new("pscan_segscan_desc *", [tid, opid, fl, ALGO_AUTO,
                                            ffi.from_buffer(ibuf) if ibuf is not None else ffi.NULL, kind])
    ctx, lock = _context.get(a.device, a.stream)
    with lock:
        lock.call("pscan_segmented_scan", lib.pscan_segmented_scan, ctx, desc, a.ptr, o.ptr, n, s.ptr, count,
                  ffi.NULL, 0)
    return out if out is not None else o.obj


# ---- run-length encoding -------------------------------------------------------------------------------------
def run_length_encode(x: ArrayLike) -> Tuple[Any, Any]:
    """The runs of equal consecutive items of x (flattened): (values, lengths), one item per run.

    Items compare bit for bit (so -0.0 and +0.0 are different runs, and equal NaNs form one). lengths is
    int64 (the C library's uint64 counts, read signed so that torch can hold them). On a GPU the number of
    runs is read back (one synchronise).

    Example::

        >>> pscan.run_length_encode(numpy.array([5, 5, 5, 2, 2, 5, 5, 5], numpy.uint8))
        (array([5, 2, 5], dtype=uint8), array([3, 2, 3]))
    """
    a = A.adapt(x)
    tid = A.type_of(a.dtype, "x")
    n = a.size
    vo = A.empty(a, (n,), a.dtype)
    lo = A.empty(a, (n,), _I64)
    count = A.empty(a, (1,), _I64)
    desc = ffi.new("pscan_rle_desc *", [tid, ALGO_AUTO])
    ctx, lock = _context.get(a.device, a.stream)
    with lock:
        lock.call("pscan_run_length_encode", lib.pscan_run_length_encode, ctx, desc, a.ptr, n, vo.ptr,
                  ffi.cast("uint64_t *", lo.ptr), ffi.cast("uint64_t *", count.ptr), ffi.NULL, 0)
    k = _count(count)
    return vo.obj[:k], lo.obj[:k]


# ---- expand --------------------------------------------------------------------------------------------------
_TOTAL_LIMIT = 1 << 62  # a larger total is a saturated sum or negative counts read unsigned


def expand(counts: ArrayLike, values: Any = None, *, ranks: bool = False) -> Any:
    """Item i repeated counts[i] times, as numpy.repeat: its index, or its value from values.

    counts: integers of 4 or 8 bytes, read unsigned (uint32, uint64; int32 and int64 zero-copy, which must not
    be negative). Without values the result is the item indices, ``numpy.repeat(numpy.arange(n), counts)``
    (int64); with values (counts' size, items of 1, 2, 4 or 8 bytes) it is ``numpy.repeat(values, counts)``.
    ranks=True returns (result, ranks) too, ranks[j] being slot j's place within its item's run (int64).
    Load-balanced: an item with a huge count spreads over every thread. Two calls of the C library: the
    first finds the total (read back: one synchronise on a GPU), the second fills an output of that size.

    Example::

        >>> pscan.expand(numpy.array([2, 0, 3, 1]))
        array([0, 0, 2, 2, 2, 3])
        >>> pscan.expand(numpy.array([2, 0, 3, 1], numpy.uint32), values=numpy.array([10, 20, 30, 40]), ranks=True)
        (array([10, 10, 30, 30, 30, 40]), array([0, 1, 0, 1, 2, 0]))
    """
    c = A.adapt(counts, "counts")
    if c.dtype.kind not in "iu" or c.dtype.itemsize not in _UNSIGNED_ID:
        raise error("PSCAN_ERROR_UNSUPPORTED_TYPE", f"counts has dtype {c.dtype}; integers of 4 or 8 bytes expected")
    n = c.size
    v = _payload(values, c, n, "counts")
    vb = v.dtype.itemsize if v is not None else 0
    vp = v.ptr if v is not None else ffi.NULL
    desc = ffi.new("pscan_expand_desc *", [_UNSIGNED_ID[c.dtype.itemsize], TYPE_IDS["u64"], vb, ALGO_AUTO])
    total = A.empty(c, (1,), _I64)
    tp = ffi.cast("uint64_t *", total.ptr)
    ctx, lock = _context.get(c.device, c.stream)
    with lock:
        lock.call("pscan_expand", lib.pscan_expand, ctx, desc, c.ptr, vp, n, ffi.NULL, ffi.NULL, ffi.NULL, 0, tp,
                  ffi.NULL, 0)
    m = _count(total)
    if not 0 <= m < _TOTAL_LIMIT:
        raise error("PSCAN_ERROR_TOO_LARGE", "the counts sum to 2^62 or more (negative counts?)")
    idx = A.empty(c, (m,), _I64) if v is None else None
    vo = A.empty(c, (m,), v.dtype) if v is not None else None
    rk = A.empty(c, (m,), _I64) if ranks else None
    with lock:
        lock.call("pscan_expand", lib.pscan_expand, ctx, desc, c.ptr, vp, n, idx.ptr if idx is not None else ffi.NULL,
                  rk.ptr if rk is not None else ffi.NULL, vo.ptr if vo is not None else ffi.NULL, m, tp, ffi.NULL, 0)
    res = idx.obj if idx is not None else vo.obj
    return (res, rk.obj) if ranks else res
