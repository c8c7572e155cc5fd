"""KernelConfig: an explicit tile configuration (fp8gemm_kernel_config_t, C++ KernelConfig)."""

import dataclasses

from ._errors import integer_argument


@dataclasses.dataclass(frozen=True)
class KernelConfig:
    """The kernel a GEMM called with config=... runs; the defaults are the library's.
    Taken by gemm_fp8_nt and gemm_fp8_nt_wgrad, and by the grouped GEMMs:
    gemm_fp8_nt_grouped_contiguous and gemm_fp8_nt_grouped_masked take gemm_fp8_nt's configs
    without split_k (contiguous: block_m 64 or 128, multicast 0 or 2; masked: block_m 64,
    128 or 256, multicast 0, or 2 with block_m up to 128);
    gemm_fp8_nt_wgrad_k_grouped takes gemm_fp8_nt_wgrad's.

    block_m: tile rows 64, 128, 192 or 256; block_n: tile columns; stages: pipeline stages;
    group_n: rasterization stripe width in N blocks; multicast: 2-CTA multicast (0 none);
    tma_store: TMA-store epilogue (-1 = the library's choice); split_k: 1 or 2.
    An illegal combination is rejected by the library with InvalidArgumentError."""

    block_m: int = 128
    block_n: int = 128
    stages: int = 4
    group_n: int = 8
    multicast: int = 0
    tma_store: int = -1
    split_k: int = 1

    def fields(self):
        return (self.block_m, self.block_n, self.stages, self.group_n, self.multicast,
                self.tma_store, self.split_k)


def as_config(config):
    """A KernelConfig from a KernelConfig or a dict of its fields, each field an integer in
    the range of the C descriptor's int (a larger value would reach the library truncated,
    naming another kernel): InvalidArgumentError otherwise."""
    if isinstance(config, dict):
        config = KernelConfig(**config)
    elif not isinstance(config, KernelConfig):
        raise TypeError(f"config must be a KernelConfig or a dict, not {type(config).__name__}")
    for field in dataclasses.fields(KernelConfig):
        integer_argument(getattr(config, field.name), f"KernelConfig.{field.name}", -(1 << 31), 1 << 31)
    return config
