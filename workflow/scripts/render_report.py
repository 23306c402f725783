from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.render_report(snakemake.params.book_dir)
