"""A training run's settings, resolved and frozen: validated against the schema, checked by the rules between
settings, and named by a run id.

The schema (``schemas/config.schema.yaml``, read and applied by `rnnbench.config.schema`) gives every setting's
type, range and default; a study (`rnnbench.config.studies`) or the command line gives the values:

    settings --validate, check the rules--> RunConfig    run_id = "<family>-<corpus>-<sha1 of settings>"

Two studies that resolve to the same settings get the same ``run_id`` and so share one training job; a
changed setting changes the hash and makes a new run, so an old result is never silently reused.
Rules between settings are `rnnbench.config.constraints`' (checked here with the corpus's known sizes, so that they
fail before any job, naming the key where the user set it).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from rnnbench import paths
from rnnbench.config import constraints, updates
from rnnbench.config.files import ConfigError
from rnnbench.config.schema import as_schema_types, json_settings, run_defaults, run_settings_schema, validate

# Settings that change how fast a run goes but not what it computes: left out of the run id so that a
# cluster user with more cores reuses the same results.
NON_SEMANTIC_SETTINGS = ("threads",)

# Settings added after run ids existed, each with the value every run had before it (what the code did then): at
# that value a setting is left out of `RunConfig.settings`, and so of the run id, so that no earlier run changes
# id; any other value enters it and makes a new run.
ADDED_AFTER_IDS = {
    "segments": "stream",
    "weight_decay": 0.0,
    "max_steps": None,
    "clip_times_median": None,
    "clip_reference_lr": None,
    "clip_reference_seed": None,
    "recurrent_init": "default",
    "recurrent_scale": 1.0,
    "dropout_mask": "step",
    "recurrent_dropout": 0.0,
    "tie_weights": False,
}


@dataclass(frozen=True)
class RunConfig:
    """One fully resolved training run. Field names and defaults mirror the schema's ``run_settings``."""

    family: str
    corpus: str
    corpus_options: Mapping[str, Any]
    train_tokens: int | None
    eval_tokens: int | None
    embed_dim: int
    hidden: int
    context: int
    direct: bool
    tie_weights: bool
    activation: str
    recurrent_init: str
    recurrent_scale: float
    impl: str
    output: str
    adaptive_cutoffs: tuple[int, ...]
    dropout: float
    dropout_mask: str
    recurrent_dropout: float
    batch_size: int
    bptt: int
    segments: str
    clip_mode: str
    clip: float
    clip_times_median: float | None
    clip_reference_lr: float | None
    clip_reference_seed: int | None
    optimizer: str
    lr: float
    weight_decay: float
    schedule: str
    min_improvement: float
    max_epochs: int
    max_steps_per_epoch: int | None
    max_steps: int | None
    divergence_norm: float
    eval_batch_size: int
    steps_max_rows: int
    seed: int
    threads: int = 1

    @classmethod
    def from_settings(
        cls, settings: Mapping[str, Any], *, where: str = "run", sources: Mapping[str, str] | None = None
    ) -> RunConfig:
        """Validate ``settings`` (defaults filled in) and build the frozen config.

        ``sources`` names where each setting was given (``run.hidden``, ``studies.s.fixed.hidden``, ``--hidden``),
        so that an error names the key the user wrote; a setting not in it is named ``<where>.<key>``.
        """
        merged = {**run_defaults(), **settings}
        threads = merged.pop("threads", 1)
        named = _Namer(where, sources or {})
        validate(merged, run_settings_schema(), where, named)
        properties = run_settings_schema()["properties"]
        merged = as_schema_types(merged, properties)
        merged["corpus_options"] = dict(
            sorted(as_schema_types(merged["corpus_options"], properties["corpus_options"]["properties"]).items())
        )
        config = cls(**merged, threads=threads)
        config.check_rules(named)
        return config

    def check_rules(self, named: _Namer) -> None:
        """The rules between settings (rnnbench.config.constraints), with what the corpus's known sizes allow."""
        from rnnbench.data.corpus_facts import CorpusError

        try:
            known = _known_sizes(self.corpus, json.dumps(dict(self.corpus_options), sort_keys=True))
        except CorpusError as err:
            raise ConfigError(f"{named('corpus_options')}: {err}") from None
        settings = self.to_dict()
        for broken in (
            constraints.broken_run_rule(settings, known.has_sentences),
            constraints.broken_clip_rule(settings),
            constraints.broken_model_rule(settings, known.vocab_size),
            constraints.broken_batch_rule(settings, known.max_tokens),
            constraints.broken_length_rule(settings, known.max_tokens),
        ):
            if broken:
                raise ConfigError(named.broken(broken))
        if broken := _broken_memory_rule(settings, known.vocab_size):  # counted once the model's shape is valid
            raise ConfigError(named.broken(broken))

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["adaptive_cutoffs"] = list(self.adaptive_cutoffs)
        data["corpus_options"] = dict(self.corpus_options)
        return data

    def to_json(self) -> dict[str, Any]:
        """`to_dict` as config.json holds it (infinity as rnnbench.config.schema.INFINITY); `from_settings` reads it back."""
        return json_settings(self.to_dict())

    @property
    def corpus_key(self) -> str:
        """Names one prepared corpus: runs that read the same corpus with the same options share it."""
        return paths.corpus_key(self.corpus, self.corpus_options)

    @property
    def measures_update_cosine(self) -> bool:
        """Whether training measures how far clipping turns the optimiser's update (rnnbench.training.clipping):
        where clipping can act (a mode and a finite threshold) and the update is not -lr times the gradient (Adam,
        whose moments weigh the new gradient; SGD with weight decay, whose decay term clipping does not scale).
        Plain SGD's update turns exactly as its gradient does, which the clip cosine already measures."""
        clips = self.clip_mode != "none" and math.isfinite(self.clip)
        return clips and (self.optimizer != "sgd" or self.weight_decay > 0)

    def settings(self) -> dict[str, Any]:
        """Every setting that can change this run's result: all but NON_SEMANTIC_SETTINGS, those its
        model does not read, so that two studies differing only there share the run, and those of
        ADDED_AFTER_IDS at the value they are left out at."""
        unused = set(NON_SEMANTIC_SETTINGS)
        if self.family == "ff":
            unused |= {"bptt", "impl"}  # windows, not segments; no recurrence
        else:
            unused |= {"context", "direct"}
        if self.bptt == 0:
            unused.add("segments")  # whole sentences, never cut: full-sentence BPTT either way
        if self.output == "full":
            unused.add("adaptive_cutoffs")
        if self.clip_times_median is not None:
            unused.add("clip")  # resolved from the reference's median norm, which the run id names instead
            if self.clip_times_median == math.inf:
                unused |= {"clip_reference_lr", "clip_reference_seed"}  # never clips: no reference
        data = self.to_dict()
        # The updates it takes, not how the epochs and the step budget were written (rnnbench.config.updates.budget).
        data["max_epochs"], data["max_steps"] = self.budget
        unused |= {k for k, value in ADDED_AFTER_IDS.items() if data[k] == value}
        return {k: v for k, v in data.items() if k not in unused}

    @property
    def budget(self) -> tuple[int, int | None]:
        """(max_epochs, max_steps) as the run takes them: the fewest epochs that hold its updates, and a step cap only
        where it stops an epoch part way, where the corpus's sizes give an epoch's updates (rnnbench.config.updates)."""
        if self.max_steps is None:
            return self.max_epochs, None
        return updates.budget(
            self.to_dict(), _known_sizes(self.corpus, json.dumps(dict(self.corpus_options), sort_keys=True))
        )

    def identity(self) -> dict[str, Any]:
        """What the run id hashes: the settings, and the corpus's preparation version once it is above 1 (left
        out at 1, so that the ids of runs from before versions existed hold)."""
        from rnnbench.data.corpus_facts import PREPARATION

        version = PREPARATION[self.corpus]
        return self.settings() | ({"corpus_preparation": version} if version != 1 else {})

    def clip_reference(self) -> RunConfig | None:
        """The run whose median pre-clip norm sets this run's threshold (``clip_times_median``): this run never
        clipped (``clip_times_median`` .inf), at ``clip_reference_lr`` and ``clip_reference_seed`` (each, when null,
        this run's own); None for a run whose threshold is its ``clip``, or that never clips."""
        if self.clip_times_median is None or self.clip_times_median == math.inf:
            return None
        return dataclasses.replace(
            self,
            clip_times_median=math.inf,
            lr=self.clip_reference_lr if self.clip_reference_lr is not None else self.lr,
            seed=self.clip_reference_seed if self.clip_reference_seed is not None else self.seed,
        )

    def with_clip_from(self, reference: Mapping[str, Any] | None) -> RunConfig:
        """This run with its threshold resolved: ``clip_times_median`` times the median pre-clip gradient norm
        (``grad_norm_median``) of its reference's metrics.json, as ``clip``; the run id is unchanged (it names the
        multiple and the reference, not the number). A run whose threshold is its ``clip``, or that never clips,
        comes back as it is (``.inf`` times any norm is .inf). A reference that is another run's, that diverged,
        or that measured no norm is refused: it has no typical norm to set a threshold from."""
        if self.clip_times_median == math.inf:
            return dataclasses.replace(self, clip=math.inf)
        expected = self.clip_reference()
        if expected is None:
            return self
        named = f"the reference of run {self.run_id} (clip_times_median {self.clip_times_median:g})"
        if reference is None:
            raise ConfigError(f"{named} is run {expected.run_id}, whose metrics were not given: train it first")
        if reference.get("run_id") != expected.run_id:
            raise ConfigError(
                f"{named} is run {expected.run_id}; the metrics given are run {reference.get('run_id')}'s"
            )
        if reference.get("diverged"):
            raise ConfigError(
                f"{named}, run {expected.run_id}, diverged at step {reference.get('diverged_step')}: a run that diverges "
                f"unclipped has no typical norm. Set clip_reference_lr to a rate where unclipped training does not "
                f"diverge (now {expected.lr:g})"
            )
        median = reference.get("grad_norm_median")
        if not isinstance(median, (int, float)) or not math.isfinite(median) or median <= 0:
            raise ConfigError(f"{named}, run {expected.run_id}, measured no median gradient norm ({median!r})")
        return dataclasses.replace(self, clip=self.clip_times_median * float(median))

    @property
    def run_id(self) -> str:
        """Readable prefix + a hash of every setting that can change the result."""
        digest = hashlib.sha1(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()[:10]
        return f"{self.family}-{self.corpus}-{digest}"


@cache
def _known_sizes(corpus: str, options_json: str):
    from rnnbench.data.corpus_facts import known_sizes

    return known_sizes(corpus, json.loads(options_json))


def machine_memory() -> int | None:
    """The machine's physical memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _broken_memory_rule(settings: Mapping[str, Any], vocab_size: int | None) -> constraints.Broken | None:
    """What the config accepts, the machine can run: a model too large for its memory is refused at load."""
    if vocab_size is None:
        return None
    from rnnbench.params import run_parameters, training_bytes

    parameters = run_parameters(settings, vocab_size)
    return constraints.broken_memory_rule(settings, training_bytes(settings, vocab_size), machine_memory(), parameters)


class _Namer:
    """Names a run setting by where the user gave it: ``named("hidden")`` -> ``studies.s.fixed.hidden``."""

    def __init__(self, where: str, sources: Mapping[str, str]):
        self.where, self.sources = where, sources

    def __call__(self, key: str) -> str:
        return self.sources.get(key, f"{self.where}.{key}")

    def broken(self, broken: constraints.Broken) -> str:
        first, *others = broken.keys
        also = "; ".join(f"{k} from {self(k)}" for k in others if k in self.sources)
        return f"{self(first)}: {broken.message}" + (f" ({also})" if also else "")
