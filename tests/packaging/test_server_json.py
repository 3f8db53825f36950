"""server.json, the MCP registry's entry, against the registry's JSON schema (the released
2025-12-11 one, as the skillsaw package ships it: no network) and against the package."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema

from paperanchor import __version__
from paperanchor.cli import _parser
from paperanchor.settings import Settings
from tests.conftest import ROOT

SCHEMA_VERSION = "2025-12-11"
ENTRY = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))


def _schema() -> dict[str, object]:
    folder = (
        resources.files("skillsaw.schemas.mcp_registry") / f"v{SCHEMA_VERSION.replace('-', '_')}"
    )
    schema: dict[str, object] = json.loads((folder / "server.schema.json").read_text("utf-8"))
    return schema


def test_server_json_is_valid_under_the_registry_schema_it_names() -> None:
    schema = _schema()
    assert ENTRY["$schema"] == schema["$id"]
    kind = jsonschema.validators.validator_for(schema)
    validator = kind(schema, format_checker=jsonschema.FormatChecker())
    assert [error.message for error in validator.iter_errors(ENTRY)] == []
    # the schema does refuse: a description over its 100 characters
    too_long = {**ENTRY, "description": "x" * 101}
    assert not validator.is_valid(too_long)


def test_server_json_names_this_version_the_mcp_command_and_real_settings() -> None:
    (package,) = ENTRY["packages"]
    assert ENTRY["version"] == package["version"] == __version__
    assert package["identifier"] == "paperanchor" and package["runtimeHint"] == "uvx"
    # `uvx paperanchor mcp`: the argument is a subcommand the command line has
    assert [argument["value"] for argument in package["packageArguments"]] == ["mcp"]
    _, commands = _parser()
    assert "mcp" in commands
    settings = {f"PAPERANCHOR_{name.upper()}" for name in Settings.model_fields}
    names = [variable["name"] for variable in package["environmentVariables"]]
    assert names and set(names) <= settings
