"""Turns the tensors of one call into the integers of the C descriptors.

Checked here only what the library cannot see from a descriptor: that each operand is on a
CUDA device, that they share it, its dtype, that it is 2-D (or a 3-D stack that is one 2-D
matrix in memory, where a grouped GEMM takes one) and that its rows are contiguous. Sizes,
strides, alignment and scale layouts are the library's to check, with its messages.
"""

from ._errors import InvalidArgumentError, invalid_argument
from ._streams import resolve_stream
from ._tensors import is_torch_tensor, tensor_info

_DTYPE_WORDS = {"e4m3": "float8_e4m3fn (or uint8 bytes)", "bf16": "bfloat16", "fp32": "float32",
                "int32": "int32"}


class Operands:
    """The operands of one call of `fn`. Keep the object alive until the C call returns:
    it holds the DLPack capsules whose memory the pointers refer to.

    stream: the call's stream as the caller gave it; `self.stream` is the CUstream it runs
    on (see _streams.py), resolved first so that DLPack producers order their work before it."""

    __slots__ = ("fn", "stream", "device", "owners", "shapes")

    def __init__(self, fn, stream, first):
        self.fn = fn
        self.stream = resolve_stream(stream, first, is_torch_tensor(first))
        self.device = None  # the CUDA device index the operands share, when one names it
        self.owners = []
        self.shapes = {}  # operand name -> its shape as given (before a stack is flattened)

    def info(self, name, obj, dtypes):
        fn = self.fn
        try:
            info = tensor_info(obj, self.stream)
        except InvalidArgumentError as e:
            raise invalid_argument(f"{fn}: {name}: {e.message}") from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError) as e:
            # What an operand's own description (its array interface, DLPack capsule or tensor
            # attributes) got wrong, named as the operand's problem.
            raise invalid_argument(f"{fn}: {name} does not describe a tensor readably "
                                   f"({type(e).__name__}: {e})") from None
        if not isinstance(info.data_ptr, int) or not 0 <= info.data_ptr < 1 << 64:
            raise invalid_argument(f"{fn}: {name} has data pointer {info.data_ptr!r}, not an address")
        if any(not -(1 << 63) <= int(x) < 1 << 63 for x in (*info.shape, *info.strides)):
            raise invalid_argument(f"{fn}: {name} has shape {tuple(info.shape)} / strides {tuple(info.strides)} "
                                   "outside the 64-bit range")
        if info.device_type != "cuda":
            raise invalid_argument(f"{fn}: {name} must be on a CUDA device (it is on {info.device_type})")
        if info.dtype not in dtypes:
            raise invalid_argument(f"{fn}: {name} must be {_DTYPE_WORDS.get(dtypes[0], dtypes[0])} "
                                   f"(it is {info.dtype})")
        index = info.device_index
        if index is not None:
            if self.device is None:
                self.device = index
            elif index != self.device:
                raise invalid_argument(f"{fn}: {name} is on cuda:{index}, the operands before it on "
                                       f"cuda:{self.device}; all must be on one device")
        if info.owner is not None:
            self.owners.append(info.owner)
        self.shapes[name] = info.shape
        return info

    def _two_d(self, name, info, stacked):
        shape, strides = info.shape, info.strides
        if stacked and len(shape) == 3:
            g, r, c = shape
            # [G, R, C] is the matrix [G*R, C] when each slice follows the one before.
            if g > 1 and r > 0 and strides[0] != r * strides[1]:
                raise invalid_argument(f"{self.fn}: {name} of shape {shape} and strides {strides} is not "
                                       f"one [{g * r}, {c}] matrix in memory (stride(0) must be "
                                       "shape[1] * stride(1))")
            shape, strides = (g * r, c), (strides[1], strides[2])
        if len(shape) != 2:
            raise invalid_argument(f"{self.fn}: {name} must be 2-D{' (or a 3-D stack)' if stacked else ''} "
                                   f"(it has shape {tuple(info.shape)})")
        return shape, strides

    def _writable(self, name, info):
        if info.read_only:
            raise invalid_argument(f"{self.fn}: {name} is read-only memory (its producer marked it so); "
                                   "the call writes it: pass a writable tensor")

    def matrix(self, name, obj, dtypes, stacked=False, written=False):
        """(data, rows, cols, ld) of a row-major matrix; `written`: the call writes it."""
        info = self.info(name, obj, dtypes)
        if written:
            self._writable(name, info)
        (rows, cols), (s0, s1) = self._two_d(name, info, stacked)
        if cols > 1 and s1 != 1:
            raise invalid_argument(f"{self.fn}: {name} must have contiguous rows (stride(1) == 1; "
                                   f"its strides are {tuple(info.strides)})")
        ld = s0 if rows > 1 else max(s0, cols)  # a single row's stride(0) is arbitrary
        return (info.data_ptr, rows, cols, ld)

    def scales(self, name, obj, stacked=False, written=False):
        """(data, rows, cols, row_stride, col_stride) of an fp32 scale matrix."""
        info = self.info(name, obj, ("fp32",))
        if written:
            self._writable(name, info)
        (rows, cols), (s0, s1) = self._two_d(name, info, stacked)
        return (info.data_ptr, rows, cols, s0, s1)

    def vector(self, name, obj):
        """(data, length) of a contiguous 1-D int32 vector."""
        info = self.info(name, obj, ("int32",))
        if len(info.shape) != 1:
            raise invalid_argument(f"{self.fn}: {name} must be 1-D (it has shape {tuple(info.shape)})")
        if info.shape[0] > 1 and info.strides[0] != 1:
            raise invalid_argument(f"{self.fn}: {name} must be contiguous (its stride is {info.strides[0]})")
        return info.data_ptr, info.shape[0]
