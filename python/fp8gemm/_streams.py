"""Which CUDA stream a call runs on.

stream=None: for torch operands, the current torch stream of their device, read through
torch.cuda.current_stream(device).cuda_stream on every call (torch is already imported when
a torch tensor exists); for other operands, the legacy default stream (0). An int is a raw
CUstream / cudaStream_t handle. Objects with `cuda_stream` (torch.cuda.Stream, CuPy streams)
or the `__cuda_stream__` protocol are accepted too.
"""

import sys

from ._errors import invalid_argument


def _torch_current_stream(tensor):
    device = tensor.device
    if device.type != "cuda":
        return 0  # the operand checks reject it with a message naming the operand
    return sys.modules["torch"].cuda.current_stream(device).cuda_stream


def resolve_stream(stream, first_operand, operand_is_torch):
    if stream is None:
        return _torch_current_stream(first_operand) if operand_is_torch else 0
    if isinstance(stream, int):
        return stream
    handle = getattr(stream, "cuda_stream", None)
    if handle is not None:
        return int(handle)
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    raise invalid_argument(f"stream must be None, an int (a CUstream) or a stream object, "
                           f"not {type(stream).__name__}")
