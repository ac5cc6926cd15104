"""recurrence, recurrence2 (first- and second-order linear recurrences) and polyval (Horner's rule as the
recurrence y = x y + c) over numpy, CuPy, PyTorch and any
CUDA array: the pattern of _prims.py (adapt zero-copy, check what only Python sees, run on the first array's
context and stream, return an array of its library). Inputs are read flattened; the work is queued, not waited.
"""
from __future__ import annotations

from typing import Any, Tuple

from . import _arrays as A
from . import _context
from ._api import ArrayLike
from ._bykey import init_buffer
from ._errors import PscanTypeError, error
from ._lib import ALGO_AUTO, SCAN_REVERSE, ffi, lib
from ._prims import _same_device


# ---- linear recurrences --------------------------------------------------------------------------------------
def _recurrence_arrays(first: Any, others: Tuple[Tuple[Any, str], ...], out: Any, name: str = "a"):
    a = A.adapt(first, name)
    tid = A.type_of(a.dtype, name)  # f32 and f64 only: the C library says PSCAN_ERROR_UNSUPPORTED_TYPE otherwise
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
        lock.call("pscan_recurrence", lib.pscan_recurrence, ctx, desc, a_.ptr, b_.ptr, y.ptr, n, ffi.NULL, 0)
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
        lock.call("pscan_recurrence2", lib.pscan_recurrence2, ctx, desc, a_.ptr, b_.ptr, c_.ptr, y.ptr, n, ffi.NULL, 0)
    return out if out is not None else y.obj


def polyval(c: ArrayLike, x: Any, reverse: bool = False, *, out: Any = None) -> Any:
    """Every Horner prefix of the polynomial with coefficients c at the point x, as one parallel scan of the
    recurrence values[k] = x * values[k-1] + c[k] from values[-1] = 0: values[k] = c[0] x^k + c[1] x^(k-1) +
    ... + c[k] (coefficients highest degree first, as numpy.polyval takes them), so values[-1] is
    numpy.polyval(c, x). reverse=True takes them lowest degree first (c[k] multiplies x^k, as
    numpy.polynomial.polynomial.polyval): values[k] = c[k] + c[k+1] x + ... + c[n-1] x^(n-1-k), and values[0] is
    the polynomial's value.

    c: float32 or float64 (read flattened); x: a scalar exactly representable in c's dtype (numpy.float32(0.1),
    not 0.1, for float32). out: a 1-d array of c's size and dtype, which may be c itself. One polynomial at many
    points is a map, not a scan: call numpy.polyval for that. Floats: the parallel order of evaluation differs
    from Horner's loop by rounding.

    Example::

        >>> pscan.polyval(numpy.array([1.0, 2.0, 3.0]), 2.0)          # x^2 + 2x + 3 at 2
        array([ 1.,  4., 11.])
        >>> pscan.polyval(numpy.array([1.0, 2.0, 3.0]), 2.0, reverse=True)  # 1 + 2x + 3x^2 at 2
        array([17.,  8.,  3.])
    """
    (c_,), tid, n, y = _recurrence_arrays(c, (), out, "c")
    if x is None:
        raise error("PSCAN_ERROR_NULL_POINTER", "x: the point is required")
    xp, xbuf = init_buffer(x, c_.dtype, "x")
    desc = ffi.new("pscan_polyval_desc *", [tid, SCAN_REVERSE if reverse else 0, ALGO_AUTO, xp])
    ctx, lock = _context.get(c_.device, c_.stream)
    with lock:
        lock.call("pscan_polyval", lib.pscan_polyval, ctx, desc, c_.ptr, y.ptr, n, ffi.NULL, 0)
    return out if out is not None else y.obj
