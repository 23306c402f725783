"""Output layers: hidden features -> exact, normalised log-probabilities over the vocabulary.

Both layers give the same two operations:
  log_probs(h)          (..., V) full distribution (what `forward` returns)
  nll_sum(h, targets)   (sum of -log p(target), number of targets), targets == IGNORE_INDEX skipped;
                        the training loss: a fused linear + cross-entropy with a hand-written backward
                        (LinearCrossEntropy), over the whole vocabulary or, adaptive, over the head and
                        only the tail clusters that hold targets.
The adaptive softmax (Grave et al. 2017) factorises p(w) = p(cluster | h) p(w | cluster, h); both factors are
softmaxes, so the product is a normalised distribution and perplexity from it is exact, not an estimate.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.function import once_differentiable

from rnnbench.params import adaptive_softmax_shapes

IGNORE_INDEX = -100


class FullSoftmax(nn.Module):
    """y = softmax(V h + b_y), optionally plus extra logits (the feed-forward model's direct connections)."""

    def __init__(self, in_features: int, vocab_size: int):
        super().__init__()
        self.V = nn.Parameter(torch.empty(vocab_size, in_features))
        self.b_y = nn.Parameter(torch.zeros(vocab_size))
        # Small uniform init, as in PyTorch's word_language_model decoder.
        nn.init.uniform_(self.V, -0.1, 0.1)

    def logits(self, h: torch.Tensor, extra_logits: torch.Tensor | None = None) -> torch.Tensor:
        z = F.linear(h, self.V, self.b_y)  # (..., V)
        return z if extra_logits is None else z + extra_logits

    def log_probs(self, h: torch.Tensor, extra_logits: torch.Tensor | None = None) -> torch.Tensor:
        return F.log_softmax(self.logits(h, extra_logits), dim=-1)  # (..., V)

    def nll_sum(
        self, h: torch.Tensor, targets: torch.Tensor, extra_logits: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, int]:
        flat_targets = targets.reshape(-1)  # (N,)
        n = int((flat_targets != IGNORE_INDEX).sum())
        if extra_logits is None:
            total = LinearCrossEntropy.apply(h.reshape(-1, h.shape[-1]), self.V, self.b_y, flat_targets)
            return total, n
        z = self.logits(h, extra_logits)  # (..., V)
        total = F.cross_entropy(z.reshape(-1, z.shape[-1]), flat_targets, ignore_index=IGNORE_INDEX, reduction="sum")
        return total, n


class LinearCrossEntropy(torch.autograd.Function):
    """sum_i -log softmax(W h_i + b)[t_i] over targets != IGNORE_INDEX, with a hand-written backward.

    Same value and gradients as cross_entropy(linear(h, W, b), t, reduction="sum"), with fewer passes over
    the (N, K) scores, which dominate a 10k-word softmax: one exponential per score in all (torch's pair of
    log_softmax forward and backward takes two), and one (N, K) tensor instead of four:
      forward   z = h W^T + b;  p = softmax(z), written over z and kept;  loss = -sum_i log p_i,t_i
      backward  dz = p - onehot(t), written over p, once;
                dh = g dz W,  dW = dz^T (g h),  db = dz^T (g 1)   (g the incoming gradient, applied to the
                small factors rather than to an (N, K) or (K, H) result)
    log p_i,t_i is taken from the picked probability, exact to float rounding while that probability is a
    normal float; below that (a target the model all but rules out) its row's scores are computed again from
    h_i and it is z_i,t_i - logsumexp(z_i), so the loss stays finite and exact however small p gets.
    dz does not depend on the incoming gradient, so a graph kept with retain_graph=True reuses it when run
    backward again. bias may be None.
    """

    @staticmethod
    def forward(ctx, h, weight, bias, targets):
        scores = _scores(h, weight, bias)  # (N, K)
        probs = torch.softmax(scores, dim=1, out=scores)  # (N, K): in place, one (N, K) block per step
        keep = targets != IGNORE_INDEX  # (N,)
        safe_targets = torch.where(keep, targets, 0)  # (N,) ignored rows point at class 0, then get zeroed
        picked = probs.gather(1, safe_targets.unsqueeze(1)).squeeze(1)  # (N,)
        log_picked = torch.log(picked)  # (N,)
        underflow = (picked < torch.finfo(picked.dtype).tiny).nonzero().squeeze(1)  # (n_u,), nearly always empty
        if underflow.numel():
            rows = h.index_select(0, underflow)  # (n_u, H)
            z = _scores(rows, weight, bias)  # (n_u, K)
            exact = z.gather(1, safe_targets[underflow].unsqueeze(1)).squeeze(1) - torch.logsumexp(z, dim=1)
            log_picked = log_picked.index_copy(0, underflow, exact)
        # Kept as an attribute, not a saved tensor: backward turns it into dz in place.
        ctx.probs, ctx.dz_ready = probs, False
        ctx.save_for_backward(h, weight, safe_targets, keep)
        return -torch.where(keep, log_picked, 0.0).sum()

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        h, weight, safe_targets, keep = ctx.saved_tensors
        dz = ctx.probs  # (N, K)
        if not ctx.dz_ready:
            dz.scatter_add_(1, safe_targets.unsqueeze(1), torch.full_like(dz[:, :1], -1.0))  # minus one-hot
            if not bool(keep.all()):
                dz[~keep] = 0.0
            ctx.dz_ready = True
        grad_h = (dz @ weight).mul_(grad) if ctx.needs_input_grad[0] else None  # (N, H)
        grad_w = dz.t() @ (h * grad) if ctx.needs_input_grad[1] else None  # (K, H)
        # g sum_i dz_i as the product dz^T (g 1): BLAS reads dz about twice as fast as sum(0) (not with a stride-0
        # vector, which misses BLAS: hence contiguous)
        grad_b = torch.mv(dz.t(), grad.expand(dz.shape[0]).contiguous()) if ctx.needs_input_grad[2] else None  # (K,)
        return grad_h, grad_w, grad_b, None


def _scores(h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """h W^T + b, a fresh (N, K) tensor; bias may be None."""
    return torch.mm(h, weight.t()) if bias is None else torch.addmm(bias, h, weight.t())


class AdaptiveSoftmax(nn.Module):
    """`nn.AdaptiveLogSoftmaxWithLoss` with a head bias; word ids must be ordered by descending frequency.

    The module's parameters and `log_prob` are torch's. The training loss is computed here from the same
    weights, as two exact cross-entropies whose sum is -log p(w):
      head  over [shortlist words, one entry per tail cluster]: every target, with its word or its cluster;
      tail  over the words of cluster c: only the targets in c (a (n_c, H) slice of h).
    """

    def __init__(self, in_features: int, vocab_size: int, cutoffs: tuple[int, ...], div_value: float):
        super().__init__()
        # Validates the cutoffs with a message naming them, before torch's terser check.
        adaptive_softmax_shapes(in_features, vocab_size, cutoffs, div_value)
        self.adaptive = nn.AdaptiveLogSoftmaxWithLoss(
            in_features, vocab_size, list(cutoffs), div_value=div_value, head_bias=True
        )
        self.bounds = (*cutoffs, vocab_size)

    def log_probs(self, h: torch.Tensor, extra_logits: torch.Tensor | None = None) -> torch.Tensor:
        _refuse_extra(extra_logits)
        flat = h.reshape(-1, h.shape[-1])  # (N, H)
        return self.adaptive.log_prob(flat).reshape(*h.shape[:-1], -1)  # (..., V)

    def nll_sum(
        self, h: torch.Tensor, targets: torch.Tensor, extra_logits: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, int]:
        _refuse_extra(extra_logits)
        flat = h.reshape(-1, h.shape[-1])  # (N, H)
        t = targets.reshape(-1)  # (N,)
        n = int((t != IGNORE_INDEX).sum())
        shortlist = self.bounds[0]
        # Head class: the word itself if in the shortlist, else shortlist + its cluster's index.
        # Ignored targets (-100) stay -100 here, and fall in no tail cluster below.
        head_targets = t.clone()  # (N,)
        total = None
        for c in range(len(self.bounds) - 1):
            low, high = self.bounds[c], self.bounds[c + 1]
            rows = ((t >= low) & (t < high)).nonzero().squeeze(1)  # (n_c,)
            if rows.numel() == 0:
                continue
            head_targets[rows] = shortlist + c
            proj, out = self.adaptive.tail[c]
            z = proj(flat.index_select(0, rows))  # (n_c, H / div^(c+1))
            tail_nll = LinearCrossEntropy.apply(z, out.weight, None, t.index_select(0, rows) - low)
            total = tail_nll if total is None else total + tail_nll
        head = self.adaptive.head
        head_nll = LinearCrossEntropy.apply(flat, head.weight, head.bias, head_targets)
        return (head_nll if total is None else head_nll + total), n


def _refuse_extra(extra_logits: torch.Tensor | None) -> None:
    if extra_logits is not None:
        raise ValueError("the adaptive softmax cannot add extra logits (direct connections need output='full')")


def build_output(
    kind: str, in_features: int, vocab_size: int, cutoffs: tuple[int, ...], div_value: float
) -> FullSoftmax | AdaptiveSoftmax:
    if kind == "full":
        return FullSoftmax(in_features, vocab_size)
    if kind == "adaptive":
        return AdaptiveSoftmax(in_features, vocab_size, cutoffs, div_value)
    raise ValueError(f"output must be 'full' or 'adaptive', got {kind!r}")
