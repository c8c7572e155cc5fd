"""An FP8 linear layer on fp8gemm: forward, input gradient (dgrad) and weight gradient (wgrad)
all through the library, as a torch.autograd.Function, checked against torch.nn.Linear in bf16.

    y  [T, out] = x [T, in] @ W^T          x per token (1x128), W per 128x128 block
    dx [T, in]  = dy [T, out] @ W          dy per token, W^T from an exact transpose of W's fp8
    dW [out, in] = dy^T @ x   (fp32)       dy^T and x^T per token along T (the weight gradient)

Run on an sm_90 GPU with torch: `python3 python/examples/linear.py` (with the package on
PYTHONPATH, e.g. PYTHONPATH=build/python). It prints each result's relative error against the
bf16 layer and exits with status 1 if one is above 6 % (FP8 e4m3 keeps 3 mantissa bits: about
3 % is expected).
"""

import sys

import torch

import fp8gemm


class Fp8Linear(torch.autograd.Function):
    """y = x @ weight^T with both operands quantized to e4m3 on the fly (no bias)."""

    @staticmethod
    def forward(ctx, x, weight):
        qx, sx = fp8gemm.quantize_per_token(x)
        qw, sw = fp8gemm.quantize_per_block(weight)
        ctx.save_for_backward(x, qw, sw)
        ctx.weight_dtype = weight.dtype
        return fp8gemm.gemm_fp8_nt(qx, sx, qw, sw)

    @staticmethod
    def backward(ctx, dy):
        x, qw, sw = ctx.saved_tensors
        dy = dy.to(torch.bfloat16).contiguous()
        dx = dw = None
        if ctx.needs_input_grad[0]:
            # dx = dy @ W = dy x (W^T)^T: W^T [in, out] is W's fp8 bytes transposed, exactly.
            qdy, sdy = fp8gemm.quantize_per_token(dy)
            qwt, swt = fp8gemm.transpose_fp8_block_scaled(qw, sw)
            dx = fp8gemm.gemm_fp8_nt(qdy, sdy, qwt, swt)
        if ctx.needs_input_grad[1]:
            # dW = dy^T @ x: both operands per token along T, fp32 result.
            qdyt, sdyt = fp8gemm.quantize_transposed_per_token(dy)  # [out, T]
            qxt, sxt = fp8gemm.quantize_transposed_per_token(x)     # [in, T]
            dw = torch.empty(qdyt.shape[0], qxt.shape[0], device=dy.device, dtype=torch.float32)
            fp8gemm.gemm_fp8_nt_wgrad(qdyt, sdyt, qxt, sxt, dw)
            dw = dw.to(ctx.weight_dtype)
        return dx, dw


def fp8_linear(x, weight):
    return Fp8Linear.apply(x, weight)


def check(tokens=1024, in_features=2048, out_features=1536, seed=0):
    """Relative errors {output, input gradient, weight gradient} of the FP8 layer against
    torch.nn.Linear in bf16 on the same inputs."""
    torch.manual_seed(seed)
    layer = torch.nn.Linear(in_features, out_features, bias=False, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(tokens, in_features, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(tokens, out_features, device="cuda", dtype=torch.bfloat16)

    y_ref = layer(x)
    y_ref.backward(dy)
    dx_ref, dw_ref = x.grad.clone(), layer.weight.grad.clone()

    x.grad = None
    weight = layer.weight.detach().clone().requires_grad_(True)
    y = fp8_linear(x, weight)
    y.backward(dy)

    def rel(got, want):
        return ((got.float() - want.float()).norm() / want.float().norm()).item()

    return {"output": rel(y, y_ref), "input gradient": rel(x.grad, dx_ref), "weight gradient": rel(weight.grad, dw_ref)}


def main():
    errors = check()
    for name, err in errors.items():
        print(f"{name:16s} relative error {err:.4f}")
    bad = [name for name, err in errors.items() if not err < 0.06]
    if bad:
        print(f"too far from the bf16 layer: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
