"""Kernel cache, introspection, settings and tuning (the admin half of the C API).

These need no tensors and, but for tune(), no GPU: prewarm and kernel_name compile with
NVRTC on any machine.
"""

import dataclasses
import enum
import typing

from . import _native
from ._errors import integer_argument, invalid_argument


class GemmKind(enum.IntEnum):
    """Which GEMM a shape is for (fp8gemm_gemm_kind_t)."""

    FORWARD = 0  # gemm_fp8_nt
    WEIGHT_GRADIENT = 1  # gemm_fp8_nt_wgrad
    GROUPED_CONTIGUOUS = 2  # m: total (padded) rows, groups: experts
    GROUPED_MASKED = 3  # m: groups x expected_m
    K_GROUPED_WEIGHT_GRADIENT = 4  # m: rows of one group's D, groups: groups


class TuningMode(enum.IntEnum):
    """How configs are chosen (fp8gemm_tuning_mode_t; FP8GEMM_TUNING)."""

    OFF = 0
    CACHED = 1
    ON = 2


def _enum(cls, value, what):
    if isinstance(value, str):
        try:
            return cls[value.upper()]
        except KeyError:
            raise invalid_argument(f"unknown {what} {value!r} (one of "
                                   f"{', '.join(m.name.lower() for m in cls)})") from None
    try:
        return cls(int(value))
    except ValueError:
        raise invalid_argument(f"unknown {what} {value!r}") from None


@dataclasses.dataclass(frozen=True)
class GemmShape:
    """A GEMM problem: m x n x k of `kind`, with `groups` for the grouped kinds (1 = unknown)."""

    m: int
    n: int
    k: int
    kind: GemmKind = GemmKind.FORWARD
    groups: int = 1


def as_shape(shape):
    """A GemmShape from a GemmShape, a tuple (m, n, k[, kind[, groups]]) or a dict with keys
    m, n, k and optionally kind (a GemmKind, its number or its name) and groups."""
    if isinstance(shape, GemmShape):
        return shape
    if isinstance(shape, dict):
        unknown = set(shape) - {"m", "n", "k", "kind", "groups"}
        if unknown:
            raise invalid_argument(f"unknown shape keys {sorted(unknown)}")
        try:
            m, n, k = shape["m"], shape["n"], shape["k"]
        except KeyError as e:
            raise invalid_argument(f"a shape needs m, n and k (missing {e})") from None
        fields = (m, n, k, shape.get("kind", 0), shape.get("groups", 1))
    else:
        fields = tuple(shape)
        if not 3 <= len(fields) <= 5:
            raise invalid_argument(f"a shape is (m, n, k[, kind[, groups]]), not {fields!r}")
        fields = fields + (0, 1)[len(fields) - 3:]
    m, n, k, kind, groups = fields
    m, n, k, groups = (integer_argument(v, "shape " + name, -(1 << 63), 1 << 63)
                       for name, v in (("m", m), ("n", n), ("k", k), ("groups", groups)))
    return GemmShape(m, n, k, _enum(GemmKind, kind, "GEMM kind"), groups)


def _count(value, name, fn):
    """An int option of `fn` within a C int."""
    return integer_argument(value, f"{fn}: {name}", -(1 << 31), 1 << 31)


def _shape_tuple(shape):
    s = as_shape(shape)
    return (s.m, s.n, s.k, int(s.kind), s.groups)


@dataclasses.dataclass(frozen=True)
class PrewarmReport:
    """What prewarm() did (fp8gemm_prewarm_report_t). not_saved > 0: kernels missing from
    the disk cache afterwards, and not_saved_reason says why."""

    shapes: int
    kernels: int
    compiled: int
    from_disk: int
    from_memory: int
    num_sms: int
    seconds: float
    kernel_names: typing.List[str]
    compiled_and_skipped: int
    not_saved: int
    not_saved_reason: str


def prewarm(shapes, *, jobs=0, num_sms=0, b_constant=False):
    """Compiles (or finds) every kernel the shapes need into the disk cache; needs no GPU.

    shapes: GemmShape, (m, n, k[, kind[, groups]]) tuples or dicts. jobs: compile threads
    (0 = one per hardware thread); num_sms: 0 = the current device's, else 132; b_constant:
    also build the b_constant variants."""
    report = _native.prewarm([_shape_tuple(s) for s in shapes], _count(jobs, "jobs", "prewarm"),
                             _count(num_sms, "num_sms", "prewarm"), bool(b_constant))
    return PrewarmReport(**report)


def kernel_name(shape, *, b_constant=False):
    """The kernel a shape's GEMM uses, as a readable name (compiles it when not cached)."""
    return _native.kernel_name(_shape_tuple(shape), bool(b_constant))


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    ordinal: int
    name: str
    cc_major: int
    cc_minor: int
    sm_count: int
    memory_bytes: int
    supported: bool  # sm_90


@dataclasses.dataclass(frozen=True)
class Setting:
    """A setting in effect: its variable, the value used and where it came from."""

    name: str
    value: str
    source: str


@dataclasses.dataclass(frozen=True)
class RuntimeInfo:
    library_version: str
    nvrtc_version: str
    cache_dir: str
    cache_state: str  # "read-write" or "memory-only (<reason>)"
    driver: str  # "CUDA 13.0" or why no driver was found
    driver_version: int  # 0 without a driver
    devices: typing.List[DeviceInfo]
    settings: typing.List[Setting]


def runtime_info():
    """Library, NVRTC, driver, devices, cache directory and every setting in effect."""
    info = _native.runtime_info()
    info["devices"] = [DeviceInfo(**d) for d in info["devices"]]
    info["settings"] = [Setting(**s) for s in info["settings"]]
    return RuntimeInfo(**info)


@dataclasses.dataclass(frozen=True)
class DeviceStats:
    """What the library has done on one device (fp8gemm_device_stats_t)."""

    device: int
    modules_loaded: int
    plans: int


@dataclasses.dataclass(frozen=True)
class Stats:
    """Process-wide counters (fp8gemm_stats_t), and per device those it has run on."""

    gemm_calls: int
    kernels_compiled: int
    problems_tuned: int
    tuned_plans: int
    disk_hits: int
    disk_rejected: int
    modules_loaded: int
    devices: tuple = ()


def stats():
    s = _native.stats()
    s["devices"] = tuple(DeviceStats(**d) for d in s["devices"])
    return Stats(**s)


def set_tuning_mode(mode):
    """TuningMode, its number or its name ("off", "cached", "on")."""
    _native.set_tuning_mode(int(_enum(TuningMode, mode, "tuning mode")))


def tuning_mode():
    return TuningMode(_native.get_tuning_mode())


def set_cache_only(cache_only):
    """True: never compile on a call; a kernel missing from the cache is NotCachedError."""
    _native.set_cache_only(bool(cache_only))


def cache_only():
    return _native.get_cache_only()


@dataclasses.dataclass(frozen=True)
class CachedKernel:
    file: str
    kernel: str
    bytes: int
    category: str  # "entry", "temporary" or "stray"
    status: str
    stale: bool


@dataclasses.dataclass(frozen=True)
class CachedTuningDatabase:
    file: str
    status: str
    readable: bool
    problems: int
    gpu: str
    nvrtc: str
    library: str
    sms: int
    driver: int
    problems_stale: int = 0


@dataclasses.dataclass(frozen=True)
class CacheClearReport:
    kernels: int
    tuning_files: int
    other: int
    failed: typing.List[str]  # "<path>: <reason>"


def cached_kernels():
    """Every file of the cache directory's kernel part, in order."""
    return [CachedKernel(**k) for k in _native.cached_kernels()]


def cached_tuning_databases():
    return [CachedTuningDatabase(**t) for t in _native.cached_tuning_databases()]


def clear_cache(kernels=True, tuning=False):
    """Deletes the compiled kernels and/or the tuning databases of the cache directory."""
    return CacheClearReport(**_native.clear_cache(bool(kernels), bool(tuning)))


def clear_stale_cache():
    """Deletes unusable entries and old temporaries."""
    return CacheClearReport(**_native.clear_stale_cache())


@dataclasses.dataclass(frozen=True)
class TuneResult:
    shape: GemmShape
    heuristic_kernel: str
    heuristic_us: float
    tuned_kernel: str
    tuned_us: float
    candidates_timed: int


def tune(shapes, *, candidates=8, jobs=0):
    """Times `candidates` configs per shape on the current device and records the winners in
    the tuning database (needs an sm_90 GPU)."""
    results = _native.tune([_shape_tuple(s) for s in shapes], _count(candidates, "candidates", "tune"),
                           _count(jobs, "jobs", "tune"))
    out = []
    for r in results:
        r["shape"] = as_shape(r["shape"])
        out.append(TuneResult(**r))
    return out


def version():
    """The library's (major, minor, patch)."""
    return _native.version()[:3]


def version_string():
    return _native.version()[3]
