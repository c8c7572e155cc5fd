"""Which CUDA stream a call runs on.

stream=None: for torch operands, the current torch stream of their device, read through
torch.cuda.current_stream(device).cuda_stream on every call (torch is already imported when
a torch tensor exists); for other operands, the legacy default stream (0). An int is a raw
CUstream / cudaStream_t handle. Objects with `cuda_stream` (torch.cuda.Stream, CuPy streams)
or the `__cuda_stream__` protocol are accepted too.
"""

import sys

from ._errors import integer_argument, invalid_argument


def _torch_current_stream(tensor):
    device = tensor.device
    if device.type != "cuda":
        return 0  # the operand checks reject it with a message naming the operand
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "cuda"):
        raise invalid_argument(f"stream=None with a {type(tensor).__name__} operand reads torch's current "
                               "stream, but torch is not imported: pass stream explicitly")
    return _handle(torch.cuda.current_stream(device).cuda_stream, "torch's current stream")


def _handle(value, what):
    """A CUstream handle: an int in [0, 2**64)."""
    return integer_argument(value, what + " (a CUstream handle)", 0, 1 << 64)


def resolve_stream(stream, first_operand, operand_is_torch):
    if stream is None:
        return _torch_current_stream(first_operand) if operand_is_torch else 0
    if isinstance(stream, int):
        return _handle(stream, "stream")
    handle = getattr(stream, "cuda_stream", None)
    if handle is not None:
        return _handle(handle, "stream.cuda_stream")
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        if not callable(protocol):
            raise invalid_argument("stream.__cuda_stream__ must be a method returning (version, handle)")
        answer = protocol()
        if not isinstance(answer, tuple) or len(answer) != 2:
            raise invalid_argument(f"stream.__cuda_stream__() returned {answer!r}, not (version, handle)")
        return _handle(answer[1], "stream.__cuda_stream__()[1]")
    raise invalid_argument(f"stream must be None, an int (a CUstream) or a stream object, "
                           f"not {type(stream).__name__}")
