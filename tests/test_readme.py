"""The README's two commands are the ones CI runs, so the documented path is the tested path."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
CI = (REPO / ".ci" / "run").read_text(encoding="utf-8")

MAIN_COMMAND = "pip install -e . && snakemake --cores 8"
TEST_COMMAND = 'pip install -e ".[dev]" && pytest'


def test_readme_shows_the_main_and_the_test_command():
    assert MAIN_COMMAND in README
    assert TEST_COMMAND in README


def test_ci_runs_the_readme_test_command_and_the_smoke_pipeline():
    assert TEST_COMMAND in CI
    assert "snakemake results --cores 2 --configfile config/smoke.yaml" in CI
    assert "rnnbench outputs config/config.yaml config/smoke.yaml --check" in CI
