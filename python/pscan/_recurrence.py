"""recurrence and recurrence2 (first- and second-order linear recurrences) over numpy, CuPy, PyTorch and any
CUDA array: the pattern of _prims.py (adapt zero-copy, check what only Python sees, run on the first array's
context and stream, return an array of its library). Inputs are read flattened; the work is queued, not waited.
"""
from __future__ import annotations

from typing import Any, Tuple

from . import _arrays as A
from . import _context
from ._api import ArrayLike
from ._bykey import init_buffer
from ._errors import PscanTypeError, check
from ._lib import ALGO_AUTO, SCAN_REVERSE, ffi, lib
from ._prims import _same_device


# ---- linear recurrences --------------------------------------------------------------------------------------
def _recurrence_arrays(first: Any, others: Tuple[Tuple[Any, str], ...], out: Any):
    a = A.adapt(first, "a")
    tid = A.type_of(a.dtype, "a")  # f32 and f64 only: the C library says PSCAN_ERROR_UNSUPPORTED_TYPE otherwise
    n = a.size
    arrays = [a]
    for arr, what in others:
        b = A.adapt(arr, what)
        _same_device(b, a, what, n, "a")
        if b.dtype != a.dtype:
            raise PscanTypeError("PSCAN_ERROR_INVALID_VALUE", f"{what} has dtype {b.dtype}, a has {a.dtype}")
        arrays.append(b)
    y = A.check_out(out, a, (n,), a.dtype) if out is not None else A.empty(a, (n,), a.dtype)
    return arrays, tid, n, y


def recurrence(a: ArrayLike, b: ArrayLike, y0: Any = None, reverse: bool = False, *, out: Any = None) -> Any:
    """The first-order linear recurrence y[i] = a[i] * y[i-1] + b[i] from y[-1] = y0 (0 by default), as a
    parallel scan of the affine maps x -> a x + b; reverse=True runs it from the end: y[i] = a[i] * y[i+1] +
    b[i] from y[n] = y0.

    a, b: float32 or float64 (the same dtype), the same size and device (read flattened); y0 exactly
    representable in that dtype. out: a 1-d array of a's size and dtype, which may be a or b themselves (in
    place). Floats: the parallel order of evaluation differs from a serial loop's by rounding. CUDA: raises
    PSCAN_ERROR_UNSUPPORTED_ALGORITHM where the library has no GPU recurrence yet.

    Example::

        >>> pscan.recurrence(numpy.full(4, 2.0), numpy.ones(4))
        array([ 1.,  3.,  7., 15.])
        >>> pscan.recurrence(numpy.full(4, 2.0), numpy.ones(4), y0=1.0, reverse=True)
        array([31., 15.,  7.,  3.])
    """
    (a_, b_), tid, n, y = _recurrence_arrays(a, ((b, "b"),), out)
    yp, ybuf = init_buffer(y0, a_.dtype, "y0")
    desc = ffi.new("pscan_recurrence_desc *", [tid, SCAN_REVERSE if reverse else 0, ALGO_AUTO, yp])
    ctx, lock = _context.get(a_.device, a_.stream)
    with lock:
        check(lib.pscan_recurrence(ctx, desc, a_.ptr, b_.ptr, y.ptr, n, ffi.NULL, 0), "pscan_recurrence")
    return out if out is not None else y.obj


def recurrence2(a: ArrayLike, b: ArrayLike, c: ArrayLike, y1: Any = None, y2: Any = None, reverse: bool = False,
                *, out: Any = None) -> Any:
    """The second-order linear recurrence y[i] = a[i] * y[i-1] + b[i] * y[i-2] + c[i] from y[-1] = y1 and
    y[-2] = y2 (0 by default); reverse=True: y[i] = a[i] * y[i+1] + b[i] * y[i+2] + c[i] from y[n] = y1,
    y[n+1] = y2. A scan of the affine maps (y[i-1], y[i-2]) -> (a y[i-1] + b y[i-2] + c, y[i-1]).

    a, b, c: float32 or float64, one dtype, size and device; out as for recurrence (may be a, b or c).

    Example (Fibonacci)::

        >>> pscan.recurrence2(numpy.ones(5), numpy.ones(5), numpy.zeros(5), y1=1.0)
        array([1., 2., 3., 5., 8.])
    """
    (a_, b_, c_), tid, n, y = _recurrence_arrays(a, ((b, "b"), (c, "c")), out)
    p1, buf1 = init_buffer(y1, a_.dtype, "y1")
    p2, buf2 = init_buffer(y2, a_.dtype, "y2")
    desc = ffi.new("pscan_recurrence2_desc *", [tid, SCAN_REVERSE if reverse else 0, ALGO_AUTO, p1, p2])
    ctx, lock = _context.get(a_.device, a_.stream)
    with lock:
        check(lib.pscan_recurrence2(ctx, desc, a_.ptr, b_.ptr, c_.ptr, y.ptr, n, ffi.NULL, 0), "pscan_recurrence2")
    return out if out is not None else y.obj
