"""The Snakemake workflow run on tiny builds: a run output deleted by hand made again, a study or an analysis added in
a config file getting its jobs, tables, records and figures with no code change (and nothing else rerun), a built
checkout copied to another folder planning no job, and provenance naming the workflow's own commit when run from
another folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from workflow_run import REPO, declared_outputs, expected, jobs_by_rule, snakemake, tiny_extra_config


def test_a_run_output_deleted_by_hand_is_made_again_by_the_same_command(tmp_path, capsys):
    from rnnbench import cli

    results, configs = tiny_extra_config(tmp_path)
    for path in expected(configs):  # a finished build, without training it: every file there, in job order
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text("x")
    touched = snakemake("results", "--touch", "--cores", "1", "--nolock", configfiles=configs)
    assert touched.returncode == 0, touched.stdout + touched.stderr
    assert "Nothing to be done" in snakemake("results", "-n", configfiles=configs).stdout

    run = next((results / "runs").iterdir())
    (run / "metrics.json").unlink()
    again = snakemake("results", "-n", configfiles=configs)
    jobs = jobs_by_rule(again.stdout)
    assert jobs["train"] == 1 and f"Missing output files: {run / 'metrics.json'}" in again.stdout
    assert jobs["study_summary"] >= 1  # and what is made from it, with the run's new metrics
    code = cli.main(["outputs", str(REPO / "config" / "config.yaml"), *configs, "--check"])
    out = capsys.readouterr().out
    assert code == 1 and f"MISSING  {run / 'metrics.json'}" in out.splitlines()


def touch_a_finished_build(configs: list[str], cwd: Path = REPO, env: dict[str, str] | None = None) -> None:
    """Every output of ``configs`` made (a placeholder each) and recorded by Snakemake as built by its job, with the
    params and code of today's rules, without training anything."""
    planned = snakemake("results", "-n", "--forceall", configfiles=configs, cwd=cwd, env=env)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    for path in declared_outputs(planned.stdout):
        (cwd / path).parent.mkdir(parents=True, exist_ok=True)
        (cwd / path).write_text("x")
    # --forceall: every job recorded, its params and code among them, not only those whose outputs were older
    touched = snakemake(
        "results", "--touch", "--forceall", "--cores", "1", "--nolock", configfiles=configs, cwd=cwd, env=env
    )
    assert touched.returncode == 0, touched.stdout + touched.stderr
    assert "Nothing to be done" in snakemake("results", "-n", configfiles=configs, cwd=cwd, env=env).stdout


@pytest.fixture(scope="module")
def built_copy(tmp_path_factory) -> tuple[Path, list[str], dict[str, str]]:
    """A copy of the checkout with a finished tiny build in it (touch_a_finished_build: every output recorded as
    made by today's rules, nothing trained): the folder, its config files and its environment. Tests only read
    it, or copy it."""
    first = tmp_path_factory.mktemp("built") / "first"
    first.mkdir()
    for name in ("Snakefile", "config", "workflow", "reports", "reference"):
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, first / name)
    (first / "profiles").symlink_to(os.readlink(REPO / "profiles"))
    (first / "config" / "tiny.yaml").write_text(
        yaml.safe_dump(
            {
                "results_dir": "results/tiny",
                "run_overrides": {"max_steps_per_epoch": 5, "train_tokens": 5000, "eval_tokens": 2000},
            }
        )
    )
    configs = ["config/smoke.yaml", "config/tiny.yaml"]
    env = {"RNNBENCH_CACHE": str(first / "data" / "cache")}
    touch_a_finished_build(configs, cwd=first, env=env)
    return first, configs, env


def test_a_config_file_adding_a_study_reruns_only_what_reads_the_study(built_copy, tmp_path):
    """The config files, command and checkout are a job's provenance, not its params: a new file adding a study
    plans that study's runs, tables and figures, the table of every run's cost and the findings that read it;
    nothing else again."""
    from rnnbench.config.files import merge_config_files
    from rnnbench.config.settings import load_config

    folder, configs, env = built_copy
    # Two more hidden sizes of a study the build has, on its corpus: a new corpus would rightly rebuild the
    # corpus and baseline tables and every summary that reads them.
    merged = merge_config_files([folder / "config" / "config.yaml", *(folder / c for c in configs)])
    built = load_config(merged).studies["recurrence_agreement"]
    added = tmp_path / "added.yaml"
    added.write_text(
        yaml.safe_dump(
            {
                "studies": {
                    "tiny_added_hidden": {
                        "description": "two more hidden sizes",
                        "family": "rnn",
                        "corpus": "agreement",
                        "fixed": built.fixed,
                        "vary": {"hidden": [6, 7]},
                        "seeds": [1],
                        "metric": "agreement_accuracy",
                    }
                }
            }
        )
    )
    dry = snakemake("results", "-n", configfiles=[*configs, str(added)], cwd=folder, env=env)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert jobs_by_rule(dry.stdout) == {
        "benchmark_table": 1,
        "findings_table": 1,  # it reads the cost of every run (benchmarks.csv)
        "results": 1,
        "study_extra_figure": 2,
        "study_extra_table": 1,
        "study_figure": 1,
        "study_summary": 1,
        "train": 2,
        "total": 10,
    }
    assert "tiny_added_hidden" in dry.stdout and "missing provenance/metadata" not in dry.stdout


def test_a_built_checkout_copied_to_another_folder_plans_no_job(built_copy, tmp_path):
    """Moving the checkout (and, as CI does, pointing RNNBENCH_CACHE at the copy's cache) reruns nothing."""
    first, configs, _ = built_copy
    second = tmp_path / "second"
    shutil.copytree(first, second, symlinks=True)  # times kept: the outputs stay newer than their inputs

    dry = snakemake(
        "results", "-n", configfiles=configs, cwd=second, env={"RNNBENCH_CACHE": str(second / "data/cache")}
    )
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "Nothing to be done" in dry.stdout, dry.stdout


def test_a_new_study_in_the_config_gets_its_jobs_table_and_figure(tmp_path):
    """Adding a study is config only: its runs, summary and figure appear with no code change."""
    results, configs = tiny_extra_config(
        tmp_path,
        studies={
            "tiny_activation_agreement": {
                "description": "activation ablation",
                "family": "rnn",
                "corpus": "agreement",
                "fixed": {"output": "full", "embed_dim": 8, "hidden": 8},
                "vary": {"activation": ["tanh", "relu"]},
                "seeds": [1],
                "metric": "agreement_accuracy",
            }
        },
    )
    targets = [
        f"{results}/studies/tiny_activation_agreement/summary.csv",
        f"{results}/studies/tiny_activation_agreement/study.json",
        f"{results}/studies/tiny_activation_agreement/figure.png",
        f"{results}/studies/tiny_activation_agreement/figure.pdf",
    ]
    # An agreement-accuracy study also gets its accuracy per head-verb distance and the figures of it.
    distance = [
        f"{results}/studies/tiny_activation_agreement/distance.csv",
        f"{results}/studies/tiny_activation_agreement/distance-heatmap.png",
    ]
    targets += distance

    dry = snakemake(*targets, "-n", configfiles=configs)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert jobs_by_rule(dry.stdout) == {
        "prepare_corpus": 1,
        "train": 2,
        "study_summary": 1,
        "study_figure": 1,
        "study_extra_table": 1,
        "study_extra_figure": 1,
        "total": 7,
    }

    # --nolock: this run writes only under tmp_path, so it may run beside a pipeline in the same checkout.
    run = snakemake(*targets, "--cores", "2", "--nolock", configfiles=configs)
    assert run.returncode == 0, run.stdout + run.stderr
    for target in targets:
        assert Path(target).stat().st_size > 0
    summary = pd.read_csv(targets[0])
    assert sorted(summary["activation"].unique()) == ["relu", "tanh"]
    assert set(summary["metric"]) >= {"agreement_accuracy", "test_ppl", "diverged"}
    assert summary["run_id"].nunique() == 2
    per_distance = pd.read_csv(distance[0])
    assert list(per_distance.columns[:2]) == ["activation", "distance"]
    assert set(per_distance["activation"]) == {"tanh", "relu"} and (per_distance["runs"] == 1).all()
    # a mean over the seeds that learned: an accuracy where the one seed learned, none where it did not
    learned = per_distance["seeds_learned"] == 1
    assert per_distance.loc[learned, "accuracy_mean"].between(0, 1).all()
    assert (
        per_distance.loc[~learned, "accuracy_mean"].isna().all() and (per_distance.loc[~learned, "probes"] == 0).all()
    )
    assert (results / "studies/tiny_activation_agreement/figure.provenance.json").exists()
    record = json.loads(Path(targets[1]).read_text())
    assert record["vary"] == ["activation"] and record["metric"] == "agreement_accuracy"
    assert record["fixed"]["hidden"] == 32  # what the runs use: smoke.yaml's run_overrides over the study's 8
    assert sorted(record["run_ids"]) == sorted(summary["run_id"].unique())
    assert "study" not in json.loads(
        (results / "studies/tiny_activation_agreement/summary.provenance.json").read_text()
    )

    # Snakemake's own report: the study's table and figure, flagged by the rules, under the study's category
    report = tmp_path / "report.zip"
    made = snakemake(*targets, "--report", str(report), configfiles=configs)
    assert made.returncode == 0, made.stdout + made.stderr
    with zipfile.ZipFile(report) as archive:
        html = next(archive.read(name).decode() for name in archive.namelist() if name.endswith("report.html"))
    assert "Study tiny_activation_agreement" in html  # the category
    for target in (targets[0], targets[2]):  # summary.csv and figure.png, each with its caption
        assert f'"{target}": {{"name": "{Path(target).name}"' in html
    # each caption names the study: summary, figure, per-distance table, heatmap
    assert html.count('Study <tt class=\\"docutils literal\\">tiny_activation_agreement</tt>') == 4

    again = snakemake(*targets, "-n", configfiles=configs)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_new_decay_and_probe_analyses_in_the_config_get_their_jobs_tables_and_figures(tmp_path):
    """Adding a decay analysis is config only: untrained networks, or a study's run at its snapshots (the
    study's own training job, not a new one), each measured, tabled and drawn with no code change; a probe of
    the same run likewise."""
    results, configs = tiny_extra_config(
        tmp_path,
        studies={
            "tiny_agreement": {
                "family": "rnn",
                "corpus": "agreement",
                "fixed": {"output": "full"},
                "vary": {"bptt": [5]},
                "seeds": [1],
                "metric": "agreement_accuracy",
            }
        },
        analyses={
            "decay_gain": {
                "description": "untrained relu",
                "network": {
                    "untrained": {
                        "fixed": {"activation": "relu", "hidden": 8, "embed_dim": 4},
                        "vary": {"radius": [0.5, 3.0]},
                    }
                },
                "measure": {"corpus": "agreement", "steps": 12, "sequences": 2},
            },
            "decay_tiny": {
                "network": {"study": "tiny_agreement", "snapshots": [0, "final"]},
                "measure": {"steps": 12, "sequences": 2},
            },
            "probe_tiny": {
                "kind": "probe",
                "network": {"study": "tiny_agreement", "snapshots": [0, "final"]},
                "measure": {"folds": 2},
            },
        },
    )
    targets = [
        f"{results}/analyses/{name}/{file}"
        for name in ("decay_gain", "decay_tiny")
        for file in ("curves.csv", "rates.csv", "analysis.json", "figure.png", "figure.pdf")
    ]
    probe = [f"{results}/analyses/probe_tiny/{file}" for file in ("probe.csv", "figure.png", "figure.pdf")]
    dry = snakemake(*targets, *probe, "-n", configfiles=configs)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert jobs_by_rule(dry.stdout) == {
        "prepare_corpus": 1,
        "train": 1,
        "decay_analysis": 2,
        "probe_analysis": 1,
        "analysis_figure": 3,
        "total": 8,
    }

    run = snakemake(*targets, *probe, "--cores", "2", "--nolock", configfiles=configs)
    assert run.returncode == 0, run.stdout + run.stderr
    for target in targets + probe:
        assert Path(target).stat().st_size > 0
    read = pd.read_csv(probe[0], dtype={"snapshot": str})  # the agreement corpus's distances 1..20: d = 0..19
    assert sorted(read["snapshot"].unique()) == ["0", "final"] and set(read["labels"]) == {"true", "shuffled"}
    assert sorted(read["distance"].unique()) == list(range(20)) and len(read["run_id"].unique()) == 1
    gain = pd.read_csv(targets[1])  # decay_gain's rates
    assert sorted(gain["radius"].unique()) == [0.5, 3.0] and set(gain["activation"]) == {"relu"}
    assert set(gain["direction"]) == {"backward", "forward"}
    curves = pd.read_csv(targets[5], dtype={"snapshot": str})  # decay_tiny's curves: both snapshots, distance 0..11
    assert sorted(curves["snapshot"].unique()) == ["0", "final"] and curves["distance"].max() == 11
    record = json.loads(Path(targets[7]).read_text())
    assert record["study"] == "tiny_agreement" and record["vary"] == ["snapshot"] and len(record["run_ids"]) == 1
    assert (results / "runs" / record["run_ids"][0] / "model.pt").exists()  # the study's run, trained once
    for name in ("decay_gain", "decay_tiny"):
        for table in ("curves", "rates", "figure"):
            assert (results / "analyses" / name / f"{table}.provenance.json").exists()


def test_provenance_names_the_workflows_commit_when_run_from_another_folder(tmp_path):
    """`snakemake -s <checkout>/Snakefile --directory <elsewhere>`: the commit is the checkout's."""
    configs = [str(REPO / "config" / "config.yaml"), str(REPO / "config" / "smoke.yaml")]
    target = "results/smoke/tables/decay_47_words.csv"
    run = snakemake(
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(tmp_path),
        target,
        "--cores",
        "1",
        configfiles=configs,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    record = json.loads((tmp_path / "results/smoke/tables/decay_47_words.provenance.json").read_text())
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False
    ).stdout.strip()
    assert head and record["git_commit"].removesuffix("+dirty") == head
