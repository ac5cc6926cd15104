"""Shared test data and the numpy references every backend is checked against."""
import gc
import os
import sys
import time

import numpy as np
import pytest

import pscan

SEED = 20251114
INT_DTYPES = [np.dtype(d) for d in pscan.DTYPES if np.dtype(d).kind in "iu"]
FLOAT_DTYPES = [np.dtype(d) for d in pscan.DTYPES if np.dtype(d).kind == "f"]
ALL_DTYPES = INT_DTYPES + FLOAT_DTYPES
ACCUMULATE = {"sum": np.add, "product": np.multiply, "min": np.minimum, "max": np.maximum,
              "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def ops_for(dtype):
    return [op for op in pscan.OPS if dtype.kind in "iu" or op not in ("and", "or", "xor")]


def identity(op, dtype):
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    return {"sum": 0, "product": 1, "or": 0, "xor": 0,
            "min": info.max if info else np.inf, "max": info.min if info else -np.inf,
            "and": (-1 if dtype.kind == "i" else info.max) if info else None}[op]


def data(n, dtype, op="sum", seed=SEED):
    """Random data for which every combination order gives the same bits: small integers (floats hold their
    sums exactly), and for products only 1 and -1 in floats (no overflow in any grouping)."""
    rng = np.random.default_rng(seed + n)
    if op == "product":
        vals = [1, -1] if dtype.kind in "fi" else [1, 3]
        if dtype.kind == "i":
            vals = [1, -1, 2, 3]
        return rng.choice(np.array(vals), n).astype(dtype)
    if dtype.kind == "f":
        return rng.integers(-8, 9, n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def ref_scan(x, op, exclusive=False, reverse=False, init=None):
    """The serial reference: the operator accumulated over [init] + x, in the C library's own type."""
    dt = x.dtype
    ufunc = ACCUMULATE[op]
    v = x[::-1] if reverse else x
    start = identity(op, dt) if init is None else init
    seq = np.concatenate([np.array([start]).astype(dt), v])
    with np.errstate(over="ignore", invalid="ignore"):
        acc = ufunc.accumulate(seq, dtype=dt)
    r = acc[:-1] if exclusive else acc[1:]
    return r[::-1].copy() if reverse else r


def ref_reduce(x, op, init=None):
    r = ref_scan(x.ravel(), op, init=init)
    return r[-1] if r.size else np.array(identity(op, x.dtype) if init is None else init).astype(x.dtype)[()]


def assert_same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


class CountingLib:
    """Stands in for pscan's cffi library object and counts the C calls made through it (monkeypatch it over
    pscan._api.lib), so that a test can check that a batch of rows is one C call, not a loop."""

    def __init__(self, lib):
        self._lib = lib
        self.calls = {}

    def __getattr__(self, name):
        fn = getattr(self._lib, name)
        if not name.startswith("pscan_"):
            return fn

        def counted(*args):
            self.calls[name] = self.calls.get(name, 0) + 1
            return fn(*args)

        return counted


@pytest.fixture
def count_calls(monkeypatch):
    import pscan._api

    counter = CountingLib(pscan._api.lib)
    monkeypatch.setattr(pscan._api, "lib", counter)
    return counter.calls


# ---- the garbage collector's share of each test ---------------------------------------------------------------
# An H200 run once stopped in test_dask with the main thread "Garbage-collecting": this says, per file, how much
# time the collector took and where its longest pause was, and names at once (on stderr, so a run killed later
# still shows it) every collection longer than PSCAN_TEST_GC_REPORT seconds (default 1) and the test it ran in.
# A finalizer that blocks shows as a collection that never ends: the faulthandler stack is then in that test.
_gc = {"start": 0.0, "total": 0.0, "count": 0, "longest": 0.0, "where": "", "test": "(collection)"}
_GC_REPORT_S = float(os.environ.get("PSCAN_TEST_GC_REPORT", "1"))


def _gc_watch(phase, info):
    if phase == "start":
        _gc["start"] = time.perf_counter()
        return
    took = time.perf_counter() - _gc["start"]
    _gc["total"] += took
    _gc["count"] += 1
    if took > _gc["longest"]:
        _gc["longest"], _gc["where"] = took, f"generation {info['generation']} in {_gc['test']}"
    if took >= _GC_REPORT_S:
        sys.stderr.write(f"\n[gc] a generation {info['generation']} collection took {took:.2f} s in {_gc['test']} "
                         f"({info['collected']} collected, {info['uncollectable']} uncollectable)\n")
        sys.stderr.flush()


gc.callbacks.append(_gc_watch)


def pytest_runtest_setup(item):
    _gc["test"] = item.nodeid.rsplit("/", 1)[-1]


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(
        f"gc: {_gc['count']} collections, {_gc['total']:.2f} s; the longest {_gc['longest']:.2f} s "
        f"({_gc['where'] or 'none'}); {len(gc.get_objects())} objects tracked")
