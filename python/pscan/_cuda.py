"""The few CUDA driver calls the binding needs beside libpscan: which device a pointer lives on, making a
device current while a pscan context is created on it (pscan_cuda_context_create uses the current device), and
whether a stream is being captured into a graph.

Through the driver (libcuda.so.1, present wherever a GPU is) rather than a CUDA runtime, so the binding works
next to any CuPy or PyTorch build: both runtimes and ours share the driver's primary context of each device.
"""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator, Optional

from cffi import FFI

_ffi = FFI()
_ffi.cdef("""
int cuInit(unsigned flags);
int cuCtxGetCurrent(void **ctx);
int cuCtxSetCurrent(void *ctx);
int cuCtxGetDevice(int *device);
int cuDevicePrimaryCtxRetain(void **ctx, int device);
int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr);
int cuStreamIsCapturing(void *stream, int *status);
""")
_POINTER_DEVICE_ORDINAL = 9  # CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
_drv = None


def _driver():
    global _drv
    if _drv is None:
        d = _ffi.dlopen("libcuda.so.1")
        if d.cuInit(0) != 0:
            raise OSError("cuInit failed: no usable CUDA device")
        _drv = d
    return _drv


def pointer_device(ptr: int) -> Optional[int]:
    """The ordinal of the device that owns ptr, or None if the driver does not know the pointer."""
    d = _driver()
    out = _ffi.new("int *")
    if d.cuPointerGetAttribute(out, _POINTER_DEVICE_ORDINAL, ptr) != 0:
        return None
    return out[0]


def capture_query(stream: int) -> Callable[[], bool]:
    """A function that tells whether stream is being captured into a CUDA graph (cuStreamIsCapturing, a query
    allowed under any capture mode), its arguments made once: called only after a call refused for want of
    workspace while torch is loaded (_context._Guard.call), one foreign call. Not for two threads at once (a
    context's lock serialises it)."""
    query, handle, out = _driver().cuStreamIsCapturing, _ffi.cast("void *", stream), _ffi.new("int *")

    def capturing() -> bool:
        return query(handle, out) == 0 and out[0] == 1  # CU_STREAM_CAPTURE_STATUS_ACTIVE

    return capturing


def current_device() -> int:
    """The device of the calling thread's current context (0 when none is current)."""
    d = _driver()
    out = _ffi.new("int *")
    return out[0] if d.cuCtxGetDevice(out) == 0 else 0


@contextlib.contextmanager
def on_device(device: int) -> Iterator[None]:
    """Makes device's primary context current for the block, then restores the caller's context."""
    d = _driver()
    prev = _ffi.new("void **")
    d.cuCtxGetCurrent(prev)
    primary = _ffi.new("void **")
    if d.cuDevicePrimaryCtxRetain(primary, device) != 0:
        raise OSError(f"no CUDA device {device}")
    d.cuCtxSetCurrent(primary[0])
    try:
        yield
    finally:
        d.cuCtxSetCurrent(prev[0])
