"""Config: defaults from the schema, errors that name the key and what is allowed, run ids, study expansion."""

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rnnbench.config.files import (
    ConfigError,
    check_config_files,
    config_files_in_merge_order,
    merge_config_files,
    read_yaml,
    typed_command_line_values,
)
from rnnbench.config.runs import ADDED_AFTER_IDS, RunConfig
from rnnbench.config.schema import run_defaults, schema
from rnnbench.config.settings import check_training_slots, load_config

REPO = Path(__file__).resolve().parents[1]
RNN_PTB = {"family": "rnn", "corpus": "ptb", "vary": {"hidden": [50, 100]}}


def study(**body):
    return {"studies": {"s": {**RNN_PTB, **body}}}


def error_of(source) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(source)
    return str(caught.value)


# --- defaults --------------------------------------------------------------------------------------------


def test_every_run_default_comes_from_the_schema():
    properties = schema()["$defs"]["run_settings"]["properties"]
    cfg = RunConfig.from_settings({})
    for key, prop in properties.items():
        expected = tuple(prop["default"]) if key == "adaptive_cutoffs" else prop["default"]
        assert getattr(cfg, key) == expected, key
    assert run_defaults()["hidden"] == 200 and run_defaults()["bptt"] == 35 and run_defaults()["clip"] == 0.25
    assert cfg.threads == 1  # not a run setting: it comes from the workflow's top-level `threads`


def test_top_level_defaults_come_from_the_schema(monkeypatch):
    monkeypatch.delenv("RNNBENCH_CACHE", raising=False)
    config = load_config({})
    top = schema()["properties"]
    assert (config.results_dir, config.threads, config.data_dir) == (
        top["results_dir"]["default"],
        top["threads"]["default"],
        None,
    )
    assert top["cache_dir"]["default"] is None and config.cache_dir == "data/cache"  # null: $RNNBENCH_CACHE, else
    assert config.studies == {} and config.all_runs() == {} and config.tables == {"worked": True, "kn_order": 5}
    assert load_config({"tables": {"kn_order": 3}}).tables == {"worked": True, "kn_order": 3}


def test_kn_order_out_of_range_names_the_key_and_the_range():
    with pytest.raises(ConfigError, match=r"config\.tables\.kn_order: 1 is out of range.*minimum.: 2"):
        load_config({"tables": {"kn_order": 1}})


def test_study_defaults_fill_seeds_metric_and_description():
    config = load_config(study())
    s = config.studies["s"]
    assert (s.seeds, s.metric, s.description, s.x) == ((1,), "test_ppl", "", "hidden")
    assert len(config.study_runs("s")) == 2  # 2 hidden sizes x 1 seed


# --- errors name the dotted key path and what is allowed -------------------------------------------------


def test_unknown_key_names_the_path_and_the_allowed_keys():
    message = error_of(study(fixed={"hiden": 64}))
    assert message.startswith("config.studies.s.fixed: unknown key(s) 'hiden'; allowed:")
    assert "hidden" in message and "embed_dim" in message
    top = error_of({"studys": {}})
    assert (
        top.startswith("config: unknown key(s) 'studys'; allowed: ")
        and "analyses, cache_dir, comparison, data_dir" in top
    )
    assert error_of(study(varry={})).startswith(
        "config.studies.s: unknown key(s) 'varry'; allowed: corpus, departs_from, description"
    )


def test_wrong_type_names_the_key_and_the_expected_type():
    assert (
        error_of(study(fixed={"hidden": "big"}))
        == "config.studies.s.fixed.hidden: 'big' has the wrong type; expected integer"
    )
    assert error_of({"threads": "two"}) == "config.threads: 'two' has the wrong type; expected integer"
    assert "expected ['integer', 'null']" in error_of({"run": {"train_tokens": "all"}})


def test_out_of_range_names_the_key_and_the_bounds():
    assert error_of(study(fixed={"dropout": 0.95})) == (
        "config.studies.s.fixed.dropout: 0.95 is out of range; allowed: {'minimum': 0, 'maximum': 0.9}"
    )
    assert error_of({"run": {"lr": 0}}) == "config.run.lr: 0 is out of range; allowed: {'exclusiveMinimum': 0}"
    assert error_of({"run_overrides": {"train_tokens": 10}}).startswith(
        "config.run_overrides.train_tokens: 10 is out of range"
    )


def test_bad_enum_lists_the_allowed_values():
    assert error_of(study(fixed={"activation": "gelu"})) == (
        "config.studies.s.fixed.activation: 'gelu' is not allowed; allowed values: 'tanh', 'sigmoid', 'relu'"
    )
    assert (
        error_of(study(family="gru"))
        == "config.studies.s.family: 'gru' is not allowed; allowed values: 'ff', 'rnn', 'lstm'"
    )
    assert "allowed values: 'none', 'norm', 'value'" in error_of({"run": {"clip_mode": "global"}})


NAN, INF = math.nan, math.inf


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        # NaN passes every JSON Schema range check (each comparison with it is false), infinity every minimum
        ({"run": {"lr": NAN}}, "config.run.lr: nan is not allowed; allowed: a finite number > 0"),
        ({"run": {"lr": INF}}, "config.run.lr: inf is not allowed; allowed: a finite number > 0"),
        ({"run": {"clip": NAN}}, "config.run.clip: nan is not allowed; allowed: a number > 0, or .inf"),
        ({"run": {"clip": -INF}}, "config.run.clip: -inf is not allowed; allowed: a number > 0, or .inf"),
        ({"run": {"clip": "infinite"}}, "config.run.clip: 'infinite' has the wrong type; expected number (or .inf)"),
        (
            {"run": {"divergence_norm": NAN}},
            "config.run.divergence_norm: nan is not allowed; allowed: a number > 0, or .inf",
        ),
        (
            study(fixed={"dropout": NAN}),
            "config.studies.s.fixed.dropout: nan is not allowed; allowed: a finite number >= 0 and <= 0.9",
        ),
        (
            {"run_overrides": {"min_improvement": NAN}},
            "config.run_overrides.min_improvement: nan is not allowed; allowed: a finite number >= 1.0",
        ),
        (
            {"run": {"min_improvement": INF}},
            "config.run.min_improvement: inf is not allowed; allowed: a finite number >= 1.0",
        ),
        (
            {"run": {"corpus_options": {"attractor_prob": NAN}}},
            "config.run.corpus_options.attractor_prob: nan is not allowed; allowed: a finite number >= 0 and <= 1",
        ),
        (study(vary={"lr": [0.5, NAN]}), "studies.s.vary.lr[1]: nan is not allowed; allowed: a finite number > 0"),
        (
            {"analyses": {"a": {"network": {"untrained": {"fixed": {"radius": NAN}}}}}},
            "config.analyses.a.network.untrained.fixed.radius: nan is not allowed; allowed: a finite number > 0",
        ),
        (
            {"analyses": {"a": {"network": {"untrained": {"vary": {"radius": [1.0, INF]}}}}}},
            "config.analyses.a.network.untrained.vary.radius.1: inf is not allowed; allowed: a finite number > 0",
        ),
        # an integer setting: NaN and infinity are not integers
        ({"run": {"hidden": NAN}}, "config.run.hidden: nan has the wrong type; expected integer"),
        (
            {"run": {"train_tokens": INF}},
            "config.run.train_tokens: inf has the wrong type; expected ['integer', 'null']",
        ),
    ],
)
def test_a_number_that_is_not_finite_is_refused_naming_the_key(config, expected):
    assert error_of(config) == expected


@pytest.mark.parametrize("key", ["clip", "divergence_norm"])
@pytest.mark.parametrize("written", [INF, "inf"])  # .inf in YAML; "inf" as config.json writes it
def test_infinity_is_a_setting_where_it_means_something(key, written):
    cfg = RunConfig.from_settings({key: written})
    assert getattr(cfg, key) == math.inf
    assert cfg.run_id == RunConfig.from_settings({key: INF}).run_id != RunConfig.from_settings({}).run_id


def test_infinity_round_trips_through_strict_json():
    cfg = RunConfig.from_settings({"clip": INF, "divergence_norm": INF})
    text = json.dumps({"run_id": cfg.run_id, **cfg.to_json()}, allow_nan=False)  # JSON itself has no infinity
    assert json.loads(text)["clip"] == "inf" and json.loads(text)["divergence_norm"] == "inf"
    saved = json.loads(text)
    assert saved.pop("run_id") == cfg.run_id
    assert RunConfig.from_settings(saved) == cfg


def test_finite_settings_are_written_exactly_as_before():
    cfg = RunConfig.from_settings({"clip": 0.25, "lr": 1.0})
    assert cfg.to_json() == cfg.to_dict()  # config.json files and run ids written before stay valid


def test_bad_varied_value_names_its_index():
    assert (
        error_of(study(vary={"hidden": [50, -1]}))
        == "studies.s.vary.hidden[1]: -1 is out of range; allowed: {'minimum': 0}"
    )
    assert error_of(study(vary={"activation": ["tanh", "gelu"]})).startswith(
        "studies.s.vary.activation[1]: 'gelu' is not allowed; allowed values: 'tanh', 'sigmoid', 'relu'"
    )
    assert error_of(study(vary={"hidden": 50})) == "config.studies.s.vary.hidden: 50 has the wrong type; expected array"


def test_keys_that_cannot_vary_and_settings_given_twice():
    message = error_of(study(vary={"seed": [1, 2]}))
    assert message.startswith("studies.s.vary.seed: not a setting that can vary (list seeds under `seeds`)")
    message = error_of(study(vary={"hiden": [1]}))
    assert message.startswith("studies.s.vary.hiden: not a setting that can vary; allowed:") and "hidden" in message
    assert "threads: not a setting that can vary" in error_of(study(vary={"threads": [1, 2]}))
    assert error_of(study(fixed={"hidden": 5})).startswith("studies.s.vary.hidden: also set in studies.s.fixed")
    assert error_of(study(fixed={"family": "ff"})).startswith("studies.s.fixed.family: set the study's family once")


def test_segments_sentence_needs_a_recurrence_and_sentences():
    on_ptb = error_of(study(fixed={"segments": "sentence", "bptt": 5}))
    assert on_ptb.startswith("studies.s.fixed.segments: 'sentence' reads whole sentences and needs a corpus with")
    assert "allowed with corpus 'agreement', got corpus 'ptb'" in on_ptb and "(corpus from studies.s.corpus)" in on_ptb
    ff = {"family": "ff", "corpus": "agreement", "fixed": {"segments": "sentence", "output": "full"}}
    on_ff = error_of({"studies": {"s": {**ff, "vary": {"context": [2]}}}})
    assert on_ff.startswith("studies.s.fixed.segments: 'sentence' cuts the gradient within a recurrence, and family")
    typo = error_of(study(fixed={"segments": "sentences"}))
    assert typo == "config.studies.s.fixed.segments: 'sentences' is not allowed; allowed values: 'stream', 'sentence'"
    agreement = {**RNN_PTB, "corpus": "agreement", "fixed": {"segments": "sentence", "output": "full"}}
    load_config({"studies": {"s": {**agreement, "vary": {"bptt": [0, 2, 5]}}}})  # bptt 0: full-sentence BPTT


def test_rules_across_two_settings_fail_at_load():
    # full BPTT needs sentences: allowed on the agreement corpus, refused on PTB (before any job runs)
    assert error_of(study(fixed={"bptt": 0})).startswith("studies.s.fixed.bptt: 0 (full BPTT over whole sentences)")
    load_config({"studies": {"s": {**RNN_PTB, "corpus": "agreement", "fixed": {"bptt": 0, "output": "full"}}}})
    assert "strictly increasing" in error_of(study(fixed={"output": "adaptive", "adaptive_cutoffs": [6000, 2000]}))
    options = {"min_distance": 9, "max_distance": 3}
    assert (
        "studies.s.fixed.corpus_options: corpus 'agreement': bad option: max_distance must be >= min_distance (9), got 3"
        in error_of(
            {
                "studies": {
                    "s": {**RNN_PTB, "corpus": "agreement", "fixed": {"corpus_options": options, "output": "full"}}
                }
            }
        )
    )


def test_model_rules_fail_at_load_not_in_a_job():
    load_config(study(vary={"activation": ["tanh", "sigmoid", "relu"]}))  # every activation has the fast path
    assert "allowed: 'tanh'" in error_of(
        {"studies": {"s": {**RNN_PTB, "family": "lstm", "fixed": {"activation": "relu"}}}}
    )
    assert error_of(study(vary={"hidden": [0, 50]})).startswith(
        "studies.s.vary.hidden: 0 (no hidden layer) is allowed for family 'ff' only"
    )
    load_config({"studies": {"s": {"family": "ff", "corpus": "ptb", "vary": {"hidden": [0, 50]}}}})
    assert "studies.s.vary.direct: true needs family 'ff', hidden > 0 (with hidden 0" in error_of(
        {"studies": {"s": {"family": "ff", "corpus": "ptb", "vary": {"direct": [False, True]}}}}  # output adaptive
    )
    load_config(
        {
            "studies": {
                "s": {"family": "ff", "corpus": "ptb", "fixed": {"output": "full"}, "vary": {"direct": [False, True]}}
            }
        }
    )


def test_a_threshold_relative_to_the_median_norm_is_checked_at_load_naming_the_key():
    assert error_of(study(fixed={"clip_times_median": -2})).startswith(
        "config.studies.s.fixed.clip_times_median: -2 is out of range; allowed: {'exclusiveMinimum': 0}"
    )
    assert error_of(study(vary={"clip_times_median": [2, "twice"]})).startswith(
        "studies.s.vary.clip_times_median[1]: 'twice' has the wrong type; expected ['number', 'null'] (or .inf)"
    )
    assert error_of(study(fixed={"clip_times_median": 2, "clip_mode": "value"})) == (
        "studies.s.fixed.clip_times_median: a multiple of the median global gradient norm sets a global-norm "
        "threshold; allowed with clip_mode 'norm', got clip_mode 'value'. Use clip_times_median: null and `clip` for "
        "that mode (clip_mode from studies.s.fixed.clip_mode)"
    )
    assert error_of(study(fixed={"clip_reference_seed": 1})).startswith(
        "studies.s.fixed.clip_reference_seed: names the reference run of a threshold set by clip_times_median, which "
        "is null here"
    )
    assert error_of(study(fixed={"clip_times_median": 2, "clip_reference_seed": 1.5})).startswith(
        "config.studies.s.fixed.clip_reference_seed: 1.5 has the wrong type; expected ['integer', 'null']"
    )


def test_a_relative_threshold_names_its_reference_run_not_its_number():
    settings = {"clip_times_median": 2, "clip_reference_lr": 0.5, "clip_reference_seed": 1, "lr": 5, "seed": 3}
    relative = RunConfig.from_settings(settings)
    reference = relative.clip_reference()
    assert (reference.clip_times_median, reference.lr, reference.seed) == (math.inf, 0.5, 1)
    assert reference.clip_reference() is None  # it never clips: no reference of its own
    # The reference is the run a study has at .inf (never clipped), whatever that run's reference settings say.
    never = {"clip_times_median": math.inf, "lr": 0.5, "seed": 1}
    assert reference.run_id == RunConfig.from_settings(never).run_id
    assert reference.run_id == RunConfig.from_settings({**never, "clip_reference_lr": 2, "clip": 9}).run_id
    # `clip` is resolved from the reference: not in the run id, which names the multiple and the reference.
    assert relative.run_id == RunConfig.from_settings({**settings, "clip": 7}).run_id
    for change in ({"clip_times_median": 5}, {"clip_reference_lr": 1}, {"clip_reference_seed": 2}):
        assert RunConfig.from_settings({**settings, **change}).run_id != relative.run_id, change
    # A config's runs hold each reference, which trains first, in a study or not.
    config = load_config(study(fixed={"clip_times_median": 2, "clip_reference_lr": 0.5, "clip_reference_seed": 1}))
    references = {cfg.clip_reference().run_id for _, cfg in config.study_runs("s")}
    assert len(references) == 2 and references <= set(config.all_runs())  # one per hidden size
    assert len(config.all_runs()) == 4


def test_the_threshold_is_the_multiple_times_the_references_median_norm():
    relative = RunConfig.from_settings({"clip_times_median": 2, "clip_reference_lr": 0.5, "lr": 5})
    reference = relative.clip_reference()
    measured = {"run_id": reference.run_id, "diverged": False, "grad_norm_median": 0.4245}
    resolved = relative.with_clip_from(measured)
    assert resolved.clip == pytest.approx(0.849) and resolved.run_id == relative.run_id  # 2 x 0.4245
    assert resolved.to_json()["clip"] == pytest.approx(0.849)  # what config.json holds
    assert RunConfig.from_settings({"clip_times_median": math.inf}).with_clip_from(None).clip == math.inf
    assert RunConfig.from_settings({"clip": 0.3}).with_clip_from(None).clip == 0.3  # typed: as it is
    with pytest.raises(ConfigError, match="whose metrics were not given: train it first"):
        relative.with_clip_from(None)
    with pytest.raises(ConfigError, match=r"the metrics given are run rnn-ptb-0000000000's"):
        relative.with_clip_from({**measured, "run_id": "rnn-ptb-0000000000"})
    with pytest.raises(ConfigError, match=r"diverged at step 10: a run that diverges unclipped has no typical norm"):
        relative.with_clip_from({**measured, "diverged": True, "diverged_step": 10})
    with pytest.raises(ConfigError, match="measured no median gradient norm"):
        relative.with_clip_from({**measured, "grad_norm_median": None})


def test_run_config_errors_name_the_run_key():
    with pytest.raises(ConfigError, match=r"^run\.clip: -1 is out of range"):
        RunConfig.from_settings({"clip": -1})
    with pytest.raises(ConfigError, match=r"^run: unknown key\(s\) 'hiden'"):
        RunConfig.from_settings({"hiden": 3})


# --- run ids ---------------------------------------------------------------------------------------------


def test_same_settings_same_run_id():
    a = RunConfig.from_settings({"family": "rnn", "hidden": 100, "lr": 1})
    b = RunConfig.from_settings({"lr": 1.0, "hidden": 100})  # family rnn is the default; 1 == 1.0
    assert a == b and a.run_id == b.run_id
    assert re.fullmatch(r"rnn-ptb-[0-9a-f]{10}", a.run_id)
    # a whole number written as a float is the same setting (JSON Schema counts 200.0 as an integer)
    c = RunConfig.from_settings({"hidden": 100.0, "lr": 1})
    assert c.hidden == 100 and isinstance(c.hidden, int) and c.run_id == a.run_id


@pytest.mark.parametrize(
    "change",
    [
        {"hidden": 101},
        {"lr": 0.5},
        {"seed": 2},
        {"bptt": 20},
        {"clip_mode": "value"},
        {"clip": 15},
        {"activation": "relu"},
        {"output": "full"},
        {"dropout": 0.1},
        {"max_epochs": 3},
        {"train_tokens": 20000},
        {"family": "ff"},
        {"corpus": "brown"},
        {"adaptive_cutoffs": [1000, 6000]},
    ],
)
def test_any_semantic_change_makes_a_new_run_id(change):
    assert RunConfig.from_settings(change).run_id != RunConfig.from_settings({}).run_id


@pytest.mark.parametrize(
    ("base", "unused"),
    [
        ({"family": "rnn"}, {"context": 8}),
        ({"family": "ff"}, {"bptt": 5}),
        ({"family": "ff"}, {"impl": "reference"}),
        ({"output": "full"}, {"adaptive_cutoffs": [10, 20]}),
    ],
)
def test_a_setting_the_model_does_not_read_does_not_change_the_run_id(base, unused):
    assert RunConfig.from_settings({**base, **unused}).run_id == RunConfig.from_settings(base).run_id


# Run ids computed by hand before `segments` existed (the code at commit cc64382): an agreement Elman RNN at the
# schema's defaults with a full softmax, the same at bptt 5, and truncation_agreement's bptt 0 and 10 at seed 1.
AGREEMENT_RNN = {"family": "rnn", "corpus": "agreement", "output": "full"}
TRUNCATION_AGREEMENT = {
    **AGREEMENT_RNN,
    "corpus_options": {
        "attractor_prob": 0.25,
        "train_sentences": 8000,
        "valid_sentences": 500,
        "test_sentences": 1500,
        "max_distance": 12,
    },
    "hidden": 64,
    "embed_dim": 32,
    "batch_size": 32,
    "optimizer": "adam",
    "lr": 0.01,
    "schedule": "constant",
    "max_epochs": 3,
    "clip_mode": "norm",
    "clip": 1,
    "seed": 1,
}
IDS_BEFORE_SEGMENTS = [
    (AGREEMENT_RNN, "rnn-agreement-1cf6cc4cf5"),
    ({**AGREEMENT_RNN, "bptt": 5}, "rnn-agreement-c6650802b6"),
    ({**TRUNCATION_AGREEMENT, "bptt": 0}, "rnn-agreement-b3c7674757"),
    ({**TRUNCATION_AGREEMENT, "bptt": 10}, "rnn-agreement-c23e7a2a93"),
    ({"family": "ff", "corpus": "ptb"}, "ff-ptb-e0d9447d6b"),
]


@pytest.mark.parametrize(("settings", "run_id"), IDS_BEFORE_SEGMENTS)
def test_segments_stream_keeps_the_run_ids_from_before_the_setting_existed(settings, run_id):
    assert RunConfig.from_settings(settings).run_id == run_id
    assert RunConfig.from_settings({**settings, "segments": "stream"}).run_id == run_id
    assert "segments" not in RunConfig.from_settings(settings).settings()  # nor in the train rule's params


def test_segments_sentence_is_a_new_run_except_at_bptt_0():
    for bptt in (5, 35):
        cut = RunConfig.from_settings({**AGREEMENT_RNN, "bptt": bptt, "segments": "sentence"})
        stream = RunConfig.from_settings({**AGREEMENT_RNN, "bptt": bptt})
        assert cut.run_id != stream.run_id and cut.settings()["segments"] == "sentence"
    # bptt 0 reads whole sentences and never cuts them: the same run as truncation_agreement's, trained once
    full = {**TRUNCATION_AGREEMENT, "bptt": 0}
    assert RunConfig.from_settings({**full, "segments": "sentence"}).run_id == "rnn-agreement-b3c7674757"


def test_weight_decay_enters_the_run_id_only_when_it_decays():
    for settings, run_id in IDS_BEFORE_SEGMENTS:
        assert RunConfig.from_settings({**settings, "weight_decay": 0}).run_id == run_id
        decayed = RunConfig.from_settings({**settings, "weight_decay": 1e-4})
        assert decayed.run_id != run_id and decayed.settings()["weight_decay"] == 1e-4


def test_recurrent_init_enters_the_run_id_only_away_from_the_default():
    for settings, run_id in IDS_BEFORE_SEGMENTS:
        assert RunConfig.from_settings({**settings, "recurrent_init": "default", "recurrent_scale": 1}).run_id == run_id
    base = IDS_BEFORE_SEGMENTS[0][0]
    ids = {RunConfig.from_settings(base).run_id}
    for init, scale in (("identity", 1.0), ("identity", 0.5), ("orthogonal", 1.0)):
        run = RunConfig.from_settings({**base, "recurrent_init": init, "recurrent_scale": scale})
        assert run.settings()["recurrent_init"] == init and run.to_json()["recurrent_init"] == init
        ids.add(run.run_id)
    assert len(ids) == 4  # each start its own run


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"recurrent_init": "eye"},
            r"^config\.studies\.s\.fixed\.recurrent_init: 'eye' is not allowed; allowed values: 'default', 'identity'",
        ),
        (
            {"recurrent_init": "identity", "recurrent_scale": 0},
            r"^config\.studies\.s\.fixed\.recurrent_scale: 0 is out of range",
        ),
        (
            {"recurrent_scale": 0.5},
            r"^studies\.s\.fixed\.recurrent_scale: the gain of an identity or orthogonal U is not read",
        ),
    ],
)
def test_a_bad_recurrent_init_fails_at_load_naming_the_key(settings, message):
    study = {"family": "rnn", "corpus": "agreement", "fixed": {"output": "full", **settings}, "vary": {"hidden": [8]}}
    with pytest.raises(ConfigError, match=message):
        load_config({"studies": {"s": study}})


def test_an_lstm_study_cannot_set_a_recurrent_init():
    study = {
        "family": "lstm",
        "corpus": "agreement",
        "fixed": {"output": "full"},
        "vary": {"recurrent_init": ["identity"]},
    }
    with pytest.raises(ConfigError, match=r"^studies\.s\.vary\.recurrent_init: 'identity' sets an Elman network's"):
        load_config({"studies": {"s": study}})


def test_added_settings_are_left_out_at_the_schema_default():
    # the value a setting is left out at is what every run did before it existed: today's default
    assert {key: run_defaults()[key] for key in ADDED_AFTER_IDS} == ADDED_AFTER_IDS


def test_corpus_options_change_the_run_id_and_the_corpus_key():
    a = RunConfig.from_settings(
        {"corpus": "agreement", "output": "full", "corpus_options": {"seed": 1, "max_distance": 10}}
    )
    b = RunConfig.from_settings(
        {"corpus": "agreement", "output": "full", "corpus_options": {"max_distance": 10, "seed": 1}}
    )
    c = RunConfig.from_settings(
        {"corpus": "agreement", "output": "full", "corpus_options": {"seed": 2, "max_distance": 10}}
    )
    assert a.run_id == b.run_id and a.corpus_key == b.corpus_key  # key order does not matter
    assert a.run_id != c.run_id and a.corpus_key != c.corpus_key
    # runs that differ in anything but the corpus read the same prepared corpus
    assert RunConfig.from_settings({"hidden": 50}).corpus_key == RunConfig.from_settings({}).corpus_key


def test_threads_do_not_change_the_run_id():
    one, eight = RunConfig.from_settings({"threads": 1}), RunConfig.from_settings({"threads": 8})
    assert one.threads == 1 and eight.threads == 8 and one.run_id == eight.run_id


def test_to_dict_round_trips():
    cfg = RunConfig.from_settings(
        {"hidden": 64, "adaptive_cutoffs": [10, 20], "threads": 3, "corpus": "agreement", "corpus_options": {"seed": 4}}
    )
    assert RunConfig.from_settings(cfg.to_dict()) == cfg


# --- study expansion -------------------------------------------------------------------------------------


def test_expansion_is_the_product_of_varied_values_and_seeds():
    config = load_config(study(vary={"hidden": [50, 100], "bptt": [5, 10, 20]}, seeds=[1, 2]))
    points = [point for point, _ in config.study_runs("s")]
    assert len(points) == 2 * 3 * 2
    assert points[0] == {"hidden": 50, "bptt": 5, "seed": 1} and points[-1] == {"hidden": 100, "bptt": 20, "seed": 2}
    assert len({cfg.run_id for _, cfg in config.study_runs("s")}) == 12


def test_two_studies_sharing_a_run_share_its_id():
    # hidden 100 with the default settings is in both studies: one run, one job
    config = load_config(
        {
            "studies": {
                "a": {"family": "rnn", "corpus": "ptb", "vary": {"hidden": [50, 100]}},
                "b": {"family": "rnn", "corpus": "ptb", "fixed": {"hidden": 100}, "vary": {"lr": [1.0, 0.5]}},
            }
        }
    )
    ids_a = {cfg.run_id for _, cfg in config.study_runs("a")}
    ids_b = {cfg.run_id for _, cfg in config.study_runs("b")}
    shared = ids_a & ids_b
    assert len(shared) == 1
    assert config.all_runs()[shared.pop()].hidden == 100
    assert len(config.all_runs()) == 3  # 2 + 2 runs, one shared


def test_precedence_run_then_fixed_then_overrides_then_varied():
    config = load_config(
        {
            "threads": 4,
            "run": {"hidden": 10, "lr": 0.1, "bptt": 7, "embed_dim": 20},
            "run_overrides": {"lr": 0.2, "hidden": 32, "max_epochs": 1},
            "studies": {
                "s": {"family": "rnn", "corpus": "ptb", "fixed": {"lr": 0.3, "bptt": 8}, "vary": {"hidden": [16, 64]}}
            },
        }
    )
    runs = [cfg for _, cfg in config.study_runs("s")]
    assert [cfg.hidden for cfg in runs] == [16, 64]  # varied beats run_overrides' hidden 32
    for cfg in runs:
        assert cfg.lr == 0.2  # run_overrides beats fixed (0.3) and run (0.1)
        assert cfg.bptt == 8  # fixed beats run (7)
        assert cfg.embed_dim == 20  # run beats the schema default (100)
        assert cfg.max_epochs == 1 and cfg.threads == 4


def test_merge_config_files_deep_merges_like_snakemake(tmp_path):
    base = tmp_path / "base.yaml"
    over = tmp_path / "over.yaml"
    base.write_text(
        yaml.safe_dump(
            {
                "threads": 2,
                "run": {"hidden": 10, "lr": 1.0},
                "studies": {
                    "s": {
                        "family": "rnn",
                        "corpus": "ptb",
                        "fixed": {"bptt": 5, "lr": 0.5},
                        "vary": {"hidden": [1, 2, 3]},
                    }
                },
            }
        )
    )
    over.write_text(
        yaml.safe_dump(
            {
                "run": {"lr": 0.1},
                "studies": {
                    "s": {"fixed": {"bptt": 9}, "vary": {"hidden": [4]}},
                    "t": {"family": "ff", "corpus": "ptb", "vary": {"context": [2]}},
                },
            }
        )
    )
    merged = merge_config_files([base, over])
    assert merged["threads"] == 2
    assert merged["run"] == {"hidden": 10, "lr": 0.1}  # key by key
    assert merged["studies"]["s"] == {
        "family": "rnn",
        "corpus": "ptb",
        "fixed": {"bptt": 9, "lr": 0.5},
        "vary": {"hidden": [4]},
    }
    assert set(merged["studies"]) == {"s", "t"}
    assert merge_config_files([base])["run"] == {"hidden": 10, "lr": 1.0}  # the inputs are not modified


def test_an_empty_mapping_over_a_value_is_refused_since_snakemake_would_keep_the_value(tmp_path):
    from snakemake.utils import update_config

    base, over = tmp_path / "base.yaml", tmp_path / "over.yaml"
    base.write_text("comparison:\n  crossover: ptb\n  dynamic_evaluation: null\n")
    over.write_text("comparison:\n  dynamic_evaluation: {}\n")
    snakemake_merged = yaml.safe_load(base.read_text())
    update_config(snakemake_merged, yaml.safe_load(over.read_text()))
    assert snakemake_merged["comparison"]["dynamic_evaluation"] is None  # the later file's {} is lost
    with pytest.raises(
        ConfigError, match=r"comparison\.dynamic_evaluation: .*over\.yaml writes \{\} over null from .*base\.yaml"
    ):
        merge_config_files([base, over])
    with pytest.raises(ConfigError, match=r"comparison\.dynamic_evaluation"):
        check_config_files([base, over])
    # what both merges agree on: a mapping with a key over null, {} where nothing was, {} over a mapping
    for text in ("comparison:\n  dynamic_evaluation: {rates: [0.1]}\n", "comparison:\n  crossover: ptb\n"):
        base.write_text(text)
        merge_config_files([base, over])
    base.write_text("comparison:\n  dynamic_evaluation: null\n")
    over.write_text("comparison:\n  dynamic_evaluation: {rates: [0.1]}\n")
    assert merge_config_files([base, over])["comparison"]["dynamic_evaluation"] == {"rates": [0.1]}


@pytest.mark.parametrize("extra", [[], ["smoke.yaml"], ["paper.yaml"], ["paper.yaml", "paper-rows.yaml"]])
def test_the_shipped_configs_merge_as_snakemake_merges_them(extra):
    from snakemake.utils import update_config

    paths = [REPO / "config" / name for name in ("config.yaml", *extra)]
    snakemake_merged: dict = {}
    for path in paths:
        update_config(snakemake_merged, yaml.safe_load(path.read_text()))
    assert merge_config_files(paths) == snakemake_merged


def test_every_shipped_config_loads():
    default = load_config(REPO / "config" / "config.yaml")
    smoke = load_config(merge_config_files([REPO / "config" / "config.yaml", REPO / "config" / "smoke.yaml"]))
    paper = load_config(merge_config_files([REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml"]))
    for config in (default, smoke, paper):
        assert config.studies and config.all_runs()
        for name in config.studies:
            assert config.study_runs(name)
    assert set(default.studies) <= set(smoke.studies) and set(default.studies) <= set(paper.studies)
    # smoke shrinks every run (run_overrides) but keeps each study's varied values
    assert [p["context"] for p, _ in smoke.study_runs("ff_context_ptb")] == [1, 4]
    assert [cfg.hidden for _, cfg in smoke.study_runs("rnn_hidden_ptb")] == [16, 32]
    assert all(cfg.max_epochs == 1 and cfg.train_tokens == 20000 for cfg in smoke.all_runs().values())
    # paper's fixed settings merge into the default study's: hidden 500 replaces 200, dropout is added
    ff = [cfg for _, cfg in paper.study_runs("ff_context_ptb")]
    assert {(cfg.hidden, cfg.batch_size, cfg.dropout, cfg.schedule) for cfg in ff} == {(500, 256, 0.3, "mikolov")}
    assert len(ff) == 5  # 5 contexts x 1 seed
    assert {"paper_ff_brown", "paper_ff_ptb", "paper_rnn_ptb", "paper_rnn_modern_ptb"} == set(paper.studies) - set(
        default.studies
    )
    # the smoke config is a different set of runs: nothing is silently reused from a full run
    assert not set(smoke.all_runs()) & set(default.all_runs())
    # paper-rows.yaml narrows paper.yaml's comparison to its four paper studies, settings untouched
    rows = load_config(
        merge_config_files([REPO / "config" / name for name in ("config.yaml", "paper.yaml", "paper-rows.yaml")])
    )
    assert sorted(rows.comparison.study_names()) == [
        "paper_ff_brown",
        "paper_ff_ptb",
        "paper_rnn_modern_ptb",
        "paper_rnn_ptb",
    ]
    assert rows.all_runs() == paper.all_runs()


def test_the_windows_train_with_a_rate_and_length_their_sweep_measured():
    # config/window-rate.yaml is the evidence for window_agreement's rate, epochs and dropout: each chosen run is one
    # of its runs
    sweep = load_config(merge_config_files([REPO / "config" / "config.yaml", REPO / "config" / "window-rate.yaml"]))
    sweeps = ("window_rate_agreement", "window_dropout_agreement")
    swept = {cfg.run_id for name in sweeps for _, cfg in sweep.study_runs(name)}
    chosen = {cfg.run_id for _, cfg in sweep.study_runs("window_agreement")}
    assert len(chosen) == 12 and chosen <= swept


# --- config files: one loader for every file, refusing duplicates, naming file and line ------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "studies:\n  a: {family: rnn}\n  a: {family: ff}\n",
            r"f\.yaml:3: key 'a' given twice in one mapping \(lines 2 and 3\)",
        ),
        (
            "run:\n  hidden: 5\n  lr: 1\n  hidden: 6\n",
            r"f\.yaml:4: key 'hidden' given twice in one mapping \(lines 2 and 4\)",
        ),
        ("run: {hidden: 5\n", r"f\.yaml:2:1: YAML syntax error: expected ',' or '}'"),
        ("run:\n\thidden: 5\n", r"f\.yaml:2:1: YAML syntax error: found character '\\t'"),
        ("", r"f\.yaml: the config file is empty; expected a mapping of settings"),
        ("# only a comment\n", r"f\.yaml: the config file is empty"),
        ("- a\n- b\n", r"f\.yaml: expected a mapping of settings \(key: value lines\), found a list"),
    ],
)
def test_a_bad_config_file_fails_in_one_line_naming_the_file(tmp_path, text, expected):
    path = tmp_path / "f.yaml"
    path.write_text(text)
    for load in (load_config, lambda p: merge_config_files([REPO / "config" / "config.yaml", p])):
        with pytest.raises(ConfigError, match=expected) as caught:
            load(path)
        assert str(path) in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the keys written beside `<<` override the merged ones (YAML's merge rule), as yaml.safe_load reads it
        (
            "base: &base {dropout: 0.0, hidden: 5}\nfixed: {<<: *base, dropout: 0.1}\n",
            {"base": {"dropout": 0.0, "hidden": 5}, "fixed": {"dropout": 0.1, "hidden": 5}},
        ),
        (
            "a: &a {x: 1}\nb: &b {y: 2}\nc:\n  <<: [*a, *b]\n  x: 3\n",
            {"a": {"x": 1}, "b": {"y": 2}, "c": {"x": 3, "y": 2}},
        ),
    ],
)
def test_merge_keys_are_read_as_yaml_defines_them(tmp_path, text, expected):
    path = tmp_path / "f.yaml"
    path.write_text(text)
    assert read_yaml(path) == expected == yaml.safe_load(text)


def test_a_key_written_twice_beside_a_merge_key_is_still_refused(tmp_path):
    path = tmp_path / "f.yaml"
    path.write_text("base: &base {dropout: 0.0}\nfixed:\n  <<: *base\n  hidden: 1\n  hidden: 2\n")
    with pytest.raises(ConfigError, match=r"f\.yaml:5: key 'hidden' given twice in one mapping \(lines 4 and 5\)"):
        read_yaml(path)


def test_a_study_written_with_a_merge_key_loads(tmp_path):
    path = tmp_path / "f.yaml"
    path.write_text(
        "studies:\n"
        "  a: {family: rnn, corpus: ptb, fixed: &shared {hidden: 50, embed_dim: 20}, vary: {bptt: [5]}}\n"
        "  b: {family: rnn, corpus: ptb, fixed: {<<: *shared, dropout: 0.1}, vary: {bptt: [5]}}\n"
    )
    config = load_config(path)
    b = config.studies["b"].fixed
    assert b == {"hidden": 50, "embed_dim": 20, "dropout": 0.1}


def test_missing_config_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"nowhere\.yaml: cannot read the config file"):
        merge_config_files([tmp_path / "nowhere.yaml"])


def test_config_files_are_listed_in_merge_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    default = tmp_path / "config" / "config.yaml"
    given = [tmp_path / "config" / "smoke.yaml", tmp_path / "more.yaml", default]
    assert config_files_in_merge_order(default, given) == ["config/config.yaml", "config/smoke.yaml", "more.yaml"]
    assert config_files_in_merge_order(default, []) == ["config/config.yaml"]


def test_checking_config_files_names_the_file_and_lines_of_a_duplicate_key(tmp_path):
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text("threads: 1\n")
    bad.write_text("run:\n  hidden: 5\n  hidden: 6\n")
    check_config_files([good])
    with pytest.raises(ConfigError, match=r"bad\.yaml:3: key 'hidden' given twice in one mapping \(lines 2 and 3\)"):
        check_config_files([good, bad])


def test_the_workflow_merges_configfiles_in_order_and_the_command_line_config_last(tmp_path):
    # Snakemake's own merge: config/config.yaml, then smoke.yaml and a.yaml in that order, then --config
    first = tmp_path / "a.yaml"
    first.write_text(f"results_dir: {tmp_path / 'from-file'}\n")
    command = [sys.executable, "-m", "snakemake", "-n", "results", "--cores", "1"]
    command += ["--configfile", "config/smoke.yaml", str(first)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{tmp_path / 'from-file'}/runs/" in done.stdout
    override = subprocess.run(
        [*command, "--config", f"results_dir={tmp_path / 'from-command-line'}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert override.returncode == 0, override.stderr[-3000:]
    assert f"{tmp_path / 'from-command-line'}/runs/" in override.stdout
    assert "from-file" not in override.stdout


def test_merge_applies_command_line_settings_last(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_text("threads: 2\nrun: {hidden: 5, lr: 1.0}\n")
    assert merge_config_files([path], {"run": {"lr": 0.5}}) == {"threads": 2, "run": {"hidden": 5, "lr": 0.5}}


def test_nested_command_line_values_are_typed_as_a_config_file_reads_them():
    # Snakemake's --config gives a nested value as its YAML base loader reads it: every scalar a string
    given = {
        "run_overrides": {"hidden": "24", "lr": "0.5", "direct": "true", "activation": "tanh", "clip": ".inf"},
        "studies": {"s": {"vary": {"bptt": ["5", "10"], "lr": ["1.0e-3", "2"]}, "seeds": ["1"], "description": ""}},
        "tables": {"kn_order": "3", "worked": "false"},
        "data_dir": "null",  # a top-level value is Snakemake's to type: kept
        "threads": 2,
    }
    assert typed_command_line_values(given) == {
        "run_overrides": {"hidden": 24, "lr": 0.5, "direct": True, "activation": "tanh", "clip": math.inf},
        "studies": {"s": {"vary": {"bptt": [5, 10], "lr": [0.001, 2]}, "seeds": [1], "description": ""}},
        "tables": {"kn_order": 3, "worked": False},
        "data_dir": "null",
        "threads": 2,
    }
    assert typed_command_line_values({"run_overrides": {"max_steps_per_epoch": "null", "output": "[1, 2]"}}) == {
        "run_overrides": {"max_steps_per_epoch": None, "output": "[1, 2]"}  # a scalar stays a scalar
    }


def test_the_workflow_refuses_a_duplicate_key_in_a_configfile(tmp_path):
    # the Snakefile reads every config file with the same loader (Snakemake's own keeps the last silently)
    dup = tmp_path / "dup.yaml"
    dup.write_text("results_dir: a\nresults_dir: b\n")
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(dup)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "dup.yaml:2: key 'results_dir' given twice in one mapping (lines 1 and 2)" in done.stdout + done.stderr


# --- checks that need the corpus, at load time rather than in a job -----------------------------------------


AGREEMENT = {"family": "rnn", "corpus": "agreement", "fixed": {"output": "full"}, "vary": {"hidden": [50]}}
AGREEMENT_SMALL = {
    **AGREEMENT,
    "fixed": {"output": "full", "corpus_options": {"train_sentences": 50, "valid_sentences": 20, "test_sentences": 20}},
}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        # a metric the corpus never produces
        (
            study(metric="agreement_accuracy"),
            "studies.s.metric: 'agreement_accuracy' is measured on the agreement corpus only; corpus 'ptb' never produces it",
        ),
        # duplicates would be one run counted twice in the summary
        (study(seeds=[1, 1]), "studies.s.seeds[1]: 1 repeats studies.s.seeds[0] (1); list each value once"),
        (
            study(vary={"bptt": [2, 2.0]}),
            "studies.s.vary.bptt[1]: 2.0 repeats studies.s.vary.bptt[0] (2); list each value once",
        ),
        (study(vary={"lr": [1, 1.0, 0.5]}), "studies.s.vary.lr[1]: 1.0 repeats studies.s.vary.lr[0] (1)"),
        (
            {"studies": {"s": {"family": "ff", "corpus": "ptb", "vary": {"impl": ["reference", "fast"]}}}},
            "studies.s.vary: {'impl': 'reference', 'seed': 1} and {'impl': 'fast', 'seed': 1} are the same run",
        ),
        # adaptive cutoffs above the vocabulary: PTB and Brown sizes are known constants, agreement's is its lexicon
        (
            {
                "run": {"adaptive_cutoffs": [2000, 20000]},
                "studies": {"ff_context_ptb": {"family": "ff", "corpus": "ptb", "vary": {"context": [2]}}},
            },
            "run.adaptive_cutoffs: cutoffs must be below the vocabulary size (10,000): allowed in [1, 9999], got [2000, 20000]",
        ),
        (
            study(corpus="brown", fixed={"adaptive_cutoffs": [1000, 18000]}),
            "studies.s.fixed.adaptive_cutoffs: cutoffs must be below the vocabulary size (17,905)",
        ),
        (
            {"studies": {"s": {**AGREEMENT, "fixed": {}}}},
            "run.adaptive_cutoffs: cutoffs must be below the vocabulary size (313): allowed in [1, 312], got [1000, 5000]. "
            "Use output: full for a small vocabulary, or smaller cutoffs (output from run.output; hidden from studies.s.vary.hidden)",
        ),
        # a batch larger than the split
        (
            study(fixed={"batch_size": 600}, vary={"train_tokens": [1000, 5000]}),
            "studies.s.fixed.batch_size: 600 columns of the ptb train stream of at most 1,000 tokens leave fewer than 2 tokens",
        ),
        (
            {
                "run_overrides": {"eval_tokens": 100},
                "studies": {"s": {**AGREEMENT, "fixed": {"output": "full", "eval_batch_size": 64}}},
            },
            "studies.s.fixed.eval_batch_size: 64 columns of the agreement valid stream of at most 100 tokens",
        ),
        (
            {
                "studies": {
                    "s": {
                        **AGREEMENT,
                        "fixed": {"output": "full", "corpus_options": {"valid_sentences": 2, "max_distance": 3}},
                    }
                }
            },
            "run.eval_batch_size: 10 columns of the agreement valid stream of at most 18 tokens leave fewer than 2 tokens per "
            "column (one input and its target); allowed: <= 9",
        ),
        # corpus options the corpus does not take, with the key path
        (
            study(fixed={"corpus_options": {"seed": 3}}),
            "studies.s.fixed.corpus_options: corpus 'ptb' got unknown option(s) seed; it takes: no options.",
        ),
        (
            {"run": {"corpus_options": {"expected_sha256": "0" * 64}}, "studies": {"s": AGREEMENT}},
            "run.corpus_options: corpus 'agreement' got unknown option(s) expected_sha256; it takes: attractor_prob, ",
        ),
        # a data folder that is not there
        (
            {"data_dir": "/nonexistent/corpora"},
            "config.data_dir: '/nonexistent/corpora' is not a folder (found nothing there)",
        ),
    ],
)
def test_mistakes_that_used_to_fail_in_a_job_fail_at_load(config, expected):
    assert expected in error_of(config)


# --- folders: outputs never over the source tree, the cache variable read, unusable folders refused at load ---


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            {"results_dir": ""},
            "config.results_dir: '' is empty, which would put every output at /runs, /tables",
        ),
        ({"results_dir": "/"}, f"config.results_dir: '/' holds the checkout {REPO}: removing the results would remove"),
        ({"results_dir": "."}, f"config.results_dir: '.' holds the checkout {REPO}"),
        ({"results_dir": "src"}, f"config.results_dir: 'src' is inside the checkout's src/ ({REPO / 'src'})"),
        ({"results_dir": "workflow"}, "config.results_dir: 'workflow' is inside the checkout's workflow/"),
        ({"cache_dir": "config/cache"}, "config.cache_dir: 'config/cache' is inside the checkout's config/"),
        ({"cache_dir": ""}, "config.cache_dir: '' is empty, which would put the cache in the working directory"),
    ],
)
def test_an_output_folder_over_the_source_tree_is_refused(monkeypatch, config, expected):
    monkeypatch.chdir(REPO)
    message = error_of(config)
    assert message.startswith(expected), message
    assert "; allowed: a folder of its own outside the checkout's source tree (e.g. " in message


def test_a_home_folder_is_expanded_not_made_in_the_checkout(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    config = load_config({"results_dir": "~/x", "cache_dir": "~/cache", "data_dir": "~"})
    assert (config.results_dir, config.cache_dir, config.data_dir) == (
        str(tmp_path / "x"),
        str(tmp_path / "cache"),
        str(tmp_path),
    )
    assert load_config({"results_dir": "results/smoke/"}).results_dir == "results/smoke"


@pytest.mark.parametrize(
    ("given", "variable", "expected"),
    [
        (None, "env-cache", "env-cache"),  # null: the variable
        ("mine", "env-cache", "mine"),  # the config's value wins
        (None, None, "data/cache"),
    ],
)
def test_the_cache_folder_follows_the_precedence_rule(monkeypatch, tmp_path, given, variable, expected):
    monkeypatch.chdir(tmp_path)
    if variable is None:
        monkeypatch.delenv("RNNBENCH_CACHE", raising=False)
    else:
        monkeypatch.setenv("RNNBENCH_CACHE", variable)
    assert load_config({"cache_dir": given}).cache_dir == expected


def test_a_cache_folder_that_cannot_be_used_is_refused_before_any_job(tmp_path, monkeypatch):
    a_file = tmp_path / "f"
    a_file.write_text("x")
    agreement = {"studies": {"s": AGREEMENT_SMALL}}
    assert error_of({"cache_dir": str(a_file), **agreement}) == (
        f"config.cache_dir: {str(a_file)!r} is a file, not a folder, and it lacks the prepared corpora agreement this "
        "config reads; allowed: a folder rnnbench can write (made if missing), or one that holds them"
    )
    monkeypatch.setenv("RNNBENCH_CACHE", str(a_file / "cache"))
    assert error_of(agreement).startswith(
        f"RNNBENCH_CACHE: {str(a_file / 'cache')!r} is below {a_file}, which is a file"
    )


def test_a_read_only_cache_is_refused_unless_it_holds_every_corpus(tmp_path, monkeypatch):
    from rnnbench.config import locations
    from rnnbench.data import load_corpus

    cache = tmp_path / "cache"
    config = {"cache_dir": str(cache), "studies": {"s": AGREEMENT_SMALL}}
    read_only = lambda path, mode: not Path(path).is_relative_to(cache)  # noqa: E731 (a read-only mount)
    load_config(config)  # writable: the job will prepare it
    cache.mkdir()
    monkeypatch.setattr(locations.os, "access", read_only)
    assert error_of(config).startswith(f"config.cache_dir: {str(cache)!r} cannot be written: {cache} is read-only")
    monkeypatch.undo()
    load_corpus("agreement", cache_dir=cache, **AGREEMENT_SMALL["fixed"]["corpus_options"])
    monkeypatch.setattr(locations.os, "access", read_only)
    load_config(config)  # a shared cache that already holds the corpus is read, never written


def test_a_data_variable_that_is_not_a_folder_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("RNNBENCH_DATA", str(tmp_path / "nowhere"))
    assert error_of({}) == (
        f"RNNBENCH_DATA: {str(tmp_path / 'nowhere')!r} is not a folder (found nothing there); allowed: a folder "
        "holding ptb/ and brown/, or unset to download"
    )


def test_feed_forward_and_sentence_runs_take_any_batch_size():
    # windows and whole sentences are batched by count, not cut into columns of a stream
    load_config(
        {
            "run_overrides": {"train_tokens": 1000},
            "studies": {
                "s": {"family": "ff", "corpus": "ptb", "fixed": {"batch_size": 4096}, "vary": {"context": [2]}}
            },
        }
    )
    load_config({"studies": {"s": {**AGREEMENT, "fixed": {"output": "full", "bptt": 0, "batch_size": 50_000}}}})


def test_a_bptt_longer_than_a_batch_column_is_refused_naming_the_bound():
    # 1,000 training tokens in 20 columns: 50 per column, so a segment of 49 steps (50 tokens with its last target)
    sliced = {"run_overrides": {"train_tokens": 1000}, "studies": {"s": {**RNN_PTB, "fixed": {"batch_size": 20}}}}
    sliced["studies"]["s"]["vary"] = {"bptt": [49, 50]}
    assert error_of(sliced) == (
        "studies.s.vary.bptt: a segment of 50 steps needs 51 tokens of a batch column, and the ptb train stream of at "
        "most 1,000 tokens in 20 columns (batch_size) holds 50 per column; allowed: <= 49 (batch_size from "
        "studies.s.fixed.batch_size; train_tokens from run_overrides.train_tokens)"
    )
    sliced["studies"]["s"]["vary"] = {"bptt": [10, 49]}
    load_config(sliced)
    # train_tokens null: the whole PTB train split, 929,589 tokens in 20,000 columns: 46 per column
    whole = study(fixed={"batch_size": 20_000, "bptt": 46}, vary={"hidden": [64]})
    assert error_of(whole) == (
        "studies.s.fixed.bptt: a segment of 46 steps needs 47 tokens of a batch column, and the ptb train stream of at "
        "most 929,589 tokens in 20,000 columns (batch_size) holds 46 per column; allowed: <= 45 (batch_size from "
        "studies.s.fixed.batch_size; corpus from studies.s.corpus)"
    )
    load_config(study(fixed={"batch_size": 20_000, "bptt": 45}, vary={"hidden": [64]}))


def test_a_feed_forward_context_longer_than_the_training_split_is_refused_naming_the_bound():
    # two training sentences of at most 3 + 6 tokens each: at most 18 tokens, so at most 17 words of context
    tiny = {"output": "full", "corpus_options": {"train_sentences": 2, "max_distance": 3}}
    windows = {"studies": {"s": {"family": "ff", "corpus": "agreement", "fixed": tiny, "vary": {"context": [17, 18]}}}}
    assert error_of(windows) == (
        "studies.s.vary.context: 18 words of context need windows of 19 tokens, and the agreement train stream has at "
        "most 18; allowed: <= 17 (corpus from studies.s.corpus)"
    )
    windows["studies"]["s"]["vary"] = {"context": [17]}
    load_config(windows)


def test_checking_a_config_does_not_import_torch():
    code = (
        "import sys; from rnnbench.config.files import merge_config_files; "
        "from rnnbench.config.settings import load_config; "
        f"load_config(merge_config_files([{str(REPO / 'config' / 'config.yaml')!r}, {str(REPO / 'config' / 'smoke.yaml')!r}])); "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_corpus_preparation_version_enters_the_run_id_only_above_1():
    # Brown's preparation is at version 2 (rare words counted over the whole stream): its runs' ids carry it,
    # so a run on the first preparation is never taken for one on the second; PTB's, at 1, carry nothing.
    brown = RunConfig.from_settings({"family": "ff", "corpus": "brown"})
    ptb = RunConfig.from_settings({"family": "ff", "corpus": "ptb"})
    assert brown.identity() == brown.settings() | {"corpus_preparation": 2}
    assert ptb.identity() == ptb.settings()
    assert "corpus_preparation" not in brown.to_dict()  # config.json holds settings, not the version


# --- a config past the caps that keep its check cheap is refused before it is validated or expanded ---------


def alias_chain(links: int, width: int = 10) -> str:
    """YAML whose last anchor expands to width**(links + 1) scalars, under a valid key (a study's description)."""
    lines = ["anchors:", f"  - &a0 [{', '.join(['x'] * width)}]"]
    lines += [f"  - &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, links + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # nine links of ten aliases: 10**10 scalars; refused at the line of the node whose copies pass the cap
        (alias_chain(9), r"f\.yaml:6: expands to more than 100,000 YAML nodes \(aliases counted as the copies they "),
        ("a: &a [1, *a]\n", r"f\.yaml:1: an alias refers to a node that contains it; allowed: no cycles"),
        (
            "studies:\n  s:\n    description: " + "y" * 5000 + "\n",
            r"f\.yaml:3: 'y{60}'\.\.\. \(5,000 characters\) is too long; allowed: at most 4,096 characters",
        ),
    ],
)
def test_a_config_file_past_a_cap_is_refused_at_once_naming_the_file_and_line(tmp_path, text, expected):
    path = tmp_path / "f.yaml"
    path.write_text(text)
    for check in (check_config_files, lambda p: merge_config_files(p), lambda p: load_config(p[0])):
        with pytest.raises(ConfigError, match=expected) as caught:
            check([path])
        assert len(str(caught.value)) < 300


def test_an_alias_chain_below_the_cap_loads_as_yaml_defines_it(tmp_path):
    path = tmp_path / "f.yaml"
    path.write_text(alias_chain(3))  # 10**4 scalars: within the cap
    assert read_yaml(path) == yaml.safe_load(path.read_text())


def test_a_config_file_larger_than_the_cap_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("# padding\n" * 100_001)  # 1,000,010 bytes
    with pytest.raises(ConfigError) as caught:
        check_config_files([path])
    assert (
        str(caught.value) == f"{path}: 1,000,010 bytes is too large for a config file; allowed: at most 1,000,000 bytes"
    )


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            {"studies": {f"s{i}": RNN_PTB for i in range(201)}},
            "config.studies: 201 entries are too many; allowed: at most 200",
        ),
        (
            {
                "studies": {
                    "a": {**RNN_PTB, "vary": {"hidden": list(range(1, 1001))}},
                    "b": {**RNN_PTB, "seeds": list(range(501))},
                }
            },
            "config.studies: 2 studies expand to 2,002 runs (the largest, studies.b, to 1,002: its varied values times "
            "its seeds); allowed: at most 2,000 runs in one config",
        ),
        # an analysis's networks count: 2 runs, 1,000 hidden sizes times 2 seeds of untrained networks
        (
            {
                "studies": {"s": RNN_PTB},
                "analyses": {
                    "u": {
                        "network": {
                            "untrained": {
                                "fixed": {"radius": 1.0},
                                "vary": {"hidden": list(range(1, 1001))},
                                "seeds": [0, 1],
                            }
                        }
                    }
                },
            },
            "config.studies, config.analyses: 1 study expands to 2 runs and 1 analysis to 2,000 networks, 2,002 in all "
            "(the largest, analyses.u, to 2,000: its varied values times its seeds); allowed: at most 2,000 runs and "
            "analysed networks in one config",
        ),
        # a study's runs at snapshots: 1,000 runs; `where` keeps 1 of them at 2 snapshots, all 1,000 at 1
        (
            {
                "studies": {"s": {**RNN_PTB, "vary": {"hidden": list(range(1, 1001))}}},
                "analyses": {
                    "a": {"network": {"study": "s", "where": {"hidden": 7}, "snapshots": [0, "final"]}},
                    "b": {"network": {"study": "s"}},
                },
            },
            "config.studies, config.analyses: 1 study expands to 1,000 runs and 2 analyses to 1,002 networks, 2,002 in "
            "all (the largest, studies.s, to 1,000: its varied values times its seeds); allowed: at most 2,000",
        ),
        # a value is quoted by its start only
        (
            {"run": {"hidden": "9" * 1000}},
            f"config.run.hidden: '{'9' * 60}'... (1,000 characters) has the wrong type; expected integer",
        ),
        (
            {"run": {"activation": "t" * 1000}},
            f"config.run.activation: '{'t' * 60}'... (1,000 characters) is not allowed; allowed values: 'tanh', ",
        ),
        (
            {"run": {"adaptive_cutoffs": {str(i): i for i in range(100_000)}}},
            "config.run.adaptive_cutoffs: a dict of 100,000 items has the wrong type; expected array",
        ),
    ],
)
def test_a_config_past_a_cap_or_with_a_long_value_is_refused_quoting_only_its_start(config, expected):
    message = error_of(config)
    assert expected in message
    assert len(message) < 400


# --- the comparison's reference folder must hold reference runs --------------------------------------------


COMPARED = {
    "studies": {"rnn_s": {"family": "rnn", "corpus": "ptb", "vary": {"hidden": [50]}}},
}


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda root: None, "is not a folder (found nothing at {folder})"),
        (lambda root: (root / "ref").write_text("x"), "is not a folder (found a file at {folder})"),
        (lambda root: (root / "ref").mkdir(), "holds no reference runs (no runs/<run_id>/ folder under {folder})"),
        (
            lambda root: (root / "ref" / "runs").mkdir(parents=True),
            "holds no reference runs (no runs/<run_id>/ folder under {folder})",
        ),
    ],
)
def test_a_reference_folder_that_is_missing_or_empty_is_refused_at_load(tmp_path, make, problem):
    make(tmp_path)
    config = {**COMPARED, "comparison": {"studies": {"ptb": {"rnn": ["rnn_s"]}}, "reference": "ref"}}
    with pytest.raises(ConfigError) as caught:
        load_config(config, checkout=tmp_path)
    assert str(caught.value) == (
        f"comparison.reference: 'ref' {problem.format(folder=tmp_path / 'ref')}; allowed: a folder of reference runs "
        "as `rnnbench reference collect` writes them, relative to the workflow's folder, or null for none"
    )


def test_an_absolute_reference_folder_is_read_as_given_and_null_means_none(tmp_path):
    comparison = {"studies": {"ptb": {"rnn": ["rnn_s"]}}}
    with pytest.raises(ConfigError, match="comparison.reference: '/nonexistent/ref' is not a folder"):
        load_config({**COMPARED, "comparison": {**comparison, "reference": "/nonexistent/ref"}}, checkout=tmp_path)
    assert load_config({**COMPARED, "comparison": {**comparison, "reference": None}}, checkout=tmp_path)
    (tmp_path / "ref" / "runs" / "rnn-ptb-0123456789").mkdir(parents=True)
    loaded = load_config({**COMPARED, "comparison": {**comparison, "reference": str(tmp_path / "ref")}}, checkout=REPO)
    assert loaded.comparison.reference == str(tmp_path / "ref")
    # without a comparison, the default reference folder is never read
    assert load_config(COMPARED, checkout=tmp_path).comparison.reference == "reference"


# --- a study is defined in one config file and refined in later ones, never defined twice --------------------


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        # the two --configfile files of one study: merged, they would train {family: ff, vary: {hidden, context}}
        (
            [
                "threads: 1\n",
                "studies:\n  s: {family: rnn, vary: {hidden: [16]}}\n",
                "studies:\n  s: {family: ff, vary: {context: [2]}}\n",
            ],
            "studies.s.family: {2} gives 'ff' for the study {1} defines with family 'rnn'",
        ),
        # a --configfile giving a study of the defaults another corpus
        (
            ["studies:\n  s: {family: rnn, corpus: ptb, vary: {hidden: [16]}}\n", "studies:\n  s: {corpus: brown}\n"],
            "studies.s.corpus: {1} gives 'brown' for the study {0} defines with corpus 'ptb'",
        ),
        # a refinement in between does not hide the first definition
        (
            [
                "studies:\n  s: {family: rnn, corpus: ptb, vary: {hidden: [16]}}\n",
                "studies:\n  s: {family: rnn, seeds: [2]}\n",
                "studies:\n  s: {family: lstm}\n",
            ],
            "studies.s.family: {2} gives 'lstm' for the study {0} defines with family 'rnn'",
        ),
    ],
)
def test_a_study_given_another_family_or_corpus_by_a_later_file_is_refused_naming_both(tmp_path, texts, expected):
    paths = []
    for i, text in enumerate(texts):
        paths.append(tmp_path / f"{i}.yaml")
        paths[-1].write_text(text)
    expected = expected.format(*paths) + (
        "; the files merge key by key, so one study would mix the settings of both. Allowed: a later file refines a "
        "study and keeps its family and corpus; give the new study another name"
    )
    for check in (check_config_files, merge_config_files):
        with pytest.raises(ConfigError) as caught:
            check(paths)
        assert str(caught.value) == expected


def test_a_later_config_file_refines_a_study_key_by_key(tmp_path):
    default, extra = tmp_path / "config.yaml", tmp_path / "extra.yaml"
    default.write_text("studies:\n  s: {family: rnn, corpus: ptb, fixed: {hidden: 64, bptt: 5}, vary: {lr: [1]}}\n")
    extra.write_text(
        "studies:\n  s: {family: rnn, fixed: {bptt: 7}, seeds: [2, 3]}\n  t: {family: ff, corpus: ptb, vary: {context: [2]}}\n"
    )
    check_config_files([default, extra])
    merged = merge_config_files([default, extra])
    assert merged["studies"]["s"] == {
        "family": "rnn",
        "corpus": "ptb",
        "fixed": {"hidden": 64, "bptt": 7},
        "vary": {"lr": [1]},
        "seeds": [2, 3],
    }
    assert [cfg.bptt for _, cfg in load_config(merged).study_runs("s")] == [7, 7]


@pytest.mark.parametrize("given", [0, -3, 1.5, "two", True])
def test_training_slots_below_1_or_not_a_count_are_refused(given):
    with pytest.raises(ConfigError) as caught:
        check_training_slots(given, 2)
    assert str(caught.value) == (
        f"--resources training_slots={given!r}: below 1, Snakemake would scale each training job's need down to it "
        "and start every run at once; allowed: an integer >= 1 (training runs at once; without the option, 2: one "
        "per core)"
    )


@pytest.mark.parametrize("given", [None, 1, 8])
def test_training_slots_given_or_not_are_accepted(given):
    check_training_slots(given, 2)


# --- what the config accepts, the machine can run ----------------------------------------------------------


TINY_AGREEMENT = {"family": "rnn", "corpus": "agreement", "output": "full", "embed_dim": 10, "hidden": 20}


@pytest.mark.parametrize(
    ("optimizer", "copies", "what"),
    [("sgd", 3, "weights, gradients, best weights"), ("adam", 5, "weights, gradients, best weights, two Adam moments")],
)
def test_a_model_larger_than_the_machines_memory_is_refused_naming_the_bound(monkeypatch, optimizer, copies, what):
    import rnnbench.config.runs

    # embedding 313 x 10, W 20 x 10, U 20 x 20, b_h 20, V 313 x 20, b_y 313: 10,323 parameters
    needed = 10_323 * 4 * copies
    monkeypatch.setattr(rnnbench.config.runs, "machine_memory", lambda: needed)
    RunConfig.from_settings({**TINY_AGREEMENT, "optimizer": optimizer})  # exactly fits
    monkeypatch.setattr(rnnbench.config.runs, "machine_memory", lambda: needed - 1)
    with pytest.raises(ConfigError) as caught:
        RunConfig.from_settings({**TINY_AGREEMENT, "optimizer": optimizer}, where="run")
    assert str(caught.value) == (
        f"run.hidden: 20 makes a model of 10,323 parameters, which needs at least {needed:,} bytes to train (10,323 x "
        f"4 bytes x {copies} copies: {what}); allowed: a model that fits this machine's memory, {needed - 1:,} bytes "
        "(0.0 GiB)"
    )


def test_a_hidden_layer_of_ten_million_is_refused_at_load():
    message = error_of(study(fixed={"hidden": 10_000_000}, vary={"bptt": [5]}))
    assert message.startswith(
        "studies.s.fixed.hidden: 10,000,000 makes a model of 131,274,156,001,002 parameters, which needs at least "
        "1,575,289,872,012,024 bytes to train (131,274,156,001,002 x 4 bytes x 3 copies"
    )


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            {"studies": {"a" * 65: RNN_PTB}},
            f"config.studies: '{'a' * 60}'... (65 characters) is too long; allowed: at most 64 characters",
        ),
        (
            study(corpus="agreement", fixed={"output": "full", "corpus_options": {"max_distance": 5001}}),
            "config.studies.s.fixed.corpus_options.max_distance: 5001 is out of range; allowed: {'minimum': 1, "
            "'maximum': 5000}",
        ),
    ],
)
def test_a_name_or_distance_the_machine_cannot_use_is_refused_naming_the_bound(config, expected):
    assert error_of(config) == expected


# --- a recipe carried beyond another study's ------------------------------------------------------------


def test_a_study_departs_from_another_of_its_family_and_corpus_and_no_run_id_sees_it():
    base = {**RNN_PTB, "vary": {"hidden": [400]}}
    modern = {**base, "fixed": {"dropout": 0.5}, "departs_from": "base"}
    config = load_config({"studies": {"base": base, "modern": modern}})
    assert config.studies["modern"].departs_from == "base" and config.studies["base"].departs_from is None
    plain = load_config({"studies": {"base": base, "modern": {**modern, "departs_from": None}}})
    assert [c.run_id for _, c in config.study_runs("modern")] == [c.run_id for _, c in plain.study_runs("modern")]


@pytest.mark.parametrize(
    ("departs_from", "other", "message"),
    [
        (
            "nowhere",
            RNN_PTB,
            r"^studies\.modern\.departs_from: no study 'nowhere' in this config; allowed: base, modern",
        ),
        ("modern", RNN_PTB, r"^studies\.modern\.departs_from: 'modern' is this study"),
        (
            "base",
            {**RNN_PTB, "family": "ff"},
            r"^studies\.modern\.departs_from: 'base' is a ff model on ptb, this study a rnn model on ptb; allowed: a "
            r"study of the same family and corpus",
        ),
    ],
)
def test_a_study_cannot_depart_from_itself_a_missing_study_or_another_kind_of_model(departs_from, other, message):
    modern = {**RNN_PTB, "departs_from": departs_from}
    with pytest.raises(ConfigError, match=message):
        load_config({"studies": {"base": other, "modern": modern}})
