"""CPU tests of the fp8gemm package: no GPU and no torch needed.

Fake device tensors (fakes.py) carry distinct fake addresses: the library validates every
argument before it touches the driver, so invalid calls raise InvalidArgumentError with its
message and valid ones NoDriverError (or NoDeviceError) on a machine without a GPU.
Tests that depend on settings the library reads once per process run in a subprocess.

On a machine with a visible GPU, valid calls on fake addresses would launch kernels on them:
there this module's tests run in a child interpreter with every device hidden from the driver
(CUDA_VISIBLE_DEVICES set empty), where they stop with NoDeviceError (load_tests below).
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fp8gemm  # noqa: E402
import fakes  # noqa: E402
from fakes import bf16, block_scales, fp8, fp32, int32, per_token_scales  # noqa: E402


def k_grouped_operands():
    """Fake operands of a k-grouped weight gradient: 3 groups of 256 columns in A [256, 768]
    and B [256, 768], D [3 x 256, 256] fp32."""
    g, m, n, k = 3, 256, 256, 3 * 256
    return g, fp8(0, m, k), per_token_scales(1, m, k), fp8(2, n, k), per_token_scales(3, n, k), fp32(4, g * m, n)


NO_GPU = (fp8gemm.NoDriverError, fp8gemm.NoDeviceError)
# A device the driver shows this process (the GPU machine, unless it is hidden already).
DEVICE_VISIBLE = bool(fp8gemm.runtime_info().devices)


def load_tests(loader, tests, pattern):
    """With a visible device, one test that runs this module in a child with the devices hidden."""
    if not DEVICE_VISIBLE:
        return tests

    class DevicesHidden(unittest.TestCase):
        def test_cpu_tests_with_the_devices_hidden(self):
            here = os.path.dirname(os.path.abspath(__file__))
            env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
            r = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", here, "-p",
                                os.path.basename(__file__)], env=env, capture_output=True, text=True,
                               timeout=900)
            sys.stderr.write(r.stderr)
            self.assertEqual(r.returncode, 0, "the CPU tests failed with the devices hidden (above)")

    return loader.loadTestsFromTestCase(DevicesHidden)


def run_python(code, **env):
    """Runs code in a fresh interpreter with the extra environment; returns the result."""
    full_env = dict(os.environ)
    full_env.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                          capture_output=True, text=True, timeout=600)


def dense(m, n, k):
    """Valid gemm_fp8_nt operands for [m, k] x [n, k]^T."""
    return (fp8(0, m, k), per_token_scales(1, m, k), fp8(2, n, k), block_scales(3, n, k), bf16(4, m, n))


class ImportTest(unittest.TestCase):
    def test_imports_without_torch(self):
        r = run_python("import sys, fp8gemm; print('torch' in sys.modules, fp8gemm.__version__)")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split()[0], "False")

    def test_version(self):
        major, minor, patch = fp8gemm.version()
        self.assertEqual(fp8gemm.__version__, f"{major}.{minor}.{patch}")
        self.assertEqual(fp8gemm.version_string(), fp8gemm.__version__)

    def test_missing_library_is_a_clear_import_error(self):
        missing = os.path.join(tempfile.gettempdir(), "no-such-dir", "libfp8gemm.so.0")
        r = run_python("import fp8gemm", FP8GEMM_LIBRARY=missing)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ImportError", r.stderr)
        self.assertIn(missing, r.stderr)
        self.assertIn("FP8GEMM_LIBRARY", r.stderr)

    def test_library_without_the_api_is_an_import_error(self):
        # A real shared object that lacks the fp8gemm_* symbols.
        r = run_python("import fp8gemm", FP8GEMM_LIBRARY="libc.so.6")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("has no symbol fp8gemm_", r.stderr)


class ErrorsTest(unittest.TestCase):
    def test_one_class_per_status(self):
        classes = {
            1: fp8gemm.InvalidArgumentError, 2: fp8gemm.NoDriverError, 3: fp8gemm.NoDeviceError,
            4: fp8gemm.UnsupportedDeviceError, 5: fp8gemm.CompileFailedError, 6: fp8gemm.CudaError,
            7: fp8gemm.InternalError, 8: fp8gemm.NotCachedError, 9: fp8gemm.OutOfMemoryError,
            10: fp8gemm.BufferTooSmallError,
        }
        from fp8gemm import _errors, _native
        for code, cls in classes.items():
            self.assertIs(_errors.ERROR_CLASSES[code], cls)
            self.assertTrue(issubclass(cls, fp8gemm.Error))
            self.assertNotEqual(_native.status_string(code), "unknown status")
        self.assertEqual(_native.status_string(11), "unknown status")
        for code in (2**32, 2**40, -2**40):  # not truncated into a known status (2**32 would be 0)
            self.assertEqual(_native.status_string(code), "unknown status")
        self.assertTrue(issubclass(fp8gemm.InvalidArgumentError, ValueError))

    def test_library_message_and_code(self):
        args = dense(128, 256, 250)  # K not a multiple of 16
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt(*args)
        e = cm.exception
        self.assertEqual(e.code, 1)
        self.assertIn("K = 250 is not a multiple of 16", e.message)
        self.assertEqual(str(e), e.message)
        self.assertIsInstance(e, ValueError)


class GemmTest(unittest.TestCase):
    def test_valid_call_reaches_the_driver(self):
        with self.assertRaises(NO_GPU):
            fp8gemm.gemm_fp8_nt(*dense(128, 256, 256))

    def test_options_and_config(self):
        with self.assertRaises(NO_GPU):
            fp8gemm.gemm_fp8_nt(*dense(128, 256, 256), b_constant=True)
        with self.assertRaises(NO_GPU):
            fp8gemm.gemm_fp8_nt(*dense(128, 256, 256), config=fp8gemm.KernelConfig(block_n=128))
        with self.assertRaises(fp8gemm.InvalidArgumentError):
            fp8gemm.gemm_fp8_nt(*dense(128, 256, 256), config={"block_m": 100})
        with self.assertRaises(fp8gemm.InvalidArgumentError):
            fp8gemm.gemm_fp8_nt(*dense(128, 256, 256), config=fp8gemm.KernelConfig(), b_constant=True)
        # Fields beyond a C int would reach the library truncated (2**32 + 128 as 128).
        for bad, word in ((fp8gemm.KernelConfig(block_n=2**32 + 128), "block_n"), ({"stages": 4.0}, "stages"),
                          ({"tma_store": -2**31 - 1}, "tma_store")):
            with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
                fp8gemm.gemm_fp8_nt(*dense(128, 256, 256), config=bad)
            self.assertIn(word, cm.exception.message)

    def test_library_checks_scale_layout(self):
        a, sa, b, sb, d = dense(128, 256, 256)
        k_major = fp32(1, 128, 2)  # per-token scales stored [M][blocks]: rejected by the library
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt(a, k_major, b, sb, d)
        self.assertIn("a_scales", cm.exception.message)

    def test_python_checks(self):
        a, sa, b, sb, d = dense(128, 256, 256)
        cases = [
            ((fp32(0, 128, 256), sa, b, sb, d), "a must be float8_e4m3fn"),
            ((a, sa, b, sb, fp32(4, 128, 256)), "out must be bfloat16"),
            ((fakes.CudaArray(fakes.address(0), (128 * 256,), "|u1"), sa, b, sb, d), "a must be 2-D"),
            ((fakes.CudaArray(fakes.address(0), (128, 256), "|u1", (1, 128)), sa, b, sb, d),
             "a must have contiguous rows"),
            ((a, sa, b, sb, object()), "object is not a tensor"),
        ]
        for args, text in cases:
            with self.subTest(text=text):
                with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
                    fp8gemm.gemm_fp8_nt(*args)
                self.assertIn(text, str(cm.exception))

    def test_out_is_required_without_torch(self):
        a, sa, b, sb, _ = dense(128, 256, 256)
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt(a, sa, b, sb)
        self.assertIn("pass out", str(cm.exception))

    def test_operands_must_be_on_a_cuda_device(self):
        a, sa, b, sb, d = dense(128, 256, 256)
        host = fakes.DLPackArray(fakes.address(0), (128, 256), fakes.KDL_FLOAT8_E4M3FN, 8, device_type=1)
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt(host, sa, b, sb, d)
        self.assertIn("a must be on a CUDA device", str(cm.exception))

    def test_operands_must_share_a_device(self):
        a0 = fakes.DLPackArray(fakes.address(0), (128, 256), fakes.KDL_FLOAT8_E4M3FN, 8, device_id=0)
        b1 = fakes.DLPackArray(fakes.address(2), (256, 256), fakes.KDL_FLOAT8_E4M3FN, 8, device_id=1)
        _, sa, _, sb, d = dense(128, 256, 256)
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt(a0, sa, b1, sb, d)
        self.assertIn("cuda:1", str(cm.exception))

    def test_streams(self):
        with self.assertRaises(NO_GPU):
            fp8gemm.gemm_fp8_nt(*dense(128, 256, 256), stream=0x1234)
        with self.assertRaises(fp8gemm.InvalidArgumentError):
            fp8gemm.gemm_fp8_nt(*dense(128, 256, 256), stream="default")

    def test_wgrad(self):
        m, n, k = 256, 512, 1024
        a, sa = fp8(0, m, k), per_token_scales(1, m, k)
        b, sb = fp8(2, n, k), per_token_scales(3, n, k)
        out = fp32(4, m, n)
        for c in (None, out, fp32(5, m, n)):
            with self.assertRaises(NO_GPU):
                fp8gemm.gemm_fp8_nt_wgrad(a, sa, b, sb, out, c)
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt_wgrad(a, sa, b, block_scales(3, n, k), out)
        self.assertIn("b_scales", cm.exception.message)
        # An explicit config: checked by the library before any device work.
        with self.assertRaises(NO_GPU):
            fp8gemm.gemm_fp8_nt_wgrad(a, sa, b, sb, out, out, config=fp8gemm.KernelConfig(block_m=192, block_n=96))
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt_wgrad(a, sa, b, sb, out, config={"multicast": 1})
        self.assertIn("gemm_fp8_nt_wgrad: config", cm.exception.message)

    def test_grouped_contiguous(self):
        g, m, n, k = 4, 512, 256, 256
        a, sa = fp8(0, m, k), per_token_scales(1, m, k)
        b, sb = fp8(2, g * n, k), fp32(3, g * 2, 2)
        with self.assertRaises(NO_GPU):
            fp8gemm.gemm_fp8_nt_grouped_contiguous(a, sa, b, sb, bf16(4, m, n), int32(5, m))
        # [G, N, K] stacks are the same matrices.
        b3 = fakes.CudaArray(fakes.address(2), (g, n, k), "|u1")
        sb3 = fakes.CudaArray(fakes.address(3), (g, 2, 2), "<f4")
        with self.assertRaises(NO_GPU):
            fp8gemm.gemm_fp8_nt_grouped_contiguous(a, sa, b3, sb3, bf16(4, m, n), int32(5, m))
        # M must be a multiple of the segment rows: the library's rule and message.
        a_bad, sa_bad = fp8(0, m - 64, k), per_token_scales(1, m - 64, k)
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt_grouped_contiguous(a_bad, sa_bad, b, sb, bf16(4, m - 64, n), int32(5, m - 64))
        self.assertIn("128", cm.exception.message)
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt_grouped_contiguous(a, sa, b, sb, bf16(4, m, n), fp32(5, m, 1))
        self.assertIn("m_indices must be int32", str(cm.exception))
        # One expert index per row of a: a shorter vector would be read past its end.
        for entries in (0, 1, m - 1, m + 1):
            with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
                fp8gemm.gemm_fp8_nt_grouped_contiguous(a, sa, b, sb, bf16(4, m, n), int32(5, entries))
            self.assertIn(f"m_indices has {entries} entries but a has {m} rows", cm.exception.message)
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt_grouped_contiguous(a, sa, b, sb, bf16(4, m, n), int32(5, m), groups=2.7)
        self.assertIn("groups must be an integer", cm.exception.message)

    def test_grouped_masked(self):
        g, max_m, n, k = 4, 64, 256, 512
        a, sa = fp8(0, g * max_m, k), per_token_scales(1, g * max_m, k)
        b, sb = fp8(2, g * n, k), fp32(3, g * 2, 4)
        out = bf16(4, g * max_m, n)
        with self.assertRaises(NO_GPU):
            fp8gemm.gemm_fp8_nt_grouped_masked(a, sa, b, sb, out, int32(5, g), 32)
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt_grouped_masked(a, sa, b, sb, out, int32(5, g), max_m + 1)
        self.assertIn("expected_m", cm.exception.message)
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt_grouped_masked(a, sa, b, sb, out, int32(5, g), 31.5)
        self.assertIn("expected_m must be an integer", cm.exception.message)

    def test_wgrad_k_grouped(self):
        g, a, sa, b, sb, out = k_grouped_operands()
        with self.assertRaises(NO_GPU):
            fp8gemm.gemm_fp8_nt_wgrad_k_grouped(a, sa, b, sb, out, int32(5, g))
        with self.assertRaises(NO_GPU):
            fp8gemm.gemm_fp8_nt_wgrad_k_grouped(a, sa, b, sb, out, int32(5, g), c=out)
        with self.assertRaises(fp8gemm.InvalidArgumentError):
            fp8gemm.gemm_fp8_nt_wgrad_k_grouped(a, sa, b, sb, fp32(4, 256, 256), int32(5, g))  # one group's rows

    # The grouped GEMMs with an explicit config, as gemm_fp8_nt_wgrad's above: a legal one gets
    # as far as the driver; an illegal one is the library's InvalidArgumentError naming the
    # function and the rule, before any device is needed; a config of another type TypeError.
    def _check_configs(self, call, good, bad):
        for config in good:
            with self.subTest(config=config), self.assertRaises(NO_GPU):
                call(config)
        for config, words in bad:
            with self.subTest(config=config):
                with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
                    call(config)
                for word in words:
                    self.assertIn(word, cm.exception.message)
        for config in ((128, 128, 4), "128x128", 128):
            with self.subTest(config=config), self.assertRaises(TypeError):
                call(config)
        # Fields beyond a C int are refused in Python (they would reach the library truncated).
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            call(fp8gemm.KernelConfig(block_n=2**32 + 128))
        self.assertIn("block_n", cm.exception.message)
        with self.assertRaises(TypeError):
            call({"block_k": 128})  # not a KernelConfig field

    def test_grouped_contiguous_config(self):
        g, m, n, k = 4, 512, 256, 256
        a, sa = fp8(0, m, k), per_token_scales(1, m, k)
        b, sb = fp8(2, g * n, k), fp32(3, g * 2, 2)
        fn = "gemm_fp8_nt_grouped_contiguous"
        self._check_configs(
            lambda config: fp8gemm.gemm_fp8_nt_grouped_contiguous(a, sa, b, sb, bf16(4, m, n), int32(5, m),
                                                                  config=config),
            good=(fp8gemm.KernelConfig(block_m=128, block_n=128, stages=4), {"block_m": 64, "block_n": 192},
                  fp8gemm.KernelConfig()),
            bad=((fp8gemm.KernelConfig(block_m=256), (f"{fn}: config", "block_m=256 must be 64 or 128")),
                 ({"block_m": 192, "block_n": 96}, (f"{fn}: config", "block_m=192 must be 64 or 128")),
                 (fp8gemm.KernelConfig(multicast=1), (f"{fn}: config", "only on B (multicast 0 or 2)")),
                 ({"split_k": 2}, (f"{fn}: config", "has no split-K")),
                 ({"block_n": 120}, (f"{fn}: config", "block_n=120")),
                 ({"stages": 1}, (f"{fn}: config", "stages=1")),
                 ({"tma_store": 3}, (f"{fn}: config", "tma_store = 3"))))
        # The operands are still checked first, with their own message.
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt_grouped_contiguous(a, sa, b, sb, bf16(4, m, n), int32(5, m - 1),
                                                   config=fp8gemm.KernelConfig())
        self.assertIn("m_indices has", cm.exception.message)

    def test_grouped_masked_config(self):
        g, max_m, n, k = 4, 64, 256, 512
        a, sa = fp8(0, g * max_m, k), per_token_scales(1, g * max_m, k)
        b, sb = fp8(2, g * n, k), fp32(3, g * 2, 4)
        fn = "gemm_fp8_nt_grouped_masked"
        self._check_configs(
            lambda config: fp8gemm.gemm_fp8_nt_grouped_masked(a, sa, b, sb, bf16(4, g * max_m, n), int32(5, g), 32,
                                                              config=config),
            good=(fp8gemm.KernelConfig(block_m=64, block_n=128, stages=4), {"block_m": 128},
                  fp8gemm.KernelConfig(block_m=256, block_n=128, stages=3), {"multicast": 2}),
            bad=((fp8gemm.KernelConfig(block_m=192, block_n=96),
                  (f"{fn}: config", "block_m=192 must be 64, 128 or 256")),
                 ({"multicast": 1}, (f"{fn}: config", "only on B (multicast 0 or 2, tiles of up to 128 rows)")),
                 (fp8gemm.KernelConfig(block_m=256, block_n=128, stages=3, multicast=2),
                  (f"{fn}: config", "only on B (multicast 0 or 2, tiles of up to 128 rows)")),
                 (fp8gemm.KernelConfig(split_k=2), (f"{fn}: config", "and has no split-K")),
                 ({"block_m": 256, "block_n": 192}, (f"{fn}: config", "block_n=192")),
                 (fp8gemm.KernelConfig(block_m=256, block_n=128, stages=4), (f"{fn}: config", "shared memory"))))
        # expected_m is still the library's to check, with or without a config.
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt_grouped_masked(a, sa, b, sb, bf16(4, g * max_m, n), int32(5, g), max_m + 1,
                                               config=fp8gemm.KernelConfig())
        self.assertIn("expected_m", cm.exception.message)

    def test_wgrad_k_grouped_config(self):
        g, a, sa, b, sb, out = k_grouped_operands()
        fn = "gemm_fp8_nt_wgrad_k_grouped"
        rule = "no multicast, TMA-store epilogue or split-K"
        for c in (None, out):
            self._check_configs(
                lambda config: fp8gemm.gemm_fp8_nt_wgrad_k_grouped(a, sa, b, sb, out, int32(5, g), c, config=config),
                good=(fp8gemm.KernelConfig(block_m=128, block_n=128, stages=4), {"block_m": 192, "block_n": 96},
                      fp8gemm.KernelConfig(block_m=64, block_n=128, stages=6, group_n=16)),
                bad=((fp8gemm.KernelConfig(block_m=256, stages=3),
                      (f"{fn}: config", "block_m=256 must be 64, 128 or 192")),
                     ({"block_n": 208}, (f"{fn}: config", "block_n=208 must be at most 192")),
                     (fp8gemm.KernelConfig(multicast=1), (f"{fn}: config", rule)),
                     ({"tma_store": 1}, (f"{fn}: config", rule)),
                     ({"split_k": 2}, (f"{fn}: config", rule))))


class QuantizeTest(unittest.TestCase):
    def test_quantizers(self):
        m, k = 256, 512
        x = bf16(0, m, k)
        with self.assertRaises(NO_GPU):
            fp8gemm.quantize_per_token(x, fp8(1, m, k), per_token_scales(2, m, k))
        with self.assertRaises(NO_GPU):
            fp8gemm.quantize_per_block(x, fp8(1, m, k), block_scales(2, m, k), pow2_scales=True)
        with self.assertRaises(NO_GPU):
            fp8gemm.quantize_transposed_per_token(x, fp8(1, k, m), per_token_scales(2, k, m))
        with self.assertRaises(NO_GPU):
            fp8gemm.transpose_fp8_block_scaled(fp8(0, m, k), block_scales(1, m, k), fp8(2, k, m),
                                               block_scales(3, k, m))
        with self.assertRaises(NO_GPU):
            fp8gemm.convert_scales(fp32(0, m, 4), per_token_scales(1, m, k))

    def test_quantizer_errors(self):
        m, k = 256, 512
        with self.assertRaises(fp8gemm.InvalidArgumentError):  # q of the wrong shape
            fp8gemm.quantize_per_token(bf16(0, m, k), fp8(1, m, k - 128), per_token_scales(2, m, k))
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.quantize_per_token(bf16(0, m, k))
        self.assertIn("pass out", str(cm.exception))

    def test_layouts(self):
        self.assertEqual(fp8gemm.per_token_scale_shape(5, 300), ((5, 3), (1, 8)))
        self.assertEqual(fp8gemm.block_scale_shape(300, 128), ((3, 1), (1, 1)))
        self.assertEqual(fp8gemm.block_scale_shape(256, 1024), ((2, 8), (8, 1)))
        self.assertEqual(fp8gemm.k_grouped_columns(0), 0)
        self.assertEqual(fp8gemm.k_grouped_columns(129), 256)
        self.assertEqual(fp8gemm.scale_blocks(128), 1)


class TensorInfoTest(unittest.TestCase):
    def test_cuda_array_interface(self):
        info = fp8gemm.tensor_info(fakes.CudaArray(1 << 30, (3, 5), "<f4"))
        self.assertEqual((info.data_ptr, info.shape, info.strides, info.dtype, info.device_type),
                         (1 << 30, (3, 5), (5, 1), "fp32", "cuda"))
        info = fp8gemm.tensor_info(fakes.CudaArray(1 << 30, (3, 5), "<f4", (4, 12)))
        self.assertEqual(info.strides, (1, 3))

    def test_dlpack(self):
        x = fakes.DLPackArray(1 << 32, (4, 256), fakes.KDL_FLOAT8_E4M3FN, 8, device_id=3,
                              strides=(512, 1), byte_offset=1024)
        info = fp8gemm.tensor_info(x, stream=0x77)
        self.assertEqual(info.data_ptr, (1 << 32) + 1024)
        self.assertEqual(info.shape, (4, 256))
        self.assertEqual(info.strides, (512, 1))
        self.assertEqual(info.dtype, "e4m3")
        self.assertEqual((info.device_type, info.device_index), ("cuda", 3))
        self.assertIsNotNone(info.owner)  # the capsule, kept for the call
        self.assertEqual(x.streams, [0x77])
        fp8gemm.tensor_info(x)
        self.assertEqual(x.streams[-1], 1)  # the protocol's legacy default stream

    def test_dlpack_compact_and_versioned(self):
        for versioned in (False, True):
            with self.subTest(versioned=versioned):
                x = fakes.DLPackArray(1 << 32, (2, 3, 4), fakes.KDL_BFLOAT, 16, versioned=versioned)
                info = fp8gemm.tensor_info(x)
                self.assertEqual((info.shape, info.strides, info.dtype), ((2, 3, 4), (12, 4, 1), "bf16"))
        for code, bits, name in ((fakes.KDL_FLOAT, 32, "fp32"), (fakes.KDL_INT, 32, "int32"),
                                 (fakes.KDL_UINT, 8, "u8")):
            self.assertEqual(fp8gemm.tensor_info(fakes.DLPackArray(16, (1,), code, bits)).dtype, name)

    def test_dlpack_operands_in_a_gemm(self):
        m, n, k = 128, 256, 250
        a = fakes.DLPackArray(fakes.address(0), (m, k), fakes.KDL_FLOAT8_E4M3FN, 8)
        _, sa, b, sb, d = dense(m, n, k)
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.gemm_fp8_nt(a, sa, b, sb, d)
        self.assertIn("K = 250", cm.exception.message)


class ReadOnlyOutputTest(unittest.TestCase):
    """Memory its producer marked read-only (array interface data[1], DLPack 1.x flag bit 0)
    is never written: an output there is refused before the library is called; inputs there
    are fine."""

    def test_read_only_is_reported(self):
        self.assertFalse(fp8gemm.tensor_info(fakes.CudaArray(1 << 30, (3, 5), "<f4")).read_only)
        self.assertTrue(fp8gemm.tensor_info(fakes.CudaArray(1 << 30, (3, 5), "<f4", read_only=True)).read_only)
        for versioned, flags, expected in ((False, 0, False), (True, 0, False), (True, 1, True), (True, 2, False)):
            x = fakes.DLPackArray(16, (4,), fakes.KDL_FLOAT, 32, versioned=versioned, flags=flags)
            self.assertEqual(fp8gemm.tensor_info(x).read_only, expected, (versioned, flags))

    def test_read_only_outputs_are_refused(self):
        def read_only(x):
            ptr, _ = x.__cuda_array_interface__["data"]
            x.__cuda_array_interface__["data"] = (ptr, True)
            return x
        m, n, k = 128, 256, 256
        a, sa, b, sb, _ = dense(m, n, k)
        ro_bf16 = fakes.CudaArray(fakes.address(4), (m, n), "<u2", read_only=True)
        ro_fp32 = fakes.CudaArray(fakes.address(4), (m, n), "<f4", read_only=True)
        ro_dlpack = fakes.DLPackArray(fakes.address(4), (m, n), fakes.KDL_BFLOAT, 16, versioned=True, flags=1)
        x = bf16(0, m, k)
        calls = {
            "gemm_fp8_nt": lambda: fp8gemm.gemm_fp8_nt(a, sa, b, sb, ro_bf16),
            "gemm_fp8_nt (DLPack)": lambda: fp8gemm.gemm_fp8_nt(a, sa, b, sb, ro_dlpack),
            "gemm_fp8_nt_wgrad": lambda: fp8gemm.gemm_fp8_nt_wgrad(
                fp8(0, m, k), per_token_scales(1, m, k), fp8(2, n, k), per_token_scales(3, n, k), ro_fp32),
            "quantize_per_token out": lambda: fp8gemm.quantize_per_token(
                x, fakes.CudaArray(fakes.address(1), (m, k), "|u1", read_only=True), per_token_scales(2, m, k)),
            "quantize_per_token scales": lambda: fp8gemm.quantize_per_token(
                x, fp8(1, m, k), read_only(per_token_scales(2, m, k))),
            "convert_scales": lambda: fp8gemm.convert_scales(
                fp32(0, m, 4), fakes.CudaArray(fakes.address(1), (m, 4), "<f4", (4, m * 4), read_only=True)),
        }
        for name, call in calls.items():
            with self.subTest(name):
                with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
                    call()
                self.assertIn("is read-only memory", cm.exception.message)
                self.assertIn("pass a writable tensor", cm.exception.message)

    def test_read_only_inputs_are_read(self):
        m, n, k = 128, 256, 256
        a = fakes.CudaArray(fakes.address(0), (m, k), "|u1", read_only=True)
        b = fakes.DLPackArray(fakes.address(2), (n, k), fakes.KDL_FLOAT8_E4M3FN, 8, versioned=True, flags=1)
        _, sa, _, sb, d = dense(m, n, k)
        with self.assertRaises(NO_GPU):
            fp8gemm.gemm_fp8_nt(a, sa, b, sb, d)

    def test_read_only_flag_must_be_a_bool(self):
        for flag in ("yes", 2, None, 1.0):
            with self.subTest(flag=flag):
                x = fp8(0, 128, 128)
                x.__cuda_array_interface__["data"] = (fakes.address(0), flag)
                with self.assertRaises(fp8gemm.InvalidArgumentError):
                    fp8gemm.gemm_fp8_nt(x, *dense(128, 128, 128)[1:])


class AdminTest(unittest.TestCase):
    def test_settings_round_trip(self):
        before_mode, before_only = fp8gemm.tuning_mode(), fp8gemm.cache_only()
        try:
            for given, expected in ((fp8gemm.TuningMode.OFF, fp8gemm.TuningMode.OFF),
                                    ("on", fp8gemm.TuningMode.ON), (1, fp8gemm.TuningMode.CACHED)):
                fp8gemm.set_tuning_mode(given)
                self.assertEqual(fp8gemm.tuning_mode(), expected)
            for flag in (True, False):
                fp8gemm.set_cache_only(flag)
                self.assertIs(fp8gemm.cache_only(), flag)
            with self.assertRaises(fp8gemm.InvalidArgumentError):
                fp8gemm.set_tuning_mode("sometimes")
            with self.assertRaises(fp8gemm.InvalidArgumentError):  # the library's own check
                fp8gemm._native.set_tuning_mode(7)
            for mode in (2**32 + 2, -2**32):  # not truncated into a known mode (2 = on, 0 = off)
                with self.assertRaises(fp8gemm.InvalidArgumentError):
                    fp8gemm._native.set_tuning_mode(mode)
            info = {s.name: s for s in fp8gemm.runtime_info().settings}
            self.assertEqual(info["FP8GEMM_TUNING"].value, "cached")
        finally:
            fp8gemm.set_tuning_mode(before_mode)
            fp8gemm.set_cache_only(before_only)

    def test_runtime_info_and_stats(self):
        info = fp8gemm.runtime_info()
        self.assertEqual(info.library_version, fp8gemm.__version__)
        self.assertEqual(info.driver_version, 0)
        self.assertEqual(info.devices, [])
        names = [s.name for s in info.settings]
        self.assertIn("FP8GEMM_CACHE_DIR", names)
        self.assertIn("FP8GEMM_TUNING", names)
        stats = fp8gemm.stats()
        self.assertGreaterEqual(stats.gemm_calls, 0)
        self.assertEqual(stats.devices, ())  # no device has run anything

    def test_shapes(self):
        s = fp8gemm.GemmShape
        self.assertEqual(fp8gemm._admin.as_shape((1, 2, 3)), s(1, 2, 3))
        self.assertEqual(fp8gemm._admin.as_shape((1, 2, 3, "grouped_masked", 4)),
                         s(1, 2, 3, fp8gemm.GemmKind.GROUPED_MASKED, 4))
        self.assertEqual(fp8gemm._admin.as_shape({"m": 1, "n": 2, "k": 3, "kind": 1}),
                         s(1, 2, 3, fp8gemm.GemmKind.WEIGHT_GRADIENT))
        for bad in ((1, 2), {"m": 1, "n": 2}, {"m": 1, "n": 2, "k": 3, "x": 0}, (1, 2, 3, "diagonal")):
            with self.subTest(bad=bad), self.assertRaises(fp8gemm.InvalidArgumentError):
                fp8gemm._admin.as_shape(bad)
        with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
            fp8gemm.kernel_name((0, 256, 256))
        self.assertIn("kernel_name", cm.exception.message)
        with self.assertRaises(fp8gemm.InvalidArgumentError):
            fp8gemm.prewarm([(128, 256, 250)])

    def test_tune_needs_a_gpu(self):
        with self.assertRaises(NO_GPU):
            fp8gemm.tune([(128, 256, 256)], candidates=2)

    def test_prewarm_fills_the_cache_dir(self):
        # The library reads its cache directory once per process: a fresh one per test.
        with tempfile.TemporaryDirectory() as cache:
            r = run_python("""
                import fp8gemm
                report = fp8gemm.prewarm([(128, 256, 256), {"m": 64, "n": 512, "k": 512}], jobs=2)
                assert isinstance(report, fp8gemm.PrewarmReport), report
                assert report.shapes == 2 and report.kernels >= 1, report
                assert report.compiled == report.kernels and report.not_saved == 0, report
                name = fp8gemm.kernel_name((128, 256, 256))
                assert name in report.kernel_names, (name, report)
                files = fp8gemm.cached_kernels()
                assert {f.kernel for f in files} >= set(report.kernel_names), files
                assert all(f.category == "entry" and not f.stale for f in files), files
                again = fp8gemm.prewarm([(128, 256, 256)])
                assert again.compiled == 0 and again.from_memory + again.from_disk == again.kernels, again
                assert fp8gemm.clear_stale_cache().kernels == 0
                cleared = fp8gemm.clear_cache()
                assert cleared.kernels == len(files) and not cleared.failed, cleared
                assert fp8gemm.cached_kernels() == []
                print("ok", len(files))
            """, FP8GEMM_CACHE_DIR=cache)
            self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
            self.assertTrue(r.stdout.startswith("ok"), r.stdout)

    def test_cached_tuning_databases_count_entries_this_build_does_not_use(self):
        # A database of this library and NVRTC whose entry predates the record of what it was
        # timed against: listed as in use ("ok"), its entry counted as not used.
        with tempfile.TemporaryDirectory() as cache:
            r = run_python("""
                import json, os, fp8gemm
                info = fp8gemm.runtime_info()
                os.makedirs(os.path.join(info.cache_dir, "tuning"))
                spec = {"kind": "gemm1d2d", "n": 7168, "k": 2048, "block_m": 256, "block_n": 128, "stages": 3,
                        "group_n": 8, "multicast": 0, "tma_store": 0, "split_k": 1}
                db = {"format": 3, "metadata": {"gpu": "Test GPU", "sms": 132, "driver": 13000,
                                                "nvrtc": info.nvrtc_version, "library": info.library_version},
                      "entries": {"gemm1d2d:n7168:k2048:m4096": {"spec": spec, "m": 4096, "us": 100.0,
                                  "heuristic": "x", "heuristic_us": 110.0, "k": 2048, "groups": 1}}}
                with open(os.path.join(info.cache_dir, "tuning", "Test_GPU-132sm.json"), "w") as f:
                    json.dump(db, f)
                (t,) = fp8gemm.cached_tuning_databases()
                assert t.status == "ok" and t.problems == 1 and t.problems_stale == 1, t
                print("ok")
            """, FP8GEMM_CACHE_DIR=cache)
            self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
            self.assertTrue(r.stdout.startswith("ok"), r.stdout)


class TorchPathTest(unittest.TestCase):
    """The torch code paths (allocation, current stream), with a stand-in torch module."""

    def setUp(self):
        import fake_torch
        self.torch = fake_torch
        self.calls = []
        from fp8gemm import _ops, _quantize

        class Recorder:
            def __getattr__(_, name):
                if name == "gemm_fp8_nt_torch":
                    return lambda *args: None  # "not handled": the Python path runs
                return lambda *args: self.calls.append((name, args))

        self.patches = [(_ops, _ops._native), (_quantize, _quantize._native)]
        for module, _ in self.patches:
            module._native = Recorder()

    def tearDown(self):
        for module, native in self.patches:
            module._native = native

    def cuda(self, shape, dtype, index=1, strides=None):
        return self.torch.Tensor(shape, dtype, self.torch.device("cuda", index), strides)

    def test_quantize_allocates_the_gemm_layouts(self):
        t = self.torch
        with t.installed():
            q, s = fp8gemm.quantize_per_token(self.cuda((6, 300), t.bfloat16))
        self.assertEqual((q.shape, q.dtype, q.device.index), ((6, 300), t.float8_e4m3fn, 1))
        self.assertEqual((s.shape, s.stride(), s.dtype), ((6, 3), (1, 8), t.float32))
        self.assertEqual(t.allocations[-1].shape, (3 * 8,))  # whole padded columns
        name, args = self.calls[-1]
        self.assertEqual(name, "quantize_per_token")
        self.assertEqual(args[-1], t.CURRENT_STREAM + 1)  # the current stream of cuda:1
        self.assertEqual(args[8:13], (s.data_ptr(), 6, 3, 1, 8))

    def test_gemm_allocates_out_and_honors_an_explicit_stream(self):
        t = self.torch
        m, n, k = 64, 256, 512
        with t.installed():
            a, sa = self.cuda((m, k), t.float8_e4m3fn), self.cuda((m, 4), t.float32, strides=(1, m))
            b, sb = self.cuda((n, k), t.float8_e4m3fn), self.cuda((2, 4), t.float32)
            out = fp8gemm.gemm_fp8_nt(a, sa, b, sb)
            self.assertEqual((out.shape, out.dtype), ((m, n), t.bfloat16))
            # (b_constant given: the Python path, which this test records; the plain call with
            # out would go from C to the library, see TorchFastPathTest.)
            fp8gemm.gemm_fp8_nt(a, sa, b, sb, out, stream=0x5000, b_constant=False)
            with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
                fp8gemm.gemm_fp8_nt(a, sa, b, sb, self.cuda((m, n), t.bfloat16, index=0))
            self.assertIn("cuda:0", str(cm.exception))
            host = t.Tensor((m, k), t.float8_e4m3fn, t.device("cpu"))
            with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
                fp8gemm.gemm_fp8_nt(host, sa, b, sb, out)
            self.assertIn("a must be on a CUDA device", str(cm.exception))
        (_, first), (_, second) = self.calls
        self.assertEqual(first[:4], (a.data_ptr(), m, k, k))
        self.assertEqual(first[18:22], (out.data_ptr(), m, n, n))
        self.assertEqual((first[-1], second[-1]), (t.CURRENT_STREAM + 1, 0x5000))


class TorchFastPathTest(unittest.TestCase):
    """gemm_fp8_nt with torch tensors in the plain case is read in C (gemm_fp8_nt_torch): the
    library is reached without the Python operand path, and everything else falls back to it."""

    def setUp(self):
        import fake_torch
        from fp8gemm import _ops
        self.torch, self.ops = fake_torch, _ops
        self.python_path = _ops.Operands

    def tearDown(self):
        self.ops.Operands = self.python_path

    def forbid_python_path(self):
        def forbidden(*args, **kwargs):
            raise AssertionError("the Python operand path ran")
        self.ops.Operands = forbidden

    def operands(self, k=512, a_dtype=None):
        t = self.torch
        m, n = 64, 256
        cuda = t.device("cuda", 1)
        return (t.Tensor((m, k), a_dtype or t.float8_e4m3fn, cuda), t.Tensor((m, 4), t.float32, cuda, (1, m)),
                t.Tensor((n, k), t.float8_e4m3fn, cuda), t.Tensor((2, 4), t.float32, cuda),
                t.Tensor((m, n), t.bfloat16, cuda))

    def test_plain_torch_operands_reach_the_library_from_c(self):
        with self.torch.installed():
            self.forbid_python_path()
            with self.assertRaises(NO_GPU):
                fp8gemm.gemm_fp8_nt(*self.operands())
            with self.assertRaises(NO_GPU):
                fp8gemm.gemm_fp8_nt(*self.operands(), stream=0x5000)
            # The library's own validation still applies, with its message.
            with self.assertRaises(fp8gemm.InvalidArgumentError) as cm:
                fp8gemm.gemm_fp8_nt(*self.operands(k=250))
            self.assertIn("K = 250 is not a multiple of 16", str(cm.exception))

    def test_out_and_stream_as_keywords_stay_on_the_fast_path(self):
        import inspect
        self.assertEqual(list(inspect.signature(fp8gemm.gemm_fp8_nt).parameters),
                         ["a", "a_scales", "b", "b_scales", "out", "config", "b_constant", "stream"])
        with self.torch.installed():
            self.forbid_python_path()
            a, sa, b, sb, out = self.operands()
            with self.assertRaises(NO_GPU):
                fp8gemm.gemm_fp8_nt(a, sa, b, sb, out=out)
            with self.assertRaises(NO_GPU):
                fp8gemm.gemm_fp8_nt(a, sa, b, sb, out=out, stream=0)
            with self.assertRaises(AssertionError):  # any other keyword: the Python path
                fp8gemm.gemm_fp8_nt(a, sa, b, sb, out=out, config=None)
            with self.assertRaises(TypeError):  # what a Python function would say
                fp8gemm.gemm_fp8_nt(a, sa, b, sb, out, out=out)

    def test_the_dlpack_exchange_table_replaces_the_attribute_reads(self):
        # torch >= 2.10 publishes DLPack's C exchange table on torch.Tensor: the fast path then
        # reads each tensor and the current stream through it (a fresh interpreter: the package
        # looks at a torch module's table once).
        r = run_python("""
            import sys
            sys.path.insert(0, %r)
            import fake_exchange, fake_torch, fp8gemm
            from fp8gemm import _ops
            fake_exchange.install(fake_torch.Tensor)
            def forbidden(*args, **kwargs):
                raise AssertionError("the Python operand path ran")
            _ops.Operands = forbidden
            t, cuda = fake_torch, fake_torch.device("cuda", 1)
            ops = (t.Tensor((64, 512), t.float8_e4m3fn, cuda), t.Tensor((64, 4), t.float32, cuda, (1, 64)),
                   t.Tensor((256, 512), t.float8_e4m3fn, cuda), t.Tensor((2, 4), t.float32, cuda),
                   t.Tensor((64, 256), t.bfloat16, cuda))
            with t.installed():
                try:
                    fp8gemm.gemm_fp8_nt(*ops)
                except (fp8gemm.NoDriverError, fp8gemm.NoDeviceError):
                    pass
                try:  # A of K = 500: the library's own check, on the sizes the table reported
                    fp8gemm.gemm_fp8_nt(t.Tensor((64, 500), t.float8_e4m3fn, cuda), *ops[1:])
                except fp8gemm.InvalidArgumentError as e:
                    print("invalid:", "[M, K] = [64, 500]" in str(e))
            kinds = [c[0] for c in fake_exchange.calls]
            print("tensors read:", kinds.count("dltensor"), "streams:", [c[1:] for c in fake_exchange.calls if c[0] == "stream"])
        """ % os.path.dirname(os.path.abspath(__file__)))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("invalid: True", r.stdout)
        # Two calls of five tensors each; the current stream of cuda:1 asked at each call.
        self.assertIn("tensors read: 10", r.stdout)
        self.assertIn("streams: [(2, 1), (2, 1)]", r.stdout)

    def test_a_single_row_reaches_the_library_from_c(self):
        # Decode (M = 1): torch leaves a one-row tensor's stride(0) arbitrary; it is not the
        # leading dimension the library checks (which would fail here).
        t = self.torch
        a, sa, b, sb, _ = self.operands()
        cuda = t.device("cuda", 1)
        one = t.Tensor((1, 512), t.float8_e4m3fn, cuda, (3, 1))
        one_scale = t.Tensor((1, 4), t.float32, cuda, (1, 4))
        out = t.Tensor((1, 256), t.bfloat16, cuda, (1, 1))
        with t.installed():
            self.forbid_python_path()
            with self.assertRaises(NO_GPU):
                fp8gemm.gemm_fp8_nt(one, one_scale, b, sb, out)

    def test_anything_else_takes_the_python_path(self):
        t = self.torch
        with t.installed():
            self.forbid_python_path()
            for case in (self.operands(a_dtype=t.int32),   # not e4m3: the Python path names it
                         self.operands()[:4] + (None,)):     # no out: allocated by the Python path
                with self.assertRaises(AssertionError):
                    fp8gemm.gemm_fp8_nt(*case)
            with self.assertRaises(AssertionError):
                fp8gemm.gemm_fp8_nt(*self.operands(), stream=t.cuda.current_stream(t.device("cuda", 1)))
        # Without torch in sys.modules the fast path is never taken either.
        with self.assertRaises(AssertionError):
            self.forbid_python_path()
            fp8gemm.gemm_fp8_nt(*dense(64, 256, 512))


class HostileInputTest(unittest.TestCase):
    """Descriptions that lie or misbehave: never a crash, a hang or a stray Python error; the
    package's InvalidArgumentError, or the call going on to the library. Each case runs in a
    fresh interpreter, so that a crash fails the test instead of ending the run."""

    PRELUDE = """
        import ctypes, sys, types
        sys.path.insert(0, %r)
        import fp8gemm, fakes
        from fakes import bf16, block_scales, fp8, per_token_scales
        NO_GPU = (fp8gemm.NoDriverError, fp8gemm.NoDeviceError)
        def ops():
            return [fp8(0, 128, 128), per_token_scales(1, 128, 128), fp8(2, 128, 128), block_scales(3, 128, 128),
                    bf16(4, 128, 128)]
        def outcome(call):
            try:
                call()
                return "ok"
            except NO_GPU:
                return "no-gpu"
            except fp8gemm.InvalidArgumentError as e:
                return "invalid: " + e.message
            except Exception as e:
                return "OTHER %%s: %%s" %% (type(e).__name__, e)
    """ % os.path.dirname(os.path.abspath(__file__))

    def run_case(self, body):
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(self.PRELUDE) + textwrap.dedent(body)],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn("OTHER", r.stdout, r.stdout)
        return r.stdout

    def test_dlpack_dimensions_are_checked_before_reading_them(self):
        out = self.run_case("""
            x = fakes.DLPackArray(fakes.address(0), (128, 128), fakes.KDL_FLOAT8_E4M3FN, 8)
            for ndim in (2**31 - 1, 1000, -1):
                x.managed.dl_tensor.ndim = ndim
                o = ops(); o[0] = x
                print(outcome(lambda: fp8gemm.gemm_fp8_nt(*o)))
            v = fakes.DLPackArray(fakes.address(0), (128, 128), fakes.KDL_FLOAT8_E4M3FN, 8, versioned=True)
            v.managed.version.major = 2
            o = ops(); o[0] = v
            print(outcome(lambda: fp8gemm.gemm_fp8_nt(*o)))
        """)
        self.assertEqual(out.count("tensor of 2147483647 dimensions"), 1, out)
        self.assertIn("tensor of 1000 dimensions", out)
        self.assertIn("tensor of -1 dimensions", out)
        self.assertIn("a DLPack 2.0 tensor; this package reads DLPack 1.x", out)

    def test_malformed_array_interfaces_are_invalid_arguments(self):
        out = self.run_case("""
            class Raw:
                def __init__(self, cai): self.__cuda_array_interface__ = cai
            good = fp8(0, 128, 128).__cuda_array_interface__
            cases = [None, 5, {}, dict(good, data=()), dict(good, data=("16777216", False)),
                     dict(good, data=(1.5, False)), dict(good, typestr=None), dict(good, typestr="<f\u00b2"),
                     dict(good, shape=("a", 1)), dict(good, strides=(128,)), dict(good, data=(2**64, False)),
                     dict(good, shape=(2**63, 128))]
            for cai in cases:
                o = ops(); o[0] = Raw(cai)
                print(outcome(lambda: fp8gemm.gemm_fp8_nt(*o)))
            # The reader is decided per object where the protocol is an instance attribute.
            o = ops(); o[0] = Raw(good); print(outcome(lambda: fp8gemm.gemm_fp8_nt(*o)))
        """)
        lines = out.split("\n")
        self.assertTrue(all(line.startswith("invalid: gemm_fp8_nt: a") for line in lines[:12]), out)
        self.assertEqual(lines[12], "no-gpu", out)

    def test_torch_exchange_tables_that_lie(self):
        out = self.run_case("""
            import fake_torch as T, fake_exchange as X
            sys.modules["torch"] = T
            d = T.device("cuda", 0)
            def call(**kw):
                return outcome(lambda: fp8gemm.gemm_fp8_nt(
                    T.Tensor((128, 128), T.float8_e4m3fn, d), T.empty_strided((128, 1), (1, 128), dtype=T.float32, device=d),
                    T.Tensor((128, 128), T.float8_e4m3fn, d), T.Tensor((1, 1), T.float32, d),
                    T.Tensor((128, 128), T.bfloat16, d), **kw))
            T.Tensor.__c_dlpack_exchange_api__ = 1       # an int address: not taken
            print(call())
            del T.Tensor.__c_dlpack_exchange_api__
            X._api.version.major = 2                     # a version chain that loops
            X._api.prev_version_api = ctypes.addressof(X._api)
            X.install(T.Tensor)
            print(call())
        """)
        self.assertEqual(out.split(), ["no-gpu", "no-gpu"], out)
        out = self.run_case("""
            import fake_torch as T, fake_exchange as X
            sys.modules["torch"] = T
            X._api.current_work_stream = X.WORK_STREAM(lambda device_type, device_id, out: 1)  # fails
            X.install(T.Tensor)
            d = T.device("cuda", 0)
            print(outcome(lambda: fp8gemm.gemm_fp8_nt(
                T.Tensor((128, 128), T.float8_e4m3fn, d), T.empty_strided((128, 1), (1, 128), dtype=T.float32, device=d),
                T.Tensor((128, 128), T.float8_e4m3fn, d), T.Tensor((1, 1), T.float32, d), T.Tensor((128, 128), T.bfloat16, d))))
            for stream in (-1, 2**64):                   # both paths: not a handle
                for kw in ({}, {"b_constant": False, "config": None}):
                    print(outcome(lambda: fp8gemm.gemm_fp8_nt(
                        T.Tensor((128, 128), T.float8_e4m3fn, d),
                        T.empty_strided((128, 1), (1, 128), dtype=T.float32, device=d),
                        T.Tensor((128, 128), T.float8_e4m3fn, d), T.Tensor((1, 1), T.float32, d),
                        T.Tensor((128, 128), T.bfloat16, d), stream=stream, **kw)))
        """)
        lines = out.split("\n")
        self.assertEqual(lines[0], "no-gpu", out)  # once SystemError: NULL without an exception
        self.assertTrue(all("(a CUstream handle) = " in line for line in lines[1:5]), out)

    def test_torch_module_swapped_while_it_is_read(self):
        # A module whose attribute lookup replaces sys.modules["torch"] and calls again: the
        # native cache once freed the module it was still reading.
        out = self.run_case("""
            depth = [0]
            def getattr_(name):
                if name == "Tensor" and depth[0] == 0:
                    depth[0] += 1
                    other = types.ModuleType("torch")
                    other.Tensor = type("T3", (), {})
                    other.float8_e4m3fn = other.bfloat16 = other.float32 = 0
                    sys.modules["torch"] = other
                    print(outcome(lambda: fp8gemm.gemm_fp8_nt(*ops())))
                    return type("T2", (), {})
                raise AttributeError(name)
            swapping = types.ModuleType("torch")
            swapping.__getattr__ = getattr_
            sys.modules["torch"] = swapping
            del swapping
            print(outcome(lambda: fp8gemm.gemm_fp8_nt(*ops())))
        """)
        self.assertEqual(out.split(), ["no-gpu", "no-gpu"], out)

    def test_streams_counts_and_shapes_out_of_range(self):
        out = self.run_case("""
            import fake_torch as T
            t = T.Tensor((128, 128), T.float8_e4m3fn, T.device("cuda", 0))
            o = ops(); o[0] = t
            print(outcome(lambda: fp8gemm.gemm_fp8_nt(*o)))           # torch-like operand, torch not imported
            for stream in (-1, 2**64, "x"):
                print(outcome(lambda: fp8gemm.gemm_fp8_nt(*ops(), stream=stream)))
            class BadProtocol:
                def __cuda_stream__(self): return ()
            print(outcome(lambda: fp8gemm.gemm_fp8_nt(*ops(), stream=BadProtocol())))
            print(outcome(lambda: fp8gemm.kernel_name((2**64, 256, 512))))
            print(outcome(lambda: fp8gemm.kernel_name(("a", 256, 512))))
            print(outcome(lambda: fp8gemm.prewarm([(1, 256, 512)], jobs=2**40)))
            # Another library's signatures on ctypes.pythonapi do not reach the package's own.
            ctypes.pythonapi.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
            x = fakes.DLPackArray(fakes.address(0), (128, 128), fakes.KDL_FLOAT8_E4M3FN, 8)
            o = ops(); o[0] = x
            print(outcome(lambda: fp8gemm.gemm_fp8_nt(*o)))
        """)
        lines = out.split("\n")
        self.assertIn("torch is not imported", lines[0])
        self.assertTrue(all(line.startswith("invalid: ") for line in lines[:8]), out)
        self.assertEqual(lines[8], "no-gpu", out)


if __name__ == "__main__":
    unittest.main()
