# SPDX-License-Identifier: Apache-2.0
"""libgemmtune from Python: the C interface (gemmtune_c.h) through ctypes, on pyopencl objects.

Buffers are pyopencl.Buffer (or anything with an ``int_ptr``: the cl_mem), the queue a
pyopencl.CommandQueue (in-order). Offsets and leading dimensions count elements, as in the C and
C++ interfaces; a leading dimension left out is the dense one. Each call returns a
pyopencl.Event that completes with it, and raises GemmtuneError (with the status and the
library's message) when the library refuses or fails it.

    import numpy as np, pyopencl as cl
    import gemmtune_cl

    ctx = cl.create_some_context()
    queue = cl.CommandQueue(ctx)
    a = np.random.default_rng(1).standard_normal((64, 32), dtype=np.float32)
    b = np.random.default_rng(2).standard_normal((32, 48), dtype=np.float32)
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    dc = cl.Buffer(ctx, mf.READ_WRITE, 64 * 48 * 4)
    gemm = gemmtune_cl.Gemmtune()          # $GEMMTUNE_LIBRARY, else libgemmtune.so on the path
    gemm.sgemm(queue, 64, 48, 32, da, db, dc).wait()
    c = np.empty((64, 48), np.float32)
    cl.enqueue_copy(queue, c, dc)

The library is found at the path given, else $GEMMTUNE_LIBRARY, else by ctypes.util.find_library.
"""
import ctypes
import ctypes.util
import os

__all__ = ["Gemmtune", "GemmtuneError"]

_ROW_MAJOR, _COL_MAJOR = 101, 102
_NO_TRANS, _TRANS = 111, 112
_ACTIVATIONS = {None: 0, "none": 0, "relu": 1, "gelu": 2}

# Precision letter: the C type of alpha and beta, and the element size in bytes.
_SCALARS = {"s": (ctypes.c_float, 4), "d": (ctypes.c_double, 8), "h": (ctypes.c_uint16, 2)}


class GemmtuneError(RuntimeError):
    """A call libgemmtune refused or failed: ``status`` (negative) and ``status_name``."""

    def __init__(self, status, status_name, message):
        super().__init__(f"{status_name}: {message}")
        self.status = status
        self.status_name = status_name


def _handle(obj, what):
    """The OpenCL handle of a pyopencl object (its int_ptr), or an int given as is."""
    if isinstance(obj, int):
        return obj
    try:
        return obj.int_ptr
    except AttributeError:
        raise TypeError(f"{what} must be a pyopencl object or an OpenCL handle, not "
                        f"{type(obj).__name__}") from None


def _dense_ld(layout, transposed, rows, cols):
    """The dense leading dimension of op(X) = rows x cols as stored."""
    if transposed:
        rows, cols = cols, rows
    return cols if layout == _ROW_MAJOR else rows


class Gemmtune:
    """The library, loaded once; its methods are the C interface's calls."""

    def __init__(self, path=None):
        path = path or os.environ.get("GEMMTUNE_LIBRARY") or ctypes.util.find_library("gemmtune")
        if not path:
            raise OSError("libgemmtune not found: pass its path or set GEMMTUNE_LIBRARY")
        self._lib = ctypes.CDLL(path)
        lib = self._lib
        lib.gemmtune_last_error.restype = ctypes.c_char_p
        lib.gemmtune_status_name.restype = ctypes.c_char_p
        lib.gemmtune_status_name.argtypes = [ctypes.c_int]
        lib.gemmtune_set_database.argtypes = [ctypes.c_char_p]
        lib.gemmtune_float_to_half.restype = ctypes.c_uint16
        lib.gemmtune_float_to_half.argtypes = [ctypes.c_float]
        lib.gemmtune_half_to_float.restype = ctypes.c_float
        lib.gemmtune_half_to_float.argtypes = [ctypes.c_uint16]

    # ---- the calls ----

    def sgemm(self, queue, m, n, k, a, b, c, alpha=1.0, beta=0.0, **options):
        """C = alpha * op(A) * op(B) + beta * C in float32. Options: layout ("row" or "col"),
        trans_a, trans_b (bool), a_offset, b_offset, c_offset, lda, ldb, ldc."""
        return self._gemm("s", queue, m, n, k, a, b, c, alpha, beta, **options)

    def dgemm(self, queue, m, n, k, a, b, c, alpha=1.0, beta=0.0, **options):
        """sgemm in float64 (the device needs cl_khr_fp64)."""
        return self._gemm("d", queue, m, n, k, a, b, c, alpha, beta, **options)

    def hgemm(self, queue, m, n, k, a, b, c, alpha=1.0, beta=0.0, **options):
        """sgemm on half-precision storage (numpy.float16 buffers), float arithmetic."""
        return self._gemm("h", queue, m, n, k, a, b, c, alpha, beta, **options)

    def sgemm_epilogue(self, queue, m, n, k, a, b, c, alpha=1.0, beta=0.0, bias=None,
                       activation=None, **options):
        """sgemm, then per column of C the bias (n floats, or None) and the activation
        (None, "relu" or "gelu"), fused into one kernel."""
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be None, 'relu' or 'gelu', not {activation!r}")
        extra = [ctypes.c_void_p(_handle(bias, "bias") if bias is not None else None),
                 ctypes.c_int(_ACTIVATIONS[activation])]
        return self._gemm("s", queue, m, n, k, a, b, c, alpha, beta, name="sgemm_epilogue",
                          extra=extra, **options)

    def gemm_strided_batched(self, precision, queue, m, n, k, a, b, c, batch_count, strides,
                             alpha=1.0, beta=0.0, **options):
        """`batch_count` GEMMs, GEMM i at offset + i * stride of each operand; `strides` is
        (a_stride, b_stride, c_stride) in elements; precision "s", "d" or "h"."""
        return self._gemm(precision, queue, m, n, k, a, b, c, alpha, beta,
                          name=precision + "gemm_strided_batched", strides=strides,
                          batch_count=batch_count, **options)

    def gemm_batched(self, precision, queue, m, n, k, a, b, c, a_offsets, b_offsets, c_offsets,
                     alpha=1.0, beta=0.0, **options):
        """One GEMM per entry of the offset lists, GEMM i at a_offsets[i], b_offsets[i] and
        c_offsets[i] of the buffers; precision "s", "d" or "h"."""
        count = len(a_offsets)
        if not (len(b_offsets) == len(c_offsets) == count):
            raise ValueError("a_offsets, b_offsets and c_offsets must have the same length")
        arrays = [(ctypes.c_size_t * count)(*map(int, o)) for o in (a_offsets, b_offsets,
                                                                    c_offsets)]
        return self._gemm(precision, queue, m, n, k, a, b, c, alpha, beta,
                          name=precision + "gemm_batched", offset_arrays=arrays,
                          batch_count=count, **options)

    # ---- the rest of the interface ----

    def set_database(self, path):
        """The user database (a `gemmtune search --db` file); None or "" removes it."""
        self._check(self._lib.gemmtune_set_database(os.fsencode(path) if path else None))

    def clear_cache(self):
        self._lib.gemmtune_clear_cache()

    def last_error(self):
        return self._lib.gemmtune_last_error().decode()

    def float_to_half(self, value):
        return self._lib.gemmtune_float_to_half(value)

    def half_to_float(self, bits):
        return self._lib.gemmtune_half_to_float(bits)

    # ---- implementation ----

    def _check(self, status):
        if status != 0:
            name = self._lib.gemmtune_status_name(status).decode()
            raise GemmtuneError(status, name, self.last_error())

    def _scalar(self, precision, value):
        ctype = _SCALARS[precision][0]
        return ctype(self.float_to_half(value) if precision == "h" else value)

    def _gemm(self, precision, queue, m, n, k, a, b, c, alpha, beta, layout="row",
              trans_a=False, trans_b=False, a_offset=0, b_offset=0, c_offset=0, lda=None,
              ldb=None, ldc=None, name=None, extra=(), strides=None, offset_arrays=None,
              batch_count=None):
        import pyopencl as cl  # only when called: the module imports without it

        if precision not in _SCALARS:
            raise ValueError(f"precision must be 's', 'd' or 'h', not {precision!r}")
        if layout not in ("row", "col"):
            raise ValueError(f"layout must be 'row' or 'col', not {layout!r}")
        order = _ROW_MAJOR if layout == "row" else _COL_MAJOR
        lda = _dense_ld(order, trans_a, m, k) if lda is None else lda
        ldb = _dense_ld(order, trans_b, k, n) if ldb is None else ldb
        ldc = _dense_ld(order, False, m, n) if ldc is None else ldc
        size = ctypes.c_size_t
        mem = [ctypes.c_void_p(_handle(x, what)) for x, what in ((a, "a"), (b, "b"), (c, "c"))]
        if offset_arrays is not None:  # an offsets batch: per-GEMM offsets instead of one
            places = [[arr, size(ld)] for arr, ld in zip(offset_arrays, (lda, ldb, ldc))]
        else:
            places = [[size(off), size(ld)] for off, ld in
                      ((a_offset, lda), (b_offset, ldb), (c_offset, ldc))]
            if strides is not None:
                for place, stride in zip(places, strides):
                    place.append(size(stride))
        args = [ctypes.c_int(order), ctypes.c_int(_TRANS if trans_a else _NO_TRANS),
                ctypes.c_int(_TRANS if trans_b else _NO_TRANS), size(m), size(n), size(k),
                self._scalar(precision, alpha), mem[0], *places[0], mem[1], *places[1],
                self._scalar(precision, beta), mem[2], *places[2]]
        if batch_count is not None:
            args.append(size(batch_count))
        args.extend(extra)
        handle = ctypes.c_void_p(_handle(queue, "queue"))
        event = ctypes.c_void_p()
        args += [ctypes.byref(handle), ctypes.byref(event)]
        function = getattr(self._lib, "gemmtune_" + (name or precision + "gemm"))
        self._check(function(*args))
        return cl.Event.from_int_ptr(event.value, retain=False)
