"""pscan on numpy arrays (the CPU backend) against numpy references: every dtype, operator, flag, size, axis,
out=, and bad input with its exact status (and outputs left untouched)."""
import threading
import time

import numpy as np
import pytest

import pscan
from conftest import ALL_DTYPES, assert_same, data, ops_for, ref_reduce, ref_scan

SIZES = [0, 1, 2, 7, 4095, 4096, 4097, 100003]
FLAGS = [(False, False), (True, False), (False, True), (True, True)]


# ---- scan ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_scan_every_dtype_op_flag_size(dtype):
    for op in ops_for(dtype):
        for n in SIZES:
            x = data(n, dtype, op)
            for exclusive, reverse in FLAGS:
                got = pscan.scan(x, op=op, exclusive=exclusive, reverse=reverse)
                assert_same(got, ref_scan(x, op, exclusive, reverse))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_scan_short_path_is_the_general_one(dtype, count_calls):
    """A whole C-contiguous numpy array with no init or out takes scan's short path (_scan_whole); axis=0 of the
    same 1-d array takes the general one. Same bits, dtype and shape, one pscan_scan call each, for every
    operator, flag and widening; a read-only input too; 2-d inputs flatten as numpy.cumsum does."""
    for op in ops_for(dtype):
        for n in (0, 1, 4097):
            x = data(n, dtype, op)
            for exclusive, reverse in FLAGS:
                count_calls.clear()
                short = pscan.scan(x, op=op, exclusive=exclusive, reverse=reverse)
                general = pscan.scan(x, op=op, axis=0, exclusive=exclusive, reverse=reverse)
                assert count_calls == {"pscan_scan": 2}
                assert short.dtype == general.dtype and short.shape == general.shape
                assert short.tobytes() == general.tobytes()
    wide = {"i": np.int64, "u": np.uint64, "f": np.float64}[dtype.kind]
    x = data(4097, dtype)
    x.setflags(write=False)
    assert pscan.scan(x, dtype=wide).tobytes() == pscan.scan(x, dtype=wide, axis=0).tobytes()
    assert pscan.cumsum(x).tobytes() == pscan.cumsum(x, axis=0).tobytes()
    m = data(6 * 7, dtype).reshape(6, 7)
    assert pscan.scan(m).tobytes() == pscan.scan(m.ravel(), axis=0).tobytes() and pscan.scan(m).shape == (42,)
    out, y = np.empty(4097, dtype), x.copy()
    count_calls.clear()
    assert pscan.scan(x, op="max", out=out) is out and pscan.scan(y, out=y) is y
    assert count_calls == {"pscan_scan": 2}
    assert out.tobytes() == pscan.scan(x, op="max", axis=0).tobytes() and y.tobytes() == pscan.scan(x).tobytes()
    with pytest.raises(pscan.PscanValueError):
        pscan.scan(x, out=np.empty(4096, dtype))  # declined, and the general path says what is wrong
    with pytest.raises(pscan.PscanError):
        pscan.scan(x, out=np.empty(8194, dtype)[::2])


def test_scan_short_path_declines_what_it_does_not_do():
    """Inputs the short path leaves to the general one behave as before: a dtype to convert into is converted
    first, bool sums into int64; a strided view, float16 and a non-native byte order raise."""
    with pytest.raises(pscan.PscanTypeError):
        pscan.scan(np.arange(10, dtype=">i4"))
    assert pscan.scan(np.arange(10, dtype=np.int16), dtype=np.float32).tolist() == np.cumsum(np.arange(10)).tolist()
    b = np.array([True, False, True])
    assert pscan.cumsum(b).tolist() == [1, 1, 2] and pscan.cumsum(b).dtype == np.int64
    with pytest.raises(pscan.PscanValueError):
        pscan.scan(np.arange(10, dtype=np.int32)[::2])
    with pytest.raises(pscan.PscanTypeError):
        pscan.scan(np.ones(3, np.float16))


@pytest.mark.parametrize("dtype", [np.dtype(np.int64), np.dtype(np.uint8), np.dtype(np.float32)], ids=str)
def test_scan_large_threaded(dtype):
    """Large enough for the CPU backend's threads (4 MiB and up), on 1 and on 3 threads."""
    x = data((1 << 22) + 3, dtype)
    try:
        for threads in (3, 0):
            pscan.set_cpu_threads(threads)
            for exclusive, reverse in FLAGS:
                assert_same(pscan.scan(x, exclusive=exclusive, reverse=reverse), ref_scan(x, "sum", exclusive, reverse))
    finally:
        pscan.set_cpu_threads(0)


def test_worked_examples():
    x = np.array([3, 1, 7, 0, 4, 1, 6, 3], np.int32)
    assert pscan.scan(x).tolist() == [3, 4, 11, 11, 15, 16, 22, 25]
    assert pscan.scan(x, exclusive=True).tolist() == [0, 3, 4, 11, 11, 15, 16, 22]
    assert pscan.scan(x, reverse=True).tolist() == [25, 22, 21, 14, 14, 10, 9, 3]
    assert pscan.reduce(x) == 25 and pscan.reduce(x, op="max") == 7
    assert pscan.select(x, "gt", 2).tolist() == [3, 7, 4, 6, 3]
    keys, count = pscan.partition(x, "gt", 2)
    assert keys.tolist() == [3, 7, 4, 6, 3, 1, 0, 1] and count == 5


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_scan_init(dtype):
    x = data(1000, dtype)
    for op in ops_for(dtype):
        init = np.array(5).astype(dtype)[()] if op != "product" else dtype.type(3)
        for exclusive, reverse in FLAGS:
            assert_same(pscan.scan(x, op=op, exclusive=exclusive, reverse=reverse, init=init),
                        ref_scan(x, op, exclusive, reverse, init))


def test_integer_sums_wrap():
    x = np.array([127, 1, 1], np.int8)
    assert pscan.scan(x).tolist() == [127, -128, -127]
    assert pscan.scan(np.array([255, 1], np.uint8)).tolist() == [255, 0]


def test_dtype_keeps_or_widens():
    x = np.array([100, 100, 100], np.int8)
    assert pscan.scan(x).dtype == np.int8  # without dtype: the input's dtype (numpy.cumsum would give int64)
    got = pscan.scan(x, dtype=np.int64)
    assert_same(got, np.cumsum(x, dtype=np.int64))
    assert_same(pscan.scan(np.array([True, False, True]), dtype=np.int32), np.array([1, 1, 2], np.int32))
    assert_same(pscan.scan(np.arange(5, dtype=np.int16), dtype="f8"), np.cumsum(np.arange(5), dtype="f8"))
    assert_same(pscan.scan([1, 2, 3]), np.cumsum([1, 2, 3]))  # sequences become numpy arrays
    # dtypes pscan has not convert first (numpy compares None equal to float64: that once took bool for widening)
    assert_same(pscan.scan(np.array([True, False, True]), dtype=np.float64), np.array([1.0, 1.0, 2.0]))
    assert_same(pscan.scan(np.ones(3, np.float16), dtype=np.float64), np.array([1.0, 2.0, 3.0]))


WIDENS = {np.int8: np.int64, np.int16: np.int64, np.int32: np.int64, np.uint8: np.uint64, np.uint16: np.uint64,
          np.uint32: np.uint64, np.float32: np.float64}


def test_widening_converts_as_it_reads(count_calls):
    """dtype= the 64-bit type of x's kind on a sum or product is PSCAN_SCAN_WIDEN: one pscan_scan call on x
    itself, the result as if x had been converted first (numpy.cumsum's for small integers)."""
    x = np.array([2**31 - 1, 1, 1], np.int32)
    got = pscan.scan(x, dtype=np.int64)
    assert got.dtype == np.int64 and got.tolist() == [2**31 - 1, 2**31, 2**31 + 1]
    calls = 1
    for narrow, wide in WIDENS.items():
        for op in ("sum", "product"):
            for exclusive, reverse in FLAGS:
                for n in (1, 4097, 70001):
                    x = data(n, np.dtype(narrow)) if op == "sum" else np.array(
                        np.random.default_rng(n).choice([1, 1, 1, 2, 3], n), narrow)
                    init = None if n != 4097 else wide(7)
                    got = pscan.scan(x, op=op, dtype=wide, exclusive=exclusive, reverse=reverse, init=init)
                    want = ref_scan(x.astype(wide), op, exclusive, reverse, init)
                    assert got.dtype == wide
                    if narrow is np.float32:
                        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9 * np.abs(x).sum())
                    else:
                        assert_same(got, want)
                    calls += 1
    assert count_calls == {"pscan_scan": calls}  # no conversion pass, no other call


def test_widening_falls_back_where_the_flag_does_not_apply():
    """Rows (the segmented scan reads one type), min/max, and a dtype that is not the 64-bit one convert first."""
    x = data(6 * 9, np.dtype(np.int16)).reshape(6, 9)
    assert_same(pscan.scan(x, axis=1, dtype=np.int64), np.cumsum(x, axis=1, dtype=np.int64))
    assert_same(pscan.scan(x, op="max", dtype=np.int64), np.maximum.accumulate(x.ravel().astype(np.int64)))
    assert_same(pscan.scan(x, dtype=np.int32), np.cumsum(x, dtype=np.int32))


@pytest.mark.parametrize("dtype", [np.dtype(t) for t in ("?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4",
                                                       "f8")], ids=str)
def test_cumsum_cumprod_are_numpys(dtype, count_calls):
    """numpy.cumsum and numpy.cumprod, result dtype included, flattened and along each axis, with out=; 32-bit and
    smaller integers widen as they are read (one pscan_scan call each, no conversion)."""
    rng = np.random.default_rng(89)
    x = (rng.integers(0, 2, 4097) if dtype.kind == "b" else data(4097, dtype)).astype(dtype)
    small = rng.integers(1, 3, 40).astype(dtype)  # products that stay small
    for fn, ref, v in ((pscan.cumsum, np.cumsum, x), (pscan.cumprod, np.cumprod, small)):
        got = fn(v)
        want = ref(v)
        assert got.dtype == want.dtype
        if dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype.itemsize == 4 else 1e-12, atol=1e-3)
        else:
            assert_same(got, want)
    m = data(6 * 7, dtype if dtype.kind != "b" else np.dtype("i1")).reshape(6, 7).astype(dtype)
    for axis in (0, 1, -1):
        want = np.cumsum(m, axis=axis)
        got = pscan.cumsum(m, axis=axis)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6) if dtype.kind == "f" else assert_same(got, want)
    out = np.empty(m.size, np.float64)
    assert pscan.cumsum(m, dtype=np.float64, out=out) is out
    np.testing.assert_allclose(out, np.cumsum(m, dtype=np.float64), rtol=1e-12)
    if dtype.kind in "iu" and dtype.itemsize < 8:
        count_calls.clear()
        pscan.cumsum(x)
        assert count_calls == {"pscan_scan": 1}  # widened as read: no conversion pass


def test_cumsum_bad_inputs():
    with pytest.raises(pscan.PscanTypeError) as e:
        pscan.cumsum(np.ones(3, np.float16))  # numpy keeps float16, which pscan has not
    assert e.value.status == "PSCAN_ERROR_UNSUPPORTED_TYPE"
    out = np.full(3, -1, np.int32)
    with pytest.raises(TypeError) as e:
        pscan.cumsum(np.ones(3, np.int32), out=out)  # numpy's dtype is int64: out must say so
    assert e.value.status == "PSCAN_ERROR_INVALID_VALUE"
    assert out.tolist() == [-1] * 3


def test_min_max_nan_propagates():
    x = np.array([3, 1, np.nan, 0, 5], np.float64)
    assert_same(pscan.scan(x, op="min"), np.minimum.accumulate(x))
    assert_same(pscan.scan(x, op="max"), np.maximum.accumulate(x))
    assert np.isnan(pscan.reduce(x, op="min"))


# ---- axis ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 5), (4, 1, 6), (2, 0), (0, 3), (5,)])
def test_scan_axis(shape):
    x = data(int(np.prod(shape)), np.dtype(np.int32)).reshape(shape)
    assert_same(pscan.scan(x), np.cumsum(x, dtype=x.dtype))  # axis None: flattened, like numpy
    for axis in range(-x.ndim, x.ndim):
        assert_same(pscan.scan(x, axis=axis), np.cumsum(x, axis=axis, dtype=x.dtype))
        want = np.flip(np.cumsum(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
        assert_same(pscan.scan(x, axis=axis, reverse=True), want)
        assert_same(pscan.reduce(x, axis=axis), np.sum(x, axis=axis, dtype=x.dtype))
        assert_same(pscan.reduce(x, op="max", axis=axis, init=-(2**31)),
                    np.max(x, axis=axis, initial=-(2**31)))


def test_scan_rows_exclusive_init():
    x = data(4 * 33, np.dtype(np.float64)).reshape(4, 33)
    got = pscan.scan(x, axis=1, exclusive=True, init=2.0)
    for r in range(4):
        assert_same(got[r], ref_scan(x[r], "sum", True, False, 2.0))


def test_rows_are_one_segmented_scan_call(count_calls):
    """A scan along an axis of 1000 rows is one C call (a segmented scan over the rows), for numpy arrays and
    CPU tensors alike."""
    x = data(1000 * 37, np.dtype(np.int32)).reshape(1000, 37)
    assert_same(pscan.scan(x, axis=1, exclusive=True), np.cumsum(x, axis=1, dtype=x.dtype) - x)
    assert count_calls == {"pscan_segmented_scan": 1}
    try:
        import torch
    except ImportError:
        return
    t = torch.from_numpy(x)
    assert torch.equal(pscan.scan(t, axis=1), torch.cumsum(t, 1).to(torch.int32))
    assert count_calls == {"pscan_segmented_scan": 2}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_reduce_rows_one_call_or_one_a_row(dtype, count_calls, monkeypatch):
    """A reduce along an axis of short rows is one segmented scan (each row's last element gathered); long rows,
    or more bytes than _ROWS_REDUCE_MAX_BYTES, one pscan_reduce a row. Both give numpy's result for every
    operator, with init and out=, along every axis; integers, min and max bit for bit."""
    import pscan._api as api
    limit = api._ROWS_REDUCE_MAX_HOST
    for op in ops_for(dtype):
        x = data(40 * 33, dtype, op).reshape(40, 33)
        init = dtype.type(1) if op in ("sum", "product", "max", "or", "xor") else None
        for axis in (0, 1, -1):
            count_calls.clear()
            short = pscan.reduce(x, op=op, axis=axis, init=init)
            assert count_calls == {"pscan_segmented_scan": 1}
            monkeypatch.setattr(api, "_ROWS_REDUCE_MAX_HOST", 0)
            count_calls.clear()
            loop = pscan.reduce(x, op=op, axis=axis, init=init)
            assert count_calls == {"pscan_reduce": x.shape[1 if axis == 0 else 0]}
            monkeypatch.setattr(api, "_ROWS_REDUCE_MAX_HOST", limit)  # not undo(): that would undo count_calls
            assert short.dtype == loop.dtype == dtype and short.shape == loop.shape
            if dtype.kind == "f" and op in ("sum", "product"):
                np.testing.assert_allclose(short, loop, rtol=1e-5 if dtype.itemsize == 4 else 1e-12)
            else:
                assert short.tobytes() == loop.tobytes()
            want = np.stack([ref_reduce(np.ascontiguousarray(r), op, init) for r in np.moveaxis(x, axis, -1)])
            if dtype.kind == "f" and op in ("sum", "product"):
                np.testing.assert_allclose(short, want, rtol=1e-5 if dtype.itemsize == 4 else 1e-12)
            else:
                assert_same(short, want)
    out = np.full(40, 99, dtype)
    x = data(40 * 33, dtype).reshape(40, 33)
    assert pscan.reduce(x, axis=1, out=out) is out
    assert out.tobytes() == pscan.reduce(x, axis=1).tobytes()
    monkeypatch.setattr(api, "_ROWS_REDUCE_MAX_BYTES", x.nbytes - 1)  # past the byte limit: a call a row
    count_calls.clear()
    pscan.reduce(x, axis=1)
    assert count_calls == {"pscan_reduce": 40}


# ---- out= ----------------------------------------------------------------------------------------------------
def test_out_and_in_place():
    x = data(5000, np.dtype(np.int64))
    want = ref_scan(x, "sum")
    out = np.empty_like(x)
    assert pscan.scan(x, out=out) is out
    assert_same(out, want)
    y = x.copy()
    assert pscan.scan(y, out=y) is y  # in place
    assert_same(y, want)
    m = x.reshape(50, 100).copy()
    out2 = np.empty((50, 100), np.int64)
    assert pscan.scan(m, axis=0, out=out2) is out2
    assert_same(out2, np.cumsum(m, axis=0))
    r = np.empty((), np.int64)
    assert pscan.reduce(x, out=r) is r and r == want[-1]
    r1 = np.empty(50, np.int64)
    assert pscan.reduce(m, axis=1, out=r1) is r1
    assert_same(r1, m.sum(axis=1))


# ---- reduce --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_reduce_every_dtype_op(dtype):
    for op in ops_for(dtype):
        for n in SIZES:
            x = data(n, dtype, op)
            got = pscan.reduce(x, op=op)
            assert isinstance(got, np.generic) and got.dtype == dtype
            assert_same(got, ref_reduce(x, op))
        assert_same(pscan.reduce(data(999, dtype, op), op=op, init=1), ref_reduce(data(999, dtype, op), op, 1))
    # the short path (a whole C-contiguous numpy array, no init, out or other dtype) against the general one (axis=0)
    for op in ops_for(dtype):
        for n in (0, 1, 4097):
            x = data(n, dtype, op)
            short, general = pscan.reduce(x, op=op), pscan.reduce(x, op=op, axis=0)
            assert isinstance(short, np.generic) and short.dtype == general.dtype  # general: a 0-d array (axis)
            assert short.tobytes() == general.tobytes()
    m = data(6 * 7, dtype).reshape(6, 7)
    m.setflags(write=False)
    assert pscan.reduce(m).tobytes() == pscan.reduce(m.ravel(), axis=0).tobytes()
    assert pscan.reduce(m, dtype=dtype).tobytes() == pscan.reduce(m).tobytes()


# ---- select, partition ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_select_partition_every_pred(dtype):
    tests = {"nonzero": lambda x, c: x != 0, "eq": lambda x, c: x == c, "ne": lambda x, c: x != c,
             "lt": lambda x, c: x < c, "le": lambda x, c: x <= c, "gt": lambda x, c: x > c,
             "ge": lambda x, c: x >= c,
             # bit for bit against the item before (x has no -0.0 or NaN here, so == is bitwise)
             "unique": lambda x, c: np.r_[True, x[1:] != x[:-1]] if x.size else np.zeros(0, bool)}
    assert set(tests) == set(pscan.PREDICATES)
    for n in [0, 1, 4097, 30001]:
        x = (np.random.default_rng(n).integers(0, 6, n)).astype(dtype)
        values = np.arange(n, dtype=np.int64)
        for pred, test in tests.items():
            c = dtype.type(3)
            keep = test(x, c)
            assert_same(pscan.select(x, pred, None if pred in ("nonzero", "unique") else c), x[keep])
            k, v = pscan.compact(x, pred, c, values=values)
            assert_same(k, x[keep])
            assert_same(v, values[keep])
            keys, vals, count = pscan.partition(x, pred, c, values=values)
            assert count == int(keep.sum())
            assert_same(keys, np.concatenate([x[keep], x[~keep]]))
            assert_same(vals, np.concatenate([values[keep], values[~keep]]))


def test_select_flags_and_payload_dtypes():
    x = np.arange(100, dtype=np.float32)
    flags = (np.arange(100) % 3 == 0)
    for vdt in (np.uint8, np.int16, np.float32, np.complex64, np.float64):
        values = np.arange(100).astype(vdt)
        k, v = pscan.select(x, flags=flags, values=values)
        assert_same(k, x[flags])
        assert_same(v, values[flags])
    assert_same(pscan.select(x, flags=flags.astype(np.uint8)), x[flags])
    out = np.full(100, -1, np.float32)
    got = pscan.select(x, flags=flags, out=out)
    assert_same(got, x[flags])
    assert (out[flags.sum():] == -1).all()  # past the count: left as it was


# ---- bad inputs ----------------------------------------------------------------------------------------------
def raises(cls, status, fn):
    with pytest.raises(cls) as e:
        fn()
    assert isinstance(e.value, pscan.PscanError)
    assert e.value.status == status, str(e.value)
    assert status in str(e.value)
    return e.value


def test_errors_exact_status_and_class():
    x = np.arange(10, dtype=np.int32)
    f = np.arange(10, dtype=np.float32)
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_TYPE", lambda: pscan.scan(np.zeros(4, np.float16)))
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_TYPE", lambda: pscan.scan(np.zeros(4, np.complex64)))
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_TYPE", lambda: pscan.reduce(np.zeros(4, ">i4")))
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_TYPE", lambda: pscan.scan(x, dtype=np.float16))
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_OPERATOR", lambda: pscan.scan(f, op="xor"))
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_OPERATOR", lambda: pscan.reduce(f, op="and"))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan(x, op="mean"))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan(x[::2]))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan(np.zeros((4, 4))[:, :2], axis=1))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan(x, axis=1))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan(x, init=2**40))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan(x, init=0.5))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan(x.astype(np.uint8), init=-1))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.select(x, "between", 3))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.select(x, "gt", 2.5))
    raises(ValueError, "PSCAN_ERROR_NULL_POINTER", lambda: pscan.select(x, "gt"))  # the C library's own check
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_TYPE", lambda: pscan.select(x, flags=np.ones(10, np.int32)))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.select(x, flags=np.ones(9, bool)))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.select(x, values=np.arange(9)))
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_TYPE", lambda: pscan.select(x, values=np.zeros(10, "S3")))


def test_bad_out_leaves_it_untouched():
    x = np.arange(10, dtype=np.int32)
    sentinel = np.full(10, 77, np.int32)
    cases = [
        (np.full(9, 77, np.int32), ValueError, "PSCAN_ERROR_INVALID_VALUE", {}),  # shape
        (np.full(10, 77, np.int64), TypeError, "PSCAN_ERROR_INVALID_VALUE", {}),  # dtype
        (np.full(20, 77, np.int32)[::2], ValueError, "PSCAN_ERROR_INVALID_VALUE", {}),  # layout
        (np.full(10, 77, np.float32), TypeError, "PSCAN_ERROR_UNSUPPORTED_OPERATOR", {"op": "xor", "x": x.astype(np.float32)}),
    ]
    for out, cls, status, kw in cases:
        before = out.copy()
        args = dict(kw)
        xx = args.pop("x", x)
        raises(cls, status, lambda: pscan.scan(xx, out=out, **args))
        np.testing.assert_array_equal(out, before)
    overlap = np.arange(11, dtype=np.int32)
    raises(ValueError, "PSCAN_ERROR_OVERLAP", lambda: pscan.scan(overlap[:10], out=overlap[1:]))
    np.testing.assert_array_equal(overlap, np.arange(11))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.reduce(x, out=np.zeros(2, np.int32)))
    assert (sentinel == 77).all()


# ---- the GIL -------------------------------------------------------------------------------------------------
def test_gil_released_during_cpu_call():
    """A long scan in another thread lets this one run: the GIL is released around the C call."""
    x = np.ones(1 << 25, np.int64)
    out = np.empty_like(x)
    ticks = []
    t = threading.Thread(target=lambda: pscan.scan(x, out=out))  # one call: with the GIL held, no tick passes
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    assert len(ticks) > 5, len(ticks)
    assert out[-1] == x.size


# ---- scan_host -----------------------------------------------------------------------------------------------
def test_scan_host_on_the_cpu_backend():
    """Without a GPU scan_host runs on the CPU backend (where pscan_scan_host is pscan_scan); test_cuda.py checks
    it through a GPU in pieces."""
    for n in (0, 1, 4097, 100003):
        x = data(n, np.dtype(np.int64))
        for exclusive, reverse in FLAGS:
            assert_same(pscan.scan_host(x, exclusive=exclusive, reverse=reverse, device=-1),
                        ref_scan(x, "sum", exclusive, reverse))
    x = np.arange(10, dtype=np.int8)
    assert_same(pscan.scan_host(x, dtype=np.int64, init=5, device=-1), np.cumsum(x, dtype=np.int64) + 5)
    out = np.zeros(10, np.int8)
    assert pscan.scan_host(x, op="max", out=out, device=-1) is out and out.tolist() == list(range(10))
    assert pscan.scan_host([3, 1, 7, 0, 4, 1, 6, 3]).tolist() == [3, 4, 11, 11, 15, 16, 22, 25]  # any device
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan_host(x, op="mean"))
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_TYPE", lambda: pscan.scan_host(x.astype(np.float16)))


def test_reduce_host_on_the_cpu_backend():
    """reduce_host on the CPU backend (pscan_reduce); test_cuda.py checks it through a GPU in pieces."""
    for n in (0, 1, 4097, 100003):
        x = data(n, np.dtype(np.int64))
        assert pscan.reduce_host(x, device=-1) == x.sum()
        assert pscan.reduce_host(x, op="max", init=-1 << 62, device=-1) == max([-1 << 62] + x.tolist())
    assert pscan.reduce_host(np.arange(10, dtype=np.int8), dtype=np.int64, init=5, device=-1) == 50
    assert int(pscan.reduce_host([3, 1, 7, 0, 4, 1, 6, 3])) == 25  # any device
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.reduce_host(np.arange(3), op="mean"))


def test_select_host_on_the_cpu_backend():
    """select_host on the CPU backend (pscan_select); test_cuda.py checks it through a GPU in pieces."""
    x = np.array([3, 1, 7, 0, 4, 1, 6, 3], np.int32)
    np.testing.assert_array_equal(pscan.select_host(x, "gt", 2, device=-1), [3, 7, 4, 6, 3])
    keys, vals = pscan.select_host(x, flags=np.array([1, 0, 1, 1, 0, 0, 0, 1], bool), values=np.arange(8),
                                   device=-1)
    np.testing.assert_array_equal(keys, [3, 7, 0, 3])
    np.testing.assert_array_equal(vals, [0, 2, 3, 7])


# ---- a lent allocator ----------------------------------------------------------------------------------------
def test_lender_on_the_cpu_context():
    """The cffi allocator the binding lends torch's caching allocator through under a CUDA graph capture
    (_context.Lender; test_cuda.py runs it on the GPU), here lending numpy buffers to the CPU context: a scan
    with temp == NULL borrows (the CPU backend's scan of 2^20 + 7 items takes temp), gives every loan back, and
    a refused loan is PSCAN_ERROR_OUT_OF_MEMORY with the output untouched and the allocator's exception kept."""
    from pscan import _context

    loans, returned = [], []

    def alloc(nbytes):
        buf = np.empty(nbytes, np.uint8)
        loans.append(nbytes)
        return buf.ctypes.data, buf

    def refuse(nbytes):
        raise MemoryError(f"no {nbytes} bytes today")

    x = data((1 << 20) + 7, np.dtype(np.int32))
    ctx, guard = _context.get(-1, 0)
    lender = _context.Lender(alloc, returned.append)
    with guard:
        lending = lender.lend(ctx)
        lending.__enter__()
    try:
        assert_same(pscan.scan(x), ref_scan(x, "sum", False, False))
    finally:
        with guard:
            lending.__exit__(None, None, None)
    assert loans and len(returned) == len(loans) and not lender.loans
    assert all(isinstance(b, np.ndarray) and b.nbytes == n for b, n in zip(returned, loans))

    lender = _context.Lender(refuse, returned.append)
    out = np.full(x.shape, 7, x.dtype)
    with guard:
        lending = lender.lend(ctx)
        lending.__enter__()
    try:
        raises(RuntimeError, "PSCAN_ERROR_OUT_OF_MEMORY", lambda: pscan.scan(x, out=out))
        assert isinstance(lender.error, MemoryError)
    finally:
        with guard:
            lending.__exit__(None, None, None)
    assert (out == 7).all()


def test_guard_call_retries_a_refusal_under_a_capture_only(monkeypatch):
    """_context._Guard.call, the binding's only capture logic, on the CPU context dressed as a CUDA context on a
    side stream (stubbed: the capture probe, a fake torch whose current stream is the context's, and torch's
    lender, a numpy one here): a call that succeeds never asks about captures; a PSCAN_ERROR_TEMP_TOO_SMALL
    under a capture is made once more with the lender lent (a real scan of 2^20 + 7 items that borrows its temp,
    every loan returned, the workspace back after it); outside a capture or without torch it is the same
    PscanValueError check() raises, not retried; an allocator's exception during the retry is the cause."""
    import sys
    import types

    from pscan import _context
    from pscan._errors import check
    from pscan._lib import ALGO_AUTO, OP_IDS, STATUS_CODES, TYPE_IDS, ffi, lib

    side = 0x5EED  # a stream handle that is not the legacy default one: the guard may capture it
    too_small = STATUS_CODES["PSCAN_ERROR_TEMP_TOO_SMALL"]
    ctx, _ = _context.get(-1, 0)
    guard = _context._Guard(ctx, 0, side)
    assert guard.may_capture
    probes, capturing = [], [True]
    guard.capturing = lambda: probes.append(1) or capturing[0]  # the probe (cuStreamIsCapturing) made once
    fake_torch = types.SimpleNamespace(_C=types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: side))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    loans, returned, refuse = [], [], [False]

    def alloc(nbytes):
        if refuse[0]:
            raise MemoryError(f"no {nbytes} bytes today")
        buf = np.empty(nbytes, np.uint8)
        loans.append(nbytes)
        return buf.ctypes.data, buf

    lender = _context.Lender(alloc, returned.append)
    monkeypatch.setattr(_context, "_torch_lender", lambda torch, device: lender if torch is fake_torch else None)

    x = data((1 << 20) + 7, np.dtype(np.int32))
    out = np.full(x.shape, 7, x.dtype)
    desc = ffi.new("pscan_scan_desc *", [TYPE_IDS["i32"], OP_IDS["sum"], 0, ALGO_AUTO, ffi.NULL])
    calls = []

    def refused_once(*args):  # the first attempt refused (nothing done), the next ones the real call
        calls.append(len(loans))
        return too_small if len(calls) == 1 else lib.pscan_scan(*args)

    args = (ctx, desc, ffi.from_buffer(x), ffi.from_buffer(out), x.size, ffi.NULL, 0)
    with guard:
        guard.call("pscan_scan", lib.pscan_scan, *args)  # success: no probe
    assert not probes and not loans
    out[:] = 7
    with guard:
        guard.call("pscan_scan", refused_once, *args)
    assert calls == [0, 0] and probes == [1]  # retried once, under the lending
    assert loans and len(returned) == len(loans) and not lender.loans
    assert_same(out, ref_scan(x, "sum", False, False))
    n_loans = len(loans)
    with guard:
        guard.call("pscan_scan", lib.pscan_scan, *args)  # after the retry: the workspace again
    assert len(loans) == n_loans

    with pytest.raises(pscan.PscanError) as want:
        check(too_small, "pscan_scan")
    for capturing[0], torch_loaded in ((False, True), (True, False)):  # no capture; torch not loaded
        if not torch_loaded:
            monkeypatch.delitem(sys.modules, "torch")
        calls.clear()
        probes.clear()
        out[:] = 7
        with guard:
            e = raises(ValueError, "PSCAN_ERROR_TEMP_TOO_SMALL",
                       lambda: guard.call("pscan_scan", refused_once, *args))
        assert type(e) is type(want.value) and str(e) == str(want.value)
        assert len(calls) == 1 and probes == ([1] if torch_loaded else []) and (out == 7).all()

    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    capturing[0], refuse[0] = True, True
    calls.clear()
    with guard:
        e = raises(RuntimeError, "PSCAN_ERROR_OUT_OF_MEMORY", lambda: guard.call("pscan_scan", refused_once, *args))
    assert len(calls) == 2 and isinstance(e.__cause__, MemoryError) and (out == 7).all()
    assert lender.error is None and not lender.loans
    assert_same(pscan.scan(x), ref_scan(x, "sum", False, False))  # the workspace again
