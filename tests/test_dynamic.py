"""Dynamic evaluation: one SGD step per segment after scoring it, worked by hand on a model that is a unigram
model in disguise; lr = 0 is static evaluation exactly; the caller's model is never changed; the run record."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from rnnbench import paths
from rnnbench.config.files import ConfigError, merge_config_files
from rnnbench.config.runs import RunConfig
from rnnbench.config.settings import load_config
from rnnbench.io import write_json
from rnnbench.models import ModelConfig, build_model
from rnnbench.paths import run_dir
from rnnbench.results.dynamic_record import FIELDS, dynamic_metrics
from rnnbench.training.dynamic import choose_rate, dynamic_likelihood, dynamic_segments, evaluate_run, segment_length
from rnnbench.training.evaluate import stream_likelihood
from rnnbench.training.loop import train_run

torch.set_num_threads(1)

REPO = Path(__file__).resolve().parents[1]

NO_CLIP = {"clip_mode": "none", "clip": 1.0}
SMALL_AGREEMENT = {"seed": 3, "train_sentences": 50, "valid_sentences": 20, "test_sentences": 120}


def bias_only(impl="fast"):
    """An Elman LM over two words whose every weight is zero: h_t = tanh(0) = 0, so p(w) = softmax(b_y)
    whatever it reads, and the only gradient is the output bias's, dL/db_y = p - (share of each word among
    the targets). The other gradients are exactly zero: dV = dz^T h = 0, dh = dz V = 0, so nothing reaches W,
    U, b_h or the embedding. A unigram model, learnt by hand."""
    cfg = ModelConfig("rnn", vocab_size=2, embed_dim=2, hidden=2, output="full", impl=impl)
    model = build_model(cfg).double()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    return model


# Stream 0 1 1 1 1, segments of 2: inputs (0 1) -> targets (1 1), then (1 1) -> (1 1).
REPEATED = np.array([0, 1, 1, 1, 1])


@pytest.mark.parametrize("impl", ["fast", "reference"])
def test_one_sgd_step_worked_by_hand(impl):
    # Segment 1, b = (0, 0): p = (1/2, 1/2), NLL 2 ln 2, scored before any step.
    # Its mean-NLL gradient: p - (0, 1) = (1/2, -1/2); lr 1 takes b to (-1/2, 1/2), so p(1) = sigmoid(1).
    # Segment 2: NLL 2 (-ln sigmoid(1)) = 2 ln(1 + e^-1) = 0.6265, below its static 2 ln 2 = 1.386.
    scores = dynamic_segments(bias_only(impl), REPEATED, lr=1.0, bptt=2, **NO_CLIP)
    assert scores.tokens.tolist() == [2, 2]
    assert scores.nll == pytest.approx([2 * math.log(2), 2 * math.log(1 + math.exp(-1))], rel=1e-12)
    total = dynamic_likelihood(bias_only(impl), REPEATED, lr=1.0, bptt=2, **NO_CLIP)
    assert (total.n_tokens, total.nll_sum) == (4, pytest.approx(2 * math.log(2) + 2 * math.log(1 + math.exp(-1))))
    static = stream_likelihood(bias_only(impl), REPEATED, batch_size=1, bptt=2)
    assert static.nll_sum == pytest.approx(4 * math.log(2)) and total.nll_sum < static.nll_sum


def test_the_step_is_clipped_by_global_norm_as_in_training():
    # The gradient (1/2, -1/2) has norm sqrt(1/2) = 0.7071; clipped to sqrt(2)/4 = 0.3536 it is halved, (1/4, -1/4):
    # b goes to (-1/4, 1/4), p(1) = sigmoid(1/2), and segment 2 scores 2 ln(1 + e^-1/2) = 0.9482.
    scores = dynamic_segments(bias_only(), REPEATED, lr=1.0, bptt=2, clip_mode="norm", clip=math.sqrt(2) / 4)
    assert scores.nll[1] == pytest.approx(2 * math.log(1 + math.exp(-0.5)), rel=1e-12)
    # A threshold above the norm leaves the step as it is.
    unclipped = dynamic_segments(bias_only(), REPEATED, lr=1.0, bptt=2, clip_mode="norm", clip=10.0)
    assert unclipped.nll[1] == pytest.approx(2 * math.log(1 + math.exp(-1)), rel=1e-12)


def random_model(family="rnn", *, output="full", impl="fast", dropout=0.0, seed=0):
    torch.manual_seed(seed)
    cfg = ModelConfig(
        family,
        vocab_size=30,
        embed_dim=6,
        hidden=16,
        output=output,
        adaptive_cutoffs=[10, 20],
        impl=impl,
        dropout=dropout,
    )
    return build_model(cfg)


def tokens(n, seed=0):
    return np.random.default_rng(seed).integers(0, 30, n).astype(np.int64)


@pytest.mark.parametrize(
    ("family", "output", "impl"),
    [("rnn", "full", "fast"), ("rnn", "full", "reference"), ("rnn", "adaptive", "fast"), ("lstm", "full", "fast")],
)
def test_lr_zero_is_static_stream_evaluation_at_batch_one_exactly(family, output, impl):
    # 53 tokens in segments of 7: 52 predictions, the last segment 3 long. Same segments, same state carried,
    # same float64 sum: equal to the last bit, although the dynamic pass takes gradients and steps of size 0.
    model, stream = random_model(family, output=output, impl=impl), tokens(53)
    dynamic = dynamic_likelihood(model, stream, lr=0.0, bptt=7, clip_mode="norm", clip=0.25)
    static = stream_likelihood(model, stream, batch_size=1, bptt=7)
    assert dynamic.n_tokens == static.n_tokens == 52
    assert dynamic.nll_sum == static.nll_sum


def test_the_first_segment_is_scored_before_any_update():
    model, stream = random_model(), tokens(40)
    scores = dynamic_segments(model, stream, lr=0.5, bptt=8, **NO_CLIP)
    first = stream_likelihood(model, stream[:9], batch_size=1, bptt=8)  # tokens 1..8 predicted from 0..7
    second = stream_likelihood(model, stream[:17], batch_size=1, bptt=8).nll_sum - first.nll_sum
    assert scores.nll[0] == first.nll_sum and scores.tokens[0] == 8
    assert scores.nll[1] != pytest.approx(second)  # learnt from segment 1 by then


def test_a_repeated_passage_scores_better_the_second_time():
    # 30 words of a five-word vocabulary (of 30) read four times: by the fourth reading the model has learnt which
    # words come back, the static model, near uniform (34 nats a segment, 10 ln 30), has not.
    passage = np.random.default_rng(1).integers(0, 5, 30)
    stream = np.concatenate([passage] * 4 + [passage[:1]])  # 121 tokens: 12 segments of 10 targets
    model = random_model(seed=2)
    dynamic = dynamic_segments(model, stream, lr=0.5, bptt=10, **NO_CLIP)
    static = dynamic_segments(model, stream, lr=0.0, bptt=10, **NO_CLIP)
    first, last = slice(0, 3), slice(9, 12)  # targets 1..30 and 91..120: the first reading and the fourth
    assert dynamic.nll[0] == static.nll[0]
    assert dynamic.nll[last].sum() < 0.7 * static.nll[last].sum()
    assert dynamic.nll[last].sum() < 0.7 * dynamic.nll[first].sum()


def test_the_callers_model_is_left_as_it_was():
    model = random_model(dropout=0.5)
    model.train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    scores = dynamic_segments(model, tokens(60), lr=1.0, bptt=5, **NO_CLIP)
    assert model.training and not model.embedding.sparse
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())
    # Dropout was off while it read: scored again at lr 0, a model in training mode gives the static numbers.
    again = dynamic_likelihood(model, tokens(60), lr=0.0, bptt=5, **NO_CLIP)
    assert again.nll_sum == stream_likelihood(model, tokens(60), batch_size=1, bptt=5).nll_sum
    assert len(scores.nll) == 12


def test_no_grad_around_the_call_does_not_stop_the_updates():
    with torch.no_grad():
        scores = dynamic_segments(bias_only(), REPEATED, lr=1.0, bptt=2, **NO_CLIP)
    assert scores.nll[1] == pytest.approx(2 * math.log(1 + math.exp(-1)), rel=1e-12)


# Stream 0 1 1 0 0: segment 1's targets (1 1), segment 2's (0 0). A step of rate a on segment 1 takes b to
# (-a/2, a/2), so segment 2 scores 2 ln(1 + e^a): learning the first segment only hurts the second.
SWITCHING = np.array([0, 1, 1, 0, 0])


def test_the_rate_with_the_lowest_validation_nll_is_chosen():
    lr, grid = choose_rate(bias_only(), SWITCHING, [1.0, 0.0, 2.0], bptt=2, **NO_CLIP)
    expected = {a: (2 * math.log(2) + 2 * math.log(1 + math.exp(a))) / 4 for a in (1.0, 0.0, 2.0)}
    assert [row["lr"] for row in grid] == [1.0, 0.0, 2.0]
    assert [row["valid_nll"] for row in grid] == pytest.approx(list(expected.values()), rel=1e-12)
    assert [row["valid_ppl"] for row in grid] == pytest.approx([math.exp(v) for v in expected.values()], rel=1e-12)
    assert lr == 0.0


def test_a_rate_whose_nll_is_not_finite_is_never_chosen():
    # lr 1e308 takes b to (-5e307, 5e307): segment 2's two tokens score 1e308 each, a sum that overflows to inf.
    lr, grid = choose_rate(bias_only(), SWITCHING, [1e308, 1.0], bptt=2, **NO_CLIP)
    assert grid[0]["valid_nll"] == math.inf and lr == 1.0
    assert choose_rate(bias_only(), SWITCHING, [1e308], bptt=2, **NO_CLIP)[0] is None


@pytest.mark.parametrize(
    ("settings", "message"),
    [({"lr": -0.1}, "lr must be a finite number >= 0, got -0.1"), ({"lr": math.inf}, "got inf")],
)
def test_bad_settings_are_refused_by_name(settings, message):
    with pytest.raises(ValueError, match=message):
        dynamic_segments(bias_only(), REPEATED, bptt=2, **{**NO_CLIP, **settings})


def test_a_feed_forward_model_is_refused():
    model = build_model(ModelConfig("ff", vocab_size=5, embed_dim=2, hidden=2, context=2, output="full"))
    with pytest.raises(ValueError, match="family 'ff' has none"):
        dynamic_segments(model, REPEATED, lr=0.1, bptt=2, **NO_CLIP)


def test_segment_length_defaults_to_the_runs_own():
    assert segment_length(35, None) == 35 and segment_length(35, 10) == 10
    assert segment_length(0, None) == 35  # a run read as sentences has no segment length of its own
    with pytest.raises(ValueError, match="bptt must be an integer >= 1, got 0"):
        segment_length(35, 0)


# --- a run's record -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny run trained for real (seconds): its folder and its cache."""
    cache = tmp_path_factory.mktemp("cache")
    cfg = RunConfig.from_settings(
        {
            "family": "rnn",
            "corpus": "agreement",
            "corpus_options": SMALL_AGREEMENT,
            "train_tokens": 3000,
            "eval_tokens": 500,
            "max_steps_per_epoch": 10,
            "max_epochs": 1,
            "hidden": 16,
            "embed_dim": 8,
            "output": "full",
            "batch_size": 8,
            "bptt": 10,
        }
    )
    results = tmp_path_factory.mktemp("results")
    folder = run_dir(str(results), cfg.run_id)
    train_run(cfg, folder, cache_dir=cache)
    return results, cfg, cache


def test_a_runs_record_holds_the_grid_the_choice_and_both_perplexities(trained):
    from rnnbench.data.corpora import load_corpus
    from rnnbench.decay.analysis import load_trained
    from rnnbench.training.reading import split_stream

    results, cfg, cache = trained
    record = evaluate_run(
        run_dir(str(results), cfg.run_id), rates=[0.0, 0.3], bptt=None, valid_tokens=200, cache_dir=cache
    )
    model = load_trained(f"{run_dir(str(results), cfg.run_id)}/model.pt")
    corpus = load_corpus("agreement", cache_dir=cache, **SMALL_AGREEMENT)
    test = split_stream(corpus, "test", 500)
    static = stream_likelihood(model, test, batch_size=1, bptt=10)
    assert record["run_id"] == cfg.run_id and record["bptt"] == 10 and record["batch_size"] == 1
    assert (record["clip_mode"], record["clip"]) == (cfg.clip_mode, cfg.clip)
    assert record["chosen_on"] == "valid" and [row["lr"] for row in record["grid"]] == [0.0, 0.3]
    best = min(record["grid"], key=lambda row: row["valid_nll"])
    assert record["lr"] == best["lr"]
    # The grid's lr = 0 row is the validation split's static score.
    assert record["grid"][0]["valid_ppl"] == pytest.approx(record["valid_static_ppl"], rel=1e-12)
    assert 0 < record["valid_tokens"] <= 200
    assert (record["tokens"], record["static_ppl"]) == (static.n_tokens, pytest.approx(static.perplexity, rel=1e-12))
    chosen = dynamic_likelihood(model, test, lr=record["lr"], bptt=10, clip_mode=cfg.clip_mode, clip=cfg.clip)
    assert record["dynamic_ppl"] == pytest.approx(chosen.perplexity, rel=1e-12)
    assert record["diverged"] is False and record["seconds"] >= record["dynamic_seconds"] > 0
    assert tuple(record) == FIELDS

    write_json(f"{run_dir(str(results), cfg.run_id)}/dynamic.json", record)
    assert dynamic_metrics(results, cfg.run_id) == json.loads(json.dumps(record))
    assert dynamic_metrics(results, "rnn-agreement-0000000000") is None


def test_one_rate_is_applied_as_given_and_none_scores_statically(trained):
    results, cfg, cache = trained
    folder = run_dir(str(results), cfg.run_id)
    given = evaluate_run(folder, rates=[0.3], bptt=5, valid_tokens=None, cache_dir=cache)
    assert (given["chosen_on"], given["lr"], given["grid"], given["valid_tokens"], given["bptt"]) == (
        "given",
        0.3,
        [],
        None,
        5,
    )
    static = evaluate_run(folder, rates=[], bptt=5, valid_tokens=None, cache_dir=cache)
    assert static["lr"] is None and static["dynamic_ppl"] is None and static["static_ppl"] == given["static_ppl"]
    assert set(static) == set(given)  # every record has every field


def test_the_validation_split_cannot_choose_its_own_rate(trained):
    results, cfg, cache = trained
    with pytest.raises(ValueError, match="cannot be applied to it"):
        evaluate_run(run_dir(str(results), cfg.run_id), rates=[0.1, 0.3], bptt=None, valid_tokens=None, split="valid")


def test_a_diverged_run_is_recorded_as_diverged(trained, tmp_path):
    results, cfg, cache = trained
    folder = tmp_path / "diverged"
    folder.mkdir()
    source = run_dir(str(results), cfg.run_id)
    (folder / "config.json").write_text(Path(f"{source}/config.json").read_text())
    metrics = json.loads(Path(f"{source}/metrics.json").read_text())
    write_json(folder / "metrics.json", {**metrics, "diverged": True})
    record = evaluate_run(folder, rates=[0.1, 0.3], bptt=None, valid_tokens=None, cache_dir=cache)
    assert record["diverged"] is True and record["static_ppl"] is None and record["dynamic_ppl"] is None
    assert tuple(record) == FIELDS


def test_the_command_prints_and_writes_the_record(trained, tmp_path, capsys):
    from rnnbench import cli

    results, cfg, cache = trained
    out = tmp_path / "dyn.json"
    argv = ["evaluate", "--run", run_dir(str(results), cfg.run_id), "--dynamic", "--lr", "0.1", "0.3"]
    assert cli.main([*argv, "--valid-tokens", "200", "--cache-dir", str(cache), "--out", str(out)]) == 0
    printed, written = json.loads(capsys.readouterr().out), json.loads(out.read_text())
    assert printed == written and written["rates"] == [0.1, 0.3] and written["lr"] in (0.1, 0.3)
    assert written["chosen_on"] == "valid" and written["static_ppl"] > 0 and written["dynamic_ppl"] > 0


def test_the_jobs_record_is_the_runs_dynamic_json(trained):
    from rnnbench import jobs

    results, cfg, cache = trained
    folder = run_dir(str(results), cfg.run_id)
    settings = {"rates": [0.3], "valid_tokens": 200, "bptt": None}
    jobs.dynamic_evaluation(folder, f"{folder}/dynamic.json", settings, threads=1, data_dir=None, cache_dir=cache)
    record = dynamic_metrics(results, cfg.run_id)
    assert record["run_id"] == cfg.run_id and record["lr"] == 0.3 and record["chosen_on"] == "given"


# --- the config's comparison.dynamic_evaluation -------------------------------------------------------------


def _config(**comparison):
    merged = merge_config_files([REPO / "config" / "config.yaml"])
    merged["comparison"] = {**merged["comparison"], **comparison}
    return merged


def test_an_empty_block_takes_the_schemas_defaults_and_asks_for_every_rnn_run():
    config = load_config(_config(dynamic_evaluation={}))
    dynamic = config.comparison.dynamic_evaluation
    assert (dynamic.rates, dynamic.valid_tokens, dynamic.bptt) == ((0.03, 0.1, 0.3, 1.0, 3.0), 20000, None)
    studies = config.comparison.family_studies("rnn")
    assert studies == ["rnn_hidden_ptb", "rnn_matched_ptb"]
    rnn_runs = list(dict.fromkeys(cfg.run_id for s in studies for _, cfg in config.study_runs(s)))
    # H = 50, 100 and 200 (seed 1), and H = 200 seeds 2 and 3: the seed-1 run both studies train, once
    assert config.dynamic_run_ids() == rnn_runs and len(rnn_runs) == 5
    records = [paths.run_dynamic(config.results_dir, run_id) for run_id in rnn_runs]
    outputs = paths.expected_outputs(config, [])
    assert all(r in outputs for r in records)
    assert not any(paths.provenance(r) in outputs for r in records)  # run records, like metrics.json


def test_no_block_or_null_means_no_dynamic_evaluation():
    for config in (load_config(_config()), load_config(_config(dynamic_evaluation=None))):
        assert config.comparison.dynamic_evaluation is None and config.dynamic_run_ids() == []
        assert not any(p.endswith("/dynamic.json") for p in paths.expected_outputs(config, []))


def test_the_shipped_configs_smoke_and_paper_yes_default_no():
    def load(*files):
        return load_config(merge_config_files([REPO / "config" / f for f in files]))

    smoke = load("config.yaml", "smoke.yaml")
    assert smoke.comparison.dynamic_evaluation is not None and len(smoke.dynamic_run_ids()) == 2
    assert load("config.yaml").comparison.dynamic_evaluation is None  # minutes of CPU: off in the default run
    # the paper rows: both seeds of each RNN row (Mikolov's recipe, the modern one) beside Mikolov's dynamic row
    rows = load("config.yaml", "paper.yaml", "paper-rows.yaml")
    rnn_rows = ("paper_rnn_ptb", "paper_rnn_modern_ptb")
    assert rows.dynamic_run_ids() == [cfg.run_id for study in rnn_rows for _, cfg in rows.study_runs(study)]


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (
            {"studies": {"ptb": {"ff": ["ff_context_ptb"]}}, "crossover": None, "dynamic_evaluation": {}},
            r"comparison\.dynamic_evaluation: scores the runs of the comparison's rnn studies, but "
            r"comparison\.studies names none",
        ),
        ({"dynamic_evaluation": {"rate": [0.1]}}, r"unknown key\(s\) 'rate'; allowed: bptt, rates, valid_tokens"),
        (
            {"dynamic_evaluation": {"rates": [0.1, 0.1]}},
            r"comparison\.dynamic_evaluation\.rates: a rate is listed twice",
        ),
        ({"dynamic_evaluation": {"rates": []}}, r"comparison\.dynamic_evaluation\.rates"),
        ({"dynamic_evaluation": {"rates": [-1]}}, r"comparison\.dynamic_evaluation\.rates\.0: -1 is out of range"),
        ({"dynamic_evaluation": {"bptt": 0}}, r"comparison\.dynamic_evaluation\.bptt: 0 is out of range"),
    ],
)
def test_a_bad_block_fails_at_config_time_naming_the_key(block, message):
    merged = merge_config_files([REPO / "config" / "config.yaml"])
    merged["comparison"] = {**merged["comparison"], **block}
    with pytest.raises(ConfigError, match=message):
        load_config(merged)
