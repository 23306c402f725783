from pathlib import Path

from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.dynamic_evaluation(
    str(Path(snakemake.input.model).parent),
    snakemake.output.record,
    dict(snakemake.params.settings),
    threads=snakemake.threads,
    data_dir=snakemake.params.data_dir,
    cache_dir=snakemake.params.cache_dir,
)
