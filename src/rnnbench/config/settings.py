"""The workflow's config as a whole: read, validated and resolved by `load_config`, every mistake refused before any
job runs, naming the key.

The schema (``schemas/config.schema.yaml``, linked from ``workflow/schemas/``, read and applied by
`rnnbench.config.schema`) is the only place where a setting's type, range and default are written down. Everything
here derives from it:

    config.yaml --validate--> Config --expand studies--> RunConfig per (combination of varied values, seed)

Its parts are resolved by their own modules: the folders by `rnnbench.config.locations`, the studies and their
runs by `rnnbench.config.studies` and `rnnbench.config.runs`, the analyses by `rnnbench.config.analyses`, the
comparison by `rnnbench.config.comparison`; config files are read by `rnnbench.config.files`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rnnbench.config import locations
from rnnbench.config.analyses import Analysis, AnalysisPoint, analysis_points, parse_analysis
from rnnbench.config.comparison import Comparison, parse_comparison
from rnnbench.config.files import ConfigError, quoted, read_yaml
from rnnbench.config.runs import RunConfig
from rnnbench.config.schema import schema, validate
from rnnbench.config.studies import Study, check_departures, check_run_count, parse_study


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
        """Every run of every study, keyed by run id (shared runs appear once), and the reference of each run whose
        threshold is relative to a measured norm (`RunConfig.clip_reference`), which trains first, in a study or not."""
        runs = {cfg.run_id: cfg for name in self.studies for _, cfg in self.study_runs(name)}
        for cfg in list(runs.values()):
            if (reference := cfg.clip_reference()) is not None:
                runs.setdefault(reference.run_id, reference)
        return runs


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
    studies = {name: parse_study(name, body) for name, body in resolved["studies"].items()}
    analyses = {
        name: parse_analysis(name, body, studies, schema()["$defs"]["analysis"]["properties"])
        for name, body in resolved["analyses"].items()
    }
    check_run_count(studies, analyses)
    check_departures(studies)
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
