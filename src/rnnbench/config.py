"""Configuration: schema validation, frozen run configs, study expansion and run ids.

The schema (``schemas/config.schema.yaml``, linked from ``workflow/schemas/``) is the only place where a
setting's type, range and default are written down. Everything here derives from it:

    config.yaml --validate--> Config --expand studies--> RunConfig per (combination of varied values, seed)
                                                          run_id = "<family>-<corpus>-<sha1 of settings>"

Two studies that resolve to the same settings get the same ``run_id`` and so share one training job; a
changed setting changes the hash and makes a new run, so an old result is never silently reused.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import jsonschema
import yaml

SCHEMA_RESOURCE = "schemas/config.schema.yaml"

# Settings that change how fast a run goes but not what it computes: left out of the run id so that a
# cluster user with more cores reuses the same results.
NON_SEMANTIC_SETTINGS = ("threads",)


class ConfigError(ValueError):
    """A configuration that does not match the schema; the message names the key and what is allowed."""


@cache
def schema() -> dict[str, Any]:
    text = resources.files("rnnbench").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    return yaml.safe_load(text)


def run_settings_schema() -> dict[str, Any]:
    return schema()["$defs"]["run_settings"]


def run_defaults() -> dict[str, Any]:
    """Every run setting's default, straight from the schema."""
    return {key: prop["default"] for key, prop in run_settings_schema()["properties"].items() if "default" in prop}


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
    activation: str
    impl: str
    output: str
    adaptive_cutoffs: tuple[int, ...]
    dropout: float
    batch_size: int
    bptt: int
    clip_mode: str
    clip: float
    optimizer: str
    lr: float
    schedule: str
    min_improvement: float
    max_epochs: int
    max_steps_per_epoch: int | None
    divergence_norm: float
    eval_batch_size: int
    steps_max_rows: int
    seed: int
    threads: int = 1

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], *, where: str = "run") -> "RunConfig":
        """Validate ``settings`` (defaults filled in) and build the frozen config."""
        merged = {**run_defaults(), **settings}
        threads = merged.pop("threads", 1)
        _validate(merged, run_settings_schema(), where)
        properties = run_settings_schema()["properties"]
        merged = _whole_numbers_as_int(merged, properties)
        merged["adaptive_cutoffs"] = tuple(int(c) for c in merged["adaptive_cutoffs"])
        merged["corpus_options"] = dict(
            sorted(_whole_numbers_as_int(merged["corpus_options"], properties["corpus_options"]["properties"]).items())
        )
        for key in ("lr", "clip", "dropout", "min_improvement", "divergence_norm"):
            merged[key] = float(merged[key])
        config = cls(**merged, threads=threads)
        config.check_consistency(where)
        return config

    def check_consistency(self, where: str = "run") -> None:
        """Rules that involve two settings at once (the schema checks one at a time)."""
        if self.bptt == 0 and self.family != "ff" and self.corpus != "agreement":
            raise ConfigError(
                f"{where}.bptt: 0 (full BPTT over whole sentences) needs a corpus with sentence boundaries; "
                f"allowed with corpus 'agreement', got corpus {self.corpus!r}. Use a truncation length >= 1."
            )
        # The model's own rules (rnnbench.models.ModelConfig), checked here too so that they fail before any job.
        if self.family != "ff" and self.hidden == 0:
            raise ConfigError(f"{where}.hidden: 0 (no hidden layer) is allowed for family 'ff' only; {self.family} needs >= 1")
        if self.family == "rnn" and self.impl == "fast" and self.activation == "sigmoid":
            raise ConfigError(
                f"{where}.activation: 'sigmoid' has no fast path (torch.nn.RNN implements 'tanh' and 'relu'); "
                f"allowed with impl 'reference' (same parameters, Python loop)"
            )
        if self.family == "lstm" and self.activation != "tanh":
            raise ConfigError(f"{where}.activation: the LSTM's activations are fixed; allowed: 'tanh', got {self.activation!r}")
        if self.direct and (self.family != "ff" or self.hidden == 0 or self.output != "full"):
            raise ConfigError(f"{where}.direct: true needs family 'ff', hidden > 0 and output 'full'")
        if self.output == "adaptive" and list(self.adaptive_cutoffs) != sorted(set(self.adaptive_cutoffs)):
            raise ConfigError(f"{where}.adaptive_cutoffs: must be strictly increasing, got {list(self.adaptive_cutoffs)}")
        opts = self.corpus_options
        if "min_distance" in opts and "max_distance" in opts and opts["min_distance"] > opts["max_distance"]:
            raise ConfigError(
                f"{where}.corpus_options: min_distance ({opts['min_distance']}) exceeds max_distance ({opts['max_distance']})"
            )

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["adaptive_cutoffs"] = list(self.adaptive_cutoffs)
        data["corpus_options"] = dict(self.corpus_options)
        return data

    @property
    def corpus_key(self) -> str:
        """Names one prepared corpus: runs that read the same corpus with the same options share it."""
        digest = hashlib.sha1(json.dumps(dict(self.corpus_options), sort_keys=True).encode()).hexdigest()[:8]
        return f"{self.corpus}-{digest}"

    def settings(self) -> dict[str, Any]:
        """Every setting that can change this run's result: all but NON_SEMANTIC_SETTINGS and those its
        model does not read, so that two studies differing only there share the run."""
        unused = set(NON_SEMANTIC_SETTINGS)
        if self.family == "ff":
            unused |= {"bptt", "impl"}  # windows, not segments; no recurrence
        else:
            unused |= {"context", "direct"}
        if self.output == "full":
            unused.add("adaptive_cutoffs")
        return {k: v for k, v in self.to_dict().items() if k not in unused}

    @property
    def run_id(self) -> str:
        """Readable prefix + a hash of every setting that can change the result."""
        digest = hashlib.sha1(json.dumps(self.settings(), sort_keys=True).encode()).hexdigest()[:10]
        return f"{self.family}-{self.corpus}-{digest}"


@dataclass(frozen=True)
class Study:
    name: str
    description: str
    family: str
    corpus: str
    fixed: Mapping[str, Any]
    vary: Mapping[str, tuple[Any, ...]]
    seeds: tuple[int, ...]
    metric: str

    @property
    def x(self) -> str:
        """The varied setting on the figure's x axis: the first one listed."""
        return next(iter(self.vary))

    def runs(
        self, base: Mapping[str, Any], overrides: Mapping[str, Any], threads: int
    ) -> Iterator[tuple[dict[str, Any], RunConfig]]:
        """Every (varied values + seed, run config) combination of the study.

        Precedence, lowest first: the config's ``run`` block, the study's family and corpus, its
        ``fixed`` settings, ``run_overrides``, and last the varied values and the seed.
        """
        keys = list(self.vary)
        for values in itertools.product(*(self.vary[k] for k in keys)):
            for seed in self.seeds:
                point = dict(zip(keys, values)) | {"seed": seed}
                settings = {
                    **base, "family": self.family, "corpus": self.corpus, **self.fixed, **overrides, **point,
                    "threads": threads,
                }
                yield point, RunConfig.from_settings(settings, where=f"studies.{self.name}")


@dataclass(frozen=True)
class Config:
    data_dir: str | None
    cache_dir: str
    results_dir: str
    threads: int
    run: Mapping[str, Any]
    run_overrides: Mapping[str, Any]
    studies: Mapping[str, Study]
    tables: Mapping[str, Any] = field(default_factory=dict)

    def study_runs(self, study: str) -> list[tuple[dict[str, Any], RunConfig]]:
        return list(self.studies[study].runs(self.run, self.run_overrides, self.threads))

    def all_runs(self) -> dict[str, RunConfig]:
        """Every run of every study, keyed by run id (shared runs appear once)."""
        return {cfg.run_id: cfg for name in self.studies for _, cfg in self.study_runs(name)}


def load_config(source: str | Path | Mapping[str, Any]) -> Config:
    """Read (if a path), validate and resolve a workflow configuration; raise ConfigError naming the key."""
    raw = yaml.safe_load(Path(source).read_text(encoding="utf-8")) if isinstance(source, (str, Path)) else dict(source)
    raw = raw or {}
    _validate(raw, schema(), "config")
    top = schema()["properties"]
    resolved = {key: raw.get(key, prop.get("default")) for key, prop in top.items()}
    studies = {name: _study(name, body) for name, body in resolved["studies"].items()}
    config = Config(
        data_dir=resolved["data_dir"],
        cache_dir=resolved["cache_dir"],
        results_dir=resolved["results_dir"],
        threads=resolved["threads"],
        run=dict(resolved["run"]),
        run_overrides=dict(resolved["run_overrides"]),
        studies=studies,
        tables={"worked": True, **resolved["tables"]},
    )
    for name in studies:  # expand now, so a bad varied value fails before any job
        config.study_runs(name)
    return config


def merge_config_files(paths: Sequence[str | Path]) -> dict[str, Any]:
    """Later files over earlier ones, dictionaries merged key by key (Snakemake's ``--configfile`` rule)."""
    merged: dict[str, Any] = {}
    for path in paths:
        _deep_update(merged, yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {})
    return merged


def _deep_update(target: dict[str, Any], source: Mapping[str, Any]) -> None:
    for key, value in source.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _deep_update(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def _study(name: str, body: Mapping[str, Any]) -> Study:
    where = f"studies.{name}"
    fixed = dict(body.get("fixed", {}))
    for key in ("family", "corpus"):
        if key in fixed:
            raise ConfigError(f"{where}.fixed.{key}: set the study's {key} once, at {where}.{key}, not in fixed")
    properties = run_settings_schema()["properties"]
    vary: dict[str, tuple[Any, ...]] = {}
    for key, values in body["vary"].items():
        if key not in properties or key in ("family", "corpus", "seed"):
            allowed = sorted(set(properties) - {"family", "corpus", "seed"})
            hint = " (list seeds under `seeds`)" if key == "seed" else ""
            raise ConfigError(f"{where}.vary.{key}: not a setting that can vary{hint}; allowed: {', '.join(allowed)}")
        if key in fixed:
            raise ConfigError(f"{where}.vary.{key}: also set in {where}.fixed; a setting is either fixed or varied")
        for i, value in enumerate(values):
            _validate(value, properties[key], f"{where}.vary.{key}[{i}]")
        vary[key] = tuple(values)
    study_props = schema()["$defs"]["study"]["properties"]
    return Study(
        name=name,
        description=body.get("description", study_props["description"]["default"]),
        family=body["family"],
        corpus=body["corpus"],
        fixed=fixed,
        vary=vary,
        seeds=tuple(body.get("seeds", study_props["seeds"]["default"])),
        metric=body.get("metric", study_props["metric"]["default"]),
    )


def _whole_numbers_as_int(values: Mapping[str, Any], properties: Mapping[str, Any]) -> dict[str, Any]:
    """JSON Schema accepts 200.0 where an integer is required; make it 200, so that sizes work as sizes
    and ``hidden: 200.0`` gets the same run id as ``hidden: 200``."""

    def integer(key: str) -> bool:
        kind = properties.get(key, {}).get("type", ())
        return "integer" in ([kind] if isinstance(kind, str) else kind)

    return {k: int(v) if isinstance(v, float) and integer(k) else v for k, v in values.items()}


def _validate(instance: Any, node: Mapping[str, Any], where: str) -> None:
    """Validate against a schema node; the first error becomes a ConfigError naming the key."""
    resolver_root = {**node, "$defs": schema()["$defs"]}
    validator = jsonschema.Draft202012Validator(resolver_root)
    errors = sorted(validator.iter_errors(instance), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if not errors:
        return
    error = errors[0]
    path = ".".join([where, *map(str, error.absolute_path)])
    raise ConfigError(f"{path}: {_explain(error)}")


def _explain(error: jsonschema.ValidationError) -> str:
    """The validator's message plus what is allowed, so a typo can be fixed without opening the schema."""
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unexpected = sorted(set(error.instance) - set(allowed))
        return f"unknown key(s) {', '.join(map(repr, unexpected))}; allowed: {', '.join(allowed)}"
    if error.validator == "enum":
        return f"{error.instance!r} is not allowed; allowed values: {', '.join(map(repr, error.validator_value))}"
    if error.validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bounds = {k: error.schema[k] for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if k in error.schema}
        return f"{error.instance!r} is out of range; allowed: {bounds}"
    if error.validator == "type":
        return f"{error.instance!r} has the wrong type; expected {error.validator_value}"
    return error.message
