"""Config files: each read by one YAML loader that refuses duplicate keys, merged in the order given.

PyYAML keeps the last of two equal keys in a mapping without a word, so a study named twice would
silently lose its first definition; this loader names the key, the file and both lines instead. Every
config file the project reads goes through `read_yaml`, and every error is one line naming the file.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A configuration that does not match the schema; the message names the key and what is allowed."""


MERGE_TAG = "tag:yaml.org,2002:merge"


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in one mapping is an error, not a silent overwrite."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == MERGE_TAG:
                # `<<: *defaults` copies an anchored mapping in; the keys written beside it override its keys
                # (the YAML merge rule), so only two keys written in this mapping itself are a duplicate.
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise ConfigError(
                    f"{key_node.start_mark.name}:{line}: key {key!r} given twice in one mapping (lines {seen[key]} "
                    f"and {line}); only one can count, so neither is taken. Keep one of them."
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: str | Path, *, text: str | None = None) -> dict[str, Any]:
    """One YAML config file as a dict. Duplicate keys, syntax errors, an empty file or a top level that is
    not a mapping fail with one line naming the file (and the line)."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise ConfigError(f"{path}: cannot read the config file ({err})") from None
    loader = _UniqueKeyLoader(text)
    loader.name = str(path)
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ConfigError(f"{where}: YAML syntax error: {err.problem or err.context}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: YAML error: {err}") from None
    finally:
        loader.dispose()
    if data is None:
        raise ConfigError(f"{path}: the config file is empty; expected a mapping of settings (key: value lines)")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings (key: value lines), found a {type(data).__name__}")
    return data


def config_files_in_merge_order(default: str | Path, given: Sequence[str | Path]) -> list[str]:
    """The workflow's config files as Snakemake merges them, each over the ones before: its default file, then
    the ``--configfile`` files in command-line order; relative to the working directory, each listed once."""
    return list(dict.fromkeys(os.path.relpath(path) for path in (default, *given)))


def check_config_files(paths: Sequence[str | Path]) -> None:
    """Read each config file with `read_yaml`, for its errors only: a config that another loader merged (the
    workflow's, by Snakemake) is checked for what that loader lets through, duplicate keys above all."""
    for path in dict.fromkeys(Path(p) for p in paths):
        read_yaml(path)


def merge_config_files(paths: Sequence[str | Path], overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Later files over earlier ones, dictionaries merged key by key (Snakemake's ``--configfile`` rule),
    then ``overrides`` (Snakemake's ``--config KEY=VALUE``). Each file is read by `read_yaml`."""
    merged: dict[str, Any] = {}
    for path in paths:
        _deep_update(merged, read_yaml(path))
    _deep_update(merged, overrides or {})
    return merged


def _deep_update(target: dict[str, Any], source: Mapping[str, Any]) -> None:
    for key, value in source.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _deep_update(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
