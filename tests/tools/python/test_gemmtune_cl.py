#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/python/gemmtune_cl.py on the OpenCL device (PoCL in CI), checked against numpy: every
storage order and transpose with offsets and padded leading dimensions, double and half storage,
strided and offsets batches, the fused epilogue, and errors raised with the library's status.

Exits 77 (ctest: skipped) when pyopencl or numpy cannot be imported: that is a missing Python
package, not a missing device. No OpenCL device fails under GEMMTUNE_REQUIRE_DEVICE (set by
ctest and scripts/test.sh), else skips. GEMMTUNE_LIBRARY names the library to test.
"""
import os
import sys
import tempfile
import unittest

try:
    import numpy as np
    import pyopencl as cl
except ImportError as error:
    print(f"test_gemmtune_cl: skipped: {error} (Debian: apt-get install python3-pyopencl)",
          file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools", "python"))
import gemmtune_cl  # noqa: E402


def first_device():
    """The first GPU, else the first device of any type (the C++ tests' choice)."""
    for kind in (cl.device_type.GPU, cl.device_type.ALL):
        for platform in cl.get_platforms():
            try:
                devices = platform.get_devices(kind)
            except cl.Error:
                continue
            if devices:
                return devices[0]
    return None


DEVICE = first_device()
if DEVICE is None:
    required = os.environ.get("GEMMTUNE_REQUIRE_DEVICE", "") not in ("", "0")
    print("test_gemmtune_cl: no OpenCL device" + ("" if required else ": skipped"),
          file=sys.stderr)
    sys.exit(1 if required else 77)


class GemmtuneClTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctx = cl.Context([DEVICE])
        cls.queue = cl.CommandQueue(cls.ctx)
        cls.lib = gemmtune_cl.Gemmtune()

    def upload(self, array):
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
        return cl.Buffer(self.ctx, flags, hostbuf=np.ascontiguousarray(array))

    def download(self, buffer, like):
        out = np.empty_like(like)
        cl.enqueue_copy(self.queue, out, buffer)
        return out

    def check_gemm(self, precision, dtype, layout, ta, tb, m, n, k, beta, seed):
        """One GEMM on operands at offsets in buffers with padded leading dimensions; every
        element of C's buffer is compared: the matrix with numpy's result, the rest unchanged."""
        rng = np.random.default_rng(seed)
        row = layout == "row"

        def stored(offset, pad, rows, cols):
            # A buffer with a rows x cols matrix at `offset`; the matrix as a numpy view.
            lines, line = (rows, cols) if row else (cols, rows)
            ld = line + pad
            flat = rng.integers(-4, 5, offset + ld * lines).astype(dtype)
            view = flat[offset:offset + ld * lines].reshape(lines, ld)[:, :line]
            return flat, (view if row else view.T), ld

        a_flat, a, lda = stored(3, 1, *((k, m) if ta else (m, k)))
        b_flat, b, ldb = stored(1, 2, *((n, k) if tb else (k, n)))
        c_flat, c, ldc = stored(2, 3, m, n)
        if beta == 0:
            c[...] = np.nan  # beta 0 must not read C
        expected = c_flat.astype(np.float64)
        want = expected[2:2 + ldc * (m if row else n)].reshape(-1, ldc)[:, :(n if row else m)]
        want = want if row else want.T
        product = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
        want[...] = product + (beta * c.astype(np.float64) if beta else 0)
        da, db, dc = self.upload(a_flat), self.upload(b_flat), self.upload(c_flat)
        call = getattr(self.lib, precision + "gemm")
        call(self.queue, m, n, k, da, db, dc, 1.0, beta, layout=layout, trans_a=ta, trans_b=tb,
             a_offset=3, b_offset=1, c_offset=2, lda=lda, ldb=ldb, ldc=ldc).wait()
        got = self.download(dc, c_flat).astype(np.float64)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, equal_nan=True,
                                   err_msg=f"{precision}gemm {layout} {ta} {tb} {m}x{n}x{k}")

    def test_sgemm_every_order_and_transpose(self):
        seed = 1
        for m, n, k, beta in ((37, 21, 13, 0.0), (5, 33, 7, 0.5)):
            for layout in ("row", "col"):
                for ta in (False, True):
                    for tb in (False, True):
                        with self.subTest(layout=layout, ta=ta, tb=tb, m=m):
                            self.check_gemm("s", np.float32, layout, ta, tb, m, n, k, beta, seed)
                        seed += 1

    def test_dgemm_where_the_device_has_fp64(self):
        if "cl_khr_fp64" in DEVICE.extensions:
            self.check_gemm("d", np.float64, "col", True, False, 19, 11, 23, 0.5, 40)
        else:
            with self.assertRaises(gemmtune_cl.GemmtuneError) as caught:
                self.check_gemm("d", np.float64, "col", True, False, 19, 11, 23, 0.5, 40)
            self.assertEqual(caught.exception.status_name, "kUnsupported")

    def test_hgemm_half_storage(self):
        self.check_gemm("h", np.float16, "row", False, False, 17, 9, 11, 0.0, 50)
        self.check_gemm("h", np.float16, "col", True, True, 17, 9, 11, 0.5, 51)

    def test_strided_and_offsets_batches(self):
        rng = np.random.default_rng(60)
        m, n, k, count = 9, 7, 5, 3
        a = rng.integers(-4, 5, (count, m, k)).astype(np.float32)
        b = rng.integers(-4, 5, (count, k, n)).astype(np.float32)
        want = np.einsum("bik,bkn->bin", a, b)
        # Strided: GEMM i at i * stride, row-major and dense.
        dc = self.upload(np.full((count, m, n), np.nan, np.float32))
        self.lib.gemm_strided_batched("s", self.queue, m, n, k, self.upload(a), self.upload(b), dc,
                                      count, (m * k, k * n, m * n)).wait()
        np.testing.assert_array_equal(self.download(dc, want), want)
        # Offsets: the GEMMs in another order inside larger buffers, the gaps untouched.
        a_offsets, b_offsets, c_offsets = [100, 7, 52], [72, 0, 36], [130, 2, 66]
        a_flat = np.zeros(200, np.float32)
        b_flat = np.zeros(120, np.float32)
        c_flat = np.full(200, -1.0, np.float32)
        expected = c_flat.copy()
        for i in range(count):
            a_flat[a_offsets[i]:a_offsets[i] + m * k] = a[i].ravel()
            b_flat[b_offsets[i]:b_offsets[i] + k * n] = b[i].ravel()
            expected[c_offsets[i]:c_offsets[i] + m * n] = want[i].ravel()
        dc = self.upload(c_flat)
        self.lib.gemm_batched("s", self.queue, m, n, k, self.upload(a_flat), self.upload(b_flat),
                              dc, a_offsets, b_offsets, c_offsets).wait()
        np.testing.assert_array_equal(self.download(dc, c_flat), expected)

    def test_fused_bias_and_relu(self):
        rng = np.random.default_rng(70)
        m, n, k = 13, 10, 6
        a = rng.integers(-4, 5, (m, k)).astype(np.float32)
        b = rng.integers(-4, 5, (k, n)).astype(np.float32)
        bias = rng.integers(-8, 9, n).astype(np.float32)
        dc = self.upload(np.zeros((m, n), np.float32))
        self.lib.sgemm_epilogue(self.queue, m, n, k, self.upload(a), self.upload(b), dc,
                                bias=self.upload(bias), activation="relu").wait()
        want = np.maximum(a @ b + bias, 0)
        np.testing.assert_array_equal(self.download(dc, want), want)

    def test_errors_carry_the_library_status(self):
        buf = self.upload(np.zeros(16, np.float32))
        with self.assertRaises(gemmtune_cl.GemmtuneError) as caught:
            self.lib.sgemm(self.queue, 0, 4, 4, buf, buf, buf)
        self.assertEqual(caught.exception.status, -2)
        self.assertEqual(caught.exception.status_name, "kInvalidDimension")
        self.assertIn("m=0", str(caught.exception))
        with self.assertRaises(gemmtune_cl.GemmtuneError) as caught:
            self.lib.sgemm(self.queue, 8, 8, 8, buf, buf, buf)  # 64 elements in a buffer of 16
        self.assertEqual(caught.exception.status_name, "kBufferTooSmall")
        with tempfile.NamedTemporaryFile("w", suffix=".json") as bad:
            bad.write('{"not": "a database"}')
            bad.flush()
            with self.assertRaises(gemmtune_cl.GemmtuneError) as caught:
                self.lib.set_database(bad.name)
        self.assertEqual(caught.exception.status_name, "kInvalidDatabase")
        self.lib.set_database(None)
        with self.assertRaises(ValueError):
            self.lib.sgemm(self.queue, 4, 4, 4, buf, buf, buf, layout="diagonal")
        with self.assertRaises(TypeError):
            self.lib.sgemm(self.queue, 4, 4, 4, "not a buffer", buf, buf)


if __name__ == "__main__":
    unittest.main()
