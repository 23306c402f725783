"""rnnbench: every result of the report, rebuilt from config/config.yaml.

    snakemake --cores 8                                   all studies, tables, figures, then the report
    snakemake results --cores 2 --configfile config/smoke.yaml     the same DAG, tiny (CI)
    snakemake --profile workflow/profiles/slurm           the same DAG on a SLURM cluster
"""

from rnnbench.config import load_config
from rnnbench.locks import clear_stale_locks


configfile: "config/config.yaml"


# Validated against workflow/schemas/config.schema.yaml here, at parse time: a typo fails before any job.
CFG = load_config(config)

# A lock left behind by a killed run is removed, a live run's is kept: after kill -9 the same command resumes.
if workflow.is_main_process:
    clear_stale_locks()


include: "workflow/rules/common.smk"


rule all:
    default_target: True
    input:
        RESULTS,
        REPORT,


rule results:
    input:
        RESULTS,


include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/report.smk"
