"""fp8gemm: FP8 block-scaled GEMMs for NVIDIA Hopper (sm_90), from Python.

A thin layer over the library's C API (fp8gemm.h): a small C extension calls it directly,
with the rules, defaults and error messages of the C++ API (fp8gemm.hpp). Operands are
torch tensors or any object with __cuda_array_interface__ or __dlpack__ on a CUDA device;
torch is used only when the caller's tensors are torch tensors.

The library is loaded at import: FP8GEMM_LIBRARY if set, else the path recorded when this
package was built, else libfp8gemm.so.0 through the system loader.
"""

from . import _loader

LIBRARY_PATH = _loader.open_library()

from ._errors import (  # noqa: E402  (the library must be open first)
    BufferTooSmallError,
    CompileFailedError,
    CudaError,
    Error,
    InternalError,
    InvalidArgumentError,
    NoDeviceError,
    NoDriverError,
    NotCachedError,
    OutOfMemoryError,
    UnsupportedDeviceError,
)
from ._config import KernelConfig  # noqa: E402
from ._layouts import (  # noqa: E402
    GROUPED_SEGMENT_ROWS,
    MAX_DIMENSION,
    MAX_K_1D2D,
    block_scale_shape,
    k_grouped_columns,
    per_token_scale_shape,
    per_token_scale_stride,
    scale_blocks,
)
from ._ops import (  # noqa: E402
    gemm_fp8_nt,
    gemm_fp8_nt_grouped_contiguous,
    gemm_fp8_nt_grouped_masked,
    gemm_fp8_nt_wgrad,
    gemm_fp8_nt_wgrad_k_grouped,
)
from ._quantize import (  # noqa: E402
    convert_scales,
    quantize_per_block,
    quantize_per_token,
    quantize_transposed_per_token,
    transpose_fp8_block_scaled,
)
from ._admin import (  # noqa: E402
    CacheClearReport,
    CachedKernel,
    CachedTuningDatabase,
    DeviceInfo,
    DeviceStats,
    GemmKind,
    GemmShape,
    PrewarmReport,
    RuntimeInfo,
    Setting,
    Stats,
    TuneResult,
    TuningMode,
    cache_only,
    cached_kernels,
    cached_tuning_databases,
    clear_cache,
    clear_stale_cache,
    kernel_name,
    prewarm,
    runtime_info,
    set_cache_only,
    set_tuning_mode,
    stats,
    tune,
    tuning_mode,
    version,
    version_string,
)
from ._tensors import tensor_info  # noqa: E402

__version__ = version_string()
