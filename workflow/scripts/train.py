from pathlib import Path

from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.train(
    snakemake.params.run,
    str(Path(snakemake.output.metrics).parent),
    threads=snakemake.threads,
    data_dir=snakemake.params.data_dir,
    cache_dir=snakemake.params.cache_dir,
)
