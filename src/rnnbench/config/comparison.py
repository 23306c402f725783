"""The config's `comparison` block: which studies' runs stand beside the published rows.

    comparison:
      scale: short                 # or paper: what these runs are, printed beside each of our rows
      studies:                     # corpus -> family -> studies of this config
        ptb: {ff: [ff_context_ptb, ff_hidden_ptb], rnn: [rnn_hidden_ptb]}
        brown: {ff: [ff_brown]}
      crossover: ptb               # the corpus of the perplexity-against-parameters figure
      reference: reference         # the paper-scale reference results shown beside them (null: none)
      dynamic_evaluation:          # optional: every run of the rnn studies also scored under dynamic
        rates: [0.03, 0.1, 0.3, 1, 3]  # evaluation (rnnbench.training.dynamic), the rate chosen on the first
        valid_tokens: 20000        # valid_tokens validation tokens; segments of bptt (null: the run's own)
        bptt: null

The schema checks the shape; this module checks it against the studies (each named study exists and
trains that family on that corpus), so a typo or a misfiled study fails when the config is loaded.
Pure Python, no pandas: the config check stays import-light.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rnnbench.config.files import ConfigError

WHERE = "comparison"


@dataclass(frozen=True)
class DynamicEvaluation:
    """How the rnn studies' runs are scored under dynamic evaluation (rnnbench.training.dynamic.evaluate_run's settings)."""

    rates: tuple[float, ...]
    valid_tokens: int | None
    bptt: int | None

    def record(self) -> dict[str, Any]:
        return {"rates": list(self.rates), "valid_tokens": self.valid_tokens, "bptt": self.bptt}


@dataclass(frozen=True)
class Comparison:
    scale: str = "short"
    # corpus -> family -> study names, in config order
    studies: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    crossover: str | None = None
    reference: str | None = None  # folder of rnnbench.results.reference results, relative to the workflow's folder
    dynamic_evaluation: DynamicEvaluation | None = None  # None: no dynamic evaluation

    def study_names(self) -> list[str]:
        """Every named study once, in config order (corpus by corpus, family by family)."""
        names = [s for families in self.studies.values() for group in families.values() for s in group]
        return list(dict.fromkeys(names))

    def family_studies(self, family: str) -> list[str]:
        """The named studies of ``family``, each once, in config order."""
        return list(dict.fromkeys(s for families in self.studies.values() for s in families.get(family, ())))

    def __bool__(self) -> bool:
        return bool(self.studies)

    def record(self) -> dict[str, Any]:
        """As plain JSON: what the comparison job writes into its provenance and reads back."""
        return {
            "scale": self.scale,
            "studies": {c: {f: list(g) for f, g in fams.items()} for c, fams in self.studies.items()},
            "crossover": self.crossover,
            "reference": self.reference,
            "dynamic_evaluation": self.dynamic_evaluation.record() if self.dynamic_evaluation else None,
        }


def parse_comparison(
    body: Mapping[str, Any], studies: Mapping[str, Any], properties: Mapping[str, Any] | None = None
) -> Comparison:
    """The schema-checked `comparison` block, checked against ``studies`` (name -> object with .family, .corpus);
    ``properties`` is the schema's properties of the block, whose defaults fill what the block leaves out."""
    defaults = {key: prop.get("default") for key, prop in (properties or {}).items()}
    named: dict[str, dict[str, tuple[str, ...]]] = {}
    for corpus, families in (body.get("studies") or {}).items():
        named[corpus] = {}
        for family, names in families.items():
            where = f"{WHERE}.studies.{corpus}.{family}"
            for i, name in enumerate(names):
                if name not in studies:
                    known = ", ".join(sorted(studies)) or "none"
                    raise ConfigError(f"{where}[{i}]: no study named {name!r} in this config; studies: {known}")
                study = studies[name]
                if (study.corpus, study.family) != (corpus, family):
                    raise ConfigError(
                        f"{where}[{i}]: study {name!r} trains family {study.family!r} on corpus {study.corpus!r}; "
                        f"list it under {WHERE}.studies.{study.corpus}.{study.family}"
                    )
            if len(set(names)) != len(names):
                raise ConfigError(f"{where}: a study is listed twice ({', '.join(names)})")
            named[corpus][family] = tuple(names)
    crossover = body.get("crossover")
    if crossover is not None:
        missing = [f for f in ("ff", "rnn") if not named.get(crossover, {}).get(f)]
        if missing:
            raise ConfigError(
                f"{WHERE}.crossover: {crossover!r} draws both families against parameter count, but "
                f"{WHERE}.studies.{crossover} names no {' and no '.join(missing)} study"
            )
    return Comparison(
        scale=body.get("scale", defaults.get("scale", "short")),
        studies=named,
        crossover=crossover,
        reference=body.get("reference", defaults.get("reference")),
        dynamic_evaluation=_dynamic(body.get("dynamic_evaluation"), named, properties or {}),
    )


def _dynamic(
    body: Mapping[str, Any] | None, named: Mapping[str, Mapping[str, tuple[str, ...]]], properties: Mapping[str, Any]
) -> DynamicEvaluation | None:
    if body is None:
        return None
    where = f"{WHERE}.dynamic_evaluation"
    if not any(families.get("rnn") for families in named.values()):
        raise ConfigError(
            f"{where}: scores the runs of the comparison's rnn studies, but {WHERE}.studies names none; "
            f"list one under {WHERE}.studies.<corpus>.rnn, or set {where}: null"
        )
    defaults = {
        key: prop.get("default") for key, prop in properties.get("dynamic_evaluation", {}).get("properties", {}).items()
    }
    settings = {**defaults, **body}
    rates = tuple(float(r) for r in settings["rates"])
    if len(set(rates)) != len(rates):
        raise ConfigError(f"{where}.rates: a rate is listed twice ({', '.join(map(str, settings['rates']))})")
    return DynamicEvaluation(rates=rates, valid_tokens=settings["valid_tokens"], bptt=settings["bptt"])
