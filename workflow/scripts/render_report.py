from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.render_report(snakemake.params.book_dir, results_dir=snakemake.params.results_dir, log=snakemake.log[0])
