"""Docs/WRITING-HANDLERS.md agrees with IntentKit and the contract (issue 45): what it says about
`IntentDateComponents` (its fields, its JSON) and about the bounds the worker runtime checks before a handler runs
(where, and the `out-of-range` reply it gives). Reads the working tree only (no Swift build, no broker)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import cip

REPO = Path(__file__).resolve().parents[2]
GUIDE = (REPO / "Docs" / "WRITING-HANDLERS.md").read_text("utf-8")
KIT = REPO / "Sources" / "IntentKit"


def _paragraph(title: str) -> str:
    """The guide's text from the bold title to the next bold step or paragraph title."""
    assert f"**{title}**" in GUIDE, f"WRITING-HANDLERS.md has no paragraph **{title}**"
    rest = GUIDE.partition(f"**{title}**")[2]
    return re.split(r"\n\*\*[^*\n]+\*\*", rest, maxsplit=1)[0]


def _json_blocks(text: str) -> list:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", text, re.S)]


def test_date_components_fields_and_json_are_intentkits():
    text = _paragraph("Date components.")
    source = (KIT / "IntentDateComponents.swift").read_text("utf-8")
    assert "public struct IntentDateComponents" in source
    keys = json.loads(re.search(r"static let keys = (\[.*?\])", source).group(1))
    properties = re.findall(r"public var (\w+): (\w+)\?", source)
    assert [name for name, _ in properties] == keys
    for name, swift_type in properties:
        assert f"`{name}`" in text, f"the guide does not name the field {name}"
        assert f"`{swift_type}?`" in text
    check = cip.SCHEMA_SET.validator("interaction.schema.json#/$defs/dateComponents")
    blocks = _json_blocks(text)
    assert blocks, "no JSON example of date components"
    for value in blocks:
        assert not list(check.iter_errors(value)), value
        assert set(value) <= set(keys)
    for member in ("init(intentJSON:)", "intentJSON", "IntentDateComponents(hour: 18, minute: 30)"):
        assert member in text
    assert "init(intentJSON json: JSONValue)" in source and "public var intentJSON: JSONValue" in source


def test_bounds_are_checked_before_the_handler_as_the_guide_says():
    text = _paragraph("Bounds are checked before the handler.")
    # Where: the files it names, the check in the intent's decoding, which the job runner does before making a handler.
    decoding = (KIT / "Intent+JSON.swift").read_text("utf-8")
    runner = (KIT / "_JobRunner.swift").read_text("utf-8")
    assert "Sources/IntentKit/Intent+JSON.swift" in text and "Sources/IntentKit/_JobRunner.swift" in text
    assert "code: .outOfRange" in decoding and "rangeProblem" in decoding
    assert runner.index("I(jsonValue: intentJSON") < runner.index("let handler = factory()")
    # What the caller gets: an error body of the contract, whose message has the decoding's form.
    assert '"\\(Self.intentType).\\(parameter.name): \\(problem)"' in decoding
    assert '"\\(value) is above the maximum \\(IntentError.format(maximum))"' in decoding
    assert '"\\(value) is below the minimum \\(IntentError.format(minimum))"' in decoding
    [body] = _json_blocks(text)
    cip.SCHEMA_SET.check("error.schema.json", body, "the guide's out-of-range body")
    assert body["code"] == "out-of-range"
    found = re.fullmatch(r"(\w+)\.(\w+): (-?[0-9.]+) is above the maximum (-?[0-9.]+)", body["message"])
    assert found, body["message"]
    intent, parameter, value, maximum = found.groups()
    assert (body["intent"], body["parameter"]) == (intent, parameter)
    definition = json.loads((REPO / "Schemas" / "intents" / f"{intent}.json").read_text("utf-8"))
    [declared] = [p for p in definition["parameters"] if p["name"] == parameter]
    assert float(maximum) == declared["maximum"] < float(value)
    assert f'"minimum": {declared["minimum"]}, "maximum": {declared["maximum"]}' in text
    assert f"0 is below the minimum {declared['minimum']}" in text
    for words in ("status `error`", "`resolve`", "no bounds check", "`unsupported` with a reason"):
        assert words in text, words
