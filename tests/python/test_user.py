"""User operators (pscan.Operator) on numpy arrays: the CPU backend calls the Python combine. Checked against
serial folds of the same combine: a non-commutative operator (affine maps; 2x2 signed permutation matrices, 32
bytes) in structured and last-axis layouts, exclusive, reverse, init, reduce, the pool's threads, and bad
operators and inputs with their exact status."""
import numpy as np
import pytest

import pscan
from conftest import assert_same, data, ref_scan

AFFINE = np.dtype([("a", "f4"), ("b", "f4")])
AFFINE_SOURCE = ("typedef struct { float a, b; } affine;\n"
                 "affine combine(affine e, affine l) { affine r; r.a = l.a * e.a; r.b = l.a * e.b + l.b; return r; }\n")


def compose(e, l_):
    """x -> e.a x + e.b first, then l: x -> l.a (e.a x + e.b) + l.b."""
    return (l_["a"] * e["a"], l_["a"] * e["b"] + l_["b"])


def affine_op():
    return pscan.Operator(AFFINE, identity=(1, 0), combine=compose, source=AFFINE_SOURCE, type_name="affine",
                          combine_name="combine")


def affine_data(n, rng):
    """a in {-1, 1}, b small integers: every grouping of the combines gives the same floats."""
    x = np.empty(n, AFFINE)
    x["a"] = rng.choice(np.array([-1, 1]), n)
    x["b"] = rng.integers(-8, 9, n)
    return x


def ref_user_scan(x, fn, identity, exclusive=False, reverse=False, init=None):
    """The serial fold: combine(everything earlier in scan order, the next element)."""
    out = np.empty_like(x)
    acc = np.array([identity if init is None else init], x.dtype)[0]
    for i in (range(x.size - 1, -1, -1) if reverse else range(x.size)):
        nxt = np.array([fn(acc, x[i])], x.dtype)[0]
        out[i] = acc if exclusive else nxt
        acc = nxt
    return out


@pytest.mark.parametrize("n", [0, 1, 2, 7, 4095, 4097, 10007])
def test_affine_scan_reduce(n):
    op = affine_op()
    x = affine_data(n, np.random.default_rng(83 + n))
    for exclusive in (False, True):
        for reverse in (False, True):
            for init in (None, (2, 3)):
                got = pscan.scan(x, op=op, exclusive=exclusive, reverse=reverse, init=init)
                assert_same(got, ref_user_scan(x, compose, (1, 0), exclusive, reverse, init))
    want = ref_user_scan(x, compose, (1, 0))[-1] if n else np.array([(1, 0)], AFFINE)[0]
    got = pscan.reduce(x, op=op)
    assert isinstance(got, np.void) and got == want
    got = pscan.reduce(x, op=op, init=(2, 3))
    assert got == (ref_user_scan(x, compose, (1, 0), init=(2, 3))[-1] if n else np.array([(2, 3)], AFFINE)[0])


def test_affine_worked_example_and_last_axis_layout():
    op = affine_op()
    x = np.array([(2, 1), (2, 1), (2, 1)], AFFINE)
    assert pscan.scan(x, op=op).tolist() == [(2, 1), (4, 3), (8, 7)]
    assert pscan.scan(x, op=op, reverse=True).tolist() == [(8, 7), (4, 3), (2, 1)]
    pairs = np.array([[2, 1], [2, 1], [2, 1]], np.float32)  # one element per row: torch and CuPy pass them so
    got = pscan.scan(pairs, op=op)
    assert got.shape == (3, 2) and got.tolist() == [[2, 1], [4, 3], [8, 7]]
    assert pscan.reduce(pairs, op=op).tolist() == [8, 7]
    out = np.zeros((3, 2), np.float32)
    assert pscan.scan(pairs, op=op, out=out) is out and out.tolist() == [[2, 1], [4, 3], [8, 7]]
    y = x.copy()
    assert pscan.scan(y, op=op, out=y) is y and y.tolist() == [(2, 1), (4, 3), (8, 7)]  # in place


PERM = np.dtype([("m", "f8", (2, 2))])  # 32 bytes, the largest element


def matmul(e, l_):
    return (e["m"] @ l_["m"],)


def test_32_byte_matrices_on_the_pool_threads():
    """Signed 2x2 permutation matrices (products stay exact, and do not commute), 4 MiB + 32 bytes: past the
    CPU's threshold for its threads, so the pool's threads call the Python combine too."""
    rng = np.random.default_rng(89)
    n = (4 << 20) // 32 + 1
    mats = np.array([[[1, 0], [0, 1]], [[0, 1], [1, 0]], [[-1, 0], [0, 1]], [[0, -1], [1, 0]]], np.float64)
    x = np.empty(n, PERM)
    x["m"] = mats[rng.integers(0, 4, n)]
    op = pscan.Operator(PERM, identity=(np.eye(2),), combine=matmul)
    assert op.align == 8
    want = np.empty((n, 2, 2))
    acc = np.eye(2)
    for i in range(n):
        acc = acc @ x["m"][i]
        want[i] = acc
    try:
        pscan.set_cpu_threads(3)
        np.testing.assert_array_equal(pscan.scan(x, op=op)["m"], want)  # (reduce: the same passes, less one)
    finally:
        pscan.set_cpu_threads(0)


def test_plain_and_opaque_dtypes():
    x = data(5000, np.dtype(np.int32))
    mx = pscan.Operator(np.int32, identity=np.iinfo(np.int32).min, combine=max)
    assert_same(pscan.scan(x, op=mx), ref_scan(x, "max"))
    assert pscan.reduce(x, op=mx) == x.max()
    # an opaque 4-byte element: the combine sees numpy.void bytes and returns bytes
    first_nonzero = pscan.Operator(4, identity=b"\0\0\0\0", combine=lambda e, l_: e if bytes(e) != b"\0" * 4 else l_)
    y = np.array([0, 0, 5, 0, 7], np.int32)
    assert pscan.scan(y, op=first_nonzero).tolist() == [0, 0, 5, 5, 5]
    assert first_nonzero.align == 1 and mx.align == 4


def test_combine_exception_is_raised():
    def bad(e, l_):
        raise ZeroDivisionError("inside combine")

    op = pscan.Operator(np.float64, identity=0.0, combine=bad)
    with pytest.raises(ZeroDivisionError):
        pscan.scan(np.ones(10), op=op)
    with pytest.raises(ZeroDivisionError):
        pscan.reduce(np.ones(10), op=op)
    ok = pscan.Operator(np.float64, identity=0.0, combine=lambda e, l_: e + l_)
    assert pscan.scan(np.ones(4), op=ok).tolist() == [1, 2, 3, 4]  # nothing left over from the failure


def test_operators_survive_clear_cache():
    op = affine_op()
    x = affine_data(100, np.random.default_rng(97))
    first = pscan.scan(x, op=op)
    pscan.clear_cache()  # destroys the C operator with its context
    assert_same(pscan.scan(x, op=op), first)


def test_bad_operators_and_inputs():
    def raises(cls, status, fn):
        with pytest.raises(cls) as e:
            fn()
        assert e.value.status == status
        return e.value

    add = lambda e, l_: e + l_  # noqa: E731
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.Operator(33, b"\0" * 33, add))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.Operator(0, b"", add))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.Operator(np.dtype("V40"), b"\0" * 40, add))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.Operator(np.float64, 0.0, add, align=3))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.Operator(np.float64, 0.0, add, align=16))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.Operator(AFFINE, "not a pair", compose))
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_OPERATOR", lambda: pscan.Operator(np.float64, 0.0))
    raises(ValueError, "PSCAN_ERROR_NULL_POINTER", lambda: pscan.Operator(np.float64, 0.0, source="x"))
    gpu_only = pscan.Operator(AFFINE, (1, 0), source=AFFINE_SOURCE, type_name="affine", combine_name="combine")
    x = affine_data(10, np.random.default_rng(1))
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_OPERATOR", lambda: pscan.scan(x, op=gpu_only))  # no CPU combine
    bad_name = pscan.Operator(AFFINE, (1, 0), compose, source=AFFINE_SOURCE, type_name="1affine",
                              combine_name="combine")
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan(x, op=bad_name))  # the C library's check
    op = affine_op()
    out = np.zeros(10, AFFINE)
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_TYPE", lambda: pscan.scan(np.ones(10, np.float32), op=op, out=out))
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_TYPE", lambda: pscan.scan(np.ones((10, 2), np.float64), op=op))
    raises(TypeError, "PSCAN_ERROR_UNSUPPORTED_TYPE", lambda: pscan.scan(np.ones((10, 3), np.float32), op=op))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan(x, op=op, axis=0))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan(x, op=op, dtype=np.float64))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan(x, op=op, init=(1, 2, 3), out=out))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.scan(x, op=op, out=np.zeros(9, AFFINE)))
    raises(ValueError, "PSCAN_ERROR_INVALID_VALUE", lambda: pscan.reduce(x, op=op, axis=-1))
    raises(ValueError, "PSCAN_ERROR_OVERLAP", lambda: pscan.scan(x[:5], op=op, out=x[1:6]))
    assert (out == np.zeros(10, AFFINE)).all()
