"""The Snakemake workflow planned, not run: lint, a dry run of every shipped config, typos and unknown targets
caught before any job, and the output check covering every output the workflow declares. The workflow run on tiny
builds is tests/test_workflow_builds.py."""

from __future__ import annotations

import os
import re

import pytest
import yaml
from workflow_run import REPO, declared_outputs, expected, jobs_by_rule, snakemake

SHIPPED = {
    "default": [],
    "smoke": ["config/smoke.yaml"],
    "paper": ["config/paper.yaml"],
}


def test_lint_is_clean():
    result = snakemake("--lint")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Congratulations" in result.stdout + result.stderr


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_dry_run_of_every_shipped_config(name):
    result = snakemake("results", "-n", configfiles=SHIPPED[name])
    assert result.returncode == 0, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert "Nothing to be done" in output or jobs_by_rule(output)["results"] == 1


@pytest.mark.parametrize(
    ("fixed", "named"),
    [
        ({"hiden": 3}, ["studies.rnn_hidden_ptb.fixed", "'hiden'", "allowed:", "hidden"]),
        ({"bptt": "long"}, ["studies.rnn_hidden_ptb.fixed.bptt", "'long'", "integer"]),
        ({"dropout": 1.5}, ["studies.rnn_hidden_ptb.fixed.dropout", "1.5", "maximum"]),
        ({"clip_mode": "global"}, ["studies.rnn_hidden_ptb.fixed.clip_mode", "'global'", "'norm'"]),
        ({"lr": float("nan")}, ["studies.rnn_hidden_ptb.fixed.lr: nan is not allowed; allowed: a finite number > 0"]),
    ],
)
def test_config_typo_fails_before_any_job_naming_the_key(tmp_path, fixed, named):
    config = tmp_path / "typo.yaml"
    config.write_text(yaml.safe_dump({"studies": {"rnn_hidden_ptb": {"fixed": fixed}}}))
    result = snakemake("results", "-n", configfiles=["config/smoke.yaml", str(config)])
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "ConfigError" in output
    for text in named:
        assert text in output
    assert "Job stats" not in output  # failed while parsing: no DAG, no job


@pytest.mark.parametrize(
    ("config", "env", "named"),
    [
        (
            {"results_dir": ""},
            {},
            "config.results_dir: '' is empty, which would put every output at /runs, /tables",
        ),
        ({"results_dir": "src"}, {}, "config.results_dir: 'src' is inside the checkout's src/"),
        # the cache variable is read by the workflow too (config.yaml leaves cache_dir null)
        ({}, {"RNNBENCH_CACHE": "Snakefile"}, "RNNBENCH_CACHE: 'Snakefile' is a file, not a folder"),
    ],
)
def test_an_unusable_folder_fails_before_any_job(tmp_path, config, env, named):
    extra = tmp_path / "folders.yaml"
    extra.write_text(yaml.safe_dump(config))
    result = snakemake("results", "-n", configfiles=["config/smoke.yaml", str(extra)], env=env)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and named in output and "Job stats" not in output, output


def test_a_configfile_with_a_yaml_merge_key_is_read(tmp_path):
    config = tmp_path / "merge.yaml"
    config.write_text(
        "studies:\n"
        "  rnn_hidden_ptb: {fixed: &small {embed_dim: 8}}\n"
        "  truncation_ptb: {fixed: {<<: *small, dropout: 0.1}}\n"
    )
    target = "results/smoke/studies/truncation_ptb/study.json"
    result = snakemake(target, "-n", configfiles=["config/smoke.yaml", str(config)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_nested_command_line_value_is_read_as_a_config_file_reads_it():
    """--config gives a value nested in a mapping as a string ('24', Snakemake's reading); the Snakefile reads it
    again as a config file's line would be read, so the setting takes and makes new runs."""
    from rnnbench.config.files import merge_config_files
    from rnnbench.config.settings import load_config

    files, study = [REPO / "config" / "config.yaml", REPO / "config" / "smoke.yaml"], "truncation_ptb"
    before = {cfg.run_id for _, cfg in load_config(merge_config_files(files)).study_runs(study)}
    wider = load_config(merge_config_files(files, {"run_overrides": {"hidden": 24}}))
    after = {cfg.run_id for _, cfg in wider.study_runs(study)}
    assert {cfg.hidden for _, cfg in wider.study_runs(study)} == {24} and before.isdisjoint(after)
    target = f"results/smoke/studies/{study}/study.json"
    dry = snakemake(target, "-n", "--config", 'run_overrides={"hidden": 24}', configfiles=["config/smoke.yaml"])
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert set(re.findall(r"run_id=([\w-]+)", dry.stdout)) == after


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (
            'run_overrides={"hidden": "wide"}',
            "config.run_overrides.hidden: 'wide' has the wrong type; expected integer",
        ),
        (
            'studies={"truncation_ptb": {"vary": {"bptt": [5, 0.5]}}}',
            "studies.truncation_ptb.vary.bptt[1]: 0.5 has the wrong type; expected integer",
        ),
    ],
)
def test_a_wrong_nested_command_line_value_fails_before_any_job_naming_the_key(given, named):
    result = snakemake("results", "-n", "--config", given, configfiles=["config/smoke.yaml"])
    output = result.stdout + result.stderr
    assert result.returncode != 0 and named in output and "Job stats" not in output, output


def test_a_study_defined_in_two_configfiles_fails_before_any_job_naming_both(tmp_path):
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("studies:\n  s: {family: rnn, corpus: ptb, vary: {hidden: [16]}}\n")
    second.write_text("studies:\n  s: {family: ff, corpus: ptb, vary: {context: [2]}}\n")
    result = snakemake("results", "-n", configfiles=["config/smoke.yaml", str(first), str(second)])
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Job stats" not in output
    named = [os.path.relpath(path, REPO) for path in (second, first)]  # as the workflow lists its config files
    assert f"studies.s.family: {named[0]} gives 'ff' for the study {named[1]} defines with family 'rnn'" in output


@pytest.mark.parametrize(
    ("slots", "named"),
    [
        (
            "0",
            "--resources training_slots=0: below 1, Snakemake would scale each training job's need down to it and "
            "start every run at once; allowed: an integer >= 1",
        ),
        ("-1", "Resource 'training_slots' was given value '-1', which is not a positive integer"),  # Snakemake's own
    ],
)
def test_training_slots_below_1_fail_before_any_job(slots, named):
    result = snakemake("results", "-n", "--resources", f"training_slots={slots}", configfiles=["config/smoke.yaml"])
    output = result.stdout + result.stderr
    assert result.returncode != 0 and named in output and "Job stats" not in output, output


@pytest.mark.parametrize(
    ("target", "named"),
    [
        ("corpora/ptb-0badc0de.json", "corpus key 'ptb-0badc0de' is not in this config"),
        ("runs/rnn-ptb-0123456789/metrics.json", "run id 'rnn-ptb-0123456789' is not in this config"),
        ("studies/no_such_study/summary.csv", "study 'no_such_study' is not in this config"),
        ("studies/no_such_study/figure.png", "study 'no_such_study' is not in this config"),
    ],
)
def test_a_target_the_config_does_not_have_fails_in_one_line(target, named):
    result = snakemake(f"results/smoke/{target}", "-n", configfiles=["config/smoke.yaml"])
    output = result.stdout + result.stderr
    assert result.returncode != 0
    line = next(line for line in output.splitlines() if named in line)
    assert "config files: config/config.yaml, config/smoke.yaml" in line and "known: " in line
    assert "KeyError" not in output


def test_the_check_covers_every_output_the_workflow_declares():
    dry = snakemake("results", "-n", "--forceall", configfiles=["config/smoke.yaml"])
    assert dry.returncode == 0, dry.stdout + dry.stderr
    listed = expected([REPO / "config" / "smoke.yaml"])
    assert len(listed) == len(set(listed))
    assert set(listed) == declared_outputs(dry.stdout)  # runs, corpora and benchmarks included
