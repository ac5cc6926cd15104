"""pscan contexts, cached: one for the CPU, one per (CUDA device, stream), created on first use.

A call holds its context's lock while it runs (the CPU backend) or enqueues (CUDA): a context's workspace is
not meant for two threads at once. The GIL is released during the C call (cffi does so for every call), so
other Python threads run meanwhile. Cached CUDA contexts refer to a stream by its handle and are kept until
clear_cache(); a program that makes many short-lived streams should call it now and then (CuPy streams seen
are kept alive until then, since a context synchronises its stream when destroyed; see keep_stream()).

Some things live as long as their context and are freed before it (extras()): the row offsets a batched scan
along an axis reads on a device (one buffer per row length, uploaded once on the context's stream), and the
user operators made for the context (pscan_operator_create is per context).
"""
from __future__ import annotations

import threading
from typing import Dict, Tuple

from ._errors import check, error
from ._lib import HAVE_CUDA, ffi, lib

_CPU = 1  # PSCAN_BACKEND_CPU; checked at import below
_cache: Dict[Tuple[int, int], Tuple[object, threading.Lock]] = {}
_cache_lock = threading.Lock()
_extras: Dict[int, dict] = {}  # a context's address -> {"offsets": {...}, "operators": {...}}
_streams: Dict[int, object] = {}  # stream handle -> the Python object that owns it (CuPy), kept alive


def keep_stream(handle: int, owner) -> None:
    """Keeps owner (the object whose deletion destroys stream handle) alive until clear_cache(): destroying a
    context synchronises its stream and frees its workspace on it, which a destroyed stream would crash.
    Streams known only by a handle (__cuda_array_interface__, DLPack) must outlive the cache: call clear_cache()
    before destroying them. torch's streams come from a pool that is never destroyed."""
    if handle and handle not in _streams:
        _streams[handle] = owner


def _create(device: int, stream: int):
    p = ffi.new("pscan_context **")
    if device < 0:
        check(lib.pscan_context_create(_CPU, p), "creating the CPU context")
    else:
        if not HAVE_CUDA:
            raise error("PSCAN_ERROR_BACKEND_UNAVAILABLE",
                        "this pscan was built without CUDA (rebuild with nvcc on PATH to scan CUDA arrays)")
        from . import _cuda

        try:
            _cuda.current_device()  # loads the driver: OSError where there is none
        except OSError as e:
            raise error("PSCAN_ERROR_BACKEND_UNAVAILABLE", f"no CUDA driver: {e}") from None
        try:
            with _cuda.on_device(device):
                check(lib.pscan_cuda_context_create(ffi.cast("void *", stream), p),
                      f"creating a context on device {device}, stream {stream:#x}")
        except OSError as e:  # on_device: no such device
            raise error("PSCAN_ERROR_INVALID_VALUE", str(e)) from None
    return p[0]


def get(device: int, stream: int):
    """(context, lock) for the host (device < 0) or a CUDA device and stream handle."""
    key = (device, stream if device >= 0 else 0)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    with _cache_lock:
        hit = _cache.get(key)
        if hit is None:
            hit = _cache[key] = (_create(*key), threading.Lock())
    return hit


def extras(ctx) -> dict:
    """What is kept for ctx until clear_cache() (call with its lock held): "offsets", row length m ->
    (device pointer, rows it holds, host copy), and "operators", id(operator) -> (operator, pscan_operator *)."""
    key = int(ffi.cast("uintptr_t", ctx))
    ex = _extras.get(key)
    if ex is None:
        ex = _extras[key] = {"offsets": {}, "operators": {}}
    return ex


def _release_extras(ctx) -> None:
    ex = _extras.pop(int(ffi.cast("uintptr_t", ctx)), None)
    if ex is None:
        return
    for _, handle in ex["operators"].values():
        lib.pscan_operator_destroy(handle)
    for ptr, _, _ in ex["offsets"].values():
        lib.pscan_memory_free(ctx, ptr)  # stream-ordered: after the calls that read it


def clear_cache() -> None:
    """Destroys every cached context (each waits for its stream's work first), the operators made for it and
    the buffers kept with it; later calls make new ones."""
    with _cache_lock:
        items = list(_cache.values())
        _cache.clear()
    for ctx, lock in items:
        with lock:
            _release_extras(ctx)
            lib.pscan_context_destroy(ctx)
    _streams.clear()  # after the contexts that used them


def set_cpu_threads(threads: int) -> None:
    """Sets the CPU backend's worker threads (0: one per online processor, the default)."""
    ctx, lock = get(-1, 0)
    with lock:
        check(lib.pscan_context_set_threads(ctx, threads), "set_cpu_threads")


def device_name(device: int = -1, stream: int = 0) -> str:
    """The name of the device the context for (device, stream) runs on ("CPU: 16 threads", "NVIDIA H100 ...")."""
    ctx, lock = get(device, stream)
    buf = ffi.new("char[256]")
    with lock:
        check(lib.pscan_context_device_name(ctx, buf, 256))
    return ffi.string(buf).decode()


assert ffi.string(lib.pscan_backend_name(_CPU)) == b"cpu", "PSCAN_BACKEND_LIST changed: update _CPU"
