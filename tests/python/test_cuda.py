"""pscan on CUDA arrays: CuPy arrays, torch tensors, bare __cuda_array_interface__ and DLPack objects.

Skips unless pscan was built with CUDA and a device is present (the coordinator runs these on the GPU machine
with scripts/gpu-python.sh). Checks: results against numpy for every dtype; the result is the input's kind on
its device; out= is written in place (the pointer passed is the one returned, no copy); work runs on the
array's current stream (a scan queued behind a slow kernel on a non-default stream is right without any
synchronise in between); bad devices and layouts raise with their status.
"""
import numpy as np
import pytest

import pscan
from pscan import _context
from pscan._lib import USER_OP_MAX_BYTES, ffi, lib
from conftest import ALL_DTYPES
from conftest import assert_same, data, ops_for, ref_reduce, ref_scan

if not pscan.HAVE_CUDA:
    pytest.skip("pscan built without CUDA", allow_module_level=True)

try:
    import torch

    HAVE_TORCH = torch.cuda.is_available()
except ImportError:
    torch, HAVE_TORCH = None, False
try:
    import cupy

    HAVE_CUPY = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:
    cupy, HAVE_CUPY = None, False

needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch with CUDA not installed")
needs_cupy = pytest.mark.skipif(not HAVE_CUPY, reason="CuPy with a device not installed")
FLAG_SETS = [(False, False), (True, False), (False, True), (True, True)]
SIZES = [0, 1, 4095, 4096, 4097, 1 << 20, (1 << 22) + 5]
TORCH_DTYPES = [np.dtype(d) for d in ("int8", "uint8", "int16", "int32", "int64", "float32", "float64")]


def to_torch(x):
    return torch.from_numpy(x).cuda() if x.dtype.kind != "u" or x.dtype == np.uint8 else None


# ---- torch ---------------------------------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_torch_scan_reduce(dtype):
    for op in ops_for(dtype):
        for n in SIZES if op == "sum" else SIZES[:5]:
            x = data(n, dtype, op)
            t = to_torch(x)
            for exclusive, reverse in FLAG_SETS:
                got = pscan.scan(t, op=op, exclusive=exclusive, reverse=reverse)
                assert isinstance(got, torch.Tensor) and got.device == t.device
                assert_same(got.cpu().numpy(), ref_scan(x, op, exclusive, reverse))
            r = pscan.reduce(t, op=op)
            assert isinstance(r, torch.Tensor) and r.shape == ()
            assert_same(r.cpu().numpy(), np.asarray(ref_reduce(x, op)))


@needs_torch
def test_torch_out_is_zero_copy_and_in_place():
    x = torch.arange(1 << 20, device="cuda", dtype=torch.int64)
    out = torch.empty_like(x)
    ptr = out.data_ptr()
    got = pscan.scan(x, out=out)
    assert got is out and got.data_ptr() == ptr
    assert torch.equal(out, torch.cumsum(x, 0))
    y = x.clone()
    assert pscan.scan(y, out=y).data_ptr() == y.data_ptr()
    assert torch.equal(y, torch.cumsum(x, 0))


@needs_torch
def test_torch_current_stream_without_synchronize():
    """A scan queued on a side stream behind a slow kernel reads the data that kernel's stream wrote."""
    n = 1 << 24
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.empty(n, device="cuda", dtype=torch.float32)
        torch.cuda._sleep(50_000_000)  # about 25 ms of GPU time before the fill
        x.fill_(1.0)
        y = pscan.scan(x)  # no synchronize: pscan must run on s
        z = pscan.reduce(x)
        k = pscan.select(x, "gt", 0.5)  # reads the count: waits on s
    s.synchronize()
    assert y[-1].item() == n and z.item() == n and k.numel() == n
    assert torch.equal(y, torch.arange(1, n + 1, device="cuda", dtype=torch.float32))


def _replay_scan_reduce_sort(g, x, v, y, r, ks, vs):
    """Three replays of a graph that captured y = scan(x), r = reduce(x), (ks, vs) = sort(x, values=v), each
    with fresh data in x and v, checked against torch."""
    for _ in range(3):
        x.copy_(torch.randint(-1000, 1000, x.shape, device="cuda", dtype=x.dtype))
        v.copy_(torch.rand(v.shape, device="cuda", dtype=v.dtype))
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(y, torch.cumsum(x, 0)) and r.item() == x.sum().item()
        want_k, order = torch.sort(x, stable=True)
        assert torch.equal(ks, want_k) and torch.equal(vs, v[order])


@needs_torch
def test_torch_cuda_graph_after_a_warm_up():
    """Calls captured by torch.cuda.graph replay with fresh data (the library clears its look-back state in the
    graph); a warm-up on the capture's stream first (which grew the workspace the calls once needed) is harmless
    (docs/python.md)."""
    n = (1 << 22) + 3
    s = torch.cuda.Stream()
    x = torch.randint(-1000, 1000, (n,), device="cuda", dtype=torch.int64)
    v = torch.rand(n, device="cuda", dtype=torch.float64)
    with torch.cuda.stream(s):  # the warm-up, on the stream the capture will use
        pscan.scan(x)
        pscan.reduce(x)
        pscan.sort(x, values=v)
    s.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        y = pscan.scan(x)
        r = pscan.reduce(x)
        ks, vs = pscan.sort(x, values=v)
    _replay_scan_reduce_sort(g, x, v, y, r, ks, vs)


@needs_torch
def test_torch_cuda_graph_without_a_warm_up():
    """Captured on a fresh stream (a new context, its workspace empty, which does not grow under capture), each
    call is refused (PSCAN_ERROR_TEMP_TOO_SMALL, nothing enqueued) and made again borrowing its temp from torch's
    caching allocator, which under capture serves the graph's pool (_context._Guard.call retries so only while
    torch captures the context's stream); replays with fresh data are right, every loan returned."""
    n = (1 << 22) + 5
    s = torch.cuda.Stream()
    x = torch.randint(-1000, 1000, (n,), device="cuda", dtype=torch.int32)
    v = torch.rand(n, device="cuda", dtype=torch.float32)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        y = pscan.scan(x, dtype=np.int64)
        r = pscan.reduce(x)
        ks, vs = pscan.sort(x, values=v)
    assert not _context._torch_lenders[x.device.index].loans
    _replay_scan_reduce_sort(g, x, v, y, r, ks, vs)
    with torch.cuda.stream(s):  # outside the capture: the context's own workspace again
        z = pscan.scan(x)
    s.synchronize()
    assert torch.equal(z, torch.cumsum(x, 0, dtype=torch.int32))


@needs_torch
def test_torch_axis_dtype_select_partition():
    m = torch.randint(-5, 6, (300, 257), device="cuda", dtype=torch.int32)
    for axis in (0, 1, -1):
        assert torch.equal(pscan.scan(m, axis=axis), torch.cumsum(m, axis).to(torch.int32))
        assert torch.equal(pscan.reduce(m, axis=axis), m.sum(axis).to(torch.int32))
    assert pscan.scan(m, dtype=np.int64).dtype == torch.int64
    x = torch.randint(0, 10, (100003,), device="cuda", dtype=torch.int64)
    v = torch.arange(100003, device="cuda", dtype=torch.float64)
    k, vals = pscan.select(x, "gt", 4, values=v)
    assert torch.equal(k, x[x > 4]) and torch.equal(vals, v[x > 4])
    keys, count = pscan.partition(x, flags=(x % 2 == 0))
    assert count == int((x % 2 == 0).sum()) and torch.equal(keys[:count], x[x % 2 == 0])


@needs_torch
def test_torch_cpu_tensor_runs_on_cpu_backend():
    x = torch.arange(1000, dtype=torch.int64)
    got = pscan.scan(x)
    assert isinstance(got, torch.Tensor) and got.device.type == "cpu"
    assert torch.equal(got, torch.cumsum(x, 0))


@needs_torch
def test_torch_errors():
    x = torch.arange(10, device="cuda", dtype=torch.int32)
    with pytest.raises(ValueError) as e:
        pscan.scan(x, out=np.empty(10, np.int32))  # host out for a device input
    assert e.value.status == "PSCAN_ERROR_INVALID_VALUE"
    with pytest.raises(ValueError) as e:
        pscan.scan(torch.zeros(8, 8, device="cuda")[:, :3])
    assert e.value.status == "PSCAN_ERROR_INVALID_VALUE"
    with pytest.raises(TypeError) as e:
        pscan.scan(torch.zeros(8, device="cuda", dtype=torch.float16))
    assert e.value.status == "PSCAN_ERROR_UNSUPPORTED_TYPE"
    with pytest.raises(TypeError) as e:
        pscan.scan(torch.zeros(8, device="cuda"), op="xor")
    assert e.value.status == "PSCAN_ERROR_UNSUPPORTED_OPERATOR"
    out = torch.full((9,), 7, device="cuda", dtype=torch.int32)
    with pytest.raises(ValueError):
        pscan.scan(x, out=out)
    assert (out == 7).all()


# ---- CuPy ----------------------------------------------------------------------------------------------------
@needs_cupy
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_cupy_every_dtype(dtype):
    for op in ops_for(dtype):
        for n in SIZES if op == "sum" else SIZES[:5]:
            x = data(n, dtype, op)
            c = cupy.asarray(x)
            for exclusive, reverse in FLAG_SETS:
                got = pscan.scan(c, op=op, exclusive=exclusive, reverse=reverse)
                assert isinstance(got, cupy.ndarray)
                assert_same(cupy.asnumpy(got), ref_scan(x, op, exclusive, reverse))
            assert_same(cupy.asnumpy(pscan.reduce(c, op=op)), np.asarray(ref_reduce(x, op)))
        keep = x > x.dtype.type(0)
        assert_same(cupy.asnumpy(pscan.select(c, "gt", 0)), x[keep])


@needs_cupy
def test_cupy_stream_and_out():
    n = 1 << 24
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        a = cupy.ones(n, cupy.float32)
        for _ in range(50):  # keep s busy before the data is final
            a = a * 1.0
        out = cupy.empty_like(a)
        got = pscan.scan(a, out=out)
    s.synchronize()
    assert got is out and got.data.ptr == out.data.ptr
    assert float(out[-1]) == n and bool((out == cupy.arange(1, n + 1, dtype=cupy.float32)).all())


@needs_cupy
def test_clear_cache_after_a_cupy_stream_is_gone():
    """A cached context synchronises its stream when clear_cache() destroys it; the CuPy stream it was made for
    must still exist then (it once did not: a segmentation fault in clear_cache)."""
    import gc

    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        got = pscan.scan(cupy.arange(1000, dtype=cupy.int64), axis=0)
    s.synchronize()
    assert int(got[-1]) == 999 * 1000 // 2
    del s, got
    gc.collect()
    pscan.clear_cache()
    assert int(pscan.scan(cupy.ones(10, cupy.int32))[-1]) == 10  # a new context on the current stream


# ---- bare interfaces ---------------------------------------------------------------------------------------------
class CAIOnly:
    def __init__(self, arr):
        self.arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


class DLPackOnly:
    def __init__(self, arr):
        self.arr = arr

    def __dlpack__(self, stream=None, **kw):
        return self.arr.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.arr.__dlpack_device__()


@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch")
def test_cuda_array_interface_and_dlpack_objects():
    x = np.arange(10000, dtype=np.int32)
    src = cupy.asarray(x) if HAVE_CUPY else torch.from_numpy(x).cuda()
    back = cupy.asnumpy if HAVE_CUPY else (lambda t: t.cpu().numpy())
    for wrapped in (CAIOnly(src), DLPackOnly(src)):
        got = pscan.scan(wrapped)
        assert_same(back(got) if not hasattr(got, "cpu") else got.cpu().numpy(), np.cumsum(x, dtype=np.int32))
        got = pscan.scan(wrapped, dtype=np.int64, exclusive=True)
        want = np.concatenate([[0], np.cumsum(x[:-1], dtype=np.int64)])
        assert_same(back(got) if not hasattr(got, "cpu") else got.cpu().numpy(), want)


# ---- sort, histogram, segmented_scan, run_length_encode, expand (python/pscan/_prims.py) ---------------------
def _device_cases():
    """(make a device array from numpy, read one back) for each library present."""
    cases = []
    if HAVE_CUPY:
        cases.append(("cupy", cupy.asarray, cupy.asnumpy))
    if HAVE_TORCH:
        cases.append(("torch", lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda(), lambda t: t.cpu().numpy()))
    return cases


PRIM_DTYPES = [np.dtype(d) for d in ("int8", "uint8", "int32", "int64", "float32", "float64")]


@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch")
@pytest.mark.parametrize("dtype", [np.dtype(d) for d in ("bool", "int8", "uint8", "int32", "float32")], ids=str)
def test_cumsum_dtype_is_the_librarys(dtype):
    """pscan.cumsum and cumprod give the dtype the array's own library gives (torch: int64 for every integer,
    CuPy: numpy's rule) and its values."""
    x = (np.arange(1000) % 3 == 0) if dtype.kind == "b" else data(1000, dtype)
    small = (np.arange(30) % 2 + 1).astype(dtype)
    for name, dev, back in _device_cases():
        for fn, v in ((pscan.cumsum, x), (pscan.cumprod, small)):
            d = dev(v.astype(dtype))
            own = d.cumsum(0) if fn is pscan.cumsum else d.cumprod(0)
            got = fn(d)
            assert type(got) is type(d) and got.dtype == own.dtype, (name, got.dtype, own.dtype)
            np.testing.assert_allclose(back(got), back(own), rtol=1e-5)


@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch")
@pytest.mark.parametrize("dtype", PRIM_DTYPES, ids=str)
def test_prims_on_device(dtype):
    from test_prims import ref_hist_edges, ref_hist_range, ref_rle, ref_segscan, ref_sort_order, random_offsets

    rng = np.random.default_rng(29)
    for name, dev, back in _device_cases():
        for n in (0, 1, 4095, 4097, (1 << 20) + 3):
            x = data(n, dtype)
            d = dev(x)
            got = pscan.sort(d)
            assert type(got) is type(d) and got.device == d.device
            assert_same(back(got), np.sort(x, kind="stable"))
            k, v = pscan.sort(d, values=dev(np.arange(n, dtype=np.int32)), descending=True)
            order = ref_sort_order(x, True)
            assert_same(back(k), x[order])
            assert_same(back(v), order.astype(np.int32))
            got = pscan.argsort(d, descending=True)
            assert type(got) is type(d) and got.device == d.device
            assert_same(back(got), order.astype(np.int64))
            lo, hi = (-8, 9) if dtype.kind == "f" else (0, 100)
            counts, _ = pscan.histogram(d, 17, range=(lo, hi), count_dtype=np.int64)
            assert_same(back(counts), ref_hist_range(x, 17, lo, hi).astype(np.int64))
            e = np.unique(data(9, dtype, seed=7))
            counts, edges = pscan.histogram(d, edges=dev(e), count_dtype=np.int64)
            assert_same(back(counts), ref_hist_edges(x, e).astype(np.int64))
            offsets = random_offsets(n, rng, 1 + n // 1000)
            for exclusive, reverse in FLAG_SETS:
                got = pscan.segmented_scan(d, offsets=dev(offsets), exclusive=exclusive, reverse=reverse,
                                           check_offsets=True)
                assert_same(back(got), ref_segscan(x, offsets, "sum", exclusive, reverse))
            flags = np.zeros(n, bool)
            flags[offsets[1:-1][offsets[1:-1] < n]] = True
            got = pscan.segmented_scan(d, flags=dev(flags), op="max")
            assert_same(back(got), ref_segscan(x, offsets, "max", False, False))
            r = np.repeat(x, rng.integers(1, 5, n))[:n]
            vals, lengths = pscan.run_length_encode(dev(r))
            wv, wl = ref_rle(r)
            assert_same(back(vals).view(f"u{dtype.itemsize}"), wv.view(f"u{dtype.itemsize}"))
            assert_same(back(lengths), wl)
            c = rng.integers(0, 4, n).astype(np.int64)
            got, ranks = pscan.expand(dev(c), values=d, ranks=True)
            assert_same(back(got), np.repeat(x, c))
            assert_same(back(pscan.expand(dev(c))), np.repeat(np.arange(n, dtype=np.int64), c))


@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch")
def test_prims_on_device_errors():
    for name, dev, back in _device_cases():
        x = dev(np.array([3, 1, 7, 0], np.int32))
        with pytest.raises(ValueError) as e:
            pscan.sort(x, values=np.arange(4))  # a host payload for device keys
        assert e.value.status == "PSCAN_ERROR_INVALID_VALUE"
        with pytest.raises(ValueError) as e:
            pscan.segmented_scan(x, offsets=dev(np.array([0, 3], np.int64)), check_offsets=True)
        assert e.value.status == "PSCAN_ERROR_INVALID_VALUE"
        with pytest.raises(ValueError) as e:
            pscan.histogram(x, edges=np.array([0, 4, 8], np.int32))  # host edges for device samples
        assert e.value.status == "PSCAN_ERROR_INVALID_VALUE"


# ---- axis on a device: one segmented-scan call for all rows -------------------------------------------------
@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch")
@pytest.mark.parametrize("dtype", PRIM_DTYPES, ids=str)
def test_device_short_path_is_the_general_one(dtype, monkeypatch):
    """A whole C-contiguous torch tensor or CuPy array (no axis, no init) takes the short path (_scan_whole,
    _reduce_whole: no _prepare); axis=0 of the same 1-d array takes the general one. Same bits, dtype, type and
    device for every operator and flag, widening, cumsum, out= (x itself included) and reduce; an out= the short
    path does not serve (another shape) is the general path's error."""
    import pscan._api as api

    prepared = []
    real = api._prepare
    monkeypatch.setattr(api, "_prepare", lambda *a, **k: prepared.append(1) or real(*a, **k))
    for name, dev, back in _device_cases():
        for op in ops_for(dtype):
            for n in (0, 1, 4097):
                x = data(n, dtype, op)
                d = dev(x)
                for exclusive, reverse in FLAG_SETS:
                    prepared.clear()
                    short = pscan.scan(d, op=op, exclusive=exclusive, reverse=reverse)
                    assert not prepared, (name, "the short path was not taken")
                    general = pscan.scan(d, op=op, axis=0, exclusive=exclusive, reverse=reverse)
                    assert prepared
                    assert type(short) is type(d) and short.dtype == general.dtype and short.shape == general.shape
                    assert back(short).tobytes() == back(general).tobytes()
                prepared.clear()
                r = pscan.reduce(d, op=op)
                assert not prepared and type(r) is type(d) and r.shape == ()
                assert back(r).tobytes() == back(pscan.reduce(d, op=op, axis=0)).tobytes()
        x = data(4097, dtype)
        d = dev(x)
        wide = {"i": np.int64, "u": np.uint64, "f": np.float64}[dtype.kind]
        if name == "cupy" or dtype.kind != "u" or dtype == np.uint8:
            prepared.clear()
            w = pscan.scan(d, dtype=wide)
            assert back(w).tobytes() == back(pscan.scan(d, dtype=wide, axis=0)).tobytes()
            assert back(pscan.cumsum(d)).tobytes() == back(pscan.cumsum(d, axis=0)).tobytes()
        out = pscan.scan(d)  # an array of the result's library, dtype and shape
        prepared.clear()
        assert pscan.scan(d, op="max", out=out) is out and not prepared
        assert back(out).tobytes() == back(pscan.scan(d, op="max", axis=0)).tobytes()
        y = dev(x)
        assert pscan.scan(y, out=y) is y and back(y).tobytes() == back(pscan.scan(d)).tobytes()
        with pytest.raises(pscan.PscanValueError):
            pscan.scan(d, out=dev(np.zeros(4096, dtype)))
        with pytest.raises(pscan.PscanValueError):
            pscan.scan(d[::2])  # not contiguous: declined, and the general path says so


@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch")
def test_device_axis_is_one_call(count_calls):
    """Rows of a 2-d and 3-d device array along every axis, against numpy; each scan is one C call (a segmented
    scan over the rows, its offsets kept per context and row length), never a loop of row scans."""
    from pscan import _context

    for name, dev, back in _device_cases():
        for shape in ((1000, 37), (3, 4097), (7, 1, 300), (4, 5, 6), (1, 9), (9, 1)):
            x = data(int(np.prod(shape)), np.dtype(np.int64)).reshape(shape)
            d = dev(x)
            for axis in range(-x.ndim, x.ndim):
                count_calls.clear()
                for exclusive, reverse in FLAG_SETS:
                    got = pscan.scan(d, axis=axis, exclusive=exclusive, reverse=reverse, init=3)
                    moved = np.moveaxis(x, axis, -1)
                    want = np.stack([ref_scan(r, "sum", exclusive, reverse, 3) for r in moved.reshape(-1, moved.shape[-1])])
                    want = np.moveaxis(want.reshape(moved.shape), -1, axis)
                    assert_same(back(got), want)
                rows = x.size // x.shape[axis]
                assert count_calls.get("pscan_scan", 0) == (4 if rows == 1 else 0), (name, shape, axis, count_calls)
                assert count_calls.get("pscan_segmented_scan", 0) == (0 if rows == 1 else 4), (name, shape, axis)
        # more row lengths than a context keeps offsets for, and a longer batch of a length already kept
        for m in range(2, 40):
            x = data(5 * m, np.dtype(np.float32)).reshape(5, m)
            assert_same(back(pscan.scan(dev(x), axis=1, op="max")), np.maximum.accumulate(x, axis=1))
        x = data(5000 * 3, np.dtype(np.int32)).reshape(5000, 3)
        assert_same(back(pscan.scan(dev(x), axis=1)), np.cumsum(x, axis=1, dtype=np.int32))
        assert all(len(_context.extras(ctx)["offsets"]) <= 16 for ctx, _ in _context._cache.values())
    pscan.clear_cache()  # frees the kept offsets with their contexts


@needs_torch
def test_device_axis_on_a_side_stream_without_synchronize():
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.empty(4096, 513, device="cuda", dtype=torch.float32)
        torch.cuda._sleep(50_000_000)
        x.fill_(1.0)
        y = pscan.scan(x, axis=1)  # a new context for s: its offsets are uploaded on s, before the scan
    s.synchronize()
    assert torch.equal(y, torch.arange(1, 514, device="cuda", dtype=torch.float32).expand(4096, 513))


# ---- scan_by_key, reduce_by_key, recurrences, scan_host ----------------------------------------------------
@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch")
@pytest.mark.parametrize("dtype", PRIM_DTYPES, ids=str)
def test_by_key_on_device(dtype):
    from test_bykey import random_keys, ref_reduce_by_key, run_offsets
    from test_prims import ref_segscan

    rng = np.random.default_rng(101)
    for name, dev, back in _device_cases():
        for n in (0, 1, 4095, 4097, (1 << 20) + 3):
            x = data(n, dtype)
            keys = random_keys(n, np.int32, rng)
            off = run_offsets(keys)
            for exclusive, reverse in FLAG_SETS:
                got = pscan.scan_by_key(dev(keys), dev(x), exclusive=exclusive, reverse=reverse)
                assert type(got) is type(dev(x))
                assert_same(back(got), ref_segscan(x, off, "sum", exclusive, reverse))
            k, r = pscan.reduce_by_key(dev(keys), dev(x), op="max")
            wk, wr = ref_reduce_by_key(keys, x, "max")
            assert_same(back(k), wk)
            assert_same(back(r), wr)


@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch")
def test_recurrences_on_device():
    """Exact data; a library without a GPU recurrence says so with PSCAN_ERROR_UNSUPPORTED_ALGORITHM."""
    from test_recurrence import exact_first_order, exact_second_order, ref_recurrence, ref_recurrence2

    rng = np.random.default_rng(103)
    for name, dev, back in _device_cases():
        for dtype in (np.dtype(np.float32), np.dtype(np.float64)):
            for n in (1, 4097, (1 << 20) + 3):
                a, b = exact_first_order(n, dtype, rng)
                try:
                    got = pscan.recurrence(dev(a), dev(b), y0=2.0, reverse=True)
                except pscan.PscanError as e:
                    assert e.status == "PSCAN_ERROR_UNSUPPORTED_ALGORITHM"
                    continue
                np.testing.assert_array_equal(back(got), ref_recurrence(a, b, 2.0, True).astype(dtype))
                a2, b2, c2 = exact_second_order(n, dtype, rng)
                got = pscan.recurrence2(dev(a2), dev(b2), dev(c2), y1=1.0)
                np.testing.assert_array_equal(back(got), ref_recurrence2(a2, b2, c2, 1.0).astype(dtype))
                c = rng.integers(-8, 9, n).astype(dtype)  # Horner's rule at x = -1: exact in any grouping
                for reverse in (False, True):
                    got = pscan.polyval(dev(c), -1.0, reverse=reverse)
                    want = ref_recurrence(np.full(n, -1.0), c, 0.0, reverse).astype(dtype)
                    np.testing.assert_array_equal(back(got), want)


@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch (a device)")
def test_scan_host_through_the_gpu():
    """A numpy array of 128 MiB and more scanned through device 0 in 64 MiB pieces."""
    x = data((1 << 24) + 3, np.dtype(np.int64))
    for exclusive, reverse in FLAG_SETS:
        assert_same(pscan.scan_host(x, exclusive=exclusive, reverse=reverse, device=0),
                    ref_scan(x, "sum", exclusive, reverse))
    y = x.copy()
    assert pscan.scan_host(y, out=y, device=0) is y
    assert_same(y, ref_scan(x, "sum"))
    with pytest.raises(ValueError) as e:
        pscan.scan_host(x[:10], device=99)
    assert e.value.status == "PSCAN_ERROR_INVALID_VALUE"


@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch (a device)")
def test_reduce_host_through_the_gpu():
    """A numpy array of 128 MiB and more reduced through device 0 in 64 MiB pieces."""
    x = data((1 << 24) + 3, np.dtype(np.int64))
    assert pscan.reduce_host(x, device=0) == x.sum()
    assert pscan.reduce_host(x, op="min", device=0) == x.min()
    assert pscan.reduce_host(x[:5000], op="xor", init=7, device=0) == np.bitwise_xor.reduce(x[:5000]) ^ 7


# ---- user operators compiled with NVRTC ----------------------------------------------------------------------
@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch")
def test_user_operator_on_device():
    """Affine maps as float32 pairs (n, 2) on the device, composed by the C source: against the closed form
    (a: the running product, b: the first-order recurrence, exact on a in {-1, 1} and small integer b)."""
    from test_recurrence import ref_recurrence
    from test_user import affine_op

    op = affine_op()
    rng = np.random.default_rng(107)
    for name, dev, back in _device_cases():
        for n in (0, 1, 4095, 4097, (1 << 20) + 3):
            a = rng.choice(np.array([-1, 1]), n).astype(np.float32)
            b = rng.integers(-8, 9, n).astype(np.float32)
            pairs = np.ascontiguousarray(np.stack([a, b], axis=1))
            got = pscan.scan(dev(pairs), op=op)
            assert got.shape == (n, 2) and type(got) is type(dev(pairs))
            want = np.stack([np.cumprod(a), ref_recurrence(a, b)], axis=1).astype(np.float32)
            assert_same(back(got), want.reshape(n, 2))
            got = pscan.scan(dev(pairs), op=op, exclusive=True, init=(1, 5))
            want_ex = np.stack([np.cumprod(np.concatenate([[1], a[:-1]])),
                                ref_recurrence(np.concatenate([[1], a[:-1]]), np.concatenate([[0], b[:-1]]), 5.0)],
                               axis=1).astype(np.float32)[:n]
            assert_same(back(got), want_ex.reshape(n, 2))
            r = pscan.reduce(dev(pairs), op=op)
            assert_same(back(r), want[-1] if n else np.array([1, 0], np.float32))


@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch")
def test_user_operator_device_errors():
    name, dev, back = _device_cases()[0]
    x = dev(np.ones((10, 2), np.float32))
    broken = pscan.Operator(np.dtype([("a", "f4"), ("b", "f4")]), (1, 0), source="typedef struct { float a, b; } "
                            "affine; affine combine(affine e, affine l) { return e +* l; }", type_name="affine",
                            combine_name="combine")
    with pytest.raises(RuntimeError) as e:
        pscan.scan(x, op=broken)
    assert e.value.status == "PSCAN_ERROR_BUILD_FAILED" and "compiler says" in str(e.value)  # with NVRTC's log
    cpu_only = pscan.Operator(np.dtype([("a", "f4"), ("b", "f4")]), (1, 0), combine=lambda e_, l_: e_)
    with pytest.raises(TypeError) as e:
        pscan.scan(x, op=cpu_only)
    assert e.value.status == "PSCAN_ERROR_UNSUPPORTED_OPERATOR"
    # an element above PSCAN_USER_OP_MAX_BYTES: refused by pscan.Operator, and by the C library itself on a
    # CUDA context (pscan_operator_create checks the size before any backend sees it)
    too_big = np.dtype([(f"f{i}", "f4") for i in range(USER_OP_MAX_BYTES // 4 + 1)])
    with pytest.raises(ValueError) as e:
        pscan.Operator(too_big, (0,) * len(too_big.names), source=SUM3_SOURCE, type_name="t3", combine_name="combine")
    assert e.value.status == "PSCAN_ERROR_INVALID_VALUE"
    ctx, lock = _context.get(0, 0)
    identity = ffi.new("unsigned char[]", USER_OP_MAX_BYTES + 4)
    strings = [ffi.new("char[]", t) for t in (SUM3_SOURCE.encode(), b"t3", b"combine")]  # alive through the calls
    for size, align in ((USER_OP_MAX_BYTES + 4, 4), (12, 8), (0, 4)):  # too big; align not dividing; empty
        desc = ffi.new("pscan_user_op_desc *", [size, align, identity] + strings + [ffi.NULL, ffi.NULL])
        handle = ffi.new("pscan_operator **")
        with lock:
            s = lib.pscan_operator_create(ctx, desc, handle)
        assert ffi.string(lib.pscan_status_name(s)) == b"PSCAN_ERROR_INVALID_VALUE", (size, align)
        assert handle[0] == ffi.NULL


SUM3_SOURCE = ("typedef struct { float a, b, c; } t3; "
               "t3 combine(t3 e, t3 l) { t3 r; r.a = e.a + l.a; r.b = e.b + l.b; r.c = e.c + l.c; return r; }")


@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch")
def test_user_operator_12_bytes_on_device():
    """A 12-byte element (three floats, summed field by field) runs CUDA's wide program (user_wide.cuh, tiles
    of 1024 elements): against np.cumsum along axis 0 of the (n, 3) array, around the tile's edges. Each
    result is read back at once, so a kernel that never finishes stops this test, not a later one."""
    op = pscan.Operator(np.dtype([("a", "f4"), ("b", "f4"), ("c", "f4")]), (0, 0, 0), source=SUM3_SOURCE,
                        type_name="t3", combine_name="combine")
    for name, dev, back in _device_cases():
        for n in (0, 1, 1023, 1024, 1025, 64 * 1024 + 3, (1 << 20) + 3):
            x = data(3 * n, np.dtype(np.float32)).reshape(n, 3)  # integers -8..8: every sum exact in float32
            d = dev(x)
            got = pscan.scan(d, op=op)
            assert got.shape == (n, 3) and type(got) is type(d)
            assert_same(back(got), np.cumsum(x, axis=0, dtype=np.float32))
            got = pscan.scan(d, op=op, exclusive=True, reverse=True, init=(1, 2, 3))
            want = np.cumsum(x[::-1], axis=0, dtype=np.float32)[::-1] - x + np.float32([1, 2, 3])
            assert_same(back(got), want.astype(np.float32))
            assert_same(back(pscan.reduce(d, op=op)), x.sum(axis=0, dtype=np.float32))


@pytest.mark.skipif(not (HAVE_CUPY or HAVE_TORCH), reason="needs CuPy or torch (a device)")
def test_select_host_through_the_gpu():
    """select_host in pieces through device 0 (64 KiB pieces: many of them), unique across piece edges too."""
    rng = np.random.default_rng(11)
    x = rng.integers(0, 3, 300001).astype(np.int64)
    vals = np.arange(x.size, dtype=np.uint32)
    ctx, lock = pscan._api._context.get(0, 0)
    with lock:
        pscan._api.lib.pscan_context_set_host_chunk_bytes(ctx, 65536)
    try:
        np.testing.assert_array_equal(pscan.select_host(x, "gt", 0, device=0), x[x > 0])
        keep = np.concatenate([[True], x[1:] != x[:-1]])
        k, v = pscan.select_host(x, "unique", values=vals, device=0)
        np.testing.assert_array_equal(k, x[keep])
        np.testing.assert_array_equal(v, vals[keep])
    finally:
        with lock:
            pscan._api.lib.pscan_context_set_host_chunk_bytes(ctx, 0)
