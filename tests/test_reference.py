"""Reference results: collected from a results folder, read back, and found stale when their config or the
code that names runs moves on. The last test guards the repository's own reference/ folder."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from rnnbench import paths
from rnnbench.config.files import merge_config_files
from rnnbench.config.settings import load_config
from rnnbench.results.reference import (
    collect,
    cpu_seconds,
    manifest,
    read_reference,
    reference_records,
    stale_runs,
)

REPO = Path(__file__).resolve().parents[1]

STUDY = {
    "family": "rnn",
    "corpus": "ptb",
    "fixed": {"embed_dim": 10, "max_epochs": 2},
    "vary": {"hidden": [20]},
    "seeds": [1, 2],
}


def _repository(tmp_path: Path, study: dict) -> Path:
    """A checkout with config/config.yaml (no studies) and config/paper.yaml naming one comparison study."""
    repo = tmp_path / "repo"
    (repo / "config").mkdir(parents=True, exist_ok=True)
    (repo / "config" / "config.yaml").write_text("studies: {}\n")
    paper = {"studies": {"paper_rnn": study}, "comparison": {"studies": {"ptb": {"rnn": ["paper_rnn"]}}}}
    (repo / "config" / "paper.yaml").write_text(yaml.safe_dump(paper))
    return repo


FILES = ["config/config.yaml", "config/paper.yaml"]


def _finished_runs(repo: Path, results: Path, *, finished_seeds=(1, 2)) -> list[str]:
    """Write the small outputs of the study's runs as training would, for the seeds given."""
    config = load_config(merge_config_files([repo / f for f in FILES]))
    ids = []
    for point, cfg in config.study_runs("paper_rnn"):
        if point["seed"] not in finished_seeds:
            continue
        run = Path(paths.run_dir(str(results), cfg.run_id))
        run.mkdir(parents=True)
        (run / "config.json").write_text(json.dumps({"run_id": cfg.run_id, **cfg.to_dict()}))
        (run / "metrics.json").write_text(
            json.dumps({"test_ppl": 120.0 + point["seed"], "valid_ppl": 125.0, "epochs": 2})
        )
        pd.DataFrame(
            {"epoch": [1, 2], "seconds": [100.0, 110.0], "valid_ppl": [150.0, 125.0], "tokens_per_second": [10.0, 10.0]}
        ).to_csv(run / "epochs.csv", index=False)
        (run / "model.pt").write_bytes(b"weights")  # must never be collected
        ids.append(cfg.run_id)
    return ids


def _collect(repo: Path, results: Path) -> list[str]:
    return collect(
        results, FILES, repo / "reference", repository=repo, command="rnnbench reference collect", commit="abc1234",
        packages={"torch": "2.13.0"},
    )  # fmt: skip


def test_collect_copies_the_small_outputs_of_finished_runs_and_their_provenance(tmp_path):
    repo = _repository(tmp_path, STUDY)
    results = tmp_path / "results"
    finished = _finished_runs(repo, results, finished_seeds=(1,))  # seed 2 still training: left out
    assert _collect(repo, results) == finished
    [run] = read_reference(repo / "reference")
    assert run.run_id == finished[0] and run.study == "paper_rnn"
    assert sorted(p.name for p in run.folder.iterdir()) == [
        "config.json",
        "epochs.csv",
        "metrics.json",
        "provenance.json",
    ]
    assert run.provenance["commit"] == "abc1234" and run.provenance["config_files"] == FILES
    assert (run.provenance["cpu_seconds"], run.provenance["cpu_measured_by"]) == (210.0, "epochs (wall)")
    table = pd.read_csv(repo / "reference" / "runs.csv")
    assert table.to_dict("records") == manifest([run]).to_dict("records")
    assert list(table["test_ppl"]) == [121.0]


def test_cpu_seconds_are_the_runs_own_count_and_else_come_from_the_job_record_when_it_covers_every_epoch():
    epochs = pd.DataFrame({"seconds": [100.0, 110.0]})  # 210 s of training, wall
    job = pd.DataFrame({"s": [230.0], "cpu_time": [180.0]})
    # a run that counted its own CPU time (over every call that trained it): that count, whatever the job saw
    assert cpu_seconds({"cpu_seconds": 226.5}, epochs, job) == (226.5, "run")
    assert cpu_seconds({}, epochs, None) == (210.0, "epochs (wall)")
    # one job of 230 s covered both epochs: its 180 s of CPU are the run's (a busy machine: wall > CPU)
    assert cpu_seconds({}, epochs, job) == (180.0, "job")
    # a resumed run's last job (90 s) saw only part of it: the epochs' wall time bounds its CPU
    assert cpu_seconds({"cpu_seconds": None}, epochs, pd.DataFrame({"s": [90.0], "cpu_time": [85.0]})) == (
        210.0,
        "epochs (wall)",
    )


def test_a_reference_run_is_stale_once_its_study_or_the_run_id_code_moves_on(tmp_path):
    repo = _repository(tmp_path, STUDY)
    results = tmp_path / "results"
    first, second = _finished_runs(repo, results)
    _collect(repo, results)
    reference = repo / "reference"
    assert stale_runs(read_reference(reference), repo) == {}

    # the study now trains with another width: both runs are no longer the study's
    _repository(tmp_path, {**STUDY, "fixed": {**STUDY["fixed"], "embed_dim": 12}})
    stale = stale_runs(read_reference(reference), repo)
    assert set(stale) == {first, second}
    assert (
        stale[first]
        == "study paper_rnn of config/config.yaml, config/paper.yaml now gives other settings (another run id)"
    )

    # the study is gone
    (repo / "config" / "paper.yaml").write_text("studies: {}\n")
    assert stale_runs(read_reference(reference), repo)[first] == (
        "study paper_rnn is no longer in config/config.yaml, config/paper.yaml"
    )

    # settings that hash to another id (as when the code defining run ids changes)
    _repository(tmp_path, STUDY)
    saved = reference / "runs" / first / "config.json"
    saved.write_text(json.dumps({**json.loads(saved.read_text()), "hidden": 21}))
    stale = stale_runs(read_reference(reference), repo)
    assert list(stale) == [first] and stale[first].startswith("its settings now give run id rnn-ptb-")


def test_a_reference_run_is_a_record_of_the_comparison_named_inside_the_repository(tmp_path):
    repo = _repository(tmp_path, STUDY)
    results = tmp_path / "results"
    first, second = _finished_runs(repo, results)
    _collect(repo, results)
    _repository(tmp_path, {**STUDY, "seeds": [1]})  # seed 2 is no longer the study's
    records = {r["config"]["run_id"]: r for r in reference_records(read_reference(repo / "reference"), repo)}
    assert set(records) == {first, second}
    record = records[first]
    assert (record["scale"], record["studies"], record["source"]) == (
        "reference",
        ["paper_rnn"],
        f"reference/runs/{first}",
    )
    assert (record["stale"], record["commit"], record["cpu_seconds"], record["dynamic"]) == ("", "abc1234", 210.0, None)
    assert record["metrics"]["test_ppl"] == 121.0
    assert records[second]["stale"].startswith("study paper_rnn of config/config.yaml")


def test_a_reference_run_with_a_file_missing_is_named(tmp_path):
    repo = _repository(tmp_path, STUDY)
    results = tmp_path / "results"
    [run_id, _] = _finished_runs(repo, results)
    _collect(repo, results)
    (repo / "reference" / "runs" / run_id / "epochs.csv").unlink()
    with pytest.raises(FileNotFoundError, match=f"{run_id}: reference run without epochs.csv"):
        read_reference(repo / "reference")


def test_the_repository_reference_results_are_current_and_hold_no_weights():
    """Fails when a setting of config/paper.yaml or the code that names runs changed under a reference run:
    train it again (reference/README.md) or remove it."""
    runs = read_reference(REPO / "reference")
    assert stale_runs(runs, REPO) == {}
    assert not [p for p in (REPO / "reference").rglob("*") if p.suffix in (".pt", ".pth", ".ckpt")]
    listed = pd.read_csv(REPO / "reference" / "runs.csv") if runs else None
    if runs:
        assert sorted(listed["run_id"]) == sorted(r.run_id for r in runs)  # the manifest says what is there


def test_a_recipe_carried_beyond_another_is_kept_with_its_base_and_compared_with_its_settings(tmp_path):
    from rnnbench.published import load_published
    from rnnbench.results.beside_published import comparison_table
    from rnnbench.results.runs import our_runs

    repo = _repository(tmp_path, STUDY)
    modern = {**STUDY, "fixed": {**STUDY["fixed"], "dropout": 0.5}, "vary": {"hidden": [40]}, "seeds": [1]}
    paper = yaml.safe_load((repo / "config" / "paper.yaml").read_text())
    paper["studies"]["paper_rnn_modern"] = {**modern, "departs_from": "paper_rnn"}
    paper["comparison"]["studies"]["ptb"]["rnn"].append("paper_rnn_modern")
    (repo / "config" / "paper.yaml").write_text(yaml.safe_dump(paper))
    results = tmp_path / "results"
    _finished_runs(repo, results)
    config = load_config(merge_config_files([repo / f for f in FILES]))
    [(_, cfg)] = config.study_runs("paper_rnn_modern")
    run = Path(paths.run_dir(str(results), cfg.run_id))
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"run_id": cfg.run_id, **cfg.to_dict()}))
    (run / "metrics.json").write_text(json.dumps({"test_ppl": 110.0, "valid_ppl": 115.0, "epochs": 2}))
    pd.DataFrame({"epoch": [1, 2], "seconds": [1.0, 1.0], "valid_ppl": [150.0, 115.0]}).to_csv(run / "epochs.csv")
    _collect(repo, results)
    runs = {run.study + str(run.config["seed"]): run for run in read_reference(repo / "reference")}
    assert runs["paper_rnn_modern1"].provenance["departs_from"] == "paper_rnn"
    assert "departs_from" not in runs["paper_rnn1"].provenance  # a study that names none records none
    records = reference_records(list(runs.values()), repo)
    assert [r["departs_from"] for r in records] == [
        "paper_rnn" if r["studies"] == ["paper_rnn_modern"] else None for r in records
    ]
    dynamic = {"dynamic_ppl": 105.0, "static_ppl": 110.0, "lr": 0.3}  # scored again, learning as it reads
    ours = our_runs(
        [
            {**r, "metrics": {**r["metrics"], "parameters": 1}, "dynamic": dynamic if r["departs_from"] else None}
            for r in records
        ]
    )
    table = comparison_table(load_published(), ours).set_index("model")
    # against the base's run of its own seed: the width and the dropout, nothing else; its dynamic row alike
    assert table.loc[cfg.run_id, "departures"] == "H = 40 against 20; dropout 0.5 against none"
    assert table.loc[f"{cfg.run_id} dynamic", "departures"] == table.loc[cfg.run_id, "departures"]
    assert table.loc[cfg.run_id, "departs_from"] == "paper_rnn"
    assert table.loc[runs["paper_rnn1"].run_id, "departures"] == "the source states no recipe"
