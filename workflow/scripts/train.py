from pathlib import Path

from rnnbench import jobs
from rnnbench.config.locations import job_folders

jobs.log_to(snakemake.log[0])
jobs.train(
    snakemake.params.run,
    str(Path(snakemake.output.metrics).parent),
    threads=snakemake.threads,
    **job_folders(snakemake.config),
)
