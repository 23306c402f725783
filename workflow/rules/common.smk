# Helpers only: names derived from the validated config (CFG); no rules here.
import glob
import os

from rnnbench import paths
from rnnbench.config.settings import check_training_slots
from rnnbench.findings.evidence import Roles
from rnnbench.results.reference import reference_files
from rnnbench.results.summary import study_record
from rnnbench.worked import TABLES

RESULTS_DIR = CFG.results_dir
RUNS = CFG.all_runs()  # run_id -> RunConfig, shared runs appear once
CORPORA = {cfg.corpus_key: cfg for cfg in RUNS.values()}  # corpus_key -> a run that reads it
WORKED_TABLES = list(TABLES) if CFG.tables["worked"] else []
RESULTS = paths.expected_outputs(CFG, WORKED_TABLES)
FINDINGS_ROLES = Roles.from_config(CFG)  # role -> the studies and analyses that carry it (rnnbench.findings)
REPORT = paths.report_book(RESULTS_DIR)  # the book of these results, under <results_dir>/report/
# At most one training run per core of this machine, whatever --cores says. Snakemake starts jobs until their
# threads fill --cores, so `--cores 8` on 2 cores would train eight one-thread runs at once, time-sliced, each
# evicting the others' working sets (output layer, gradients, Adam's moments) from the cache. Measured with four
# PTB runs (rnnbench train --model rnn --corpus ptb --train-tokens 100000 --eval-tokens 20000 --hidden 200
# --embed-dim 200 --max-epochs 1): all four at once on 2 cores, 34 s and 15.7-16.1 CPU-s each; two at a time,
# 28 s for the four and 12.3-13.5 CPU-s each. A slot is a resource, not more threads per job: the job's
# threads reach torch, and a changed job script would retrain every run. `--resources training_slots=N`
# overrides it; on a cluster every job has its own node share, so there is no limit there.
TRAINING_SLOTS = max(1, (os.cpu_count() or 1) // CFG.threads)
# A given number below 1 would not hold runs back: Snakemake scales each job's need down to what is given, so
# `training_slots=0` would start every training run at once. Refused here, at parse time.
GIVEN_SLOTS = workflow.global_resources.get("training_slots")  # a Resource (Snakemake 9), or None
check_training_slots(getattr(GIVEN_SLOTS, "value", GIVEN_SLOTS), TRAINING_SLOTS)
if workflow.local_exec and "training_slots" not in workflow.global_resources:
    workflow.register_resource("training_slots", TRAINING_SLOTS)
# CONFIG_FILES (the Snakefile): the config files in the order they were merged, for messages. Neither a job's
# provenance nor its data and cache folders are among its params (a changed param reruns a job, and neither says
# what it computes): the job reads them itself (rnnbench.provenance.job_fields, rnnbench.config.locations.job_folders).


wildcard_constraints:
    run_id=r"[a-z]+-[a-z]+-[0-9a-f]{10}",
    study=r"[a-z][a-z0-9_]*",
    corpus_key=r"[a-z]+-[0-9a-f]{8}",


class NotInConfig(ValueError):
    """A target names a run, corpus or study the config does not have (e.g. a typo, or another config)."""


def _known(kind, key, known):
    if key not in known:
        names = sorted(known)
        listed = ", ".join(names[:8]) + (f", ... ({len(names)} in all)" if len(names) > 8 else "") if names else "none"
        raise NotInConfig(
            f"{kind} {key!r} is not in this config (config files: {', '.join(CONFIG_FILES)}); known: {listed}"
        )
    return known[key]


def run_config(run_id):
    """The RunConfig of ``run_id``."""
    return _known("run id", run_id, RUNS)


def clip_reference_metrics(run_id):
    """The metrics.json of the run whose median norm sets ``run_id``'s clipping threshold; none for any other run."""
    reference = run_config(run_id).clip_reference()
    return [paths.run_metrics(RESULTS_DIR, reference.run_id)] if reference is not None else []


def corpus_run(corpus_key):
    """A run that reads the corpus ``corpus_key`` (its corpus name and options)."""
    return _known("corpus key", corpus_key, CORPORA)


def study_points(study):
    """(varied values + seed, run config) of each run of ``study``."""
    _known("study", study, CFG.studies)
    return CFG.study_runs(study)


def study_metric_files(wildcards):
    return [paths.run_metrics(RESULTS_DIR, cfg.run_id) for _, cfg in study_points(wildcards.study)]
