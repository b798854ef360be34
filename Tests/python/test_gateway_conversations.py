"""Conversations through the HTTP gateway, as requests are (Docs/GATEWAY.md, PROTOCOL.md 4.11): a turn streams its
progress as server-sent events, a turn past its deadline answers 202 and is long-polled at its request's URL, and a
Conversation-Id names one first turn: the same Interaction and flags again are replayed (`Idempotent-Replayed`),
another is 422 `idempotency-conflict`. Real broker, pool and gateway processes; the slow turns are the example Echo
intent's `delayMs` (in handle)."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from httpx_sse import connect_sse

from gateway_procs import echo, stack

SSE = {"Accept": "text/event-stream"}


@pytest.fixture(scope="module")
def gw(run_dir):
    with stack(run_dir, "gwconv") as gateway:
        yield gateway


@pytest.fixture
def http(gw):
    with httpx.Client(base_url=gw.url, timeout=30) as client:
        yield client


def new_cid(name: str) -> str:
    return f"c-{name}-{time.monotonic_ns()}"


def problem(response: httpx.Response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == code and body["status"] == status, body
    return body


def confirming(http: httpx.Client, text: str, **parameters) -> str:
    """A conversation of Echo with the confirm flag: resolve and confirm run at once (Echo's delay is in handle),
    and it waits for {"confirm": true}. Returns its id."""
    cid = new_cid(text)
    r = http.post("/v1/conversations", params={"confirm": "true"}, headers={"Conversation-Id": cid},
                  json=echo(text, **parameters))
    assert r.status_code == 201, r.text
    assert r.json()["conversation"]["state"] == "confirming", r.json()
    return cid


def events(source) -> list[tuple[str, str, dict]]:
    return [(e.event, e.id, json.loads(e.data)) for e in source.iter_sse()]


# -- server-sent events ------------------------------------------------------------------------------------------


def test_a_later_turn_streams_progress_then_final(http):
    cid = confirming(http, "streamed", delayMs=600)
    with connect_sse(http, "POST", f"/v1/conversations/{cid}/turns", params={"deadline_ms": 50},
                     json={"confirm": True}) as source:
        assert source.response.status_code == 200
        assert source.response.headers["content-type"] == "text/event-stream"
        assert source.response.headers["conversation-id"] == cid
        rid = source.response.headers["concierge-request-id"]
        got = events(source)
    assert [name for name, _, _ in got] == ["progress", "final"], got
    assert all(ident == rid for _, ident, _ in got)
    assert got[0][2]["state"] == "running" and got[0][2]["phase"] == "handle"
    final = got[1][2]
    assert final["handle"]["data"]["text"] == "streamed"
    assert final["conversation"]["id"] == cid and final["conversation"]["ending"] == "completed"
    # The stream's request id is the turn's: its ending stays readable there.
    again = http.get(f"/v1/requests/{rid}")
    assert again.status_code == 200 and again.json()["conversation"]["turn"] == 2, again.text


def test_a_first_turn_streams_too_and_an_error_ends_with_an_error_event(http):
    cid = new_cid("first-streamed")
    with connect_sse(http, "POST", "/v1/conversations", params={"deadline_ms": 50}, headers={"Conversation-Id": cid},
                     json=echo("first", delayMs=500)) as source:
        assert source.response.headers["conversation-id"] == cid
        got = events(source)
    assert [name for name, _, _ in got] == ["progress", "final"], got
    assert got[1][2]["conversation"]["ending"] == "completed" and got[1][2]["conversation"]["turn"] == 1
    with connect_sse(http, "POST", f"/v1/conversations/{cid}/turns", json={"confirm": True}) as source:
        got = events(source)
    assert [name for name, _, _ in got] == ["error"], got
    assert got[0][2]["code"] == "conversation-ended" and got[0][2]["status"] == 409


# -- 202 and the long poll ---------------------------------------------------------------------------------------


def test_a_turn_past_its_deadline_answers_202_and_is_long_polled(http):
    cid = confirming(http, "polled", delayMs=800)
    r = http.post(f"/v1/conversations/{cid}/turns", headers={"Concierge-Deadline": "50"}, json={"confirm": True})
    assert r.status_code == 202, r.text
    assert r.json()["state"] == "running" and r.json()["phase"] == "handle"
    rid = r.headers["concierge-request-id"]
    assert r.headers["location"] == f"/v1/requests/{rid}"
    assert r.headers["conversation-id"] == cid
    now = http.get(r.headers["location"])  # wait=0: at once, still running
    assert now.status_code == 202, now.text
    done = http.get(r.headers["location"], params={"wait": 10})
    assert done.status_code == 200, done.text
    assert done.headers["concierge-request-id"] == rid
    assert done.json()["handle"]["data"]["text"] == "polled"
    assert done.json()["conversation"]["ending"] == "completed"


def test_a_first_turn_past_its_deadline_answers_202_and_is_long_polled(http):
    cid = new_cid("first-polled")
    r = http.post("/v1/conversations", params={"deadline_ms": 50}, headers={"Conversation-Id": cid},
                  json=echo("first-polled", delayMs=700))
    assert r.status_code == 202, r.text
    assert r.headers["location"] == f"/v1/requests/{r.headers['concierge-request-id']}"
    assert r.headers["conversation-id"] == cid
    done = http.get(r.headers["location"], params={"wait": 10})
    assert done.status_code == 200, done.text
    assert done.json()["conversation"]["id"] == cid and done.json()["conversation"]["ending"] == "completed"
    # Once it ended, the same first turn is replayed (201), without running again.
    again = http.post("/v1/conversations", headers={"Conversation-Id": cid}, json=echo("first-polled", delayMs=700))
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true", again.text
    assert again.json()["handle"]["data"]["instance"] == done.json()["handle"]["data"]["instance"]


# -- Conversation-Id: one first turn -----------------------------------------------------------------------------


def test_the_same_conversation_id_and_first_turn_is_replayed(http):
    cid = new_cid("replayed")
    message = {"intent": {"type": "SendMessage", "parameters": {"recipient": {"displayName": "John"},
                                                                "content": "Hi"}}}
    first = http.post("/v1/conversations", headers={"Conversation-Id": cid}, json=message)
    assert first.status_code == 201 and "idempotent-replayed" not in first.headers, first.text
    assert first.json()["conversation"]["state"] == "asking"
    # The same JSON, however written (key order, spacing), is the same first turn.
    same = json.dumps({"intent": {"parameters": {"content": "Hi", "recipient": {"displayName": "John"}},
                                  "type": "SendMessage"}}, indent=2)
    again = http.post("/v1/conversations", headers={"Conversation-Id": cid, "Content-Type": "application/json"},
                      content=same)
    assert again.status_code == 201, again.text
    assert again.headers["idempotent-replayed"] == "true"
    assert again.headers["conversation-id"] == cid and again.headers["location"] == f"/v1/conversations/{cid}"
    assert again.json() == first.json()
    # The conversation goes on from there.
    answered = http.post(f"/v1/conversations/{cid}/turns", json={"parameter": "recipient", "option": 0})
    assert answered.status_code == 200 and "idempotent-replayed" not in answered.headers, answered.text
    assert answered.json()["conversation"]["ending"] == "completed"


def test_the_same_conversation_id_with_another_first_turn_is_a_conflict(http):
    cid = new_cid("conflict")
    message = {"intent": {"type": "SendMessage", "parameters": {"recipient": {"displayName": "John"},
                                                                "content": "Hi"}}}
    first = http.post("/v1/conversations", headers={"Conversation-Id": cid}, json=message)
    assert first.status_code == 201, first.text
    others = [
        ({}, {"intent": {"type": "SendMessage", "parameters": {"recipient": {"displayName": "John"},
                                                               "content": "Bye"}}}),  # another body
        ({}, echo("another intent type")),
        ({"confirm": "true"}, message),  # other flags
    ]
    for params, body in others:
        r = http.post("/v1/conversations", params=params, headers={"Conversation-Id": cid}, json=body)
        refused = problem(r, 422, "idempotency-conflict")
        assert "idempotent-replayed" not in r.headers and r.headers["conversation-id"] == cid
        assert refused["conversation"]["id"] == cid and refused["conversation"]["state"] == "asking", refused
    # Nothing changed: the conversation still asks, and its first turn is still replayed.
    state = http.get(f"/v1/conversations/{cid}").json()
    assert state["turn"] == 1 and state["state"] == "asking" and state["intent"]["parameters"]["content"] == "Hi"
    again = http.post("/v1/conversations", headers={"Conversation-Id": cid}, json=message)
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true", again.text
