"""scan, reduce, select (compact) and partition over numpy, CuPy, PyTorch and any CUDA array.

Every function adapts its arrays (zero-copy, _arrays.py), checks in Python only what the C library cannot
see (layout, shapes, devices, dtypes), runs on the cached context of the input's device and current stream,
and returns an array of the input's own library. Statuses of the C library come back as PscanError.

Batches: a scan along an axis of an N-d array is one C call, wherever the array lives: a segmented scan whose
segments are the rows (CSR offsets 0, m, 2m, ...). On the host the offsets are a numpy array made per call; on a
CUDA device they are uploaded once per context and row length and kept with the context (_context.extras), so
a batched scan costs one launch, no allocation. reduce along an axis of short rows is that segmented scan into a
temporary, each row's last element gathered (reduce by segments is not in the C library); of long rows, one C
call per row, in a loop here.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import numpy as np

from . import _arrays as A
from . import _context
from . import _user
from ._errors import PscanError, check, error
from ._lib import (ALGO_AUTO, HAVE_CUDA, OP_IDS, PREDS, SCAN_EXCLUSIVE, SCAN_REVERSE, SCAN_WIDEN, SEGMENTS_OFFSETS,
                   ffi, lib)

DTypeLike = Any
ArrayLike = Any


def _op_id(op: str) -> int:
    oid = OP_IDS.get(op)
    if oid is None:
        raise error("PSCAN_ERROR_INVALID_VALUE", f"op {op!r} is not one of {', '.join(OP_IDS)}")
    return oid


def _axis(shape: Tuple[int, ...], axis: Optional[int]) -> Optional[int]:
    """axis normalised to 0..ndim-1 (None stays None: the flattened array)."""
    if axis is None:
        return None
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise error("PSCAN_ERROR_INVALID_VALUE", "one axis at a time")
        axis = axis[0]
    nd = len(shape)
    ax = int(axis) + nd if int(axis) < 0 else int(axis)
    if not 0 <= ax < nd:
        raise error("PSCAN_ERROR_INVALID_VALUE", f"axis {axis} is out of bounds for an array of {nd} dimensions")
    return ax


def _rows(shape: Tuple[int, ...], ax: Optional[int]) -> Tuple[int, int]:
    """(rows, row length) of the problem: the flattened array is one row; the last axis gives size/m rows."""
    size = 1
    for s in shape:
        size *= s
    if ax is None:
        return 1, size
    m = shape[-1]
    rows = 1
    for s in shape[:-1]:
        rows *= s
    return rows, m


def _widened_dtypes() -> dict:
    """Each pscan dtype and the one PSCAN_SCAN_WIDEN accumulates it in (pscan_type_widened, the C list's rule)."""
    by_id = {tid: dt for dt, tid in A._TYPE_OF.items()}
    return {dt: by_id[int(lib.pscan_type_widened(tid))] for dt, tid in A._TYPE_OF.items()}


_WIDENED = _widened_dtypes()


def _widens(a: A.Array, dt: np.dtype, op: str, ax: Optional[int]) -> bool:
    """Whether a scan of a into dt is PSCAN_SCAN_WIDEN (no copy: the load converts): a sum or product of one row
    (the batched rows go through the segmented scan, which reads one type) into the 64-bit type of a's kind."""
    wide = _WIDENED.get(a.dtype)  # None for a dtype pscan has not (bool): and numpy says None == float64
    if op not in ("sum", "product") or dt == a.dtype or wide is None or wide != dt:
        return False
    return ax is None or _rows(a.shape, ax)[0] == 1


def _prepare(x: Any, axis: Optional[int], dtype: DTypeLike, op: str = ""):
    """(input Array, axis normalised, result dtype, input type id, moved, widen): converts x to dtype (unless the
    scan widens it as it reads: widen) and moves a non-last axis to the end (copies, the only ones pscan makes)
    so that the problem is rows of the last axis. x may be adapted already (cumsum's and cumprod's)."""
    a = x if isinstance(x, A.Array) else A.adapt(x)
    ax = _axis(a.shape, axis)
    dt = np.dtype(dtype) if dtype is not None else a.dtype
    tid = A.type_of(dt, "the result" if dtype is not None else "x")
    widen = _widens(a, dt, op, ax)
    if widen:
        tid = A.type_of(a.dtype)
    elif dt != a.dtype:
        a = A.astype(a, dt)
    moved = ax is not None and ax != len(a.shape) - 1
    if moved:
        a = A.axis_last(a, ax)
    return a, ax, dt, tid, moved, widen


_DESCS: dict = {}


_OFFSETS_KEPT = 16  # row lengths whose device offsets a context keeps (the oldest is freed beyond)


def _row_offsets(a: A.Array, ctx, rows: int, m: int):
    """(pointer, keep-alive) to rows + 1 uint64 offsets 0, m, 2m, ... in a's memory, for a segmented scan of
    rows of m. Host: a numpy array. Device: a buffer kept per (context, m), grown to twice the rows when too
    short (a prefix of longer offsets is valid: the segmented scan reads segment_count + 1 of them), allocated,
    uploaded and freed on the context's stream, so the calls that read it are ordered after the upload and
    before the free. Call with the context's lock held."""
    if a.device == A.HOST:
        offs = np.arange(0, rows * m + 1, m, dtype=np.uint64)
        return ffi.from_buffer(offs), offs
    kept = _context.extras(ctx)["offsets"]
    hit = kept.get(m)
    if hit is None or hit[1] < rows:
        cap = max(rows, 2 * hit[1] if hit else 0)
        host = np.arange(0, (cap + 1) * m, m, dtype=np.uint64)  # cap + 1 offsets (m > 0)
        p = ffi.new("void **")
        check(lib.pscan_memory_alloc(ctx, host.nbytes, p), "pscan_memory_alloc (row offsets)")
        s = lib.pscan_memory_upload(ctx, p[0], ffi.from_buffer(host), host.nbytes)
        if s:
            lib.pscan_memory_free(ctx, p[0])
            check(s, "pscan_memory_upload (row offsets)")
        if hit is not None:
            lib.pscan_memory_free(ctx, kept.pop(m)[0])
        elif len(kept) >= _OFFSETS_KEPT:
            oldest = next(iter(kept))
            lib.pscan_memory_free(ctx, kept.pop(oldest)[0])
        hit = kept[m] = (p[0], cap, host)  # the host copy stays: the upload may still read it
    return hit[0], None


def _scan_desc(tid: int, opid: int, flags: int, init: Any, dt: np.dtype):
    """(desc, the init buffer it points to): descriptors without init are made once and shared (read-only)."""
    if init is None:
        key = (tid, opid, flags)
        desc = _DESCS.get(key)
        if desc is None:
            desc = _DESCS[key] = ffi.new("pscan_scan_desc *", [tid, opid, flags, ALGO_AUTO, ffi.NULL])
        return desc, None
    ibuf = A.host_scalar(init, dt, "init")
    return ffi.new("pscan_scan_desc *", [tid, opid, flags, ALGO_AUTO, ffi.from_buffer(ibuf)]), ibuf


def scan(x: ArrayLike, op: Union[str, "_user.Operator"] = "sum", axis: Optional[int] = None,
         dtype: DTypeLike = None, exclusive: bool = False, reverse: bool = False, init: Any = None,
         out: Any = None) -> Any:
    """Scan (cumulative sum, product, min, max, and, or, xor) of x, as numpy.cumsum, on x's own device.

    x: a numpy array (CPU backend), a CuPy array, a torch tensor (CPU or CUDA), or any object with
    ``__cuda_array_interface__`` or DLPack; C-contiguous. The result is an array of the same library, on the
    same device; CUDA work is queued on the array's current stream and not waited for.

    op: "sum", "product", "min", "max", "and", "or", "xor" (the last three for integers). Integer sums wrap.
        Or a pscan.Operator, an element type and combine of your own (axis=None, no dtype; see pscan.Operator).
    axis: None scans the flattened array (the result is 1-d, as numpy.cumsum); an axis scans along it, each
        row apart (the last axis in place; another axis through a transposed copy).
    dtype: the result's dtype. A sum or product into the 64-bit type of x's kind (int8/16/32 -> int64,
        uint8/16/32 -> uint64, float32 -> float64) converts as it reads, with no copy (PSCAN_SCAN_WIDEN; one row,
        on the CPU and CUDA); any other dtype converts x first (a copy). Without it the result has x's dtype
        (unlike numpy.cumsum, which widens small integers to int64: pass dtype=numpy.int64 for numpy's result).
    exclusive: out[i] combines the elements before i (out[0] = init). reverse: scan from the end.
    init: the value the scan starts from (the operator's identity by default); must fit the dtype exactly.
    out: an array of the result's shape, dtype and device to write into (may be x itself: in place).

    Example::

        >>> pscan.scan(numpy.array([3, 1, 7, 0, 4, 1, 6, 3], numpy.int32))
        array([ 3,  4, 11, 11, 15, 16, 22, 25], dtype=int32)
        >>> pscan.scan(numpy.array([3, 1, 7, 0, 4, 1, 6, 3]), exclusive=True)
        array([ 0,  3,  4, 11, 11, 15, 16, 22])
        >>> pscan.scan(numpy.array([[1, 2, 3], [4, 5, 6]]), op="max", axis=1, reverse=True)
        array([[3, 3, 3],
               [6, 6, 6]])
    """
    if isinstance(op, _user.Operator):
        return _user.scan(x, op, axis, dtype, exclusive, reverse, init, out)
    opid = _op_id(op)
    flags = (SCAN_EXCLUSIVE if exclusive else 0) | (SCAN_REVERSE if reverse else 0)
    if axis is None and init is None:
        res = _scan_whole(x, op, opid, dtype, flags, out, False)
        if res is not None:
            return res
    a, ax, dt, tid, moved, widen = _prepare(x, axis, dtype, op)
    shape = (a.size,) if ax is None else a.shape
    rows, m = _rows(a.shape, ax)
    if out is not None and not moved:
        o = A.check_out(out, a, shape, dt)
    else:
        o = A.empty(a, shape, dt)
    flags |= SCAN_WIDEN if widen else 0
    desc, ibuf = _scan_desc(tid, opid, flags, init, dt)
    ctx, lock = _context.get(a.device, a.stream)
    with lock:
        if rows == 1:  # the common case: one call, no pointer arithmetic
            lock.call("pscan_scan", lib.pscan_scan, ctx, desc, a.ptr, o.ptr, m, ffi.NULL, 0)
        elif rows and m:  # a batch of rows: one segmented scan, the rows its segments
            offsets, keep = _row_offsets(a, ctx, rows, m)
            seg = ffi.new("pscan_segscan_desc *", [tid, opid, flags, ALGO_AUTO, desc.init, SEGMENTS_OFFSETS])
            lock.call("pscan_segmented_scan", lib.pscan_segmented_scan, ctx, seg, a.ptr, o.ptr, rows * m, offsets,
                      rows, ffi.NULL, 0)
            del keep
    if not moved:
        return o.obj
    res = A.axis_back(o.obj, o.kind, ax)
    if out is None:
        return res
    A.check_out(out, A.adapt(res), A.adapt(res).shape, dt)
    A.copy_into(out, res)
    return out


def _whole_dtype(op: str, xdt: np.dtype, dtype: DTypeLike, accumulate: bool, torch: bool):
    """(result dtype, SCAN_WIDEN or 0) of a short-path scan of xdt: dtype=, else cumsum's and cumprod's accumulate
    dtype (accumulate) or xdt itself; None unless that is xdt or, for a sum or product, its widened dtype."""
    if dtype is not None:
        dt = np.dtype(dtype)
    else:
        dt = _accumulate_dtype_of(torch, xdt) if accumulate else xdt
    if dt == xdt:
        return dt, 0
    if op not in ("sum", "product") or _WIDENED.get(xdt) != dt:
        return None
    return dt, SCAN_WIDEN


def _scan_whole(x: Any, op: str, opid: int, dtype: DTypeLike, flags: int, out: Any, accumulate: bool):
    """scan()'s most common call in few steps: a whole C-contiguous numpy array, torch tensor or CuPy array of a
    pscan dtype (axis None, no init; A.whole_torch, A.whole) into a new 1-d array of its own library and dtype
    (cumsum's and cumprod's when accumulate), or dtype=, which must then be that dtype or, for a sum or product,
    the widened one (PSCAN_SCAN_WIDEN); or into out, an array of the same library, device, dtype and 1-d shape (x
    itself included). None where that is not the call: the general path then runs and raises what it raises.
    Why: on the CPU backend the general path's adapters, shapes and checks cost 3.4 us of a 4.3 us call of 1024
    f32, where the C call takes 0.95 us and numpy.cumsum 3.2 us (fifty-fifth session); on a torch tensor on an
    H200's host, _prepare (3.8-4.4 us) and the output's Array (2.1-3.1 us) were a third of a 21 us call, the C
    call with its launch 7.4-7.6 us (fifty-second session). Numpy and torch take no Array object at all; CuPy
    one (A.whole)."""
    t = type(x)
    if t is np.ndarray:  # numpy: from_buffer and np.empty
        tid = A._TYPE_OF.get(x.dtype)
        if tid is None or x.ndim == 0 or not x.flags.c_contiguous:
            return None
        got = _whole_dtype(op, x.dtype, dtype, accumulate, False)
        if got is None:
            return None
        n, (dt, widen) = x.size, got
        if out is None:
            res = np.empty(n, dt)
        elif type(out) is np.ndarray and out.dtype == dt and out.shape == (n,) and out.flags.c_contiguous and \
                out.flags.writeable:
            res = out
        else:
            return None
        xp, rp, device, stream = ffi.from_buffer(x), ffi.from_buffer(res), A.HOST, 0
    else:
        w = A.whole_torch(x)
        if w is not None:  # torch: data_ptr() and torch.empty, no Array
            torch, xdt, device, stream = w
            got = _whole_dtype(op, xdt, dtype, accumulate, True)
            if got is None:
                return None
            n, (dt, widen), tid = x.numel(), got, A._TYPE_OF[xdt]
            if out is None:
                res = torch.empty_like(x) if dt == xdt and x.dim() == 1 else A.torch_empty(torch, (n,), dt, x.device)
            elif type(out) is t and A.whole_torch_out(out, x, n, dt):
                res = out
            else:
                return None
            xp, rp = ffi.cast("void *", x.data_ptr()), ffi.cast("void *", res.data_ptr())
        else:
            a = A.whole(x)  # CuPy
            if a is None:
                return None
            got = _whole_dtype(op, a.dtype, dtype, accumulate, False)
            if got is None:
                return None
            n, (dt, widen), tid = a.size, got, A._TYPE_OF[a.dtype]
            o = A.empty(a, (n,), dt) if out is None else A.whole_out(out, a, (n,), dt)
            if o is None:
                return None
            res, xp, rp, device, stream = o.obj if out is None else out, a.ptr, o.ptr, a.device, a.stream
    desc, _ = _scan_desc(tid, opid, flags | widen, None, dt)
    ctx, lock = _context.get(device, stream)
    with lock:
        lock.call("pscan_scan", lib.pscan_scan, ctx, desc, xp, rp, n, ffi.NULL, 0)
    return res


_ACCUMULATE: dict = {}


def _accumulate_dtype(a: A.Array) -> np.dtype:
    """The dtype the array's own library gives a cumulative sum or product without dtype=: numpy's (and CuPy's)
    platform integer for small integers and bool (int8/16/32 and bool -> int64, uint8/16/32 -> uint64), torch's
    int64 for every integer and bool; floats keep theirs. Kept per (torch or not, dtype): numpy's answer costs a
    numpy.cumsum call (1.5 us of a 12 us pscan.cumsum of 1024 floats on the CPU backend)."""
    return _accumulate_dtype_of(a.kind == "torch", a.dtype)


def _accumulate_dtype_of(torch: bool, dtype: np.dtype) -> np.dtype:
    key = (torch, dtype)
    dt = _ACCUMULATE.get(key)
    if dt is None:
        if torch:
            dt = np.dtype(np.int64) if dtype.kind in "biu" else dtype
        else:
            dt = np.cumsum(np.zeros(1, dtype)).dtype
        _ACCUMULATE[key] = dt
    return dt


def _accumulate(x: ArrayLike, op: str, axis: Optional[int], dtype: DTypeLike, out: Any) -> Any:
    """cumsum's and cumprod's body: scan(x, op) into the library's accumulate dtype unless dtype is given."""
    if axis is None:
        res = _scan_whole(x, op, OP_IDS[op], dtype, 0, out, True)
        if res is not None:
            return res
    a = A.adapt(x)  # once: scan takes the adapted array
    return scan(a, op, axis=axis, dtype=dtype if dtype is not None else _accumulate_dtype(a), out=out)


def cumsum(x: ArrayLike, axis: Optional[int] = None, dtype: DTypeLike = None, out: Any = None) -> Any:
    """numpy.cumsum(x, axis, dtype, out), result dtype included: without dtype, small integers and bool sum into
    the 64-bit integer as numpy (and CuPy) do, every integer into int64 for a torch tensor as torch.cumsum does.
    pscan.scan(x, "sum", ...) with that dtype: int8/16/32 and uint8/16/32 widen as they are read (no copy); bool
    is converted first. Raises what scan raises (float16, for one, is not a pscan type).

    Example::

        >>> pscan.cumsum(numpy.array([3, 1, 7, 0], numpy.int8))
        array([ 3,  4, 11, 11])
        >>> pscan.cumsum(numpy.array([[1, 2], [3, 4]]), axis=0)
        array([[1, 2],
               [4, 6]])
    """
    return _accumulate(x, "sum", axis, dtype, out)


def cumprod(x: ArrayLike, axis: Optional[int] = None, dtype: DTypeLike = None, out: Any = None) -> Any:
    """numpy.cumprod(x, axis, dtype, out), result dtype included (as pscan.cumsum says).

    Example::

        >>> pscan.cumprod(numpy.array([1, 2, 3, 4], numpy.uint8))
        array([ 1,  2,  6, 24], dtype=uint64)
    """
    return _accumulate(x, "product", axis, dtype, out)


# A reduce along an axis of rows of up to _ROWS_REDUCE_MAX_* elements, _ROWS_REDUCE_MAX_BYTES in all, runs as one
# segmented scan of the rows (_reduce_rows: an n-element temporary written, every row's last element gathered);
# longer rows, or more bytes, one pscan_reduce call a row, each paying Python's and the library's per-call costs
# (and a launch on a device). Host, this machine (2 cores, f32 sums along axis 1, fifty-fifth session,
# docs/python.md): 10000 x 100 7.1 -> 0.57 ms, 1000 x 1000 0.92 -> 0.61 ms, but 100 x 10000 0.24 -> 0.60 ms. The
# device limit is the launch's arithmetic (a launch costs about what 2^20 elements' extra write does), not
# measured.
_ROWS_REDUCE_MAX_HOST = 1 << 11
_ROWS_REDUCE_MAX_DEVICE = 1 << 20
_ROWS_REDUCE_MAX_BYTES = 1 << 28

_REDUCE_DESCS: dict = {}


def _reduce_desc(tid: int, opid: int):
    """The reduce descriptor without init, made once per (type, operator) and shared (read-only)."""
    desc = _REDUCE_DESCS.get((tid, opid))
    if desc is None:
        desc = _REDUCE_DESCS[(tid, opid)] = ffi.new("pscan_reduce_desc *", [tid, opid, ALGO_AUTO, ffi.NULL])
    return desc


def _reduce_rows(a: A.Array, ctx, lock, tid: int, opid: int, init, rows: int, m: int, shape, dt: np.dtype):
    """The reductions of rows rows of m (> 0) elements of a, as a new C-contiguous array of shape in a's library:
    one inclusive segmented scan of the rows (init, a host pointer or NULL, in front of each), whose last element
    of each row is that row's init (+) reduction, gathered by a strided copy."""
    tmp = A.empty(a, (rows * m,), dt)
    seg = ffi.new("pscan_segscan_desc *", [tid, opid, 0, ALGO_AUTO, init, SEGMENTS_OFFSETS])
    with lock:
        offsets, keep = _row_offsets(a, ctx, rows, m)
        lock.call("pscan_segmented_scan", lib.pscan_segmented_scan, ctx, seg, a.ptr, tmp.ptr, rows * m, offsets, rows,
                  ffi.NULL, 0)
        del keep
    return A.strided_copy(tmp.obj, m - 1, m, shape)


def _reduce_whole(x: Any, opid: int, dtype: DTypeLike):
    """reduce()'s most common call in few steps, as _scan_whole's: a whole numpy array, torch tensor or CuPy
    array, axis None, no init or out, into its own dtype: a numpy scalar, or a 0-d array of x's library on its
    device. None where that is not the call (the general path then runs)."""
    t = type(x)
    if t is np.ndarray:
        tid = A._TYPE_OF.get(x.dtype)
        if tid is None or not x.flags.c_contiguous or (dtype is not None and np.dtype(dtype) != x.dtype):
            return None
        res = np.empty((), x.dtype)
        xp, rp, n, device, stream = ffi.from_buffer(x), ffi.from_buffer(res), x.size, A.HOST, 0
    else:
        w = A.whole_torch(x)
        if w is not None:
            torch, xdt, device, stream = w
            if dtype is not None and np.dtype(dtype) != xdt:
                return None
            tid, res = A._TYPE_OF[xdt], torch.empty((), dtype=x.dtype, device=x.device)
            xp, rp, n = ffi.cast("void *", x.data_ptr()), ffi.cast("void *", res.data_ptr()), x.numel()
        else:
            a = A.whole(x)
            if a is None or (dtype is not None and np.dtype(dtype) != a.dtype):
                return None
            tid, o = A._TYPE_OF[a.dtype], A.empty(a, (), a.dtype)
            res, xp, rp, n, device, stream = o.obj, a.ptr, o.ptr, a.size, a.device, a.stream
    ctx, lock = _context.get(device, stream)
    with lock:
        lock.call("pscan_reduce", lib.pscan_reduce, ctx, _reduce_desc(tid, opid), xp, n, rp, ffi.NULL, 0)
    return res[()] if t is np.ndarray else res


def reduce(x: ArrayLike, op: Union[str, "_user.Operator"] = "sum", axis: Optional[int] = None,
           dtype: DTypeLike = None, init: Any = None, out: Any = None) -> Any:
    """Reduction of x with op (sum, product, min, max, and, or, xor), as numpy.sum and friends.

    axis None reduces every element: the result is a numpy scalar for numpy input, and a 0-d array of the
    input's library on a CUDA device (nothing waits for the GPU). With an axis, the result has x's shape
    without that axis. dtype, init and out as for scan (out: the result's shape; () or (1,) for axis None).
    An empty reduction gives init (the operator's identity without it). Float results repeat bit for bit.
    op may be a pscan.Operator (axis=None): the result is one element.

    Example::

        >>> int(pscan.reduce(numpy.array([3, 1, 7, 0, 4, 1, 6, 3])))  # a numpy.int64
        25
        >>> pscan.reduce(numpy.array([[3, 1, 7], [0, 4, 1]], numpy.uint8), op="max", axis=-1)
        array([7, 4], dtype=uint8)
    """
    if isinstance(op, _user.Operator):
        return _user.reduce(x, op, axis, dtype, init, out)
    opid = _op_id(op)
    if axis is None and init is None and out is None:
        res = _reduce_whole(x, opid, dtype)
        if res is not None:
            return res
    a, ax, dt, tid, moved, _ = _prepare(x, axis, dtype)
    rows, m = _rows(a.shape, ax)
    shape = () if ax is None else a.shape[:-1]
    if out is not None:
        o = A.adapt(out, "out")
        if ax is None and o.shape == (1,):
            shape = (1,)
        o = A.check_out(out, a, shape, dt)
    ibuf = A.host_scalar(init, dt, "init") if init is not None else None
    desc = _reduce_desc(tid, opid) if ibuf is None else ffi.new("pscan_reduce_desc *",
                                                                [tid, opid, ALGO_AUTO, ffi.from_buffer(ibuf)])
    ctx, lock = _context.get(a.device, a.stream)
    if rows > 1 and 0 < m <= (_ROWS_REDUCE_MAX_HOST if a.device == A.HOST else _ROWS_REDUCE_MAX_DEVICE) and \
            rows * m * dt.itemsize <= _ROWS_REDUCE_MAX_BYTES:
        res = _reduce_rows(a, ctx, lock, tid, opid, desc.init, rows, m, shape, dt)
        if out is None:
            return res
        A.copy_into(out, res)
        return out
    if out is None:
        o = A.empty(a, shape, dt)
    row_bytes = m * dt.itemsize
    with lock:
        for r in range(rows):
            lock.call("pscan_reduce", lib.pscan_reduce, ctx, desc, a.ptr + r * row_bytes, m, o.ptr + r * dt.itemsize,
                      ffi.NULL, 0)
    if out is not None:
        return out
    if o.kind == "numpy" and ax is None:
        return o.obj[()]
    return o.obj


def scan_host(x: ArrayLike, op: str = "sum", dtype: DTypeLike = None, exclusive: bool = False,
              reverse: bool = False, init: Any = None, out: Any = None, device: Optional[int] = None) -> Any:
    """Scan of a host array (flattened) through a GPU, in pieces: pscan_scan_host, for arrays far larger than
    the device's memory. The result is a host array like x; the call returns when it is written.

    x: a numpy array or a CPU tensor. device: the CUDA device to run on; None: device 0 where this pscan has
    CUDA and a driver finds a device, else the CPU backend (where it is pscan.scan). The GPU moves pieces of
    64 MiB through three device buffers, upload, scan and download overlapped on three streams, each piece's
    carry handed to the next on the device. op, dtype, exclusive, reverse, init and out as for pscan.scan.

    Example::

        >>> pscan.scan_host(numpy.array([3, 1, 7, 0, 4, 1, 6, 3]))
        array([ 3,  4, 11, 11, 15, 16, 22, 25])
    """
    opid = _op_id(op)
    a, _, dt, tid, _, _ = _prepare(x, None, dtype)
    if a.device != A.HOST:
        raise error("PSCAN_ERROR_INVALID_VALUE", "scan_host scans host memory: x is on a CUDA device (use scan)")
    n = a.size
    o = A.check_out(out, a, (n,), dt) if out is not None else A.empty(a, (n,), dt)
    flags = (SCAN_EXCLUSIVE if exclusive else 0) | (SCAN_REVERSE if reverse else 0)
    desc, ibuf = _scan_desc(tid, opid, flags, init, dt)
    if device is None:
        ctx, lock = _host_scan_context()
    else:
        ctx, lock = _context.get(A.HOST if int(device) < 0 else int(device), 0)
    with lock:  # no temp argument (so no refusal for want of workspace), on the legacy stream: check(), not call()
        check(lib.pscan_scan_host(ctx, desc, a.ptr, o.ptr, n), "pscan_scan_host")
    return out if out is not None else o.obj


def reduce_host(x: ArrayLike, op: str = "sum", dtype: DTypeLike = None, init: Any = None,
                device: Optional[int] = None) -> Any:
    """Reduction of a host array (flattened) through a GPU, in pieces: pscan_reduce_host, for arrays far larger
    than the device's memory. Returns a numpy scalar.

    x: a numpy array or a CPU tensor. device as for scan_host (None: device 0 where there is one, else the
    CPU backend, where it is pscan.reduce). The GPU reduces pieces of 64 MiB one after another, each from the
    result of the pieces before it. op, dtype and init as for pscan.reduce.

    Example::

        >>> int(pscan.reduce_host(numpy.array([3, 1, 7, 0, 4, 1, 6, 3])))
        25
    """
    opid = _op_id(op)
    a, _, dt, tid, _, _ = _prepare(x, None, dtype)
    if a.device != A.HOST:
        raise error("PSCAN_ERROR_INVALID_VALUE", "reduce_host reduces host memory: x is on a CUDA device (use reduce)")
    ibuf = A.host_scalar(init, dt, "init") if init is not None else None
    desc = _reduce_desc(tid, opid) if ibuf is None else ffi.new("pscan_reduce_desc *",
                                                                [tid, opid, ALGO_AUTO, ffi.from_buffer(ibuf)])
    result = np.zeros((), dt)
    if device is None:
        ctx, lock = _host_scan_context()
    else:
        ctx, lock = _context.get(A.HOST if int(device) < 0 else int(device), 0)
    with lock:  # no temp argument: check(), not lock.call() (see scan_host)
        check(lib.pscan_reduce_host(ctx, desc, a.ptr, a.size, ffi.cast("void *", result.ctypes.data)),
              "pscan_reduce_host")
    return result[()]


def _host_scan_context():
    """The context scan_host uses without a device: CUDA device 0's on the legacy default stream, else the CPU's."""
    if HAVE_CUDA:
        try:
            return _context.get(0, 0)
        except PscanError as e:
            if e.status != "PSCAN_ERROR_BACKEND_UNAVAILABLE":
                raise
    return _context.get(A.HOST, 0)


def _select_args(x, pred, operand, flags, values):
    """The checked arguments of a select: (a, tid, n, flags pointer, pred id, operand buffer, values, value bytes)."""
    a = A.adapt(x)
    tid = A.type_of(a.dtype, "x")
    n = a.size
    if flags is not None:
        f = A.adapt(flags, "flags")
        if f.dtype.itemsize != 1 or f.dtype.kind not in "bu":
            raise error("PSCAN_ERROR_UNSUPPORTED_TYPE", f"flags has dtype {f.dtype}; bool or uint8 expected")
        if f.device != a.device or f.size != n:
            raise error("PSCAN_ERROR_INVALID_VALUE", "flags must have x's size and device")
        flags_p, pred_id, opnd = f.ptr, 0, None
    else:
        pred = "nonzero" if pred is None else pred
        if pred not in PREDS:
            raise error("PSCAN_ERROR_INVALID_VALUE", f"pred {pred!r} is not one of {', '.join(PREDS)}")
        flags_p, pred_id = ffi.NULL, PREDS.index(pred)
        opnd = A.host_scalar(operand, a.dtype, "operand") if operand is not None else None
    v = None
    value_bytes = 0
    if values is not None:
        v = A.adapt(values, "values")
        value_bytes = v.dtype.itemsize
        if value_bytes not in (1, 2, 4, 8):
            raise error("PSCAN_ERROR_UNSUPPORTED_TYPE", f"values has dtype {v.dtype}; items of 1, 2, 4 or 8 bytes")
        if v.device != a.device or v.size != n:
            raise error("PSCAN_ERROR_INVALID_VALUE", "values must have x's size and device")
    return a, tid, n, flags_p, pred_id, opnd, v, value_bytes


def _select_desc(tid, value_bytes, flags_p, pred_id, opnd):
    return ffi.new("pscan_select_desc *", [tid, value_bytes, flags_p, pred_id,
                                           ffi.from_buffer(opnd) if opnd is not None else ffi.NULL, ALGO_AUTO])


def _select_common(fn, name, x, pred, operand, flags, values, out, values_out):
    a, tid, n, flags_p, pred_id, opnd, v, value_bytes = _select_args(x, pred, operand, flags, values)
    vo = None
    o = A.check_out(out, a, (n,), a.dtype) if out is not None else A.empty(a, (n,), a.dtype)
    if v is not None:
        vo = A.check_out(values_out, a, (n,), v.dtype, "values_out") if values_out is not None else \
            A.empty(a, (n,), v.dtype)
    count = A.empty(a, (1,), np.dtype(np.int64))  # one uint64_t; int64 because torch lacks uint64 in places
    desc = _select_desc(tid, value_bytes, flags_p, pred_id, opnd)
    vp = v.ptr if v is not None else ffi.NULL
    vop = vo.ptr if vo is not None else ffi.NULL
    ctx, lock = _context.get(a.device, a.stream)
    with lock:
        lock.call(name, fn, ctx, desc, a.ptr, vp, n, o.ptr, vop, ffi.cast("uint64_t *", count.ptr), ffi.NULL, 0)
    k = int(count.obj[0])  # reading the count waits for the GPU
    return o, vo, k


def select(x: ArrayLike, pred: Optional[str] = None, operand: Any = None, *, flags: Any = None,
           values: Any = None, out: Any = None, values_out: Any = None) -> Any:
    """The items of x (flattened) that pass a test, in their order: ``x[flags != 0]`` or ``x[x > operand]``.

    pred: "nonzero" (the default), "eq", "ne", "lt", "le", "gt", "ge", comparing each item with operand
    (exactly representable in x's dtype), or "unique": keep each item that differs (bit for bit) from the one
    before it, dropping consecutive duplicates (no operand). flags: a bool or uint8 array of x's size instead of pred (nonzero
    keeps). values: a payload array of x's size (any dtype of 1, 2, 4 or 8 bytes) moved with the keys.
    out, values_out: arrays of x's size to write into; the result is their first count items.
    Returns the kept keys, or (keys, values) with values. On a GPU it waits for the count (one synchronise).

    Example::

        >>> pscan.select(numpy.array([3, 1, 7, 0, 4, 1, 6, 3]), "gt", 2)
        array([3, 7, 4, 6, 3])
        >>> pscan.select(numpy.array([3, 1, 7, 0]), flags=numpy.array([1, 0, 1, 1], bool), values=numpy.arange(4))
        (array([3, 7, 0]), array([0, 2, 3]))
    """
    o, vo, k = _select_common(lib.pscan_select, "pscan_select", x, pred, operand, flags, values, out, values_out)
    return o.obj[:k] if vo is None else (o.obj[:k], vo.obj[:k])


compact = select


def select_host(x: ArrayLike, pred: Optional[str] = None, operand: Any = None, *, flags: Any = None,
                values: Any = None, device: Optional[int] = None) -> Any:
    """select for a host array (flattened) through a GPU, in pieces: pscan_select_host, for arrays far larger
    than the device's memory. Arguments and result as for select (x, flags and values numpy arrays or CPU
    tensors); device as for scan_host (None: device 0 where there is one, else the CPU backend, where it is
    pscan.select). Returns numpy arrays.

    Example::

        >>> pscan.select_host(numpy.array([3, 1, 7, 0, 4, 1, 6, 3]), "gt", 2)
        array([3, 7, 4, 6, 3])
    """
    a, tid, n, flags_p, pred_id, opnd, v, value_bytes = _select_args(x, pred, operand, flags, values)
    if a.device != A.HOST:
        raise error("PSCAN_ERROR_INVALID_VALUE", "select_host selects host memory: x is on a CUDA device (use select)")
    o = np.empty(n, a.dtype)
    vo = np.empty(n, v.dtype) if v is not None else None
    count = np.zeros(1, np.uint64)
    desc = _select_desc(tid, value_bytes, flags_p, pred_id, opnd)
    if device is None:
        ctx, lock = _host_scan_context()
    else:
        ctx, lock = _context.get(A.HOST if int(device) < 0 else int(device), 0)
    with lock:  # no temp argument: check(), not lock.call() (see scan_host)
        check(lib.pscan_select_host(ctx, desc, a.ptr, v.ptr if v is not None else ffi.NULL, n,
                                    ffi.cast("void *", o.ctypes.data),
                                    ffi.cast("void *", vo.ctypes.data) if vo is not None else ffi.NULL,
                                    ffi.cast("uint64_t *", count.ctypes.data)), "pscan_select_host")
    k = int(count[0])
    return o[:k] if vo is None else (o[:k], vo[:k])


def partition(x: ArrayLike, pred: Optional[str] = None, operand: Any = None, *, flags: Any = None,
              values: Any = None, out: Any = None, values_out: Any = None) -> Tuple[Any, ...]:
    """x (flattened) reordered: the items that pass the test first, then the others, each group in order.

    Arguments as for select. Returns (keys, count) or (keys, values, count), count being the number that
    passed (the first index of the second group), a Python int (on a GPU, reading it synchronises).

    Example::

        >>> pscan.partition(numpy.array([3, 1, 7, 0, 4, 1, 6, 3]), "gt", 2)
        (array([3, 7, 4, 6, 3, 1, 0, 1]), 5)
    """
    o, vo, k = _select_common(lib.pscan_partition, "pscan_partition", x, pred, operand, flags, values, out, values_out)
    return (o.obj, k) if vo is None else (o.obj, vo.obj, k)
