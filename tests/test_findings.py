"""The findings: intervals worked by hand, verdicts from results folders written by hand, evidence found by role."""

import json
import math
import os
from pathlib import Path

import pandas as pd
import pytest

from rnnbench import jobs
from rnnbench.config.files import ConfigError, merge_config_files
from rnnbench.config.schema import schema
from rnnbench.config.settings import load_config
from rnnbench.findings import findings_table, stats
from rnnbench.findings.catalog import CLAIMS, ROLES
from rnnbench.findings.evidence import Evidence, Roles
from rnnbench.findings.registry import COLUMNS, FAILS, HOLDS, NOT_SHOWN, PARTLY, SEEDS, Part, combine, judge

REPO = Path(__file__).resolve().parents[1]
CONFIG_FILES = [REPO / "config" / "config.yaml", REPO / "config" / "smoke.yaml"]


# --------------------------------------------------------------------------------------------------------------
# Statistics, by hand


def test_the_mean_interval_is_students_t_worked_by_hand():
    # x = (1, 2, 3): mean 2, sd 1, se 1/sqrt(3) = 0.57735; t_{0.975, 2} = 4.302653; half-width 2.48414.
    iv = stats.mean_interval([1, 2, 3])
    assert (iv.estimate, iv.n) == (2, 3)
    assert iv.low == pytest.approx(2 - 2.48414, abs=1e-5) and iv.high == pytest.approx(2 + 2.48414, abs=1e-5)
    assert stats.direction(iv) == stats.NO_CHANGE  # -0.48 < 0 < 4.48: the interval reaches 0
    assert stats.mean_interval([5.0]) is None  # one seed has no spread to read a difference against


def test_welchs_difference_interval_worked_by_hand():
    # a = (2, 4), b = (1, 3): difference 1; each variance 2, se = sqrt(2/2 + 2/2) = sqrt(2); Welch's degrees of
    # freedom (1 + 1)^2 / (1/1 + 1/1) = 2, t = 4.302653: 1 +- 6.08487.
    iv = stats.difference([2, 4], [1, 3])
    assert iv.estimate == 1
    assert iv.low == pytest.approx(1 - 6.08487, abs=1e-5) and iv.high == pytest.approx(1 + 6.08487, abs=1e-5)
    # Seeds that agree exactly: the difference is known exactly.
    exact = stats.difference([120, 120], [100, 100])
    assert (exact.low, exact.high) == (20, 20) and stats.direction(exact) == "above"
    assert stats.direction(stats.difference([100, 100], [100, 100])) == stats.NO_CHANGE
    assert stats.difference([1, 2], [3]) is None


def test_the_fit_of_an_exact_geometric_decay_is_its_log_factor_with_r2_one():
    d = [5, 6, 7, 8]
    iv = stats.fit(d, [math.log(3.0) + k * math.log(0.5) for k in d])
    assert iv.slope.estimate == pytest.approx(math.log(0.5)) and iv.r_squared == pytest.approx(1.0)
    assert iv.slope.high == pytest.approx(math.log(0.5))  # no residual, no width
    assert stats.fit([1, 2], [0, 1]) is None


# --------------------------------------------------------------------------------------------------------------
# Verdicts from parts


def test_parts_combine_into_holds_fails_partly_and_not_shown():
    ok, bad, hidden = Part("a", HOLDS, "1"), Part("b", FAILS, "2", "worse"), Part("c", NOT_SHOWN, note="one seed")
    assert combine([ok, hidden])[0] == HOLDS
    assert combine([bad])[0] == FAILS
    verdict, value, reason = combine([ok, bad, hidden])
    assert verdict == PARTLY and value == "a: 1; b: 2"
    assert reason == "holds for a; fails for b (worse); not shown for c: one seed"
    assert combine([hidden]) == (NOT_SHOWN, "", "c: one seed")
    # A claim of two halves: one that holds beside one not shown is partly, never holds.
    halves = [Part("size", HOLDS, aspect="size"), Part("gain", NOT_SHOWN, note="one seed", aspect="gain")]
    assert combine(halves)[0] == PARTLY


# --------------------------------------------------------------------------------------------------------------
# Results folders written by hand


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


CLIPPING_ABOUT = {"family": "rnn", "corpus": "ptb", "metric": "test_ppl", "fixed": {"lr": 0.5}}
UNCLIPPED = (100.0, 102.0, 98.0)


def clipping_folder(root, clipped_ppl, *, none_study="clipping_ptb", outcome="learned"):
    """Unclipped runs at rate 0.5 (perplexity 100 +- 2 over three seeds) and norm clipping at 0.25 at the same
    rate with the perplexities given, every step clipped."""
    write_study(
        root,
        none_study,
        {**CLIPPING_ABOUT, "vary": ["clip_mode"], "fixed": {"lr": 0.5, "clip": 15.0}},
        [
            {"run_id": f"none-{s}", "seed": s, "clip_mode": "none", "outcome": outcome, "metrics": {"test_ppl": p}}
            for s, p in zip((1, 2, 3), UNCLIPPED, strict=True)
        ],
    )
    write_study(
        root,
        "clip_threshold_ptb",
        {**CLIPPING_ABOUT, "vary": ["clip"], "fixed": {"lr": 0.5, "clip_mode": "norm"}},
        [
            {
                "run_id": f"norm-{s}",
                "seed": s,
                "clip": 0.25,
                "outcome": outcome,
                "metrics": {"test_ppl": p, "clipped_fraction": 1.0, "clip_cosine_mean": 1.0, "diverged": 0.0},
            }
            for s, p in zip((1, 2, 3), clipped_ppl, strict=True)
        ],
    )
    return Roles(studies={"clipping": (none_study, "clip_threshold_ptb")})


def claim(claim_id):
    return next(c for c in CLAIMS if c.id == claim_id)


def test_clipping_that_costs_a_fifth_of_the_perplexity_fails_costs_nothing(tmp_path):
    roles = clipping_folder(tmp_path, [p * 1.2 for p in UNCLIPPED])  # 120, 122.4, 117.6: 20% worse on every seed
    finding = judge(claim("clip_quality"), Evidence(tmp_path, roles))
    assert finding.verdict == FAILS
    # difference 20, each side's sd 2 and 2.4 over three seeds: the interval is far from 0
    assert "+20%" in finding.value and "ptb, rate 0.5, norm ≤ 0.25" in finding.value
    assert finding.evidence == "studies/clipping_ptb; studies/clip_threshold_ptb"


def test_clipping_with_the_unclipped_perplexities_holds_costs_nothing(tmp_path):
    roles = clipping_folder(tmp_path, list(UNCLIPPED))
    finding = judge(claim("clip_quality"), Evidence(tmp_path, roles))
    assert finding.verdict == HOLDS and "+0% [" in finding.value
    direction = judge(claim("clip_direction"), Evidence(tmp_path, roles))
    assert direction.verdict == HOLDS and "1.000000" in direction.value


def test_a_claim_whose_runs_did_not_learn_is_not_shown(tmp_path):
    roles = clipping_folder(tmp_path, list(UNCLIPPED), outcome="did not learn")
    finding = judge(claim("clip_quality"), Evidence(tmp_path, roles))
    assert (
        finding.verdict == NOT_SHOWN and "needs two learned seeds on each side, has 0 clipped and 0" in finding.reason
    )


def test_a_renamed_clipping_study_is_still_found_by_its_role(tmp_path):
    merged = merge_config_files(CONFIG_FILES)
    merged["studies"] = {("my_clip_runs" if k == "clipping_ptb" else k): v for k, v in merged["studies"].items()}
    merged["comparison"]["dynamic_evaluation"] = None
    config = load_config(merged)
    roles = Roles.from_config(config)
    assert "my_clip_runs" in roles.studies["clipping"] and "clipping_ptb" not in roles.study_names()
    # and its results are read under the new name
    clipping_folder(tmp_path, [p * 1.2 for p in UNCLIPPED], none_study="my_clip_runs")
    finding = judge(
        claim("clip_quality"), Evidence(tmp_path, Roles(studies={"clipping": ("my_clip_runs", "clip_threshold_ptb")}))
    )
    assert finding.verdict == FAILS and "studies/my_clip_runs" in finding.evidence


def test_a_claim_with_no_study_of_its_role_is_not_shown_and_says_so(tmp_path):
    finding = judge(claim("sigmoid_quarter"), Evidence(tmp_path, Roles()))
    assert finding.verdict == NOT_SHOWN and finding.reason == "no analysis with role activation in this config"


def test_divergence_prevented_at_one_threshold_and_not_at_another_is_partly(tmp_path):
    about = {**CLIPPING_ABOUT, "vary": ["clip_mode", "clip"], "fixed": {"lr": 1.0}}
    runs = [
        {
            "run_id": f"none-{s}",
            "seed": s,
            "clip_mode": "none",
            "clip": 15.0,
            "outcome": "diverged",
            "metrics": {"diverged": 1.0},
        }
        for s in (1, 2)
    ]
    runs += [
        {
            "run_id": f"n1-{s}",
            "seed": s,
            "clip_mode": "norm",
            "clip": 1.0,
            "outcome": "learned",
            "metrics": {"diverged": 0.0},
        }
        for s in (1, 2)
    ]
    runs += [
        {
            "run_id": f"n25-{s}",
            "seed": s,
            "clip_mode": "norm",
            "clip": 25.0,
            "outcome": "diverged" if s == 1 else "learned",
            "metrics": {"diverged": float(s == 1)},
        }
        for s in (1, 2)
    ]
    write_study(tmp_path, "clips", about, runs)
    finding = judge(claim("clip_divergence"), Evidence(tmp_path, Roles(studies={"clipping": ("clips",)})))
    assert finding.verdict == PARTLY
    assert "ptb, rate 1, norm ≤ 1: unclipped 2/2 diverged, clipped 0/2" in finding.value
    assert "fails for ptb, rate 1, norm ≤ 25 (1 of 2 diverged)" in finding.reason


WINDOW_ABOUT = {"family": "ff", "corpus": "agreement", "metric": "agreement_accuracy", "vary": ["context"]}


def test_a_window_whose_accuracy_falls_just_past_its_width_is_blind_there(tmp_path):
    # n-1 = 2: distance 2 at 0.90, 0.92, 0.94; distance 3 at 0.60, 0.61, 0.65: drops 0.30, 0.31, 0.29,
    # mean 0.30, sd 0.01, t interval 0.30 +- 4.303 * 0.01 / sqrt(3) = [0.275, 0.325]: above 0.
    write_study(
        tmp_path,
        "windows",
        WINDOW_ABOUT,
        [
            {"run_id": f"w{s}", "seed": s, "context": 2, "outcome": "learned", "metrics": {"agreement_accuracy": 0.8}}
            for s in (1, 2, 3)
        ],
    )
    for s, (a, b) in zip((1, 2, 3), ((0.90, 0.60), (0.92, 0.61), (0.94, 0.65)), strict=True):
        write_accuracy(tmp_path, f"w{s}", {1: 0.95, 2: a, 3: b})
    finding = judge(claim("window_blind"), Evidence(tmp_path, Roles(studies={"window": ("windows",)})))
    assert finding.verdict == HOLDS
    assert finding.value == "windows, n−1 = 2: accuracy at distance 2 − at 3: +0.3 [+0.275, +0.325]"


def test_a_recurrence_with_a_cliff_fails_no_cliff(tmp_path):
    write_study(
        tmp_path,
        "rnns",
        {**WINDOW_ABOUT, "family": "rnn", "vary": ["hidden"]},
        [
            {"run_id": f"r{s}", "seed": s, "hidden": 60, "outcome": "learned", "metrics": {"agreement_accuracy": 0.8}}
            for s in (1, 2, 3)
        ],
    )
    for s, jitter in zip((1, 2, 3), (0.0, 0.01, -0.01), strict=True):  # flat, then a drop of 0.3 from distance 3 to 4
        write_accuracy(tmp_path, f"r{s}", {1: 0.9 + jitter, 2: 0.9, 3: 0.9 - jitter, 4: 0.6 + jitter})
    finding = judge(claim("recurrence_no_cliff"), Evidence(tmp_path, Roles(studies={"recurrence": ("rnns",)})))
    assert finding.verdict == FAILS and "cliff at 3→4" in finding.reason


def lm_size_folder(root, rnn_ppl):
    """PTB windows of n-1 = 1 (1,494,002 parameters) at test perplexity 160, 161, 159, and Elman RNNs at H = 50
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
            for s, p in zip((1, 2, 3), (160.0, 161.0, 159.0), strict=True)
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


def test_the_recurrence_is_set_against_the_window_of_its_size_on_a_language_models_text(tmp_path):
    # H = 200 at 150, 152, 148 against the window's 160, 161, 159: recurrence - window = 150 - 160 = -10, lower is
    # better for perplexity. H = 50 is 25% smaller than the window and is not its match.
    roles = lm_size_folder(tmp_path, (150.0, 152.0, 148.0))
    finding = judge(claim("recurrence_beats_window"), Evidence(tmp_path, roles))
    assert finding.verdict == HOLDS
    assert finding.value.startswith(
        "ptb, n−1 = 1 (1,494,002) against H = 200 (1,534,002): test_ppl, recurrence − window −10 ["
    )
    # One seed of the recurrence has no spread to read a gap of any size against.
    one = tmp_path / "one"
    finding = judge(claim("recurrence_beats_window"), Evidence(one, lm_size_folder(one, (150.0,))))
    assert finding.verdict == NOT_SHOWN and "1 recurrence and 3 window runs learned; needs two each" in finding.reason
    # The window ahead by as much: the recurrence is not better.
    ahead = tmp_path / "ahead"
    finding = judge(claim("recurrence_beats_window"), Evidence(ahead, lm_size_folder(ahead, (170.0, 172.0, 168.0))))
    assert finding.verdict == FAILS and "recurrence − window +10 [" in finding.value


def test_full_bptt_better_beyond_k_shows_truncation_hides_the_dependency(tmp_path):
    about = {"family": "rnn", "corpus": "agreement", "metric": "agreement_accuracy", "vary": ["bptt"]}
    runs = [
        {"run_id": f"b{k}-{s}", "seed": s, "bptt": k, "outcome": "learned", "metrics": {"agreement_accuracy": 0.8}}
        for k in (0, 2)
        for s in (1, 2)
    ]
    write_study(tmp_path, "cuts", about, runs)
    for s, j in ((1, 0.0), (2, 0.02)):
        write_accuracy(tmp_path, f"b0-{s}", {1: 0.9, 2: 0.9, 3: 0.85 + j, 4: 0.85 - j})
        write_accuracy(tmp_path, f"b2-{s}", {1: 0.9, 2: 0.9, 3: 0.55 + j, 4: 0.55 - j})
    finding = judge(claim("truncation_invisible"), Evidence(tmp_path, Roles(studies={"truncation_reach": ("cuts",)})))
    # beyond 2 (distances 3 and 4, 100 probes each): 0.85 for every full run, 0.55 for every truncated one
    assert finding.verdict == HOLDS and "full − truncated +0.3 [+0.3, +0.3]" in finding.value


def sentence_cut_folder(root, beyond_sentence):
    """A stream-segment study (bptt 0 and 2) and a sentence-cut study (bptt 0, the same runs, and 2), two seeds each:
    beyond k = 2 full BPTT scores 0.9, stream segments 0.55 and sentence cuts ``beyond_sentence``, give or take
    0.01 between the seeds at distances 3 and 4 (their mean unchanged)."""
    about = {"family": "rnn", "corpus": "agreement", "metric": "agreement_accuracy", "vary": ["bptt"]}
    metrics = {"agreement_accuracy": 0.8}
    stream = [
        {"run_id": f"b{k}-{s}", "seed": s, "bptt": k, "outcome": "learned", "metrics": metrics}
        for k in (0, 2)
        for s in (1, 2)
    ]
    sentence = [
        {"run_id": f"{prefix}-{s}", "seed": s, "bptt": k, "outcome": "learned", "metrics": metrics}
        for k, prefix in ((0, "b0"), (2, "c2"))
        for s in (1, 2)
    ]
    write_study(root, "stream", about, stream)
    write_study(root, "sentence", about, sentence)
    for s, j in ((1, 0.01), (2, -0.01)):
        for run_id, far in (("b0", 0.9), ("b2", 0.55), ("c2", beyond_sentence)):
            write_accuracy(root, f"{run_id}-{s}", {1: 0.95, 2: 0.95, 3: far + j, 4: far - j})
    return Roles(studies={"truncation_reach": ("stream",), "truncation_sentence": ("sentence",)})


def test_sentence_cuts_between_stream_segments_and_full_bptt_reduce_the_damage_without_removing_it(tmp_path):
    # beyond 2: full 0.9, sentence cuts 0.75, stream 0.55 in every seed (each seed's two distances average out)
    finding = judge(claim("sentence_cuts_reduce"), Evidence(tmp_path, sentence_cut_folder(tmp_path, 0.75)))
    assert finding.verdict == HOLDS
    assert "sentence against stream, k = 2: accuracy beyond 2, sentence − stream +0.2" in finding.value
    assert "sentence against full-sentence BPTT, k = 2: accuracy beyond 2, full − sentence +0.15" in finding.value
    # sentence cuts as good as full BPTT: the damage is removed, so the claim holds only in part
    removed = judge(claim("sentence_cuts_reduce"), Evidence(tmp_path / "x", sentence_cut_folder(tmp_path / "x", 0.9)))
    assert removed.verdict == PARTLY and "fails for sentence against full-sentence BPTT, k = 2" in removed.reason


def write_rates(root, name, rows, *, network="untrained", study=None):
    folder = Path(root) / "analyses" / name
    folder.mkdir(parents=True)
    keys = ["family", "radius", "activation", "hidden", "embed_dim", "seed"]
    base = {"direction": "backward", "method": "one_pass", "quantity": "h", "fit_from": 5, "fit_to": 29}
    pd.DataFrame([{**base, **r} for r in rows]).to_csv(folder / "rates.csv", index=False)
    (folder / "analysis.json").write_text(json.dumps({"name": name, "keys": keys, "network": network, "study": study}))


def test_rates_below_and_above_zero_over_seeds_decide_vanishing_and_explosion(tmp_path):
    net = {"family": "rnn", "activation": "tanh", "hidden": 32, "embed_dim": 16}
    write_rates(
        tmp_path,
        "radii",
        [
            {**net, "radius": 0.5, "seed": 0, "rate": -0.70},
            {**net, "radius": 0.5, "seed": 1, "rate": -0.72},
            {**net, "radius": 1.1, "seed": 0, "rate": 0.01},  # +0.01 and -0.01: inside the noise of 0
            {**net, "radius": 1.1, "seed": 1, "rate": -0.01},
        ],
    )
    roles = Roles(analyses={"radius": ("radii",)})
    vanish = judge(claim("vanish_below_one"), Evidence(tmp_path, roles))
    assert vanish.verdict == HOLDS and "rate −0.71 [" in vanish.value and "over 2 seeds" in vanish.value
    explode = judge(claim("explode_above_one"), Evidence(tmp_path, roles))
    assert explode.verdict == FAILS and "no measurable change" in explode.reason


def test_the_lessons_gradient_reach_holds_when_it_falls_at_every_longer_sequence(tmp_path):
    tables = tmp_path / "tables"
    tables.mkdir()
    path = tables / "lesson_gradient_reach.csv"
    pd.DataFrame({"length": [5, 20, 50], "grad_token1_mean_abs": [1e-2, 1e-6, 1e-14]}).to_csv(path, index=False)
    assert judge(claim("lesson_gradient_reach"), Evidence(tmp_path, Roles())).verdict == HOLDS
    pd.DataFrame({"length": [5, 20, 50], "grad_token1_mean_abs": [1e-2, 1e-6, 1e-5]}).to_csv(path, index=False)
    finding = judge(claim("lesson_gradient_reach"), Evidence(tmp_path, Roles()))
    assert finding.verdict == FAILS and "does not fall at T = 50" in finding.reason
    off = judge(claim("lesson_gradient_reach"), Evidence(tmp_path, Roles(worked=False)))
    assert off.verdict == NOT_SHOWN and "tables.worked is false" in off.reason


def test_the_job_writes_one_row_per_claim_and_names_what_it_read(tmp_path):
    roles = clipping_folder(tmp_path, [p * 1.2 for p in UNCLIPPED])
    out = tmp_path / "tables" / "findings.csv"
    record = tmp_path / "tables" / "findings.provenance.json"
    jobs.findings_table(
        str(tmp_path),
        {**roles.record(), "worked": False},
        str(out),
        provenance_file=str(record),
        provenance={"config": {}, "config_files": [], "command": "test", "checkout": str(REPO)},
    )
    table = pd.read_csv(out, keep_default_na=False)
    assert list(table.columns) == list(COLUMNS) and list(table["id"]) == [c.id for c in CLAIMS]
    assert table.set_index("id").loc["clip_quality", "verdict"] == FAILS
    assert set(table["verdict"]) <= {HOLDS, FAILS, PARTLY, NOT_SHOWN}
    inputs = json.loads(record.read_text())["inputs"]
    assert any(str(i).endswith("studies/clip_threshold_ptb/summary.csv") for i in inputs)


# --------------------------------------------------------------------------------------------------------------
# The registry against the config and the seeds


# Roles the config gives before a claim reads them, so that their evidence is built meanwhile: state_carries, the
# decoding probe (kind: probe). A role leaves this set when a claim reads it (the test fails while both hold).
UNREAD_ROLES = {"state_carries"}


def test_the_schema_allows_exactly_the_roles_the_claims_read():
    assert set(schema()["$defs"]["role"]["enum"]) == set(ROLES) | UNREAD_ROLES
    assert not UNREAD_ROLES & set(ROLES), "a claim reads it now: take it out of UNREAD_ROLES"


def test_roles_are_not_run_settings_and_a_misspelt_one_names_the_key():
    merged = merge_config_files(CONFIG_FILES)
    merged["comparison"]["dynamic_evaluation"] = None
    with_roles = load_config(merged)
    bare = json.loads(json.dumps(merged))
    for body in [*bare["studies"].values(), *bare["analyses"].values()]:
        body.pop("roles", None)
    assert sorted(load_config(bare).all_runs()) == sorted(with_roles.all_runs())
    bare["studies"]["clipping_ptb"]["roles"] = ["cliping"]
    with pytest.raises(
        ConfigError, match=r"studies\.clipping_ptb\.roles\.0: 'cliping' is not allowed; allowed values: 'window'"
    ):
        load_config(bare)


def test_the_findings_wait_for_the_units_and_speed_tables_they_read():
    from rnnbench import paths

    merged = merge_config_files(CONFIG_FILES)
    merged["comparison"]["dynamic_evaluation"] = None
    config = load_config(merged)
    inputs = paths.findings_inputs(config, [])
    results = config.results_dir
    for study in ("activation_ptb", "activation_agreement"):  # role activation_training: units.csv, speed.csv
        assert paths.study_extra_table(results, study, "units") in inputs
        assert paths.study_extra_table(results, study, "speed") in inputs
    assert paths.study_extra_table(results, "truncation_agreement", "distance") not in inputs  # read per run instead


def _seeds_folder() -> Path | None:
    for candidate in (os.environ.get("RNNBENCH_SEEDS"), REPO.parent / "shared" / "seeds", "/work/shared/seeds"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def test_every_quote_is_the_seeds_own_words():
    folder = _seeds_folder()
    if folder is None:
        pytest.skip("the seeds' folder (shared/seeds beside the checkout, or $RNNBENCH_SEEDS) is not here")
    for c in CLAIMS:
        assert c.seed in SEEDS
        assert c.quote in (folder / c.seed).read_text(encoding="utf-8"), c.id
    assert len({c.id for c in CLAIMS}) == len(CLAIMS)


def test_the_book_links_each_claim_to_the_sections_its_evidence_has(tmp_path):
    from rnnbench.book import findings

    roles = clipping_folder(tmp_path, list(UNCLIPPED))
    (tmp_path / "analyses" / "radii").mkdir(parents=True)
    (tmp_path / "analyses" / "radii" / "analysis.json").write_text(json.dumps({"kind": "gradient_decay"}))
    evidence = "studies/clipping_ptb; analyses/radii; analyses/absent; studies/absent; tables/benchmarks.csv"
    tables = {"tables/benchmarks.csv": "sec-benchmarks"}
    assert findings.sections(evidence, tables, tmp_path) == [
        "sec-study-clipping-ptb",
        "sec-analysis-radii",
        "sec-benchmarks",
    ]
    out = tmp_path / "tables" / "findings.csv"
    table, _ = findings_table(tmp_path, Roles(studies=roles.studies, worked=False))
    out.parent.mkdir(exist_ok=True)
    table.to_csv(out, index=False)
    counts = findings.verdict_counts(findings.findings(tmp_path))
    assert sum(counts.values()) == len(CLAIMS) and counts[HOLDS] >= 2  # clip_direction and clip_quality


# --------------------------------------------------------------------------------------------------------------
# Activations


ACTIVATION_ABOUT = {"family": "rnn", "corpus": "ptb", "metric": "test_ppl", "vary": ["activation"]}


# Steps to the study's target training loss (speed.csv), per activation and seed, unless a test says otherwise.
STEPS_TO_TARGET = {"tanh": [400, 405, 410], "sigmoid": [600, 610, 605], "relu": [300, 310, 320]}


def activation_folder(root, valid, silent, name="activation_ptb", outcome="learned", diverged=(), steps=None):
    """A study of three activations, three seeds each: ``valid`` activation -> validation perplexities per seed,
    ``silent`` activation -> each seed's share of silent units (units.csv, 100 units), ``steps`` activation ->
    each seed's optimiser steps to a training perplexity of 300 (speed.csv; STEPS_TO_TARGET if not given). The
    runs of the activations in ``diverged`` diverged: so their outcome says, and their units were never counted."""
    steps = steps or STEPS_TO_TARGET
    runs, units, speed = [], [], []
    for act, values in valid.items():
        state = "diverged" if act in diverged else outcome
        for seed, (ppl, share) in enumerate(zip(values, silent[act], strict=True), start=1):
            reached = steps[act][seed - 1] if state == "learned" else math.nan
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


def test_a_sigmoid_network_measurably_behind_tanh_after_equal_training_holds(tmp_path):
    # sigmoid (300, 310, 305) against tanh (250, 255, 245): difference 55, each variance 25, se = sqrt(25/3 + 25/3)
    # = 4.0825 on Welch's 4 degrees of freedom, t = 2.776445: 55 +- 11.335.
    roles = activation_folder(
        tmp_path,
        {"tanh": [250, 255, 245], "sigmoid": [300, 310, 305], "relu": [260, 270, 265]},
        {"tanh": [0, 0, 0], "sigmoid": [0, 0, 0], "relu": [0.1, 0.12, 0.08]},
    )
    # steps to the target, sigmoid (600, 610, 605) against tanh (400, 405, 410): the same spread, 200 +- 11.335
    finding = judge(claim("zero_centred_faster"), Evidence(tmp_path, roles))
    assert finding.verdict == HOLDS
    assert finding.value == (
        "activation_ptb, sigmoid against tanh: valid_ppl 305 against 250, sigmoid − tanh +55 [+43.7, +66.3]; "
        "activation_ptb, steps to a training loss both reach, sigmoid against tanh: steps to training perplexity "
        "300: 605 against 405, sigmoid − tanh +200 [+189, +211]"
    )
    # the same spread at equal means (perplexity and steps) is no measurable change, and the claim fails; behind
    # after equal training but no slower to the target (the sigmoid's steps now tanh's less 100), it holds in part
    silent = {"tanh": [0, 0, 0], "sigmoid": [0, 0, 0], "relu": [0, 0, 0]}
    level_ppl = {"tanh": [250, 255, 245], "sigmoid": [252, 248, 250], "relu": [260, 270, 265]}
    level_steps = {**STEPS_TO_TARGET, "sigmoid": [402, 398, 405]}
    faster_steps = {**STEPS_TO_TARGET, "sigmoid": [300, 310, 305]}
    cases = {
        "level": (level_ppl, level_steps, FAILS, stats.NO_CHANGE),
        "part": (None, faster_steps, PARTLY, "the other way"),
    }
    behind = {"tanh": [250, 255, 245], "sigmoid": [300, 310, 305], "relu": [260, 270, 265]}
    for case, (valid, steps, verdict, why) in cases.items():
        roles = activation_folder(tmp_path / case, valid or behind, silent, steps=steps)
        finding = judge(claim("zero_centred_faster"), Evidence(tmp_path / case, roles))
        assert finding.verdict == verdict and why in finding.reason, case


def test_relu_units_that_die_in_training_hold_and_none_dying_fails(tmp_path):
    # shares (0.10, 0.12, 0.08): mean 0.10, sd 0.02, se 0.011547, t_{0.975, 2} = 4.302653: 10% +- 4.97%.
    valid = {"tanh": [250, 255, 245], "sigmoid": [300, 310, 305], "relu": [260, 270, 265]}
    roles = activation_folder(tmp_path, valid, {"tanh": [0] * 3, "sigmoid": [0] * 3, "relu": [0.1, 0.12, 0.08]})
    finding = judge(claim("relu_dies"), Evidence(tmp_path, roles))
    assert finding.verdict == HOLDS
    assert finding.value == "activation_ptb, relu: share of 100 units silent on validation +10% [+5.03%, +15%]"
    alive = activation_folder(tmp_path / "alive", valid, {"tanh": [0] * 3, "sigmoid": [0] * 3, "relu": [0] * 3})
    finding = judge(claim("relu_dies"), Evidence(tmp_path / "alive", alive))
    assert finding.verdict == FAILS and "no unit measurably died" in finding.reason


def test_activation_claims_on_runs_that_did_not_learn_are_not_shown(tmp_path):
    roles = activation_folder(
        tmp_path,
        {"tanh": [700, 710, 705], "sigmoid": [720, 730, 725], "relu": [700, 700, 700]},
        {"tanh": [0] * 3, "sigmoid": [0] * 3, "relu": [0.5] * 3},
        outcome="did not learn",
    )
    for claim_id in ("zero_centred_faster", "relu_dies"):
        finding = judge(claim(claim_id), Evidence(tmp_path, roles))
        assert finding.verdict == NOT_SHOWN and "0 of 3 runs learned; needs two" in finding.reason


def test_relu_runs_that_all_blow_up_beside_tanh_runs_that_train_hold_the_lessons_no_ceiling(tmp_path):
    valid = {"tanh": [250, 255, 245], "sigmoid": [300, 310, 305], "relu": [260, 270, 265]}
    none = {"tanh": [0] * 3, "sigmoid": [0] * 3, "relu": [0] * 3}
    roles = activation_folder(tmp_path, valid, none, diverged=("relu",))
    finding = judge(claim("relu_no_ceiling"), Evidence(tmp_path, roles))
    assert (
        finding.verdict == HOLDS
        and finding.value == "activation_ptb, relu against tanh: diverged: relu 3 of 3, tanh 0 of 3"
    )
    # with no ReLU run diverging the lesson's reason is not seen here
    calm = activation_folder(tmp_path / "calm", valid, {"tanh": [0] * 3, "sigmoid": [0] * 3, "relu": [0] * 3})
    finding = judge(claim("relu_no_ceiling"), Evidence(tmp_path / "calm", calm))
    assert finding.verdict == FAILS and "3 relu runs trained" in finding.reason


def trained_rates_folder(root, forward_rates, backward=(-0.10, -0.12, -0.11)):
    """Three learned runs of a study, measured at their final weights by an analysis of role trained_decay: the
    backward rates ``backward`` and the forward (JVP) rates given, seed by seed."""
    write_study(
        root,
        "agree",
        {"family": "rnn", "corpus": "agreement", "metric": "agreement_accuracy"},
        [
            {"run_id": f"r{s}", "seed": s, "outcome": "learned", "metrics": {"agreement_accuracy": 0.9}}
            for s in (1, 2, 3)
        ],
    )
    folder = Path(root) / "analyses" / "trained"
    folder.mkdir(parents=True)
    base = {"snapshot": "final", "quantity": "h", "fit_from": 5, "fit_to": 29}
    rows = [
        {**base, "run_id": f"r{s}", "seed": s, "direction": direction, "method": method, "rate": rate}
        for s, back, fwd in zip((1, 2, 3), backward, forward_rates, strict=True)
        for direction, method, rate in (("backward", "one_pass", back), ("forward", "jvp", fwd))
    ]
    pd.DataFrame(rows).to_csv(folder / "rates.csv", index=False)
    record = {"name": "trained", "keys": ["run_id", "seed", "snapshot"], "network": "study", "study": "agree"}
    (folder / "analysis.json").write_text(json.dumps(record))
    return Roles(analyses={"trained_decay": ("trained",)})


def test_a_forward_move_that_fades_as_fast_as_the_gradient_fails_the_forward_carries_claim(tmp_path):
    # forward − backward per seed: +0.01, −0.01, 0: mean 0, sd 0.01, t_{0.975, 2} 4.30 x 0.00577: 0 +- 0.0248
    same = trained_rates_folder(tmp_path, (-0.09, -0.13, -0.11))
    finding = judge(claim("forward_carries"), Evidence(tmp_path, same))
    assert finding.verdict == FAILS and "the same rate" in finding.reason
    assert "forward − backward +0 [−0.0248, +0.0248] over 3 seeds" in finding.value
    # a forward move at −0.02 a step against blame at −0.11: the state outlasts the gradient
    slower = trained_rates_folder(tmp_path / "slower", (-0.02, -0.03, -0.01))
    finding = judge(claim("forward_carries"), Evidence(tmp_path / "slower", slower))
    assert finding.verdict == HOLDS and "rate forward −0.02, backward −0.11" in finding.value


def test_relu_units_are_not_counted_when_every_relu_run_diverged(tmp_path):
    valid = {"tanh": [250, 255, 245], "sigmoid": [300, 310, 305], "relu": [260, 270, 265]}
    none = {"tanh": [0] * 3, "sigmoid": [0] * 3, "relu": [0] * 3}
    roles = activation_folder(tmp_path, valid, none, diverged=("relu",))
    finding = judge(claim("relu_dies"), Evidence(tmp_path, roles))
    assert (
        finding.verdict == NOT_SHOWN
        and finding.reason == "activation_ptb, relu: 0 of 3 runs learned; needs two; 3 diverged"
    )
