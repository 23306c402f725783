"""The Elman recurrence over a whole segment as one autograd node, with backpropagation through time by hand.

    forward   a_t = W x_t + b_h + U h_{t-1},   h_t = act(a_t),   t = 1..T
    backward  g_t = dL/dh_t (from the outputs) + U^T delta_{t+1}      (g_T adds dL/dh_T from the final state)
              delta_t = g_t * act'(a_t)
              dW = sum_t delta_t x_t^T,  dU = sum_t delta_t h_{t-1}^T,  db_h = sum_t delta_t,
              dx_t = W^T delta_t,  dh_0 = U^T delta_1

Only what depends on the previous step stays in the time loop: U h_{t-1} forward, U^T delta_{t+1} backward.
W x_t + b_h for every t is one (T*B, d) x (d, H) product before the loop, and every weight gradient is one
product over all T*B rows after it: fewer, larger products, and one graph node for the segment (torch's CPU
nn.RNN keeps nodes for every step and takes each weight gradient as T small products). act' is read off the
outputs: tanh' = 1 - h^2, sigmoid' = h (1 - h), relu' = [h > 0].
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

# Per activation: act applied in place, and act'(a) written in terms of h = act(a) (the pre-activations
# need not be kept).
_IN_PLACE = {"tanh": torch.Tensor.tanh_, "sigmoid": torch.Tensor.sigmoid_, "relu": torch.Tensor.relu_}
_SLOPE_FROM_OUTPUT = {
    "tanh": lambda h: 1 - h * h,
    "sigmoid": lambda h: h * (1 - h),
    "relu": lambda h: (h > 0).to(h.dtype),
}


class ElmanRecurrence(torch.autograd.Function):
    """(x (T, B, d), h_0 (B, H), W (H, d), U (H, H), b_h (H,), activation) -> (h_1..h_T (T, B, H), h_T (B, H))."""

    @staticmethod
    def forward(ctx, x, h0, W, U, b, activation: str):
        if activation not in _IN_PLACE:
            raise ValueError(f"activation must be one of {tuple(_IN_PLACE)}, got {activation!r}")
        act_ = _IN_PLACE[activation]
        T, B, d = x.shape
        outputs = torch.addmm(b, x.reshape(T * B, d), W.t()).view(T, B, W.shape[0])  # W x_t + b_h for every t
        h = h0
        for t in range(T):
            h = torch.addmm(outputs[t], h, U.t(), out=outputs[t])  # adds U h_{t-1} in place
            h = act_(h)
        ctx.activation = activation
        ctx.save_for_backward(x, h0, W, U, outputs)
        return outputs, h.clone()  # h_T apart from the outputs: a view of another output cannot be returned

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_outputs, grad_last):
        x, h0, W, U, outputs = ctx.saved_tensors
        T, B, H = outputs.shape
        if T == 0:
            return x.new_zeros(x.shape), grad_last, W.new_zeros(W.shape), U.new_zeros(U.shape), W.new_zeros(H), None
        act_prime = _SLOPE_FROM_OUTPUT[ctx.activation](outputs)  # (T, B, H)
        deltas = torch.empty_like(outputs)  # (T, B, H)
        g = grad_outputs[T - 1] + grad_last  # (B, H)
        for t in range(T - 1, 0, -1):
            torch.mul(g, act_prime[t], out=deltas[t])
            g = torch.addmm(grad_outputs[t - 1], deltas[t], U)  # dL/dh_{t-1}
        torch.mul(g, act_prime[0], out=deltas[0])
        flat = deltas.view(T * B, H)
        need_x, need_h0, need_W, need_U, need_b = ctx.needs_input_grad[:5]
        grad_x = (flat @ W).view(x.shape) if need_x else None
        grad_h0 = deltas[0] @ U if need_h0 else None
        grad_W = flat.t() @ x.reshape(T * B, -1) if need_W else None
        grad_U = flat.t() @ torch.cat([h0.unsqueeze(0), outputs[:-1]]).view(T * B, H) if need_U else None
        grad_b = flat.sum(0) if need_b else None
        return grad_x, grad_h0, grad_W, grad_U, grad_b, None
