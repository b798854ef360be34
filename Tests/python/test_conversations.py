"""Conversations (CIPC03, PROTOCOL.md section 4.11) from the spec alone: raw TURN, CONVERSATION and END frames from
cip.Client against the real broker and the example handlers (Sources/ConciergeExamples, their answers documented in
Docs/DEMO-DATA.md: "John" is two contacts, "Kate" one favourite of two, "Zed" none).

What is checked: a disambiguation answered by sending only the option, the flag `confirm` and its confirmation turn
(yes, no, and a confirm that refuses), a parameter's confirmation request, several answers in one turn, the re-prompt
bound (a fourth ask ends the conversation `too-many-asks`; a definition's `maxAsks`), CONVERSATION and END (also while
a turn runs), every refusal of the issue's bad inputs (each followed by a CONVERSATION read that shows the
conversation unchanged), turn numbers (attached, replayed with F6 `replay`, `turn-mismatch`, `conversation-ended`),
the errors before and after handle (section 4.11.5), CANCEL and STATUS of a turn, scoping by routing id, the bound on
conversations, the time to live, the flag `record`, a broker SIGKILL with the journal on, and the checks of section
4.8 on malformed TURN, CONVERSATION and END messages. Every message received is checked by
cip.Client against the spec and the schemas, conversation.schema.json included."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid

import pytest

import cip
import cluster
from cip import CIPC2, CIPC3

JOHN_APPLESEED = {"displayName": "John Appleseed", "handle": "john.appleseed@example.com",
                  "handleType": "emailAddress", "customIdentifier": "contact-john-appleseed"}
JOHN_DOE = {"displayName": "John Doe", "handle": "+1 415 555 0102", "handleType": "phoneNumber",
            "customIdentifier": "contact-john-doe"}
KATE_BELL = {"displayName": "Kate Bell", "handle": "+1 415 555 0103", "handleType": "phoneNumber",
             "customIdentifier": "contact-kate-bell"}
CONTENT = "Running 5 minutes late"


@pytest.fixture
def c(main_cluster):
    client = main_cluster.broker.client(version=3)
    yield client
    client.close()


def new_cid() -> bytes:
    return f"c-{uuid.uuid4().hex[:12]}".encode()


def message_to(name: str | None, content: str | None = CONTENT) -> dict:
    parameters = {}
    if name is not None:
        parameters["recipient"] = {"displayName": name}
    if content is not None:
        parameters["content"] = content
    return cip.interaction("SendMessage", **parameters)


def turn(c: cip.Client, cid: bytes, number: int | str | bytes, body, flags: str = "", deadline="",
         rid: bytes | None = None) -> cip.Message:
    """One TURN and its ending REPLY (a progress REPLY, if any, is skipped)."""
    return c.ending(c.turn(cid, number, body, deadline=deadline, flags=flags, rid=rid))


def final(m: cip.Message, phase: str) -> dict:
    assert m.status == "final" and m.phase == phase, m
    return m.json


def error(m: cip.Message, code: str, phase: str = "") -> dict:
    assert m.status == "error" and m.code == code and m.phase == phase, m
    return m.json


def read(c: cip.Client, cid: bytes) -> dict:
    answer = c.read_conversation(cid)
    assert answer.status == "final", answer
    return answer.json


def without_clock(conversation: dict) -> dict:
    """What a replay comparison ignores: the idle time left (it counts down between two reads)."""
    return {k: v for k, v in conversation.items() if k != "expiresInMs"}


def asking(conversation: dict) -> dict[str, dict]:
    return {entry["parameter"]: entry for entry in conversation["asking"]}


def started_with_john(c: cip.Client, flags: str = "") -> tuple[bytes, dict]:
    """Turn 1 of "Tell John ...": resolve stops with a disambiguation of recipient (two Johns)."""
    cid = new_cid()
    body = final(turn(c, cid, 1, message_to("John"), flags=flags), "resolve")
    assert body["resolve"]["recipient"] == {"kind": "disambiguation", "options": [JOHN_APPLESEED, JOHN_DOE]}, body
    conversation = body["conversation"]
    assert conversation["id"] == cid.decode() and conversation["intentType"] == "SendMessage"
    assert conversation["turn"] == 1 and conversation["state"] == "asking", conversation
    assert asking(conversation) == {"recipient": {"parameter": "recipient", "kind": "disambiguation", "asks": 1,
                                                  "options": [JOHN_APPLESEED, JOHN_DOE]}}, conversation
    assert conversation["asks"] == {"recipient": 1} and conversation["maxAsks"] == 3, conversation
    assert 0 < conversation["expiresInMs"] <= 300_000, conversation
    assert conversation["recording"] is False  # the main broker has no transcript directory
    return cid, conversation


# -- the dialog ------------------------------------------------------------------------------------------------


def test_a_disambiguation_is_answered_by_sending_only_the_option(c):
    """4.11.2, 4.11.3: turn 2 sends {"parameter", "option"}; the broker writes the option into the intent and runs
    the lifecycle from resolve, through handle (no flag confirm), and the conversation ends `completed`."""
    cid, _ = started_with_john(c)
    rid = c.turn(cid, 2, {"parameter": "recipient", "option": 0})
    reply = c.ending(rid)
    body = final(reply, "handle")
    assert body["intent"]["parameters"] == {"recipient": JOHN_APPLESEED, "content": CONTENT}, body
    assert body["resolve"]["recipient"] == {"kind": "success", "value": JOHN_APPLESEED}
    assert body["confirm"]["code"] == "ready"
    assert body["handle"]["code"] == "success"
    assert body["handle"]["data"]["recipient"] == "contact-john-appleseed"
    conversation = body["conversation"]
    assert conversation["state"] == "ended" and conversation["ending"] == "completed", conversation
    assert conversation["turn"] == 2 and conversation["asking"] == [] and "expiresInMs" not in conversation
    assert conversation["asks"] == {"recipient": 1}
    # CONVERSATION: the same, with the intent of the last output (resolved values written back).
    now = read(c, cid)
    assert now["intent"] == body["intent"], now
    assert {k: v for k, v in now.items() if k != "intent"} == conversation
    # A turn runs as a request of this client: STATUS of its request id answers its stored reply (6.4).
    c.status(rid)
    stored = c.status_answer(rid)
    assert (stored.status, stored.phase, stored.body) == ("final", "handle", reply.body)


def test_the_flag_confirm_waits_for_a_confirmation_turn_before_handle(c):
    """4.11.3: with flag `confirm` a lifecycle stops at a confirm that answers `ready` (state `confirming`); turn 3
    {"confirm": true} runs handle on the stored confirm output."""
    cid, _ = started_with_john(c, flags="confirm")
    body = final(turn(c, cid, 2, {"parameter": "recipient", "option": 1}), "confirm")
    assert body["confirm"] == {"code": "ready"} and "handle" not in body, body
    assert body["intent"]["parameters"]["recipient"] == JOHN_DOE
    conversation = body["conversation"]
    assert conversation["state"] == "confirming" and conversation["asking"] == [], conversation
    assert conversation["turn"] == 2 and "expiresInMs" in conversation
    assert read(c, cid)["state"] == "confirming"
    handled = final(turn(c, cid, 3, {"confirm": True}), "handle")
    assert handled["handle"]["code"] == "success"
    assert handled["handle"]["data"]["recipient"] == "contact-john-doe"
    assert {k: handled[k] for k in ("intent", "resolve", "confirm")} == {k: body[k] for k in
                                                                       ("intent", "resolve", "confirm")}
    assert handled["conversation"]["ending"] == "completed" and handled["conversation"]["turn"] == 3


def test_confirm_false_declines_without_a_job(c):
    """4.11.3: {"confirm": false} runs no job: a final REPLY (F4 confirm) with the stored confirm output, and the
    conversation ends `declined`."""
    cid = new_cid()
    confirming = final(turn(c, cid, 1, message_to("Anna Schmidt"), flags="confirm"), "confirm")
    assert confirming["conversation"]["state"] == "confirming", confirming
    declined = final(turn(c, cid, 2, {"confirm": False}), "confirm")
    assert "handle" not in declined
    assert {k: declined[k] for k in ("intent", "resolve", "confirm")} == {k: confirming[k] for k in
                                                                        ("intent", "resolve", "confirm")}
    assert declined["conversation"]["ending"] == "declined" and read(c, cid)["ending"] == "declined"


@pytest.mark.parametrize("yes", [True, False])
def test_a_confirmation_request_of_a_parameter(c, yes):
    """4.11.2: "Kate" resolves `confirmationRequired(Kate Bell)`; yes keeps the value the handler wrote back, no
    removes the parameter, and resolve then asks for it (`needsValue`: a second ask)."""
    cid = new_cid()
    first = final(turn(c, cid, 1, message_to("Kate")), "resolve")
    assert asking(first["conversation"]) == {"recipient": {"parameter": "recipient", "kind": "confirmationRequired",
                                                           "asks": 1}}, first
    assert first["intent"]["parameters"]["recipient"] == KATE_BELL  # the value to confirm, written back
    reply = turn(c, cid, 2, {"parameter": "recipient", "confirm": yes})
    if yes:
        body = final(reply, "handle")
        assert body["handle"]["data"]["recipient"] == "contact-kate-bell"
        assert body["conversation"]["ending"] == "completed"
    else:
        body = final(reply, "resolve")
        assert "recipient" not in body["intent"]["parameters"], body
        assert asking(body["conversation"]) == {"recipient": {"parameter": "recipient", "kind": "needsValue",
                                                              "asks": 2}}, body
        assert body["conversation"]["asks"] == {"recipient": 2}


def test_several_answers_in_one_turn(c):
    """4.11.2: {"answers": [...]} applies each answer in order; every asked parameter counts one ask per stop."""
    cid = new_cid()
    first = final(turn(c, cid, 1, message_to("John", content=None)), "resolve")
    kinds = {p: e["kind"] for p, e in asking(first["conversation"]).items()}
    assert kinds == {"recipient": "disambiguation", "content": "needsValue"}, first
    assert first["conversation"]["asks"] == {"recipient": 1, "content": 1}
    body = final(turn(c, cid, 2, {"answers": [{"parameter": "recipient", "option": 0},
                                               {"parameter": "content", "value": "On my way"}]}), "handle")
    assert body["intent"]["parameters"] == {"recipient": JOHN_APPLESEED, "content": "On my way"}, body
    assert body["conversation"]["ending"] == "completed"


# -- the re-prompt bound -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("start,answer,parameter,kind", [
    # "Zed" is no contact: recipient stays `unsupported(noContactFound)` however often it is answered again.
    (message_to("Zed"), {"parameter": "recipient", "value": {"displayName": "Zed"}}, "recipient", "unsupported"),
    # A needed value answered with null (null removes the value, 4.11.2): content stays `needsValue`.
    (message_to("Anna Schmidt", content=None), {"parameter": "content", "value": None}, "content", "needsValue"),
], ids=["unsupported", "needsValue"])
def test_a_parameter_asked_a_fourth_time_ends_the_conversation(c, start, answer, parameter, kind):
    """4.11.5: each resolve output that stops counts an ask per asked parameter; the ask that would be the fourth
    (maxAsks 3, the broker's default) ends the conversation `too-many-asks`: an error REPLY, F4 resolve, naming the
    intent type and the parameter. A retry of that turn replays it; a later turn is `conversation-ended`."""
    cid = new_cid()
    body = final(turn(c, cid, 1, start), "resolve")
    for n in (2, 3):
        assert asking(body["conversation"])[parameter]["kind"] == kind, body
        assert body["conversation"]["asks"][parameter] == n - 1
        body = final(turn(c, cid, n, answer), "resolve")
    assert body["conversation"]["asks"][parameter] == 3 and body["conversation"]["state"] == "asking"
    rid = c.turn(cid, 4, answer)
    ended = c.ending(rid)
    err = error(ended, "too-many-asks", "resolve")
    assert err["intent"] == "SendMessage" and err["parameter"] == parameter, err
    conversation = err["conversation"]
    assert conversation["state"] == "ended" and conversation["ending"] == "too-many-asks", conversation
    assert conversation["endingParameter"] == parameter and conversation["turn"] == 4
    assert conversation["asks"][parameter] == 4  # this last ask counts too (4.11.5)
    assert read(c, cid)["ending"] == "too-many-asks"
    again = c.ending(c.turn(cid, 4, answer))
    assert again.flags == b"replay" and (again.status, again.phase, again.body) == ("error", "resolve", ended.body)
    later = error(turn(c, cid, 5, answer), "conversation-ended")
    assert later["conversation"]["ending"] == "too-many-asks"


# -- END and CONVERSATION ------------------------------------------------------------------------------------


def test_end_cancels_and_the_conversation_stays_readable(c):
    """4.11.1: END ends a conversation `cancelled` and answers it; a later turn is `conversation-ended`; END again
    changes nothing."""
    cid, _ = started_with_john(c)
    ended = c.end_conversation(cid)
    assert ended.status == "final", ended
    assert ended.json["state"] == "ended" and ended.json["ending"] == "cancelled", ended
    assert ended.json["intent"]["parameters"]["recipient"] == {"displayName": "John"}
    assert "expiresInMs" not in ended.json and ended.json["asking"] == []
    err = error(turn(c, cid, 2, {"parameter": "recipient", "option": 0}), "conversation-ended")
    assert err["conversation"]["ending"] == "cancelled"
    assert c.end_conversation(cid).json == ended.json
    assert read(c, cid) == ended.json


def test_a_running_turn_reads_running_and_a_retry_is_attached(c):
    """4.11.5: while a turn runs the conversation reads `running` (no expiresInMs); the same turn number sent again
    is attached to it (the same ending, no second job); the next number is `turn-mismatch` meanwhile."""
    cid = new_cid()
    body = cip.interaction("Echo", text="slow", delayMs=1500)
    first = c.turn(cid, 1, body, deadline=5000)
    running = read(c, cid)  # turn 1 is running: its handle job sleeps 1.5 s
    assert running["state"] == "running" and running["turn"] == 1 and "expiresInMs" not in running, running
    attached = c.turn(cid, 1, body, deadline=5000)
    mismatch = error(turn(c, cid, 2, {"confirm": True}), "turn-mismatch")
    assert mismatch["conversation"]["state"] == "running"
    a, b = c.ending(first), c.ending(attached)
    assert final(a, "handle")["handle"]["data"]["text"] == "slow"
    assert (b.status, b.phase, b.body, b.flags) == (a.status, a.phase, a.body, b""), (a, b)
    assert a.json["conversation"]["ending"] == "completed"


# -- turn numbers and replays ------------------------------------------------------------------------------------


def test_a_retried_turn_is_replayed_and_handle_runs_once(c):
    """4.11.5: a turn sent again with the number of the last turn, after it ended, gets its stored REPLY byte for
    byte with F6 `replay` (the handle's messageId shows that no second message was sent); an earlier turn is
    `turn-mismatch`."""
    cid, _ = started_with_john(c)
    done = turn(c, cid, 2, {"parameter": "recipient", "option": 0})
    final(done, "handle")
    replayed = turn(c, cid, 2, {"parameter": "recipient", "option": 0})
    assert replayed.flags == b"replay", replayed
    assert (replayed.status, replayed.phase, replayed.body) == (done.status, done.phase, done.body)
    err = error(turn(c, cid, 1, message_to("John")), "turn-mismatch")
    assert err["conversation"]["turn"] == 2
    # Turn 1 of an open conversation, sent again after it ended: replayed too.
    cid2, _ = started_with_john(c)
    first = c.ending(c.turn(cid2, 1, message_to("John")))
    assert first.flags == b"replay" and first.json["conversation"]["turn"] == 1


def test_turn_mismatch_changes_nothing(c):
    cid, before = started_with_john(c)
    for number in (3, 7, 999999999):
        err = error(turn(c, cid, number, {"parameter": "recipient", "option": 0}), "turn-mismatch")
        assert "2" in err["message"], err  # the message says which turn is expected
        assert without_clock(err["conversation"]) == without_clock(before)
    assert without_clock({k: v for k, v in read(c, cid).items() if k != "intent"}) == without_clock(before)


# -- bad input: a clear code, and the conversation left as it was --------------------------------------------


def unchanged(c: cip.Client, cid: bytes, before: dict) -> None:
    now = read(c, cid)
    assert without_clock({k: v for k, v in now.items() if k != "intent"}) == without_clock(before), (now, before)
    assert now["intent"]["parameters"]["recipient"] == {"displayName": "John"}, now


@pytest.mark.parametrize("answer,code", [
    ({"parameter": "content", "value": "something else"}, "not-asked"),  # content resolved success: not asked
    ({"parameter": "attachments", "value": ["a.png"]}, "not-asked"),
    ({"parameter": "nonexistent", "value": 1}, "not-asked"),
    ({"parameter": "recipient", "confirm": True}, "not-asked"),  # asked with disambiguation, not confirmation
    ({"confirm": True}, "not-asked"),  # the conversation is asking, not confirming
    ({"answers": [{"parameter": "recipient", "option": 0}, {"parameter": "content", "value": "x"}]}, "not-asked"),
    ({"parameter": "recipient", "option": 2}, "bad-option"),
    ({"parameter": "recipient", "option": 99}, "bad-option"),
    ({"parameter": "recipient", "option": 2**31}, "bad-option"),  # an integer from 0 however large
    ({"parameter": "recipient", "option": 2**53}, "bad-option"),
    ({"parameter": "recipient", "option": 2**63}, "bad-option"),  # beyond Int64
    ({"parameter": "recipient", "option": 1e30}, "bad-option"),  # an integer written with an exponent
    ({"parameter": "recipient", "option": 2.0}, "bad-option"),  # option 2, which John's two options do not have
    ({"answers": [{"parameter": "recipient", "value": JOHN_DOE}, {"parameter": "recipient", "option": 5}]},
     "bad-option"),
], ids=["not-asked-content", "not-asked-attachments", "not-asked-unknown", "not-asked-kind", "not-asked-confirm",
        "not-asked-second", "bad-option-2", "bad-option-99", "bad-option-2^31", "bad-option-2^53", "bad-option-2^63",
        "bad-option-1e30", "bad-option-2.0", "bad-option-second"])
def test_an_answer_that_does_not_fit_is_refused_and_changes_nothing(c, answer, code):
    """4.8 checks 15 and 16, 4.11.2: answers for a parameter not asked (or not with that kind), or a confirm when
    nothing waits for one, are `not-asked`; an option the disambiguation does not have is `bad-option`; both carry
    the unchanged conversation, and the right answer under the same turn number works afterwards."""
    cid, before = started_with_john(c)
    err = error(turn(c, cid, 2, answer), code)
    assert without_clock(err["conversation"]) == without_clock(before), err
    unchanged(c, cid, before)
    final(turn(c, cid, 2, {"parameter": "recipient", "option": 0}), "handle")


@pytest.mark.parametrize("body", [
    b"not json",
    b"[]",
    {},
    {"parameter": "recipient"},
    {"parameter": "recipient", "option": "0"},
    {"parameter": "recipient", "option": 0.5},
    {"parameter": "recipient", "option": 1.5},
    {"parameter": "recipient", "option": -1},
    {"parameter": "recipient", "option": -2**31},
    {"parameter": "recipient", "option": -1e30},
    {"parameter": "", "value": JOHN_DOE},
    {"parameter": 5, "value": 1},
    {"parameter": "recipient", "option": 0, "value": JOHN_DOE},
    {"parameter": "recipient", "confirm": "yes"},
    {"confirm": True, "extra": 1},
    {"answers": []},
    {"answers": [{"parameter": "recipient", "option": 0}] * 17},
    {"answers": {"parameter": "recipient", "option": 0}},
    {"answers": [{"parameter": "recipient", "option": 0}], "more": 1},
    {"intent": {"type": "SendMessage", "parameters": {"recipient": JOHN_DOE}}},
])
def test_a_body_that_is_not_an_answer_is_bad_answer(c, body):
    """4.8 check 14, 4.11.2: anything but the four Answer shapes, alone or 1 to 16 under "answers"."""
    cid, before = started_with_john(c)
    err = error(turn(c, cid, 2, body), "bad-answer")
    assert without_clock(err["conversation"]) == without_clock(before), err
    unchanged(c, cid, before)


@pytest.mark.parametrize("body", [
    b"not json",
    {"answers": [{"parameter": "recipient", "option": 0}]},
    {"intent": {"parameters": {}}},
    {"intent": {"type": "", "parameters": {}}},
    {"intent": {"type": 5, "parameters": {}}},
    {"intent": "SendMessage"},
])
def test_a_turn_1_without_an_intent_type_is_bad_answer_and_leaves_nothing(c, body):
    cid = new_cid()
    err = error(turn(c, cid, 1, body), "bad-answer")
    assert "conversation" not in err
    assert c.read_conversation(cid).code == "unknown-conversation"


def test_a_value_of_the_wrong_type_is_the_workers_invalid_type_and_changes_nothing(c):
    """4.11.2: the broker writes a value as is; the worker refuses it when resolve runs (`invalid-type`, its body
    with the conversation added, 4.11.3); an error before handle leaves the conversation as it was (4.11.5), and
    the same turn number, corrected, then runs."""
    cid, before = started_with_john(c)
    reply = turn(c, cid, 2, {"parameter": "recipient", "value": "John Appleseed"})  # a person is an object
    err = error(reply, "invalid-type", "resolve")
    assert err["intent"] == "SendMessage" and err["parameter"] == "recipient", err
    assert without_clock(err["conversation"]) == without_clock(before), err
    unchanged(c, cid, before)
    done = final(turn(c, cid, 2, {"parameter": "recipient", "value": JOHN_APPLESEED}), "handle")
    assert done["conversation"]["turn"] == 2 and done["conversation"]["ending"] == "completed"


def test_an_unknown_conversation_id(c):
    """4.11.5: a TURN (other than turn 1), CONVERSATION or END for an id no conversation has: `unknown-conversation`,
    with nothing about any conversation in the body."""
    cid = new_cid()
    error(turn(c, cid, 2, {"parameter": "recipient", "option": 0}), "unknown-conversation")
    for answer in (c.read_conversation(cid), c.end_conversation(cid)):
        assert answer.status == "error" and answer.code == "unknown-conversation", answer
        assert set(answer.json) >= {"code", "message"} and "conversation" not in answer.json


def test_another_clients_conversation_is_unknown_to_it(main_cluster, c):
    """4.11.5: without CURVE a conversation belongs to its routing id; another client gets the answers of an id that
    does not exist, for TURN, CONVERSATION and END, and the owner's conversation is left as it was."""
    cid, before = started_with_john(c)
    with main_cluster.broker.client(version=3) as other:
        error(turn(other, cid, 2, {"parameter": "recipient", "option": 0}), "unknown-conversation")
        assert other.read_conversation(cid).code == "unknown-conversation"
        assert other.end_conversation(cid).code == "unknown-conversation"
        # Ids are scoped: the other client's turn 1 under the same id starts a conversation of its own.
        own = final(turn(other, cid, 1, message_to("Kate")), "resolve")["conversation"]
        assert own["turn"] == 1 and asking(own)["recipient"]["kind"] == "confirmationRequired", own
    unchanged(c, cid, before)
    final(turn(c, cid, 2, {"parameter": "recipient", "option": 1}), "handle")


def test_a_fixed_routing_id_keeps_its_conversations_across_reconnections(main_cluster):
    """4.11.5: scope is the routing id without CURVE: a client that reconnects with the same fixed routing id
    (section 3.2) goes on with its conversation."""
    routing_id = f"conv-{uuid.uuid4().hex[:8]}".encode()
    with main_cluster.broker.client(version=3, routing_id=routing_id) as first:
        cid, before = started_with_john(first)
    with main_cluster.broker.client(version=3, routing_id=routing_id) as again:
        assert read(again, cid)["turn"] == 1
        final(turn(again, cid, 2, {"parameter": "recipient", "option": 0}), "handle")


def test_a_turn_1_that_fails_before_handle_leaves_no_conversation(c):
    """4.11.5: an error before any handle job (here the resolve handler throws: `handler-failed`) leaves no
    conversation after turn 1; turn 1 may then be sent again under the same id."""
    cid = new_cid()
    failing = cip.interaction("Echo", text="x", failWith="resolve refuses", delayPhase="resolve")
    error(turn(c, cid, 1, failing), "handler-failed", "resolve")
    assert c.read_conversation(cid).code == "unknown-conversation"
    done = final(turn(c, cid, 1, cip.interaction("Echo", text="x")), "handle")
    assert done["conversation"]["turn"] == 1 and done["conversation"]["ending"] == "completed"


def test_a_handle_that_fails_its_code_still_completes(c):
    """4.11.6: `completed` is any handle code: a handler that throws in handle answers code `failure`."""
    cid = new_cid()
    body = final(turn(c, cid, 1, cip.interaction("Echo", text="x", failWith="no", delayPhase="handle")), "handle")
    assert body["handle"]["code"] == "failure" and body["conversation"]["ending"] == "completed", body


def test_a_turn_whose_handle_job_is_lost_ends_failed_and_is_never_run_again(spawn):
    """4.11.5: an error after a handle job was sent (its worker crashed: `worker-lost`) ends the conversation
    `failed`; a retry of the turn replays the error and no handle job runs again."""
    broker = spawn.broker(heartbeat_ms=250)
    worker = spawn.worker(broker)
    c = spawn.client(broker, version=3)
    cid = new_cid()
    body = cip.interaction("Echo", text="x", crash=True, delayPhase="handle")
    err = error(turn(c, cid, 1, body, deadline=10000), "worker-lost", "handle")
    assert err["conversation"]["ending"] == "failed" and err["conversation"]["endingCode"] == "worker-lost", err
    now = read(c, cid)
    assert now["ending"] == "failed" and now["endingCode"] == "worker-lost", now
    worker.wait(10)
    spawn.worker(broker)  # a live worker: a second handle job would reach it (and crash it)
    again = c.ending(c.turn(cid, 1, body, deadline=10000))
    assert again.flags == b"replay" and again.code == "worker-lost", again
    assert read(c, cid)["ending"] == "failed"


# -- malformed messages (section 4.8) --------------------------------------------------------------------------


def turn_frames(rid=b"m-1", cid=b"c-m", number=b"1", deadline=b"", body=None, flags=b"") -> list[bytes]:
    body = cip.encode(body if body is not None else message_to("John"))
    return [CIPC3, b"TURN", rid, cid, number, deadline, body, flags]


def refused(c: cip.Client, frames: list[bytes], code: str, rid: bytes = b"m-1") -> cip.Message:
    c.send_raw(frames, expect="REPLY", rid=rid)
    m = c.reply(rid)
    assert m.status == "error" and m.code == code and m.phase == "", m
    assert m.frames[0] == CIPC3 and m.flags == b"", m
    assert "conversation" not in m.json
    return m


@pytest.mark.parametrize("frames", [
    turn_frames()[:7],
    turn_frames() + [b"extra"],
], ids=["7-frames", "9-frames"])
def test_a_turn_with_the_wrong_number_of_frames_is_malformed(c, frames):
    refused(c, frames, "malformed")


@pytest.mark.parametrize("number", [b"0", b"000", b"x", b"", b"-1", b"+2", b" 1", b"1.0", b"1234567890"])
def test_a_turn_number_that_is_not_a_decimal_from_1_is_malformed(c, number):
    cid = new_cid()
    refused(c, turn_frames(cid=cid, number=number), "malformed")
    assert c.read_conversation(cid).code == "unknown-conversation"


@pytest.mark.parametrize("cid", [b"", b"a b", b"c\x7f", b"c\x00", "c-\u00e9".encode(), b"c" * 256],
                         ids=["empty", "space", "del", "nul", "utf8", "256"])
def test_a_bad_conversation_id_is_malformed(c, cid):
    refused(c, turn_frames(cid=cid), "malformed")


@pytest.mark.parametrize("flags", [b"recrod", b"record  confirm", b" record", b"record ", b"RECORD", b"confirm,record",
                                   b"replay"])
def test_bad_flags_are_malformed(c, flags):
    cid = new_cid()
    refused(c, turn_frames(cid=cid, flags=flags), "malformed")
    assert c.read_conversation(cid).code == "unknown-conversation"


@pytest.mark.parametrize("flags", [b"", b"record", b"confirm", b"record confirm", b"confirm record"])
def test_good_flags_are_accepted(c, flags):
    cid = new_cid()
    m = turn(c, cid, 1, message_to("John"), flags=flags.decode())
    assert final(m, "resolve")["conversation"]["recording"] is False  # no transcript directory on this broker


def test_the_other_checks_of_a_turn(c):
    refused(c, turn_frames(deadline=b"5"), "bad-deadline")
    refused(c, turn_frames(deadline=b"60001"), "bad-deadline")
    frames = turn_frames()
    frames[6] = b""
    refused(c, frames, "malformed")
    frames = turn_frames(rid=b"")
    c.send_raw(frames, expect="REPLY", rid=b"")
    m = c.reply(b"")
    assert m.code == "bad-request-id", m


def test_conversation_commands_need_version_03(c):
    """4.8 check 3: TURN, CONVERSATION and END are CIPC03 commands: in CIPC02 they are `unknown-command`."""
    for frames in ([CIPC2, b"TURN", b"m-9", b"c-1", b"1", b"", cip.encode(message_to("John")), b""],
                   [CIPC2, b"CONVERSATION", b"m-9"], [CIPC2, b"END", b"m-9"]):
        c.send_raw(frames, expect="REPLY", rid=b"m-9")
        m = c.reply(b"m-9")
        assert m.code == "unknown-command" and m.frames[0] == CIPC2, m


@pytest.mark.parametrize("command", [b"CONVERSATION", b"END"])
@pytest.mark.parametrize("tail,echo", [
    ([], b""),
    ([b"c-1", b"extra"], b"c-1"),
    ([b""], b""),
    ([b"a b"], b"a b"),
], ids=["2-frames", "4-frames", "empty-id", "space"])
def test_a_malformed_conversation_or_end(c, command, tail, echo):
    """4.8: CONVERSATION and END take exactly 3 frames with a conversation id; else a CONVERSATION answer
    `malformed`, F2 echoed."""
    c.send_raw([CIPC3, command, *tail], expect="CONVERSATION", rid=echo)
    m = c.conversation_answer(echo)
    assert m.status == "error" and m.code == "malformed", m


def test_a_cipc03_request_is_a_cipc02_request(c):
    """4.1: version 03 has every command of version 02, answered in version 03."""
    rid = c.request("Echo", "handle", cip.interaction("Echo", text="v3"))
    m = c.ending(rid)
    assert m.frames[0] == CIPC3 and final(m, "handle")["handle"]["data"]["text"] == "v3"
    assert "conversation" not in m.json


# -- the bound from the definition, and the time to live ------------------------------------------------------


def asking_definition(max_asks: int) -> dict:
    return {"intent": "PyAsk", "description": "Asks for its text until it gets one.", "maxAsks": max_asks,
            "parameters": [{"name": "text", "type": "string", "list": False, "required": True,
                            "description": "The text."}],
            "enums": {}, "confirmCodes": ["ready", "failure", "failureRequiringAppLaunch"],
            "handleCodes": ["success", "inProgress", "continueInApp", "failure", "failureRequiringAppLaunch"]}


def needs_text(job: cip.WorkerMessage) -> bytes:
    return cip.with_phase(job.body, "resolve", {"text": {"kind": "needsValue"}})


def test_the_definitions_max_asks_bounds_the_conversation(spawn):
    """4.11.5, 11.11: `maxAsks` of the definition a CIPW04 worker announced (here 1) replaces the broker's default:
    the second ask of `text` ends the conversation."""
    broker = spawn.broker(heartbeat_ms=250)
    w = cip.registered_worker(spawn, broker, version=4,
                              types=("PyAsk", json.dumps(asking_definition(1))))
    c = spawn.client(broker, version=3)
    cid = new_cid()
    rid = c.turn(cid, 1, cip.interaction("PyAsk"))
    job = w.job()
    assert job.phase == "resolve", job
    w.result(job, "stop", needs_text(job))
    first = final(c.ending(rid), "resolve")["conversation"]
    assert first["maxAsks"] == 1 and first["asks"] == {"text": 1}, first
    rid = c.turn(cid, 2, {"parameter": "text", "value": None})
    job = w.job()
    assert json.loads(job.body) == {"intent": {"type": "PyAsk", "parameters": {}}}, job  # {"intent": I} (4.11.3)
    w.result(job, "stop", needs_text(job))
    err = error(c.ending(rid), "too-many-asks", "resolve")
    assert err["parameter"] == "text" and err["conversation"]["endingParameter"] == "text", err


def test_an_answer_is_written_into_the_intent_of_the_last_output(spawn):
    """4.11.3: the next resolve job's body is {"intent": I}: the last output's intent (values the handler wrote back
    included) with the answer written in; the output's other keys are not sent again."""
    broker = spawn.broker(heartbeat_ms=250)
    w = cip.registered_worker(spawn, broker, version=2, types=("PyForm",))
    c = spawn.client(broker, version=3)
    cid = new_cid()
    rid = c.turn(cid, 1, {"intent": {"type": "PyForm", "parameters": {"a": "raw"}}, "extra": {"kept": "once"}})
    job = w.job()
    assert json.loads(job.body)["extra"] == {"kept": "once"}  # turn 1's body reaches turn 1's job as sent
    out = {"intent": {"type": "PyForm", "parameters": {"a": "normalised"}}, "extra": {"kept": "once"},
           "resolve": {"a": {"kind": "success", "value": "normalised"},
                       "b": {"kind": "disambiguation", "options": ["x", "y"]}}}
    w.result(job, "stop", out)
    final(c.ending(rid), "resolve")
    rid = c.turn(cid, 2, {"parameter": "b", "option": 1})
    job = w.job()
    assert json.loads(job.body) == {"intent": {"type": "PyForm", "parameters": {"a": "normalised", "b": "y"}}}, job
    w.result(job, "stop", {"intent": {"type": "PyForm", "parameters": {"a": "normalised", "b": "y"}},
                           "resolve": {"a": {"kind": "success", "value": "normalised"},
                                       "b": {"kind": "unsupported"}}})
    body = final(c.ending(rid), "resolve")
    assert asking(body["conversation"]) == {"b": {"parameter": "b", "kind": "unsupported", "asks": 2}}, body


def test_an_idle_conversation_expires(spawn):
    """4.11.5: a conversation idle for its time to live ends `expired`; it stays readable, and a later turn is
    `conversation-ended`."""
    broker = spawn.broker(heartbeat_ms=250, conversation_ttl=1)
    spawn.worker(broker)
    c = spawn.client(broker, version=3)
    cid, conversation = started_with_john_ttl(c)
    assert conversation["expiresInMs"] <= 1000, conversation
    deadline = time.monotonic() + 10
    while (now := read(c, cid))["state"] != "ended" and time.monotonic() < deadline:
        time.sleep(0.2)  # polling the conversation's state, bounded: the expiry is the broker's timer
    assert now["state"] == "ended" and now["ending"] == "expired", now
    err = error(turn(c, cid, 2, {"parameter": "recipient", "option": 0}), "conversation-ended")
    assert err["conversation"]["ending"] == "expired"


def started_with_john_ttl(c: cip.Client) -> tuple[bytes, dict]:
    cid = new_cid()
    body = final(turn(c, cid, 1, message_to("John")), "resolve")
    return cid, body["conversation"]


def test_a_cancelled_turn_before_handle_leaves_the_conversation_as_it_was(c):
    """4.11.1, 4.11.5: CANCEL with a TURN's request id cancels the turn as it would a request (4.10.2); cancelled
    before any handle job, the turn leaves no trace (turn 1: no conversation)."""
    cid = new_cid()
    rid = c.turn(cid, 1, cip.interaction("Echo", text="x", delayMs=5000, delayPhase="resolve"), deadline=10000)
    assert read(c, cid)["state"] == "running"
    c.cancel(rid)
    error(c.ending(rid), "cancelled", "resolve")
    assert c.read_conversation(cid).code == "unknown-conversation"


def test_end_while_a_turn_runs_cancels_it(c):
    """4.11.1: END of a conversation whose turn runs ends it `cancelled` at once and cancels the turn as CANCEL would;
    the turn's REPLY says how it ended, and the conversation stays `cancelled`."""
    cid = new_cid()
    rid = c.turn(cid, 1, cip.interaction("Echo", text="x", delayMs=5000, delayPhase="resolve"), deadline=10000)
    assert read(c, cid)["state"] == "running"
    ended = c.end_conversation(cid)
    assert ended.json["state"] == "ended" and ended.json["ending"] == "cancelled", ended
    reply = c.ending(rid)
    error(reply, "cancelled", "resolve")
    assert reply.json["conversation"]["ending"] == "cancelled", reply
    assert read(c, cid)["ending"] == "cancelled"


def test_a_turn_gets_a_plain_progress_reply_at_its_deadline(c):
    """4.11.3: replies are a REQUEST's: a progress REPLY by the deadline (its body has no "conversation"), then the
    final one with it."""
    cid = new_cid()
    replies = c.replies(c.turn(cid, 1, cip.interaction("Echo", text="x", delayMs=800), deadline=200))
    assert [m.status for m in replies] == ["progress", "final"], replies
    assert "conversation" not in replies[0].json
    assert replies[1].json["conversation"]["ending"] == "completed"


def test_a_turn_1_of_an_unknown_intent_type_leaves_no_conversation(spawn):
    """4.8: a TURN that passed its own checks goes through a REQUEST's admission (`unknown-intent` here, once the
    startup grace period is over, 6.6), refused as its `lifecycle` request would be (F4 lifecycle), and leaves
    nothing."""
    broker = spawn.broker(heartbeat_ms=250, startup_grace_ms=0)
    c = spawn.client(broker, version=3)
    cid = new_cid()
    err = error(turn(c, cid, 1, cip.interaction("NoSuchIntentType", text="x")), "unknown-intent", "lifecycle")
    assert "conversation" not in err
    assert c.read_conversation(cid).code == "unknown-conversation"


def test_a_turn_1_over_the_bound_on_conversations_is_busy(spawn):
    """4.11.5, 4.8 check 17: a turn 1 past --max-conversations is refused `busy`; the conversations kept go on."""
    broker = spawn.broker(heartbeat_ms=250, max_conversations=1)
    spawn.worker(broker)
    c = spawn.client(broker, version=3)
    cid, _ = started_with_john(c)
    other = new_cid()
    err = error(turn(c, other, 1, message_to("John")), "busy")
    assert "conversation" not in err
    assert c.read_conversation(other).code == "unknown-conversation"
    final(turn(c, cid, 2, {"parameter": "recipient", "option": 0}), "handle")


# -- the journal ---------------------------------------------------------------------------------------------------


def test_a_conversation_survives_a_broker_sigkill_with_the_journal_on(spawn):
    """4.11.5, Journal: a conversation between turns goes on after its broker is SIGKILLed and started again on the
    same journal; a turn whose handle job had been sent when the broker died ends `outcome-unknown`, and its
    conversation `failed` (handle is never run again)."""
    journal = spawn.run_dir / f"conv-{uuid.uuid4().hex[:8]}.db"
    subprocess.run([str(cluster.binary()), "journal", "init", str(journal)], check=True, capture_output=True,
                   timeout=30)
    name = f"cj{uuid.uuid4().hex[:6]}"
    flags = {"journal": str(journal), "heartbeat-ms": 250}

    def start() -> cluster.Broker:
        b = cluster.Broker(name, spawn.run_dir, dict(flags))  # the same name: the same endpoints
        b.proc.stop_timeout = 1.0
        spawn.procs.append(b.proc)
        b.wait_ready()
        return b

    broker = start()
    spawn.worker(broker)
    c = spawn.client(broker, version=3, routing_id=f"{name}-client".encode())  # fixed: the scope survives
    cid, before = started_with_john(c)
    # A second conversation whose handle job runs when the broker dies: turn 1 stops at confirm (flag confirm),
    # turn 2 confirms, and its handle job sleeps 3 s.
    slow = new_cid()
    final(turn(c, slow, 1, cip.interaction("Echo", text="x", delayMs=3000), flags="confirm"), "confirm")
    running = c.turn(slow, 2, {"confirm": True}, deadline=30000)
    deadline = time.monotonic() + 10
    while read(c, slow)["state"] != "running" and time.monotonic() < deadline:
        time.sleep(0.05)  # bounded: until turn 2 runs
    time.sleep(0.3)  # not an ordering sleep: the handle job goes out within milliseconds and then sleeps 3 s
    os.kill(broker.pid, signal.SIGKILL)
    assert broker.proc.wait(10) is not None
    broker = start()
    # The ending may have gone out before this client reconnected (a REPLY to a peer not connected is dropped,
    # 6.5): as after any reconnection, the client asks STATUS (7.2).
    c.ping_roundtrip()
    c.status(running)
    err = error(c.status_answer(running, timeout=10), "outcome-unknown", "handle")
    assert err["conversation"]["ending"] == "failed" and err["conversation"]["endingCode"] == "outcome-unknown", err
    failed = read(c, slow)
    assert failed["ending"] == "failed" and failed["turn"] == 2, failed
    replayed = c.ending(c.turn(slow, 2, {"confirm": True}))
    assert replayed.flags == b"replay" and replayed.code == "outcome-unknown", replayed
    now = read(c, cid)
    assert without_clock({k: v for k, v in now.items() if k != "intent"}) == without_clock(before), now
    done = c.ending(c.turn(cid, 2, {"parameter": "recipient", "option": 0}, deadline=20000), timeout=25)
    assert final(done, "handle")["conversation"]["ending"] == "completed"


def test_a_turn_cancelled_by_end_is_replayed_as_it_ended(spawn):
    """4.11.5: after END cancelled turn 2 while it ran, turn 2 sent again is that turn's own ending (`cancelled`,
    F6 `replay`), never the reply of an earlier turn; turn 3 is `conversation-ended`."""
    broker = spawn.broker(heartbeat_ms=250, cancel_grace_ms=200)
    w = cip.registered_worker(spawn, broker, version=2, types=("PyForm",))
    c = spawn.client(broker, version=3)
    cid = new_cid()
    rid = c.turn(cid, 1, {"intent": {"type": "PyForm", "parameters": {}}})
    job = w.job()
    w.result(job, "stop", cip.with_phase(job.body, "resolve", {"b": {"kind": "disambiguation", "options": ["x", "y"]}}))
    first = c.ending(rid)
    final(first, "resolve")
    rid = c.turn(cid, 2, {"parameter": "b", "option": 0}, deadline=10000)
    job = w.job()  # turn 2's resolve job: the worker keeps it
    ended = c.end_conversation(cid)
    assert ended.json["ending"] == "cancelled", ended
    w.cancelled(w.cancel_of(job))
    ending = c.ending(rid)
    error(ending, "cancelled", "resolve")
    again = c.ending(c.turn(cid, 2, {"parameter": "b", "option": 0}))
    assert again.body != first.body, "turn 2 was answered with turn 1's reply"
    assert again.flags == b"replay" and again.code == "cancelled", again
    error(turn(c, cid, 3, {"parameter": "b", "option": 0}), "conversation-ended")


def test_the_flag_record_records_when_the_broker_keeps_transcripts(spawn):
    """4.11.1: `record` asks for a transcript; `recording` says whether one is kept (a broker with a transcript
    directory); recording changes no reply."""
    directory = spawn.run_dir / f"transcripts-{uuid.uuid4().hex[:6]}"
    directory.mkdir()
    broker = spawn.broker(heartbeat_ms=250, transcripts=str(directory))
    spawn.worker(broker)
    c = spawn.client(broker, version=3)
    recorded, plain = new_cid(), new_cid()
    body = final(turn(c, recorded, 1, message_to("John"), flags="record confirm"), "resolve")
    assert body["conversation"]["recording"] is True, body
    assert final(turn(c, plain, 1, message_to("John")), "resolve")["conversation"]["recording"] is False
    final(turn(c, recorded, 2, {"parameter": "recipient", "option": 0}), "confirm")
    final(turn(c, recorded, 3, {"confirm": True}), "handle")
    files = list(directory.rglob("*"))
    assert any(recorded.decode() in f.name for f in files), files
    assert not any(plain.decode() in f.name for f in files), files


def test_status_of_a_turn_and_of_its_replay(c):
    """4.11.5: STATUS of a turn's request id answers its stored ending (6.4), and so does STATUS of a replayed TURN's
    (without flags, as for a key's replay, 4.10.1)."""
    cid, _ = started_with_john(c)
    rid = c.turn(cid, 2, {"parameter": "recipient", "option": 0})
    done = c.ending(rid)
    replay_rid = c.turn(cid, 2, {"parameter": "recipient", "option": 0})
    assert c.ending(replay_rid).flags == b"replay"
    c.status(rid)
    assert c.status_answer(rid).body == done.body
    c.status(replay_rid)
    stored = c.status_answer(replay_rid)
    assert (stored.status, stored.phase, stored.body, stored.flags) == ("final", "handle", done.body, b""), stored


def test_a_confirm_that_refuses_ends_the_conversation_refused(c):
    """4.11.3, 4.11.6: a confirm output with a code other than `ready` ends the conversation `refused` (the demo
    account holds 2500 EUR: 5000 is `failureInsufficientFunds`), flag `confirm` or not."""
    cid = new_cid()
    body = final(turn(c, cid, 1, cip.interaction("SendPayment", payee={"displayName": "Anna"},
                                                 currencyAmount={"amount": "5000", "currencyCode": "EUR"}),
                      flags="confirm"), "confirm")
    assert body["confirm"]["code"] == "failureInsufficientFunds", body
    assert body["conversation"]["state"] == "ended" and body["conversation"]["ending"] == "refused", body
    error(turn(c, cid, 2, {"confirm": True}), "conversation-ended")
