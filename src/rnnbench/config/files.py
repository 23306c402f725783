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


# Caps that keep a config check cheap: a config past them is refused before it is validated or expanded, so a
# mistake (or a file that is not a config at all) fails in well under a second instead of hanging the dry run.
# The shipped configs are far below each: config/config.yaml is 31 kB and about 1,200 YAML nodes.
#
# A config file's size: thirty times config/config.yaml; a generated config beyond it is better split into files.
MAX_CONFIG_BYTES = 1_000_000
# YAML nodes a file expands to, every alias (*name) counted as the copy it stands for: an anchor referred to
# in a chain of aliases doubles at each link (nine links of ten aliases make a billion nodes), and each copy is
# validated and expanded. Eighty times config/config.yaml's node count; counting it takes a few milliseconds.
MAX_YAML_NODES = 100_000
# Characters in one string (a key or a value): a description of a few paragraphs fits; a folder path is at
# most 4,096 on Linux (PATH_MAX).
MAX_STRING_CHARS = 4_096
# Characters of a value quoted in an error message: enough to recognise it, never a screenful.
QUOTED_CHARS = 60


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


def quoted(value: Any, limit: int = QUOTED_CHARS) -> str:
    """``repr(value)``, or its first ``limit`` characters and how long it is: an error message names a value
    without repeating a long one (a string, or a structure an alias expanded)."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value):,} characters)"
    if isinstance(value, (dict, list, tuple)) and len(value) > 20:
        return f"a {type(value).__name__} of {len(value):,} items"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def read_yaml(path: str | Path, *, text: str | None = None) -> dict[str, Any]:
    """One YAML config file as a dict. Duplicate keys, syntax errors, an empty file, a top level that is not a
    mapping and a file past the caps above fail with one line naming the file (and the line)."""
    path = Path(path)
    if text is None:
        try:
            size = path.stat().st_size
            if size > MAX_CONFIG_BYTES:
                raise ConfigError(
                    f"{path}: {size:,} bytes is too large for a config file; allowed: at most {MAX_CONFIG_BYTES:,} bytes"
                )
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise ConfigError(f"{path}: cannot read the config file ({err})") from None
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{path}: {len(text):,} characters is too large for a config file; allowed: at most {MAX_CONFIG_BYTES:,}"
        )
    loader = _UniqueKeyLoader(text)
    loader.name = str(path)
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_expanded_size(node, path)
        data = loader.construct_document(node) if node is not None else None
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


def _check_expanded_size(root: yaml.Node, path: Path) -> None:
    """Count the nodes of a composed document as if each alias were copied out (an anchored node is counted once
    per reference, memoised, so the count costs one visit per distinct node) and refuse past MAX_YAML_NODES; refuse
    a string past MAX_STRING_CHARS and an alias inside the node it names (a structure that contains itself)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise ConfigError(f"{_where(path, node)}: an alias refers to a node that contains it; allowed: no cycles")
        if isinstance(node, yaml.ScalarNode):
            if len(node.value) > MAX_STRING_CHARS:
                raise ConfigError(
                    f"{_where(path, node)}: {quoted(node.value)} is too long; allowed: at most "
                    f"{MAX_STRING_CHARS:,} characters in a key or value"
                )
            sizes[key] = 1
            return 1
        open_nodes.add(key)
        children = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
        total = 1
        for child in children:
            total += size(child)
            if total > MAX_YAML_NODES:
                raise ConfigError(
                    f"{_where(path, node)}: expands to more than {MAX_YAML_NODES:,} YAML nodes (aliases counted as "
                    f"the copies they stand for); allowed: at most {MAX_YAML_NODES:,} in a config file"
                )
        open_nodes.discard(key)
        sizes[key] = total
        return total

    size(root)


def _where(path: Path, node: yaml.Node) -> str:
    return f"{path}:{node.start_mark.line + 1}"


def config_files_in_merge_order(default: str | Path, given: Sequence[str | Path]) -> list[str]:
    """The workflow's config files as Snakemake merges them, each over the ones before: its default file, then
    the ``--configfile`` files in command-line order; relative to the working directory, each listed once."""
    return list(dict.fromkeys(os.path.relpath(path) for path in (default, *given)))


def check_config_files(paths: Sequence[str | Path]) -> None:
    """Read each config file with `read_yaml`, for its errors only: a config that another loader merged (the
    workflow's, by Snakemake) is checked for what that loader lets through: duplicate keys above all, and a
    study given another family or corpus by a later file (`check_study_sources`)."""
    files = list(dict.fromkeys(Path(p) for p in paths))
    read = [(path, read_yaml(path)) for path in files]
    check_study_sources(read)
    check_empty_mappings(read)


def check_study_sources(files: Sequence[tuple[str | Path, Mapping[str, Any]]]) -> None:
    """A study's family and corpus are given by the first config file that gives them; ``files`` in merge order.

    The files are merged key by key (Snakemake's rule, `merge_config_files`), so a study written in two files
    becomes one study of both: ``{family: rnn, vary: {hidden: [16]}}`` then ``{family: ff, vary: {context: [2]}}``
    trains ``{family: ff, vary: {hidden: [16], context: [2]}}``, which neither file defines. Hence the rule: a
    later file may refine a study (its fixed and varied settings, seeds, description: what config/smoke.yaml and
    config/paper.yaml do to config/config.yaml's studies), merged key by key, and may restate its family and
    corpus; one that gives another family or corpus is defining a second study under a name already taken, and
    is refused, naming both files.
    """
    given: dict[tuple[str, str], tuple[Any, str | Path]] = {}  # (study, family or corpus) -> (value, file)
    for path, data in files:
        studies = data.get("studies")
        for name, body in studies.items() if isinstance(studies, Mapping) else ():
            for key in ("family", "corpus"):
                if not isinstance(body, Mapping) or key not in body:
                    continue
                value, where = given.setdefault((name, key), (body[key], path))
                if body[key] != value:
                    raise ConfigError(
                        f"studies.{name}.{key}: {path} gives {quoted(body[key])} for the study {where} defines with "
                        f"{key} {quoted(value)}; the files merge key by key, so one study would mix the settings of "
                        f"both. Allowed: a later file refines a study and keeps its family and corpus; give the new "
                        f"study another name"
                    )


def check_empty_mappings(files: Sequence[tuple[str | Path, Mapping[str, Any]]]) -> None:
    """No file writes an empty mapping over a value of an earlier file that is not one; ``files`` in merge order.

    Snakemake's merge replaces a value that is not a mapping only while filling in a mapping's keys, so an empty
    one changes nothing: ``comparison.dynamic_evaluation: {}`` (every setting at its default) over an earlier
    ``null`` stays null, and the later file's intent is lost without a word. Refused, naming both files."""
    merged: dict[str, Any] = {}
    for index, (path, data) in enumerate(files):
        for keys in _empty_mapping_keys(data):
            value = _at(merged, keys)
            if value is not _ABSENT and not isinstance(value, Mapping):
                earlier = next(earlier for earlier, d in reversed(files[:index]) if _at(d, keys) is not _ABSENT)
                where = ".".join(map(str, keys))
                raise ConfigError(
                    f"{where}: {path} writes {{}} over {'null' if value is None else quoted(value)} from {earlier}, which Snakemake keeps (an "
                    f"empty mapping replaces nothing). Write the settings out, or leave {where} out of {earlier}"
                )
        _deep_update(merged, data)


_ABSENT = object()


def _empty_mapping_keys(data: Mapping[str, Any], keys: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = []
    for key, value in data.items():
        if isinstance(value, Mapping):
            found.extend(_empty_mapping_keys(value, (*keys, key)) if value else [(*keys, key)])
    return found


def _at(data: Any, keys: tuple[Any, ...]) -> Any:
    for key in keys:
        if not isinstance(data, Mapping) or key not in data:
            return _ABSENT
        data = data[key]
    return data


def merge_config_files(paths: Sequence[str | Path], overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Later files over earlier ones, dictionaries merged key by key (Snakemake's ``--configfile`` rule),
    then ``overrides`` (Snakemake's ``--config KEY=VALUE``). Each file is read by `read_yaml`, their studies
    checked by `check_study_sources`, an empty mapping over a value by `check_empty_mappings` (where Snakemake's
    merge and this one part)."""
    files = [(path, read_yaml(path)) for path in paths]
    check_study_sources(files)
    check_empty_mappings(files)
    merged: dict[str, Any] = {}
    for _, data in files:
        _deep_update(merged, data)
    _deep_update(merged, overrides or {})
    return merged


def typed_command_line_values(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Snakemake's ``--config KEY=VALUE`` overrides, each value inside a mapping or list typed as a config file's
    YAML reads it.

    Snakemake types a top-level value itself (an integer, a float, True or False, else YAML), but reads a nested
    one (``run_overrides={"hidden": 24}``) with YAML's base loader, which keeps every scalar a string: '24', not
    24. Each such string is read again by the rules `read_yaml` reads an unquoted value by ('24' -> 24, '0.5' ->
    0.5, 'true' -> True, 'null' -> None, '.inf' -> inf, 'tanh' -> 'tanh'); an empty string stays one. Keys and
    top-level values are kept as Snakemake gives them. The base loader has already dropped the quotes, so a
    quoted '24' is read as 24 too."""
    return {key: _typed(value) if isinstance(value, (Mapping, list)) else value for key, value in overrides.items()}


def _typed(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    if isinstance(value, str) and value:
        resolver = yaml.SafeLoader("")  # the implicit tags of read_yaml's loader (_UniqueKeyLoader's base)
        try:
            tag = resolver.resolve(yaml.ScalarNode, value, (True, False))
            return resolver.construct_object(yaml.ScalarNode(tag, value))
        finally:
            resolver.dispose()
    return value


def _deep_update(target: dict[str, Any], source: Mapping[str, Any]) -> None:
    for key, value in source.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _deep_update(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
