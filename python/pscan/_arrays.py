"""Arrays of any library seen the same way: a pointer, a shape, a numpy dtype, a device and a stream.

Zero-copy: every adapter reads the array's own buffer address; nothing is copied unless the caller asks for
another dtype or a non-last axis. Kinds:
  numpy   numpy.ndarray                                     host memory, CPU backend
  torch   torch.Tensor (CPU or CUDA)                        the device's current torch stream
  cupy    cupy.ndarray                                      the device's current CuPy stream
  cuda    anything else with __cuda_array_interface__       the stream the interface names (legacy default
          or DLPack on a CUDA device                        if none); outputs come back as CuPy arrays, or
                                                            torch tensors without CuPy
Python sequences and other host objects are turned into numpy arrays first (numpy.asarray).
"""
from __future__ import annotations

import ctypes
import sys
from typing import Any, Tuple

import numpy as np

from . import _context
from ._errors import PscanTypeError, PscanValueError, error
from ._lib import TYPE_NAMES, ffi

HOST = -1  # device of host memory


class Array:
    """One array as pscan sees it. obj is the library's own object (what results are made of); ptr its first
    byte as a cffi char pointer (ptr + bytes is the address of a row; it passes as any C pointer)."""

    __slots__ = ("obj", "kind", "ptr", "shape", "dtype", "device", "stream", "keep")

    def __init__(self, obj, kind, ptr, shape, dtype, device, stream, keep=None):
        ptr = ffi.cast("char *", ptr) if isinstance(ptr, int) else ptr
        self.obj, self.kind, self.ptr, self.shape = obj, kind, ptr, tuple(shape)
        self.dtype, self.device, self.stream, self.keep = dtype, device, stream, keep

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


def _c_contiguous(shape, strides, itemsize) -> bool:
    """True if strides (in bytes; None means C order) describe a C-contiguous layout of shape."""
    if strides is None:
        return True
    expected = itemsize
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim > 1 and stride != expected:
            return False
        expected *= dim
    return True


def _not_contiguous(what: str) -> PscanValueError:
    return error("PSCAN_ERROR_INVALID_VALUE",
                 f"{what} is not C-contiguous: pass a contiguous array (numpy.ascontiguousarray, "
                 f".contiguous()), pscan reads one dense buffer")


# ---- torch ---------------------------------------------------------------------------------------------------
_TORCH_TO_NP: dict = {}
_NP_TO_TORCH: dict = {}


def _torch_dtypes(torch):
    if not _TORCH_TO_NP:
        for name in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
                     "float32", "float64"):
            t = getattr(torch, name, None)  # torch.uint16/32/64 from torch 2.3 on
            if t is not None:
                _TORCH_TO_NP[t] = np.dtype(name)
                _NP_TO_TORCH[np.dtype(name)] = t
    return _TORCH_TO_NP


def _torch_dtype(torch, dtype):
    _torch_dtypes(torch)
    t = _NP_TO_TORCH.get(np.dtype(dtype))
    if t is None:
        raise error("PSCAN_ERROR_UNSUPPORTED_TYPE", f"this torch has no dtype {np.dtype(dtype)}")
    return t


def torch_stream(torch, device: int) -> int:
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(device) if raw else torch.cuda.current_stream(device).cuda_stream


def _adapt_torch(x, torch, what) -> Array:
    dt = _torch_dtypes(torch).get(x.dtype)
    if dt is None:
        raise error("PSCAN_ERROR_UNSUPPORTED_TYPE", f"{what} has dtype {x.dtype}, which pscan has no type for")
    if not x.is_contiguous():
        raise _not_contiguous(what)
    dev = x.get_device()
    if dev < 0:
        if x.device.type != "cpu":
            raise error("PSCAN_ERROR_INVALID_VALUE", f"{what} is on {x.device}; pscan takes CPU and CUDA tensors")
        return Array(x, "torch", x.data_ptr(), x.shape, dt, HOST, 0)
    return Array(x, "torch", x.data_ptr(), x.shape, dt, dev, torch_stream(torch, dev))


# ---- cupy ----------------------------------------------------------------------------------------------------
def _adapt_cupy(x, cupy, what) -> Array:
    if not x.flags.c_contiguous:
        raise _not_contiguous(what)
    dev = x.device.id
    try:
        s = cupy.cuda.get_current_stream(dev)
    except TypeError:  # older CuPy: the current device's stream only
        with x.device:
            s = cupy.cuda.get_current_stream()
    # A CuPy stream is destroyed with its Python object, and a cached context synchronises and frees on its
    # stream when it is destroyed: the cache keeps the object alive as long as a context may use it.
    _context.keep_stream(s.ptr, s)
    return Array(x, "cupy", x.data.ptr, x.shape, x.dtype, dev, s.ptr)


# ---- __cuda_array_interface__ and DLPack ---------------------------------------------------------------------
def _adapt_cai(x, cai, what) -> Array:
    from . import _cuda

    dt = np.dtype(cai["typestr"])
    shape = tuple(cai["shape"])
    if not _c_contiguous(shape, cai.get("strides"), dt.itemsize):
        raise _not_contiguous(what)
    ptr = cai["data"][0] or 0
    dev = (_cuda.pointer_device(ptr) if ptr else None)
    if dev is None:
        dev = _cuda.current_device()
    stream = cai.get("stream") or 0  # None: no stream named, use the legacy default (0); 1 and 2 are handles too
    return Array(x, "cuda", ptr, shape, dt, dev, stream)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CPU, _DL_CUDA, _DL_CUDA_MANAGED = 1, 2, 13
_DL_KIND = {0: "i", 1: "u", 2: "f", 6: "b"}


def _adapt_dlpack(x, what) -> Array:
    dev_type, dev_id = x.__dlpack_device__()
    if dev_type == _DL_CPU:
        return adapt(np.from_dlpack(x), what)
    if dev_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise error("PSCAN_ERROR_INVALID_VALUE", f"{what} is on DLPack device type {dev_type}; pscan takes CPU "
                                                 f"and CUDA memory")
    capsule = x.__dlpack__(stream=1)  # the producer orders its work before the legacy default stream, ours
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    t = ctypes.cast(get(capsule, b"dltensor"), ctypes.POINTER(_DLTensor)).contents  # DLManagedTensor starts so
    kind = _DL_KIND.get(t.dtype.code)
    if kind is None or t.dtype.lanes != 1:
        raise error("PSCAN_ERROR_UNSUPPORTED_TYPE", f"{what} has a DLPack dtype pscan has no type for")
    dt = np.dtype(f"{kind}{t.dtype.bits // 8}") if kind != "b" else np.dtype(bool)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = None if not t.strides else tuple(t.strides[i] * dt.itemsize for i in range(t.ndim))
    if not _c_contiguous(shape, strides, dt.itemsize):
        raise _not_contiguous(what)
    return Array(x, "cuda", (t.data or 0) + t.byte_offset, shape, dt, t.device.device_id, 1, keep=capsule)


# ---- any object ----------------------------------------------------------------------------------------------
def adapt(x: Any, what: str = "x") -> Array:
    """The Array view of x, zero-copy; PscanValueError if x is not C-contiguous."""
    if isinstance(x, np.ndarray):
        if not x.flags.c_contiguous:
            raise _not_contiguous(what)
        return Array(x, "numpy", ffi.from_buffer(x), x.shape, x.dtype, HOST, 0)  # from_buffer: the fastest way
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return _adapt_torch(x, torch, what)
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return _adapt_cupy(x, cupy, what)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        return _adapt_cai(x, cai, what)
    if hasattr(x, "__dlpack_device__") and hasattr(x, "__dlpack__"):
        return _adapt_dlpack(x, what)
    return adapt(np.ascontiguousarray(x), what)


def whole_torch(x: Any):
    """(torch, numpy dtype, device, stream) of x when x is a tensor of exactly torch.Tensor's type that the short
    paths serve (C-contiguous, at least one dimension, a dtype pscan has, on the CPU or a CUDA device); else None.
    No Array: a small call's Python is what the short paths save (docs/python.md)."""
    torch = sys.modules.get("torch")
    if torch is None or type(x) is not torch.Tensor:
        return None
    dt = (_TORCH_TO_NP or _torch_dtypes(torch)).get(x.dtype)
    if dt is None or dt not in _TYPE_OF or x.dim() == 0 or not x.is_contiguous():
        return None
    dev = x.get_device()
    if dev >= 0:
        return torch, dt, dev, torch_stream(torch, dev)
    return (torch, dt, HOST, 0) if x.device.type == "cpu" else None


def whole_torch_out(out: Any, x: Any, n: int, dtype: np.dtype) -> bool:
    """Whether out (a torch.Tensor) is what a short path writes for x: C-contiguous, 1-d of n elements, dtype,
    on x's device."""
    return (out.dim() == 1 and out.numel() == n and out.device == x.device and out.is_contiguous()
            and _TORCH_TO_NP.get(out.dtype) == dtype)


def torch_empty(torch, shape: Tuple[int, ...], dtype: np.dtype, device) -> Any:
    """torch.empty of a numpy dtype on a torch device."""
    return torch.empty(shape, dtype=_torch_dtype(torch, dtype), device=device)


def whole(x: Any):
    """The Array of x when x is a CuPy array of exactly cupy.ndarray's type, C-contiguous, of at least one
    dimension and of a dtype pscan has; else None, and the caller takes the general path (adapt() and its
    errors). numpy arrays and torch tensors take the short paths without an Array (whole_torch)."""
    cupy = sys.modules.get("cupy")
    if cupy is None or type(x) is not cupy.ndarray:
        return None
    if x.ndim == 0 or x.dtype not in _TYPE_OF or not x.flags.c_contiguous:
        return None
    return _adapt_cupy(x, cupy, "x")


def whole_out(out: Any, like: Array, shape: Tuple[int, ...], dtype: np.dtype):
    """The Array of out when whole() serves it and it is what a short path writes: like's library, device, shape
    and dtype, writable (x itself included), on like's stream; else None (the general path checks it and says
    what is wrong)."""
    if type(out) is not type(like.obj):
        return None
    o = whole(out)
    if o is None or o.device != like.device or o.dtype != dtype or o.shape != tuple(shape):
        return None
    o.stream = like.stream
    return o


def _generic_library():
    """The library that makes arrays for inputs of kind 'cuda': CuPy, else PyTorch."""
    try:
        import cupy

        return "cupy", cupy
    except ImportError:
        pass
    try:
        import torch

        return "torch", torch
    except ImportError:
        raise error("PSCAN_ERROR_BACKEND_UNAVAILABLE",
                    "a CUDA array that is neither CuPy nor torch needs CuPy or PyTorch to make the result "
                    "(or pass out=)") from None


def as_library_array(a: Array) -> Array:
    """A kind 'cuda' array re-seen as a CuPy array (or torch tensor) over the same memory, so that the library
    can convert or transpose it; other kinds are returned as they are."""
    if a.kind != "cuda":
        return a
    name, mod = _generic_library()
    if name == "cupy":
        with mod.cuda.Device(a.device):
            obj = mod.asarray(a.obj) if a.keep is None else mod.from_dlpack(a.obj)
    else:
        obj = mod.as_tensor(a.obj, device=f"cuda:{a.device}") if a.keep is None else mod.from_dlpack(a.obj)
    b = adapt(obj)
    b.stream = a.stream  # stay on the stream the producer named
    return b


def empty(like: Array, shape: Tuple[int, ...], dtype: np.dtype) -> Array:
    """A new C-contiguous array of the same library and device as like, allocated on its current stream."""
    kind = like.kind
    if kind == "numpy":
        return adapt(np.empty(shape, dtype))
    if kind == "cuda":
        kind, _ = _generic_library()
    if kind == "torch":
        import torch

        tdt = _torch_dtype(torch, dtype)
        if like.kind == "torch":
            dev = like.obj.device
        else:
            dev = "cpu" if like.device == HOST else f"cuda:{like.device}"
        a = adapt(torch.empty(shape, dtype=tdt, device=dev))
    else:
        import cupy

        if cupy.cuda.runtime.getDevice() == like.device:
            a = adapt(cupy.empty(shape, dtype))
        else:
            with cupy.cuda.Device(like.device):
                a = adapt(cupy.empty(shape, dtype))
    a.stream = like.stream
    return a


def arange(like: Array, n: int, dtype: np.dtype) -> Array:
    """0, 1, ..., n - 1 in a new 1-d array of the same library and device as like, made on its current stream."""
    out = empty(like, (n,), dtype)
    if out.kind == "numpy":
        out.obj[...] = np.arange(n, dtype=dtype)
    elif out.kind == "torch":
        import torch

        torch.arange(n, out=out.obj)
    else:
        import cupy

        with cupy.cuda.Device(out.device):
            out.obj[...] = cupy.arange(n, dtype=dtype)
    return out


def astype(a: Array, dtype: np.dtype) -> Array:
    """A converted copy of a (numpy's casting rules; torch and CuPy their own), on a's stream."""
    a = as_library_array(a)
    if a.kind == "torch":
        import torch

        b = adapt(a.obj.to(_torch_dtype(torch, dtype)))
    else:
        b = adapt(a.obj.astype(dtype))
    b.stream = a.stream
    return b


def axis_last(a: Array, axis: int) -> Array:
    """A C-contiguous copy of a with axis moved to the end."""
    a = as_library_array(a)
    if a.kind == "torch":
        b = adapt(a.obj.movedim(axis, -1).contiguous())
    else:
        mod = np if a.kind == "numpy" else sys.modules["cupy"]
        b = adapt(mod.ascontiguousarray(mod.moveaxis(a.obj, axis, -1)))
    b.stream = a.stream
    return b


def axis_back(obj: Any, kind: str, axis: int) -> Any:
    """obj (the result on the moved layout) with its last axis moved back to axis, as a C-contiguous copy."""
    if kind == "torch" or type(obj).__module__.startswith("torch"):
        return obj.movedim(-1, axis).contiguous()
    mod = np if isinstance(obj, np.ndarray) else sys.modules["cupy"]
    return mod.ascontiguousarray(mod.moveaxis(obj, -1, axis))


def strided_copy(obj: Any, start: int, step: int, shape: Tuple[int, ...]) -> Any:
    """obj[start::step] (obj 1-d) reshaped to shape, as a C-contiguous copy in obj's library, on its current
    stream."""
    v = obj[start::step]
    if type(obj).__module__.startswith("torch"):
        return v.reshape(shape).contiguous()
    mod = np if isinstance(obj, np.ndarray) else sys.modules["cupy"]
    return mod.ascontiguousarray(v.reshape(shape))


def copy_into(dst: Any, src: Any) -> None:
    """dst[...] = src for arrays of one library."""
    if hasattr(dst, "copy_"):
        dst.copy_(src)
    else:
        dst[...] = src


def host_scalar(v: Any, dtype: np.dtype, what: str) -> np.ndarray:
    """v as one element of dtype in host memory; PscanValueError unless dtype holds v exactly."""
    if hasattr(v, "item") and not isinstance(v, np.generic):
        v = v.item()  # a 0-d device array: read it (synchronises its stream)
    try:
        src = np.asarray(v)
        if src.dtype == object or src.size != 1:
            raise ValueError
        conv = src.astype(dtype).reshape(1)
        back = conv.astype(src.dtype).reshape(src.shape)
        exact = bool(back == src) or (src.dtype.kind in "fc" and bool(np.isnan(src)) and bool(np.isnan(conv[0])))
    except (ValueError, TypeError, OverflowError):
        exact = False
    if not exact:
        raise error("PSCAN_ERROR_INVALID_VALUE", f"{what} = {v!r} is not exactly representable as {np.dtype(dtype)}")
    return conv


def check_out(out: Any, like: Array, shape: Tuple[int, ...], dtype: np.dtype, what: str = "out") -> Array:
    """The Array of a caller's out=, checked against the result it must hold."""
    o = adapt(out, what)
    if o.device != like.device:
        where = lambda d: "host memory" if d == HOST else f"CUDA device {d}"  # noqa: E731
        raise error("PSCAN_ERROR_INVALID_VALUE", f"{what} is in {where(o.device)}, the input in {where(like.device)}")
    if o.dtype != dtype:
        raise PscanTypeError("PSCAN_ERROR_INVALID_VALUE", f"{what} has dtype {o.dtype}, the result is {np.dtype(dtype)}")
    if o.shape != tuple(shape):
        raise error("PSCAN_ERROR_INVALID_VALUE", f"{what} has shape {o.shape}, the result has {tuple(shape)}")
    o.stream = like.stream
    return o


def type_of(dtype: np.dtype, what: str = "x") -> int:
    """pscan's type id for a numpy dtype; PscanTypeError if pscan has none."""
    tid = _TYPE_OF.get(dtype)  # a numpy dtype: found at once
    if tid is None:
        dt = np.dtype(dtype)
        tid = _TYPE_OF.get(dt)
    if tid is None:
        raise error("PSCAN_ERROR_UNSUPPORTED_TYPE",
                    f"{what} has dtype {dt}; pscan has {', '.join(str(d) for d in _TYPE_OF)}")
    return tid


def _types():
    # "i32" -> int32, "u8" -> uint8, "f64" -> float64: the C list's names decide the mapping.
    kinds = {"i": "int", "u": "uint", "f": "float"}
    return {np.dtype(f"{kinds[n[0]]}{n[1:]}"): i for i, n in enumerate(TYPE_NAMES)}


_TYPE_OF = _types()
