"""What the README and Docs/PYTHON-CLIENT.md say about the Python client agrees with the client and the contract
(issue 45): every install command of Clients/python has `--no-build-isolation` and the reason is given; the
documented `send_answers` signature is the client's, the Answer shapes and the example's answers validate against
conversation.schema.json's answerBody, and the ConversationTurn it returns has every member the guide names. Reads
the working tree only (no Swift build, no broker)."""

from __future__ import annotations

import ast
import inspect
import re
import sys
from pathlib import Path

import cip

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "Clients" / "python" / "src"))

from concierge_client import AsyncClient, Client, RetryPolicy  # noqa: E402
from concierge_client.reply import ConversationState, ConversationTurn  # noqa: E402

README = (REPO / "README.md").read_text("utf-8")
GUIDE = (REPO / "Docs" / "PYTHON-CLIENT.md").read_text("utf-8")
SECTION = GUIDE.partition("### `send_answers`")[2].partition("\n## ")[0].partition("`timeout=` bounds")[0]


def test_every_install_command_of_the_client_builds_without_isolation_and_says_why():
    for name, text in (("README.md", README), ("Docs/PYTHON-CLIENT.md", GUIDE)):
        commands = re.findall(r"pip install[^`\n]*Clients/python", text)
        assert commands, f"{name} has no install command for Clients/python"
        for command in commands:
            assert "--no-build-isolation" in command, f"{name}: {command}"
        assert "PyPI" in text.partition("--no-build-isolation")[2][:2000], f"{name} does not say why"


def test_the_documented_signature_is_the_clients():
    block = re.search(r"```python\n(send_answers\(.*?\) -> \w+)\n```", SECTION, re.S)
    assert block, "no signature block in the send_answers section"
    text = block.group(1)
    documented = ast.parse("def " + text.replace("-> ConversationTurn", "-> ConversationTurn:\n    pass")).body[0]
    assert isinstance(documented, ast.FunctionDef)
    args = documented.args
    names = [a.arg for a in args.args]
    defaults = dict(zip(names[len(names) - len(args.defaults):], (ast.unparse(d) for d in args.defaults)))
    defaults |= {a.arg: ast.unparse(d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    for cls in (Client, AsyncClient):
        real = inspect.signature(cls.send_answers)
        params = [p for p in real.parameters.values() if p.name != "self"]
        assert names == [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        assert [a.arg for a in args.kwonlyargs] == [p.name for p in params if p.kind is p.KEYWORD_ONLY]
        for p in params:
            if p.default is not p.empty:
                shown = defaults[p.name]
                assert shown == repr(p.default) or (shown == "RetryPolicy()" and p.default == RetryPolicy()), \
                    (p.name, shown, p.default)
    assert "ConversationTurn" in text and real.return_annotation in ("ConversationTurn", ConversationTurn)


def _answers_in(text: str) -> list[dict]:
    """The Answer dicts of the section's example, as JSON values (Python's True/False/None written as JSON)."""
    example = SECTION.rpartition("```python")[2].partition("```")[0]
    call = re.search(r"send_answers\([^,]+, (\[.*?\])\)", example, re.S)
    assert call, "no send_answers call in the example"
    return ast.literal_eval(call.group(1))


def test_the_answer_shapes_and_the_example_validate_against_the_contract():
    check = cip.SCHEMA_SET.validator("conversation.schema.json#/$defs/answerBody")
    shapes = re.findall(r"^\| `(\{.*?\})` \|", SECTION, re.M)
    assert len(shapes) == 4, shapes
    for shape in shapes:
        value = shape.replace("P", '"p"').replace("V", '"v"').replace("i}", "1}").replace("True \\| False", "true")
        assert not list(check.iter_errors(__import__("json").loads(value))), shape
    answers = _answers_in(SECTION)
    assert len(answers) >= 2
    assert not list(check.iter_errors({"answers": answers})), answers
    for answer in answers:
        assert not list(check.iter_errors(answer)), answer


def test_the_members_the_guide_names_exist():
    table = SECTION.partition("It returns a `ConversationTurn`")[2].partition("\n\n", )[2].partition("\n\n")[0]
    turn_members = {m for row in table.splitlines()[2:] for m in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert turn_members >= {"conversation_id", "number", "reply", "interaction", "state", "asking", "is_ended",
                            "is_confirming"}, turn_members
    for member in turn_members:
        assert hasattr(ConversationTurn, member) or member in ConversationTurn.__dataclass_fields__, member
    state_row = next(row for row in table.splitlines() if row.startswith("| `state`"))
    members = state_row.split("|")[2].partition(":")[2]
    while re.search(r"\([^()]*\)", members):
        members = re.sub(r"\([^()]*\)", "", members)  # the values in parentheses, innermost first
    state_members = re.findall(r"`(\w+)`", members)
    assert set(state_members) >= {"phase", "asking", "turn", "ending"}, state_members
    for name in state_members:
        assert name in ConversationState.__dataclass_fields__ or hasattr(ConversationState, name), name
