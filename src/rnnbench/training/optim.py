"""The two update rules the loop trains with, plain SGD and Adam, without torch.optim; make_optimizer builds the
one a run's config asks for.

Building any torch.optim optimiser imports torch._dynamo (its methods are wrapped to keep the compiler out):
1.2-1.3 s of a fresh process on this machine (`python -X importtime -c "import torch._dynamo"`), paid once by
every training job on top of the ~1.6 s of torch's own import. The rules here are torch's own, computed by
the same kernels, so the parameters come out bitwise equal (tests/test_optim.py holds them to torch.optim
step by step):
  SGD   p <- p - lr g                                   (torch.optim.SGD without momentum or decay)
  Adam  m <- b1 m + (1 - b1) g,  v <- b2 v + (1 - b2) g^2,  t <- t + 1
        p <- p - lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
        in torch's fused CPU kernel (aten::_fused_adam_, what torch.optim.Adam(fused=True) runs): one pass
        over each parameter, where torch's default CPU Adam makes several with temporaries: about a quarter
        of an adaptive-softmax PTB step at one thread against 6% (benchmarks/profile_train_run.py --optimizer
        adam).
Weight decay, when a run sets it, is decoupled (torch.optim.AdamW's): before the update above, every weight
matrix and embedding table the step updates (not the biases) is multiplied by 1 - lr * weight_decay. With SGD
that is exactly the gradient step of an L2 penalty (weight_decay / 2) ||w||^2 on those parameters, Bengio et
al. (2003)'s regulariser, which spared the biases too.
Both keep torch.optim's interface as far as the loop uses it (param_groups[0]["lr"], zero_grad, step,
state_dict, load_state_dict) and its state_dict layout, so a checkpoint written by torch.optim resumes here.
aten::_fused_adam_ is an operator of torch's internals, not of its documented API: torch is pinned
(pyproject.toml), and the bitwise test against torch.optim.Adam(fused=True) fails on an upgrade that changes it.
It stays because the public path is measurably slower on the default run's settings: one epoch of the full PTB
training split (d = H = 200, adaptive softmax, Adam), torch.optim.Adam(fused=True) with the embedding's gradient
dense (it takes no sparse one) runs at 0.92x this module's tokens/s per epoch and 0.90x per whole run (median
over 3 interleaved rounds of the within-round ratio; best against best 0.96x and 0.92x): `python
benchmarks/bench_train_e2e.py --threads 1 --rounds 3 --train-tokens 929589 --eval-tokens 73760 --only
"train_run, adaptive, Adam" "torch.optim fused"`, torch 2.13.0 on 2 cores.
The loop takes the embeddings' gradients sparse (sparse_embedding_gradients): the rows a step used, which SGD
updates alone and Adam scatters into a zero table (RowScatter) for its dense pass.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

import torch

if TYPE_CHECKING:
    from rnnbench.config.runs import RunConfig


class RowUpdate(NamedTuple):
    """The update of the rows a sparse gradient uses, alone (``trial_updates(used_rows=True)``): every other row of
    the parameter moves as it would under any gradient with those rows, by Adam's moments or the decay alone."""

    rows: torch.Tensor  # (R,) the rows the gradient uses, each once
    values: torch.Tensor  # (R, ...) their update


class _Trial(NamedTuple):
    """A parameter as a trial update sees it: its index, the tensor its update is shaped like (the parameter, or the
    rows its sparse gradient uses), its gradient in that shape, and those rows (None: the whole parameter)."""

    index: int
    weights: torch.Tensor
    grad: torch.Tensor
    rows: torch.Tensor | None


class Optimizer:
    """One group of parameters and its learning rate, set between epochs through param_groups."""

    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float, weight_decay: float = 0.0):
        self.params = list(params)
        if not self.params:
            raise ValueError("the optimiser got no parameters to update")
        if weight_decay < 0:
            raise ValueError(f"weight_decay must be 0 or more, got {weight_decay}")
        self.weight_decay = float(weight_decay)
        self.param_groups = [{"params": self.params, "lr": float(lr)}]
        self.state: dict[int, dict[str, torch.Tensor]] = {}  # per parameter index, as torch.optim keys it

    @property
    def lr(self) -> float:
        return self.param_groups[0]["lr"]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop the gradients: the next backward writes them afresh instead of adding to zeros."""
        if not set_to_none:
            raise ValueError("only set_to_none=True is supported: gradients are dropped, not zeroed")
        for p in self.params:
            p.grad = None

    def _with_grad(self) -> list[tuple[int, torch.nn.Parameter]]:
        # A parameter the loss did not reach has no gradient and is left as it is, as torch.optim leaves it.
        return [(i, p) for i, p in enumerate(self.params) if p.grad is not None]

    def _decay(self, indexed: list[tuple[int, torch.nn.Parameter]]) -> None:
        """w <- w (1 - lr weight_decay) for the weight matrices and embeddings about to be updated: a bias (one
        dimension) is a threshold, not a weight, and shrinking it toward zero regularises nothing."""
        weights = [p for _, p in indexed if p.ndim >= 2]
        if self.weight_decay and weights:
            torch._foreach_mul_(weights, 1.0 - self.lr * self.weight_decay)

    def trial_updates(self, used_rows: bool = False) -> list[torch.Tensor | RowUpdate]:
        """The change step() would make now to each parameter with a gradient (``_with_grad``'s order), dense,
        from the gradients as they stand: at the optimiser's present state, rate and weight decay, with nothing
        changed (no parameter, moment or step count). Computing it for the gradient before clipping and again
        after is how rnnbench.training.clipping measures how far clipping turned the update. With ``used_rows``, a
        parameter whose gradient is sparse gets the update of the rows it uses alone (a RowUpdate): an embedding's
        other rows move the same under the clipped gradient and the unclipped one, so one trial of them is enough."""
        raise NotImplementedError

    def _trials(self, used_rows: bool) -> list[_Trial]:
        found = []
        for i, p in self._with_grad():
            if used_rows and p.grad.is_sparse:
                grad = p.grad.coalesce()  # a row repeated in the step's tokens summed into one
                rows = grad.indices()[0]
                found.append(_Trial(i, p.index_select(0, rows), grad.values(), rows))
            else:
                found.append(_Trial(i, p, _dense(p.grad), None))
        return found

    def _with_decay(self, updates: list[torch.Tensor], trials: list[_Trial]) -> list[torch.Tensor | RowUpdate]:
        """``updates`` plus the decay step() applies first (``_decay``): -lr weight_decay w on every weight matrix
        and embedding, the same whichever gradient the rest of the update came from; a row update as a RowUpdate."""
        pairs = [(u, t.weights) for u, t in zip(updates, trials, strict=True) if self.params[t.index].ndim >= 2]
        if self.weight_decay and pairs:
            torch._foreach_add_([u for u, _ in pairs], [w for _, w in pairs], alpha=-self.lr * self.weight_decay)
        return [u if t.rows is None else RowUpdate(t.rows, u) for u, t in zip(updates, trials, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        return {"state": self.state, "param_groups": [{"lr": self.lr, "params": list(range(len(self.params)))}]}

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        (group,) = saved["param_groups"]
        if len(group["params"]) != len(self.params):
            raise ValueError(
                f"the saved optimiser state is for {len(group['params'])} parameters, this model has {len(self.params)}"
            )
        self.param_groups[0]["lr"] = float(group["lr"])
        self._load_state(saved["state"])

    def _load_state(self, state: dict[int, dict[str, torch.Tensor]]) -> None:
        pass  # plain SGD keeps no state


class SGD(Optimizer):
    """p <- p - lr g: the word_language_model example's manual update, one pass per parameter (over the
    gradient's rows alone when it is sparse: see sparse_embedding_gradients)."""

    @torch.no_grad()
    def step(self) -> None:
        indexed = self._with_grad()
        self._decay(indexed)
        for _, p in indexed:
            p.add_(p.grad, alpha=-self.lr)

    def _adam_kernel(self, params, grads, exp_avgs, exp_avg_sqs, steps) -> None:
        """torch's fused Adam on these lists in place, at this optimiser's settings: the one kernel step() and
        trial_updates() both run (no AMSGrad maxima, weight decay applied apart by the callers)."""
        torch._fused_adam_(
            params,
            grads,
            exp_avgs,
            exp_avg_sqs,
            [],  # the running maxima of v, kept only by AMSGrad
            steps,
            lr=self.lr,
            beta1=self.betas[0],
            beta2=self.betas[1],
            weight_decay=0.0,
            eps=self.eps,
            amsgrad=False,
            maximize=False,
        )

    @torch.no_grad()
    def trial_updates(self, used_rows: bool = False) -> list[torch.Tensor | RowUpdate]:
        """-lr g (and the decay): without weight decay the update points where the gradient does."""
        trials = self._trials(used_rows)
        return self._with_decay(torch._foreach_mul([t.grad for t in trials], -self.lr), trials)


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015) with bias correction and torch's defaults for betas and eps; AdamW with a weight
    decay."""

    def __init__(
        self,
        params: Iterable[torch.nn.Parameter],
        lr: float,
        weight_decay: float = 0.0,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
    ):
        super().__init__(params, lr, weight_decay)
        self.betas, self.eps = betas, eps
        self._scatters: dict[int, RowScatter] = {}  # per parameter index, for the ones whose gradient is sparse

    @torch.no_grad()
    def step(self) -> None:
        indexed = self._with_grad()
        if not indexed:
            return
        # A parameter's state is made at its first update, as torch.optim makes it: the step count t (a float32
        # scalar tensor, which the fused kernel reads), the moments m and v.
        for i, p in indexed:
            if i not in self.state:
                self.state[i] = _fresh_state(p)
        self._decay(indexed)
        params = [p for _, p in indexed]
        states = [self.state[i] for i, _ in indexed]
        steps = [s["step"] for s in states]
        torch._foreach_add_(steps, 1)
        self._adam_kernel(
            params,
            [self._dense_gradient(i, p) for i, p in indexed],
            [s["exp_avg"] for s in states],
            [s["exp_avg_sq"] for s in states],
            steps,
        )

    def _adam_kernel(self, params, grads, exp_avgs, exp_avg_sqs, steps) -> None:
        """torch's fused Adam on these lists in place, at this optimiser's settings: the one kernel step() and
        trial_updates() both run (no AMSGrad maxima, weight decay applied apart by the callers)."""
        torch._fused_adam_(
            params,
            grads,
            exp_avgs,
            exp_avg_sqs,
            [],  # the running maxima of v, kept only by AMSGrad
            steps,
            lr=self.lr,
            beta1=self.betas[0],
            beta2=self.betas[1],
            weight_decay=0.0,
            eps=self.eps,
            amsgrad=False,
            maximize=False,
        )

    @torch.no_grad()
    def trial_updates(self, used_rows: bool = False) -> list[torch.Tensor | RowUpdate]:
        """The update step() takes, by step()'s own kernel on copies of the state (m, v, step count) and on zeros
        in place of the parameters, so that what it writes there is the update itself, bit for bit step()'s:

            t = step + 1    m' = b1 m + (1 - b1) g    v' = b2 v + (1 - b2) g^2
            update = -lr (m' / (1 - b1^t)) / (sqrt(v' / (1 - b2^t)) + eps)     (and the decay)

        A parameter not updated yet starts from step()'s fresh state (m = v = 0, step 0). The kernel on copies is
        cheaper than the same formula as foreach ops, each of which is one more pass over every parameter: about 2 ms
        against 5 for clipping_adam_ptb's network (1.25 million parameters) at one thread."""
        trials = self._trials(used_rows)
        if not trials:
            return []
        states = [self.state.get(t.index) or _fresh_state(self.params[t.index]) for t in trials]

        def copied(key: str) -> list[torch.Tensor]:  # the moments, or their rows
            return [
                s[key].clone() if t.rows is None else s[key].index_select(0, t.rows)
                for s, t in zip(states, trials, strict=True)
            ]

        updates = [torch.zeros_like(t.weights, memory_format=torch.preserve_format) for t in trials]
        self._adam_kernel(
            updates,
            [t.grad for t in trials],
            copied("exp_avg"),
            copied("exp_avg_sq"),
            torch._foreach_add([s["step"] for s in states], 1),
        )
        return self._with_decay(updates, trials)

    def _dense_gradient(self, i: int, p: torch.nn.Parameter) -> torch.Tensor:
        # The kernel takes dense gradients: Adam moves every row, its moments decaying where the gradient is zero.
        if not p.grad.is_sparse:
            return p.grad
        if i not in self._scatters:
            self._scatters[i] = RowScatter(p)
        return self._scatters[i].dense(p.grad)

    def _load_state(self, state: dict[int, dict[str, torch.Tensor]]) -> None:
        self.state = {
            int(i): {
                # torch.optim's own for-loop Adam writes the step count as a float32 tensor too; an integer
                # or a Python number (older checkpoints) becomes one.
                "step": torch.as_tensor(s["step"], dtype=torch.float32).clone(),
                "exp_avg": s["exp_avg"].clone(),
                "exp_avg_sq": s["exp_avg_sq"].clone(),
            }
            for i, s in state.items()
        }


def sparse_embedding_gradients(model: torch.nn.Module) -> None:
    """Have every embedding of the model hand its gradient back sparse: the rows a step's tokens used (at most
    700 of 10,000 in a PTB step), a row no token used being zero.

    The clipping's norm and rescaling then touch those rows alone, and so does SGD's update; Adam, whose moments
    move every row at every step, gets them written into a zero table (RowScatter) instead of backward's
    zero-filled 10,000 rows, the same gradient.

    An embedding whose table is also the output matrix (tie_weights) stays dense: the softmax's gradient has every row.
    """
    uses = collections.Counter(id(p) for _, p in model.named_parameters(remove_duplicate=False))
    for module in model.modules():
        if isinstance(module, torch.nn.Embedding) and uses[id(module.weight)] == 1:
            module.sparse = True


class RowScatter:
    """The dense form of a parameter's sparse gradients, kept in one table whose rows are all zero but the last
    gradient's: writing the next gradient zeroes the rows the previous one wrote, then writes its own, so a step
    touches the rows of two gradients, not the whole table."""

    def __init__(self, p: torch.Tensor):
        self.table = torch.zeros_like(p, memory_format=torch.contiguous_format)
        self.rows = torch.empty(0, dtype=torch.long)

    def dense(self, grad: torch.Tensor) -> torch.Tensor:
        """``grad`` as a dense tensor (the table itself, valid until the next call)."""
        grad = grad.coalesce()  # a row repeated in the step's tokens summed into one (a no-op once clipped)
        self.table.index_fill_(0, self.rows, 0.0)
        self.rows = grad.indices()[0]
        self.table.index_copy_(0, self.rows, grad.values())
        return self.table


def _dense(grad: torch.Tensor) -> torch.Tensor:
    """A gradient as a dense tensor: a sparse one's rows written into a new table of zeros (a repeated row summed),
    a dense one as it is."""
    return grad.to_dense() if grad.is_sparse else grad


def _fresh_state(p: torch.Tensor) -> dict[str, torch.Tensor]:
    return {
        "step": torch.zeros((), dtype=torch.float32),
        "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
        "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format),
    }


def make_optimizer(cfg: RunConfig, model: torch.nn.Module) -> Optimizer:
    """The update rule ``cfg.optimizer`` names, over the model's parameters at the run's rate and weight decay."""
    # torch's update rules without torch.optim's start-up cost: Adam fused; the embedding's gradient as the rows a
    # step used, not the whole table (the module's docstring says why each).
    sparse_embedding_gradients(model)
    rule = Adam if cfg.optimizer == "adam" else SGD
    return rule(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
