"""rnnbench: every result of the report, rebuilt from config/config.yaml.

    snakemake --cores 8                                   all studies, tables, figures, then the report
    snakemake results --cores 2 --configfile config/smoke.yaml     the same DAG, tiny (CI)
    snakemake --profile workflow/profiles/slurm           the same DAG on a SLURM cluster
    snakemake --report report.zip                         Snakemake's report: runtimes, DAG, every table and figure
"""

from snakemake.utils import min_version

min_version("9.0")

from rnnbench.config import load_config


configfile: "config/config.yaml"


# Validated against workflow/schemas/config.schema.yaml here, at parse time: a typo fails before any job.
CFG = load_config(config)


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"  # names derived from the config; helpers only
include: "workflow/rules/data.smk"  # prepared corpora
include: "workflow/rules/train.smk"  # one job per run
include: "workflow/rules/tables.smk"  # worked examples, corpus statistics, benchmarks
include: "workflow/rules/studies.smk"  # each study's summary, record and figure
include: "workflow/rules/report.smk"  # the Quarto book


rule all:
    default_target: True
    input:
        RESULTS,
        REPORT,


rule results:
    input:
        RESULTS,
