"""The other way round: Python plays the broker (cip.PyBroker, a ROUTER on the backend) for a real
`concierge worker` process with the example handlers. This checks the worker's side of CIP/Worker directly: READY,
heartbeats, every RESULT against the schemas, the intent definitions and the outcome rule (5.11), the copying of
bodies, the worker's checks of JOBs (5.12, W1-W7), DISCONNECT and re-registration, silence of the broker, and the
drain on SIGTERM (8.1)."""

from __future__ import annotations

import json
import signal
import time

import pytest

from cip import CIPW, CIPW2, interaction

HB = 250
EXAMPLE_TYPES = {b"Echo", b"RequestRide", b"SendMessage", b"SendPayment", b"StartWorkout"}


def in_version(broker, rid: bytes, frames: list[bytes]) -> list[bytes]:
    """Frames written for CIPW01, as the worker's version has them (5.13): F0 its signature and, for a CIPW02
    JOB, an empty key and attempt 1 after the body (a JOB one frame short stays one frame short)."""
    if not frames or frames[0] != CIPW or broker.versions.get(rid, 1) == 1:
        return frames
    out = [CIPW2, *frames[1:]]
    if len(out) >= 2 and out[1] == b"JOB":
        out += [b"", b"1"]
    return out


@pytest.fixture
def pair(spawn):
    """A Python broker and a real worker registered with it: (broker, worker process, routing id)."""
    broker = spawn.pybroker(heartbeat_ms=HB)
    proc = spawn.real_worker(broker, name="swift-worker", capacity=3)
    ready = broker.ready()
    return broker, proc, ready.routing_id


def test_ready_announces_capacity_name_and_the_example_types(spawn):
    broker = spawn.pybroker(heartbeat_ms=HB)
    spawn.real_worker(broker, name="announcer", capacity=7)
    ready = broker.ready()
    assert ready.frames[2:4] == [b"7", b"announcer"]
    assert ready.routing_id == b"announcer"
    assert set(ready.frames[4:]) == EXAMPLE_TYPES


def test_worker_heartbeats(pair):
    """7.1: once per interval after READY, busy or not."""
    broker, _, rid = pair
    job = broker.job(rid, "Echo", "handle", interaction("Echo", text="x", delayMs=1200))
    start = time.monotonic()
    beats = 0
    while time.monotonic() - start < 1.0:
        broker.next(lambda m: m.command == "HEARTBEAT" and m.routing_id == rid, timeout=2)
        beats += 1
    assert beats >= 2, "a busy worker still heartbeats"
    assert broker.result(job).outcome == "stop"


@pytest.mark.parametrize("intent_type,phase,parameters,outcome", [
    ("SendMessage", "resolve", {"recipient": {"displayName": "Anna"}, "content": "hi"}, "continue"),
    ("SendMessage", "resolve", {"recipient": {"displayName": "John"}, "content": "hi"}, "stop"),
    ("SendMessage", "resolve", {"content": "hi"}, "stop"),
    ("SendPayment", "confirm", {"payee": {"displayName": "Anna"}, "currencyAmount": {"amount": "12", "currencyCode":
                                                                                        "EUR"}}, "continue"),
    ("SendPayment", "confirm", {"payee": {"displayName": "Anna"}, "currencyAmount": {"amount": "3000",
                                                                                      "currencyCode": "EUR"}}, "stop"),
    ("StartWorkout", "handle", {"workoutName": "yoga", "isOpenEnded": True}, "stop"),
    ("Echo", "handle", {"text": "x"}, "stop"),
])
def test_results_follow_the_outcome_rule(pair, intent_type, phase, parameters, outcome):
    """5.11: continue/stop by the outcome rule (PyBroker checks every RESULT against it and the schemas)."""
    broker, _, rid = pair
    job = broker.job(rid, intent_type, phase, interaction(intent_type, **parameters))
    result = broker.result(job)
    assert result.outcome == outcome
    assert phase in result.json


def test_worker_copies_other_keys_and_overwrites_the_phase_key(pair):
    """4.2 and 5.11 step 6: the phase's key is overwritten, every other key copied unchanged."""
    broker, _, rid = pair
    body = interaction("Echo", identifier="id-1", text="x")
    body["x-extra"] = {"keep": [1, "two", None]}
    body["handle"] = {"code": "failure", "userActivity": {"activityType": "old", "userInfo": {}}}
    result = broker.result(broker.job(rid, "Echo", "confirm", body))
    out = result.json
    assert out["x-extra"] == body["x-extra"]
    assert out["handle"] == body["handle"]  # a later phase's key, copied as it is (4.2)
    assert out["intent"]["identifier"] == "id-1"
    assert out["confirm"]["code"] == "ready"


def test_job_with_no_time_left_is_still_run(pair):
    """5.7: F5 is a hint; the worker runs the job even when it is 0."""
    broker, _, rid = pair
    result = broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="late"), time_left=0))
    assert result.outcome == "stop" and result.json["handle"]["code"] == "success"


def test_job_ids_are_echoed_and_jobs_answered_in_any_order(pair):
    """5.1 and 5.7: up to capacity jobs at once, answered in any order, job ids echoed unchanged."""
    broker, _, rid = pair
    slow = broker.job(rid, "Echo", "handle", interaction("Echo", text="slow", delayMs=600), job_id=b"\xffslow\x00\x01\x02")
    fast = broker.job(rid, "Echo", "handle", interaction("Echo", text="fast"), job_id=b"fast\x00\x00\x00\x00")
    first = broker.next(lambda m: m.command == "RESULT")
    assert first.job_id == fast
    broker.jobs.pop(fast, None)
    assert broker.result(slow).json["handle"]["data"]["text"] == "slow"


@pytest.mark.parametrize("frames,code", [
    ([CIPW, b"JOB", b"badjob01", b"Echo", b"handle", b"3000"], "malformed"),                         # W3: 6 frames
    ([CIPW, b"JOB", b"badjob02", b"Echo", b"lifecycle", b"3000", b'{"intent":{"type":"Echo"}}'], "malformed"),  # W4
    ([CIPW, b"JOB", b"badjob03", b"Ec\xffho", b"handle", b"3000", b'{"intent":{"type":"Echo"}}'], "malformed"),  # W5
    ([CIPW, b"JOB", b"badjob04", b"Echo", b"handle", b"soon", b'{"intent":{"type":"Echo"}}'], "malformed"),     # W6
    ([CIPW, b"JOB", b"badjob05", b"Echo", b"handle", b"3000", b""], "malformed"),                    # W7
    ([CIPW, b"JOB", b"badjob06", b"Nope", b"handle", b"3000", b'{"intent":{"type":"Nope"}}'], "unknown-intent"),
    ([CIPW, b"JOB", b"badjob07", b"Echo", b"handle", b"3000", b'{"intent":{"type":"SendMessage"}}'], "bad-body"),
    ([CIPW, b"JOB", b"badjob08", b"Echo", b"resolve", b"3000", b'{"intent":{"type":"Echo","parameters":{"text":5}}}'],
     "invalid-type"),
], ids=["6-frames", "lifecycle-phase", "type-not-utf8", "time-left-not-decimal", "empty-body", "not-served",
        "type-mismatch", "invalid-type"])
def test_worker_answers_unusable_jobs_with_error_results(pair, frames, code):
    broker, _, rid = pair
    broker.send(rid, in_version(broker, rid, frames))
    result = broker.result(frames[2])
    assert (result.outcome, result.json["code"]) == ("error", code)
    if code == "invalid-type":
        assert (result.json["intent"], result.json["parameter"]) == ("Echo", "text")


@pytest.mark.parametrize("frames", [
    [CIPW, b"JOB", b"short", b"Echo", b"handle", b"3000", b"{}"],   # W3 without an 8-byte job id: ignored
    [b"CIPW09", b"JOB", b"badjob09", b"Echo", b"handle", b"3000", b"{}"],  # W1
    [CIPW],                                                          # W1
    [CIPW, b"PING"],                                                 # W2
    [CIPW, b"ERROR", b"malformed", b"some message"],                # an ERROR is only logged
], ids=["short-job-id", "other-version", "one-frame", "unknown-command", "error"])
def test_worker_ignores_what_it_cannot_use(pair, frames):
    """5.12 W1-W3: ignored (logged); the worker never answers anything but a JOB and stays registered."""
    broker, proc, rid = pair
    broker.send(rid, in_version(broker, rid, frames))
    broker.expect_no_result(0.3)
    assert proc.alive()
    assert broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="still here"))).outcome == "stop"


def test_disconnect_makes_the_worker_register_again(pair):
    """5.10: on DISCONNECT a worker closes its socket, opens a new one and sends READY again."""
    broker, _, rid = pair
    broker.send(rid, [broker.signature(rid), b"DISCONNECT"])
    again = broker.ready()
    assert again.routing_id == rid
    assert broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="back"))).outcome == "stop"


def test_silent_broker_makes_the_worker_reconnect(pair):
    """7.1: a worker that hears nothing for liveness x interval reconnects and sends READY again."""
    broker, _, rid = pair
    broker.silent = True
    again = broker.ready(timeout=10)
    broker.silent = False
    assert again.routing_id == rid


def test_sigterm_drains_the_worker(pair):
    """8.1: on SIGTERM the worker sends DRAIN, finishes its running job, and after the acknowledgement sends
    DISCONNECT; then it exits."""
    broker, proc, rid = pair
    job = broker.job(rid, "Echo", "handle", interaction("Echo", text="last one", delayMs=500))
    # The worker reads JOBs in order: once a quick job sent after the slow one is answered, the slow one has been
    # read and its handler started (capacity 3), so SIGTERM finds it running.
    quick = broker.job(rid, "Echo", "handle", interaction("Echo", text="quick"))
    assert broker.result(quick).json["handle"]["data"]["text"] == "quick"
    proc.signal(signal.SIGTERM)
    broker.next(lambda m: m.command == "DRAIN")  # PyBroker acknowledges it at once
    result = broker.result(job)
    assert result.json["handle"]["data"]["text"] == "last one"
    broker.next(lambda m: m.command == "DISCONNECT")
    assert proc.wait(10) == 0


# -- CIPW02 (5.13): the worker's side of keys, attempts and CANCEL --------------------------------------------------


def test_the_worker_registers_with_cipw02(pair):
    """The reference worker speaks CIPW02 (5.13: it cancels the Swift Task running a cancelled job)."""
    broker, _, rid = pair
    assert broker.versions[rid] == 2, "the worker's READY is not CIPW02"


@pytest.fixture
def pair2(pair):
    broker, _, rid = pair
    if broker.versions[rid] != 2:
        pytest.skip("the worker registered with CIPW01 (test_the_worker_registers_with_cipw02 fails)")
    return pair


def test_key_and_attempt_reach_the_handler(pair2):
    """5.13: F7 and F8 of the JOB reach the handler (Echo answers what its context held)."""
    broker, _, rid = pair2
    result = broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="k"), key=b"key-1", attempt=3))
    assert result.frames[0] == CIPW2
    data = result.json["handle"]["data"]
    assert (data["attempt"], data["idempotencyKey"]) == (3, "key-1")
    plain = broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="no key")))
    assert plain.json["handle"]["data"]["attempt"] == 1 and "idempotencyKey" not in plain.json["handle"]["data"]


def test_cancel_stops_a_running_handler(pair2):
    """5.13: CANCEL stops the job's handler (Echo's delayMs wait is cancellable) and the job is answered
    `cancelled`, once; the worker's other jobs go on."""
    broker, _, rid = pair2
    slow = broker.job(rid, "Echo", "handle", interaction("Echo", text="slow", delayMs=20000))
    # JOBs are read in order: once a quick job sent after the slow one is answered, the slow one is running.
    assert broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="q"))).outcome == "stop"
    broker.cancel(rid, slow)
    sent = time.monotonic()
    result = broker.result(slow, timeout=5)
    assert (result.outcome, result.json.get("code")) == ("cancelled", "cancelled"), result.frames
    assert result.received_at - sent < 3
    broker.cancel(rid, slow)  # answered already: ignored
    broker.cancel(rid, b"nojob\x00\x00\x00")  # unknown: ignored
    broker.expect_no_result(0.3)
    assert broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="after"))).outcome == "stop"


def test_a_handler_that_finished_is_answered_as_usual_after_cancel(pair2):
    """5.13: a CANCEL that arrives after the handler finished changes nothing: its own result is answered."""
    broker, _, rid = pair2
    job = broker.job(rid, "Echo", "handle", interaction("Echo", text="done"))
    result = broker.result(job)
    broker.cancel(rid, job)
    assert result.outcome == "stop"
    broker.expect_no_result(0.3)


@pytest.mark.parametrize("tail,what", [
    ([b""], "8 frames"),
    ([b"", b"1", b"x"], "10 frames"),
    ([b"k" * 256, b"1"], "key of 256 bytes"),
    ([b"", b"0"], "attempt 0"),
    ([b"", b"one"], "attempt not a decimal"),
    ([b"", b""], "attempt empty"),
], ids=["8-frames", "10-frames", "long-key", "attempt-0", "attempt-word", "attempt-empty"])
def test_unusable_v2_jobs_are_malformed(pair2, tail, what):
    """5.13: a CIPW02 JOB of another frame count, a key over 255 bytes or an attempt that is not a decimal of at
    least 1 is unusable: RESULT error malformed (its job id is usable)."""
    broker, _, rid = pair2
    job_id = b"v2bad\x00\x00\x01"
    broker.send(rid, [CIPW2, b"JOB", job_id, b"Echo", b"handle", b"3000",
                      b'{"intent":{"type":"Echo","parameters":{"text":"x"}}}', *tail])
    result = broker.result(job_id)
    assert (result.outcome, result.json["code"]) == ("error", "malformed"), what
