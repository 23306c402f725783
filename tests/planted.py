"""Results folders written by hand for the findings' tests (tests/test_findings.py, tests/test_claim_controls.py):
each writer lays its files out as rnnbench.paths spells them and returns the `Roles` that name what it wrote.

Seeds are spread by hand so that every interval can be worked on paper: three seeds at ``x + d``, ``x - d`` and
``x`` (JITTER) have mean x and standard deviation d, standard error d / sqrt(3) = 0.57735 d, Student's
t_{0.975, 2} = 4.302653 (the interval's half-width 2.48414 d) and t_{0.95, 2} = 2.919986 (a one-sided test at 5%).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from rnnbench import paths
from rnnbench.findings.catalog import CLAIMS
from rnnbench.findings.evidence import Roles

JITTER = (1.0, -1.0, 0.0)  # three seeds at x + d, x - d, x: mean x, sd d


def spread(x: float, d: float) -> list[float]:
    """Three seeds' values: mean ``x``, standard deviation ``d``."""
    return [x + j * d for j in JITTER]


def claim(claim_id):
    return next(c for c in CLAIMS if c.id == claim_id)


def write_study(root, name, about, runs):
    """runs: list of {"run_id", "seed", <settings>, "outcome", "metrics": {...}}; writes summary.csv + study.json."""
    folder = Path(root) / "studies" / name
    folder.mkdir(parents=True)
    rows = []
    for run in runs:
        keys = {k: v for k, v in run.items() if k != "metrics"}
        rows += [{"study": name, **keys, "metric": m, "value": v} for m, v in run["metrics"].items()]
    pd.DataFrame(rows).to_csv(folder / "summary.csv", index=False)
    record = {"name": name, "vary": [], "fixed": {}, "seeds": [], **about, "run_ids": [r["run_id"] for r in runs]}
    (folder / "study.json").write_text(json.dumps(record))


def write_accuracy(root, run_id, accuracy, n=100):
    folder = Path(root) / "runs" / run_id
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"distance": d, "n": n, "accuracy": a, "split": "test"} for d, a in accuracy.items()]
    pd.DataFrame(rows).to_csv(folder / "agreement.csv", index=False)


def write_run_config(root, run_id, config):
    folder = Path(root) / "runs" / run_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))


def write_table(root, name, rows):
    folder = Path(root) / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(folder / f"{name}.csv", index=False)


def learned_runs(prefix, seeds, settings, metrics):
    """Runs ``<prefix>-<seed>`` that learned, each with the same settings; ``metrics`` seed -> {metric: value}."""
    return [
        {"run_id": f"{prefix}-{s}", "seed": s, **settings, "outcome": "learned", "metrics": metrics[s]} for s in seeds
    ]


# --------------------------------------------------------------------------------------------------------------
# Windows and recurrences on agreement (per-distance accuracy, runs/<id>/agreement.csv)


WINDOW_ABOUT = {"family": "ff", "corpus": "agreement", "metric": "agreement_accuracy", "vary": ["context"]}


def window_folder(root, curves, width=2):
    """A window study of n-1 = ``width``, one learned run per entry of ``curves`` (accuracy per distance)."""
    write_study(
        root,
        "windows",
        WINDOW_ABOUT,
        [
            {
                "run_id": f"w{s}",
                "seed": s,
                "context": width,
                "outcome": "learned",
                "metrics": {"agreement_accuracy": 0.8},
            }
            for s in range(1, len(curves) + 1)
        ],
    )
    for s, curve in enumerate(curves, start=1):
        write_accuracy(root, f"w{s}", curve)
    return Roles(studies={"window": ("windows",)})


def recurrence_folder(root, curves, hidden=60, varied=True):
    """A recurrence study at H = ``hidden``, one learned run per entry of ``curves`` (accuracy per distance); H is
    the study's varied setting, or (``varied`` False) fixed, so that the study varies nothing but the seed."""
    write_study(
        root,
        "rnns",
        {**WINDOW_ABOUT, "family": "rnn", "vary": ["hidden"] if varied else [], "fixed": {"hidden": hidden}},
        [
            {
                "run_id": f"r{s}",
                "seed": s,
                "hidden": hidden,
                "outcome": "learned",
                "metrics": {"agreement_accuracy": 0.8},
            }
            for s in range(1, len(curves) + 1)
        ],
    )
    for s, curve in enumerate(curves, start=1):
        write_accuracy(root, f"r{s}", curve)
    return Roles(studies={"recurrence": ("rnns",)})


def widths_folder(root, ppl, per_word=15_000, base=1_000_000):
    """A PTB window study of the widths in ``ppl`` (n-1 -> each seed's test perplexity, one learned run each):
    ``base`` parameters at n-1 = 1 and ``per_word`` more for each word admitted."""
    runs = [
        {
            "run_id": f"n{width}-{s}",
            "seed": s,
            "context": width,
            "outcome": "learned",
            "metrics": {"test_ppl": p, "parameters": base + per_word * (width - 1)},
        }
        for width, values in ppl.items()
        for s, p in enumerate(values, start=1)
    ]
    write_study(root, "widths", {"family": "ff", "corpus": "ptb", "metric": "test_ppl", "vary": ["context"]}, runs)
    return Roles(studies={"window_width": ("widths",)})


def lm_size_folder(root, rnn_ppl, window_ppl=(160.0, 161.0, 159.0)):
    """PTB windows of n-1 = 1 (1,494,002 parameters) at test perplexities ``window_ppl``, and Elman RNNs at H = 50
    (1,122,402) and H = 200 (1,534,002, 1.03 times the window's: its match) with the perplexities given."""
    lm = {"corpus": "ptb", "metric": "test_ppl"}
    write_study(
        root,
        "windows_ptb",
        {**lm, "family": "ff", "vary": ["context"]},
        [
            {
                "run_id": f"w{s}",
                "seed": s,
                "context": 1,
                "outcome": "learned",
                "metrics": {"test_ppl": p, "parameters": 1_494_002},
            }
            for s, p in enumerate(window_ppl, start=1)
        ],
    )
    small = {
        "run_id": "r50",
        "seed": 1,
        "hidden": 50,
        "outcome": "learned",
        "metrics": {"test_ppl": 190.0, "parameters": 1_122_402},
    }
    write_study(
        root,
        "rnns_ptb",
        {**lm, "family": "rnn", "vary": ["hidden"]},
        [small]
        + [
            {
                "run_id": f"r{s}",
                "seed": s,
                "hidden": 200,
                "outcome": "learned",
                "metrics": {"test_ppl": p, "parameters": 1_534_002},
            }
            for s, p in enumerate(rnn_ppl, start=1)
        ],
    )
    return Roles(studies={"matched_window": ("windows_ptb",), "matched_recurrence": ("rnns_ptb",)})


def matched_agreement_folder(root, rnn_accuracy, window_accuracy, window_near=(1.0, 1.0), rnn_near=(1.0, 1.0)):
    """Agreement windows of n-1 = 2 (34,521 parameters) and Elman RNNs at H = 60 (34,689: their match), three learned
    seeds a side with the study metric given; each run's accuracy 1.0 at distances 1-2 but where ``window_near`` or
    ``rnn_near`` say otherwise, 0.5 at 3-4 (100 probes a distance); the nearest-noun rule right at 1-2 (no noun between
    head and verb), 0.75 at 3-4, in tables/agreement_baselines.csv."""
    options = {"attractor_prob": 0.25}
    sides = (
        ("windows", "w", "context", 2, 34_521, window_accuracy, window_near),
        ("rnns", "r", "hidden", 60, 34_689, rnn_accuracy, rnn_near),
    )
    for name, prefix, setting, value, parameters, metric, near in sides:
        about = {**WINDOW_ABOUT, "family": "ff" if prefix == "w" else "rnn", "vary": [setting]}
        runs = [
            {
                "run_id": f"{prefix}{s}",
                "seed": s,
                setting: value,
                "outcome": "learned",
                "metrics": {"agreement_accuracy": a, "parameters": parameters},
            }
            for s, a in enumerate(metric, start=1)
        ]
        write_study(root, name, about, runs)
        for run in runs:
            write_accuracy(root, run["run_id"], {1: near[0], 2: near[1], 3: 0.5, 4: 0.5})
            write_run_config(root, run["run_id"], {"corpus": "agreement", "corpus_options": options})
    key = paths.corpus_key("agreement", options)
    rule = [(1, 1.0), (2, 1.0), (3, 0.75), (4, 0.75)]
    write_table(
        root,
        "agreement_baselines",
        [
            {"corpus_key": key, "split": "test", "distance": d, "heuristic": "nearest_noun", "accuracy": a, "n": 100}
            for d, a in rule
        ],
    )
    return Roles(studies={"matched_window": ("windows",), "matched_recurrence": ("rnns",)})


# --------------------------------------------------------------------------------------------------------------
# Truncation


TRUNCATION_ABOUT = {"family": "rnn", "corpus": "agreement", "metric": "agreement_accuracy", "vary": ["bptt"]}


def write_reach(root, name, rows):
    """A study's reach.csv (rnnbench.results.reach): rows of run_id, bptt, seed, cut_every, split and gap (within
    accuracy 0.9, beyond 0.9 - gap, 100 probes each side), every run learned."""
    table = pd.DataFrame(
        [
            {
                "outcome": "learned",
                "within_probes": 100,
                "within_accuracy": 0.9,
                "beyond_probes": 100,
                "beyond_accuracy": 0.9 - row["gap"],
                **row,
            }
            for row in rows
        ]
    )
    table.to_csv(Path(root) / "studies" / name / "reach.csv", index=False)


def _reach_study(root, name, gaps, k, splits):
    """A study of full-sentence BPTT (bptt 0) and bptt ``k``: gaps {bptt: [gap per seed]}, each run split at k by
    every split of ``splits``."""
    runs = [
        {
            "run_id": f"{name}-b{bptt}-{s}",
            "seed": s,
            "bptt": bptt,
            "outcome": "learned",
            "metrics": {"agreement_accuracy": 0.8},
        }
        for bptt, values in gaps.items()
        for s in range(1, len(values) + 1)
    ]
    write_study(root, name, TRUNCATION_ABOUT, runs)
    rows = [
        {"run_id": f"{name}-b{bptt}-{s}", "bptt": bptt, "seed": s, "cut_every": k, "split": split, "gap": gap}
        for bptt, values in gaps.items()
        for s, gap in enumerate(values, start=1)
        for split in splits
    ]
    write_reach(root, name, rows)


def truncation_folder(root, gap_full, gap_truncated, k=2):
    """A truncation_reach study of stream segments: full-sentence BPTT (bptt 0) and bptt ``k``, one learned run per
    value given; each run's gap (accuracy within reach of k minus beyond it, split by distance) as given."""
    _reach_study(root, "cuts", {0: gap_full, k: gap_truncated}, k, ("distance",))
    return Roles(studies={"truncation_reach": ("cuts",)})


def sentence_cut_folder(root, gap_sentence, gap_stream=0.35, gap_full=0.0, seeds=3):
    """A stream-segment study (bptt 0 and 2, split by distance) and a sentence-cut study (bptt 0 and 2, split by
    distance and by block), ``seeds`` seeds each: gaps at k = 2 of ``gap_full`` for full BPTT, ``gap_stream`` for
    stream segments and ``gap_sentence`` (a value per seed, or one for all) for sentence cuts, full and stream give
    or take 0.001 between the seeds (JITTER)."""
    jitter = [j * 0.001 for j in JITTER[:seeds]]
    sentence = gap_sentence if isinstance(gap_sentence, list) else [gap_sentence] * seeds
    _reach_study(
        root, "stream", {0: [gap_full + j for j in jitter], 2: [gap_stream + j for j in jitter]}, 2, ("distance",)
    )
    _reach_study(root, "sentence", {0: [gap_full + j for j in jitter], 2: sentence}, 2, ("distance", "block"))
    return Roles(studies={"truncation_reach": ("stream",), "truncation_sentence": ("sentence",)})


def cost_folder(root, speed, memory):
    """A truncation_cost study of bptt 5 and full-sentence BPTT (bptt 0, the longest), one learned run per seed
    value: ``speed`` bptt -> tokens a CPU second (the summary's tokens_per_cpu_second), ``memory`` bptt -> peak
    memory in MB (tables/benchmarks.csv)."""
    runs, bench = [], []
    for bptt in (5, 0):
        for s, (tps, mb) in enumerate(zip(speed[bptt], memory[bptt], strict=True), start=1):
            run_id = f"t{bptt}-{s}"
            runs.append(
                {
                    "run_id": run_id,
                    "seed": s,
                    "bptt": bptt,
                    "outcome": "learned",
                    "metrics": {"test_ppl": 150.0, "tokens_per_cpu_second": tps},
                }
            )
            bench.append({"run_id": run_id, "max_rss_mb": mb})
    write_study(
        root, "truncation_ptb", {"family": "rnn", "corpus": "ptb", "metric": "test_ppl", "vary": ["bptt"]}, runs
    )
    write_table(root, "benchmarks", bench)
    return Roles(studies={"truncation_cost": ("truncation_ptb",)})


# --------------------------------------------------------------------------------------------------------------
# Clipping


CLIPPING_ABOUT = {"family": "rnn", "corpus": "ptb", "metric": "test_ppl", "fixed": {"lr": 0.5}}
# Unclipped test perplexities of three seeds: mean 100, sd 0.5 (100 +- 0.5 x JITTER), tight enough that a clipped
# setting with the same perplexities is within the 2% margin: the difference's se is sqrt(0.25/3 + 0.25/3) = 0.408.
UNCLIPPED = (100.5, 99.5, 100.0)


def clipping_folder(
    root,
    clipped_ppl,
    *,
    none_study="clipping_ptb",
    outcome="learned",
    unclipped=UNCLIPPED,
    cosines=None,
    clipped=0.05,
    times=2.0,
):
    """Unclipped runs at rate 0.5 (perplexities ``unclipped``) and norm clipping at the same rate, its threshold 0.25
    set as ``times`` the reference's median norm (2: above it, the chapter's regime, a priori), with the perplexities
    given, the share ``clipped`` of their steps clipped. ``cosines``: each clipped seed's mean update cosine, measured
    by a stateful optimiser (Adam, named in the run's own config.json as the study's record does not say it); None: no
    update cosine was measured (plain SGD's update is the gradient's, scaled)."""
    write_study(
        root,
        none_study,
        {**CLIPPING_ABOUT, "vary": ["clip_mode"], "fixed": {"lr": 0.5, "clip": 15.0}},
        [
            {"run_id": f"none-{s}", "seed": s, "clip_mode": "none", "outcome": outcome, "metrics": {"test_ppl": p}}
            for s, p in enumerate(unclipped, start=1)
        ],
    )
    norm = []
    for s, p in enumerate(clipped_ppl, start=1):
        metrics = {"test_ppl": p, "clipped_fraction": clipped, "clip_cosine_mean": 1.0, "diverged": 0.0}
        if cosines is not None:
            metrics["update_cosine_mean"] = cosines[s - 1]
            write_run_config(root, f"norm-{s}", {"optimizer": "adam", "lr": 0.5, "clip_mode": "norm", "clip": 0.25})
        row = {"run_id": f"norm-{s}", "seed": s, "clip": 0.25, "clip_times_median": times, "outcome": outcome}
        norm.append({**row, "metrics": metrics})
    write_study(
        root,
        "clip_threshold_ptb",
        {**CLIPPING_ABOUT, "vary": ["clip", "clip_times_median"], "fixed": {"lr": 0.5, "clip_mode": "norm"}},
        norm,
    )
    return Roles(studies={"clipping": (none_study, "clip_threshold_ptb")})


def divergence_folder(root, counts, lr=1.0, clipped=0.05, reference=0.5, settled_high=None):
    """One clipping study at rate ``lr``: ``counts`` clip -> (diverged, runs), clip None for unclipped runs (clip
    15, mode none); a run that diverged says so in its outcome and its metric. Every clipped run's threshold is set as
    a multiple of a reference's median norm ``reference`` (clip 1: twice it, the chapter's regime, a priori; None: a
    threshold given as a number) and it clipped the share ``clipped`` of its steps. ``settled_high``: clip -> how many
    of the runs that did not diverge blew up all the same (ended above the unigram perplexity: "did not learn", and
    the summary's blew_up row)."""
    runs = []
    for clip, (blown, n) in counts.items():
        high = (settled_high or {}).get(clip, 0)
        for s in range(1, n + 1):
            gone = s <= blown
            settled = not gone and s <= blown + high
            runs.append(
                {
                    "run_id": f"{'none' if clip is None else f'n{clip:g}'}-{s}",
                    "seed": s,
                    "clip_mode": "none" if clip is None else "norm",
                    "clip": 15.0 if clip is None else clip,
                    "clip_times_median": math.inf if clip is None else clip / reference if reference else None,
                    "outcome": "diverged" if gone else "did not learn" if settled else "learned",
                    "metrics": {
                        "diverged": float(gone),
                        "blew_up": float(gone or settled),
                        "clipped_fraction": 0.0 if clip is None else clipped,
                    },
                }
            )
    about = {**CLIPPING_ABOUT, "vary": ["clip_mode", "clip", "clip_times_median"], "fixed": {"lr": lr}}
    write_study(root, "clips", about, runs)
    return Roles(studies={"clipping": ("clips",)})


# --------------------------------------------------------------------------------------------------------------
# Activations


ACTIVATION_ABOUT = {"family": "rnn", "corpus": "ptb", "metric": "test_ppl", "vary": ["activation"]}
# Steps to the study's target training loss (speed.csv), per activation and seed, unless a test says otherwise.
STEPS_TO_TARGET = {"tanh": [400, 405, 410], "sigmoid": [600, 610, 605], "relu": [300, 310, 320]}


def activation_folder(root, valid, silent, name="activation_ptb", outcome="learned", diverged=(), steps=None):
    """A study of three activations, as many seeds each as ``valid`` gives: ``valid`` activation -> validation
    perplexities per seed, ``silent`` activation -> each seed's share of silent units (units.csv, 100 units),
    ``steps`` activation -> each seed's optimiser steps to a training perplexity of 300 (speed.csv; STEPS_TO_TARGET
    if not given, cycled over more seeds). The runs of the activations in ``diverged`` diverged: so their outcome
    says, and their units were never counted."""
    steps = steps or STEPS_TO_TARGET
    runs, units, speed = [], [], []
    for act, values in valid.items():
        state = "diverged" if act in diverged else outcome
        for seed, (ppl, share) in enumerate(zip(values, silent[act], strict=True), start=1):
            reached = steps[act][(seed - 1) % len(steps[act])] if state == "learned" else math.nan
            speed.append(
                {"run_id": f"{act}-{seed}", "activation": act, "seed": seed, "target_ppl": 300.0}
                | {"steps_to_target": reached, "outcome": state, "diverged": act in diverged}
            )
            run_id = f"{act}-{seed}"
            metrics = {"valid_ppl": ppl, "test_ppl": ppl * 0.95}
            runs.append({"run_id": run_id, "seed": seed, "activation": act, "outcome": state, "metrics": metrics})
            counts = {"units": 100, "silent_units": round(share * 100), "silent_fraction": share, "positions": 1000}
            if act in diverged:
                counts = dict.fromkeys(counts, math.nan)  # no weights read
            units.append(
                {"run_id": run_id, "activation": act, "seed": seed, **counts}
                | {"outcome": state, "diverged": act in diverged}
            )
    write_study(root, name, ACTIVATION_ABOUT, runs)
    pd.DataFrame(units).to_csv(Path(root) / "studies" / name / "units.csv", index=False)
    pd.DataFrame(speed).to_csv(Path(root) / "studies" / name / "speed.csv", index=False)
    return Roles(studies={"activation_training": (name,)})


# --------------------------------------------------------------------------------------------------------------
# Gradient-decay analyses (rates.csv, curves.csv) and decoding probes (probe.csv)


BACKWARD = {"direction": "backward", "method": "one_pass", "quantity": "h"}
UNTRAINED_KEYS = ["family", "radius", "activation", "hidden", "embed_dim", "seed"]
TRAINED_KEYS = ["run_id", "seed", "snapshot"]
FIT = {"fit_from": 5, "fit_to": 29}


def write_analysis(root, name, record, tables):
    """analyses/<name>/analysis.json and one CSV per entry of ``tables`` (kind -> rows)."""
    folder = Path(root) / "analyses" / name
    folder.mkdir(parents=True)
    for kind, rows in tables.items():
        pd.DataFrame(rows).to_csv(folder / f"{kind}.csv", index=False)
    (folder / "analysis.json").write_text(json.dumps({"name": name, **record}))


def write_rates(root, name, rows, *, network="untrained", study=None):
    """An analysis of untrained networks: one row of rates.csv per network (its keys and rate)."""
    record = {"keys": UNTRAINED_KEYS, "network": network, "study": study}
    write_analysis(root, name, record, {"rates": [{**BACKWARD, **FIT, **r} for r in rows]})


def radius_folder(root, rates, activation="tanh", role="radius"):
    """Untrained Elman networks (H = 32): ``rates`` radius -> the rate of each seed's network."""
    net = {"family": "rnn", "activation": activation, "hidden": 32, "embed_dim": 16}
    rows = [{**net, "radius": r, "seed": s, "rate": v} for r, values in rates.items() for s, v in enumerate(values)]
    write_rates(root, "radii", rows)
    return Roles(analyses={role: ("radii",)})


def trained_decay_folder(root, rates, *, rho=0.9, wobble=0.0, name="trained", role="trained_decay", settings=None):
    """A study's learned runs, one per entry of ``rates``, measured at their final weights (and at initialisation,
    snapshot 0, ρ(U) 0.5) by an analysis of role ``role``: each network's rate, its ρ(U) ``rho``, and its curve of
    geometric-mean norms over distances 0 to 30, exp(rate d) times exp(``wobble``) at odd distances and
    exp(-``wobble``) at even ones (``wobble`` 0: a straight line in log-norm, R² 1). ``settings``: the study's
    settings of each run (a list, one dict per run), for a clipping study's."""
    settings = settings or [{} for _ in rates]  # a setting's "metrics": what its run measured beside its accuracy
    runs = [
        {
            "run_id": f"r{s}",
            "seed": s,
            **{k: v for k, v in setting.items() if k != "metrics"},
            "outcome": "learned",
            "metrics": {"agreement_accuracy": 0.9, **setting.get("metrics", {})},
        }
        for s, setting in enumerate(settings, start=1)
    ]
    about = {"family": "rnn", "corpus": "agreement", "metric": "agreement_accuracy"}
    if settings[0]:
        about["vary"] = [k for k in settings[0] if k != "metrics"]
    write_study(root, "agree", about, runs)
    rate_rows, curve_rows = [], []
    for s, rate in enumerate(rates, start=1):
        for snapshot, r, radius in (("0", -1.0, 0.5), ("final", rate, rho)):
            point = {"run_id": f"r{s}", "seed": s, "snapshot": snapshot}
            rate_rows.append({**BACKWARD, **FIT, **point, "rate": r, "rho": radius})
            curve_rows += [
                {**BACKWARD, **point, "distance": d, "geo_mean": math.exp(r * d + wobble * (1 if d % 2 else -1))}
                for d in range(31)
            ]
    record = {"keys": TRAINED_KEYS, "network": "study", "study": "agree"}
    write_analysis(root, name, record, {"rates": rate_rows, "curves": curve_rows})
    return Roles(analyses={role: (name,)})


def probe_folder(root, accuracy, chance=0.5, distances=10, shuffled=None):
    """A study's learned runs, one per entry of ``accuracy``, read by a decoding probe (role state_carries,
    rnnbench.decay.probe's columns) at distances 0 to ``distances``: the gradient crossing d steps falls tenfold
    every two steps relative to d = 0 (100-fold by distance 4, so the farthest distance read is ``distances``),
    the probe reads 0.95 at distance 0 falling straight to each seed's ``accuracy`` at the farthest; the same
    probe on shuffled labels reads ``shuffled`` (per seed, at every distance; chance +- 0.001 by default)."""
    write_study(
        root,
        "agree",
        {"family": "rnn", "corpus": "agreement", "metric": "agreement_accuracy"},
        [
            {"run_id": f"r{s}", "seed": s, "outcome": "learned", "metrics": {"agreement_accuracy": 0.9}}
            for s in range(1, len(accuracy) + 1)
        ],
    )
    shuffled = shuffled or [chance + e for e in (0.001, -0.001, 0.0, 0.0005, -0.0005)[: len(accuracy)]]
    rows = []
    for s, (far, control) in enumerate(zip(accuracy, shuffled, strict=True), start=1):
        for d in range(distances + 1):
            for labels, acc in (
                ("true", far if d == distances else 0.95 + (far - 0.95) * d / distances),
                ("shuffled", control),
            ):
                rows.append(
                    {
                        "run_id": f"r{s}",
                        "seed": s,
                        "snapshot": "final",
                        "labels": labels,
                        "subset": "attractor",
                        "distance": d,
                        "n_fit": 800,
                        "n_scored": 200,
                        "accuracy": acc,
                        "accuracy_low": acc - 0.05,
                        "accuracy_high": acc + 0.05,
                        "chance": chance,
                        "nearest_noun": 0.7,
                        "gradient_norm": 3 * 10 ** (-d / 2),
                        "gradient_relative": 10 ** (-d / 2),
                    }
                )
    write_analysis(root, "probe", {"keys": TRAINED_KEYS, "network": "study", "study": "agree"}, {"probe": rows})
    return Roles(analyses={"state_carries": ("probe",)})


def reach_table(root, values, lengths=(5, 20, 50)):
    """The lesson's worked table: mean |dy_T/dx_1| at each length T."""
    write_table(root, "lesson_gradient_reach", {"length": list(lengths), "grad_token1_mean_abs": list(values)})
    return Roles()
