from pathlib import Path

from rnnbench import jobs
from rnnbench.config.locations import job_folders

jobs.log_to(snakemake.log[0])
jobs.dynamic_evaluation(
    str(Path(snakemake.input.model).parent),
    snakemake.output.record,
    dict(snakemake.params.settings),
    threads=snakemake.threads,
    **job_folders(snakemake.config),
)
