"""Analyses of the config: measurements on networks, expanded into points before any job runs.

An analysis names its networks (an untrained spec with settings to vary and seeds, or the runs of a training
study at some snapshots) and its measurement. It expands into points, one network each:

    untrained   keys: family, radius, activation, hidden, embed_dim, seed   source: those settings (an LSTM has
                no radius or activation to set: both None)
    study       keys: run_id, family, the study's varied settings, seed, snapshot ("0", "1", ..., "final")
                source: the run's weights after that many epochs, or its model.pt

The kind is the measurement: gradient_decay and passage (rnnbench.decay), or probe (rnnbench.decay.probe: a
study's recurrent runs on the agreement corpus, which reads measure's folds, l2, seed and dtype only).
A study's runs are the study's own (same run ids), so an analysis never trains anything. Every mistake that
can be seen in the config (an unknown study, a snapshot past the run's last epoch, a figure setting the points
do not have) is a ConfigError naming the key, raised when the config is loaded.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rnnbench.config.files import ConfigError

if TYPE_CHECKING:
    from rnnbench.config.runs import RunConfig
    from rnnbench.config.settings import Config
    from rnnbench.config.studies import Study

# The untrained network's settings when the config leaves them out: the chapter's H = 200 tanh network.
UNTRAINED_DEFAULTS = {"family": "rnn", "activation": "tanh", "hidden": 200, "embed_dim": 200}
UNTRAINED_KEYS = ("family", "radius", "activation", "hidden", "embed_dim", "seed")
FINAL = "final"
# The measure keys a probe analysis reads (rnnbench.decay.probe); folds, l2 and permutations are its alone.
PROBE_MEASURE = ("folds", "l2", "permutations", "seed", "dtype")
PROBE_ONLY = ("folds", "l2", "permutations")


@dataclass(frozen=True)
class AnalysisPoint:
    """One network of an analysis: the table columns naming it and where its weights come from."""

    keys: Mapping[str, Any]
    untrained: Mapping[str, Any] | None = None  # settings of rnnbench.decay.untrained_rnn
    run: RunConfig | None = None  # a study's run
    snapshot: str | None = None  # "final" or the number of epochs, as text

    @property
    def corpus(self) -> tuple[str, Mapping[str, Any]] | None:
        """The corpus (name, options) the run was trained on; None for an untrained network."""
        return None if self.run is None else (self.run.corpus, dict(self.run.corpus_options))


@dataclass(frozen=True)
class Analysis:
    name: str
    kind: str
    description: str
    study: str | None  # None: untrained networks
    fixed: Mapping[str, Any]
    vary: Mapping[str, tuple[Any, ...]]
    seeds: tuple[int, ...]
    where: Mapping[str, Any]
    snapshots: tuple[str, ...]
    measure: Mapping[str, Any]
    hue: str
    panel: str | None
    # What the analysis is evidence for in the findings (rnnbench.findings); analysis.json leaves it out.
    roles: tuple[str, ...] = ()

    def record(self, points: list[AnalysisPoint]) -> dict[str, Any]:
        """analysis.json: what the analysis is, read by its figure and by the book."""
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "network": "untrained" if self.study is None else "study",
            "study": self.study,
            "keys": list(points[0].keys) if points else [],
            # untrained: the settings the config varies (an LSTM's missing radius is no variation); a study's
            # runs: the point columns that take more than one value (snapshot, a varied setting)
            "vary": list(self.vary) + (["seed"] if len(self.seeds) > 1 else [])
            if self.study is None
            else [k for k in (points[0].keys if points else {}) if len({str(p.keys[k]) for p in points}) > 1],
            "fixed": dict(self.fixed),
            "seeds": list(self.seeds),
            "where": dict(self.where),
            "snapshots": list(self.snapshots),
            "measure": dict(self.measure),
            "figure": {"hue": self.hue, "panel": self.panel},
            "run_ids": list(dict.fromkeys(p.run.run_id for p in points if p.run is not None)),
            "points": [dict(p.keys) for p in points],
        }


def parse_analysis(
    name: str, body: Mapping[str, Any], studies: Mapping[str, Study], properties: Mapping[str, Any]
) -> Analysis:
    """An analysis from its (schema-valid) config body; `properties` is the schema's analysis properties."""
    where = f"analyses.{name}"
    network = body["network"]
    sources = [k for k in ("untrained", "study") if k in network]
    if len(sources) != 1:
        raise ConfigError(f"{where}.network: give exactly one of 'untrained' and 'study', got {sources or 'neither'}")
    if "untrained" in network and ({"where", "snapshots"} & set(network)):
        extra = sorted({"where", "snapshots"} & set(network))
        raise ConfigError(f"{where}.network.{extra[0]}: only for a study's runs, not for untrained networks")
    kind = body.get("kind", properties["kind"]["default"])
    _check_measure_keys(where, kind, body.get("measure", {}))
    measure = {
        key: body.get("measure", {}).get(key, prop["default"])
        for key, prop in properties["measure"]["properties"].items()
        if kind != "probe" or key in PROBE_MEASURE
    }
    fit = measure.get("fit")
    if fit is not None and not fit[0] < fit[1] <= measure["steps"] - 1:
        raise ConfigError(
            f"{where}.measure.fit: {fit} must be two distances, first < last <= steps - 1 = {measure['steps'] - 1}"
        )
    figure = body.get("figure", {})
    roles = tuple(body.get("roles", properties["roles"]["default"]))
    if kind == "probe" and body.get("figure", {}).get("panel") is not None:
        raise ConfigError(f"{where}.figure.panel: a probe's figure has panels of its own (accuracy, gradient)")
    if kind == "probe" and "untrained" in network:
        raise ConfigError(
            f"{where}.network.untrained: a probe reads the networks a study trained on the agreement corpus "
            "(network.study; snapshot 0 is each run's initialisation)"
        )
    if "untrained" in network:
        spec = network["untrained"]
        vary = {key: tuple(values) for key, values in spec.get("vary", {}).items()}
        fixed = {k: v for k, v in {**UNTRAINED_DEFAULTS, **spec.get("fixed", {})}.items() if k not in vary}
        for key in vary:
            if key in spec.get("fixed", {}):
                raise ConfigError(
                    f"{where}.network.untrained.vary.{key}: also fixed; a setting is either fixed or varied"
                )
            if len(set(vary[key])) != len(vary[key]):
                raise ConfigError(f"{where}.network.untrained.vary.{key}: {list(vary[key])} lists a value twice")
        families = vary["family"] if "family" in vary else (fixed["family"],)
        if "rnn" in families and "radius" not in fixed and "radius" not in vary:
            raise ConfigError(
                f"{where}.network.untrained: an Elman network needs a spectral radius (fixed.radius or vary.radius)"
            )
        if families == ("lstm",) and "radius" in fixed:  # with family varied, a fixed radius is the Elman networks'
            raise ConfigError(f"{where}.network.untrained.fixed.radius: an LSTM has no one spectral radius to set")
        if "lstm" in families and "radius" in vary:
            raise ConfigError(
                f"{where}.network.untrained.vary.radius: an LSTM has no one spectral radius to set; measure it in an analysis of its own"
            )
        seeds = tuple(spec.get("seeds", [0]))
        analysis = Analysis(
            name,
            kind,
            body.get("description", ""),
            None,
            fixed,
            vary,
            seeds,
            {},
            (),
            measure,
            figure.get("hue") or (next(iter(vary)) if vary else "seed"),
            figure.get("panel"),
            roles,
        )
    else:
        study = network["study"]
        if study not in studies:
            known = ", ".join(sorted(studies)) or "none"
            raise ConfigError(f"{where}.network.study: {study!r} is not a study of this config; known: {known}")
        snapshots = tuple(str(s) for s in network.get("snapshots", [FINAL]))
        if len(set(snapshots)) != len(snapshots):
            raise ConfigError(f"{where}.network.snapshots: {list(snapshots)} lists a snapshot twice")
        analysis = Analysis(
            name,
            kind,
            body.get("description", ""),
            study,
            {},
            {},
            (),
            dict(network.get("where", {})),
            snapshots,
            measure,
            figure.get("hue") or "snapshot",
            figure.get("panel"),
            roles,
        )
    return analysis


def analysis_points(analysis: Analysis, config: Config) -> list[AnalysisPoint]:
    """Every point of `analysis` (see the module docstring), checked against the config's studies."""
    where = f"analyses.{analysis.name}"
    if analysis.study is None:
        keys = list(analysis.vary)
        points = []
        for values in itertools.product(*(analysis.vary[k] for k in keys)):
            for seed in analysis.seeds:
                settings = {**analysis.fixed, **dict(zip(keys, values, strict=True)), "seed": seed}
                if settings["family"] == "lstm":
                    settings = {k: v for k, v in settings.items() if k not in ("radius", "activation")}
                points.append(AnalysisPoint(keys={k: settings.get(k) for k in UNTRAINED_KEYS}, untrained=settings))
    else:
        points = _study_points(analysis, config, where)
    columns = set(points[0].keys) if points else set()
    for role in ("hue", "panel"):
        setting = getattr(analysis, role)
        if setting is not None and setting not in columns:
            raise ConfigError(
                f"{where}.figure.{role}: {setting!r} is not a column of its points; allowed: {', '.join(sorted(columns))}"
            )
    if analysis.kind == "gradient_decay":
        _check_windows(analysis, points, where)
    if analysis.kind == "probe":
        for point in points:
            if point.corpus[0] != "agreement" or point.run.family not in ("rnn", "lstm"):
                raise ConfigError(
                    f"{where}.network.study: a probe reads the head noun's number from a recurrent network's state "
                    f"on the agreement corpus; study {analysis.study!r} trains {point.run.family!r} on "
                    f"{point.corpus[0]!r}"
                )
    if analysis.kind == "passage":
        for point in points:
            corpus = point.corpus[0] if point.corpus else analysis.measure["corpus"]
            if corpus != "ptb":
                raise ConfigError(
                    f"{where}.kind: the passage is read with the PTB vocabulary; this network reads {corpus!r}"
                )
    return points


def _check_measure_keys(where: str, kind: str, given: Mapping[str, Any]) -> None:
    """A measure key the analysis's kind does not read is refused, not ignored."""
    if kind == "probe":
        unread = [key for key in given if key not in PROBE_MEASURE]
        if unread:
            raise ConfigError(
                f"{where}.measure.{unread[0]}: a probe analysis does not read it; it reads: {', '.join(PROBE_MEASURE)}"
            )
    else:
        unread = [key for key in given if key in PROBE_ONLY]
        if unread:
            raise ConfigError(f"{where}.measure.{unread[0]}: only a probe analysis reads it (kind: probe)")


def network_count(analysis: Analysis, studies: Mapping[str, Study]) -> int:
    """The networks ``analysis`` measures, counted before any is expanded (config.studies.MAX_RUNS caps them with
    the studies' runs): an untrained spec's combinations of varied values times its seeds; a study's runs that
    ``where`` keeps times the snapshots."""
    if analysis.study is None:
        return math.prod(map(len, analysis.vary.values())) * len(analysis.seeds)
    study = studies[analysis.study]
    kept = math.prod(
        sum(_same(value, analysis.where[key]) for value in values) if key in analysis.where else len(values)
        for key, values in study.vary.items()
    )
    return kept * len(study.seeds) * len(analysis.snapshots)


def _check_windows(analysis: Analysis, points: list[AnalysisPoint], where: str) -> None:
    """A window is `steps` + 1 tokens of the split: a split known to be shorter (PTB and Brown exactly, the agreement
    corpus by its longest sentences) is refused now, not in the job."""
    from rnnbench.data.corpus_facts import known_sizes

    steps, split = analysis.measure["steps"], analysis.measure["split"]
    corpora = {}  # each corpus and options once: an untrained network reads the analysis's corpus, a run its own
    for point in points:
        name, options = point.corpus or (analysis.measure["corpus"], {})
        corpora[(name, repr(sorted(options.items())))] = (name, dict(options))
    for name, options in corpora.values():
        size = known_sizes(name, options).max_tokens.get(split)
        if size is not None:
            # the agreement corpus's length is known once generated: a bound here, checked exactly in the job
            check_window(where, steps, name, split, size, exact=name in ("ptb", "brown"))


def check_window(where: str, steps: int, corpus: str, split: str, size: int, *, exact: bool = True) -> None:
    """Refuse `steps` when a window of `steps` + 1 tokens does not fit a `split` of `size` tokens (`exact`: the
    split's length, else a bound on it); `where` is the analysis's config path, as in every message."""
    if steps + 1 <= size:
        return
    allowed = f"steps <= {size - 1:,}" if exact else "fewer steps"
    if corpus == "agreement":
        allowed += f", or more {split}_sentences"
    raise ConfigError(
        f"{where}.measure.steps: {steps} needs windows of {steps + 1:,} tokens, and the {corpus} {split} split "
        f"has {'' if exact else 'at most '}{size:,}; allowed: {allowed}"
    )


def _study_points(analysis: Analysis, config: Config, where: str) -> list[AnalysisPoint]:
    study = config.studies[analysis.study]
    for key in analysis.where:
        if key not in study.vary:
            raise ConfigError(
                f"{where}.network.where.{key}: not a setting study {study.name!r} varies; it varies: {', '.join(study.vary)}"
            )
    runs = [
        (point, cfg)
        for point, cfg in config.study_runs(study.name)
        if all(_same(point[k], v) for k, v in analysis.where.items())
    ]
    if not runs:
        listed = {k: list(study.vary[k]) for k in analysis.where}
        raise ConfigError(
            f"{where}.network.where: no run of study {study.name!r} has {dict(analysis.where)}; it has {listed}"
        )
    points = []
    for point, cfg in runs:
        last, _ = cfg.budget  # max_epochs, or the fewer epochs its max_steps takes (rnnbench.config.updates)
        for i, snapshot in enumerate(analysis.snapshots):
            if snapshot != FINAL and int(snapshot) > last:
                why = f"max_epochs = {cfg.max_epochs}" + (
                    f", max_steps = {cfg.max_steps}" if last < cfg.max_epochs else ""
                )
                raise ConfigError(
                    f"{where}.network.snapshots[{i}]: epoch {snapshot} is past run {cfg.run_id}'s last "
                    f"({why}); allowed: 0..{last} or {FINAL}"
                )
            keys = {"run_id": cfg.run_id, "family": cfg.family, **point, "snapshot": snapshot}
            points.append(AnalysisPoint(keys=keys, run=cfg, snapshot=snapshot))
    return points


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float)) and float(a) == float(b))
