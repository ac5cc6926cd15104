"""pscan from Python: scans, reductions, select, partition, sort and argsort, histogram, segmented scan, scan and
reduce by key, run-length encoding, expand, linear recurrences, Horner's rule and user operators on numpy, CuPy and
PyTorch arrays.

The C library (libpscan.so, built with this package) runs numpy arrays and CPU tensors on its CPU backend
(threads) and CUDA arrays on its CUDA backend, zero-copy, on the array's current stream. See docs/python.md.

Example::

    >>> import numpy, pscan
    >>> pscan.scan(numpy.array([3, 1, 7, 0, 4, 1, 6, 3]), exclusive=True)
    array([ 0,  3,  4, 11, 11, 15, 16, 22])
"""
from ._api import compact, cumprod, cumsum, partition, reduce, reduce_host, scan, scan_host, select, select_host
from ._prims import argsort, expand, histogram, run_length_encode, segmented_scan, sort
from ._bykey import reduce_by_key, scan_by_key
from ._recurrence import polyval, recurrence, recurrence2
from ._user import Operator
from ._context import clear_cache, device_name, set_cpu_threads
from ._errors import PscanError, PscanRuntimeError, PscanTypeError, PscanValueError
from ._lib import HAVE_CUDA, OP_NAMES, PREDS, ffi, lib

__version__ = ffi.string(lib.pscan_version_string()).decode()
#: The operators ("sum", "product", "min", "max", "and", "or", "xor") and predicates pscan knows.
OPS = tuple(OP_NAMES)
#: The predicates of select and partition.
PREDICATES = PREDS
#: numpy dtypes pscan computes on (the C library's type list).
from ._arrays import _TYPE_OF as _types  # noqa: E402

DTYPES = tuple(_types)

__all__ = ["scan", "cumsum", "cumprod", "reduce", "select", "compact", "partition", "sort", "argsort", "histogram", "segmented_scan",
           "run_length_encode", "expand", "scan_by_key", "reduce_by_key", "recurrence", "recurrence2", "polyval", "Operator",
           "scan_host", "reduce_host", "select_host", "PscanError", "PscanTypeError", "PscanValueError",
           "PscanRuntimeError", "clear_cache", "set_cpu_threads", "device_name", "HAVE_CUDA", "OPS", "PREDICATES",
           "DTYPES", "__version__"]
