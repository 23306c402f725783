"""The plain contender both benchmarks measure against: PyTorch's word_language_model, written as that
example writes it (pytorch/examples, word_language_model/main.py and model.py), one layer, RNN_TANH.

    model       nn.Embedding -> nn.RNN(tanh) -> nn.Linear -> log_softmax, NLLLoss
    one step    state detached from the previous segment (repackage_hidden), model.zero_grad(),
                forward, backward, clip_grad_norm_, manual SGD update p <- p - lr * grad,
                total_loss += loss.item()
    evaluation  the stream batchified in columns of eval_batch_size, segments of bptt, loss.item() each

Kept in one place so that the step benchmark and the end-to-end benchmark agree on what "plain" means.
"""

from __future__ import annotations

import resource
import time

import torch
import torch.nn.functional as F
from torch import nn


class PlainRNNLM(nn.Module):
    """word_language_model's RNNModel('RNN_TANH', ntoken, ninp, nhid, nlayers=1), no dropout."""

    def __init__(self, vocab_size: int, embed_dim: int, hidden: int):
        super().__init__()
        self.vocab_size = vocab_size
        self.hidden = hidden
        self.encoder = nn.Embedding(vocab_size, embed_dim)
        self.rnn = nn.RNN(embed_dim, hidden, nonlinearity="tanh")
        self.decoder = nn.Linear(hidden, vocab_size)
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, tokens: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        emb = self.encoder(tokens)  # (T, B, d)
        out, h = self.rnn(emb, h)  # (T, B, H), (1, B, H)
        decoded = self.decoder(out).view(-1, self.vocab_size)  # (T*B, V)
        return F.log_softmax(decoded, dim=1), h

    def init_hidden(self, batch_size: int) -> torch.Tensor:
        return torch.zeros(1, batch_size, self.hidden)


def batchify(data: torch.Tensor, batch_size: int) -> torch.Tensor:
    steps = data.size(0) // batch_size
    return data[: steps * batch_size].view(batch_size, -1).t().contiguous()  # (T, B)


def get_batch(source: torch.Tensor, i: int, bptt: int) -> tuple[torch.Tensor, torch.Tensor]:
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i : i + seq_len], source[i + 1 : i + 1 + seq_len].reshape(-1)


class Timers:
    """Seconds spent in each part of the step, and the page faults taken in them; the benchmarks read them,
    the loops only add to them."""

    def __init__(self) -> None:
        self.forward = self.backward = self.update = 0.0
        self.steps = self.faults = 0


def minor_faults() -> int:
    """Page faults served without I/O so far in this process: a freed block handed back to the kernel and
    allocated again costs one per 4 KiB page."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def train_step(model, criterion, data, targets, hidden, lr: float, clip: float, timers: Timers | None = None):
    """One step exactly as word_language_model's train() takes it; returns (loss value, new hidden)."""
    faults0, t0 = minor_faults(), time.perf_counter()
    hidden = hidden.detach()  # repackage_hidden
    model.zero_grad()
    output, hidden = model(data, hidden)
    loss = criterion(output, targets)
    t1 = time.perf_counter()
    loss.backward()
    t2 = time.perf_counter()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
    t3 = time.perf_counter()
    if timers is not None:
        timers.forward += t1 - t0
        timers.backward += t2 - t1
        timers.update += t3 - t2
        timers.steps += 1
        timers.faults += minor_faults() - faults0
    return loss.item(), hidden


def train_epoch(
    model,
    train_data: torch.Tensor,
    *,
    bptt: int,
    lr: float,
    clip: float,
    log_interval: int = 200,
    timers: Timers | None = None,
) -> float:
    """One epoch over a batchified (T, B) stream; returns the mean training loss."""
    model.train()
    criterion = nn.NLLLoss()
    total_loss, n = 0.0, 0
    hidden = model.init_hidden(train_data.size(1))
    start = time.time()
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i, bptt)
        loss, hidden = train_step(model, criterion, data, targets, hidden, lr, clip, timers)
        total_loss += loss
        n += 1
        if batch % log_interval == 0 and batch > 0:
            elapsed = time.time() - start
            print(
                f"| {batch:5d} batches | lr {lr:02.2f} | ms/batch {elapsed * 1000 / log_interval:5.2f} | "
                f"loss {total_loss / n:5.2f}",
                end="\r",
            )
            start = time.time()
    return total_loss / max(n, 1)


@torch.no_grad()
def evaluate(model, data_source: torch.Tensor, *, bptt: int) -> float:
    """Mean NLL per token of a batchified (T, B) stream, as word_language_model's evaluate()."""
    model.eval()
    criterion = nn.NLLLoss()
    total_loss = 0.0
    hidden = model.init_hidden(data_source.size(1))
    for i in range(0, data_source.size(0) - 1, bptt):
        data, targets = get_batch(data_source, i, bptt)
        output, hidden = model(data, hidden)
        total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)
