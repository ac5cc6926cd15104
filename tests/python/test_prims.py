"""sort, histogram, segmented_scan, run_length_encode and expand on numpy arrays (the CPU backend) against numpy
references: every dtype, awkward sizes, the CPU's threads, and bad inputs with their exact status (outputs
left untouched)."""
import numpy as np
import pytest

import pscan
from conftest import ALL_DTYPES, INT_DTYPES, assert_same, data, ops_for, ref_scan

SIZES = [0, 1, 2, 7, 4095, 4096, 4097, 100003]
FLAGS = [(False, False), (True, False), (False, True), (True, True)]


def status_of(excinfo):
    return excinfo.value.status


# ---- sort ----------------------------------------------------------------------------------------------------
def sort_key(x):
    """The C library's order-preserving map of keys to unsigned integers of their width (pscan.h, Sort)."""
    w = x.dtype.itemsize * 8
    u = np.dtype(f"u{w // 8}")
    b = x.view(u)
    top = u.type(1 << (w - 1))
    if x.dtype.kind == "u":
        return b.copy()
    if x.dtype.kind == "i":
        return b ^ top
    k = np.where((b & top) != 0, ~b, b | top)
    k[np.isnan(x)] = np.iinfo(u).max
    return k


def ref_sort_order(x, descending=False, begin_bit=0, end_bit=0):
    k = sort_key(x)
    if descending:
        k = ~k
    w = x.dtype.itemsize * 8
    end = end_bit or w
    if begin_bit or end != w:
        k = (k >> k.dtype.type(begin_bit)) & k.dtype.type((1 << (end - begin_bit)) - 1)
    return np.argsort(k, kind="stable")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_sort_every_dtype_size(dtype):
    for n in SIZES:
        x = data(n, dtype)
        assert_same(pscan.sort(x), np.sort(x, kind="stable"))
        v = np.arange(n, dtype=np.int32)
        for descending in (False, True):
            k, p = pscan.sort(x, values=v, descending=descending)
            order = ref_sort_order(x, descending)
            assert_same(k, x[order])
            assert_same(p, v[order])


def test_sort_large_threaded_and_payload_widths():
    x = data((1 << 21) + 3, np.dtype(np.int64))
    try:
        for threads in (3, 0):
            pscan.set_cpu_threads(threads)
            assert_same(pscan.sort(x), np.sort(x, kind="stable"))
    finally:
        pscan.set_cpu_threads(0)
    x = data(5000, np.dtype(np.uint16))
    order = np.argsort(x, kind="stable")
    for vdt in (np.uint8, np.float16, np.float32, np.complex64):  # any payload of 1, 2, 4 or 8 bytes
        v = np.arange(5000).astype(vdt)
        assert_same(pscan.sort(x, values=v)[1], v[order])


def test_sort_bits_and_floats():
    x = data(10000, np.dtype(np.uint32))
    for begin, end in ((0, 8), (8, 16), (4, 32), (31, 32)):
        assert_same(pscan.sort(x, begin_bit=begin, end_bit=end), x[ref_sort_order(x, False, begin, end)])
    f = np.array([1.5, np.nan, -0.0, 0.0, -np.inf, np.inf, -np.nan, 0.0, -0.0, -2.0], np.float32)
    assert_same(pscan.sort(f).view(np.uint32), f[ref_sort_order(f)].view(np.uint32))
    got = pscan.sort(f, descending=True)
    assert_same(got.view(np.uint32), f[ref_sort_order(f, True)].view(np.uint32))
    assert np.isnan(got[:2]).all() and got[2] == np.inf


def test_sort_out_and_2d():
    x = np.array([[3, 1], [7, 0]], np.int16)
    out = np.empty(4, np.int16)
    assert pscan.sort(x, out=out) is out
    assert out.tolist() == [0, 1, 3, 7]
    assert x.tolist() == [[3, 1], [7, 0]]  # the input is left as it was


@pytest.mark.parametrize("dtype", [np.dtype(t) for t in ("u1", "i2", "i4", "u8", "f4", "f8")], ids=str)
def test_argsort(dtype):
    """numpy's stable argsort at awkward sizes, descending as the stable reverse order, a bit range, out=."""
    for n in SIZES:
        x = data(n, dtype)
        got = pscan.argsort(x)
        assert got.dtype == np.int64 and got.shape == (n,)
        assert_same(got, np.argsort(x, kind="stable"))
        assert_same(pscan.argsort(x, descending=True), ref_sort_order(x, True).astype(np.int64))
    x = data(10000, dtype)
    bits = 8 * dtype.itemsize
    assert_same(pscan.argsort(x, begin_bit=bits // 2, end_bit=bits),
                ref_sort_order(x, False, bits // 2, bits).astype(np.int64))
    out = np.full(x.size, -1, np.int64)
    assert pscan.argsort(x.reshape(100, 100), out=out) is out  # flattened, as numpy's axis=None
    assert_same(out, np.argsort(x, kind="stable"))


def test_argsort_bad_inputs():
    x = np.array([3, 1, 2], np.int32)
    for bad, status, cls in ((np.zeros(3, np.int32), "PSCAN_ERROR_INVALID_VALUE", TypeError),
                             (np.zeros(4, np.int64), "PSCAN_ERROR_INVALID_VALUE", ValueError)):
        with pytest.raises(cls) as e:
            pscan.argsort(x, out=bad)
        assert status_of(e) == status
        assert (bad == 0).all()
    out = np.full(3, -9, np.int64)
    with pytest.raises(ValueError) as e:
        pscan.argsort(x, begin_bit=8, end_bit=8, out=out)
    assert status_of(e) == "PSCAN_ERROR_INVALID_VALUE"
    with pytest.raises(pscan.PscanTypeError) as e:
        pscan.argsort(np.zeros(3, np.float16), out=out)
    assert status_of(e) == "PSCAN_ERROR_UNSUPPORTED_TYPE"
    assert out.tolist() == [-9] * 3


def test_sort_bad_inputs():
    x = np.array([3, 1, 2], np.int32)
    out = np.full(3, -9, np.int32)
    with pytest.raises(pscan.PscanTypeError) as e:
        pscan.sort(np.zeros(3, np.float16))
    assert status_of(e) == "PSCAN_ERROR_UNSUPPORTED_TYPE"
    with pytest.raises(ValueError) as e:
        pscan.sort(x, values=np.arange(4))
    assert status_of(e) == "PSCAN_ERROR_INVALID_VALUE"
    with pytest.raises(TypeError) as e:
        pscan.sort(x, values=np.zeros((3, 3), np.uint8).view("V3").ravel())
    assert status_of(e) == "PSCAN_ERROR_UNSUPPORTED_TYPE"
    for begin, end in ((8, 8), (9, 8), (0, 33), (-1, 8)):
        with pytest.raises(ValueError) as e:
            pscan.sort(x, begin_bit=begin, end_bit=end, out=out)
        assert status_of(e) == "PSCAN_ERROR_INVALID_VALUE"
    with pytest.raises(ValueError) as e:
        pscan.sort(x, out=x)
    assert status_of(e) == "PSCAN_ERROR_OVERLAP"
    with pytest.raises(ValueError) as e:
        pscan.sort(x[::2])
    assert status_of(e) == "PSCAN_ERROR_INVALID_VALUE"
    assert out.tolist() == [-9] * 3 and x.tolist() == [3, 1, 2]


# ---- histogram -----------------------------------------------------------------------------------------------
def ref_hist_range(x, bins, lo, hi):
    """pscan.h's bin rule: exact in integers; in the sample's float type for floats."""
    if x.dtype.kind in "iu":
        v = x.astype(object)
        keep = (v >= lo) & (v < hi)
        idx = ((v[keep] - lo) * bins // (hi - lo)).astype(np.int64)
    else:
        dt = x.dtype.type
        lo_, hi_ = dt(lo), dt(hi)
        s = dt(bins) / (hi_ - lo_)
        keep = (x >= lo_) & (x < hi_)
        idx = np.minimum(bins - 1, np.floor((x[keep] - lo_) * s)).astype(np.int64)
    return np.bincount(idx, minlength=bins).astype(np.uint64)


def ref_hist_edges(x, edges):
    bins = edges.size - 1
    i = np.searchsorted(edges, x, side="right") - 1
    keep = (i >= 0) & (i < bins) & ~np.isnan(x.astype(np.float64))
    return np.bincount(i[keep], minlength=bins).astype(np.uint64)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_histogram_every_dtype_size(dtype):
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    ranges = [(info.min, info.max), (0, 10)] if info else [(-8, 9), (-3.5, 2.25)]
    for n in SIZES:
        x = data(n, dtype)
        for bins in (1, 3, 17, 256):
            for lo, hi in ranges:
                counts, edges = pscan.histogram(x, bins, range=(lo, hi))
                assert_same(counts, ref_hist_range(x, bins, lo, hi))
                assert_same(edges, np.linspace(lo, hi, bins + 1))
        e = np.unique(data(9, dtype, seed=7))
        if e.size >= 2:
            assert_same(pscan.histogram(x, edges=e)[0], ref_hist_edges(x, e))
            assert_same(pscan.histogram(x, e)[0], ref_hist_edges(x, e))  # bins= an array, as numpy allows


def test_histogram_like_numpy():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 100, 100003).astype(np.float64) + 0.5  # never on an edge
    counts, edges = pscan.histogram(x, 20, range=(0, 100))
    want, wedges = np.histogram(x, 20, range=(0, 100))
    assert_same(counts.astype(np.int64), want)
    assert_same(edges, wedges)
    u = rng.integers(0, 256, 100003, dtype=np.uint8)
    assert_same(pscan.histogram(u, 256, range=(0, 256))[0], np.bincount(u, minlength=256).astype(np.uint64))
    e = np.array([0, 10, 50, 200], np.uint8)
    assert_same(pscan.histogram(u, edges=e, count_dtype=np.int64)[0], np.histogram(u[u < 200], e)[0])
    # the differences: the last bin is half-open, NaN counts nowhere
    y = np.array([0.0, 1.0, 2.0, np.nan])
    assert pscan.histogram(y, 2, range=(0, 2))[0].tolist() == [1, 1]
    assert np.histogram(y[:3], 2, range=(0, 2))[0].tolist() == [1, 2]


def test_histogram_count_types_out_accumulate():
    x = np.array([3, 1, 7, 0, 4, 1, 6, 3], np.int32)
    for cdt in (np.uint32, np.uint64, np.int32, np.int64):
        c, _ = pscan.histogram(x, 4, range=(0, 8), count_dtype=cdt)
        assert_same(c, np.array([3, 2, 1, 2], cdt))
    out = np.full(4, 10, np.uint32)
    c, _ = pscan.histogram(x, 4, range=(0, 8), count_dtype=np.uint32, out=out, accumulate=True)
    assert c is out and out.tolist() == [13, 12, 11, 12]
    pscan.histogram(x, 4, range=(0, 8), count_dtype=np.uint32, out=out)
    assert out.tolist() == [3, 2, 1, 2]
    pscan.set_cpu_threads(3)
    try:
        big = data((1 << 22) + 3, np.dtype(np.uint16))
        assert_same(pscan.histogram(big, 1000, range=(0, 65536))[0], ref_hist_range(big, 1000, 0, 65536))
    finally:
        pscan.set_cpu_threads(0)


def test_histogram_bad_inputs():
    x = np.array([3, 1, 7], np.int32)
    out = np.full(4, 9, np.uint64)
    cases = [
        (dict(bins=4), "PSCAN_ERROR_INVALID_VALUE", ValueError),  # no range
        (dict(bins=0, range=(0, 8)), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(bins=65537, range=(0, 8)), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(bins=4, range=(8, 0), out=out), "PSCAN_ERROR_INVALID_VALUE", ValueError),  # the C library's check
        (dict(bins=4, range=(0.5, 8)), "PSCAN_ERROR_INVALID_VALUE", ValueError),  # integer samples: exact bounds
        (dict(bins=4, range=(0, 8), count_dtype=np.float32), "PSCAN_ERROR_UNSUPPORTED_TYPE", TypeError),
        (dict(bins=4, range=(0, 8), count_dtype=np.uint16), "PSCAN_ERROR_UNSUPPORTED_TYPE", TypeError),
        (dict(edges=np.array([0, 1, 2], np.int64)), "PSCAN_ERROR_INVALID_VALUE", TypeError),  # not x's dtype
        (dict(edges=np.array([0], np.int32)), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(bins=3, range=(0, 8), out=out), "PSCAN_ERROR_INVALID_VALUE", ValueError),  # out of 4, 3 bins
        (dict(bins=4, range=(0, 8), accumulate=True), "PSCAN_ERROR_INVALID_VALUE", ValueError),
    ]
    for kw, status, cls in cases:
        with pytest.raises(cls) as e:
            pscan.histogram(x, **kw)
        assert status_of(e) == status, kw
    with pytest.raises(ValueError) as e:
        pscan.histogram(np.array([1.0, 2.0]), 4, range=(0, np.inf))
    assert status_of(e) == "PSCAN_ERROR_INVALID_VALUE"
    with pytest.raises(ValueError) as e:
        pscan.histogram(x, 4, range=(0, 8), out=np.zeros(2, np.uint64))
    assert status_of(e) == "PSCAN_ERROR_INVALID_VALUE"  # out of 2 counts for 4 bins
    assert out.tolist() == [9] * 4


# ---- segmented scan ------------------------------------------------------------------------------------------
def random_offsets(n, rng, segments):
    cuts = np.sort(rng.integers(0, n + 1, max(segments - 1, 0)))
    return np.concatenate([[0], cuts, [n]]).astype(np.int64)


def ref_segscan(x, offsets, op, exclusive, reverse, init=None):
    out = np.empty_like(x)
    for s, e in zip(offsets[:-1], offsets[1:]):
        out[s:e] = ref_scan(x[s:e], op, exclusive, reverse, init)
    return out


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_segmented_scan_every_dtype_op_flag(dtype):
    rng = np.random.default_rng(11)
    for op in ops_for(dtype):
        for n in SIZES[:-1]:
            x = data(n, dtype, op)
            offsets = random_offsets(n, rng, 1 + n // 50)
            flags = np.zeros(n, bool)
            flags[offsets[1:-1][offsets[1:-1] < n]] = True
            for exclusive, reverse in FLAGS:
                want = ref_segscan(x, offsets, op, exclusive, reverse)
                assert_same(pscan.segmented_scan(x, offsets=offsets, op=op, exclusive=exclusive, reverse=reverse),
                            want)
                assert_same(pscan.segmented_scan(x, flags=flags, op=op, exclusive=exclusive, reverse=reverse),
                            want)


def test_segmented_scan_examples_init_inplace_threads():
    x = np.array([3, 1, 7, 0, 4, 1, 6, 3])
    off = np.array([0, 3, 5, 8], np.uint64)
    assert pscan.segmented_scan(x, off, reverse=True).tolist() == [11, 8, 7, 4, 4, 10, 9, 3]
    assert pscan.segmented_scan(x, off, init=100).tolist() == [103, 104, 111, 100, 104, 101, 107, 110]
    assert pscan.segmented_scan(x, np.array([0, 0, 8, 8])).tolist() == np.cumsum(x).tolist()  # empty segments
    y = x.copy()
    assert pscan.segmented_scan(y, off, out=y) is y and y.tolist() == [3, 4, 11, 0, 4, 1, 7, 10]
    big = data((1 << 22) + 3, np.dtype(np.int32))
    offsets = random_offsets(big.size, np.random.default_rng(3), 7)
    try:
        pscan.set_cpu_threads(3)
        assert_same(pscan.segmented_scan(big, offsets), ref_segscan(big, offsets, "sum", False, False))
    finally:
        pscan.set_cpu_threads(0)
    assert pscan.segmented_scan(np.zeros(0, np.int8), np.array([0])).size == 0


def test_segmented_scan_bad_inputs():
    x = np.array([3, 1, 7, 0], np.int32)
    out = np.full(4, -9, np.int32)
    cases = [
        (dict(), "PSCAN_ERROR_INVALID_VALUE", ValueError),  # neither
        (dict(offsets=np.array([0, 4]), flags=np.ones(4, bool)), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(offsets=np.array([0, 4], np.int32)), "PSCAN_ERROR_UNSUPPORTED_TYPE", TypeError),
        (dict(offsets=np.array([], np.int64)), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(offsets=np.array([0], np.int64), out=out), "PSCAN_ERROR_INVALID_VALUE", ValueError),  # 0 segments
        (dict(offsets=np.array([0, 3], np.int64), out=out), "PSCAN_ERROR_INVALID_VALUE", ValueError),  # not n
        (dict(offsets=np.array([1, 4], np.int64), out=out), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(offsets=np.array([0, 3, 2, 4], np.int64), out=out), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(flags=np.ones(3, bool)), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(flags=np.ones(4, np.int32)), "PSCAN_ERROR_UNSUPPORTED_TYPE", TypeError),
        (dict(flags=np.ones(4, bool), op="mean"), "PSCAN_ERROR_INVALID_VALUE", ValueError),
        (dict(flags=np.ones(4, bool), init=2 ** 40), "PSCAN_ERROR_INVALID_VALUE", ValueError),
    ]
    for kw, status, cls in cases:
        with pytest.raises(cls) as e:
            pscan.segmented_scan(x, **kw)
        assert status_of(e) == status, kw
    with pytest.raises(TypeError) as e:
        pscan.segmented_scan(np.ones(4), flags=np.ones(4, bool), op="xor")
    assert status_of(e) == "PSCAN_ERROR_UNSUPPORTED_OPERATOR"
    assert out.tolist() == [-9] * 4


# ---- run-length encoding -------------------------------------------------------------------------------------
def ref_rle(x):
    if x.size == 0:
        return x[:0], np.zeros(0, np.int64)
    b = x.view(f"u{x.dtype.itemsize}")
    starts = np.flatnonzero(np.concatenate([[True], b[1:] != b[:-1]]))
    return x[starts], np.diff(np.concatenate([starts, [x.size]])).astype(np.int64)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_run_length_encode_every_dtype_size(dtype):
    rng = np.random.default_rng(17)
    for n in SIZES + [(1 << 20) + 1]:
        x = data(n, dtype)
        x = np.repeat(x, rng.integers(1, 5, n))[:n]  # runs of 1 to 4
        v, lengths = pscan.run_length_encode(x)
        want_v, want_l = ref_rle(x)
        assert_same(v.view(f"u{dtype.itemsize}"), want_v.view(f"u{dtype.itemsize}"))
        assert_same(lengths, want_l)


def test_run_length_encode_bits():
    f = np.array([0.0, -0.0, -0.0, np.nan, np.nan, 1.0], np.float64)
    v, lengths = pscan.run_length_encode(f)
    assert lengths.tolist() == [1, 2, 2, 1] and np.signbit(v[1]) and np.isnan(v[2])
    assert pscan.run_length_encode(np.full(10000, 7, np.int8))[1].tolist() == [10000]
    with pytest.raises(TypeError) as e:
        pscan.run_length_encode(np.zeros(3, np.float16))
    assert status_of(e) == "PSCAN_ERROR_UNSUPPORTED_TYPE"


# ---- expand --------------------------------------------------------------------------------------------------
def ref_ranks(counts):
    c = counts.astype(np.int64)
    starts = np.cumsum(c) - c
    return np.arange(c.sum(), dtype=np.int64) - np.repeat(starts, c)


@pytest.mark.parametrize("cdt", [np.uint32, np.uint64, np.int32, np.int64], ids=str)
def test_expand_every_count_type_size(cdt):
    rng = np.random.default_rng(23)
    for n in SIZES:
        counts = rng.integers(0, 4, n).astype(cdt)
        if n > 10:
            counts[n // 2] = 50000  # one item with a huge count
        c64 = counts.astype(np.int64)  # numpy.repeat refuses uint64 repeats
        idx = pscan.expand(counts)
        assert_same(idx, np.repeat(np.arange(n, dtype=np.int64), c64))
        for vdt in (np.int8, np.float32, np.float64):
            values = data(n, np.dtype(vdt))
            got, ranks = pscan.expand(counts, values=values, ranks=True)
            assert_same(got, np.repeat(values, c64))
            assert_same(ranks, ref_ranks(counts))


def test_expand_bad_inputs():
    with pytest.raises(TypeError) as e:
        pscan.expand(np.array([1, 2], np.int16))
    assert status_of(e) == "PSCAN_ERROR_UNSUPPORTED_TYPE"
    with pytest.raises(TypeError) as e:
        pscan.expand(np.array([1.0, 2.0]))
    assert status_of(e) == "PSCAN_ERROR_UNSUPPORTED_TYPE"
    with pytest.raises(ValueError) as e:
        pscan.expand(np.array([1, 2]), values=np.arange(3))
    assert status_of(e) == "PSCAN_ERROR_INVALID_VALUE"
    with pytest.raises(ValueError) as e:
        pscan.expand(np.array([1, -1, 2]))
    assert status_of(e) == "PSCAN_ERROR_TOO_LARGE"
    assert pscan.expand(np.zeros(0, np.uint32)).size == 0
    assert pscan.expand(np.zeros(5, np.uint32)).size == 0
