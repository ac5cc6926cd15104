"""pscan's statuses as Python exceptions: one base class with the status, and a subclass per kind of fault."""
from __future__ import annotations

from ._lib import STATUS_CODES, ffi, lib


class PscanError(Exception):
    """A pscan call failed, or was refused before it reached the C library.

    ``status`` is the pscan status's name (``"PSCAN_ERROR_UNSUPPORTED_TYPE"``) and ``code`` its value in the
    C enum. Each error is also an instance of the built-in class that fits it, so ``except TypeError`` keeps
    working: :class:`PscanTypeError` (an element type or operator pscan lacks), :class:`PscanValueError`
    (a bad argument: shape, device, layout, overlap, size) and :class:`PscanRuntimeError` (the backend failed).

    Example::

        >>> try:
        ...     pscan.scan(numpy.zeros(4, numpy.float16))
        ... except pscan.PscanError as e:
        ...     print(e.status)
        PSCAN_ERROR_UNSUPPORTED_TYPE
    """

    def __init__(self, status: str, message: str = ""):
        self.status = status
        self.code = STATUS_CODES.get(status, -1)
        text = ffi.string(lib.pscan_status_string(self.code)).decode() if self.code >= 0 else status
        super().__init__(f"{status}: {message or text}")


class PscanTypeError(PscanError, TypeError):
    """An element type or operator pscan does not support (PSCAN_ERROR_UNSUPPORTED_TYPE / _OPERATOR)."""


class PscanValueError(PscanError, ValueError):
    """A bad argument: shape, axis, device, layout, overlap, size (PSCAN_ERROR_INVALID_VALUE, _OVERLAP, ...)."""


class PscanRuntimeError(PscanError, RuntimeError):
    """The backend failed or is missing (PSCAN_ERROR_BACKEND, _BACKEND_UNAVAILABLE, _OUT_OF_MEMORY, ...)."""


_CLASS_OF = {
    "PSCAN_ERROR_UNSUPPORTED_TYPE": PscanTypeError,
    "PSCAN_ERROR_UNSUPPORTED_OPERATOR": PscanTypeError,
    "PSCAN_ERROR_NULL_POINTER": PscanValueError,
    "PSCAN_ERROR_INVALID_VALUE": PscanValueError,
    "PSCAN_ERROR_OVERLAP": PscanValueError,
    "PSCAN_ERROR_TOO_LARGE": PscanValueError,
    "PSCAN_ERROR_TEMP_TOO_SMALL": PscanValueError,
}


def error(status: str, message: str = "") -> PscanError:
    """The exception for a status name, of the class that fits it."""
    return _CLASS_OF.get(status, PscanRuntimeError)(status, message)


def check(code: int, what: str = "") -> None:
    """Raises the exception for a status code returned by the C library; returns on PSCAN_SUCCESS."""
    if code:
        name = ffi.string(lib.pscan_status_name(code)).decode()
        raise error(name, f"{what}: {ffi.string(lib.pscan_status_string(code)).decode()}" if what else "")
