"""Studies: a model family and a corpus, the settings fixed and varied, and the seeds; each expands into runs.

    studies.<name> --parse_study--> Study --runs--> (varied values + seed, RunConfig) per combination and seed

A study is parsed from its (schema-valid) config body, its varied values checked one by one; its runs are
`rnnbench.config.runs.RunConfig`s. A config's studies, with the networks its analyses measure, may expand to at
most MAX_RUNS, counted before any is expanded.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rnnbench.config import constraints
from rnnbench.config.analyses import Analysis, network_count
from rnnbench.config.files import ConfigError
from rnnbench.config.runs import RunConfig
from rnnbench.config.schema import as_schema_types, run_settings_schema, schema, validate

# Runs a config's studies may expand to (each combination of varied values times each seed, before shared runs
# are counted once), with the networks its analyses measure (config.analyses.network_count): each run is checked
# when the config loads (a few milliseconds apiece) and becomes a job of the DAG, and each network is expanded
# when the config loads and measured in its analysis's job. config/config.yaml's 172 runs and 76 networks take
# under a second to check; 2,000 take about five.
MAX_RUNS = 2_000


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
    # The study whose recipe this one changes (the comparison lists the settings that differ): no run id sees it.
    departs_from: str | None = None

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


def parse_study(name: str, body: Mapping[str, Any]) -> Study:
    """A study from its (schema-valid) config body; a mistake the schema cannot see is a ConfigError naming the key."""
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
        departs_from=body.get("departs_from", study_props["departs_from"]["default"]),
    )


def check_departures(studies: Mapping[str, Study]) -> None:
    """A study's ``departs_from`` names another study of the config, of its family and corpus: the settings of
    two models of different families or corpora are not one recipe changed."""
    for name, study in studies.items():
        base = study.departs_from
        if base is None:
            continue
        where = f"studies.{name}.departs_from"
        if base == name:
            raise ConfigError(f"{where}: {base!r} is this study; allowed: another study of this config")
        if base not in studies:
            raise ConfigError(f"{where}: no study {base!r} in this config; allowed: {', '.join(sorted(studies))}")
        theirs = studies[base]
        if (theirs.family, theirs.corpus) != (study.family, study.corpus):
            raise ConfigError(
                f"{where}: {base!r} is a {theirs.family} model on {theirs.corpus}, this study a {study.family} "
                f"model on {study.corpus}; allowed: a study of the same family and corpus"
            )


def _refuse_duplicates(where: str, normalized: list[Any], given: Sequence[Any]) -> None:
    """A value listed twice (``2`` and ``2.0`` are one value) would be one run counted twice in a summary."""
    for j, value in enumerate(normalized):
        i = normalized.index(value)
        if i != j:
            raise ConfigError(f"{where}[{j}]: {given[j]!r} repeats {where}[{i}] ({given[i]!r}); list each value once")


def check_run_count(studies: Mapping[str, Study], analyses: Mapping[str, Analysis]) -> None:
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
