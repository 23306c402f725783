"""Constraints between settings: the schema checks one setting at a time, these check settings together.

Each rule is written here once and nowhere else. `config.runs.RunConfig` applies them when a configuration
is loaded, so that a bad combination fails before any job runs, and `models.ModelConfig` applies the
model's rules when a model is built. Pure Python: no torch, so a config check stays import-light.

A broken rule comes back as `Broken(keys, message)`: `keys[0]` is the setting the message is about,
the other keys the settings it conflicts with, so that a caller can say where each of them was set.
Settings absent from the mapping are not in play (a shape function passes only the ones it has).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Each adaptive-softmax tail cluster projects the hidden vector down by this factor per cluster (torch's default).
ADAPTIVE_DIV_VALUE = 4.0


@dataclass(frozen=True)
class Broken:
    keys: tuple[str, ...]
    message: str


def broken_model_rule(s: Mapping[str, Any], vocab_size: int | None = None) -> Broken | None:
    """The first rule of the model's architecture that ``s`` breaks, or None.

    ``vocab_size`` None: not known yet (a config whose corpus size is not known before it is read).
    """
    family, hidden, activation = s.get("family"), s.get("hidden"), s.get("activation")
    if family is not None and hidden == 0 and family != "ff":
        return Broken(("hidden", "family"), f"0 (no hidden layer) is allowed for family 'ff' only; {family} needs >= 1")
    if family == "lstm" and activation is not None and activation != "tanh":
        return Broken(
            ("activation", "family"),
            f"the LSTM's activations are fixed (sigmoid gates, tanh cell); allowed: 'tanh', got {activation!r}",
        )
    init = s.get("recurrent_init")
    if family is not None and init not in (None, "default") and family != "rnn":
        return Broken(
            ("recurrent_init", "family"),
            f"{init!r} sets an Elman network's one recurrent matrix; allowed with family 'rnn', or 'default'; "
            f"got family {family!r}",
        )
    if s.get("recurrent_scale", 1.0) != 1.0 and init in (None, "default"):
        return Broken(
            ("recurrent_scale", "recurrent_init"),
            f"the gain of an identity or orthogonal U is not read at recurrent_init 'default' (uniform in +-1/sqrt(H)); "
            f"allowed: 1, or recurrent_init 'identity' or 'orthogonal'; got {s['recurrent_scale']!r}",
        )
    if s.get("dropout_mask", "step") != "step" and family == "ff":
        return Broken(
            ("dropout_mask", "family"),
            "a mask shared by a sequence's steps needs steps: allowed with family 'rnn' or 'lstm', or 'step'; "
            "got family 'ff'",
        )
    if s.get("recurrent_dropout", 0.0) and family is not None and family != "rnn":
        return Broken(
            ("recurrent_dropout", "family"),
            f"it drops entries of an Elman network's one recurrent matrix; allowed with family 'rnn', or 0; "
            f"got family {family!r}",
        )
    if s.get("tie_weights") and (
        family == "ff" or s.get("output", "full") != "full" or s.get("embed_dim") != s.get("hidden")
    ):
        return Broken(
            ("tie_weights", "family", "output", "embed_dim", "hidden"),
            "true reads the embedding table as the output matrix: it needs family 'rnn' or 'lstm', output 'full' and "
            f"embed_dim equal to hidden; got family {family!r}, output {s.get('output', 'full')!r}, "
            f"embed_dim {s.get('embed_dim')!r}, hidden {hidden!r}",
        )
    if s.get("direct") and (family != "ff" or hidden == 0 or s.get("output", "full") != "full"):
        return Broken(
            ("direct", "family", "hidden", "output"),
            "true needs family 'ff', hidden > 0 (with hidden 0 the output already reads the input) and output 'full'",
        )
    if s.get("output") == "adaptive":
        in_features = hidden if hidden else s.get("context", 1) * s.get("embed_dim", 1)
        problem = adaptive_problem(
            in_features, vocab_size, s.get("adaptive_cutoffs", ()), s.get("adaptive_div_value", ADAPTIVE_DIV_VALUE)
        )
        if problem:
            return Broken(("adaptive_cutoffs", "output", "hidden"), problem)
    return None


def adaptive_problem(in_features: int, vocab_size: int | None, cutoffs: Sequence[int], div_value: float) -> str | None:
    """What is wrong with an adaptive softmax's cluster bounds, or None.

    The head scores words [0, cutoffs[0]); tail cluster i scores [cutoffs[i], cutoffs[i+1]) through a
    projection to in_features // div_value**(i+1) units, which must leave at least one unit.
    """
    bounds = list(cutoffs)
    if not bounds or bounds != sorted(set(bounds)) or bounds[0] < 1:
        return f"cutoffs must be strictly increasing integers >= 1, got {bounds}"
    if vocab_size is not None and bounds[-1] >= vocab_size:
        return (
            f"cutoffs must be below the vocabulary size ({vocab_size:,}): allowed in [1, {vocab_size - 1}], got {bounds}. "
            f"Use output: full for a small vocabulary, or smaller cutoffs"
        )
    for i in range(len(bounds)):
        if int(in_features // (div_value ** (i + 1))) < 1:
            return (
                f"tail cluster {i} of cutoffs {bounds} gets no units: {in_features} input features "
                f"// {div_value:g}**{i + 1} = 0; use fewer cutoffs or a wider layer"
            )
    return None


def broken_run_rule(s: Mapping[str, Any], corpus_has_sentences: bool) -> Broken | None:
    """The first rule of a training run (beyond its model's) that ``s`` breaks, or None."""
    if s["bptt"] == 0 and s["family"] != "ff" and not corpus_has_sentences:
        return Broken(
            ("bptt", "corpus"),
            f"0 (full BPTT over whole sentences) needs a corpus with sentence boundaries; allowed with corpus "
            f"'agreement', got corpus {s['corpus']!r}. Use a truncation length >= 1",
        )
    if s.get("segments") == "sentence":
        if s["family"] == "ff":
            return Broken(
                ("segments", "family"),
                "'sentence' cuts the gradient within a recurrence, and family 'ff' has none (its windows are not "
                "truncated); allowed with family 'rnn' or 'lstm', or segments: 'stream'",
            )
        if not corpus_has_sentences:
            return Broken(
                ("segments", "corpus"),
                f"'sentence' reads whole sentences and needs a corpus with sentence boundaries; allowed with corpus "
                f"'agreement', got corpus {s['corpus']!r}. Use segments: 'stream'",
            )
    return None


def broken_clip_rule(s: Mapping[str, Any]) -> Broken | None:
    """A threshold relative to the median norm is a global-norm threshold; its reference is named only with it."""
    times = s.get("clip_times_median")
    if times is not None and s.get("clip_mode") != "norm":
        return Broken(
            ("clip_times_median", "clip_mode"),
            f"a multiple of the median global gradient norm sets a global-norm threshold; allowed with clip_mode "
            f"'norm', got clip_mode {s.get('clip_mode')!r}. Use clip_times_median: null and `clip` for that mode",
        )
    for key in ("clip_reference_lr", "clip_reference_seed"):
        if s.get(key) is not None and times is None:
            return Broken(
                (key, "clip_times_median"),
                "names the reference run of a threshold set by clip_times_median, which is null here, so it would "
                "change nothing but the run id; allowed: null, or a clip_times_median",
            )
    return None


def broken_batch_rule(s: Mapping[str, Any], max_tokens: Mapping[str, int]) -> Broken | None:
    """A recurrent run reading a stream cuts each split into batch columns (`data.batching.batchify`), and one
    input/target step needs two tokens per column. ``max_tokens``: split -> at most this many tokens (known
    before the corpus is read). Windows (ff) and whole sentences (bptt 0, or segments 'sentence') are batched by
    count: any size works."""
    if s["family"] == "ff" or s["bptt"] == 0 or s.get("segments") == "sentence":
        return None
    for key, limit, splits in (
        ("batch_size", "train_tokens", ("train",)),
        ("eval_batch_size", "eval_tokens", ("valid", "test")),
    ):
        for split in (name for name in splits if name in max_tokens):
            tokens = min(max_tokens[split], s[limit] or max_tokens[split])
            if tokens // s[key] < 2:
                return Broken(
                    (key, limit),
                    f"{s[key]:,} columns of the {s['corpus']} {split} stream of at most {tokens:,} tokens leave fewer "
                    f"than 2 tokens per column (one input and its target); allowed: <= {tokens // 2:,}",
                )
    return None


def broken_length_rule(s: Mapping[str, Any], max_tokens: Mapping[str, int]) -> Broken | None:
    """A segment or window longer than the training split holds. A recurrent run reading a stream walks each of its
    ``batch_size`` columns of ``train_tokens`` // ``batch_size`` tokens in segments of ``bptt`` steps, and a segment
    of k steps needs k + 1 tokens of its column (its inputs and the last target): a longer ``bptt`` would silently
    train on shorter segments. A feed-forward window of ``context`` words and its target needs ``context`` + 1
    tokens of the stream (windows are drawn from the whole stream and batched by count, so ``batch_size`` plays no
    part). ``max_tokens`` as in `broken_batch_rule`; run it after that rule (a column holds at least 2 tokens)."""
    if "train" not in max_tokens:
        return None
    tokens = min(max_tokens["train"], s["train_tokens"] or max_tokens["train"])
    source = "train_tokens" if s["train_tokens"] and s["train_tokens"] < max_tokens["train"] else "corpus"
    if s["family"] == "ff":
        if s["context"] + 1 > tokens:
            return Broken(
                ("context", source),
                f"{s['context']:,} words of context need windows of {s['context'] + 1:,} tokens, and the "
                f"{s['corpus']} train stream has at most {tokens:,}; allowed: <= {tokens - 1:,}",
            )
        return None
    if s["bptt"] == 0 or s.get("segments") == "sentence":  # whole sentences, cut or not: no columns of a stream
        return None
    column = tokens // s["batch_size"]
    if s["bptt"] + 1 > column:
        return Broken(
            ("bptt", "batch_size", source),
            f"a segment of {s['bptt']:,} steps needs {s['bptt'] + 1:,} tokens of a batch column, and the "
            f"{s['corpus']} train stream of at most {tokens:,} tokens in {s['batch_size']:,} columns (batch_size) holds "
            f"{column:,} per column; allowed: <= {column - 1:,}",
        )
    return None


def metric_problem(metric: str, corpus: str) -> str | None:
    """Agreement accuracy is measured on the agreement corpus's probes; no other corpus has them."""
    if metric == "agreement_accuracy" and corpus != "agreement":
        return f"'agreement_accuracy' is measured on the agreement corpus only; corpus {corpus!r} never produces it"
    return None


def broken_memory_rule(s: Mapping[str, Any], needed: int, available: int | None, parameters: int) -> Broken | None:
    """A model whose training needs more than the machine's memory (``needed`` bytes, rnnbench.params.training_bytes,
    against ``available``: None when unknown) fails in its first allocation; the widest size setting is named."""
    if available is None or needed <= available:
        return None
    key = "hidden" if s["hidden"] >= s["embed_dim"] else "embed_dim"
    copies = needed // parameters // 4
    return Broken(
        (key, "embed_dim" if key == "hidden" else "hidden", "optimizer"),
        f"{s[key]:,} makes a model of {parameters:,} parameters, which needs at least {needed:,} bytes to train "
        f"({parameters:,} x 4 bytes x {copies} copies: weights, gradients, best weights"
        f"{', two Adam moments' if s.get('optimizer') == 'adam' else ''}); allowed: a model that fits this "
        f"machine's memory, {available:,} bytes ({available / 2**30:,.1f} GiB)",
    )
