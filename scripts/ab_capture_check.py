"""scripts/ab_capture_check.py - the cost of the binding's capture check (python/pscan/_context.py, _Guard) on
small torch calls, on a GPU: pscan.scan of 2^10 / 2^16 f32 and i64 CUDA tensors on a side stream (the default
stream is never queried), the check as shipped against a stub that skips it, interleaved in blocks of 200 calls,
median us a call of each. Needs torch with CUDA and the package importable (PYTHONPATH=python,
PSCAN_LIBRARY=path/to/libpscan.so.0.1.0).

    python3 scripts/ab_capture_check.py
"""
import statistics
import time

import torch
import pscan
from pscan import _context

shipped = _context._Guard._torch_capture
def off(self):
    return None

def per_call(x, reps=200):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        pscan.scan(x)
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / reps * 1e6

side = torch.cuda.Stream()
torch.cuda.set_stream(side)  # a side stream: the legacy default one is never queried
for log2 in (10, 16):
    for dt in (torch.float32, torch.int64):
        x = torch.rand(1 << log2, device="cuda").to(dt)
        for _ in range(3):
            per_call(x)
        res = {"check": [], "none": []}
        for block in range(30):
            for name, f in (("check", shipped), ("none", off)) if block % 2 else (("none", off), ("check", shipped)):
                _context._Guard._torch_capture = f
                res[name].append(per_call(x))
        _context._Guard._torch_capture = shipped
        c, n = statistics.median(res["check"]), statistics.median(res["none"])
        print(f"2^{log2} {str(dt):14s} check {c:7.2f} us  none {n:7.2f} us  diff {c - n:+.2f} us "
              f"(spread check {min(res['check']):.2f}-{max(res['check']):.2f})")
