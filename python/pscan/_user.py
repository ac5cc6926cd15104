"""User operators: an element type and an associative combine of your own, for pscan.scan and pscan.reduce.

The C library's pscan_operator_create takes the element's size and alignment, its identity, C source of the
type and the combine (compiled at run time on a GPU: NVRTC on CUDA) and a host function for the CPU backend.
Here the host function is a Python callable, reached through a cffi callback: each combine of the CPU backend
is one Python call (about a microsecond or two), so the CPU path is for checking and small data; the GPU runs
the C source at full speed. A C operator belongs to one context, so an Operator makes one per context (device
and stream) on first use and keeps it with the context until pscan.clear_cache().

Arrays of elements: an array whose dtype is the operator's (a numpy structured dtype, say) holds one element per
item; an array whose last axis holds exactly one element (float32 of shape (n, 2) for a two-float element) holds
one element per row, which is how torch and CuPy, which lack structured dtypes, pass them.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Tuple, Union

import numpy as np

from . import _arrays as A
from . import _context
from ._errors import PscanTypeError, check, error
from ._lib import ALGO_AUTO, SCAN_EXCLUSIVE, SCAN_REVERSE, USER_OP_MAX_BYTES, ffi, lib


def _natural_align(dt: np.dtype) -> int:
    """The C alignment of a numpy dtype's layout: the largest alignment of its fields' base types (numpy gives
    1 for a packed structured dtype, whose C struct is aligned to its widest member)."""
    if dt.fields:
        return max([_natural_align(f[0]) for f in dt.fields.values()] + [1])
    if dt.subdtype is not None:
        return _natural_align(dt.subdtype[0])
    if dt.kind == "V":
        return 1
    return dt.alignment


def _field_bases(dt: np.dtype) -> set:
    """The scalar dtypes a structured dtype is made of."""
    if dt.fields:
        out = set()
        for f in dt.fields.values():
            out |= _field_bases(f[0])
        return out
    if dt.subdtype is not None:
        return _field_bases(dt.subdtype[0])
    return {dt}


class Operator:
    """A user operator for pscan.scan(x, op=...) and pscan.reduce(x, op=...).

    dtype: the element's numpy dtype, a structured one for a struct (``[("a", "f4"), ("b", "f4")]``), or an
    int, its size in bytes (1 to 32), for an opaque element. identity: the element e with combine(e, x) ==
    combine(x, e) == x, as a value of dtype (a tuple for a struct).
    combine: a Python function ``combine(earlier, later) -> element`` (numpy scalars of dtype in, a value of
    dtype out) that the CPU backend calls. It must be associative; it is never assumed commutative.
    source, type_name, combine_name: C source defining the type and the combine ``T combine(T earlier,
    T later)``, for GPU backends (CUDA compiles it with NVRTC as C++17; write the common subset of C and C++,
    include no header). align: the C type's alignment (default: its widest member's).
    Without combine the CPU refuses it, without source the GPU does (PSCAN_ERROR_UNSUPPORTED_OPERATOR). Source
    that does not compile raises PSCAN_ERROR_BUILD_FAILED with the compiler's log, at its first use on a GPU.
    CUDA takes every element size from 1 to 32 bytes.

    Example (affine maps x -> a x + b, composed by a scan: first earlier, then later)::

        >>> affine = numpy.dtype([("a", "f4"), ("b", "f4")])
        >>> compose = pscan.Operator(affine, identity=(1, 0),
        ...     combine=lambda e, l: (l["a"] * e["a"], l["a"] * e["b"] + l["b"]),
        ...     source="typedef struct { float a, b; } affine;"
        ...            "affine combine(affine e, affine l) { affine r; r.a = l.a * e.a; r.b = l.a * e.b + l.b; return r; }",
        ...     type_name="affine", combine_name="combine")
        >>> pscan.scan(numpy.array([(2, 1), (2, 1), (2, 1)], affine), op=compose).tolist()
        [(2.0, 1.0), (4.0, 3.0), (8.0, 7.0)]
    """

    def __init__(self, dtype: Union[int, Any], identity: Any, combine: Optional[Callable[[Any, Any], Any]] = None,
                 *, source: Optional[str] = None, type_name: Optional[str] = None,
                 combine_name: Optional[str] = None, align: Optional[int] = None):
        if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
            if not 1 <= int(dtype) <= USER_OP_MAX_BYTES:
                raise error("PSCAN_ERROR_INVALID_VALUE", f"an element of {dtype} bytes; 1 to {USER_OP_MAX_BYTES}")
            dtype = np.dtype((np.void, int(dtype)))
        self.dtype = np.dtype(dtype)
        size = self.dtype.itemsize
        if not 1 <= size <= USER_OP_MAX_BYTES:
            raise error("PSCAN_ERROR_INVALID_VALUE", f"dtype {self.dtype} has {size} bytes; 1 to {USER_OP_MAX_BYTES}")
        self.align = int(align) if align is not None else _natural_align(self.dtype)
        a = self.align
        if a < 1 or a > 16 or a & (a - 1) or size % a:
            raise error("PSCAN_ERROR_INVALID_VALUE", f"align {a}: a power of two <= 16 that divides {size}")
        if combine is None and source is None:
            raise error("PSCAN_ERROR_UNSUPPORTED_OPERATOR", "give combine= (CPU), source= (GPU), or both")
        if source is not None and (type_name is None or combine_name is None):
            raise error("PSCAN_ERROR_NULL_POINTER", "source= needs type_name= and combine_name=")
        self.identity = self.value(identity, "identity")
        self.combine, self.source, self.type_name, self.combine_name = combine, source, type_name, combine_name
        self._strings = [ffi.new("char[]", s.encode()) if s is not None else ffi.NULL
                         for s in (source, type_name, combine_name)]
        self._cb = ffi.callback("void(const void *, const void *, void *, void *)", self._host) \
            if combine is not None else ffi.NULL
        self._exc: Optional[BaseException] = None  # the first exception of combine in the call under way

    def __repr__(self) -> str:
        where = "+".join(w for w, v in (("cpu", self.combine), ("gpu", self.source)) if v is not None)
        return f"pscan.Operator({self.dtype}, {where})"

    def value(self, v: Any, what: str) -> np.ndarray:
        """v as one element of the operator's dtype in host memory (a 1-item numpy array)."""
        try:
            if isinstance(v, np.ndarray) and v.dtype != self.dtype and v.nbytes == self.dtype.itemsize:
                return np.ascontiguousarray(v).view(np.uint8).view(self.dtype).reshape(1)  # the element's bytes
            return np.array([v] if not isinstance(v, np.ndarray) else v.reshape(1), dtype=self.dtype).reshape(1)
        except (TypeError, ValueError, OverflowError):
            raise error("PSCAN_ERROR_INVALID_VALUE", f"{what} = {v!r} is not one element of {self.dtype}") from None

    # ---- the CPU backend's combine: a Python call per element ---------------------------------------------
    def _host(self, earlier, later, out, user):
        size, dt = self.dtype.itemsize, self.dtype
        try:
            e = np.frombuffer(ffi.buffer(earlier, size), dt)[0]
            l_ = np.frombuffer(ffi.buffer(later, size), dt)[0]
            r = self.value(self.combine(e, l_), "combine's result")
            ffi.memmove(out, ffi.from_buffer(r), size)
        except BaseException as exc:  # noqa: B902 - raised again after the C call, never lost in a callback
            if self._exc is None:  # the pool's threads call this too: the first failure wins
                self._exc = exc
            ffi.memmove(out, earlier, size)

    def _raise_failure(self) -> None:
        exc, self._exc = self._exc, None
        if exc is not None:
            raise exc

    # ---- one C operator per context -------------------------------------------------------------------------
    def handle(self, ctx):
        """The pscan_operator * of this operator on ctx, made on first use (call with ctx's lock held)."""
        kept = _context.extras(ctx)["operators"]
        hit = kept.get(id(self))
        if hit is not None:
            return hit[1]
        desc = ffi.new("pscan_user_op_desc *", [self.dtype.itemsize, self.align, ffi.from_buffer(self.identity),
                                                self._strings[0], self._strings[1], self._strings[2], self._cb,
                                                ffi.NULL])
        p = ffi.new("pscan_operator **")
        s = lib.pscan_operator_create(ctx, desc, p)
        if s:
            log = ffi.new("const char **")
            text = ""
            if lib.pscan_context_build_log(ctx, log) == 0 and log[0] != ffi.NULL:
                text = ffi.string(log[0]).decode(errors="replace").strip()
            check(s, "pscan_operator_create" + (f"; the compiler says:\n{text}" if text else ""))
        kept[id(self)] = (self, p[0])  # the operator (and its callback) lives as long as the context
        return p[0]

    def elements(self, a: A.Array, what: str = "x") -> Tuple[int, Tuple[int, ...]]:
        """(number of elements in a, the shape of one element in a): () when a's dtype is the operator's,
        (k,) when a's last axis of k items holds one element."""
        dt = self.dtype
        if a.dtype == dt or (dt.kind == "V" and not dt.fields and a.dtype.itemsize == dt.itemsize):
            return a.size, ()
        if a.shape and a.shape[-1] * a.dtype.itemsize == dt.itemsize and \
                (dt.kind == "V" and (not dt.fields or _field_bases(dt) == {a.dtype})):
            return a.size // a.shape[-1], a.shape[-1:]
        raise PscanTypeError("PSCAN_ERROR_UNSUPPORTED_TYPE",
                             f"{what} has dtype {a.dtype} and shape {a.shape}; the operator's elements are {dt} "
                             f"(an array of that dtype, or of its field type with a last axis of one element)")


def _prepare(x: Any, op: Operator, axis: Any, dtype: Any) -> Tuple[A.Array, int, Tuple[int, ...]]:
    if dtype is not None:
        raise error("PSCAN_ERROR_INVALID_VALUE", "dtype= has no meaning with a user operator (the operator's is used)")
    if axis is not None:
        raise error("PSCAN_ERROR_INVALID_VALUE", "a user operator scans the flattened elements: axis=None only")
    a = A.adapt(x)
    n, eshape = op.elements(a)
    return a, n, eshape


def scan(x: Any, op: Operator, axis: Any, dtype: Any, exclusive: bool, reverse: bool, init: Any, out: Any) -> Any:
    """pscan.scan with a user operator (see there): the result has shape (elements,) + element shape."""
    a, n, eshape = _prepare(x, op, axis, dtype)
    shape = (n,) + eshape
    o = A.check_out(out, a, shape, a.dtype) if out is not None else A.empty(a, shape, a.dtype)
    ibuf = op.value(init, "init") if init is not None else None
    flags = (SCAN_EXCLUSIVE if exclusive else 0) | (SCAN_REVERSE if reverse else 0)
    desc = ffi.new("pscan_scan_desc *", [0, 0, flags, ALGO_AUTO,
                                         ffi.from_buffer(ibuf) if ibuf is not None else ffi.NULL])
    ctx, lock = _context.get(a.device, a.stream)
    with lock:
        h = op.handle(ctx)
        lock.call("pscan_scan_user", lib.pscan_scan_user, ctx, desc, h, a.ptr, o.ptr, n, ffi.NULL, 0,
                  before_check=op._raise_failure)
    return out if out is not None else o.obj


def reduce(x: Any, op: Operator, axis: Any, dtype: Any, init: Any, out: Any) -> Any:
    """pscan.reduce with a user operator: one element (a numpy scalar for numpy input of the operator's dtype,
    else an array of the element's shape)."""
    a, n, eshape = _prepare(x, op, axis, dtype)
    o = A.check_out(out, a, eshape, a.dtype) if out is not None else A.empty(a, eshape, a.dtype)
    ibuf = op.value(init, "init") if init is not None else None
    desc = ffi.new("pscan_reduce_desc *", [0, 0, ALGO_AUTO, ffi.from_buffer(ibuf) if ibuf is not None else ffi.NULL])
    ctx, lock = _context.get(a.device, a.stream)
    with lock:
        h = op.handle(ctx)
        lock.call("pscan_reduce_user", lib.pscan_reduce_user, ctx, desc, h, a.ptr, n, o.ptr, ffi.NULL, 0,
                  before_check=op._raise_failure)
    if out is not None:
        return out
    return o.obj[()] if o.kind == "numpy" and not eshape else o.obj
