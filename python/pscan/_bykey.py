"""scan_by_key and reduce_by_key over numpy, CuPy, PyTorch and any CUDA array.

The pattern of _prims.py: adapt the arrays (zero-copy), check in Python only what the C library cannot see
(layout, sizes, devices), run on the cached context of the first array's device and current stream, return
arrays of its library. Every input is read flattened (C order). reduce_by_key reads the number of runs back
(one synchronise on a GPU); scan_by_key queues its work and returns.
"""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from . import _arrays as A
from . import _context
from ._api import ArrayLike, _op_id
from ._lib import ALGO_AUTO, SCAN_EXCLUSIVE, SCAN_REVERSE, TYPE_IDS, ffi, lib
from ._prims import _I64, _count, _same_device


def _key_type(k: A.Array) -> int:
    """pscan's type for keys: bool keys are bytes (u8); floats reach the C library, which refuses them
    (PSCAN_ERROR_INVALID_VALUE: keys compare bit for bit, and -0.0 == +0.0 would make that a trap)."""
    if k.dtype == np.bool_:
        return TYPE_IDS["u8"]
    return A.type_of(k.dtype, "keys")


def init_buffer(init: Any, dt: np.dtype, what: str = "init"):
    """(pointer, buffer) of an optional host scalar of dtype dt, exactly representable."""
    if init is None:
        return ffi.NULL, None
    buf = A.host_scalar(init, dt, what)
    return ffi.from_buffer(buf), buf


# ---- scan by key ---------------------------------------------------------------------------------------------
def scan_by_key(keys: ArrayLike, x: ArrayLike, op: str = "sum", exclusive: bool = False, reverse: bool = False,
                init: Any = None, *, out: Any = None) -> Any:
    """A scan of x (flattened) that starts again wherever the key changes: a segmented scan whose segments are
    the runs of equal consecutive keys, with init in front of each run.

    keys: x's size, on x's device, any integer dtype or bool (compared bit for bit; float keys raise
    PSCAN_ERROR_INVALID_VALUE). op, exclusive, reverse, init and out as for pscan.scan (out may be x: in
    place; never keys). The result is 1-d with x's dtype.

    Example::

        >>> keys = numpy.array([5, 5, 5, 2, 2, 5, 5, 5])
        >>> pscan.scan_by_key(keys, numpy.array([3, 1, 7, 0, 4, 1, 6, 3]))
        array([ 3,  4, 11,  0,  4,  1,  7, 10])
        >>> pscan.scan_by_key(keys, numpy.array([3, 1, 7, 0, 4, 1, 6, 3]), exclusive=True, init=100)
        array([100, 103, 104, 100, 100, 100, 101, 107])
    """
    opid = _op_id(op)
    a = A.adapt(x)
    tid = A.type_of(a.dtype, "x")
    n = a.size
    k = A.adapt(keys, "keys")
    _same_device(k, a, "keys", n)
    ktid = _key_type(k)
    o = A.check_out(out, a, (n,), a.dtype) if out is not None else A.empty(a, (n,), a.dtype)
    ip, ibuf = init_buffer(init, a.dtype)
    flags = (SCAN_EXCLUSIVE if exclusive else 0) | (SCAN_REVERSE if reverse else 0)
    desc = ffi.new("pscan_scan_by_key_desc *", [ktid, tid, opid, flags, ALGO_AUTO, ip])
    ctx, lock = _context.get(a.device, a.stream)
    with lock:
        lock.call("pscan_scan_by_key", lib.pscan_scan_by_key, ctx, desc, k.ptr, a.ptr, o.ptr, n, ffi.NULL, 0)
    return out if out is not None else o.obj


# ---- reduce by key -------------------------------------------------------------------------------------------
def reduce_by_key(keys: ArrayLike, values: ArrayLike, op: str = "sum", init: Any = None, *, keys_out: Any = None,
                  values_out: Any = None) -> Tuple[Any, Any]:
    """One result per run of equal consecutive keys: (the run's key, init + the run's values combined).

    keys: any integer dtype or bool (bit for bit; floats raise PSCAN_ERROR_INVALID_VALUE); values: keys' size
    and device, one of pscan's dtypes. op and init as for pscan.reduce. keys_out, values_out: 1-d arrays of
    keys' size to write into (their first runs items; the rest is left as it was). Returns (keys, values), each
    as long as the number of runs, which is read back (one synchronise on a GPU). Like
    ``itertools.groupby``, not SQL's GROUP BY: equal keys that are not adjacent are separate runs (sort first
    for that: pscan.sort(keys, values=...)).

    Example::

        >>> pscan.reduce_by_key(numpy.array([5, 5, 5, 2, 2, 5, 5, 5]), numpy.array([3, 1, 7, 0, 4, 1, 6, 3]))
        (array([5, 2, 5]), array([11,  4, 10]))
    """
    opid = _op_id(op)
    k = A.adapt(keys, "keys")
    ktid = _key_type(k)
    n = k.size
    v = A.adapt(values, "values")
    tid = A.type_of(v.dtype, "values")
    _same_device(v, k, "values", n, "keys")
    ko = A.check_out(keys_out, k, (n,), k.dtype, "keys_out") if keys_out is not None else A.empty(k, (n,), k.dtype)
    vo = A.check_out(values_out, k, (n,), v.dtype, "values_out") if values_out is not None else \
        A.empty(k, (n,), v.dtype)
    count = A.empty(k, (1,), _I64)
    ip, ibuf = init_buffer(init, v.dtype)
    desc = ffi.new("pscan_reduce_by_key_desc *", [ktid, tid, opid, ALGO_AUTO, ip])
    ctx, lock = _context.get(k.device, k.stream)
    with lock:
        lock.call("pscan_reduce_by_key", lib.pscan_reduce_by_key, ctx, desc, k.ptr, v.ptr, n, ko.ptr, vo.ptr,
                  ffi.cast("uint64_t *", count.ptr), ffi.NULL, 0)
    r = _count(count)
    return ko.obj[:r], vo.obj[:r]
