"""recurrence and recurrence2 on numpy arrays (the CPU backend) against serial loops: exact on data whose every
grouping gives the same bits, close on random floats, forward and reverse, y0, in place, the CPU's threads, and
bad inputs with their exact status."""
import numpy as np
import pytest

import pscan

SIZES = [0, 1, 2, 7, 4095, 4096, 4097, 100003]
FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]


def ref_recurrence(a, b, y0=0.0, reverse=False):
    """y[i] = a[i] * y[i-1] + b[i], serially, in float64."""
    n = a.size
    y = np.empty(n, np.float64)
    prev = float(y0)
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        prev = float(a[i]) * prev + float(b[i])
        y[i] = prev
    return y


def ref_recurrence2(a, b, c, y1=0.0, y2=0.0, reverse=False):
    n = a.size
    y = np.empty(n, np.float64)
    p1, p2 = float(y1), float(y2)
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        v = float(a[i]) * p1 + float(b[i]) * p2 + float(c[i])
        y[i] = v
        p1, p2 = v, p1
    return y


def exact_first_order(n, dtype, rng):
    """a in {-1, 0, 1}, b small integers: every partial composition is an integer map of bounded size."""
    return rng.integers(-1, 2, n).astype(dtype), rng.integers(-8, 9, n).astype(dtype)


def exact_second_order(n, dtype, rng):
    """Each step's matrix [[a, b], [1, 0]] has one nonzero in its first row (a or b, +-1): products keep one
    +-1 per row, so every grouping gives small integers."""
    a = rng.choice(np.array([-1, 0, 1]), n)
    b = np.where(a == 0, rng.choice(np.array([-1, 1]), n), 0)
    return a.astype(dtype), b.astype(dtype), rng.integers(-8, 9, n).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_recurrence_exact(dtype):
    rng = np.random.default_rng(61)
    for n in SIZES:
        a, b = exact_first_order(n, dtype, rng)
        for reverse in (False, True):
            for y0 in (None, 3):
                got = pscan.recurrence(a, b, y0=y0, reverse=reverse)
                assert got.dtype == dtype and got.shape == (n,)
                np.testing.assert_array_equal(got, ref_recurrence(a, b, y0 or 0, reverse).astype(dtype))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_recurrence2_exact(dtype):
    rng = np.random.default_rng(67)
    for n in SIZES:
        a, b, c = exact_second_order(n, dtype, rng)
        for reverse in (False, True):
            for y1, y2 in ((None, None), (2, -5)):
                got = pscan.recurrence2(a, b, c, y1=y1, y2=y2, reverse=reverse)
                want = ref_recurrence2(a, b, c, y1 or 0, y2 or 0, reverse).astype(dtype)
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_recurrences_random_floats_close(dtype):
    """Contracting random maps: the parallel order differs from the serial loop only by rounding."""
    rng = np.random.default_rng(71)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    for n in (4097, 100003):
        a = rng.uniform(-0.9, 0.9, n).astype(dtype)
        b = rng.uniform(-1, 1, n).astype(dtype)
        c = rng.uniform(-1, 1, n).astype(dtype)
        for reverse in (False, True):
            np.testing.assert_allclose(pscan.recurrence(a, b, y0=dtype.type(0.5), reverse=reverse),
                                       ref_recurrence(a, b, dtype.type(0.5), reverse), rtol=tol, atol=tol)
            np.testing.assert_allclose(pscan.recurrence2(a * 0.5, b * 0.4, c, reverse=reverse),
                                       ref_recurrence2(a * 0.5, b * 0.4, c, 0, 0, reverse), rtol=tol, atol=tol)


def test_recurrence_examples_inplace_threads():
    assert pscan.recurrence(np.full(4, 2.0), np.ones(4)).tolist() == [1, 3, 7, 15]
    assert pscan.recurrence(np.full(4, 2.0), np.ones(4), reverse=True).tolist() == [15, 7, 3, 1]
    assert pscan.recurrence2(np.ones(5), np.ones(5), np.zeros(5), y1=1.0).tolist() == [1, 2, 3, 5, 8]
    rng = np.random.default_rng(73)
    a, b = exact_first_order(1000, np.dtype(np.float64), rng)
    want = ref_recurrence(a, b)
    for target in ("a", "b"):
        aa, bb = a.copy(), b.copy()
        out = aa if target == "a" else bb
        assert pscan.recurrence(aa, bb, out=out) is out
        np.testing.assert_array_equal(out, want)
    a2, b2, c2 = exact_second_order(1000, np.dtype(np.float32), rng)
    want2 = ref_recurrence2(a2, b2, c2).astype(np.float32)
    cc = c2.copy()
    assert pscan.recurrence2(a2, b2, cc, out=cc) is cc
    np.testing.assert_array_equal(cc, want2)
    a, b = exact_first_order((1 << 20) + 3, np.dtype(np.float64), rng)  # 8 MiB: the pool's threads
    a2, b2, c2 = exact_second_order((1 << 20) + 3, np.dtype(np.float64), rng)
    try:
        for threads in (3, 0):
            pscan.set_cpu_threads(threads)
            np.testing.assert_array_equal(pscan.recurrence(a, b, y0=1.0), ref_recurrence(a, b, 1.0))
            np.testing.assert_array_equal(pscan.recurrence2(a2, b2, c2, y1=1.0, reverse=True),
                                          ref_recurrence2(a2, b2, c2, 1.0, 0.0, True))
    finally:
        pscan.set_cpu_threads(0)


def test_recurrence_bad_inputs():
    a = np.ones(4)
    b = np.ones(4)
    y = np.full(4, -9.0)
    cases = [
        (lambda: pscan.recurrence(a.astype(np.int32), b.astype(np.int32)), "PSCAN_ERROR_UNSUPPORTED_TYPE", TypeError),
        (lambda: pscan.recurrence(a.astype(np.float16), b.astype(np.float16)), "PSCAN_ERROR_UNSUPPORTED_TYPE",
         TypeError),
        (lambda: pscan.recurrence(a, b.astype(np.float32), out=y), "PSCAN_ERROR_INVALID_VALUE", TypeError),
        (lambda: pscan.recurrence(a, b[:3], out=y), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (lambda: pscan.recurrence(a, np.ones(8)[::2], out=y), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (lambda: pscan.recurrence(a, b, y0=0.1, out=y.astype(np.float32)), "PSCAN_ERROR_INVALID_VALUE", TypeError),
        (lambda: pscan.recurrence(a.astype(np.float32), b.astype(np.float32), y0=0.1), "PSCAN_ERROR_INVALID_VALUE",
         ValueError),  # 0.1 is not a float32: pass numpy.float32(0.1)
        (lambda: pscan.recurrence(a, b, out=np.zeros(5)), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (lambda: pscan.recurrence2(a, b, np.ones(3), out=y), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (lambda: pscan.recurrence2(a, b, np.ones(4, np.float32), out=y), "PSCAN_ERROR_INVALID_VALUE", TypeError),
        (lambda: pscan.recurrence2(a, b, b, y2="x", out=y), "PSCAN_ERROR_INVALID_VALUE", ValueError),
    ]
    for fn, status, cls in cases:
        with pytest.raises(cls) as e:
            fn()
        assert e.value.status == status
    assert y.tolist() == [-9.0] * 4
    shared = np.zeros(9)
    with pytest.raises(ValueError) as e:
        pscan.recurrence(shared[:4], b, out=shared[2:6])  # y over a, not exactly a
    assert e.value.status == "PSCAN_ERROR_OVERLAP"
    assert pscan.recurrence(np.zeros(0), np.zeros(0)).size == 0
    assert pscan.recurrence(np.float32(0.5) * np.ones(3, np.float32), np.ones(3, np.float32),
                            y0=np.float32(0.1)).dtype == np.float32


# ---- polyval: Horner's rule as the recurrence y = x y + c ------------------------------------------------------
def ref_polyval(c, x, reverse=False):
    """Every Horner prefix, serially, in float64 (reverse: the coefficients lowest degree first)."""
    return ref_recurrence(np.full(c.size, float(x)), c, 0.0, reverse)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_polyval_exact(dtype):
    """x in {-1, 0, 1} with small integer coefficients at every size, and x = 2 or 0.5 where every prefix is a
    dyadic number the dtype holds exactly (degree 20): every grouping gives the same bits."""
    rng = np.random.default_rng(79)
    for n in SIZES + [21]:
        c = rng.integers(-8, 9, n).astype(dtype)
        for x in ((-1, 0, 1, 2, 0.5) if n <= 21 else (-1, 0, 1)):
            for reverse in (False, True):
                got = pscan.polyval(c, x, reverse=reverse)
                assert got.dtype == dtype and got.shape == (n,)
                np.testing.assert_array_equal(got, ref_polyval(c, x, reverse).astype(dtype))


def test_polyval_numpy_examples_inplace():
    c = np.array([1.0, 2.0, 3.0])
    assert pscan.polyval(c, 2.0).tolist() == [1, 4, 11]
    assert pscan.polyval(c, 2.0, reverse=True).tolist() == [17, 8, 3]
    rng = np.random.default_rng(83)
    c = rng.uniform(-1, 1, 4097)
    got = pscan.polyval(c, 0.75)
    assert got[-1] == pytest.approx(np.polyval(c, 0.75), rel=1e-12, abs=1e-12)
    back = pscan.polyval(c, -0.75, reverse=True)
    assert back[0] == pytest.approx(np.polynomial.polynomial.polyval(-0.75, c), rel=1e-12, abs=1e-12)
    c32 = rng.integers(-8, 9, 1000).astype(np.float32)
    want = ref_polyval(c32, -1).astype(np.float32)
    assert pscan.polyval(c32, np.float32(-1), out=c32) is c32  # in place
    np.testing.assert_array_equal(c32, want)


def test_polyval_bad_inputs():
    c = np.ones(4)
    y = np.full(4, -9.0)
    cases = [
        (lambda: pscan.polyval(c.astype(np.int64), 2), "PSCAN_ERROR_UNSUPPORTED_TYPE", TypeError),
        (lambda: pscan.polyval(c.astype(np.float32), 0.1), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (lambda: pscan.polyval(c, None, out=y), "PSCAN_ERROR_NULL_POINTER", ValueError),
        (lambda: pscan.polyval(c, 2.0, out=np.zeros(5)), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (lambda: pscan.polyval(c, 2.0, out=y.astype(np.float32)), "PSCAN_ERROR_INVALID_VALUE", TypeError),
    ]
    for fn, status, cls in cases:
        with pytest.raises(cls) as e:
            fn()
        assert e.value.status == status
    assert y.tolist() == [-9.0] * 4
    assert pscan.polyval(np.zeros(0), 1.0).size == 0
