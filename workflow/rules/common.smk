# Helpers only: names derived from the validated config (CFG); no rules here.
import glob
import os

from rnnbench import paths
from rnnbench.worked import TABLES

R = CFG.results_dir
RUNS = CFG.all_runs()  # run_id -> RunConfig, shared runs appear once
CORPORA = {cfg.corpus_key: cfg for cfg in RUNS.values()}  # corpus_key -> a run that reads it
WORKED_TABLES = list(TABLES) if CFG.tables["worked"] else []
RESULTS = paths.expected_outputs(CFG, WORKED_TABLES)
REPORT = paths.report_book(R)  # the book of these results, under <results_dir>/report/
DATA_DIR = CFG.data_dir  # None: the loader falls back to $RNNBENCH_DATA, then downloads
# Snakemake lists --configfile files first and the Snakefile's own last; record them in the order they
# were merged (each overriding the ones before it), relative to the working directory.
_CONFIG_FILES = [os.path.relpath(f) for f in workflow.configfiles]
CONFIG_FILES = _CONFIG_FILES[-1:] + _CONFIG_FILES[:-1]

wildcard_constraints:
    run_id=r"[a-z]+-[a-z]+-[0-9a-f]{10}",
    study=r"[a-z][a-z0-9_]*",
    corpus_key=r"[a-z]+-[0-9a-f]{8}",


def study_points(study):
    """(varied values + seed, run config) of each run of ``study``."""
    return CFG.study_runs(study)


def study_metric_files(wildcards):
    return [paths.run_metrics(R, cfg.run_id) for _, cfg in study_points(wildcards.study)]


def study_about(study):
    """What the report needs to know of a study beyond its table."""
    s = CFG.studies[study]
    return {
        "name": study, "description": s.description, "family": s.family, "corpus": s.corpus, "metric": s.metric,
        "vary": list(s.vary), "fixed": dict(s.fixed), "seeds": list(s.seeds),
        "run_ids": list(dict.fromkeys(cfg.run_id for _, cfg in study_points(study))),
    }


def provenance_for(rule):
    """Config files and command of a job's provenance record. The config itself reaches the job as
    `snakemake.config`, not as a param: a param would make every table rerun when any study changes."""
    files = " ".join(f"--configfile {f}" for f in CONFIG_FILES)
    return {"config_files": CONFIG_FILES, "command": f"snakemake {files} (rule {rule})"}
