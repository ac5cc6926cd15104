#!/usr/bin/env python3
"""pscan.scan from Python beside torch.cumsum, cupy.cumsum, a device copy and the bare C call; numpy.cumsum on
the CPU. One table per device, effective GB/s = (bytes read + bytes written) / time, and the ratios the issue
asks for (issue 14): pscan / torch, pscan / cupy, pscan / C call, pscan / numpy.

GPU timing: CUDA events on the array's stream around a loop of calls (the per-call time, host overheads
included, which is what a Python caller pays for small arrays); median of 5 batches. CPU: perf_counter, median
of 5 calls. Usage: python3 scripts/bench_python.py [--csv FILE] [--max-log2 28] [--cpu-log2 26] [--only gpu|cpu|small]
(small: small calls' host time on a torch device, the short path beside the general one, and reduce along axis 1)
"""
import argparse
import csv
import statistics
import sys
import time

import numpy as np

import pscan
from pscan import _context
from pscan._lib import ffi, lib


def gpu_timer(torch, cupy):
    """fn -> seconds per call of fn, measured with events on the current stream of torch (or CuPy)."""
    def measure(fn, reps):
        fn()
        samples = []
        for _ in range(5):
            if torch is not None:
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                for _ in range(reps):
                    fn()
                b.record()
                b.synchronize()
                samples.append(a.elapsed_time(b) / 1e3 / reps)
            else:
                a, b = cupy.cuda.Event(), cupy.cuda.Event()
                a.record()
                for _ in range(reps):
                    fn()
                b.record()
                b.synchronize()
                samples.append(cupy.cuda.get_elapsed_time(a, b) / 1e3 / reps)
        return statistics.median(samples)
    return measure


def c_call(x_ptr, o_ptr, n, tid, device, stream):
    """The C call with nothing of the wrapper around it (a cached context and descriptor, cffi only)."""
    ctx, _ = _context.get(device, stream)
    desc = ffi.new("pscan_scan_desc *", [tid, 0, 0, 0, ffi.NULL])
    xp, op = ffi.cast("void *", x_ptr), ffi.cast("void *", o_ptr)
    return lambda: lib.pscan_scan(ctx, desc, xp, op, n, ffi.NULL, 0)


def bench_gpu(args, rows):
    try:
        import torch
        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
    try:
        import cupy
    except ImportError:
        cupy = None
    if torch is None and cupy is None:
        print("GPU: neither torch with CUDA nor CuPy: skipped")
        return
    if not pscan.HAVE_CUDA:
        print("GPU: this pscan has no CUDA backend: skipped")
        return
    from pscan._arrays import adapt, type_of

    measure = gpu_timer(torch, cupy)
    name = torch.cuda.get_device_name() if torch is not None else cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"\nGPU: {name}")
    print(f"{'dtype':8s} {'n':>6s} {'pscan.scan':>11s} {'C call':>9s} {'torch':>9s} {'cupy':>9s} {'copy':>9s}   "
          f"{'/torch':>6s} {'/cupy':>6s} {'/C':>6s} {'/copy':>6s}  (GB/s; then pscan.scan's speed / each one's)")
    for dtype in ("float32", "int64"):
        for log2 in [10, 16, 20, 24, args.max_log2]:
            n = 1 << log2
            if torch is not None:
                tdt = getattr(torch, dtype)
                x = torch.ones(n, dtype=tdt, device="cuda")
                o = torch.empty_like(x)
                o2 = torch.empty_like(x)
            else:
                x = cupy.ones(n, dtype)
                o = cupy.empty_like(x)
                o2 = cupy.empty_like(x)
            ax, ao = adapt(x), adapt(o)
            reps = max(3, min(1000, (1 << 26) // n))
            t = {"pscan.scan": measure(lambda: pscan.scan(x, out=o), reps),
                 "C call": measure(c_call(int(ffi.cast("uintptr_t", ax.ptr)), int(ffi.cast("uintptr_t", ao.ptr)), n,
                                          type_of(ax.dtype), ax.device, ax.stream), reps)}
            if torch is not None:
                t["torch"] = measure(lambda: torch.cumsum(x, 0, out=o2), reps)
                t["copy"] = measure(lambda: o2.copy_(x), reps)
            if cupy is not None:
                cx = cupy.from_dlpack(x) if torch is not None else x
                co = cupy.empty_like(cx)
                t["cupy"] = measure(lambda: cupy.cumsum(cx, out=co), reps)
                if "copy" not in t:
                    t["copy"] = measure(lambda: co.__setitem__(Ellipsis, cx), reps)
            gbs = {k: 2 * n * np.dtype(dtype).itemsize / v / 1e9 for k, v in t.items()}
            ratio = {k: t[k] / t["pscan.scan"] for k in t}
            row = {"device": name, "dtype": dtype, "log2": log2, **{f"{k} GB/s": round(v, 1) for k, v in gbs.items()},
                   **{f"{k} us": round(v * 1e6, 2) for k, v in t.items()},
                   **{f"pscan/{k}": round(v, 3) for k, v in ratio.items() if k != "pscan.scan"}}
            rows.append(row)
            f = lambda k: f"{gbs[k]:9.1f}" if k in gbs else f"{'-':>9s}"  # noqa: E731
            r = lambda k: f"{ratio[k]:6.2f}" if k in ratio else f"{'-':>6s}"  # noqa: E731
            print(f"{dtype:8s} 2^{log2:<4d} {gbs['pscan.scan']:11.1f} {f('C call')} {f('torch')} {f('cupy')} "
                  f"{f('copy')}   {r('torch')} {r('cupy')} {r('C call')} {r('copy')}"
                  f"  per call {t['pscan.scan'] * 1e6:.1f} us (torch {t.get('torch', 0) * 1e6:.1f})")
            x = o = o2 = cx = co = None  # free the device memory before the next size  # noqa: F841
    bench_gpu_rows(args, rows, torch, cupy, measure, name)


def bench_gpu_rows(args, rows, torch, cupy, measure, name):
    """A scan along the last axis of float32 (rows, m) arrays: pscan's one segmented-scan call beside
    torch.cumsum(dim=1) and cupy.cumsum(axis=1)."""
    print(f"\nGPU rows: scan along axis 1 of float32 (rows, m), 2^{min(26, args.max_log2)} elements")
    print(f"{'rows x m':>14s} {'pscan.scan':>11s} {'torch':>9s} {'cupy':>9s}   {'/torch':>6s} {'/cupy':>6s}  (GB/s)")
    total = min(26, args.max_log2)
    for log_m in [m_ for m_ in (4, 10, 16) if m_ < total]:
        r_, m = 1 << (total - log_m), 1 << log_m
        if torch is not None:
            x = torch.ones(r_, m, dtype=torch.float32, device="cuda")
            o, o2 = torch.empty_like(x), torch.empty_like(x)
        else:
            x = cupy.ones((r_, m), "float32")
            o, o2 = cupy.empty_like(x), cupy.empty_like(x)
        reps = 20
        t = {"pscan.scan": measure(lambda: pscan.scan(x, axis=1, out=o), reps)}
        if torch is not None:
            t["torch"] = measure(lambda: torch.cumsum(x, 1, out=o2), reps)
        if cupy is not None:
            cx = cupy.from_dlpack(x) if torch is not None else x
            co = cupy.empty_like(cx)
            t["cupy"] = measure(lambda: cupy.cumsum(cx, axis=1, out=co), reps)
        gbs = {k: 2 * r_ * m * 4 / v / 1e9 for k, v in t.items()}
        ratio = {k: t[k] / t["pscan.scan"] for k in t}
        f = lambda k: f"{gbs[k]:9.1f}" if k in gbs else f"{'-':>9s}"  # noqa: E731
        q = lambda k: f"{ratio[k]:6.2f}" if k in ratio else f"{'-':>6s}"  # noqa: E731
        print(f"{f'2^{total - log_m} x 2^{log_m}':>14s} {gbs['pscan.scan']:11.1f} {f('torch')} {f('cupy')}   "
              f"{q('torch')} {q('cupy')}")
        rows.append({"device": name, "dtype": f"float32 rows of 2^{log_m}", "log2": total,
                     **{f"{k} GB/s": round(v, 1) for k, v in gbs.items()},
                     **{f"{k} us": round(v * 1e6, 2) for k, v in t.items()},
                     **{f"pscan/{k}": round(v, 3) for k, v in ratio.items() if k != "pscan.scan"}})
        x = o = o2 = cx = co = None  # noqa: F841


def bench_gpu_small(args, rows):
    """Small calls on a CUDA device, per call with the host's time included (events around back-to-back calls):
    the short path (a whole tensor, no axis: _scan_whole, _reduce_whole) beside the general path (axis=0 of the
    same 1-d tensor), the bare C call and torch's own; then a reduce along axis 1 of (rows, m) float32, rows of
    up to _ROWS_REDUCE_MAX_DEVICE as one segmented scan beside a call a row (the limit set to 0) and torch.sum."""
    import torch

    from pscan import _api
    from pscan._arrays import adapt, type_of

    measure = gpu_timer(torch, None)
    name = torch.cuda.get_device_name()
    print(f"\nGPU small calls: {name} (us a call, host included)")
    for dtype in ("float32", "int64"):
        for log2 in (10, 16):
            n = 1 << log2
            x = torch.randint(0, 100, (n,), device="cuda").to(getattr(torch, dtype))
            o = torch.empty_like(x)
            ax, ao = adapt(x), adapt(o)
            fns = {"scan": lambda: pscan.scan(x), "scan axis=0": lambda: pscan.scan(x, axis=0),
                   "scan out=": lambda: pscan.scan(x, out=o), "cumsum": lambda: pscan.cumsum(x),
                   "C call": c_call(int(ffi.cast("uintptr_t", ax.ptr)), int(ffi.cast("uintptr_t", ao.ptr)), n,
                                    type_of(ax.dtype), ax.device, ax.stream),
                   "torch.cumsum": lambda: torch.cumsum(x, 0), "reduce": lambda: pscan.reduce(x),
                   "reduce axis=0": lambda: pscan.reduce(x, axis=0), "torch.sum": lambda: torch.sum(x)}
            t = {k: measure(f, 2000) * 1e6 for k, f in fns.items()}
            print(f"{dtype} 2^{log2}: " + ", ".join(f"{k} {v:.2f}" for k, v in t.items()))
            rows.append({"device": name, "dtype": f"{dtype} small", "log2": log2,
                         **{f"{k} us": round(v, 2) for k, v in t.items()}})
    keep = _api._ROWS_REDUCE_MAX_DEVICE
    for r_, m in ((10000, 100), (1000, 1000), (100, 10000)):
        x = torch.rand(r_, m, device="cuda")
        t = {"reduce axis=1": measure(lambda: pscan.reduce(x, axis=1), 20) * 1e6}
        _api._ROWS_REDUCE_MAX_DEVICE = 0
        try:
            t["a call a row"] = measure(lambda: pscan.reduce(x, axis=1), 20) * 1e6
        finally:
            _api._ROWS_REDUCE_MAX_DEVICE = keep
        t["torch.sum"] = measure(lambda: torch.sum(x, 1), 20) * 1e6
        print(f"float32 ({r_}, {m}) reduce axis 1: " + ", ".join(f"{k} {v:.1f}" for k, v in t.items()) + " us")
        rows.append({"device": name, "dtype": f"float32 ({r_}, {m}) axis 1", "log2": 0,
                     **{f"{k} us": round(v, 1) for k, v in t.items()}})


def bench_cpu(args, rows):
    print(f"\nCPU: {pscan.device_name()}")
    print(f"{'dtype':8s} {'n':>6s} {'pscan.scan':>11s} {'numpy':>9s}   {'/numpy':>6s}  (GB/s)")
    for log2 in (10, 20, args.cpu_log2):
        n = 1 << log2
        x = np.ones(n, np.int64)
        o, o2 = np.empty_like(x), np.empty_like(x)
        reps = max(5, min(2000, (1 << 24) // n))

        def measure(fn):
            fn()
            samples = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(reps):
                    fn()
                samples.append((time.perf_counter() - t0) / reps)
            return statistics.median(samples)

        tp, tn = measure(lambda: pscan.scan(x, out=o)), measure(lambda: np.cumsum(x, out=o2))
        g = lambda t: 2 * n * 8 / t / 1e9  # noqa: E731
        print(f"{'int64':8s} 2^{log2:<4d} {g(tp):11.1f} {g(tn):9.1f}   {tn / tp:6.2f}  per call {tp * 1e6:.1f} us "
              f"(numpy {tn * 1e6:.1f})")
        rows.append({"device": pscan.device_name(), "dtype": "int64", "log2": log2, "pscan.scan GB/s": round(g(tp), 1),
                     "numpy GB/s": round(g(tn), 1), "pscan/numpy": round(tn / tp, 3)})


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--csv")
    p.add_argument("--max-log2", type=int, default=28)
    p.add_argument("--cpu-log2", type=int, default=26)
    p.add_argument("--only", choices=["gpu", "cpu", "small"])
    args = p.parse_args()
    rows = []
    if args.only == "small":
        bench_gpu_small(args, rows)
    elif args.only != "cpu":
        bench_gpu(args, rows)
    if args.only is None or args.only == "cpu":
        bench_cpu(args, rows)
    if args.csv and rows:
        keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("device", "dtype", "log2"), k))
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, keys)
            w.writeheader()
            w.writerows(rows)
        print(f"\nwrote {args.csv}")


if __name__ == "__main__":
    sys.exit(main())
