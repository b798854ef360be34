"""Points of PROTOCOL.md that a client and a worker written from the spec alone found the reference broker to
diverge from, or the spec not to decide (section 16, decisions 29 to 38), each against the real broker with Python
clients and workers (cip.Client, cip.PyWorker).

The divergences, now fixed: a type whose jobs no worker has answered yet has no pace, so its requests queue instead
of being refused `busy` at arrival (4.8 check 15, 6.6); an attached duplicate's `elapsed_ms` counts from its own
acceptance (11.9); a registered worker gets even its ERRORs in its registered version (5.9).

Decisions and their tests: 29, 30, 31, 32, 33, 35, 36 and 37 below; 34 (F4 of `cancelled` when a lifecycle's job
answers `continue` after CANCEL) is test_cancel.py::test_a_cancelled_lifecycle_stops_between_phases; 35 for CIPW03
STATS is test_worker_v3.py::test_a_malformed_cipw03_stats_is_answered_in_cipw03; 38 is the first test below."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
import uuid

import pytest

import cip
from cip import CIPC2, CIPW, CIPW2, CIPW3, interaction

HB = 250


@pytest.fixture
def broker(spawn):
    return spawn.broker(heartbeat_ms=HB)


def worker(spawn, broker, version=2, types=("PyEcho",), capacity=1, **kw):
    return cip.registered_worker(spawn, broker, version=version, types=types, capacity=capacity, **kw)


key = cip.new_key
body = cip.echo_body
with_phase = cip.with_phase


def handled(job) -> bytes:
    return with_phase(job.body, "handle", {"code": "success", "userActivity": {"activityType": job.intent_type,
                                                                                "userInfo": {}},
                                           "data": {"job": job.job_id.hex()}})


def status_of(c, rid):
    c.status(rid)
    return c.status_answer(rid)


# -- the three divergences ---------------------------------------------------------------------------------------


def test_before_any_answer_a_burst_queues_instead_of_being_refused(spawn):
    """Decision 38; 4.8 check 15 and 6.6: a broker that has seen no job of a type answered has no pace for it, so it sheds
    nothing at arrival: requests that arrive before the workers register (startup grace period) queue as usual and
    run once a worker comes. (The broker used to read a type that waited a second without an answer as running
    "about 0 jobs/s" and refuse the burst `busy` at once.)"""
    broker = spawn.broker(heartbeat_ms=HB)  # no worker: Hold counts as served during the startup grace period
    c = spawn.client(broker)
    first = c.request("Hold", "handle", body(intent_type="Hold"), deadline=8000)
    # Not an ordering sleep: a second of waiting without an answer is the condition under test.
    time.sleep(1.0)
    burst = [c.request("Hold", "handle", body(str(i), "Hold"), deadline=3000) for i in range(20)]
    c.expect_silence(0.3)  # no `busy` at arrival
    w = worker(spawn, broker, types=("Hold",), capacity=32)
    for _ in range(21):
        job = w.job()
        w.result(job, "stop", handled(job))
    for rid in [first, *burst]:
        ending = c.ending(rid)
        assert ending.status == "final", ending


def test_an_attached_duplicates_elapsed_ms_counts_from_its_own_acceptance(spawn, broker):
    """11.9: `elapsed_ms` is the time since the broker accepted *this* REQUEST, for a duplicate attached to a keyed
    request (4.10.1) too: in its progress REPLY and in STATUS."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    k = key()
    first = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    job = w.job()
    # Not an ordering sleep: the first request's age when the duplicate arrives is what is under test.
    time.sleep(1.0)
    duplicate = c.request("PyEcho", "handle", body(), deadline=300, key=k)
    progress = c.reply(duplicate, timeout=5)
    assert progress.status == "progress", progress
    assert 200 <= progress.json["elapsed_ms"] < 800, progress  # about 270 (its deadline less the reply margin)
    of_duplicate, of_first = status_of(c, duplicate), status_of(c, first)
    assert of_duplicate.status == of_first.status == "progress"
    assert of_first.json["elapsed_ms"] - of_duplicate.json["elapsed_ms"] >= 800, (of_first, of_duplicate)
    w.result(job, "stop", handled(job))
    assert c.ending(first).body == c.ending(duplicate).body


@pytest.mark.parametrize("signature", [CIPW, CIPW3])
def test_a_registered_worker_gets_its_errors_in_its_registered_version(spawn, broker, signature):
    """5.9 (decision 35): the broker sends a worker registered as CIPW02 every message with F0 CIPW02, the ERROR that answers a
    message of another version included (an unknown command, check 5; a malformed RESULT, check 6)."""
    w = worker(spawn, broker, version=2)
    w.send([signature, b"BOGUS"])
    unknown = w.next(lambda m: m.command == "ERROR", what="ERROR")
    assert unknown.frames[:3] == [CIPW2, b"ERROR", b"unknown-command"], unknown
    w.send([signature, b"RESULT", b"short"])
    malformed = w.next(lambda m: m.command == "ERROR", what="ERROR")
    assert malformed.frames[:3] == [CIPW2, b"ERROR", b"malformed"], malformed
    w.wait_heartbeat()  # still registered, heartbeats still in CIPW02 (checked by PyWorker)


# -- decisions (section 16) ----------------------------------------------------------------------------------------


def test_a_keyed_lifecycle_that_stops_at_resolve_is_replayed_and_an_updated_intent_is_a_conflict(spawn, broker):
    """Decision 29 (4.10.1): a keyed lifecycle that stops at resolve (or confirm) ended with an answer from a
    worker, so the same key and body are replayed; a second round with the updated intent and the same key is
    `idempotency-conflict`: it needs a new key."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    k = key()
    rid = c.request("PyEcho", "lifecycle", body("to whom?"), deadline=10000, key=k)
    job = w.job()
    assert job.phase == "resolve"
    w.result(job, "stop", with_phase(job.body, "resolve", {"text": {"kind": "needsValue"}}))
    original = c.ending(rid)
    assert (original.status, original.phase, original.flags) == ("final", "resolve", b"")
    again = c.ending(c.request("PyEcho", "lifecycle", body("to whom?"), deadline=10000, key=k))
    assert (again.status, again.phase, again.body, again.flags) == ("final", "resolve", original.body, b"replay")
    updated = c.ending(c.request("PyEcho", "lifecycle", body("to Anna"), deadline=10000, key=k))
    assert updated.code == "idempotency-conflict", updated
    fresh = c.request("PyEcho", "lifecycle", body("to Anna"), deadline=10000, key=key())
    job = w.job()
    w.result(job, "stop", with_phase(job.body, "resolve", {"text": {"kind": "needsValue"}}))
    assert c.ending(fresh).flags == b""
    w.expect_nothing(0.2)


def test_the_same_key_and_body_with_another_phase_is_replayed(spawn, broker):
    """Decision 30 (4.10.1): the key's record is of the key and the body, not of the phase: a keyed `lifecycle`
    after a keyed `handle` of the same body gets the handle's reply again, flagged `replay`; no job runs."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    k = key()
    rid = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    job = w.job()
    w.result(job, "stop", handled(job))
    original = c.ending(rid)
    again = c.ending(c.request("PyEcho", "lifecycle", body(), deadline=10000, key=k))
    assert (again.status, again.phase, again.body, again.flags) == ("final", "handle", original.body, b"replay")
    w.expect_nothing(0.2)


def test_replay_flags_only_the_reply_answered_from_a_stored_record(spawn, broker):
    """Decision 31 (4.10): F6 `replay` is on the REPLY that answers a REQUEST from a completed key's record, and
    nowhere else: not on an attached duplicate's ending (its operation ran while it waited), not on STATUS answers
    (of the replayed request id either)."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    k = key()
    first = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    job = w.job()
    attached = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    c.expect_silence(0.1)
    w.result(job, "stop", handled(job))
    assert c.ending(first).flags == c.ending(attached).flags == b""
    replayed = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    assert c.ending(replayed).flags == b"replay"
    for rid in (first, attached, replayed):
        answer = status_of(c, rid)
        assert (answer.status, answer.flags) == ("final", b""), answer


def test_a_duplicate_with_a_later_deadline_ends_busy_with_the_operation(spawn, broker):
    """Decision 32 (4.10.1, 6.3 rule 2): the operation is the first request's; when the first request's deadline
    passes before any job of it started, the operation is shed and every request attached to it ends `busy` with
    it, a duplicate whose own deadline is later included."""
    w = worker(spawn, broker, capacity=1)
    c = spawn.client(broker, version=2)
    blocker = c.request("PyEcho", "handle", body("blocker"), deadline=10000)
    job = w.job()
    k = key()
    first = c.request("PyEcho", "handle", body(), deadline=300, key=k)
    later = c.request("PyEcho", "handle", body(), deadline=5000, key=k)
    shed_first, shed_later = c.ending(first, timeout=3), c.ending(later, timeout=3)
    assert (shed_first.code, shed_later.code) == ("busy", "busy"), (shed_first, shed_later)
    w.result(job, "stop", handled(job))
    assert c.ending(blocker).status == "final"


def test_the_answers_to_cancel_are_status_answers(spawn, broker):
    """Decision 33 (4.10.2): CANCEL of a request in flight has no answer of its own (the request's ending REPLY is
    the answer); any answer CANCEL gets itself has F1 `STATUS`. (Also pinned: test_cancel.py's unknown-request,
    stored-ending and malformed cases.)"""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "handle", body(), deadline=10000)
    job = w.job()
    c.cancel(rid)
    w.cancel_of(job)
    w.cancelled(job)
    ended = c.ending(rid)
    assert (ended.command, ended.code) == ("REPLY", "cancelled")
    c.cancel(rid, answer="status")
    stored = c.status_answer(rid)
    assert (stored.command, stored.code, stored.body) == ("STATUS", "cancelled", ended.body)


def test_a_one_frame_message_is_answered_malformed_in_its_version(broker):
    """Decision 35 (4.8 check 1): a 1-frame message is `malformed`, answered as a REPLY with empty F2 and F4, in
    the version of its F0 when F0 is a client signature (CIPC02: 7 frames, F6 empty), else in CIPC01."""
    import zmq
    for frames, want in (([CIPC2], CIPC2), ([b"CIPC01"], b"CIPC01"), ([b"nonsense"], b"CIPC01")):
        sock = zmq.Context.instance().socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(broker.frontend)
        try:
            sock.send_multipart(frames)
            assert sock.poll(5000), f"no answer to {frames}"
            answer = sock.recv_multipart()
        finally:
            sock.close()
        assert answer[:5] == [want, b"REPLY", b"", b"error", b""], answer
        assert json.loads(answer[5])["code"] == "malformed"
        assert len(answer) == (7 if want == CIPC2 else 6), answer


def test_a_malformed_stats_from_an_unregistered_peer_is_answered_in_the_querys_version(broker):
    """Decision 35 (5.14): STATS is outside any registration, so its ERROR, like its answer, has the query's F0.
    (test_worker_v3.py pins CIPW03; this pins CIPW02.)"""
    from test_worker_v2 import stats_query
    bad = stats_query(broker.backend, [CIPW2, b"STATS", b"extra"])
    assert bad is not None and bad[:3] == [CIPW2, b"ERROR", b"malformed"], bad


def test_a_journaled_request_whose_deadline_passed_while_the_broker_was_down_runs(spawn):
    """Decision 36 (6.3, 15): a request recovered from the journal was accepted before the restart; it is not shed
    at a deadline that passed while the broker was down: it runs, and its client gets its ending (no progress REPLY:
    its deadline has passed)."""
    import subprocess
    import cluster
    from test_durable import RestartingBroker
    journal = spawn.run_dir / f"journal-{uuid.uuid4().hex[:8]}.db"
    subprocess.run([str(cluster.binary()), "journal", "init", str(journal)], check=True, capture_output=True,
                   timeout=30)
    broker = RestartingBroker(spawn, journal)
    broker.start()
    broker.wait_ready()
    c = spawn.client(broker.frontend, routing_id=f"{broker.tag}-client".encode())
    rid = c.request("Hold", "handle", body(intent_type="Hold"), deadline=500)
    assert status_of(c, rid).status == "progress"  # accepted (and journaled: the answer follows the commit)
    broker.kill()
    time.sleep(1.0)  # not an ordering sleep: the deadline passes while no broker runs
    broker.start()
    broker.wait_ready()
    w = worker(spawn, broker.backend, types=("Hold",), heartbeat_ms=HB)
    job = w.job()
    w.result(job, "stop", handled(job))
    ending = c.ending(rid)
    assert ending.status == "final", ending


def test_a_workers_cancelled_is_counted_with_outcome_cancelled(spawn):
    """Decision 37 (metrics): a request ended by its worker's `cancelled` RESULT is counted in
    concierge_requests_total with outcome `cancelled`, as one the broker ends `cancelled` itself; the job in
    concierge_jobs_total with outcome `cancelled`."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    broker = spawn.broker(heartbeat_ms=HB, http=f"127.0.0.1:{port}")
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "handle", body(), deadline=10000)
    job = w.job()
    c.cancel(rid)
    w.cancel_of(job)
    w.cancelled(job)
    assert c.ending(rid).code == "cancelled"
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    requests = [line for line in text.splitlines() if line.startswith("concierge_requests_total{")]
    assert any('outcome="cancelled"' in line and 'intent="PyEcho"' in line and line.endswith(" 1")
               for line in requests), requests
    assert not any('outcome="handler-error"' in line for line in requests), requests
