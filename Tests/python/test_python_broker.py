"""The other way round: Python plays the broker (cip.PyBroker, a ROUTER on the backend) for a real
`concierge worker` process with the example handlers. This checks the worker's side of CIP/Worker directly: READY,
heartbeats, every RESULT against the schemas, the intent definitions and the outcome rule (5.11), the copying of
bodies, the worker's checks of JOBs (5.12, W1-W7), DISCONNECT and re-registration, silence of the broker, and the
drain on SIGTERM (8.1). The worker registers with CIPW03 (5.15); its CIPW02 side (5.13: key, attempt, CANCEL) is
tested with JOBs and CANCELs in CIPW02 and in CIPW03, and its CIPW03 side with chained lifecycle JOBs (F9)."""

from __future__ import annotations

import json
import signal
import time

import pytest

import cip
from cip import CIPW, CIPW2, CIPW3, CIPW5, WORKER_SIGNATURES, interaction

HB = 250
EXAMPLE_TYPES = {b"Echo", b"RequestRide", b"SendMessage", b"SendPayment", b"StartWorkout"}


def in_version(broker, rid: bytes, frames: list[bytes]) -> list[bytes]:
    """Frames written for CIPW01, in the version the broker speaks to the worker (5.13, 5.15): F0 its signature and,
    for a JOB, an empty key and attempt 1 after the body (CIPW02 and later), then F9 = F4 (CIPW03: a job of one phase;
    F4 itself when the frame is missing), then an empty trace context (CIPW05). A JOB one frame short stays one frame
    short."""
    version = broker.version_of(rid)
    if not frames or frames[0] != CIPW or version == 1:
        return frames
    out = [WORKER_SIGNATURES[version], *frames[1:]]
    if len(out) >= 2 and out[1] == b"JOB":
        out += [b"", b"1"]
        if version >= 3:
            out.append(frames[4] if len(frames) > 4 else b"handle")
        if version >= 5:
            out += [b"", b""]  # F10, F11: no trace context (5.7)
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
    # 5.16 (CIPW04, and CIPW05's READY is CIPW04's): each type is followed by its definition, the JSON of
    # Schemas/intents/<type>.json.
    assert ready.frames[0] == CIPW5
    assert set(ready.frames[4::2]) == EXAMPLE_TYPES
    for intent_type, definition in zip(ready.frames[4::2], ready.frames[5::2]):
        announced = json.loads(definition)
        on_file = json.loads((cip.SCHEMAS / "intents" / f"{intent_type.decode()}.json").read_text())
        assert announced == on_file, f"{intent_type!r}: the announced definition differs from its file"


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
#
# The worker registers with CIPW03, which is CIPW02 plus chained jobs (5.15), and accepts any signature from the
# broker (W1). The CIPW02 tests below run twice: with the broker speaking CIPW02 to it (9-frame JOBs and CANCELs in
# CIPW02, as a broker of version 02 would send them) and speaking its own CIPW03 (10-frame JOBs of one phase, F9 = F4).


def test_the_worker_registers_with_cipw05(pair):
    """The reference worker speaks CIPW05 (5.7: JOB carries the trace context; 5.16: READY announces definitions;
    5.15: chained lifecycle jobs; 5.13: it cancels the Swift Task running a cancelled job): its READY, and every
    message after it, has F0 CIPW05."""
    broker, _, rid = pair
    assert broker.versions[rid] == 5, "the worker's READY is not CIPW05"
    assert broker.registered[rid].frames[0] == CIPW5
    beat = broker.next(lambda m: m.command == "HEARTBEAT" and m.routing_id == rid, timeout=5)
    assert beat.frames == [CIPW5, b"HEARTBEAT"]


def speaking(pair, version: int):
    """The pair, when its worker registered with `version` or later; else the test is skipped (the registration test
    fails instead)."""
    broker, _, rid = pair
    if broker.versions[rid] < version:
        pytest.skip(f"the worker registered with CIPW0{broker.versions[rid]} "
                    "(test_the_worker_registers_with_cipw04 fails)")
    return pair


@pytest.fixture
def worker2(pair):
    """The pair, when the worker speaks version 02 or later (it has keys, attempts and CANCEL)."""
    return speaking(pair, 2)


@pytest.fixture(params=[2, 3], ids=["sent-cipw02", "sent-cipw03"])
def pair2(worker2, request):
    """The pair, with PyBroker speaking CIPW02 (param 2: 9-frame JOBs, CIPW02 CANCEL and HEARTBEAT) or the worker's
    own version (3) to the worker; the worker answers in its own signature either way."""
    broker, _, rid = worker2
    if request.param < broker.versions[rid]:
        broker.send_versions[rid] = request.param
    return worker2


def own_signature(broker, rid: bytes) -> bytes:
    """The signature of the worker's READY: every message it sends has it (5.13, 5.15)."""
    return WORKER_SIGNATURES[broker.versions[rid]]


def test_key_and_attempt_reach_the_handler(pair2):
    """5.13: F7 and F8 of the JOB reach the handler (Echo answers what its context held)."""
    broker, _, rid = pair2
    result = broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="k"), key=b"key-1", attempt=3))
    assert result.frames[0] == own_signature(broker, rid)
    data = result.json["handle"]["data"]
    assert (data["attempt"], data["idempotencyKey"]) == (3, "key-1")
    plain = broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="no key")))
    assert plain.json["handle"]["data"]["attempt"] == 1 and "idempotencyKey" not in plain.json["handle"]["data"]


def test_a_raw_cipw02_job_is_run_by_the_cipw03_worker(worker2):
    """W1 and 5.13: a 9-frame CIPW02 JOB, written out frame by frame, is an ordinary job for the CIPW03 worker: run
    and answered (in the worker's own signature) with the key and attempt it carried."""
    broker, _, rid = worker2
    job_id = b"rawv2\x00\x00\x01"
    broker.jobs[job_id] = cip.SentJob(rid, "Echo", "handle", "handle")  # so that PyBroker checks the outcome rule
    broker.send(rid, [CIPW2, b"JOB", job_id, b"Echo", b"handle", b"3000",
                      b'{"intent":{"type":"Echo","parameters":{"text":"raw"}}}', b"key-raw", b"2"])
    result = broker.result(job_id)
    assert result.frames[0] == own_signature(broker, rid)
    assert (result.outcome, result.phase, result.last) == ("stop", "handle", True)
    data = result.json["handle"]["data"]
    assert (data["text"], data["attempt"], data["idempotencyKey"]) == ("raw", 2, "key-raw")
    broker.expect_no_result(0.3)


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
def test_unusable_v2_jobs_are_malformed(worker2, tail, what):
    """5.13: a CIPW02 JOB of another frame count, a key over 255 bytes or an attempt that is not a decimal of at
    least 1 is unusable: RESULT error malformed (its job id is usable). (A 10-frame CIPW02 JOB is malformed although
    a CIPW03 JOB has 10 frames: the worker reads a JOB by its own F0.)"""
    broker, _, rid = worker2
    job_id = b"v2bad\x00\x00\x01"
    broker.send(rid, [CIPW2, b"JOB", job_id, b"Echo", b"handle", b"3000",
                      b'{"intent":{"type":"Echo","parameters":{"text":"x"}}}', *tail])
    result = broker.result(job_id)
    assert (result.outcome, result.json["code"]) == ("error", "malformed"), what


# -- CIPW03 (5.15): chained lifecycle jobs ---------------------------------------------------------------------------


@pytest.fixture
def pair3(pair):
    """The pair, when the worker speaks version 03 (chained lifecycle jobs)."""
    return speaking(pair, 3)


PAYMENT = {"payee": {"displayName": "Anna"}, "currencyAmount": {"amount": "12.50", "currencyCode": "EUR"},
           "note": "lunch"}


def without(body: dict, key: str) -> dict:
    return {k: v for k, v in body.items() if k != key}


@pytest.mark.parametrize("phase,last,outcomes", [
    ("resolve", "handle", ["continue", "continue", "stop"]),
    ("resolve", "confirm", ["continue", "continue"]),
    ("resolve", "resolve", ["continue"]),
    ("confirm", "handle", ["continue", "stop"]),
], ids=["resolve-through-handle", "resolve-through-confirm", "resolve-only", "confirm-through-handle"])
def test_a_chained_job_answers_each_phase_under_its_job_id(pair3, phase, last, outcomes):
    """5.15: the worker runs F4's phase, and after each `continue` before F9 the next phase on that RESULT's body,
    sending a RESULT per phase under the JOB's job id, in phase order, up to F9's (PyBroker checks each against the
    outcome rule of its phase). Each body builds on the previous one: the phase's key is added and nothing else
    changes. Nothing follows the last RESULT."""
    broker, _, rid = pair3
    job = broker.job(rid, "SendPayment", phase, interaction("SendPayment", **PAYMENT), last=last)
    results = broker.results(job)
    assert [r.outcome for r in results] == outcomes
    phases = ["resolve", "confirm", "handle"]
    assert [r.phase for r in results] == phases[phases.index(phase):phases.index(last) + 1]
    assert [r.last for r in results] == [False] * (len(results) - 1) + [True]
    assert {r.job_id for r in results} == {job}
    assert all(r.frames[0] == own_signature(broker, rid) for r in results)
    for previous, result in zip(results, results[1:]):
        assert without(result.json, result.phase) == previous.json, "a phase changed what the previous one left"
    final = results[-1].json
    if last == "handle":
        assert final["handle"]["code"] == "success"
    if phase == "resolve":
        # The contact resolve found is written back into the intent (5.11), and the later phases ran on it.
        resolved = final["resolve"]["payee"]
        assert resolved["kind"] == "success" and resolved["value"]["displayName"].startswith("Anna ")
        assert final["intent"]["parameters"]["payee"] == resolved["value"]
        if "confirm" in final:
            assert final["confirm"]["data"]["payee"] == resolved["value"]["displayName"]
    broker.expect_no_result(0.3)


def test_a_chained_job_stops_at_the_first_phase_that_needs_the_user(pair3):
    """5.15: a job's last RESULT is the first that is not `continue`: a SendMessage whose recipient needs
    disambiguation stops after resolve (one RESULT), and a payment above the balance after confirm (two)."""
    broker, _, rid = pair3
    message = broker.job(rid, "SendMessage", "resolve",
                         interaction("SendMessage", recipient={"displayName": "John"}, content="hi"), last="handle")
    (only,) = broker.results(message)
    assert (only.outcome, only.phase, only.last) == ("stop", "resolve", True)
    assert only.json["resolve"]["recipient"]["kind"] == "disambiguation"
    payment = broker.job(rid, "SendPayment", "resolve", interaction(
        "SendPayment", payee={"displayName": "Anna"}, currencyAmount={"amount": "3000", "currencyCode": "EUR"}),
        last="handle")
    results = broker.results(payment)
    assert [(r.outcome, r.phase) for r in results] == [("continue", "resolve"), ("stop", "confirm")]
    assert results[-1].json["confirm"]["code"] == "failureInsufficientFunds"
    assert "handle" not in results[-1].json
    broker.expect_no_result(0.3)


def test_an_error_ends_a_chained_job(pair3):
    """5.15: an `error` RESULT is the job's last (here a validation error of the first phase)."""
    broker, _, rid = pair3
    job = broker.job(rid, "Echo", "resolve", interaction("Echo", text=5), last="handle")
    (only,) = broker.results(job)
    assert (only.outcome, only.json["code"], only.phase) == ("error", "invalid-type", "resolve")
    broker.expect_no_result(0.3)


@pytest.mark.parametrize("tail,phase,what", [
    ([b"", b"1"], b"resolve", "9 frames"),
    ([b"", b"1", b"handle", b"x"], b"resolve", "11 frames"),
    ([b"", b"1", b"lifecycle"], b"resolve", "F9 lifecycle"),
    ([b"", b"1", b""], b"resolve", "F9 empty"),
    ([b"", b"1", b"Handle"], b"resolve", "F9 not a phase word"),
    ([b"", b"1", b"resolve"], b"confirm", "F9 before F4"),
    ([b"", b"1", b"confirm"], b"handle", "F9 before F4 (handle)"),
], ids=["9-frames", "11-frames", "last-lifecycle", "last-empty", "last-capitalised", "confirm-through-resolve",
        "handle-through-confirm"])
def test_unusable_v3_jobs_are_malformed(pair3, tail, phase, what):
    """5.15: a CIPW03 JOB of another frame count is unusable (W3), and one whose F9 is not a job phase or comes
    before F4 is answered RESULT error malformed (W4); either way exactly one RESULT, and no phase runs."""
    broker, _, rid = pair3
    job_id = b"v3bad\x00\x00\x01"
    broker.send(rid, [CIPW3, b"JOB", job_id, b"Echo", phase, b"3000",
                      b'{"intent":{"type":"Echo","parameters":{"text":"x"}}}', *tail])
    result = broker.result(job_id)
    assert (result.outcome, result.json["code"]) == ("error", "malformed"), what
    broker.expect_no_result(0.3)


@pytest.mark.parametrize("wait,outcomes", [
    ("cpuMs", [("continue", "resolve"), ("cancelled", "confirm")]),
    ("delayMs", [("cancelled", "resolve")]),
], ids=["phase-finishes", "phase-stops"])
def test_cancel_stops_a_chain(pair3, wait, outcomes):
    """5.15: CANCEL of a chained job while its resolve runs. A resolve that finishes anyway (Echo's CPU burn ignores
    cancellation) is answered `continue`, and the next phase is not run but answered `cancelled` at once (the job's
    last RESULT); a resolve that stops for it (Echo's cancellable wait) is answered `cancelled` and is the last."""
    broker, _, rid = pair3
    # 3 s: the CANCEL must reach the worker while resolve still runs, even on a busy machine.
    job = broker.job(rid, "Echo", "resolve", interaction("Echo", text="chain", delayPhase="resolve", **{wait: 3000}),
                     last="handle")
    # JOBs are read in order: once a quick job sent after the chained one is answered, its resolve is running.
    assert broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="q"))).outcome == "stop"
    broker.cancel(rid, job)
    results = broker.results(job, timeout=10)
    assert [(r.outcome, r.phase) for r in results] == outcomes
    assert results[-1].json["code"] == "cancelled"
    broker.expect_no_result(0.3)
    assert broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="after"))).outcome == "stop"


def test_a_chained_job_keeps_its_key_and_attempt_to_handle(pair3):
    """5.15: F7 and F8 belong to the job's handle phase, which runs with the key and attempt of the JOB."""
    broker, _, rid = pair3
    job = broker.job(rid, "Echo", "resolve", interaction("Echo", text="k"), key=b"key-3", attempt=2, last="handle")
    results = broker.results(job)
    assert [r.phase for r in results] == ["resolve", "confirm", "handle"]
    for r in results[1:]:
        data = r.json[r.phase]["data"]
        assert (data["attempt"], data["idempotencyKey"]) == (2, "key-3")


def test_sigterm_drain_finishes_a_chained_job(pair3):
    """8.1 and 5.15: a worker draining on SIGTERM finishes the jobs it has, a chained job with every phase still to
    run (each RESULT under its job id) before DISCONNECT."""
    broker, proc, rid = pair3
    job = broker.job(rid, "Echo", "resolve", interaction("Echo", text="d", delayPhase="confirm", delayMs=600),
                     last="handle")
    first = broker.result(job)
    assert (first.outcome, first.phase) == ("continue", "resolve")  # confirm is now waiting its 600 ms
    proc.signal(signal.SIGTERM)
    broker.next(lambda m: m.command == "DRAIN")
    rest = broker.results(job)
    assert [(r.outcome, r.phase) for r in rest] == [("continue", "confirm"), ("stop", "handle")]
    broker.next(lambda m: m.command == "DISCONNECT")
    assert proc.wait(10) == 0
