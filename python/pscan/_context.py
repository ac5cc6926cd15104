"""pscan contexts, cached: one for the CPU, one per (CUDA device, stream), created on first use.

A call holds its context's lock while it runs (the CPU backend) or enqueues (CUDA): a context's workspace is
not meant for two threads at once. The GIL is released during the C call (cffi does so for every call), so
other Python threads run meanwhile. Cached CUDA contexts refer to a stream by its handle and are kept until
clear_cache(); a program that makes many short-lived streams should call it now and then (CuPy streams seen
are kept alive until then, since a context synchronises its stream when destroyed; see keep_stream()).

Some things live as long as their context and are freed before it (extras()): the row offsets a batched scan
along an axis reads on a device (one buffer per row length, uploaded once on the context's stream), and the
user operators made for the context (pscan_operator_create is per context).

A call into a CUDA context whose stream torch is capturing into a graph (torch.cuda.graph) and whose workspace
is too small for it (the library refuses to grow it under capture: PSCAN_ERROR_TEMP_TOO_SMALL, nothing enqueued,
the capture still valid) is made again once with its temporary storage borrowed from torch's caching allocator,
which under capture serves the graph's own pool: captured calls need no warm-up. The lender is set on the context
for the length of that second call only (pscan_context_set_allocator). Whether torch captures is asked only after
such a refusal (_Guard.call), so calls that succeed, captured or not, pay nothing for it; a captured call the
workspace can serve (after a warm-up on that stream) runs on the workspace, which the library then keeps for the
graph until the context is destroyed.
"""
from __future__ import annotations

import sys
import threading
from typing import Callable, Dict, Optional, Tuple

from ._errors import check, error
from ._lib import HAVE_CUDA, STATUS_CODES, ffi, lib

_CPU = 1  # PSCAN_BACKEND_CPU; checked at import below
_TEMP_TOO_SMALL = STATUS_CODES["PSCAN_ERROR_TEMP_TOO_SMALL"]  # what a captured call short of workspace returns
_cache: Dict[Tuple[int, int], Tuple[object, "_Guard"]] = {}
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


class Lender:
    """A pscan_allocator made of two Python functions: alloc(bytes) -> (address, owner) or raises, and
    release(owner) when the library hands the memory back. The owners are kept by address until then. Exceptions
    in alloc become a NULL loan (the call fails with PSCAN_ERROR_OUT_OF_MEMORY, nothing written), and the
    exception is kept as .error for the caller to chain."""

    def __init__(self, alloc: Callable[[int], Tuple[int, object]], release: Callable[[object], None]):
        self._alloc, self._release = alloc, release
        self.loans: Dict[int, object] = {}
        self.error: Optional[BaseException] = None

        def on_alloc_error(exc_type, exc, tb):
            self.error = exc
            return None  # NULL: the library fails the call

        @ffi.callback("void *(void *, size_t)", onerror=on_alloc_error)
        def c_alloc(user, nbytes):
            address, owner = self._alloc(int(nbytes))
            self.loans[address] = owner
            return ffi.cast("void *", address)

        @ffi.callback("void (void *, void *)")
        def c_release(user, ptr):
            owner = self.loans.pop(int(ffi.cast("uintptr_t", ptr)), None)
            if owner is not None:
                self._release(owner)

        self._callbacks = (c_alloc, c_release)  # alive as long as the struct that points at them
        self.struct = ffi.new("pscan_allocator *", {"alloc": c_alloc, "release": c_release, "user": ffi.NULL})

    def lend(self, ctx):
        """A context manager: ctx's calls with temp == NULL borrow from this lender inside the block (call with
        ctx's lock held); the workspace again after it."""
        return _Lending(ctx, self)


class _Lending:
    __slots__ = ("ctx", "lender")

    def __init__(self, ctx, lender: Lender):
        self.ctx, self.lender = ctx, lender

    def __enter__(self):
        self.lender.error = None
        check(lib.pscan_context_set_allocator(self.ctx, self.lender.struct), "pscan_context_set_allocator")
        return self.lender

    def __exit__(self, exc_type, exc, tb):
        lib.pscan_context_set_allocator(self.ctx, ffi.NULL)  # cannot fail with NULL
        if exc is not None and exc.__cause__ is None and self.lender.error is not None:
            exc.__cause__ = self.lender.error  # what the allocator raised, behind the OUT_OF_MEMORY
        self.lender.error = None
        return False


_torch_lenders: Dict[int, Lender] = {}  # CUDA device -> the lender over torch's caching allocator


def _torch_lender(torch, device: int) -> Lender:
    lender = _torch_lenders.get(device)
    if lender is None:
        where = torch.device("cuda", device)

        def alloc(nbytes: int):
            # On torch's current stream of the device, which _Guard.call checked is the context's: under capture
            # the graph's pool; the caching allocator reuses a released block only for work queued after it
            # on that stream, the order pscan_allocator asks for.
            t = torch.empty(max(nbytes, 1), dtype=torch.uint8, device=where)
            return t.data_ptr(), t

        lender = _torch_lenders[device] = Lender(alloc, lambda t: None)  # dropping the tensor frees it
    return lender


class _Guard:
    """The lock of one context, taken by `with guard:` (nothing else: no query, no lending), and call(), which
    makes one library call with temp == NULL under that lock and checks its status.

    What the capture handling costs: nothing outside a refusal. A call that succeeds is the call and one
    comparison, one that fails with any other status adds check() as ever; only a
    PSCAN_ERROR_TEMP_TOO_SMALL from a CUDA context on a stream that can be captured (not the legacy default
    stream, torch's default), with torch loaded, costs one driver query (cuStreamIsCapturing) and, when torch is
    capturing the context's stream (its current stream on the context's device), the same call again with
    torch's allocator lent to the context. (Before this design the query ran at every `with` entry: +1.13 us a
    call at 2^10 elements, +0.65 us at 2^16 on an H200, fiftieth session, scripts/ab_capture_check.py.)

    Every library call that takes temp goes through call(), on the CPU context too (where nothing is ever
    refused for want of workspace, so it is the plain check); those without a temp argument (the *_host
    functions, memory, operators, context settings) cannot be refused that way and call check() directly."""

    __slots__ = ("ctx", "lock", "device", "stream", "capturing", "may_capture")

    def __init__(self, ctx, device: int, stream: int):
        self.ctx, self.lock, self.device, self.stream = ctx, threading.Lock(), device, stream
        self.capturing = None  # cuStreamIsCapturing on the stream, made at the first refusal
        # the legacy default stream (handle 0, or 1: cudaStreamLegacy), torch's default, is never captured
        self.may_capture = device >= 0 and stream not in (0, 1)

    def __enter__(self):
        self.lock.acquire()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.lock.release()
        return False

    def _torch_capture(self):
        """torch, when it is capturing the context's stream (its current stream on the device); else None."""
        if not self.may_capture:
            return None
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        if self.capturing is None:
            from . import _cuda

            self.capturing = _cuda.capture_query(self.stream)
        if not self.capturing():
            return None
        from ._arrays import torch_stream

        return torch if torch_stream(torch, self.device) == self.stream else None

    def call(self, what: str, fn, *args, before_check: Optional[Callable[[], None]] = None) -> None:
        """fn(*args), a library call with temp == NULL on this context (call with the lock held: inside
        `with guard:`), its status checked as check(status, what) does. Refused for want of workspace while
        torch captures the stream, it runs once more with torch's allocator lent (the first attempt enqueued
        nothing), and that status is checked inside the loan, so an allocator's exception becomes the error's
        __cause__. before_check, if given, runs after the call and before the check (a user operator raises its
        callback's exception there). A success costs one comparison (not even check()'s call)."""
        status = fn(*args)
        if status or before_check is not None:
            self._settle(status, what, fn, args, before_check)

    def _settle(self, status: int, what: str, fn, args, before_check) -> None:
        if status == _TEMP_TOO_SMALL:
            torch = self._torch_capture()
            if torch is not None:
                with _torch_lender(torch, self.device).lend(self.ctx):
                    status = fn(*args)
                    if before_check is not None:
                        before_check()
                    check(status, what)
                return
        if before_check is not None:
            before_check()
        check(status, what)


def get(device: int, stream: int):
    """(context, guard) for the host (device < 0) or a CUDA device and stream handle; `with guard:` holds the
    context's lock, and guard.call() makes a library call with temp == NULL under it (see _Guard)."""
    key = (device, stream if device >= 0 else 0)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    with _cache_lock:
        hit = _cache.get(key)
        if hit is None:
            ctx = _create(*key)
            hit = _cache[key] = (ctx, _Guard(ctx, *key))
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
