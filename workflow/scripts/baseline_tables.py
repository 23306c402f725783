from rnnbench import jobs
from rnnbench.paths import BASELINE_TABLES

jobs.log_to(snakemake.log[0])
jobs.baseline_tables(
    snakemake.params.corpora,
    list(snakemake.input.stats),
    {name: snakemake.output[name] for name in BASELINE_TABLES},
    order=snakemake.params.order,
    data_dir=snakemake.params.data_dir,
    cache_dir=snakemake.params.cache_dir,
    provenance_files={name: snakemake.output[f"provenance_{name}"] for name in BASELINE_TABLES},
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
