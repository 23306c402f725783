"""rnnbench: every result of the report, rebuilt from config/config.yaml.

snakemake --cores 8                                   all studies, tables, figures, then the report
snakemake results --cores 2 --configfile config/smoke.yaml     the same DAG, tiny (CI)
snakemake --profile workflow/profiles/slurm           the same DAG on a SLURM cluster
snakemake --report report.zip                         Snakemake's report: runtimes, DAG, every table and figure
"""

from snakemake.utils import min_version, update_config

min_version("9.0")

from rnnbench.config.files import check_config_files, config_files_in_merge_order, typed_command_line_values
from rnnbench.config.settings import load_config
from rnnbench.locks import clear_stale_locks
from rnnbench.provenance import share_config_files

# Snakemake merges config/config.yaml, then each --configfile in command-line order, then --config KEY=VALUE,
# into `config`. Its YAML loader keeps the last of two equal keys without a word and names no line of a syntax
# error, so each file is read first by one that refuses both, naming the file and the lines, and that refuses a
# study given another family or corpus by a later file (merged key by key: one study of both files): a check
# only, the merged config is Snakemake's. CONFIG_FILES: the files in that order, for provenance, which every job
# inherits through its environment rather than as a rule param, so that it decides no rerun.
CONFIG_FILES = config_files_in_merge_order(
    f"{workflow.basedir}/config/config.yaml", workflow.config_settings.configfiles
)
check_config_files(CONFIG_FILES)
share_config_files(CONFIG_FILES)


configfile: f"{workflow.basedir}/config/config.yaml"


# Snakemake reads a value nested in --config (run_overrides={"hidden": 24}) with YAML's base loader, which keeps
# every scalar a string ('24'): each is read again as a config file's YAML reads it. Here, not in the command, so
# that a cluster job, which parses this file again with the same --config, reads the same config.
update_config(config, typed_command_line_values(workflow.config_settings.config))

# Validated against workflow/schemas/config.schema.yaml here, at parse time: a typo fails before any job.
CFG = load_config(config, checkout=workflow.basedir)

# A lock left behind by a killed run is removed, a live run's is kept: after kill -9 the same command resumes.
if workflow.is_main_process:
    clear_stale_locks()


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"  # names derived from the config; helpers only
include: "workflow/rules/data.smk"  # prepared corpora
include: "workflow/rules/train.smk"  # one job per run
include: "workflow/rules/tables.smk"  # worked examples, corpus statistics, benchmarks
include: "workflow/rules/studies.smk"  # each study's summary, record and figure
include: "workflow/rules/analyses.smk"  # each analysis's curves, rates, record and figure
include: "workflow/rules/comparison.smk"  # our runs beside the published rows; perplexity against parameters
include: "workflow/rules/dynamic.smk"  # the comparison's rnn runs under dynamic evaluation
include: "workflow/rules/activation.smk"  # the activation studies side by side: a table and its figure
include: "workflow/rules/report.smk"  # the Quarto book


rule all:
    default_target: True
    input:
        RESULTS,
        REPORT,


rule results:
    input:
        RESULTS,
