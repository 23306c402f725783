from rnnbench import jobs
from rnnbench.config.locations import job_folders

jobs.log_to(snakemake.log[0])
jobs.prepare_corpus(
    snakemake.params.corpus,
    snakemake.params.options,
    snakemake.output[0],
    **job_folders(snakemake.config),
)
