from rnnbench import jobs
from rnnbench.paths import COMPARISON_TABLES
from rnnbench.provenance import checkout_of, job_fields

jobs.log_to(snakemake.log[0])
jobs.comparison_tables(
    snakemake.params.results,
    dict(snakemake.params.runs),
    list(snakemake.input.corpora),
    list(snakemake.input.benchmarks),
    {name: snakemake.output[name] for name in COMPARISON_TABLES},
    baselines_file=snakemake.input.baselines,
    scale=snakemake.params.scale,
    crossover_corpus=snakemake.params.crossover,
    reference_dir=snakemake.params.reference,
    departs_from=dict(snakemake.params.departs_from),
    repository=checkout_of(snakemake.scriptdir),  # whose config files the reference runs are checked against
    provenance_files={name: snakemake.output[f"provenance_{name}"] for name in COMPARISON_TABLES},
    provenance=job_fields(snakemake.config, snakemake.rule, snakemake.scriptdir),
)
