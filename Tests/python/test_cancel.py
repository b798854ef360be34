"""CIPC02 CANCEL (PROTOCOL.md section 4.10.2) against the real broker, with Python workers (cip.PyWorker) so that
each test decides exactly when a job finishes. A queued request ends at once with `cancelled`; a running job gets
CANCEL on its CIPW02 worker (5.13) and the request ends with the worker's answer, or `cancelled` after the cancel
grace period; a CIPW01 worker cannot be told, so the request ends at once while the job keeps its slot; a lifecycle
stops between phases; the hard limit sends CANCEL too. CANCEL of something not in flight is answered like STATUS,
and malformed CANCELs like a malformed STATUS (check 4)."""

from __future__ import annotations

import time

import pytest

import cip
from cip import CIPC, CIPC2, interaction

HB = 250


@pytest.fixture
def broker(spawn):
    return spawn.broker(heartbeat_ms=HB)


def worker(spawn, broker, version=2, types=("PyEcho",), capacity=1, **kw):
    return cip.registered_worker(spawn, broker, version=version, types=types, capacity=capacity, **kw)


def body(text="x") -> bytes:
    return cip.echo_body(text)


with_phase = cip.with_phase


def handled(job) -> bytes:
    return with_phase(job.body, "handle", {"code": "success", "userActivity": {"activityType": "PyEcho",
                                                                                "userInfo": {}},
                                           "data": {"job": job.job_id.hex()}})


def status_of(c, rid):
    c.status(rid)
    return c.status_answer(rid)


# -- queued ------------------------------------------------------------------------------------------------------


def test_cancel_while_queued_ends_at_once_and_the_job_never_runs(spawn, broker):
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    running = c.request("PyEcho", "handle", body("first"), deadline=10000)
    first = w.job()
    queued = c.request("PyEcho", "handle", body("queued"), deadline=10000)
    assert status_of(c, queued).json["state"] == "queued"  # capacity 1: it waits
    c.cancel(queued)
    ended = c.ending(queued)
    assert (ended.status, ended.code, ended.phase) == ("error", "cancelled", "handle")
    stored = status_of(c, queued)
    assert (stored.status, stored.code, stored.body) == ("error", "cancelled", ended.body)
    w.result(first, "stop", handled(first))
    assert c.ending(running).status == "final"
    # The worker's next job is a new request's, not the cancelled one's.
    later = c.request("PyEcho", "handle", body("later"), deadline=10000)
    job = w.job()
    assert job.json["intent"]["parameters"]["text"] == "later"
    w.result(job, "stop", handled(job))
    assert c.ending(later).status == "final"


def test_cancel_while_queued_without_any_worker(spawn):
    """In the startup grace period a type no worker announced yet is queued (6.6); CANCEL takes it out."""
    broker = spawn.broker(heartbeat_ms=HB, startup_grace_ms=10000)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "handle", body(), deadline=10000)
    assert status_of(c, rid).json["state"] == "queued"
    c.cancel(rid)
    ended = c.ending(rid)
    assert (ended.status, ended.code) == ("error", "cancelled")


# -- running on a CIPW02 worker ----------------------------------------------------------------------------------


def test_cancel_while_running_the_worker_stops_cleanly(spawn, broker):
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "handle", body(), deadline=10000)
    job = w.job()
    c.cancel(rid)
    cancel = w.cancel_of(job)
    assert cancel.frames == [cip.CIPW2, b"CANCEL", job.job_id]
    w.cancelled(job)
    ended = c.ending(rid)
    assert (ended.status, ended.code, ended.phase) == ("error", "cancelled", "handle")
    # The slot is free again: the next job comes.
    rid2 = c.request("PyEcho", "handle", body("next"), deadline=10000)
    job2 = w.job()
    w.result(job2, "stop", handled(job2))
    assert c.ending(rid2).status == "final"


def test_cancel_while_running_the_handler_finished_first(spawn, broker):
    """4.10.2: any other RESULT ends the request with that reply: a client MUST be ready for a final after CANCEL."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "handle", body(), deadline=10000)
    job = w.job()
    c.cancel(rid)
    w.cancel_of(job)
    answer = handled(job)
    w.result(job, "stop", answer)
    final = c.ending(rid)
    assert (final.status, final.phase, final.body) == ("final", "handle", answer)


def test_cancel_of_an_attached_duplicate_cancels_the_operation(spawn, broker):
    """4.10.2: a keyed request and the duplicates attached to it are one operation: all get the same ending."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    payload = body("pay")
    first = c.request("PyEcho", "handle", payload, deadline=10000, key=b"op-1")
    job = w.job()
    duplicate = c.request("PyEcho", "handle", payload, deadline=10000, key=b"op-1")
    c.cancel(duplicate)
    w.cancel_of(job)
    w.cancelled(job)
    a, b = c.ending(first), c.ending(duplicate)
    assert (a.status, a.code) == (b.status, b.code) == ("error", "cancelled")
    assert a.body == b.body


def test_the_worker_silent_after_cancel_ends_it_after_the_grace_period(spawn):
    broker = spawn.broker(heartbeat_ms=HB, cancel_grace_ms=600)
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "handle", body(), deadline=10000)
    job = w.job()
    c.cancel(rid)
    cancel = w.cancel_of(job)
    ended = c.ending(rid)
    waited = ended.received_at - cancel.received_at
    assert (ended.status, ended.code) == ("error", "cancelled")
    assert 0.45 <= waited <= 3.0, f"ended {waited:.3f} s after the worker got CANCEL (grace 600 ms)"
    # The job still holds the worker's only slot until it answers (as after a timeout, 6.3).
    rid2 = c.request("PyEcho", "handle", body("next"), deadline=10000)
    assert status_of(c, rid2).json["state"] == "queued"
    w.result(job, "stop", handled(job))  # late: dropped, but it frees the slot
    job2 = w.job()
    assert job2.json["intent"]["parameters"]["text"] == "next"
    w.result(job2, "stop", handled(job2))
    assert c.ending(rid2).status == "final"


# -- running on a CIPW01 worker ----------------------------------------------------------------------------------


def test_cancel_on_a_v1_worker_ends_at_once_and_the_job_keeps_its_slot(spawn):
    broker = spawn.broker(heartbeat_ms=HB, cancel_grace_ms=5000)  # "at once" must not be the grace period
    w = worker(spawn, broker, version=1)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "handle", body(), deadline=10000)
    job = w.job()
    sent = time.monotonic()
    c.cancel(rid)
    ended = c.ending(rid)
    assert (ended.status, ended.code, ended.phase) == ("error", "cancelled", "handle")
    assert ended.received_at - sent < 2.0
    rid2 = c.request("PyEcho", "handle", body("next"), deadline=10000)
    assert status_of(c, rid2).json["state"] == "queued"
    w.result(job, "stop", handled(job))  # the late RESULT is dropped and frees the slot
    job2 = w.job()  # PyWorker (CIPW01) fails the test if a CANCEL ever reaches it
    assert job2.json["intent"]["parameters"]["text"] == "next"
    w.result(job2, "stop", handled(job2))
    assert c.ending(rid2).status == "final"


# -- lifecycle ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [2, 1])
def test_a_cancelled_lifecycle_stops_between_phases(spawn, broker, version):
    """CANCEL while resolve runs; the worker's `continue` does not start confirm: the request ends `cancelled`."""
    w = worker(spawn, broker, version=version)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "lifecycle", body(), deadline=10000)
    resolve = w.job()
    assert resolve.phase == "resolve"
    c.cancel(rid)
    if version == 2:
        w.cancel_of(resolve)
    w.result(resolve, "continue", with_phase(resolve.body, "resolve", {}))
    ended = c.ending(rid)
    assert (ended.status, ended.code, ended.phase) == ("error", "cancelled", "resolve")
    # No confirm job ever comes: the next job is a new request's.
    later = c.request("PyEcho", "resolve", body("later"), deadline=10000)
    job = w.job()
    assert (job.phase, job.json["intent"]["parameters"]["text"]) == ("resolve", "later")
    w.result(job, "stop", with_phase(job.body, "resolve", {}))
    assert c.ending(later).status == "final"


def test_a_lifecycle_whose_next_phase_waits_in_the_queue_ends_at_once(spawn, broker):
    """4.10.2: a CANCEL while the next phase of a lifecycle waits in the queue ends the request at once. The only
    worker drains after taking resolve (8.1: no more jobs for it), so the confirm job has to wait."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "lifecycle", body(), deadline=10000)
    resolve = w.job()
    w.drain()
    w.next(lambda m: m.command == "DRAIN")  # acknowledged: no JOB is on its way any more (5.5)
    w.result(resolve, "continue", with_phase(resolve.body, "resolve", {}))
    assert wait_for(c, rid, lambda s: s.status == "progress" and s.json["phase"] == "confirm").json["state"] == "queued"
    c.cancel(rid)
    ended = c.ending(rid)
    assert (ended.status, ended.code, ended.phase) == ("error", "cancelled", "confirm")
    # A new worker gets a new request's job, never the cancelled confirm.
    w2 = worker(spawn, broker)
    later = c.request("PyEcho", "resolve", body("later"), deadline=10000)
    job = w2.job()
    assert (job.phase, job.json["intent"]["parameters"]["text"]) == ("resolve", "later")
    w2.result(job, "stop", with_phase(job.body, "resolve", {}))
    assert c.ending(later).status == "final"


def wait_for(c, rid, predicate, timeout: float = 10.0):
    """STATUS until its answer satisfies predicate (observable state, not a fixed sleep)."""
    end = time.monotonic() + timeout
    while True:
        s = status_of(c, rid)
        if predicate(s):
            return s
        assert time.monotonic() < end, f"STATUS of {rid!r} never got there: {s}"
        time.sleep(0.01)


# -- the hard limit ----------------------------------------------------------------------------------------------


def test_the_hard_limit_answers_timeout_and_cancels_the_job(spawn):
    broker = spawn.broker(heartbeat_ms=HB, hard_limit_ms=1000, deadline_ms=500)
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "handle", body(), deadline=500)
    job = w.job()
    replies = c.replies(rid)
    assert [m.status for m in replies] == ["progress", "error"]
    assert (replies[-1].code, replies[-1].phase) == ("timeout", "handle")
    w.cancel_of(job)
    w.cancelled(job)  # dropped: the request has ended; the slot is free again
    rid2 = c.request("PyEcho", "handle", body("next"), deadline=500)
    job2 = w.job()
    w.result(job2, "stop", handled(job2))
    assert c.ending(rid2).status == "final"


def test_the_hard_limit_sends_no_cancel_to_a_v1_worker(spawn):
    broker = spawn.broker(heartbeat_ms=HB, hard_limit_ms=1000, deadline_ms=500)
    w = worker(spawn, broker, version=1)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "handle", body(), deadline=500)
    job = w.job()
    assert c.replies(rid)[-1].code == "timeout"
    # A CANCEL would go out with the timeout; two heartbeats later it would have arrived and failed PyWorker's
    # checks (a CIPW01 worker never gets CANCEL, 5.13).
    w.wait_heartbeat()
    w.wait_heartbeat()
    w.expect_nothing(0.0)
    w.result(job, "stop", handled(job))


# -- CANCEL of something not in flight, and malformed CANCELs -----------------------------------------------------


def test_cancel_of_an_unknown_request_is_unknown_request(spawn, broker):
    c = spawn.client(broker, version=2)
    c.cancel(b"never-sent", answer="status")
    m = c.status_answer(b"never-sent")
    assert m.frames[0] == CIPC2 and len(m.frames) == 7
    assert (m.status, m.code, m.phase, m.flags) == ("error", "unknown-request", "", b"")


def test_cancel_after_the_end_answers_the_stored_ending(spawn, broker):
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "handle", body(), deadline=10000)
    job = w.job()
    w.result(job, "stop", handled(job))
    final = c.ending(rid)
    c.cancel(rid)  # no longer in flight for this client: a STATUS answer is owed
    m = c.status_answer(rid)
    assert (m.status, m.phase, m.body) == ("final", "handle", final.body)
    again = status_of(c, rid)  # nothing changed
    assert again.body == final.body


def test_another_connection_cannot_cancel_a_request(spawn, broker):
    """The request is found by the routing id (without CURVE): another client's CANCEL does not find it."""
    w = worker(spawn, broker)
    owner = spawn.client(broker, version=2)
    other = spawn.client(broker, version=2)
    rid = owner.request("PyEcho", "handle", body(), deadline=10000)
    job = w.job()
    other.cancel(rid, answer="status")
    assert other.status_answer(rid).code == "unknown-request"
    w.expect_nothing(0.2, commands=("CANCEL",))
    w.result(job, "stop", handled(job))
    assert owner.ending(rid).status == "final"


def test_cipc01_cancel_is_an_unknown_command(spawn, broker):
    c = spawn.client(broker, version=2)
    c.send_raw([CIPC, b"CANCEL", b"r-1"], expect="REPLY", rid=b"r-1")
    m = c.reply(b"r-1")
    assert m.frames[0] == CIPC and len(m.frames) == 6
    assert (m.status, m.code, m.phase) == ("error", "unknown-command", "")


@pytest.mark.parametrize("frames,rid", [
    ([CIPC2, b"CANCEL"], b""),
    ([CIPC2, b"CANCEL", b"r-1", b"extra"], b"r-1"),
    ([CIPC2, b"CANCEL", b""], b""),
    ([CIPC2, b"CANCEL", b"r" * 256], b""),
], ids=["2-frames", "4-frames", "empty-id", "id-too-long"])
def test_malformed_cancel_is_a_malformed_status_answer(spawn, broker, frames, rid):
    c = spawn.client(broker, version=2)
    c.send_raw(frames, expect="STATUS", rid=rid)
    m = c.next(lambda m: m.command == "STATUS")
    assert m.frames[0] == CIPC2 and len(m.frames) == 7
    assert (m.request_id, m.status, m.code, m.phase) == (rid, "error", "malformed", "")


def test_malformed_cancel_changes_nothing(spawn, broker):
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "handle", body(), deadline=10000)
    job = w.job()
    c.send_raw([CIPC2, b"CANCEL", rid, b"extra"], expect="STATUS", rid=rid)
    assert c.status_answer(rid).code == "malformed"
    w.result(job, "stop", handled(job))
    assert c.ending(rid).status == "final"


def test_a_cipc01_request_cancelled_from_its_connection_ends_in_version_01(spawn, broker):
    """The request is found by routing id and request id (4.10.2), whatever version its REQUEST had; its ending
    answers the REQUEST, so it comes in the REQUEST's version (4.10: each message is answered in its version)."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = b"v1-request"
    c.send_raw([CIPC, b"REQUEST", rid, b"PyEcho", b"handle", b"10000", body()], expect="REPLY", rid=rid)
    job = w.job()
    c.cancel(rid)
    w.cancel_of(job)
    w.cancelled(job)
    ended = c.ending(rid)
    assert ended.frames[0] == CIPC and len(ended.frames) == 6
    assert (ended.status, ended.code) == ("error", "cancelled")
