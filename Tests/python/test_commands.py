"""Every CIP/Client command against the session broker and its pool of example workers: PING, REQUEST in each
phase (resolve, confirm, handle, lifecycle), STATUS for in-flight, finished and unknown requests. Every message
received is checked by cip.Client (frames, statuses, phases, schemas)."""

from __future__ import annotations

import json

import cip
from cip import CIPC, interaction


def echo(**parameters):
    parameters.setdefault("text", "hello")
    return interaction("Echo", **parameters)


# -- PING (4.4, 4.7) ---------------------------------------------------------------------------------------------


def test_ping_pong(client):
    client.ping()
    m = client.pong()
    assert m.frames == [CIPC, b"PONG"]


def test_ping_with_extra_frames_is_still_answered(client):
    """4.4: a broker MUST ignore any further frames of a PING."""
    client.send_raw([CIPC, b"PING", b"extra", b"frames"], expect="PONG")
    assert client.pong().frames == [CIPC, b"PONG"]


def test_pings_interleave_with_requests(client):
    rid = client.request("Echo", "handle", echo(delayMs=300))
    for _ in range(3):
        client.ping_roundtrip()
    final = client.replies(rid)[-1]
    assert final.status == "final"


# -- REQUEST, one phase at a time (6.1, 6.2) ---------------------------------------------------------------------


def test_request_resolve_phase(client):
    m = client.run("Echo", "resolve", echo())
    assert (m.status, m.phase) == ("final", "resolve")
    assert set(m.json) == {"intent", "resolve"}
    assert m.json["resolve"]["text"] == {"kind": "success", "value": "hello"}
    assert m.json["resolve"]["delayMs"] == {"kind": "notRequired"}


def test_request_confirm_phase(client):
    m = client.run("Echo", "confirm", echo())
    assert (m.status, m.phase) == ("final", "confirm")
    assert set(m.json) == {"intent", "confirm"}
    assert m.json["confirm"]["code"] == "ready"


def test_request_handle_phase(client):
    body = echo(text="handle me")
    m = client.run("Echo", "handle", body)
    assert (m.status, m.phase) == ("final", "handle")
    assert set(m.json) == {"intent", "handle"}
    assert m.json["intent"] == body["intent"]
    handle = m.json["handle"]
    assert handle["code"] == "success"
    assert handle["data"]["text"] == "handle me"
    # 11.7: the default user activity carries the intent the handle job received and the response.
    assert handle["userActivity"] == {
        "activityType": "Echo",
        "userInfo": {"interaction": {"intent": body["intent"], "response": {"code": "success", "data": handle["data"]}}},
    }


def test_request_lifecycle_accumulates_the_body(client):
    """6.1, 6.2: resolve, confirm and handle run as separate jobs; the final reply holds all three outputs."""
    m = client.run("Echo", "lifecycle", echo())
    assert (m.status, m.phase) == ("final", "handle")
    assert set(m.json) == {"intent", "resolve", "confirm", "handle"}
    assert m.json["confirm"]["code"] == "ready"
    assert m.json["handle"]["code"] == "success"


def test_confirm_request_keeps_earlier_phase_output(client):
    """4.2: a confirm or handle request MAY include the output of earlier phases; workers copy other keys."""
    resolved = client.run("Echo", "resolve", echo()).json
    m = client.run("Echo", "confirm", resolved)
    assert m.phase == "confirm"
    assert m.json["resolve"] == resolved["resolve"]
    handled = client.run("Echo", "handle", m.json)
    assert handled.json["resolve"] == resolved["resolve"]
    assert handled.json["confirm"] == m.json["confirm"]


def test_passthrough_keys_and_identifier_survive_a_lifecycle(client):
    """11.2: other top-level keys are copied unchanged; 11.3: the intent's identifier too."""
    body = interaction("Echo", identifier="echo-interaction-42", text="x")
    body["x-correlation"] = {"trace": [1, 2, {"deep": None}], "note": "Grüße ✓"}
    m = client.run("Echo", "lifecycle", body)
    assert m.json["x-correlation"] == body["x-correlation"]
    assert m.json["intent"]["identifier"] == "echo-interaction-42"


def test_default_deadline_and_leading_zeros(client):
    """4.2 F5: empty means the broker's default; 3.3: a decimal frame may have leading zeros."""
    assert client.run("Echo", "handle", echo(), deadline=b"").status == "final"
    assert client.run("Echo", "handle", echo(), deadline=b"000002000").status == "final"
    assert client.call("Echo", "handle", echo(), deadline=b"10")[-1].status == "final"  # the minimum


def test_many_requests_in_flight_answered_in_any_order(client):
    """4.1: many requests in flight on one connection; answers to different requests arrive in any order."""
    slow = client.request("Echo", "handle", echo(text="slow", delayMs=800), deadline=5000)
    fast = [client.request("Echo", "handle", echo(text=f"fast-{i}"), deadline=5000) for i in range(5)]
    first = client.next(lambda m: m.command == "REPLY")
    assert first.request_id in fast
    for rid in fast:
        if rid != first.request_id:
            assert client.replies(rid)[-1].json["handle"]["data"]["text"].startswith("fast-")
    assert client.replies(slow)[-1].json["handle"]["data"]["text"] == "slow"


def test_fresh_handler_per_job(client):
    """5.11 step 4 and README: every phase runs in a fresh handler (jobsSeen is always 1)."""
    instances = []
    for _ in range(4):
        m = client.run("Echo", "handle", echo())
        assert m.json["handle"]["data"]["jobsSeen"] == 1
        instances.append((m.json["handle"]["data"]["pid"], m.json["handle"]["data"]["instance"]))
    assert len(set(instances)) == 4


def test_request_id_is_opaque_bytes(client):
    """3.3: a request id is 1..255 opaque bytes; it comes back as received."""
    for rid in [b"\x00\xff binary \x01", b"x" * 255, b"1"]:
        m = client.replies(client.request("Echo", "handle", echo(), rid=rid))[-1]
        assert m.request_id == rid and m.status == "final"


def test_request_id_may_be_reused_after_the_final_reply(client):
    """4.2: a request id may be reused after its final REPLY; STATUS then refers to the newest request."""
    rid = cip.new_id("reuse")
    first = client.replies(client.request("Echo", "handle", echo(text="one"), rid=rid))[-1]
    second = client.replies(client.request("Echo", "handle", echo(text="two"), rid=rid))[-1]
    assert first.json["handle"]["data"]["text"] == "one"
    assert second.json["handle"]["data"]["text"] == "two"
    client.status(rid)
    assert client.status_answer(rid).body == second.body


# -- STATUS (4.3, 4.6, 6.4) -------------------------------------------------------------------------------------


def test_status_of_a_request_in_flight(client, main_cluster):
    rid = client.request("Echo", "handle", echo(delayMs=1000), deadline=5000)
    client.status(rid)
    s = client.status_answer(rid)
    assert (s.command, s.status, s.phase) == ("STATUS", "progress", "handle")
    assert s.json["phase"] == "handle"
    # Handle jobs start at once on an idle pool; queued would also be valid while it waits.
    if s.json["state"] == "running":
        assert s.json["worker"] in main_cluster.workers
    final = client.replies(rid)[-1]
    assert final.status == "final"


def test_status_of_a_finished_request_is_the_final_reply_byte_for_byte(client):
    rid = client.request("SendMessage", "lifecycle", interaction(
        "SendMessage", recipient={"displayName": "John"}, content="Running 5 minutes late"))
    final = client.replies(rid)[-1]
    for _ in range(2):  # 6.4: a STATUS does not consume the result
        client.status(rid)
        s = client.status_answer(rid)
        assert (s.status, s.phase, s.body) == (final.status, final.phase, final.body)


def test_status_of_a_request_that_ended_with_an_error(client):
    rid = client.request("Echo", "resolve", echo(delayPhase="resolve", failWith="boom"))
    error = client.replies(rid)[-1]
    assert error.code == "handler-failed"
    client.status(rid)
    s = client.status_answer(rid)
    assert (s.status, s.phase, s.body) == ("error", "resolve", error.body)


def test_status_of_an_unknown_request(client):
    """6.4 / example 12.6: never sent -> error, empty F4, unknown-request."""
    client.status(b"never-sent")
    s = client.status_answer(b"never-sent")
    assert (s.status, s.phase, s.code) == ("error", "", "unknown-request")


def test_status_from_another_connection_is_unknown(client, main_cluster):
    """6.4: the broker keys requests by (client routing id, request id)."""
    rid = client.request("Echo", "handle", echo())
    client.replies(rid)
    with main_cluster.broker.client() as other:
        other.status(rid)
        assert other.status_answer(rid).code == "unknown-request"


def test_status_across_reconnection_with_a_fixed_routing_id(main_cluster):
    """3.2, 7.2: a client with a fixed routing id gets its results through STATUS after reconnecting."""
    routing_id = cip.new_id("fixed-client")
    with main_cluster.broker.client(routing_id=routing_id) as first:
        rid = first.request("Echo", "handle", echo(text="kept"))
        final = first.replies(rid)[-1]
    with main_cluster.broker.client(routing_id=routing_id) as second:
        second.status(rid)
        s = second.status_answer(rid)
        assert (s.status, s.body) == ("final", final.body)


def test_status_of_a_rejected_request_is_unknown(spawn):
    """4.8: a rejected REQUEST is not stored (no startup grace period: an unannounced type is rejected at once)."""
    client = spawn.client(spawn.broker(startup_grace_ms=0))
    rid = client.request("NoSuchIntent", "resolve", interaction("NoSuchIntent"))
    assert client.replies(rid)[-1].code == "unknown-intent"
    client.status(rid)
    assert client.status_answer(rid).code == "unknown-request"


def test_status_answers_in_the_middle_of_replies(client):
    rids = [client.request("Echo", "handle", echo(delayMs=200)) for _ in range(3)]
    for rid in rids:
        client.status(rid)
    for rid in rids:
        assert client.status_answer(rid).status in ("progress", "final")
        assert client.replies(rid)[-1].status == "final"


def test_final_body_is_utf8_json_with_non_ascii_text(client):
    text = "Grüße, 你好, emoji 🚀, quote \" and backslash \\"
    m = client.run("Echo", "handle", echo(text=text))
    assert m.json["handle"]["data"]["text"] == text
    assert json.loads(m.body.decode("utf-8"))["intent"]["parameters"]["text"] == text


def test_requests_sent_before_any_worker_registered_are_served_within_the_startup_grace_period(spawn):
    """6.6: a starting broker lets requests for types no worker announced yet wait for the workers to register."""
    broker = spawn.broker(startup_grace_ms=30000)
    c = spawn.client(broker)
    rids = [c.request("Echo", "handle", echo(text=f"early {i}"), deadline=30000) for i in range(20)]
    for rid in rids:  # all accepted and waiting: STATUS says queued
        c.status(rid)
        assert c.status_answer(rid).status == "progress"
    spawn.worker(broker, wait=False)
    for rid in rids:
        assert c.replies(rid)[-1].status == "final"


def test_after_the_startup_grace_period_an_unannounced_type_is_unknown(spawn):
    """6.6: requests queued for a type no worker announced end with unknown-intent when the period ends."""
    broker = spawn.broker(startup_grace_ms=1500, heartbeat_ms=250)
    c = spawn.client(broker)
    rid = c.request("NoSuchIntent", "resolve", interaction("NoSuchIntent"), deadline=30000)
    assert c.replies(rid)[-1].code == "unknown-intent"
    c.status(rid)  # it was accepted, so its ending is kept
    assert c.status_answer(rid).code == "unknown-intent"
