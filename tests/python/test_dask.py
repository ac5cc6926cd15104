"""pscan.dask: a scan of a chunked Dask array (pscan per block, carries between blocks) against numpy."""
import numpy as np
import pytest

import pscan
from conftest import ALL_DTYPES, assert_same, data, ops_for, ref_reduce, ref_scan

da = pytest.importorskip("dask.array")
import pscan.dask  # noqa: E402


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_dask_scan_1d(dtype):
    for op in ops_for(dtype):
        x = data(1001, dtype, op)
        for chunks in ((1001, 100, 7, (1, 0, 500, 500)) if op == "sum" else (100, (1, 0, 500, 500))):
            d = da.from_array(x, chunks=chunks)
            for exclusive in (False, True):
                for reverse in (False, True):
                    assert_same(pscan.dask.scan(d, op=op, exclusive=exclusive, reverse=reverse).compute(),
                                ref_scan(x, op, exclusive, reverse))
            assert_same(pscan.dask.reduce(d, op=op).compute(), np.asarray(ref_reduce(x, op)))


def test_dask_scan_init_dtype_axis():
    x = data(1000, np.dtype(np.int32))
    d = da.from_array(x, chunks=128)
    assert_same(pscan.dask.scan(d, init=5, exclusive=True).compute(), ref_scan(x, "sum", True, False, 5))
    assert_same(pscan.dask.scan(d, dtype=np.int64).compute(), np.cumsum(x, dtype=np.int64))
    m = data(40 * 30, np.dtype(np.float64)).reshape(40, 30)
    dm = da.from_array(m, chunks=(16, 7))
    for axis in (0, 1, -1):
        assert_same(pscan.dask.scan(dm, axis=axis).compute(), np.cumsum(m, axis=axis))
        assert_same(pscan.dask.reduce(dm, axis=axis).compute(), np.sum(m, axis=axis))
    assert_same(pscan.dask.scan(dm).compute(), np.cumsum(m))
    assert_same(pscan.dask.scan(dm, axis=0, op="max", reverse=True).compute(),
                np.flip(np.maximum.accumulate(np.flip(m, 0), axis=0), 0))


@pytest.mark.parametrize("dtype", [np.dtype(t) for t in ("?", "i1", "u2", "i4", "f4")], ids=str)
def test_dask_cumsum_cumprod_are_numpys(dtype):
    x = (np.arange(1000) % 3 == 0).astype(dtype) if dtype.kind == "b" else data(1000, dtype)
    small = (np.arange(40) % 2 + 1).astype(dtype)
    for fn, ref, v in ((pscan.dask.cumsum, np.cumsum, x), (pscan.dask.cumprod, np.cumprod, small)):
        got = fn(da.from_array(v, chunks=97)).compute()
        want = ref(v)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5) if dtype.kind == "f" else assert_same(got, want)
    m = data(30 * 20, np.dtype(np.int16)).reshape(30, 20)
    assert_same(pscan.dask.cumsum(da.from_array(m, chunks=(8, 7)), axis=0).compute(), np.cumsum(m, axis=0))
