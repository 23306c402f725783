from rnnbench import jobs
from rnnbench.paths import COMPARISON_TABLES

jobs.log_to(snakemake.log[0])
jobs.comparison_tables(
    snakemake.params.results,
    dict(snakemake.params.runs),
    list(snakemake.input.corpora),
    list(snakemake.input.benchmarks),
    {name: snakemake.output[name] for name in COMPARISON_TABLES},
    scale=snakemake.params.scale,
    crossover_corpus=snakemake.params.crossover,
    reference_dir=snakemake.params.reference,
    repository=snakemake.params.repository,
    provenance_files={name: snakemake.output[f"provenance_{name}"] for name in COMPARISON_TABLES},
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
