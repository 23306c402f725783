"""rnnbench: every result of the report, rebuilt from config/config.yaml.

    snakemake --cores 8                                   all studies, tables, figures, then the report
    snakemake results --cores 2 --configfile config/smoke.yaml     the same DAG, tiny (CI)
    snakemake --profile workflow/profiles/slurm           the same DAG on a SLURM cluster
"""

from rnnbench.config import config_files_in_merge_order, load_config, merge_config_files

# The config files in the order they are merged, each over the ones before: config/config.yaml, then each
# --configfile in command-line order (Snakemake's own list puts a `configfile:` last), then --config KEY=VALUE.
# Read here with the loader that refuses duplicate keys and names the file and line of any error.
CONFIG_FILES = config_files_in_merge_order(f"{workflow.basedir}/config/config.yaml", workflow.config_settings.configfiles)
config.clear()
config.update(merge_config_files(CONFIG_FILES, workflow.config_settings.config))
# Validated against workflow/schemas/config.schema.yaml here, at parse time: a typo fails before any job.
CFG = load_config(config)


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
