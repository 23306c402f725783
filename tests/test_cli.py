"""The command line: flags generated from the schema, one-line errors, and `outputs --check`."""

from pathlib import Path

import pytest

from rnnbench import cli
from rnnbench.config.schema import run_defaults, run_settings_schema

REPO = Path(__file__).resolve().parents[1]


def train_args(*argv: str):
    return cli._parser().parse_args(["train", *argv])


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `rnnbench argv...`."""
    try:
        code = cli.main(list(argv))
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


# --- flags generated from the schema ----------------------------------------------------------------------


def test_every_run_setting_has_a_flag_with_the_schemas_choices():
    train = next(a for a in cli._parser()._subparsers._group_actions[0].choices.values() if a.prog.endswith("train"))
    by_dest = {action.dest: action for action in train._actions}
    for key, prop in run_settings_schema()["properties"].items():
        assert key in by_dest, key
        if "enum" in prop:
            assert list(by_dest[key].choices) == prop["enum"], key
    assert by_dest["family"].option_strings == ["--model", "--family"]


@pytest.mark.parametrize(
    ("argv", "key", "value"),
    [
        (["--hidden", "64"], "hidden", 64),
        (["--lr", "0.5"], "lr", 0.5),
        (["--direct", "true"], "direct", True),
        (["--direct", "0"], "direct", False),
        (["--adaptive-cutoffs", "10,20"], "adaptive_cutoffs", [10, 20]),
        (["--train-tokens", "null"], "train_tokens", None),
        (["--max-steps-per-epoch", "30"], "max_steps_per_epoch", 30),
        (["--model", "ff"], "family", "ff"),
        (["--clip-mode", "value"], "clip_mode", "value"),
    ],
)
def test_flag_text_becomes_the_schemas_type(argv, key, value):
    assert getattr(train_args(*argv), key) == value


def test_unset_flags_leave_the_schema_default_to_the_config():
    args = train_args()
    assert all(getattr(args, key) is None for key in run_defaults())  # RunConfig fills in the schema's defaults


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--direct", "maybe"], "argument --direct: 'maybe' is not allowed; expected true or false"),
        (["--hidden", "big"], "argument --hidden: 'big' is not allowed; expected an integer"),
        (["--train-tokens", "all"], "argument --train-tokens: 'all' is not allowed; expected an integer or null"),
        (["--lr", "fast"], "argument --lr: 'fast' is not allowed; expected a number"),
        (
            ["--adaptive-cutoffs", "1000;5000"],
            "argument --adaptive-cutoffs: '1000;5000' is not allowed; expected comma-separated",
        ),
        (["--activation", "gelu"], "argument --activation: invalid choice: 'gelu'"),
    ],
)
def test_a_bad_flag_value_is_one_clear_line(capsys, argv, message):
    code, _, err = run(capsys, "train", *argv)
    assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "lstm", "--activation", "relu"], "--activation: the LSTM's activations are fixed"),
        (["--model", "rnn", "--hidden", "0"], "--hidden: 0 (no hidden layer) is allowed for family 'ff' only"),
        (["--corpus", "ptb", "--corpus-option", "seed=3"], "--corpus-option: corpus 'ptb' got unknown option(s) seed"),
        (["--corpus", "agreement"], "--adaptive-cutoffs: cutoffs must be below the vocabulary size (313)"),
        (["--lr", "nan"], "--lr: nan is not allowed; allowed: a finite number > 0"),
        (["--lr", "inf"], "--lr: inf is not allowed; allowed: a finite number > 0"),
        (["--clip", "nan"], "--clip: nan is not allowed; allowed: a number > 0, or .inf"),
        (["--dropout", "nan"], "--dropout: nan is not allowed; allowed: a finite number >= 0 and <= 0.9"),
        (
            ["--corpus", "agreement", "--corpus-option", "attractor_prob=.nan"],
            "--corpus-option.attractor_prob: nan is not allowed; allowed: a finite number >= 0 and <= 1",
        ),
    ],
)
def test_a_bad_combination_of_flags_names_the_flag(capsys, tmp_path, argv, message):
    code, _, err = run(capsys, "train", *argv, "--out", str(tmp_path / "run"))
    assert code == 2 and err.startswith("rnnbench: configuration error: ") and message in err
    assert not (tmp_path / "run").exists()  # refused before anything is written


@pytest.mark.parametrize("flag", ["--out", "--cache-dir"])
def test_a_file_where_a_folder_goes_is_refused_before_the_corpus_loads(capsys, tmp_path, monkeypatch, flag):
    from rnnbench.data import corpora

    a_file = tmp_path / "f"
    a_file.write_text("x")
    monkeypatch.setitem(corpora._BUILDERS, "agreement", lambda *args: pytest.fail("the corpus was read"))
    argv = [
        "--corpus",
        "agreement",
        "--output",
        "full",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--out",
        str(tmp_path / "run"),
    ]
    argv[argv.index(flag) + 1] = str(a_file)
    code, _, err = run(capsys, "train", *argv)
    expected = {
        "--out": f"rnnbench: error: run directory {a_file} is a file, not a folder; allowed: a folder that is new or holds this run",
        "--cache-dir": f"rnnbench: error: agreement: the cache folder {a_file} (given by cache_dir) is a file, not a folder",
    }[flag]
    assert code == 1 and err.startswith(expected) and err.count("\n") == 1 and a_file.read_text() == "x"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["train", "--out", ""],
            "--out: '' is empty, which would put the run's files in the working directory; allowed: a folder of its "
            "own outside the checkout's source tree (e.g. results/runs/<name>; default: results/runs/<run_id>; made "
            "if missing)",
        ),
        (
            ["train", "--out", str(REPO / "src" / "run")],
            f"--out: '{REPO / 'src' / 'run'}' is inside the checkout's src/",
        ),
        # the config's `threads`, checked against the same schema node as config.threads
        (["train", "--threads", "0"], "--threads: 0 is out of range; allowed: {'minimum': 1, 'maximum': 256}"),
        (["train", "--threads", "257"], "--threads: 257 is out of range; allowed: {'minimum': 1, 'maximum': 256}"),
        (
            ["evaluate", "--run", "nowhere", "--threads", "0"],
            "--threads: 0 is out of range; allowed: {'minimum': 1, 'maximum': 256}",
        ),
    ],
)
def test_a_setting_the_workflow_refuses_is_refused_by_the_command_too(capsys, monkeypatch, tmp_path, argv, message):
    from rnnbench.data import corpora

    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(corpora._BUILDERS, "agreement", lambda *args: pytest.fail("the corpus was read"))
    if argv[0] == "train":
        argv = [*argv, "--corpus", "agreement", "--output", "full"]
    code, _, err = run(capsys, *argv)
    assert code == 2 and err.startswith(f"rnnbench: configuration error: {message}") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # nothing written, no results/ made


def test_the_config_refuses_threads_with_the_same_message():
    from rnnbench.config.files import ConfigError
    from rnnbench.config.settings import load_config

    with pytest.raises(
        ConfigError, match=r"^config\.threads: 0 is out of range; allowed: \{'minimum': 1, 'maximum': 256\}$"
    ):
        load_config({"threads": 0})


# --- outputs --------------------------------------------------------------------------------------------


def small_config(tmp_path: Path) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(
        f"results_dir: {tmp_path / 'results'}\n"
        "tables: {worked: false}\n"
        "studies:\n  s: {family: rnn, corpus: ptb, vary: {hidden: [50, 100]}}\n"
    )
    return path


def test_outputs_lists_and_checks_every_output(capsys, tmp_path):
    config = small_config(tmp_path)
    code, out, _ = run(capsys, "outputs", str(config))
    listed = out.split()
    assert code == 0 and listed and all(p.startswith(str(tmp_path / "results")) for p in listed)
    assert any(p.endswith("/studies/s/summary.csv") or "/s/" in p for p in listed)

    code, out, err = run(capsys, "outputs", "--check", str(config))
    assert (
        code == 1
        and out.count("MISSING") == len(listed)
        and f"{len(listed)} expected output(s) missing or empty" in err
    )

    for path in listed:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text("x")
    assert run(capsys, "outputs", "--check", str(config))[0] == 0
    Path(listed[0]).write_text("")
    code, out, err = run(capsys, "outputs", "--check", str(config))
    assert code == 1 and f"EMPTY    {listed[0]}" in out and "1 expected output(s)" in err


def test_outputs_merges_config_files_in_order(capsys, tmp_path):
    config = small_config(tmp_path)
    over = tmp_path / "over.yaml"
    over.write_text(f"results_dir: {tmp_path / 'other'}\n")
    _, out, _ = run(capsys, "outputs", str(config), str(over))
    assert all(p.startswith(str(tmp_path / "other")) for p in out.split())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("studies: {a: 1\n", "bad.yaml:2:1: YAML syntax error"),
        ("", "bad.yaml: the config file is empty"),
        ("threads: 1\nthreads: 2\n", "bad.yaml:2: key 'threads' given twice"),
        (
            "studies: {s: {family: rnn, corpus: ptb, metric: agreement_accuracy, vary: {hidden: [5]}}}\n",
            "studies.s.metric: 'agreement_accuracy' is measured on the agreement corpus only",
        ),
    ],
)
def test_outputs_on_a_bad_config_is_one_line_without_a_traceback(capsys, tmp_path, text, message):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    code, _, err = run(capsys, "outputs", str(REPO / "config" / "config.yaml"), str(bad))
    assert code == 2 and message in err and "Traceback" not in err and err.count("\n") == 1
