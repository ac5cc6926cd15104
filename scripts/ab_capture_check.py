"""scripts/ab_capture_check.py - what the binding's CUDA graph capture handling (python/pscan/_context.py, _Guard)
costs small torch calls, on a GPU.

Before this change, every call into a CUDA context on a non-legacy stream while torch was loaded asked the
driver whether torch was capturing the stream (cuStreamIsCapturing, on entering `with lock:`), to lend torch's
caching allocator to the context during a capture. The fiftieth session measured that query with
this script on an H200 (pscan.scan of f32 tensors on a side stream, the query against a stub that skipped it,
interleaved): +1.13 us a call at 2^10 elements, +0.65 us at 2^16, on calls of 17-27 us. Now the query runs only
after a call refused with PSCAN_ERROR_TEMP_TOO_SMALL (the workspace cannot grow under capture), which is then
made once more with torch's allocator lent if torch is capturing (_Guard.call); a call that succeeds asks
nothing.

Two measurements:

1. On the GPU: pscan.scan of 2^10 / 2^16 f32 and i64 CUDA tensors on a side stream (the legacy default stream
   was never queried), "new" (the shipped guard: the lock at entry, guard.call) against "old" (a subclass that
   does what the guard did before: the query at every entry, then the status checked), one context, the two
   guards swapped in its cache entry, interleaved in blocks of 200 calls; median us a call of each. old - new is
   what the change saved, about the figures above.
2. On the host, no GPU work: the same guard.call against check(fn(...)) at the call site (the shape before this
   change) on the CPU context with n == 0 (a no-op call), median ns a call: what the method itself costs, which
   both arms of 1 pay.

Needs torch with CUDA and the package importable (PYTHONPATH=python, PSCAN_LIBRARY=path/to/libpscan.so.0.1.0).

    python3 scripts/ab_capture_check.py
"""
import statistics
import time

import pscan
from pscan import _context
from pscan._errors import check
from pscan._lib import ALGO_AUTO, OP_IDS, TYPE_IDS, ffi, lib


class OldGuard(_context._Guard):
    """_Guard as it was before this change: the capture query at every entry (and torch's allocator lent for the
    block under a capture, which this script never reaches), the status checked as check(fn(*args)) did."""

    __slots__ = ("lending",)

    def __init__(self, ctx, device: int, stream: int):
        super().__init__(ctx, device, stream)
        self.lending = None

    def __enter__(self):
        self.lock.acquire()
        try:
            torch = self._torch_capture()
            if torch is not None:
                lending = _context._torch_lender(torch, self.device).lend(self.ctx)
                lending.__enter__()
                self.lending = lending
        except BaseException:
            self.lock.release()
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        lending, self.lending = self.lending, None
        try:
            if lending is not None:
                lending.__exit__(exc_type, exc, tb)
        finally:
            self.lock.release()
        return False

    def call(self, what, fn, *args, before_check=None):
        status = fn(*args)
        if before_check is not None:
            before_check()
        check(status, what)


def gpu_ab(torch):
    def per_call(x, reps=200):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(reps):
            pscan.scan(x)
        torch.cuda.synchronize()
        return (time.perf_counter() - t) / reps * 1e6

    from pscan._arrays import torch_stream

    side = torch.cuda.Stream()
    torch.cuda.set_stream(side)  # a side stream: the legacy default one was never queried
    for log2 in (10, 16):
        for dt in (torch.float32, torch.int64):
            x = torch.rand(1 << log2, device="cuda").to(dt)
            for _ in range(3):
                per_call(x)  # makes the context and grows its workspace
            key = (x.device.index, torch_stream(torch, x.device.index))
            ctx, new = _context._cache[key]
            guards = {"new": new, "old": OldGuard(ctx, *key)}
            res = {"old": [], "new": []}
            try:
                for block in range(30):
                    for name in ("old", "new") if block % 2 else ("new", "old"):
                        _context._cache[key] = (ctx, guards[name])
                        res[name].append(per_call(x))
            finally:
                _context._cache[key] = (ctx, new)
            o, n = statistics.median(res["old"]), statistics.median(res["new"])
            print(f"2^{log2} {str(dt):14s} old {o:7.2f} us  new {n:7.2f} us  old - new {o - n:+.2f} us "
                  f"(spread old {min(res['old']):.2f}-{max(res['old']):.2f}, "
                  f"new {min(res['new']):.2f}-{max(res['new']):.2f})")


def host_ab(reps=100000, blocks=10):
    ctx, guard = _context.get(-1, 0)
    desc = ffi.new("pscan_scan_desc *", [TYPE_IDS["f32"], OP_IDS["sum"], 0, ALGO_AUTO, ffi.NULL])
    scan, null = lib.pscan_scan, ffi.NULL

    def via_call():
        t = time.perf_counter()
        for _ in range(reps):
            with guard:
                guard.call("pscan_scan", scan, ctx, desc, null, null, 0, null, 0)
        return (time.perf_counter() - t) / reps * 1e9

    def via_check():
        t = time.perf_counter()
        for _ in range(reps):
            with guard:
                check(scan(ctx, desc, null, null, 0, null, 0), "pscan_scan")
        return (time.perf_counter() - t) / reps * 1e9

    res = {"call": [], "check": []}
    for block in range(blocks):
        for name, f in (("call", via_call), ("check", via_check)) if block % 2 else \
                (("check", via_check), ("call", via_call)):
            res[name].append(f())
    c, k = statistics.median(res["call"]), statistics.median(res["check"])
    print(f"host, n = 0: guard.call {c:6.0f} ns  check(fn(...)) {k:6.0f} ns  diff {c - k:+.0f} ns")


if __name__ == "__main__":
    import torch

    gpu_ab(torch)
    host_ab()
