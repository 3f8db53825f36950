"""The table of operations (operations.py): every door is generated from it, arguments are
checked by it, and an operation added to it is a tool and a subcommand without another edit."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from typing import Any

import pytest

from paperanchor import cli, operations, service
from paperanchor.api.mcp import build_server
from paperanchor.errors import BadRequest
from paperanchor.settings import Settings
from tests.corpus_pages import fixture_path
from tests.replay import papers_of


def run_cli(*argv: str) -> tuple[int, str, str]:
    """The command line in this process: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:  # argparse's --help and usage errors
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def words(paper: service.Paper, arguments: operations.Arguments, _: operations.Context) -> Any:
    """A new operation's pure function: the words of a node's Markdown (longer than N)."""
    longer = arguments.get("longer") or 0
    found = [word for word in paper.markdown(arguments["anchor"]).split() if len(word) > longer]
    return {"idv": paper.meta.idv, "words": len(found)}


# an argument added to an operation: this one entry is all REST, MCP and the CLI need
LONGER = operations.Argument(
    "longer",
    "integer",
    "count words longer than this, 0-40",
    bounds=(0, 40),
    cli=operations.CliArgument("N", "count words longer than N letters", flag="--longer"),
    rest=operations.Rest("count only the words longer than this, 0-40"),
)

WORD_COUNT = operations.Operation(
    "word_count",
    "How many words a section has.",
    (operations.PAPER, operations.anchor("S1, introduction", "a node, as for read"), LONGER),
    operations.over_paper(words),
    lambda value: value,
    on_paper=words,
    command=operations.Command(
        "words", "the words of a section", lambda value, _: (f"{value['words']} words\n", "")
    ),
)
WORDS_ROUTE = operations.Route(
    "word_count", "/{paper:path}/words/{anchor}.json", "word_count", "Words of a node"
)


@pytest.fixture
def with_word_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(operations, "OPERATIONS", (*operations.OPERATIONS, WORD_COUNT))
    monkeypatch.setattr(operations, "ROUTES", (*operations.ROUTES, WORDS_ROUTE))


def test_every_operation_lists_its_required_arguments_first() -> None:
    for operation in operations.OPERATIONS:
        required = [argument.required for argument in operation.arguments]
        assert required == sorted(required, reverse=True), operation.name


def test_the_command_line_offers_every_tool_of_the_table_and_the_arxiv_record() -> None:
    code, out, _ = run_cli("--help")

    assert code == 0
    for operation in operations.commands():
        assert operation.command_name in out
    tools = {op.name for op in operations.listed("all")}
    assert {op.name for op in operations.commands()} == tools | {"metadata"}


def test_an_operation_added_to_the_table_is_a_tool_with_its_schema(with_word_count) -> None:
    server = build_server(service.PaperService(NoLoader(), "http://127.0.0.1"))

    tools = {tool.name: tool for tool in asyncio.run(server.list_tools())}

    assert "word_count" in tools
    schema = tools["word_count"].input_schema
    assert list(schema["properties"]) == ["paper", "anchor", "longer"]
    assert schema["required"] == ["paper", "anchor"]
    assert schema["properties"]["anchor"]["description"] == "S1, introduction"


def test_an_operation_added_to_the_table_answers_as_a_tool(with_word_count, tmp_path) -> None:
    settings = Settings(
        _env_file=None, cache_dir=tmp_path, local_dir=fixture_path("short").parent, offline=True
    )

    async def main() -> Any:
        async with papers_of(settings, parser_version="test") as library:
            server = build_server(service.PaperService(library, "http://127.0.0.1"))
            return await server.call_tool("word_count", {"paper": "local/short", "anchor": "S1"})

    result = asyncio.run(main())

    assert not result.is_error
    assert result.structured_content["idv"] == "local/short"
    assert result.structured_content["words"] > 10


def test_an_operation_added_to_the_table_is_a_subcommand(with_word_count) -> None:
    code, out, err = run_cli("words", str(fixture_path("short")), "S1")

    assert code == 0, err
    count = int(out.split()[0])
    code, as_json, _ = run_cli("words", str(fixture_path("short")), "S1", "--json")
    assert json.loads(as_json) == {"idv": "local/short", "words": count}


@pytest.mark.parametrize(
    ("name", "given", "says"),
    [
        ("read", {"maxTokens": 5}, "maxTokens=5 is out of range: give 100–100000"),
        ("read", {"maxTokens": "many"}, "maxTokens must be an integer, got many"),
        ("search_paper", {"limit": 51}, "limit=51 is out of range: give 1–50"),
        ("outline", {"wait": 61}, "wait=61 is out of range: give 0–60"),
        ("outline", {"wait": "soon"}, "wait must be a number of seconds, got soon"),
        ("cite", {}, "cite takes an anchor or a text to verify, one of the two"),
        ("cite", {"anchor": "S1", "text": "a quote"}, "one of the two"),
        ("bibtex", {}, "bibtex takes papers or referencesOf, one of the two"),
    ],
)
def test_the_table_checks_each_argument_once_in_the_services_words(
    name: str, given: dict[str, Any], says: str
) -> None:
    with pytest.raises(BadRequest) as raised:
        operations.BY_NAME[name].check({"paper": "local/short", **given})
    assert says in raised.value.detail


@pytest.mark.parametrize(
    ("name", "argument", "value"),
    [
        *(("read", "maxTokens", value) for value in (99, 100_001, 0, "many", True)),
        *(("search_paper", "limit", value) for value in (0, 51, -1, "x")),
        *(("outline", "wait", value) for value in (-1, 61, "soon", float("nan"), False)),
    ],
)
def test_an_argument_out_of_its_range_is_a_bad_request_naming_it(
    name: str, argument: str, value: object
) -> None:
    with pytest.raises(BadRequest, match=argument):
        operations.BY_NAME[name].check({"paper": "local/short", argument: value})


def test_the_checked_arguments_are_numbers_whatever_door_gave_digits() -> None:
    checked = operations.BY_NAME["read"].check({"paper": "x", "maxTokens": "150"}, "cli")
    assert checked["maxTokens"] == 150


def test_on_the_command_line_an_either_or_names_the_flags() -> None:
    with pytest.raises(BadRequest) as raised:
        operations.BY_NAME["cite"].check({"paper": "x", "anchor": None, "text": None}, "cli")
    assert raised.value.detail == "cite takes an ANCHOR or --text QUOTE, one of the two"


def test_arguments_in_range_pass_the_check_unchanged() -> None:
    given = {"paper": "local/short", "anchor": "S1", "maxTokens": 100}
    assert operations.BY_NAME["read"].check(given) == given


class NoLoader:
    async def load(self, ref: object) -> object:
        raise AssertionError("no paper is loaded to list the tools")


def test_the_words_of_the_new_operation_match_the_read_markdown() -> None:
    code, out, _ = run_cli("read", str(fixture_path("short")), "S1")
    assert code == 0
    paper = cli._file_paper(fixture_path("short"))
    context = operations.Context("", "cli")
    assert words(paper, {"anchor": "S1"}, context)["words"] == len(out.split())


# answers only REST gives (contract §6): a paper's arXiv record, arXiv's taxonomy, a figure's
# image as bytes (MCP sends them with `figure`, contract §11), and what changed since another
# edition as one answer (MCP has it as `since` on outline, read, references)
REST_ONLY = {"metadata", "categories", "figure_image", "changes", "changes_markdown"}


def test_every_operation_of_the_table_has_a_rest_route_and_every_route_an_operation() -> None:
    routed = {route.operation for route in operations.ROUTES}

    assert {op.name for op in operations.OPERATIONS} == routed
    assert {op.name for op in operations.OPERATIONS if op.tools is None} == REST_ONLY
    assert not REST_ONLY & {op.name for op in operations.listed("all")}


def test_the_rest_router_serves_the_tables_routes_in_their_order() -> None:
    from paperanchor.api import rest

    paths = [getattr(route, "path", None) for route in rest.routes().routes]
    # the three routes of the server itself come first: /healthz, /metrics, /files/{path}
    assert paths[3:] == [route.path for route in operations.ROUTES]


def test_a_route_takes_its_operations_arguments_in_the_path_it_names_else_in_the_query() -> None:
    route = next(route for route in operations.ROUTES if route.name == "section_json")

    taken = route.arguments(operations.BY_NAME["read"])

    assert [(argument.name, where) for argument, where in taken] == [
        ("paper", "path"),
        ("anchor", "path"),
        ("maxTokens", "query"),
        ("anchors", "query"),
        ("since", "query"),
    ]
    changes = next(route for route in operations.ROUTES if route.name == "changes_json")
    taken = changes.arguments(operations.BY_NAME["changes"])
    assert [(argument.name, where) for argument, where in taken] == [
        ("paper", "path"),
        ("since", "path"),
    ]


def test_an_argument_added_to_an_operation_reaches_rest_mcp_and_the_command_line(
    with_word_count, replay_server, tmp_path
) -> None:
    from tests.api.conftest import FIXTURE_HTML, settings_for
    from tests.api.live import live_server
    from tests.api.test_mcp import call, text_of

    short = str(fixture_path("short"))
    _, cli_json, _ = run_cli("words", short, "S1", "--longer", "6", "--json")
    _, all_words, _ = run_cli("words", short, "S1", "--json")
    with (
        live_server(settings_for(replay_server, tmp_path, local_dir=FIXTURE_HTML)) as live,
        live.client() as http,
    ):
        rest = http.get("/local/short/words/S1.json?longer=6")
        refused = http.get("/local/short/words/S1.json?longer=41")
        schema = http.get("/openapi.json").json()
        asked = {"paper": "local/short", "anchor": "S1", "longer": 6}
        mcp = call(f"{live.url}/mcp", "word_count", asked)
        mcp_refused = call(f"{live.url}/mcp", "word_count", {**asked, "longer": 41})

    assert rest.status_code == 200
    assert rest.json() == json.loads(cli_json)
    assert mcp.structured_content == rest.json()
    assert rest.json()["words"] < json.loads(all_words)["words"]
    parameters = schema["paths"]["/{paper}/words/{anchor}.json"]["get"]["parameters"]
    assert [(p["name"], p["in"]) for p in parameters] == [
        ("paper", "path"),
        ("anchor", "path"),
        ("longer", "query"),
    ]
    # the one check, in the same words at each door
    said = "longer=41 is out of range: give 0–40"
    assert said in refused.json()["error"]["detail"]
    assert mcp_refused.is_error and said in text_of(mcp_refused)
