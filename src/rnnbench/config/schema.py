"""The config schema, read and applied: the leaf every module that checks a setting imports, so that imports
run one way (rnnbench.config.settings resolves configs; the corpus generator checks its options here, not through it).

``schemas/config.schema.yaml`` (linked from ``workflow/schemas/``) is the only place a setting's type, range
and default are written down; this module reads it, validates against a node of it (a ConfigError naming the
key and what is allowed), and turns values into the Python types it names.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from rnnbench.config.files import ConfigError, quoted, read_yaml

SCHEMA_RESOURCE = "schemas/config.schema.yaml"

# A number setting is finite unless its schema says `allowInfinity: true` (clip: never clip; divergence_norm:
# never stop on the norm). JSON has no infinity, so config.json and study.json write it as this string, and a
# setting that allows infinity takes it as .inf (YAML), inf (command line) or this string (JSON, YAML).
ALLOW_INFINITY = "allowInfinity"
INFINITY = "inf"


@cache
def schema() -> dict[str, Any]:
    return read_yaml(
        SCHEMA_RESOURCE, text=resources.files("rnnbench").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    )


def run_settings_schema() -> dict[str, Any]:
    return schema()["$defs"]["run_settings"]


def check_settings(settings: Mapping[str, Any], where: str) -> None:
    """Check some run settings against the schema, each on its own (types, ranges, allowed values)."""
    as_json = {k: list(v) if isinstance(v, tuple) else v for k, v in settings.items()}
    validate(as_json, run_settings_schema(), where)


def checked_corpus_options(options: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Corpus options checked against the schema (types, ranges) and as the Python types it names."""
    node = run_settings_schema()["properties"]["corpus_options"]
    validate(dict(options), node, where)
    return as_schema_types(options, node["properties"])


def json_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Settings as JSON can hold them: an infinite one as INFINITY (finite values exactly as they are, so that
    config.json files written before stay the same); `RunConfig.from_settings` reads them back."""
    return {
        key: INFINITY if isinstance(value, float) and value == math.inf else value for key, value in settings.items()
    }


def run_defaults() -> dict[str, Any]:
    """Every run setting's default, straight from the schema."""
    return {key: prop["default"] for key, prop in run_settings_schema()["properties"].items() if "default" in prop}


def _kinds(prop: Mapping[str, Any]) -> list[str]:
    kind = prop.get("type", ())
    return [kind] if isinstance(kind, str) else list(kind)


def as_schema_types(values: Mapping[str, Any], properties: Mapping[str, Any]) -> dict[str, Any]:
    """Each value as the Python type its schema type names: JSON Schema accepts 200.0 where an integer is
    required, so 200.0 becomes 200 (sizes work as sizes, and ``hidden: 200.0`` gets the run id of ``hidden: 200``);
    a number becomes a float (``lr: 1`` is ``lr: 1.0``); an array of integers becomes a tuple of ints."""

    def convert(value: Any, prop: Mapping[str, Any]) -> Any:
        kinds = _kinds(prop)
        if isinstance(value, bool) or value is None:
            return value
        if "number" in kinds and value == INFINITY:  # validated: the setting allows infinity
            return math.inf
        if "integer" in kinds and isinstance(value, float):
            return int(value)
        if "number" in kinds and isinstance(value, (int, float)):
            return float(value)
        if "array" in kinds and isinstance(value, (list, tuple)):
            return tuple(convert(v, prop.get("items", {})) for v in value)
        return value

    return {k: convert(v, properties.get(k, {})) for k, v in values.items()}


def validate(instance: Any, node: Mapping[str, Any], where: str, named: Callable[[str], str] | None = None) -> None:
    """Validate against a schema node; the first error becomes a ConfigError naming the key
    (through ``named`` when the top-level keys of ``instance`` came from different places)."""
    resolver_root = {**node, "$defs": schema()["$defs"]}
    validator = _Validator(resolver_root)
    errors = sorted(
        validator.iter_errors(instance), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path)))
    )
    if not errors:
        return
    error = errors[0]
    keys = list(map(str, error.absolute_path))
    path = ".".join([named(keys[0]), *keys[1:]] if named and keys else [where, *keys])
    raise ConfigError(f"{path}: {_explain(error)}")


def _type_and_finite(validator, types, instance, node):
    """JSON Schema's `type`, and a number must be finite: NaN passes every range check (each comparison with it is
    false) and infinity every minimum, so neither would be refused by the ranges. Infinity is allowed where the
    schema says `allowInfinity: true`, as a float or as INFINITY."""
    allows_infinity = "number" in _kinds({"type": types}) and node.get(ALLOW_INFINITY, False)
    if allows_infinity and (instance == INFINITY or (isinstance(instance, float) and instance == math.inf)):
        return
    errors = list(_JSON_SCHEMA_TYPE(validator, types, instance, node))
    yield from errors
    if not errors and isinstance(instance, float) and not math.isfinite(instance):
        yield jsonschema.ValidationError("not a finite number", validator="finite", validator_value=True)


_JSON_SCHEMA_TYPE = jsonschema.Draft202012Validator.VALIDATORS["type"]
_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"type": _type_and_finite})


def _number_range(node: Mapping[str, Any]) -> str:
    """What a number setting allows, in words: "a number > 0", "a number >= 0 and <= 0.9, or .inf"."""
    words = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
    bounds = " and ".join(f"{words[k]} {node[k]}" for k in words if k in node)
    infinity = ", or .inf" if node.get(ALLOW_INFINITY) else ""
    return f"a {'finite ' if not infinity else ''}number{' ' + bounds if bounds else ''}{infinity}"


def _explain(error: jsonschema.ValidationError) -> str:
    """The validator's message plus what is allowed, so a typo can be fixed without opening the schema. A value
    is quoted by its start only (configfile.quoted): a message never repeats a long string or a large structure."""
    value = quoted(error.instance)
    if error.validator == "finite":
        return f"{value} is not allowed; allowed: {_number_range(error.schema)}"
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unexpected = sorted(set(error.instance) - set(allowed))
        shown = ", ".join(map(quoted, unexpected[:5])) + (
            f" and {len(unexpected) - 5} more" if len(unexpected) > 5 else ""
        )
        return f"unknown key(s) {shown}; allowed: {', '.join(allowed)}"
    if error.validator == "enum":
        return f"{value} is not allowed; allowed values: {', '.join(map(repr, error.validator_value))}"
    if error.validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bounds = {
            k: error.schema[k]
            for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
            if k in error.schema
        }
        return f"{value} is out of range; allowed: {bounds}"
    if error.validator == "type":
        infinity = " (or .inf)" if error.schema.get(ALLOW_INFINITY) else ""
        return f"{value} has the wrong type; expected {error.validator_value}{infinity}"
    if error.validator == "maxLength":
        return f"{value} is too long; allowed: at most {error.validator_value} characters"
    if error.validator == "maxProperties":
        return f"{len(error.instance):,} entries are too many; allowed: at most {error.validator_value:,}"
    if error.validator == "pattern":
        return f"{value} does not match {error.validator_value!r}"
    if error.validator == "propertyNames":  # the offending name's own error, under the mapping's key
        return _explain(error.context[0]) if error.context else error.message
    return error.message if len(error.message) <= 200 else f"{error.message[:200]}... ({error.validator} failed)"
