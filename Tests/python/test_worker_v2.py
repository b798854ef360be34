"""CIPW02 (PROTOCOL.md section 5.13) against the real broker, with Python workers: a worker that registers with a
CIPW02 READY is spoken to in CIPW02 (every message's F0, 9-frame JOBs with the request's idempotency key in F7 and
the attempt in F8), while a CIPW01 worker of the same broker keeps getting 7-frame JOBs. The attempt counts the runs
of a key whose earlier outcome is unknown (4.10.1): after `worker-lost` the retry is attempt 2; after a clean
`cancelled` the next attempt runs at once; a request cancelled before its handle job went out leaves the key as
if unused. cip.PyWorker checks every message it gets against 5.13."""

from __future__ import annotations

import json
import time

import pytest

import cip
from cip import CIPW, CIPW2, interaction

HB = 250  # heartbeat interval (ms): a silent worker is dead after 750 ms


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
                                           "data": {"job": job.job_id.hex(), "attempt": job.attempt}})


def test_a_v2_worker_gets_the_key_and_attempt_1(spawn, broker):
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    k = key()
    rid = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    job = w.job()
    assert job.frames[0] == CIPW2 and len(job.frames) == 9
    assert (job.phase, job.key, job.attempt) == ("handle", k, 1)
    w.result(job, "stop", handled(job))
    final = c.ending(rid)
    assert final.status == "final" and final.flags == b""
    assert final.json["handle"]["data"]["attempt"] == 1


def test_no_key_is_an_empty_f7_and_attempt_1(spawn, broker):
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    for phase in ("handle", "resolve"):
        rid = c.request("PyEcho", phase, body(), deadline=10000)
        job = w.job()
        assert (job.phase, job.key, job.attempt) == (phase, b"", 1)
        w.result(job, "stop", with_phase(job.body, phase, {} if phase == "resolve" else
                                         {"code": "success", "userActivity": {"activityType": "PyEcho",
                                                                              "userInfo": {}}}))
        assert c.ending(rid).status == "final"


def test_the_key_goes_to_the_handle_job_of_a_lifecycle_only(spawn, broker):
    """5.13: F7 is always empty for resolve and confirm, also within a keyed lifecycle."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    k = key()
    rid = c.request("PyEcho", "lifecycle", body(), deadline=10000, key=k)
    resolve = w.job()
    assert (resolve.phase, resolve.key, resolve.attempt) == ("resolve", b"", 1)
    w.result(resolve, "continue", with_phase(resolve.body, "resolve", {}))
    confirm = w.job()
    assert (confirm.phase, confirm.key, confirm.attempt) == ("confirm", b"", 1)
    w.result(confirm, "continue", with_phase(confirm.body, "confirm", {"code": "ready"}))
    handle = w.job()
    assert (handle.phase, handle.key, handle.attempt) == ("handle", k, 1)
    w.result(handle, "stop", handled(handle))
    assert c.ending(rid).phase == "handle"


def test_a_v1_worker_of_the_same_broker_gets_7_frame_jobs(spawn, broker):
    """5.13: a broker speaking CIPW02 speaks CIPW01 on the same socket; a CIPW01 worker gets no key and attempt
    (and every message in CIPW01: PyWorker holds each worker to the version of its READY)."""
    old = worker(spawn, broker, version=1, types=("PyOld",))
    new = worker(spawn, broker, version=2, types=("PyNew",))
    c = spawn.client(broker, version=2)
    k1, k2 = key(), key()
    r1 = c.request("PyOld", "handle", body(intent_type="PyOld"), deadline=10000, key=k1)
    r2 = c.request("PyNew", "handle", body(intent_type="PyNew"), deadline=10000, key=k2)
    j1, j2 = old.job(), new.job()
    assert j1.frames[0] == CIPW and len(j1.frames) == 7 and j1.attempt == 0
    assert j2.frames[0] == CIPW2 and len(j2.frames) == 9 and (j2.key, j2.attempt) == (k2, 1)
    old.result(j1, "stop", handled(j1))
    new.result(j2, "stop", handled(j2))
    assert c.ending(r1).status == c.ending(r2).status == "final"
    # Both stayed registered in their own version: the broker's heartbeats kept coming in it (checked by PyWorker).
    old.wait_heartbeat()
    new.wait_heartbeat()


def test_a_v2_worker_may_answer_in_either_signature(spawn, broker):
    """5.13: the broker accepts either signature from a CIPW02 worker after its READY."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "handle", body(), deadline=10000)
    job = w.job()
    w.send([CIPW, b"RESULT", job.job_id, b"stop", handled(job)])
    assert c.ending(rid).status == "final"


@pytest.mark.parametrize("how", ["disconnect", "silent"])
def test_after_worker_lost_a_retry_with_the_key_is_attempt_2_on_another_worker(spawn, broker, how):
    """4.10.1: worker-lost during handle leaves the outcome unknown; the retry with the same key runs again, as
    attempt 2, so that the handler can consult its own records. The next retry replays its final reply."""
    first = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    k = key()
    payload = body("pay 5")
    r1 = c.request("PyEcho", "handle", payload, deadline=10000, key=k)
    job1 = first.job()
    assert (job1.key, job1.attempt) == (k, 1)
    second = worker(spawn, broker)  # registered after the first job went out: it cannot have taken it
    if how == "disconnect":
        first.disconnect()
    else:
        first.silent = True  # hung: no heartbeats; dead after liveness x interval (7.1)
    lost = c.ending(r1)
    assert (lost.status, lost.code, lost.phase) == ("error", "worker-lost", "handle")
    r2 = c.request("PyEcho", "handle", payload, deadline=10000, key=k)
    job2 = second.job()
    assert (job2.key, job2.attempt) == (k, 2)
    assert job2.job_id != job1.job_id
    second.result(job2, "stop", handled(job2))
    final = c.ending(r2)
    assert final.status == "final" and final.flags == b""
    assert final.json["handle"]["data"]["attempt"] == 2
    r3 = c.request("PyEcho", "handle", payload, deadline=10000, key=k)
    replay = c.ending(r3)
    assert (replay.status, replay.phase, replay.body, replay.flags) == ("final", "handle", final.body, b"replay")


def test_after_a_clean_cancel_the_next_attempt_runs_at_once(spawn, broker):
    """4.10.1 and 4.10.2: a handle job whose worker answered `cancelled` (the handler stopped cleanly) runs no more,
    so a retry with the key is not `busy`: it runs at once, as the next attempt (attempt numbers only grow)."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    k = key()
    r1 = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    job1 = w.job()
    c.cancel(r1)
    w.cancel_of(job1)
    w.cancelled(job1)
    ended = c.ending(r1)
    assert (ended.status, ended.code, ended.phase) == ("error", "cancelled", "handle")
    r2 = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    job2 = w.job()
    assert (job2.key, job2.attempt) == (k, 2)
    w.result(job2, "stop", handled(job2))
    final = c.ending(r2)
    assert final.status == "final" and final.flags == b""


def test_a_cancel_while_queued_leaves_the_key_as_if_unused(spawn, broker):
    """4.10.1: a request cancelled before any handle job went out leaves the key as if unused: the retry is
    attempt 1."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    blocker = c.request("PyEcho", "handle", body("blocker"), deadline=10000)
    held = w.job()
    k = key()
    r1 = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    c.cancel(r1)
    assert c.ending(r1).code == "cancelled"
    w.result(held, "stop", handled(held))
    assert c.ending(blocker).status == "final"
    r2 = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    job = w.job()
    assert (job.key, job.attempt) == (k, 1)
    w.result(job, "stop", handled(job))
    assert c.ending(r2).status == "final"


def test_a_cancel_the_worker_did_not_confirm_leaves_the_outcome_unknown(spawn):
    """4.10.2: no RESULT within the cancel grace period: `cancelled`, but the outcome is unknown. While the worker
    (alive) may still run attempt 1, a retry is `busy` (4.10.1); once it answers, the retry is attempt 2."""
    broker = spawn.broker(heartbeat_ms=HB, cancel_grace_ms=200)
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    k = key()
    r1 = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    job1 = w.job()
    c.cancel(r1)
    w.cancel_of(job1)  # the worker ignores it (its handler cannot stop)
    ended = c.ending(r1)
    assert (ended.status, ended.code) == ("error", "cancelled")
    r2 = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    refused = c.ending(r2)
    assert (refused.status, refused.code) == ("error", "busy"), refused
    w.result(job1, "stop", handled(job1))  # the handler finished after all: dropped (the request ended)
    # The RESULT and the next REQUEST travel on different connections: retry while the broker still says busy.
    end = time.monotonic() + 10
    while True:
        assert time.monotonic() < end, "the key stayed busy after the worker answered attempt 1"
        r3 = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
        job3 = job_or_ending(w, c, r3)
        if isinstance(job3, cip.WorkerMessage):
            break
        assert (job3.status, job3.code) == ("error", "busy"), job3
    assert (job3.key, job3.attempt) == (k, 2)
    w.result(job3, "stop", handled(job3))
    assert c.ending(r3).status == "final"


def job_or_ending(w, c, rid, timeout: float = 10.0):
    """Whichever comes first: a JOB at w, or the ending REPLY of rid at c."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            return w.job(timeout=0.02)
        except TimeoutError:
            pass
        try:
            return c.ending(rid, timeout=0.02)
        except TimeoutError:
            pass
    raise TimeoutError(f"neither a JOB nor the ending of {rid!r}")


def stats_query(endpoint: str, frames: list[bytes]) -> list[bytes] | None:
    """Sends `frames` from a fresh DEALER that never registers; the first answer, or None within 5 s."""
    import zmq
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    try:
        sock.send_multipart(frames)
        if sock.poll(5000) == 0:
            return None
        return sock.recv_multipart()
    finally:
        sock.close()


def test_stats_answers_any_peer_with_a_body_the_schema_accepts(spawn, broker):
    """5.14: an unregistered peer's STATS gets the queues and workers (stats.schema.json); a malformed STATS gets
    ERROR malformed, not DISCONNECT."""
    w = worker(spawn, broker, capacity=1)
    c = spawn.client(broker, version=2)
    c.request("PyEcho", "handle", body(), deadline=10000)
    w.job()  # running: the worker holds 1 job of 1
    c.request("PyEcho", "handle", body(), deadline=10000)  # queued
    deadline = time.monotonic() + 10
    while True:
        answer = stats_query(broker.backend, [CIPW2, b"STATS"])
        assert answer is not None and answer[:2] == [CIPW2, b"STATS"] and len(answer) == 3, answer
        stats = json.loads(answer[2])
        cip.SCHEMA_SET.check("stats.schema.json", stats, "STATS body")
        if stats["queued"] == 1 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert stats["state"] == "active" and stats["requests_in_flight"] == 2
    (py,) = [t for t in stats["intent_types"] if t["name"] == "PyEcho"]
    assert (py["queued"], py["workers"], py["capacity"], py["capacity_used"], py["capacity_free"]) == (1, 1, 1, 1, 0)
    assert py["oldest_age_ms"] >= 0
    (me,) = stats["workers"]
    assert (me["capacity"], me["jobs"], me["draining"], me["intents"]) == (1, 1, False, ["PyEcho"])
    bad = stats_query(broker.backend, [CIPW2, b"STATS", b"extra"])
    assert bad is not None and bad[:3] == [CIPW2, b"ERROR", b"malformed"], bad


@pytest.mark.needs_trait("PostgreSQL")
def test_stats_from_a_broker_whose_journal_is_unavailable_says_so(spawn):
    """5.14: while its PostgreSQL journal is unreachable the broker holds nothing; STATS answers state
    `unavailable` with empty lists (and does not send the peer away, as it does workers)."""
    b = spawn.broker(journal="postgres://concierge@127.0.0.1:1/concierge")  # nothing listens on port 1
    answer = stats_query(b.backend, [CIPW2, b"STATS"])
    assert answer is not None and answer[:2] == [CIPW2, b"STATS"], answer
    stats = json.loads(answer[2])
    cip.SCHEMA_SET.check("stats.schema.json", stats, "STATS body")
    assert (stats["state"], stats["queued"], stats["intent_types"], stats["workers"]) == ("unavailable", 0, [], [])
