"""Scans and reductions of Dask arrays: pscan on each block, the carries passed between blocks (scan, reduce, and
numpy's cumsum and cumprod with their result dtypes).

Reduce-then-scan at the level of blocks, the way pscan's GPU algorithms work at the level of tiles:

    1. reduce   each block along the axis with pscan.reduce            (blocks in parallel, one pass)
    2. carries  an exclusive pscan.scan of the block totals, with init  (tiny: one value per block and row)
    3. scan     each block again with pscan.scan, init = its carry      (blocks in parallel, one pass)

so a block's result depends only on its own data and one value per row, and a scan of data spread over many
workers runs on Dask's scheduler with two reads of the data. Blocks may be numpy or CuPy arrays (or anything
pscan.scan takes). Dask is optional: ``pip install pscan[dask]``.

Example::

    >>> import dask.array as da, pscan.dask
    >>> x = da.from_array(numpy.array([3, 1, 7, 0, 4, 1, 6, 3]), chunks=3)
    >>> pscan.dask.scan(x, exclusive=True).compute()
    array([ 0,  3,  4, 11, 11, 15, 16, 22])
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import _api, _arrays


def _dense(b):
    """Block b as a C-contiguous array (Dask hands out views of sliced arrays); a copy only if it is not."""
    if isinstance(b, np.ndarray):
        return np.ascontiguousarray(b)
    if hasattr(b, "is_contiguous"):
        return b if b.is_contiguous() else b.contiguous()
    flags = getattr(b, "flags", None)
    if flags is not None and not flags.c_contiguous:
        import cupy

        return cupy.ascontiguousarray(b)
    return b


def _block_totals(b, op):
    """One total per row of block b along its last axis, as an array with a last axis of length 1."""
    return _api.reduce(_dense(b), op=op, axis=-1)[..., None]


def _carries(t, op, reverse, init):
    """Exclusive scan of the block totals along the last axis: each block's carry-in."""
    return _api.scan(_dense(t), op=op, axis=-1, exclusive=True, reverse=reverse, init=init)


def _block_scan(b, c, op, exclusive, reverse):
    """Scan of each row of block b along its last axis, starting from that row's carry c[..., 0]."""
    b, c = _dense(b), _dense(c)
    carry = c.reshape(-1)
    if b.ndim == 1:
        return _api.scan(b, op=op, exclusive=exclusive, reverse=reverse, init=carry[0])
    out = _arrays.empty(_arrays.adapt(b), b.shape, b.dtype).obj  # the block's own library and device
    if b.size == 0:
        return out
    m = b.shape[-1]
    rows, out_rows = b.reshape(-1, m), out.reshape(-1, m)
    for r in range(rows.shape[0]):  # one init per row: one call per row
        _api.scan(rows[r], op=op, exclusive=exclusive, reverse=reverse, init=carry[r], out=out_rows[r])
    return out


def _along_last(x: Any, op: str, axis: Optional[int], dtype: Any) -> Tuple[Any, int, Any, Any, Any]:
    """x as a Dask array with the scanned axis last (axis None: flattened), cast to dtype; returns it, the axis it
    came from, its dtype, the meta of results and the per-block totals along that axis (one per block)."""
    import dask.array as da

    x = da.asarray(x)
    if axis is None:
        x = x.ravel()
        ax = 0
    else:
        ax = axis + x.ndim if axis < 0 else axis
    if dtype is not None:
        x = x.astype(dtype)
    if ax != x.ndim - 1:
        x = da.moveaxis(x, ax, -1)
    dt = x.dtype
    nb = len(x.chunks[-1])
    meta = x._meta.astype(dt) if hasattr(x._meta, "astype") else np.empty((0,) * x.ndim, dt)
    totals = x.map_blocks(_block_totals, op, chunks=x.chunks[:-1] + ((1,) * nb,), dtype=dt, meta=meta)
    return x, ax, dt, meta, totals


def scan(x: Any, op: str = "sum", axis: Optional[int] = None, dtype: Any = None, exclusive: bool = False,
         reverse: bool = False, init: Any = None) -> Any:
    """pscan.scan of a Dask array, lazily: a Dask array of the same chunks (axis None: x flattened first).

    Arguments as for pscan.scan, less out. Each block runs pscan.scan on whatever device holds it.

    Example::

        >>> x = da.arange(10, chunks=4)
        >>> pscan.dask.scan(x).compute()
        array([ 0,  1,  3,  6, 10, 15, 21, 28, 36, 45])
    """
    import dask.array as da

    x, ax, dt, meta, totals = _along_last(x, op, axis, dtype)
    carries = totals.rechunk({x.ndim - 1: -1}).map_blocks(_carries, op, reverse, init, dtype=dt, meta=meta)
    carries = carries.rechunk({x.ndim - 1: 1})
    out = da.map_blocks(_block_scan, x, carries, op, exclusive, reverse, dtype=dt, chunks=x.chunks,
                        meta=meta)  # map_blocks pairs blocks by index (no rechunk to align them)
    if ax != x.ndim - 1:
        out = da.moveaxis(out, -1, ax)
    return out


def cumsum(x: Any, axis: Optional[int] = None, dtype: Any = None) -> Any:
    """dask.array.cumsum's result through pscan, dtype included (numpy's: small integers and bool into the 64-bit
    integer of their kind), lazily as scan.

    Example::

        >>> pscan.dask.cumsum(da.from_array(numpy.array([3, 1, 7, 0], numpy.int8), chunks=2)).compute()
        array([ 3,  4, 11, 11])
    """
    import dask.array as da

    x = da.asarray(x)
    return scan(x, "sum", axis=axis, dtype=dtype if dtype is not None else np.cumsum(np.zeros(1, x.dtype)).dtype)


def cumprod(x: Any, axis: Optional[int] = None, dtype: Any = None) -> Any:
    """dask.array.cumprod's result through pscan, dtype included (as cumsum)."""
    import dask.array as da

    x = da.asarray(x)
    return scan(x, "product", axis=axis, dtype=dtype if dtype is not None else np.cumprod(np.zeros(1, x.dtype)).dtype)


def reduce(x: Any, op: str = "sum", axis: Optional[int] = None, dtype: Any = None, init: Any = None) -> Any:
    """pscan.reduce of a Dask array, lazily: each block reduced with pscan, then the block results.

    Example::

        >>> int(pscan.dask.reduce(da.arange(10, chunks=4)).compute())  # a 0-d array
        45
    """
    x, _, dt, meta, totals = _along_last(x, op, axis, dtype)
    whole = totals.rechunk({x.ndim - 1: -1})
    out = whole.map_blocks(lambda t: _api.reduce(_dense(t), op=op, axis=-1, init=init), drop_axis=x.ndim - 1, dtype=dt,
                           meta=meta)
    return out if axis is not None else out.reshape(())
