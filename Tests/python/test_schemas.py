"""The contract itself: the JSON Schemas load into one referencing.Registry as Schemas/README.md says, every
example marked `<!-- schema: ... -->` in PROTOCOL.md and every `examples` entry in the schemas validates (or fails,
when marked invalid), and the intent definitions follow intent-definition.schema.json and the rules it cannot
express (section 11.11)."""

from __future__ import annotations

import json
import re

import pytest

import cip

S = cip.SCHEMA_SET
PROTOCOL = (cip.SCHEMAS / "PROTOCOL.md").read_text("utf-8")
MARKED = re.findall(r"<!-- schema: ([^ ]+?)( invalid)? -->\n```json\n(.*?)\n```", PROTOCOL, re.S)


def ref_of(name: str) -> str:
    """'interaction#/$defs/person' -> 'interaction.schema.json#/$defs/person'."""
    doc, _, pointer = name.partition("#")
    return f"{doc}.schema.json" + (f"#{pointer}" if pointer else "")


def test_registry_holds_every_schema():
    """The schemas of Schemas/README.md; a schema added later (a transcript's, say) joins them."""
    assert {"conversation.schema.json", "error.schema.json", "intent-definition.schema.json",
            "interaction.schema.json", "progress.schema.json", "stats.schema.json"} <= set(S.documents)
    for doc in S.documents.values():
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert doc["$id"].startswith(cip.BASE)


def test_protocol_has_marked_examples():
    assert len(MARKED) >= 10


@pytest.mark.parametrize("name,invalid,text", MARKED, ids=[f"{m[0]}{m[1]}-{i}" for i, m in enumerate(MARKED)])
def test_marked_example_in_protocol(name, invalid, text):
    value = json.loads(text)
    errors = list(S.validator(ref_of(name)).iter_errors(value))
    if invalid:
        assert errors, f"example marked invalid is valid against {name}: {text}"
    else:
        assert not errors, f"example is not valid against {name}: {[e.message for e in errors]}"


def schema_examples():
    for file, doc in S.documents.items():
        for i, example in enumerate(doc.get("examples", [])):
            yield pytest.param(file, example, id=f"{file}-{i}")
        for name, sub in doc.get("$defs", {}).items():
            for i, example in enumerate(sub.get("examples", [])):
                yield pytest.param(f"{file}#/$defs/{name}", example, id=f"{file}-{name}-{i}")


@pytest.mark.parametrize("ref,example", list(schema_examples()))
def test_schema_examples_validate(ref, example):
    S.check(ref, example, f"example of {ref}")


@pytest.mark.parametrize("name", sorted(S.definitions))
def test_intent_definition_rules(name):
    """What intent-definition.schema.json cannot say (its description lists them)."""
    d = S.definitions[name]
    names = [p["name"] for p in d["parameters"]]
    assert len(names) == len(set(names)), "parameter names are unique"
    used = {p["enum"] for p in d["parameters"] if p["type"] == "enum"}
    assert used == set(d["enums"]), "every enum names a key of enums and every key is used"
    for p in d["parameters"]:
        if "minimum" in p and "maximum" in p:
            assert p["minimum"] <= p["maximum"]


# Values of each parameter type (section 11.4), valid and not.
VALUES = [
    ("string", "Running 5 minutes late", True),
    ("integer", 2, True),
    ("integer", -9223372036854775808, True),
    ("integer", 9223372036854775808, False),
    ("integer", 2.5, False),
    ("double", 5.5, True),
    ("double", 5, True),
    ("boolean", True, True),
    ("boolean", "true", False),
    ("date", "2026-11-22T10:00:00Z", True),
    ("date", "2026-11-22T11:00:00.250+01:00", True),
    ("date", "2026-11-22T10:00Z", False),
    ("date", "2026-11-22", False),
    ("dateComponents", {"hour": 18, "minute": 30}, True),
    ("dateComponents", {}, True),
    ("dateComponents", {"hour": "18"}, False),
    ("dateComponents", {"week": 3}, False),
    ("currencyAmount", {"amount": "12.50", "currencyCode": "EUR"}, True),
    ("currencyAmount", {"amount": "-0.5", "currencyCode": "USD"}, True),
    ("currencyAmount", {"amount": "1e3", "currencyCode": "EUR"}, False),
    ("currencyAmount", {"amount": "12.50", "currencyCode": "eur"}, False),
    ("currencyAmount", {"amount": "12.50"}, False),
    ("person", {"displayName": "Anna"}, True),
    ("person", {"displayName": "Anna", "handleType": "fax"}, False),
    ("person", {"handle": "+49"}, False),
    ("placemark", {"name": "Ferry Building"}, True),
    ("placemark", {"latitude": "37.7"}, False),
    ("enumCase", "outdoor", True),
    ("enumCase", "out door", False),
]


@pytest.mark.parametrize("type_,value,valid", VALUES, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(VALUES)])
def test_parameter_value_types(type_, value, valid):
    errors = list(S.validator(f"interaction.schema.json#/$defs/{type_}").iter_errors(value))
    assert (not errors) == valid, [e.message for e in errors]


@pytest.mark.parametrize("resolution,valid", [
    ({"kind": "success", "value": "x"}, True),
    ({"kind": "success"}, False),
    ({"kind": "notRequired"}, True),
    ({"kind": "needsValue"}, True),
    ({"kind": "needsValue", "value": 1}, False),
    ({"kind": "disambiguation", "options": ["a", "b"]}, True),
    ({"kind": "disambiguation", "options": []}, False),
    ({"kind": "confirmationRequired", "value": {"displayName": "Kate Bell"}}, True),
    ({"kind": "unsupported"}, True),
    ({"kind": "unsupported", "reason": "outsideServiceArea"}, True),
    ({"kind": "unsupported", "reason": "not a word"}, False),
    ({"kind": "maybe"}, False),
])
def test_resolution_shapes(resolution, valid):
    errors = list(S.validator("interaction.schema.json#/$defs/resolution").iter_errors(resolution))
    assert (not errors) == valid, [e.message for e in errors]


@pytest.mark.parametrize("body,valid", [
    ({"state": "running", "phase": "handle", "elapsed_ms": 500, "worker": "w"}, True),
    ({"state": "queued", "phase": "confirm", "elapsed_ms": 0}, True),
    ({"state": "running", "phase": "handle", "elapsed_ms": 500}, False),
    ({"state": "queued", "phase": "handle", "elapsed_ms": 5, "worker": "w"}, False),
    ({"state": "queued", "phase": "lifecycle", "elapsed_ms": 5}, False),
    ({"state": "queued", "phase": "resolve", "elapsed_ms": 1.5}, False),
])
def test_progress_shapes(body, valid):
    errors = list(S.validator("progress.schema.json").iter_errors(body))
    assert (not errors) == valid, [e.message for e in errors]


def test_error_codes_of_section_10_2_match_the_schema():
    table = PROTOCOL.split("### 10.2 Error codes", 1)[1].split("###", 1)[0]
    codes = re.findall(r"^\| `([a-z-]+)` \|", table, re.M)
    assert codes, "no codes found in section 10.2"
    assert set(codes) == set(S.documents["error.schema.json"]["$defs"]["code"]["enum"])


# Section 9: any version may add optional keys to progress and error bodies and to the confirm and handle responses, and
# receivers MUST ignore keys they do not know; their required keys stay required. Other objects stay closed.
OPEN_OBJECTS = [
    ("progress.schema.json", {"state": "running", "phase": "handle", "elapsed_ms": 500, "worker": "w"}, "state"),
    ("progress.schema.json", {"state": "queued", "phase": "confirm", "elapsed_ms": 0}, "elapsed_ms"),
    ("error.schema.json", {"code": "busy", "message": "queue full"}, "message"),
    ("error.schema.json", {"code": "invalid-type", "message": "m", "intent": "Echo", "parameter": "text"}, "code"),
    ("interaction.schema.json#/$defs/confirmResponse", {"code": "ready"}, "code"),
    ("interaction.schema.json#/$defs/handleResponse",
     {"code": "success", "userActivity": {"activityType": "Echo", "userInfo": {}}}, "userActivity"),
    ("conversation.schema.json", {"id": "c-1", "intentType": "Echo", "turn": 1, "state": "running", "asking": [],
                                  "asks": {}, "maxAsks": 3, "recording": False}, "maxAsks"),
    ("conversation.schema.json#/$defs/askingEntry", {"parameter": "text", "kind": "needsValue", "asks": 1}, "asks"),
]


@pytest.mark.parametrize("ref,body,required", OPEN_OBJECTS, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(OPEN_OBJECTS)])
def test_bodies_receivers_only_read_accept_unknown_keys_but_keep_required_ones(ref, body, required):
    validator = S.validator(ref)
    assert not list(validator.iter_errors(body)), "the body as this revision sends it"
    extended = {**body, "retry_after_ms": 250, "x-vendor": {"any": ["thing"]}}
    assert not [e.message for e in validator.iter_errors(extended)], "a later revision's extra keys"
    missing = {k: v for k, v in extended.items() if k != required}
    assert list(validator.iter_errors(missing)), f"{required} is still required"


@pytest.mark.parametrize("ref,body", [
    ("interaction.schema.json#/$defs/intent", {"type": "Echo", "parameters": {}, "extra": 1}),
    ("interaction.schema.json#/$defs/person", {"displayName": "Anna", "extra": 1}),
    ("interaction.schema.json#/$defs/resolution", {"kind": "notRequired", "extra": 1}),
])
def test_objects_inside_the_intent_and_resolutions_stay_closed(ref, body):
    """11.1: receivers are strict about the objects inside "intent" (unknown keys are errors, 5.11)."""
    assert list(S.validator(ref).iter_errors(body))


def test_stats_schema_refuses_what_section_5_14_rules_out():
    """The STATS answer body (5.14): every count a whole number of at least 0, every required key there."""
    good = {"state": "active", "default_deadline_ms": 3000, "requests_in_flight": 0, "queued": 0,
            "intent_types": [{"name": "Echo", "queued": 0, "oldest_age_ms": 0, "workers": 1, "capacity": 4,
                              "capacity_used": 0, "capacity_free": 4}],
            "workers": [{"name": "pool-0", "capacity": 4, "jobs": 0, "draining": False, "intents": ["Echo"]}],
            "later": "ignored"}
    S.check("stats.schema.json", good, "a STATS body")
    validator = S.validator("stats.schema.json")
    for broken in (
        {k: v for k, v in good.items() if k != "workers"},
        {**good, "queued": -1},
        {**good, "intent_types": [{**good["intent_types"][0], "oldest_age_ms": 1.5}]},
        {**good, "workers": [{**good["workers"][0], "draining": "no"}]},
        {**good, "workers": [{k: v for k, v in good["workers"][0].items() if k != "intents"}]},
    ):
        assert list(validator.iter_errors(broken)), broken


@pytest.mark.parametrize("body,valid", [
    ({"parameter": "recipient", "value": {"displayName": "John"}}, True),
    ({"parameter": "recipient", "value": None}, True),
    ({"parameter": "recipient", "option": 0}, True),
    ({"parameter": "recipient", "option": 1.5}, False),
    ({"parameter": "recipient", "option": 2**31}, True),  # the broker: an integer from 0, out of range: bad-option
    ({"parameter": "recipient", "option": 1e30}, True),
    ({"parameter": "recipient", "option": 2.0}, True),
    ({"parameter": "recipient", "option": -1}, False),
    ({"parameter": "", "value": 1}, False),
    ({"parameter": "recipient", "option": "0"}, False),
    ({"parameter": "recipient", "confirm": True}, True),
    ({"parameter": "recipient", "confirm": "yes"}, False),
    ({"confirm": False}, True),
    ({"parameter": "recipient"}, False),
    ({"parameter": "recipient", "value": 1, "option": 0}, False),
    ({"parameter": 5, "value": 1}, False),
    ({"confirm": True, "extra": 1}, False),
    ({"answers": [{"confirm": True}]}, True),
    ({"answers": []}, False),
    ({"answers": [{"parameter": "p", "value": i} for i in range(16)]}, True),
    ({"answers": [{"parameter": "p", "value": i} for i in range(17)]}, False),
    ({"answers": [{"confirm": True}], "turn": 2}, False),
    ({}, False),
])
def test_answer_shapes(body, valid):
    """4.11.2: an Answer body is one of four closed shapes, or 1 to 16 of them under "answers"; the rest is
    bad-answer."""
    errors = list(S.validator("conversation.schema.json#/$defs/answerBody").iter_errors(body))
    assert (not errors) == valid, [e.message for e in errors]


BASE_CONVERSATION = {"id": "c-1", "intentType": "SendMessage", "turn": 2, "asks": {"recipient": 1}, "maxAsks": 3,
                     "recording": False}


@pytest.mark.parametrize("extra,valid", [
    ({"state": "asking", "asking": [{"parameter": "recipient", "kind": "needsValue", "asks": 1}],
      "expiresInMs": 1000}, True),
    ({"state": "asking", "asking": []}, False),
    ({"state": "confirming", "asking": [], "expiresInMs": 0}, True),
    ({"state": "confirming", "asking": [{"parameter": "recipient", "kind": "needsValue", "asks": 1}]}, False),
    ({"state": "running", "asking": []}, True),
    ({"state": "running", "asking": [], "expiresInMs": 5}, False),
    ({"state": "ended", "asking": [], "ending": "completed"}, True),
    ({"state": "ended", "asking": []}, False),
    ({"state": "ended", "asking": [], "ending": "completed", "expiresInMs": 5}, False),
    ({"state": "asking", "asking": [{"parameter": "r", "kind": "needsValue", "asks": 1}], "ending": "expired"}, False),
    ({"state": "ended", "asking": [], "ending": "too-many-asks", "endingParameter": "recipient"}, True),
    ({"state": "ended", "asking": [], "ending": "too-many-asks"}, False),
    ({"state": "ended", "asking": [], "ending": "failed", "endingCode": "worker-lost"}, True),
    ({"state": "ended", "asking": [], "ending": "failed"}, False),
    ({"state": "ended", "asking": [], "ending": "completed", "endingCode": "worker-lost"}, False),
    ({"state": "ended", "asking": [], "ending": "finished"}, False),
    ({"state": "asking", "asking": [{"parameter": "r", "kind": "disambiguation", "asks": 1}]}, False),
    ({"state": "asking", "asking": [{"parameter": "r", "kind": "confirmationRequired", "asks": 1}]}, True),
    ({"state": "asking", "asking": [{"parameter": "r", "kind": "needsValue", "asks": 1, "options": ["a"]}]}, False),
    ({"state": "asking", "asking": [{"parameter": "r", "kind": "success", "asks": 1}]}, False),
    ({"state": "asking", "asking": [{"parameter": "r", "kind": "unsupported", "asks": 1,
                                     "reason": "noContactFound"}]}, True),
    ({"state": "waiting", "asking": []}, False),
])
def test_conversation_shapes(extra, valid):
    """4.11.4: which keys go with which state, ending and kind."""
    errors = list(S.validator("conversation.schema.json").iter_errors({**BASE_CONVERSATION, **extra}))
    assert (not errors) == valid, [e.message for e in errors]
