"""`rnnbench` on the command line: the same code paths the workflow runs, one command each.

    rnnbench data ptb                      corpus statistics (the second call is served from the cache)
    rnnbench train --model rnn --corpus ptb --hidden 200 --bptt 35 --clip 0.25
    rnnbench worked --unroll --params      the chapter's worked examples as terminal tables
    rnnbench reference collect results/paper config/config.yaml config/paper.yaml config/paper-rows.yaml
                                           keep the finished paper-scale runs' small outputs in reference/
    rnnbench reference check               which reference runs are stale (exit 1 if any)
    rnnbench evaluate --run results/runs/<run_id> --dynamic     its test split, learning as it reads

`train`'s flags are generated from the configuration schema, so they, their choices and their defaults
can never drift from what config/config.yaml accepts.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from rnnbench import paths
from rnnbench.config.files import ConfigError
from rnnbench.config.runs import RunConfig
from rnnbench.config.schema import run_settings_schema, schema, validate

WORKED_SECTIONS = ("unroll", "params", "vanish", "clip")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        return args.handler(args)
    except ConfigError as error:
        parser.exit(2, f"rnnbench: configuration error: {error}\n")
    except Exception as error:  # a named, one-line error for the user; the traceback is for --debug
        if getattr(args, "debug", False):
            raise
        from rnnbench.data.corpora import CorpusError

        if isinstance(error, (CorpusError, ValueError, FileNotFoundError)):
            parser.exit(1, f"rnnbench: error: {error}\n")
        raise


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rnnbench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--debug", action="store_true", help="show full tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)
    dynamic_defaults = _dynamic_defaults()

    data = commands.add_parser("data", help="prepare a corpus and print its statistics")
    data.add_argument("corpus", choices=run_settings_schema()["properties"]["corpus"]["enum"])
    _add_corpus_location(data)
    data.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="corpus option (repeatable)")
    data.set_defaults(handler=_data)

    train = commands.add_parser("train", help="train one run (same code path as the workflow)")
    _add_run_settings(train)
    _add_corpus_location(train)
    train.add_argument("--out", help="run directory (default: results/runs/<run_id>)")
    train.add_argument("--threads", type=int, default=1, help="torch intra-op threads (the config's `threads`)")
    train.set_defaults(handler=_train)

    evaluate = commands.add_parser(
        "evaluate", help="score a trained run's split at batch 1, statically or under dynamic evaluation"
    )
    evaluate.add_argument("--run", type=Path, required=True, help="run directory (config.json, metrics.json, model.pt)")
    evaluate.add_argument(
        "--dynamic", action="store_true", help="also score it learning as it reads: one SGD step per segment"
    )
    evaluate.add_argument(
        "--lr",
        type=float,
        nargs="+",
        help="dynamic evaluation's SGD rate; several: the best on the validation split is applied "
        f"(default: {' '.join(map(str, dynamic_defaults['rates']))})",
    )
    evaluate.add_argument(
        "--valid-tokens",
        type=int,
        default=dynamic_defaults["valid_tokens"],
        help="validation tokens the rates are scored on, within the run's eval_tokens (default: %(default)s)",
    )
    evaluate.add_argument(
        "--bptt", type=int, help="segment length (default: the run's bptt, 35 for a run of sentences)"
    )
    evaluate.add_argument("--split", choices=["valid", "test"], default="test", help="the split scored (default: test)")
    evaluate.add_argument(
        "--out", type=Path, help="also write the record (rnnbench.results.dynamic_record) as JSON here"
    )
    evaluate.add_argument("--threads", type=int, default=1, help="torch intra-op threads (the config's `threads`)")
    _add_corpus_location(evaluate)
    evaluate.set_defaults(handler=_evaluate)

    outputs = commands.add_parser("outputs", help="list (and check) every table and figure a config produces")
    outputs.add_argument("configfiles", nargs="+", type=Path, help="config files, merged in order as Snakemake does")
    outputs.add_argument("--check", action="store_true", help="exit 1 unless every output exists and is non-empty")
    outputs.set_defaults(handler=_outputs)

    worked = commands.add_parser("worked", help="print the chapter's worked examples")
    for section in WORKED_SECTIONS:
        worked.add_argument(f"--{section}", action="store_true", help=f"print the {section} tables")
    worked.set_defaults(handler=_worked)

    reference = commands.add_parser("reference", help="the paper-scale reference results kept in reference/")
    actions = reference.add_subparsers(dest="action", required=True)
    collect = actions.add_parser("collect", help="copy finished runs' small outputs into reference/")
    collect.add_argument("results", type=Path, help="the results folder the runs were trained into")
    collect.add_argument("configfiles", nargs="+", help="the config files that define them, merged in order")
    collect.add_argument("--reference-dir", type=Path, default=Path("reference"))
    collect.set_defaults(handler=_reference_collect)
    check = actions.add_parser("check", help="list stale reference runs; exit 1 if any")
    check.add_argument("--reference-dir", type=Path, default=Path("reference"))
    check.set_defaults(handler=_reference_check)
    return parser


def _add_corpus_location(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", help="local folder with ptb/ and brown/ (default: $RNNBENCH_DATA, else download)")
    parser.add_argument("--cache-dir", help="prepared-corpus cache (default: $RNNBENCH_CACHE, else data/cache)")


def _add_run_settings(parser: argparse.ArgumentParser) -> None:
    """One flag per run setting of the schema, with its type, choices and default."""
    for key, prop in run_settings_schema()["properties"].items():
        flag = "--" + key.replace("_", "-")
        help_text = prop.get("description", "")
        if key == "family":
            parser.add_argument("--model", "--family", dest="family", choices=prop["enum"], help=help_text)
        elif key == "corpus_options":
            parser.add_argument(
                "--corpus-option",
                dest="corpus_options",
                action="append",
                default=None,
                metavar="KEY=VALUE",
                help=help_text,
            )
        elif "enum" in prop:
            parser.add_argument(flag, dest=key, choices=prop["enum"], help=help_text)
        else:
            parser.add_argument(
                flag, dest=key, type=_parser_for(prop), help=f"{help_text} (default: {prop.get('default')})"
            )


def _flag(key: str) -> str:
    return (
        "--model" if key == "family" else "--corpus-option" if key == "corpus_options" else "--" + key.replace("_", "-")
    )


def _parser_for(prop: dict[str, Any]):
    """A converter from flag text to the schema's type; bad text is an argparse error naming what is allowed."""
    kinds = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]

    def convert(text: str) -> Any:
        if "null" in kinds and text.lower() in ("none", "null"):
            return None
        try:
            if "array" in kinds:
                return [int(v) for v in text.split(",")]
            if "boolean" in kinds:
                return {"true": True, "false": False, "1": True, "0": False}[text.lower()]
            if "integer" in kinds:
                return int(text)
            if "number" in kinds:
                return float(text)
        except (KeyError, ValueError):
            allowed = {
                "array": "comma-separated integers, e.g. 1000,5000",
                "boolean": "true or false",
                "integer": "an integer",
                "number": "a number",
            }
            expected = " or ".join(allowed[k] for k in kinds if k in allowed) + (" or null" if "null" in kinds else "")
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected {expected}") from None
        return text

    return convert


def _key_values(pairs: Sequence[str] | None) -> dict[str, Any]:
    options = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep:
            raise ConfigError(f"expected KEY=VALUE, got {pair!r}")
        options[key] = yaml.safe_load(value)  # "3" -> 3, "0.5" -> 0.5, "true" -> True, text stays text
    return options


def _data(args: argparse.Namespace) -> int:
    from rnnbench.data.corpora import load_corpus

    start = time.perf_counter()
    corpus = load_corpus(args.corpus, data_dir=args.data_dir, cache_dir=args.cache_dir, **_key_values(args.option))
    seconds = time.perf_counter() - start
    rows = {
        **corpus.statistics(),
        "served from cache": "yes" if corpus.from_cache else "no (prepared and cached now)",
        "load time": f"{seconds:.3f} s",
    }
    width = max(map(len, rows))
    for key, value in rows.items():
        shown = f"{value:,}" if isinstance(value, int) else f"{value:.4f}" if isinstance(value, float) else value
        print(f"{key:<{width}}  {shown}")
    return 0


def _train(args: argparse.Namespace) -> int:
    from rnnbench.training.loop import train_run

    settings = {k: v for k, v in vars(args).items() if k in run_settings_schema()["properties"] and v is not None}
    if "corpus_options" in settings:
        settings["corpus_options"] = _key_values(settings["corpus_options"])
    sources = {key: _flag(key) for key in run_settings_schema()["properties"]}
    _check_threads(args.threads)
    cfg = RunConfig.from_settings({**settings, "threads": args.threads}, where="train", sources=sources)
    out = Path(_run_folder(args.out) if args.out is not None else Path("results") / "runs" / cfg.run_id)
    reference = cfg.clip_reference()  # a threshold relative to a measured norm: its run, trained beside this one
    metrics = train_run(
        cfg,
        out,
        data_dir=args.data_dir,
        cache_dir=args.cache_dir,
        clip_reference=paths.beside_run_metrics(out, reference.run_id) if reference is not None else None,
    )
    print(json.dumps(metrics, indent=2))
    return 0


def _check_threads(threads: int) -> None:
    """--threads is the config's top-level `threads`, checked against the same schema node."""
    validate(threads, schema()["properties"]["threads"], "--threads")


def _run_folder(given: str) -> str:
    """--out checked as the workflow checks its results folder (rnnbench.config.settings.output_folder): not empty, not
    in the checkout's source tree; whether it can be written, and what it holds, `train_run` asks."""
    from rnnbench.config.locations import package_checkout
    from rnnbench.config.settings import output_folder

    example, if_empty = (
        "e.g. results/runs/<name>; default: results/runs/<run_id>",
        "the run's files in the working directory",
    )
    return output_folder(given, "--out", package_checkout(), example, if_empty, writable=False)


def _dynamic_defaults() -> dict[str, Any]:
    """The config schema's comparison.dynamic_evaluation defaults: the command and the workflow share them."""
    node = schema()["properties"]["comparison"]["properties"]["dynamic_evaluation"]["properties"]
    return {key: prop["default"] for key, prop in node.items()}


def _evaluate(args: argparse.Namespace) -> int:
    import torch

    from rnnbench.io import write_json
    from rnnbench.training.dynamic import evaluate_run

    if args.lr is not None and not args.dynamic:
        raise ValueError("--lr is dynamic evaluation's rate: give --dynamic with it")
    rates = (args.lr or _dynamic_defaults()["rates"]) if args.dynamic else []
    _check_threads(args.threads)
    torch.set_num_threads(args.threads)
    record = evaluate_run(
        args.run,
        rates=rates,
        bptt=args.bptt,
        valid_tokens=args.valid_tokens,
        split=args.split,
        data_dir=args.data_dir,
        cache_dir=args.cache_dir,
    )
    if args.out:
        write_json(args.out, record)
    print(json.dumps(record, indent=2))
    return 0


def _outputs(args: argparse.Namespace) -> int:
    from rnnbench.config.files import merge_config_files
    from rnnbench.config.settings import load_config
    from rnnbench.paths import expected_outputs
    from rnnbench.worked import TABLES

    config = load_config(merge_config_files(args.configfiles))
    missing = 0
    for path in expected_outputs(config, list(TABLES)):
        size = Path(path).stat().st_size if Path(path).exists() else 0
        missing += size == 0
        print(f"{'ok' if size else 'MISSING' if not Path(path).exists() else 'EMPTY':8} {path}" if args.check else path)
    if args.check and missing:
        print(f"rnnbench: {missing} expected output(s) missing or empty", file=sys.stderr)
        return 1
    return 0


def _worked(args: argparse.Namespace) -> int:
    from rnnbench.worked import print_tables

    sections = [s for s in WORKED_SECTIONS if getattr(args, s)] or list(WORKED_SECTIONS)
    print_tables(sections, file=sys.stdout)
    return 0


def _reference_collect(args: argparse.Namespace) -> int:
    from rnnbench.provenance import git_commit, package_versions
    from rnnbench.results import reference

    repository = Path.cwd()
    collected = reference.collect(
        args.results,
        args.configfiles,
        args.reference_dir,
        repository=repository,
        command=" ".join(["rnnbench", *sys.argv[1:]]),
        commit=git_commit(repository, ignore=[str(args.reference_dir)]),  # the code's commit, not the folder's
        packages=package_versions(),
    )
    print(f"collected {len(collected)} run(s) into {args.reference_dir}: {', '.join(collected) or 'none'}")
    return 0


def _reference_check(args: argparse.Namespace) -> int:
    from rnnbench.results import reference

    runs = reference.read_reference(args.reference_dir)
    stale = reference.stale_runs(runs, Path.cwd())
    for run in runs:
        print(f"{'STALE' if run.run_id in stale else 'ok':6} {run.run_id} ({run.study}) {stale.get(run.run_id, '')}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
