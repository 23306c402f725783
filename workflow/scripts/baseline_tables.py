from rnnbench import jobs
from rnnbench.config.locations import job_folders
from rnnbench.paths import BASELINE_TABLES
from rnnbench.provenance import job_fields

jobs.log_to(snakemake.log[0])
jobs.baseline_tables(
    snakemake.params.corpora,
    list(snakemake.input.stats),
    {name: snakemake.output[name] for name in BASELINE_TABLES},
    order=snakemake.params.order,
    **job_folders(snakemake.config),
    provenance_files={name: snakemake.output[f"provenance_{name}"] for name in BASELINE_TABLES},
    provenance=job_fields(snakemake.config, snakemake.rule, snakemake.scriptdir),
)
