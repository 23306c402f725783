from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.decay_analysis(
    snakemake.params.record,
    snakemake.params.points,
    dict(snakemake.output.items()),
    data_dir=snakemake.params.data_dir,
    cache_dir=snakemake.params.cache_dir,
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
