from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.prepare_corpus(
    snakemake.params.corpus,
    snakemake.params.options,
    snakemake.output[0],
    data_dir=snakemake.params.data_dir,
    cache_dir=snakemake.params.cache_dir,
)
