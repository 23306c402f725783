"""Configuration: schema validation, frozen run configs, study expansion and run ids.

The schema (``schemas/config.schema.yaml``, linked from ``workflow/schemas/``, read and applied by
`rnnbench.config.schema`) is the only place where a setting's type, range and default are written down. Everything
here derives from it:

    config.yaml --validate--> Config --expand studies--> RunConfig per (combination of varied values, seed)
                                                          run_id = "<family>-<corpus>-<sha1 of settings>"

Two studies that resolve to the same settings get the same ``run_id`` and so share one training job; a
changed setting changes the hash and makes a new run, so an old result is never silently reused.
Rules between settings are `rnnbench.config.constraints`' (checked here with the corpus's known sizes, so that they
fail before any job, naming the key where the user set it); config files are read by `configfile`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from rnnbench.config import constraints, locations
from rnnbench.config.analyses import Analysis, AnalysisPoint, analysis_points, network_count, parse_analysis
from rnnbench.config.comparison import Comparison, parse_comparison
from rnnbench.config.files import (
    ConfigError,
    check_config_files,
    config_files_in_merge_order,
    merge_config_files,
    quoted,
    read_yaml,
)
from rnnbench.config.schema import (
    as_schema_types,
    check_settings,
    checked_corpus_options,
    json_settings,
    run_defaults,
    run_settings_schema,
    schema,
    validate,
)

__all__ = [  # the config files' functions are part of this module's interface
    "Config",
    "ConfigError",
    "RunConfig",
    "Study",
    "check_settings",
    "check_training_slots",
    "checked_corpus_options",
    "check_config_files",
    "config_files_in_merge_order",
    "json_settings",
    "load_config",
    "merge_config_files",
    "read_yaml",
    "run_defaults",
    "schema",
]

# Settings that change how fast a run goes but not what it computes: left out of the run id so that a
# cluster user with more cores reuses the same results.
NON_SEMANTIC_SETTINGS = ("threads",)

# Settings added after run ids existed, each with the value every run had before it (what the code did then): at
# that value a setting is left out of `RunConfig.settings`, and so of the run id, so that no earlier run changes
# id; any other value enters it and makes a new run.
ADDED_AFTER_IDS = {"segments": "stream", "weight_decay": 0.0}

# Runs a config's studies may expand to (each combination of varied values times each seed, before shared runs
# are counted once), with the networks its analyses measure (config.analyses.network_count): each run is checked
# when the config loads (a few milliseconds apiece) and becomes a job of the DAG, and each network is expanded
# when the config loads and measured in its analysis's job. config/config.yaml's 183 runs and 46 networks take
# under a second to check; 2,000 take about five.
MAX_RUNS = 2_000


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
    segments: str
    clip_mode: str
    clip: float
    optimizer: str
    lr: float
    weight_decay: float
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
        from rnnbench.data.facts import CorpusError

        try:
            known = _known_sizes(self.corpus, json.dumps(dict(self.corpus_options), sort_keys=True))
        except CorpusError as err:
            raise ConfigError(f"{named('corpus_options')}: {err}") from None
        settings = self.to_dict()
        for broken in (
            constraints.broken_run_rule(settings, known.has_sentences),
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
        digest = hashlib.sha1(json.dumps(dict(self.corpus_options), sort_keys=True).encode()).hexdigest()[:8]
        return f"{self.corpus}-{digest}"

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
        data = self.to_dict()
        unused |= {k for k, value in ADDED_AFTER_IDS.items() if data[k] == value}
        return {k: v for k, v in data.items() if k not in unused}

    def identity(self) -> dict[str, Any]:
        """What the run id hashes: the settings, and the corpus's preparation version once it is above 1 (left
        out at 1, so that the ids of runs from before versions existed hold)."""
        from rnnbench.data.facts import PREPARATION

        version = PREPARATION[self.corpus]
        return self.settings() | ({"corpus_preparation": version} if version != 1 else {})

    @property
    def run_id(self) -> str:
        """Readable prefix + a hash of every setting that can change the result."""
        digest = hashlib.sha1(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()[:10]
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
    # What the study is evidence for in the findings (rnnbench.findings): not a run setting, so no run id sees it.
    roles: tuple[str, ...] = ()

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
        here = f"studies.{self.name}"
        sources = {k: f"run.{k}" for k in run_settings_schema()["properties"]}
        sources |= {"family": f"{here}.family", "corpus": f"{here}.corpus", "seed": f"{here}.seeds"}
        sources |= {k: f"{here}.fixed.{k}" for k in self.fixed} | {k: f"run_overrides.{k}" for k in overrides}
        sources |= {k: f"{here}.vary.{k}" for k in keys}
        seen: dict[str, dict[str, Any]] = {}
        for values in itertools.product(*(self.vary[k] for k in keys)):
            for seed in self.seeds:
                point = dict(zip(keys, values, strict=True)) | {"seed": seed}
                settings = {
                    **base,
                    "family": self.family,
                    "corpus": self.corpus,
                    **self.fixed,
                    **overrides,
                    **point,
                    "threads": threads,
                }
                config = RunConfig.from_settings(settings, where=here, sources=sources)
                if config.run_id in seen:  # e.g. a varied setting this family's model does not read
                    raise ConfigError(
                        f"{here}.vary: {seen[config.run_id]} and {point} are the same run ({config.run_id}); the "
                        f"study would count it twice. Vary only settings that change the run."
                    )
                seen[config.run_id] = point
                yield point, config


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
    analyses: Mapping[str, Analysis] = field(default_factory=dict)
    comparison: Comparison = field(default_factory=Comparison)  # studies beside the published rows

    def analysis_points(self, name: str) -> list[AnalysisPoint]:
        """The networks of analysis `name` (rnnbench.config.analyses): untrained specs or study runs at snapshots."""
        return analysis_points(self.analyses[name], self)

    def study_runs(self, study: str) -> list[tuple[dict[str, Any], RunConfig]]:
        return list(self.studies[study].runs(self.run, self.run_overrides, self.threads))

    def dynamic_run_ids(self) -> list[str]:
        """The runs scored under dynamic evaluation: every run of the comparison's rnn studies, once (none
        without `comparison.dynamic_evaluation`)."""
        if self.comparison.dynamic_evaluation is None:
            return []
        studies = self.comparison.family_studies("rnn")
        return list(dict.fromkeys(cfg.run_id for study in studies for _, cfg in self.study_runs(study)))

    def all_runs(self) -> dict[str, RunConfig]:
        """Every run of every study, keyed by run id (shared runs appear once)."""
        return {cfg.run_id: cfg for name in self.studies for _, cfg in self.study_runs(name)}


def check_training_slots(given: Any, default: int) -> None:
    """``--resources training_slots=N`` (workflow/rules/common.smk): how many training runs may run at once. None:
    not given (``default``, one per core, applies)."""
    if given is None:
        return
    if isinstance(given, bool) or not isinstance(given, int) or given < 1:
        raise ConfigError(
            f"--resources training_slots={quoted(given)}: below 1, Snakemake would scale each training job's need "
            f"down to it and start every run at once; allowed: an integer >= 1 (training runs at once; without "
            f"the option, {default}: one per core)"
        )


def load_config(source: str | Path | Mapping[str, Any], *, checkout: str | Path | None = None) -> Config:
    """Read (if a path), validate and resolve a workflow configuration; raise ConfigError naming the key.

    ``checkout`` is the workflow's folder (default: the one this package runs from): no output goes into its
    source tree (rnnbench.config.locations)."""
    raw = read_yaml(source) if isinstance(source, (str, Path)) else dict(source)
    validate(raw, schema(), "config")
    top = schema()["properties"]
    resolved = {key: raw.get(key, prop.get("default")) for key, prop in top.items()}
    checkout = checkout if checkout is not None else locations.package_checkout()
    results_dir = output_folder(
        resolved["results_dir"], "config.results_dir", checkout, "e.g. results/<name>", "every output at /runs, /tables"
    )
    cache_dir, cache_named = locations.resolve("cache_dir", resolved["cache_dir"], "config.cache_dir")
    # whether the cache can be written is asked once the corpora it must hold are known (_check_cache)
    output_folder(
        cache_dir, cache_named, checkout, "e.g. data/cache", "the cache in the working directory", writable=False
    )
    studies = {name: _study(name, body) for name, body in resolved["studies"].items()}
    analyses = {
        name: parse_analysis(name, body, studies, schema()["$defs"]["analysis"]["properties"])
        for name, body in resolved["analyses"].items()
    }
    _check_run_count(studies, analyses)
    config = Config(
        data_dir=locations.expand(resolved["data_dir"]) if resolved["data_dir"] is not None else None,
        cache_dir=cache_dir,
        results_dir=results_dir,
        threads=resolved["threads"],
        run=dict(resolved["run"]),
        run_overrides=dict(resolved["run_overrides"]),
        studies=studies,
        tables={
            **{key: prop["default"] for key, prop in top["tables"]["properties"].items()},
            **resolved["tables"],
        },
        analyses=analyses,
        comparison=parse_comparison(resolved["comparison"], studies, top["comparison"]["properties"]),
    )
    data_dir, data_named = locations.resolve("data_dir", config.data_dir, "config.data_dir")
    if data_dir is not None and not Path(data_dir).is_dir():
        found = "a file" if Path(data_dir).exists() else "nothing"
        instead = "null to use $RNNBENCH_DATA or download" if data_named.startswith("config.") else "unset to download"
        raise ConfigError(
            f"{data_named}: {data_dir!r} is not a folder (found {found} there); allowed: a folder holding "
            f"ptb/ and brown/, or {instead}"
        )
    _check_reference(config.comparison, checkout)
    for name in studies:  # expand now, so a bad varied value fails before any job
        config.study_runs(name)
    for name in config.analyses:  # likewise an analysis's study, snapshots and figure settings
        config.analysis_points(name)
    _check_cache(config, cache_named)
    return config


def output_folder(
    folder: str, named: str, checkout: str | Path | None, example: str, if_empty: str, *, writable: bool = True
) -> str:
    """``folder`` (``~`` expanded) if outputs may go there, else a ConfigError naming ``named`` (rnnbench.config.locations);
    ``if_empty`` says where an empty one would put them."""
    allowed = f"allowed: a folder of its own outside the checkout's source tree ({example}; made if missing)"
    if not folder:
        raise ConfigError(f"{named}: {folder!r} is empty, which would put {if_empty}; {allowed}")
    expanded = locations.expand(folder)
    problem = locations.source_tree_problem(expanded, checkout) or (
        locations.unwritable(expanded) if writable else None
    )
    if problem:
        shown = f"{folder!r}" + (f" ({expanded})" if expanded != folder else "")
        raise ConfigError(f"{named}: {shown} {problem}; {allowed}")
    return expanded


def _check_run_count(studies: Mapping[str, Study], analyses: Mapping[str, Analysis]) -> None:
    """Refuse a config whose studies and analyses expand to more than MAX_RUNS runs and networks, counted before
    any is expanded."""
    counts = {f"studies.{name}": math.prod(map(len, s.vary.values())) * len(s.seeds) for name, s in studies.items()}
    runs = sum(counts.values())
    networks = {f"analyses.{name}": network_count(a, studies) for name, a in analyses.items()}
    counts |= networks
    if sum(counts.values()) <= MAX_RUNS:
        return
    largest = max(counts, key=counts.__getitem__)
    if largest.startswith("studies.") or analyses[largest.removeprefix("analyses.")].study is None:
        how = "its varied values times its seeds"
    else:
        analysis = analyses[largest.removeprefix("analyses.")]
        how = f"the runs of studies.{analysis.study} it keeps times its snapshots"
    studied = f"{len(studies):,} {'study expands' if len(studies) == 1 else 'studies expand'} to {runs:,} runs"
    if not sum(networks.values()):
        raise ConfigError(
            f"config.studies: {studied} (the largest, {largest}, to {counts[largest]:,}: {how}); allowed: at most "
            f"{MAX_RUNS:,} runs in one config"
        )
    raise ConfigError(
        f"config.studies, config.analyses: {studied} and {len(analyses):,} "
        f"{'analysis' if len(analyses) == 1 else 'analyses'} to {sum(networks.values()):,} networks, "
        f"{sum(counts.values()):,} in all (the largest, {largest}, to {counts[largest]:,}: {how}); allowed: at most "
        f"{MAX_RUNS:,} runs and analysed networks in one config"
    )


def _check_reference(comparison: Comparison, checkout: str | Path | None) -> None:
    """The comparison's reference folder (relative to the workflow's folder, as its rule reads it) must hold
    reference runs: a folder that is missing or holds none would silently leave every reference row out."""
    if not comparison or comparison.reference is None:
        return
    folder = Path(checkout if checkout is not None else ".") / locations.expand(comparison.reference)
    runs = folder / "runs"  # rnnbench.results.reference's layout (not imported: it needs pandas)
    if not folder.is_dir():
        problem = f"is not a folder (found {'a file' if folder.exists() else 'nothing'} at {folder})"
    elif not (runs.is_dir() and any(p.is_dir() for p in runs.iterdir())):
        problem = f"holds no reference runs (no runs/<run_id>/ folder under {folder})"
    else:
        return
    raise ConfigError(
        f"comparison.reference: {quoted(comparison.reference)} {problem}; allowed: a folder of reference runs as "
        f"`rnnbench reference collect` writes them, relative to the workflow's folder, or null for none"
    )


def _check_cache(config: Config, named: str) -> None:
    """A cache folder that cannot be written is refused unless it already holds every corpus the config reads
    (a shared, read-only cache): the job would fail building the first one it lacks."""
    problem = locations.unwritable(config.cache_dir)
    if problem is None:
        return
    from rnnbench.data.corpora import cache_entry, resolve_options  # numpy: only for a cache that cannot be written

    needed = {cfg.corpus_key: (cfg.corpus, dict(cfg.corpus_options)) for cfg in config.all_runs().values()}
    needed |= {a.measure["corpus"]: (a.measure["corpus"], {}) for a in config.analyses.values() if a.study is None}
    missing = sorted(
        {
            name
            for name, options in needed.values()
            if not Path(f"{cache_entry(name, resolve_options(name, options), config.cache_dir)}.npz").is_file()
        }
    )
    if missing:
        raise ConfigError(
            f"{named}: {config.cache_dir!r} {problem}, and it lacks the prepared corpora {', '.join(missing)} this "
            f"config reads; allowed: a folder rnnbench can write (made if missing), or one that holds them"
        )


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
            validate(value, properties[key], f"{where}.vary.{key}[{i}]")
        _refuse_duplicates(f"{where}.vary.{key}", [as_schema_types({key: v}, properties)[key] for v in values], values)
        vary[key] = tuple(values)
    study_props = schema()["$defs"]["study"]["properties"]
    seeds = tuple(int(seed) for seed in body.get("seeds", study_props["seeds"]["default"]))
    _refuse_duplicates(f"{where}.seeds", list(seeds), list(seeds))
    metric = body.get("metric", study_props["metric"]["default"])
    if problem := constraints.metric_problem(metric, body["corpus"]):
        raise ConfigError(f"{where}.metric: {problem}")
    return Study(
        name=name,
        description=body.get("description", study_props["description"]["default"]),
        family=body["family"],
        corpus=body["corpus"],
        fixed=fixed,
        vary=vary,
        seeds=seeds,
        metric=metric,
        roles=tuple(body.get("roles", study_props["roles"]["default"])),
    )


def _refuse_duplicates(where: str, normalized: list[Any], given: Sequence[Any]) -> None:
    """A value listed twice (``2`` and ``2.0`` are one value) would be one run counted twice in a summary."""
    for j, value in enumerate(normalized):
        i = normalized.index(value)
        if i != j:
            raise ConfigError(f"{where}[{j}]: {given[j]!r} repeats {where}[{i}] ({given[i]!r}); list each value once")


@cache
def _known_sizes(corpus: str, options_json: str):
    from rnnbench.data.facts import known_sizes

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
