"""scan_by_key and reduce_by_key on numpy arrays (the CPU backend) against numpy references: every value dtype
and operator, every key dtype, awkward sizes, the CPU's threads, and bad inputs with their exact status."""
import numpy as np
import pytest

import pscan
from conftest import ALL_DTYPES, INT_DTYPES, assert_same, data, ops_for, ref_reduce, ref_scan
from test_prims import ref_segscan

SIZES = [0, 1, 2, 7, 4095, 4097, 30011]
FLAGS = [(False, False), (True, False), (False, True), (True, True)]


def random_keys(n, dtype, rng):
    """Runs of equal keys (1 to 5 long, longer in large arrays: the references loop over runs) whose values
    repeat across runs, so that equal keys also meet apart."""
    lengths = rng.integers(1, max(6, n // 50), n + 1)
    vals = rng.integers(0, 3, lengths.size)
    # only the runs that cover n keys: repeating all n + 1 made about n * n / 100 keys before the cut, 11e9
    # (82 GiB, minutes) at test_cuda's n = 2^20 + 3 (the same keys and the same rng state after)
    runs = int(np.searchsorted(np.cumsum(lengths), n)) + 1
    k = np.repeat(vals[:runs], lengths[:runs])[:n]
    return k.astype(dtype) if dtype != np.bool_ else (k % 2).astype(bool)


def run_offsets(keys):
    """CSR offsets of the runs of equal consecutive keys (bit for bit)."""
    n = keys.size
    if n == 0:
        return np.array([0], np.int64)
    b = keys.view(f"u{keys.dtype.itemsize}") if keys.dtype != np.bool_ else keys.view(np.uint8)
    starts = np.flatnonzero(np.concatenate([[True], b[1:] != b[:-1]]))
    return np.concatenate([starts, [n]]).astype(np.int64)


def ref_reduce_by_key(keys, values, op, init=None):
    off = run_offsets(keys)
    k = keys[off[:-1]]
    v = np.array([ref_reduce(values[s:e], op, init) for s, e in zip(off[:-1], off[1:])], values.dtype)
    return k, v.reshape(-1)


# ---- scan by key ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_scan_by_key_every_dtype_op_flag(dtype):
    rng = np.random.default_rng(41)
    for op in ops_for(dtype):
        for n in SIZES:
            x = data(n, dtype, op)
            keys = random_keys(n, np.int32, rng)
            off = run_offsets(keys)
            for exclusive, reverse in FLAGS:
                assert_same(pscan.scan_by_key(keys, x, op=op, exclusive=exclusive, reverse=reverse),
                            ref_segscan(x, off, op, exclusive, reverse))


@pytest.mark.parametrize("kdt", INT_DTYPES + [np.dtype(bool)], ids=str)
def test_scan_by_key_every_key_dtype_init(kdt):
    rng = np.random.default_rng(43)
    x = data(5000, np.dtype(np.int64))
    keys = random_keys(5000, kdt, rng)
    off = run_offsets(keys)
    for exclusive, reverse in FLAGS:
        assert_same(pscan.scan_by_key(keys, x, exclusive=exclusive, reverse=reverse, init=7),
                    ref_segscan(x, off, "sum", exclusive, reverse, 7))


def test_scan_by_key_examples_inplace_threads():
    keys = np.array([5, 5, 5, 2, 2, 5, 5, 5])
    x = np.array([3, 1, 7, 0, 4, 1, 6, 3])
    assert pscan.scan_by_key(keys, x).tolist() == [3, 4, 11, 0, 4, 1, 7, 10]
    assert pscan.scan_by_key(keys, x, op="max", reverse=True).tolist() == [7, 7, 7, 4, 4, 6, 6, 3]
    y = x.copy()
    assert pscan.scan_by_key(keys, y, out=y) is y and y.tolist() == [3, 4, 11, 0, 4, 1, 7, 10]
    keys2 = np.repeat(np.arange(3), [4, 1 << 21, 5]).astype(np.uint16)
    big = data(keys2.size, np.dtype(np.float64))
    try:
        pscan.set_cpu_threads(3)
        assert_same(pscan.scan_by_key(keys2, big), ref_segscan(big, run_offsets(keys2), "sum", False, False))
    finally:
        pscan.set_cpu_threads(0)
    assert pscan.scan_by_key(np.zeros(0, np.int8), np.zeros(0, np.int8)).size == 0


def test_scan_by_key_bad_inputs():
    x = np.array([3, 1, 7, 0], np.int32)
    k = np.array([1, 1, 2, 2], np.int32)
    out = np.full(4, -9, np.int32)
    cases = [
        (dict(keys=k.astype(np.float32)), "PSCAN_ERROR_INVALID_VALUE", ValueError),  # the C library's check
        (dict(keys=k.astype(np.float16)), "PSCAN_ERROR_UNSUPPORTED_TYPE", TypeError),
        (dict(keys=k[:3]), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(keys=np.repeat(k, 2)[::2]), "PSCAN_ERROR_INVALID_VALUE", ValueError),  # not contiguous
        (dict(op="mean"), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(init=2 ** 40), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(out=np.full(3, -9, np.int32)), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(out=np.full(4, -9, np.int64)), "PSCAN_ERROR_INVALID_VALUE", TypeError),
        (dict(x=np.zeros(4, np.float16)), "PSCAN_ERROR_UNSUPPORTED_TYPE", TypeError),
        (dict(x=np.zeros(4, np.float32), op="xor"), "PSCAN_ERROR_UNSUPPORTED_OPERATOR", TypeError),
    ]
    for kw, status, cls in cases:
        kw = dict(kw)
        keys, xx = kw.pop("keys", k), kw.pop("x", x)
        if "out" not in kw and xx is x:
            kw["out"] = out
        with pytest.raises(cls) as e:
            pscan.scan_by_key(keys, xx, **kw)
        assert e.value.status == status, kw
    assert out.tolist() == [-9] * 4
    shared = np.arange(8, dtype=np.int32)
    with pytest.raises(ValueError) as e:
        pscan.scan_by_key(shared[:4], x, out=shared[2:6])  # out over the keys
    assert e.value.status == "PSCAN_ERROR_OVERLAP"
    assert shared.tolist() == list(range(8))


# ---- reduce by key -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_reduce_by_key_every_dtype_op(dtype):
    rng = np.random.default_rng(47)
    for op in ops_for(dtype):
        for n in SIZES:
            v = data(n, dtype, op)
            keys = random_keys(n, np.int64, rng)
            k, r = pscan.reduce_by_key(keys, v, op=op)
            wk, wr = ref_reduce_by_key(keys, v, op)
            assert_same(k, wk)
            assert_same(r, wr)


@pytest.mark.parametrize("kdt", INT_DTYPES + [np.dtype(bool)], ids=str)
def test_reduce_by_key_every_key_dtype_init_outs(kdt):
    rng = np.random.default_rng(53)
    v = data(3000, np.dtype(np.int32))
    keys = random_keys(3000, kdt, rng)
    wk, wr = ref_reduce_by_key(keys, v, "sum", init=5)
    ko = np.full(3000, 9).astype(kdt)
    vo = np.full(3000, -1, np.int32)
    k, r = pscan.reduce_by_key(keys, v, init=5, keys_out=ko, values_out=vo)
    assert_same(k, wk)
    assert_same(r, wr)
    assert (vo[wk.size:] == -1).all() and (ko[wk.size:] == ko[-1]).all() and ko[-1] == np.array(9).astype(kdt)
    assert np.shares_memory(k, ko) and np.shares_memory(r, vo)


def test_reduce_by_key_examples_threads():
    k, r = pscan.reduce_by_key(np.array([5, 5, 5, 2, 2, 5, 5, 5]), np.array([3, 1, 7, 0, 4, 1, 6, 3]))
    assert k.tolist() == [5, 2, 5] and r.tolist() == [11, 4, 10]
    keys = np.repeat(np.arange(1000), 3000).astype(np.int32)
    v = data(keys.size, np.dtype(np.int64))
    try:
        pscan.set_cpu_threads(3)
        k, r = pscan.reduce_by_key(keys, v, op="max")
    finally:
        pscan.set_cpu_threads(0)
    wk, wr = ref_reduce_by_key(keys, v, "max")
    assert_same(k, wk)
    assert_same(r, wr)
    k, r = pscan.reduce_by_key(np.zeros(0, np.int8), np.zeros(0, np.float32))
    assert k.size == 0 and r.size == 0


def test_reduce_by_key_bad_inputs():
    k = np.array([1, 1, 2, 2], np.int32)
    v = np.array([3, 1, 7, 0], np.int32)
    vo = np.full(4, -9, np.int32)
    cases = [
        (dict(keys=k.astype(np.float64)), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(values=v[:3]), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(values=v.astype(np.float16)), "PSCAN_ERROR_UNSUPPORTED_TYPE", TypeError),
        (dict(op="median"), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(values=v.astype(np.float32), op="or"), "PSCAN_ERROR_UNSUPPORTED_OPERATOR", TypeError),
        (dict(init=0.5), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(keys_out=np.zeros(4, np.int64)), "PSCAN_ERROR_INVALID_VALUE", TypeError),
        (dict(keys_out=np.zeros(3, np.int32)), "PSCAN_ERROR_INVALID_VALUE", ValueError),
    ]
    for kw, status, cls in cases:
        kw = dict(kw)
        keys, values = kw.pop("keys", k), kw.pop("values", v)
        with pytest.raises(cls) as e:
            pscan.reduce_by_key(keys, values, values_out=vo if values.dtype == vo.dtype and values.size == 4
                                else None, **kw)
        assert e.value.status == status, kw
    assert vo.tolist() == [-9] * 4
    with pytest.raises(ValueError) as e:
        pscan.reduce_by_key(k, v, keys_out=k)  # an output over an input
    assert e.value.status == "PSCAN_ERROR_OVERLAP"
    assert k.tolist() == [1, 1, 2, 2]
