"""The other way round: Python plays the broker (cip.PyBroker, a ROUTER on the backend) for a real
`concierge worker` process with the example handlers. This checks the worker's side of CIP/Worker directly: READY,
heartbeats, every RESULT against the schemas, the intent definitions and the outcome rule (5.11), the copying of
bodies, the worker's checks of JOBs (5.12, W1-W7), DISCONNECT and re-registration, silence of the broker, and the
drain on SIGTERM (8.1). The worker registers with CIPW06 (5.17: JOBs packed into 4 frames; otherwise CIPW05); its
CIPW02 side (5.13: key, attempt, CANCEL) is tested with JOBs and CANCELs in CIPW02, CIPW03 and its own version, its
CIPW03 side with chained lifecycle JOBs (F9), its checks of JOBs both on packed JOBs and on the frames of CIPW05 (which
it takes too, W1), the trace context (5.7, 5.17) in both forms, and its fall back to CIPW05 when a broker of version
05 refuses its CIPW06 READY (5.17)."""

from __future__ import annotations

import json
import signal
import time

import pytest

import cip
from cip import CIPW, CIPW2, CIPW3, CIPW5, CIPW6, JOB_PHASES, WORKER_SIGNATURES, interaction

HB = 250
EXAMPLE_TYPES = {b"Echo", b"RequestRide", b"SendMessage", b"SendPayment", b"StartWorkout"}


def in_version(broker, rid: bytes, frames: list[bytes]) -> list[bytes]:
    """Frames written for CIPW01, in the version the broker speaks to the worker (5.13, 5.15, 5.17): F0 its signature
    and, for a JOB, an empty key and attempt 1 after the body (CIPW02 and later), then F9 = F4 (CIPW03: a job of one
    phase; F4 itself when the frame is missing); no trace context (CIPW05: 10 frames). A JOB one frame short stays one
    frame short. In CIPW06 a JOB is packed (5.17): job id, F3, F4 and F5 go into the header, the body (if any) after
    it. A JOB with no packed form (a job id that is not 8 bytes, a phase that has no byte, a time left that is not a
    number) skips the test: its CIPW06 counterpart is among test_unusable_v6_jobs_are_malformed and
    test_a_v6_header_shorter_than_8_bytes_is_ignored, and the frames themselves still run in CIPW05 (fixture
    `sent`)."""
    version = broker.version_of(rid)
    if not frames or frames[0] != CIPW or version == 1:
        return frames
    out = [WORKER_SIGNATURES[version], *frames[1:]]
    if len(out) >= 2 and out[1] == b"JOB":
        if version >= 6:
            return packed(frames)
        out += [b"", b"1"]
        if version >= 3:
            out.append(frames[4] if len(frames) > 4 else b"handle")
    return out


def packed(frames: list[bytes]) -> list[bytes]:
    """A CIPW01 JOB of at least 6 frames as a CIPW06 JOB (5.17): [CIPW06, JOB, header, body] (no body when it had
    none), no key, attempt 1, the last phase = the phase."""
    job_id, intent_type, phase, left = frames[2:6]
    if len(job_id) != 8:
        pytest.skip("CIPW06 has no job id frame: the job id is the header's first 8 bytes, and a header shorter than "
                    "8 bytes is test_a_v6_header_shorter_than_8_bytes_is_ignored")
    if phase.decode("ascii", "replace") not in JOB_PHASES:
        pytest.skip("a phase word that is not a job phase has no byte in CIPW06: the bytes 3 and up are "
                    "test_unusable_v6_jobs_are_malformed[phase-3]")
    if not cip.is_decimal_frame(left):
        pytest.skip("W6 cannot fail in CIPW06 (5.17): the time left is a binary number, any value of which is "
                    "usable (test_any_packed_time_left_is_run)")
    header = cip.pack_job_header(job_id, intent_type, phase.decode(), time_left=int(left))
    return [CIPW6, b"JOB", header, *frames[6:]]


@pytest.fixture
def pair(spawn):
    """A Python broker and a real worker registered with it: (broker, worker process, routing id)."""
    broker = spawn.pybroker(heartbeat_ms=HB)
    proc = spawn.real_worker(broker, name="swift-worker", capacity=3)
    ready = broker.ready()
    return broker, proc, ready.routing_id


@pytest.fixture(params=[None, 5], ids=["sent-own", "sent-cipw05"])
def sent(pair, request):
    """The pair, with PyBroker speaking the worker's own version to it (CIPW06: packed JOBs, 5.17) or CIPW05 (10 or
    12 frames, 5.7), which the worker takes too (W1): the checks of a JOB's frames (W3-W7) are the worker's in both
    forms."""
    broker, _, rid = pair
    if request.param is not None and request.param < broker.versions[rid]:
        broker.send_versions[rid] = request.param
    return pair


def test_ready_announces_capacity_name_and_the_example_types(spawn):
    broker = spawn.pybroker(heartbeat_ms=HB)
    spawn.real_worker(broker, name="announcer", capacity=7)
    ready = broker.ready()
    assert ready.frames[2:4] == [b"7", b"announcer"]
    assert ready.routing_id == b"announcer"
    # 5.16 (CIPW04, and the READY of CIPW05 and CIPW06 is CIPW04's): each type is followed by its definition, the
    # JSON of Schemas/intents/<type>.json.
    assert ready.frames[0] == CIPW6
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
def test_worker_answers_unusable_jobs_with_error_results(sent, frames, code):
    """5.12 W3-W7 and 5.11 steps 2-4, in CIPW05 frames and packed (5.17; a case with no packed form is skipped there,
    see in_version)."""
    broker, _, rid = sent
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
def test_worker_ignores_what_it_cannot_use(sent, frames):
    """5.12 W1-W3: ignored (logged); the worker never answers anything but a JOB and stays registered."""
    broker, proc, rid = sent
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
# The worker registers with CIPW06, which has every field of CIPW02 (plus chained jobs, 5.15, definitions, 5.16, the
# trace context, 5.7, and packed JOBs, 5.17), and accepts any signature from the broker (W1). The CIPW02 tests below
# run three times: with the broker speaking CIPW02 to it (9-frame JOBs and CANCELs in CIPW02, as a broker of version
# 02 would send them), CIPW03 (10-frame JOBs of one phase, F9 = F4) and its own CIPW06 (packed JOBs).


def test_the_worker_registers_with_cipw06(pair):
    """The reference worker speaks CIPW06 (5.17: a JOB packed into 4 frames; 5.7: JOB carries the trace context;
    5.16: READY announces definitions; 5.15: chained lifecycle jobs; 5.13: it cancels the Swift Task running a
    cancelled job): its READY, and every message after it, has F0 CIPW06."""
    broker, _, rid = pair
    assert broker.versions[rid] == 6, "the worker's READY is not CIPW06"
    assert broker.registered[rid].frames[0] == CIPW6
    beat = broker.next(lambda m: m.command == "HEARTBEAT" and m.routing_id == rid, timeout=5)
    assert beat.frames == [CIPW6, b"HEARTBEAT"]


def speaking(pair, version: int):
    """The pair, when its worker registered with `version` or later; else the test is skipped (the registration test
    fails instead)."""
    broker, _, rid = pair
    if broker.versions[rid] < version:
        pytest.skip(f"the worker registered with CIPW0{broker.versions[rid]} "
                    "(test_the_worker_registers_with_cipw06 fails)")
    return pair


@pytest.fixture
def worker2(pair):
    """The pair, when the worker speaks version 02 or later (it has keys, attempts and CANCEL)."""
    return speaking(pair, 2)


@pytest.fixture(params=[2, 3, None], ids=["sent-cipw02", "sent-cipw03", "sent-own"])
def pair2(worker2, request):
    """The pair, with PyBroker speaking CIPW02 (param 2: 9-frame JOBs, CIPW02 CANCEL and HEARTBEAT), CIPW03 (10-frame
    JOBs) or the worker's own version (CIPW06: packed JOBs, 5.17) to the worker; the worker answers in its own
    signature either way."""
    broker, _, rid = worker2
    if request.param is not None and request.param < broker.versions[rid]:
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


# -- CIPW06 (5.17): packed JOBs, and the fall back to CIPW05 -----------------------------------------------------------


TRACEPARENT = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
# 4.2: a version other than 00 and ff whose first 55 bytes have the form of version 00, followed by `-` and what that
# later version appends (ignored); at most 512 bytes.
LATER_TRACEPARENT = b"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-a-later-version-appends"
LONGEST_TRACEPARENT = LATER_TRACEPARENT[:56] + b"x" * (512 - 56)
ECHO_BODY = b'{"intent":{"type":"Echo","parameters":{"text":"x"}}}'
V6_JOB_ID = b"v6bad\x00\x00\x01"


@pytest.fixture
def pair6(pair):
    """The pair, when the worker speaks version 06 (packed JOBs)."""
    return speaking(pair, 6)


def v6_header(intent_type: str | bytes = "Echo", phase: str | int = "handle", **kw) -> bytes:
    """A CIPW06 JOB header (5.17) with job id V6_JOB_ID, by default a usable handle job of Echo."""
    return cip.pack_job_header(V6_JOB_ID, intent_type, phase, **kw)


def u16(n: int) -> bytes:
    return n.to_bytes(2, "little")


TIME_AND_ATTEMPT = (3000).to_bytes(8, "little") + (1).to_bytes(4, "little")


@pytest.mark.parametrize("tail", [
    [V6_JOB_ID + b"\x02", ECHO_BODY],                                     # W3: the header stops after the phase
    [v6_header()[:-1], ECHO_BODY],                                        # W3: no key length
    [v6_header() + b"\x00", ECHO_BODY],                                   # W3: a byte after the key
    [v6_header(trace=(TRACEPARENT, b"k=v")) + b"!", ECHO_BODY],           # W3: a byte after the tracestate
    [V6_JOB_ID + b"\x02\x02" + TIME_AND_ATTEMPT + b"\xc8Echo\x00", ECHO_BODY],  # W3: type length 200, 5 bytes left
    [v6_header()[:-1] + b"\x09abc", ECHO_BODY],                           # W3: key length 9, 3 bytes left
    [v6_header() + u16(55) + TRACEPARENT[:20], ECHO_BODY],                # W3: traceparent past the end
    [v6_header() + u16(55) + TRACEPARENT + u16(10) + b"k=v", ECHO_BODY],  # W3: tracestate past the end
    [v6_header() + u16(55), ECHO_BODY],                                   # W3: no tracestate length
    [v6_header(attempt=0), ECHO_BODY],                                    # W3: attempt 0
    [v6_header(trace=(b"00-zz", b"")), ECHO_BODY],                        # W3: traceparent malformed (4.2)
    [v6_header(trace=(TRACEPARENT.upper(), b"")), ECHO_BODY],             # W3: not lowercase hex
    [v6_header(trace=(b"ff" + TRACEPARENT[2:], b"")), ECHO_BODY],         # W3: version ff
    [v6_header(trace=(TRACEPARENT[:3] + b"0" * 32 + TRACEPARENT[35:], b"")), ECHO_BODY],  # W3: trace id all zeros
    [v6_header(trace=(TRACEPARENT + b"-x", b"")), ECHO_BODY],             # W3: version 00 longer than 55 bytes
    [v6_header(trace=(b"", b"k=v")), ECHO_BODY],                          # W3: a tracestate without traceparent
    [v6_header(trace=(TRACEPARENT, b"k=\tv")), ECHO_BODY],                # W3: tracestate not printable ASCII
    [v6_header(trace=(TRACEPARENT, b"k" * 513)), ECHO_BODY],              # W3: tracestate of 513 bytes
    [v6_header(trace=(LONGEST_TRACEPARENT + b"x", b"")), ECHO_BODY],      # W3: traceparent of 513 bytes
    [v6_header(), ECHO_BODY, b"x"],                                       # W3: 5 frames
    [v6_header()],                                                        # W3: 3 frames
    [V6_JOB_ID, b"Echo", b"handle", b"3000", ECHO_BODY, b"", b"1", b"handle"],  # W3: CIPW05's 10 frames, F0 CIPW06
    [v6_header(phase=3, last=3), ECHO_BODY],                              # W4: phase byte 3
    [v6_header(phase=255, last=255), ECHO_BODY],                          # W4: phase byte 255
    [v6_header(phase="handle", last=3), ECHO_BODY],                       # W4: last phase byte 3
    [v6_header(phase="handle", last="confirm"), ECHO_BODY],               # W4: last phase before the phase
    [v6_header(phase="confirm", last="resolve"), ECHO_BODY],              # W4: last phase before the phase
    [v6_header(intent_type=b"Ec\xffho"), ECHO_BODY],                      # W5: type not UTF-8
    [v6_header(intent_type=b"Ech\xc3"), ECHO_BODY],                       # W5: type ends inside a character
    [v6_header(intent_type=b""), ECHO_BODY],                              # W5: empty type
    [v6_header(), b""],                                                   # W7: empty body
], ids=["header-9-bytes", "no-key-length", "byte-after-key", "byte-after-tracestate", "type-past-end",
        "key-past-end", "traceparent-past-end", "tracestate-past-end", "no-tracestate-length", "attempt-0",
        "traceparent-malformed", "traceparent-uppercase", "traceparent-version-ff", "trace-id-zero",
        "traceparent-00-too-long", "tracestate-without-traceparent", "tracestate-tab", "tracestate-513",
        "traceparent-513", "5-frames", "3-frames", "10-frames", "phase-3", "phase-255", "last-phase-3",
        "handle-through-confirm", "confirm-through-resolve", "type-not-utf8", "type-truncated-utf8", "type-empty",
        "empty-body"])
def test_unusable_v6_jobs_are_malformed(pair6, tail):
    """5.17 and 5.12 W3-W7: a CIPW06 JOB whose header's lengths do not add up (a length past the end, bytes left
    over), with an attempt of 0, a trace context that breaks 4.2, another frame count than 4, a phase byte other than
    0 to 2 or a last phase before the phase, an empty or ill-formed type or an empty body is answered RESULT error
    malformed, the job id (the header's first 8 bytes) echoed; exactly one RESULT, no phase runs, and the worker goes
    on."""
    broker, proc, rid = pair6
    assert len(tail[0]) >= 8, "a header of at least 8 bytes (its job id): the JOB is answered (W3)"
    broker.send(rid, [CIPW6, b"JOB", *tail])
    result = broker.result(V6_JOB_ID)
    assert (result.outcome, result.json["code"]) == ("error", "malformed"), result
    assert result.frames[0] == CIPW6
    broker.expect_no_result(0.3)
    assert proc.alive()
    assert broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="after"))).outcome == "stop"


@pytest.mark.parametrize("tail", [
    [],
    [b""],
    [b"", ECHO_BODY],
    [b"v6short", ECHO_BODY],
    [b"\x00" * 7],
    [b"v6short", ECHO_BODY, b"x"],
], ids=["2-frames", "empty-header-3-frames", "empty-header", "7-byte-header", "7-bytes-3-frames", "7-bytes-5-frames"])
def test_a_v6_header_shorter_than_8_bytes_is_ignored(pair6, tail):
    """5.17 and W3: a CIPW06 JOB without a header of at least 8 bytes has no job id to answer: it is ignored (logged),
    and the worker stays registered and runs the next job."""
    broker, proc, rid = pair6
    broker.send(rid, [CIPW6, b"JOB", *tail])
    broker.expect_no_result(0.5)
    assert proc.alive()
    assert broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="still here"))).outcome == "stop"


@pytest.mark.parametrize("trace,seen", [
    (None, None),
    ((b"", b""), None),
    ((TRACEPARENT, b""), TRACEPARENT),
    ((TRACEPARENT, b"vendor=1,other=two"), TRACEPARENT),
    ((LATER_TRACEPARENT, b"k=v"), LATER_TRACEPARENT),
], ids=["none", "empty", "traceparent", "with-tracestate", "later-version"])
def test_the_trace_context_of_a_job_reaches_the_handler(sent, trace, seen):
    """5.7 and 5.17: the trace context of a JOB (CIPW05: F10/F11; CIPW06: after the key at the end of the header)
    is the handler's (Echo answers the traceparent its context holds). A job without one (CIPW05: 10 frames; CIPW06:
    a header that ends after the key) or with an empty one (F10/F11 empty; lengths 0 and 0) has none. The key and
    attempt reach the handler alongside."""
    broker, _, rid = sent
    job = broker.job(rid, "Echo", "handle", interaction("Echo", text="traced"), key=b"key-t", attempt=4, trace=trace)
    result = broker.result(job)
    assert result.frames[0] == own_signature(broker, rid)
    data = result.json["handle"]["data"]
    assert data.get("traceparent") == (seen.decode() if seen is not None else None), data
    assert (data["text"], data["attempt"], data["idempotencyKey"]) == ("traced", 4, "key-t")


def test_the_largest_packed_header_is_read(pair6):
    """5.17: a header of 1,562 bytes, the most there is (an intent type and a key of 255 bytes, a traceparent and a
    tracestate of 512), is usable: its type, served by nobody, is answered unknown-intent (5.11 step 2); an Echo job
    with a key and trace context of that size, the largest attempt and time left, runs and its handler sees them."""
    broker, _, rid = pair6
    trace = (LONGEST_TRACEPARENT, b"s" * 512)
    unknown = "X" * 255
    header = cip.pack_job_header(V6_JOB_ID, unknown, "handle", key=b"k" * 255, trace=trace)
    assert len(header) == 1562
    broker.send(rid, [CIPW6, b"JOB", header, cip.encode(interaction(unknown))])
    result = broker.result(V6_JOB_ID)
    assert (result.outcome, result.json["code"]) == ("error", "unknown-intent"), result
    job = broker.job(rid, "Echo", "handle", interaction("Echo", text="big"), key=b"k" * 255, attempt=2**32 - 1,
                     time_left=2**64 - 1, trace=trace)
    data = broker.result(job).json["handle"]["data"]
    assert (data["text"], data["attempt"], data["idempotencyKey"]) == ("big", 2**32 - 1, "k" * 255)
    assert data["traceparent"] == LONGEST_TRACEPARENT.decode()


@pytest.mark.parametrize("time_left", [0, 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1])
def test_any_packed_time_left_is_run(pair6, time_left):
    """5.17: the time left is an unsigned 8-byte number, so W6 cannot fail: whatever its value, the job is run (5.7:
    a hint, not a limit)."""
    broker, proc, rid = pair6
    result = broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="t"), time_left=time_left))
    assert result.outcome == "stop" and result.json["handle"]["data"]["text"] == "t"
    assert proc.alive()


def test_a_packed_chained_job_runs_every_phase(pair6):
    """5.17 and 5.15: a packed JOB's last phase byte chains the phases as F9 does: resolve through handle, a RESULT
    per phase under the header's job id, the key and attempt of the header for handle."""
    broker, _, rid = pair6
    job = broker.job(rid, "Echo", "resolve", interaction("Echo", text="chain"), key=b"key-6", attempt=3,
                     last="handle", trace=(TRACEPARENT, b""))
    results = broker.results(job)
    assert [(r.outcome, r.phase) for r in results] == [("continue", "resolve"), ("continue", "confirm"),
                                                       ("stop", "handle")]
    assert all(r.frames[0] == CIPW6 for r in results)
    data = results[-1].json["handle"]["data"]
    assert (data["attempt"], data["idempotencyKey"], data["traceparent"]) == (3, "key-6", TRACEPARENT.decode())


def pybroker_of(spawn, max_version: int, heartbeat_ms: int = HB) -> cip.PyBroker:
    """A Python broker that speaks CIPW01 to CIPW0<max_version> only: one of an older version (5.17) below 6."""
    b = cip.PyBroker(f"ipc://{spawn.run_dir}/{spawn._name('pyb')}.sock", heartbeat_ms=heartbeat_ms,
                     max_version=max_version)
    spawn.closables.append(b)
    return b


def test_a_broker_of_version_05_makes_the_worker_fall_back_to_cipw05(spawn):
    """5.17, falling back: a broker that speaks only versions 01 to 05 answers the worker's CIPW06 READY with ERROR
    unsupported-version (check 2 of 5.12; F0 CIPW01, as the READY's F0 is no signature it speaks, 5.9), and does not
    register it. The worker registers again at once (well within the 3 s of silence after which it would reconnect
    anyway, 7.1), on a new connection under the same routing id, with a CIPW05 READY announcing what the CIPW06 one
    did; it is then spoken to in CIPW05 (a 10-frame JOB, 12 with a trace context) and answers in CIPW05. It keeps to
    version 05 on that endpoint: after DISCONNECT it registers again with CIPW05, not CIPW06."""
    broker = pybroker_of(spawn, 5, heartbeat_ms=1000)
    proc = spawn.real_worker(broker, name="falls-back", capacity=2)
    refused = broker.refusal()
    assert (refused.command, refused.frames[0], refused.routing_id) == ("READY", CIPW6, b"falls-back"), refused
    ready = broker.ready(timeout=10)
    assert (ready.frames[0], ready.routing_id) == (CIPW5, b"falls-back"), ready
    assert ready.frames[1:] == refused.frames[1:], "the CIPW05 READY announces what the CIPW06 one did"
    assert ready.received_at - refused.received_at < 1.5, "the worker registers again at once (5.17)"
    rid = ready.routing_id
    assert broker.versions[rid] == 5 and rid in broker.registered
    beat = broker.next(lambda m: m.command == "HEARTBEAT" and m.routing_id == rid, timeout=5)
    assert beat.frames == [CIPW5, b"HEARTBEAT"]
    job = broker.job(rid, "Echo", "handle", interaction("Echo", text="old broker"), key=b"key-05", attempt=2)
    result = broker.result(job)
    assert (result.frames[0], result.outcome) == (CIPW5, "stop"), result
    data = result.json["handle"]["data"]
    assert (data["text"], data["attempt"], data["idempotencyKey"]) == ("old broker", 2, "key-05")
    assert "traceparent" not in data
    traced = broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="traced"),
                                      trace=(TRACEPARENT, b"k=v")))
    assert traced.frames[0] == CIPW5 and traced.json["handle"]["data"]["traceparent"] == TRACEPARENT.decode()
    broker.send(rid, [CIPW5, b"DISCONNECT"])
    again = broker.ready(timeout=10)
    assert (again.frames[0], again.routing_id) == (CIPW5, rid), again
    assert len(broker.refused) == 1, f"the worker tried CIPW06 again: {broker.refused}"
    assert broker.result(broker.job(rid, "Echo", "handle", interaction("Echo", text="again"))).frames[0] == CIPW5
    assert proc.alive()


def test_a_broker_of_version_06_takes_the_cipw06_ready(spawn):
    """5.17: the counterpart of the fall back: a PyBroker of version 06 (max_version=6, the default) refuses
    nothing, and the worker stays with CIPW06."""
    broker = pybroker_of(spawn, 6)
    spawn.real_worker(broker, name="stays")
    ready = broker.ready()
    assert ready.frames[0] == CIPW6
    broker.expect_no_result(0.5)
    assert broker.refused == [] and broker.versions[ready.routing_id] == 6
