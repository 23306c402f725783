from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.benchmark_table(
    snakemake.params.run_ids,
    list(snakemake.input.benchmarks),
    list(snakemake.input.metrics),
    snakemake.output.table,
    provenance_file=snakemake.output.provenance,
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
