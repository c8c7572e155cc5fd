"""Finds and opens the shared library; the extension then calls its C API directly.

Where the library comes from, in order:
  1. the environment variable FP8GEMM_LIBRARY (a path; no fallback when it fails),
  2. the path recorded when this package was built (_build_config.LIBRARY_PATH), if it exists,
  3. "libfp8gemm.so.0" through the system loader (LD_LIBRARY_PATH, ld.so.cache, rpath).
"""

import os

from . import _native

SONAME = "libfp8gemm.so.0"


def _recorded_path():
    try:
        from ._build_config import LIBRARY_PATH
    except ImportError:
        return ""
    return LIBRARY_PATH or ""


def library_path():
    """The path open() uses and where it came from."""
    env = os.environ.get("FP8GEMM_LIBRARY", "")
    if env:
        return env, "FP8GEMM_LIBRARY"
    recorded = _recorded_path()
    if recorded and os.path.exists(recorded):
        return recorded, "the path recorded at build time"
    return SONAME, "the system loader"


def open_library():
    """Opens the library once; an ImportError says which path failed and how to fix it."""
    path, source = library_path()
    try:
        _native.open_library(path)
    except OSError as e:
        raise ImportError(
            f"fp8gemm: cannot load the fp8gemm library '{path}' (from {source}): {e}. "
            "Set FP8GEMM_LIBRARY to the full path of libfp8gemm.so.0 "
            "(in a build tree: <build dir>/libfp8gemm.so.0)."
        ) from None
    return path
