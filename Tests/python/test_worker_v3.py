"""CIPW03 (PROTOCOL.md section 5.15) against the real broker, with Python workers: a worker that registers with a
CIPW03 READY gets 10-frame JOBs whose F9 is the last phase the job runs. The broker chains only `lifecycle` requests:
by default resolve and confirm in one job (F9 `confirm`) and handle as a job of its own; with `--chain-lifecycle
handle` the whole lifecycle in one job for requests without an idempotency key; with `off` nothing. The worker (the
test, through cip.PyWorker) answers each phase with a RESULT under the job's id; the broker counts them, keeps the
slot taken until the job's last RESULT, stops a chain on CANCEL, re-dispatches a lost resolve/confirm chain but ends a
lost chain through handle `worker-lost`, and drops a RESULT that comes after a job's last one. A CIPW02 worker on the
same broker keeps getting a job per phase. cip.PyWorker checks every message it gets against 5.13 and 5.15."""

from __future__ import annotations

import json
import time
import uuid

import pytest

import cip
from cip import CIPW2, CIPW3, interaction
from test_cancel import status_of, wait_for  # STATUS polling, bounded
from test_worker_v2 import body, key, with_phase  # the same bodies as version 02's tests

HB = 250  # heartbeat interval (ms): a silent worker is dead after 750 ms


@pytest.fixture
def broker(spawn):
    return spawn.broker(heartbeat_ms=HB)


@pytest.fixture
def chain_broker(spawn):
    """A broker that runs a whole lifecycle in one job (`--chain-lifecycle handle`, 5.15)."""
    return spawn.broker(heartbeat_ms=HB, chain_lifecycle="handle")


def worker(spawn, broker, version=3, types=("PyEcho",), capacity=1, **kw):
    w = spawn.pyworker(broker, version=version, types=types, capacity=capacity, **kw)
    w.wait_heartbeat()  # the first HEARTBEAT after READY: registered (5.10)
    return w


def resolved(raw: bytes) -> bytes:
    return with_phase(raw, "resolve", {})


def confirmed(raw: bytes, code: str = "ready") -> bytes:
    return with_phase(raw, "confirm", {"code": code})


def handled(raw: bytes, intent_type: str = "PyEcho", **data) -> bytes:
    return with_phase(raw, "handle", {"code": "success", "userActivity": {"activityType": intent_type, "userInfo": {}},
                                      "data": data})


def running_in(c, rid, phase: str, worker_name: bytes):
    """The request is running in `phase` on the worker (5.15: STATUS names the phase the broker last heard of)."""
    s = wait_for(c, rid, lambda s: s.status == "progress" and s.json["phase"] == phase)
    assert (s.json["state"], s.json["worker"]) == ("running", worker_name.decode()), s
    return s


def ten_frames(job, phase: str, last: str):
    assert job.frames[0] == CIPW3 and len(job.frames) == 10, job.frames
    assert (job.phase, job.last_phase) == (phase, last), job


def next_resolve_job(w, text: str, last: str):
    """The worker's next JOB: a 10-frame resolve job through `last` for the request whose text is `text`."""
    job = w.job()
    ten_frames(job, "resolve", last)
    assert job.json["intent"]["parameters"]["text"] == text
    return job


# -- which jobs are chained ------------------------------------------------------------------------------------------


def test_default_chain_runs_resolve_and_confirm_in_one_job_then_handle_alone(spawn, broker):
    """By default F9 is confirm for a lifecycle's resolve job: two RESULTs under its job id, the broker sends no
    confirm JOB (the next JOB is handle's, with the confirm RESULT's body byte for byte) and handle is a job of its
    own (F9 handle)."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "lifecycle", body(), deadline=10000)
    job = w.job()
    ten_frames(job, "resolve", "confirm")
    assert (job.key, job.attempt, job.body) == (b"", 1, body())
    r1 = resolved(job.body)
    w.result(job, "continue", r1)
    running_in(c, rid, "confirm", w.name)  # the same job, now in its confirm phase, still on this worker
    r2 = confirmed(r1)
    w.result(job, "continue", r2)
    handle = w.job()  # JOBs arrive in order: had the broker sent a confirm JOB, it would come first
    ten_frames(handle, "handle", "handle")
    assert handle.job_id != job.job_id
    assert handle.body == r2
    r3 = handled(handle.body, job=handle.job_id.hex())
    w.result(handle, "stop", r3)
    final = c.ending(rid)
    assert (final.status, final.phase, final.body) == ("final", "handle", r3)


def test_chain_through_handle_runs_the_whole_lifecycle_in_one_job(spawn, chain_broker):
    """`--chain-lifecycle handle`: one JOB (F9 handle, no key), three RESULTs under its job id; STATUS follows the
    phases; the handle RESULT is the final reply."""
    w = worker(spawn, chain_broker)
    c = spawn.client(chain_broker, version=2)
    rid = c.request("PyEcho", "lifecycle", body(), deadline=10000)
    job = w.job()
    ten_frames(job, "resolve", "handle")
    assert (job.key, job.attempt) == (b"", 1)
    r1 = resolved(job.body)
    w.result(job, "continue", r1)
    running_in(c, rid, "confirm", w.name)
    r2 = confirmed(r1)
    w.result(job, "continue", r2)
    running_in(c, rid, "handle", w.name)
    r3 = handled(r2, job=job.job_id.hex())
    w.result(job, "stop", r3)
    final = c.ending(rid)
    assert (final.status, final.phase, final.body) == ("final", "handle", r3)
    # The job's last RESULT freed the only slot: the next request's JOB comes (and it is no leftover of the first).
    rid2 = c.request("PyEcho", "lifecycle", body("second"), deadline=10000)
    job2 = next_resolve_job(w, "second", "handle")
    w.result(job2, "stop", resolved(job2.body))
    assert c.ending(rid2).phase == "resolve"


def test_a_keyed_lifecycle_chains_only_to_confirm_under_chain_handle(spawn, chain_broker):
    """5.15: with `--chain-lifecycle handle`, a request with an idempotency key still chains to confirm only: its
    handle is a job of its own, with the key and attempt 1 (counted when it goes out, 4.10.1)."""
    w = worker(spawn, chain_broker)
    c = spawn.client(chain_broker, version=2)
    k = key()
    rid = c.request("PyEcho", "lifecycle", body(), deadline=10000, key=k)
    job = w.job()
    ten_frames(job, "resolve", "confirm")
    assert (job.key, job.attempt) == (b"", 1)
    r1 = resolved(job.body)
    w.result(job, "continue", r1)
    w.result(job, "continue", confirmed(r1))
    handle = w.job()
    ten_frames(handle, "handle", "handle")
    assert (handle.key, handle.attempt) == (k, 1)
    w.result(handle, "stop", handled(handle.body))
    assert c.ending(rid).phase == "handle"


def test_chain_off_sends_a_job_per_phase(spawn):
    """`--chain-lifecycle off`: a CIPW03 worker gets 10-frame JOBs whose F9 is F4, one per phase."""
    broker = spawn.broker(heartbeat_ms=HB, chain_lifecycle="off")
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "lifecycle", body(), deadline=10000)
    resolve = w.job()
    ten_frames(resolve, "resolve", "resolve")
    w.result(resolve, "continue", resolved(resolve.body))
    confirm = w.job()
    ten_frames(confirm, "confirm", "confirm")
    w.result(confirm, "continue", confirmed(confirm.body))
    handle = w.job()
    ten_frames(handle, "handle", "handle")
    w.result(handle, "stop", handled(handle.body))
    assert c.ending(rid).phase == "handle"
    assert len({resolve.job_id, confirm.job_id, handle.job_id}) == 3


@pytest.mark.parametrize("phase", ["resolve", "confirm", "handle"])
def test_requests_for_one_phase_are_never_chained(spawn, chain_broker, phase):
    """5.15: only lifecycle requests are chained: a request for one phase is a JOB with F9 = F4, even on a broker
    chaining through handle, and its `continue` ends it."""
    w = worker(spawn, chain_broker)
    c = spawn.client(chain_broker, version=2)
    rid = c.request("PyEcho", phase, body(), deadline=10000)
    job = w.job()
    ten_frames(job, phase, phase)
    out = {"resolve": resolved, "confirm": confirmed, "handle": handled}[phase](job.body)
    w.result(job, "stop" if phase == "handle" else "continue", out)
    final = c.ending(rid)
    assert (final.status, final.phase, final.body) == ("final", phase, out)


@pytest.mark.parametrize("chain", ["confirm", "handle"])
def test_a_v2_worker_on_the_same_broker_gets_a_job_per_phase(spawn, chain):
    """5.15: the broker chains only on CIPW03 workers: a CIPW02 worker of the same broker gets 9-frame CIPW02 JOBs,
    one per phase, while a CIPW03 worker gets a chained one (PyWorker holds each to the version of its READY)."""
    broker = spawn.broker(heartbeat_ms=HB, chain_lifecycle=chain)
    old = worker(spawn, broker, version=2, types=("PyOld",))
    new = worker(spawn, broker, version=3, types=("PyNew",))
    c = spawn.client(broker, version=2)
    r_old = c.request("PyOld", "lifecycle", body(intent_type="PyOld"), deadline=10000)
    r_new = c.request("PyNew", "lifecycle", body(intent_type="PyNew"), deadline=10000)
    chained = new.job()
    ten_frames(chained, "resolve", chain)
    ids = []
    raw = None
    for phase in ("resolve", "confirm", "handle"):
        job = old.job()
        assert job.frames[0] == CIPW2 and len(job.frames) == 9, job.frames
        assert (job.phase, job.last_phase, job.version) == (phase, phase, 2)
        if raw is not None:
            assert job.body == raw
        raw = {"resolve": resolved, "confirm": confirmed}.get(phase, lambda b: handled(b, "PyOld"))(job.body)
        old.result(job, "stop" if phase == "handle" else "continue", raw)
        ids.append(job.job_id)
    assert len(set(ids)) == 3
    assert c.ending(r_old).phase == "handle"
    r1 = resolved(chained.body)
    new.result(chained, "continue", r1)
    r2 = confirmed(r1)
    new.result(chained, "continue", r2)
    if chain == "confirm":
        handle = new.job()
        ten_frames(handle, "handle", "handle")
        new.result(handle, "stop", handled(handle.body, "PyNew"))
    else:
        new.result(chained, "stop", handled(r2, "PyNew"))
    assert c.ending(r_new).phase == "handle"


# -- the job's last RESULT, and the slot ----------------------------------------------------------------------------


def chained_job_and_one_queued(spawn, broker, text):
    """A worker of capacity 1 holding a lifecycle job chained through handle (its JOB checked), and a second
    lifecycle request queued behind it for the slot. Returns (worker, client, first request id, job, queued id)."""
    w = worker(spawn, broker, capacity=1)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "lifecycle", body(text), deadline=10000)
    job = w.job()
    ten_frames(job, "resolve", "handle")
    queued = c.request("PyEcho", "lifecycle", body("queued"), deadline=10000)
    assert status_of(c, queued).json["state"] == "queued"  # capacity 1: it waits for the chained job's slot
    return w, c, rid, job, queued


@pytest.mark.parametrize("outcome", ["stop", "error"])
def test_a_stop_after_resolve_ends_the_job_and_frees_the_slot(spawn, chain_broker, outcome):
    """5.15: a job's last RESULT is the first that is not `continue`: a `stop` (or `error`) of resolve ends the job
    before F9, the request ends with it, and the only slot is free: the queued request's JOB comes next."""
    w, c, first, job, queued = chained_job_and_one_queued(spawn, chain_broker, "first")
    if outcome == "stop":
        out = with_phase(job.body, "resolve", {"text": {"kind": "needsValue"}})
    else:
        out = cip.encode({"code": "handler-failed", "message": "the resolve handler failed"})
    w.result(job, outcome, out)
    ended = c.ending(first)
    assert (ended.status, ended.phase, ended.body) == ("final" if outcome == "stop" else "error", "resolve", out)
    following = next_resolve_job(w, "queued", "handle")
    w.result(following, "stop", resolved(following.body))
    assert c.ending(queued).phase == "resolve"


def test_cancel_mid_chain(spawn, chain_broker):
    """5.15 and 4.10.2: a client's CANCEL while the worker holds the resolve phase of a chained job: the worker gets
    CANCEL for the job id; its resolve `continue` ends the request `cancelled` (no further phase for the client),
    but the job keeps the slot until the worker answers the next phase `cancelled`, its last RESULT; only then does
    the queued request's JOB come."""
    w, c, rid, job, queued = chained_job_and_one_queued(spawn, chain_broker, "cancel me")
    c.cancel(rid)
    cancel = w.cancel_of(job)
    assert cancel.frames == [CIPW3, b"CANCEL", job.job_id]
    w.result(job, "continue", resolved(job.body))  # the resolve handler finished anyway
    ended = c.ending(rid)
    assert (ended.status, ended.code, ended.phase) == ("error", "cancelled", "resolve")
    # The broker has handled the continue (it sent the ending): the job still holds the worker's only slot.
    assert status_of(c, queued).json["state"] == "queued"
    stored = status_of(c, rid)
    assert (stored.status, stored.code, stored.body) == ("error", "cancelled", ended.body)
    w.cancelled(job)  # the confirm phase, answered at once: the job's last RESULT
    following = next_resolve_job(w, "queued", "handle")
    r1 = resolved(following.body)
    w.result(following, "continue", r1)
    r2 = confirmed(r1)
    w.result(following, "continue", r2)
    w.result(following, "stop", handled(r2))
    assert c.ending(queued).phase == "handle"  # the Client fails the test on any further reply for rid


# -- lost workers -----------------------------------------------------------------------------------------------------


def test_a_lost_default_chain_runs_again_at_the_phase_last_heard_of(spawn, broker):
    """6.7 and 5.15: with the default chain (through confirm), a worker lost after its resolve `continue` leaves the
    request in its confirm phase; the broker sends a confirm JOB with the resolve RESULT's body to another worker."""
    first = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "lifecycle", body(), deadline=10000)
    job = first.job()
    ten_frames(job, "resolve", "confirm")
    second = worker(spawn, broker)  # registered after the job went out: it cannot have taken it
    r1 = resolved(job.body)
    first.result(job, "continue", r1)
    first.disconnect()  # after the RESULT on the same connection: the broker has heard of the continue
    confirm = second.job()
    ten_frames(confirm, "confirm", "confirm")
    assert confirm.job_id != job.job_id
    assert confirm.body == r1
    r2 = confirmed(confirm.body)
    second.result(confirm, "continue", r2)
    handle = second.job()
    ten_frames(handle, "handle", "handle")
    assert handle.body == r2
    second.result(handle, "stop", handled(handle.body))
    final = c.ending(rid)
    assert (final.status, final.phase) == ("final", "handle")


@pytest.mark.parametrize("continues,phase", [(0, "resolve"), (1, "confirm"), (2, "handle")])
def test_a_lost_chain_through_handle_ends_worker_lost(spawn, chain_broker, continues, phase):
    """5.15: a job chained through handle counts as a handle dispatch from the start: its worker lost in whatever
    phase ends the request `worker-lost`, naming the phase the broker last heard of, and it never runs again."""
    first = worker(spawn, chain_broker)
    c = spawn.client(chain_broker, version=2)
    c.chain_through_handle = True  # worker-lost may name resolve or confirm (5.15)
    rid = c.request("PyEcho", "lifecycle", body(), deadline=10000)
    job = first.job()
    ten_frames(job, "resolve", "handle")
    second = worker(spawn, chain_broker)
    out = job.body
    for make in (resolved, confirmed)[:continues]:
        out = make(out)
        first.result(job, "continue", out)
    first.disconnect()
    lost = c.ending(rid)
    assert (lost.status, lost.code, lost.phase) == ("error", "worker-lost", phase)
    if phase != "handle":
        assert "may have started handle" in lost.json["message"], lost.json
    # Nothing of it runs again: the second worker's next JOB is a new request's.
    later = c.request("PyEcho", "resolve", body("later"), deadline=10000)
    job2 = next_resolve_job(second, "later", "resolve")
    second.result(job2, "stop", resolved(job2.body))
    assert c.ending(later).status == "final"


# -- stray results ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("chain", ["confirm", "handle"])
def test_a_result_after_the_jobs_last_result_is_dropped(spawn, chain):
    """5.15: a RESULT for a job after its last RESULT is a stray result: dropped, whatever its outcome. The request
    goes on undisturbed, later requests are served, and the broker still answers PING."""
    broker = spawn.broker(heartbeat_ms=HB, chain_lifecycle=chain)
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "lifecycle", body(), deadline=10000)
    job = w.job()
    ten_frames(job, "resolve", chain)
    if chain == "confirm":
        r1 = resolved(job.body)
        w.result(job, "continue", r1)
        w.result(job, "continue", confirmed(r1))  # the job's last RESULT: F9's phase
        handle = w.job()
        # Strays of the chained job while its request runs handle: a continue and a stop.
        w.result(job, "continue", confirmed(r1))
        w.result(job, "stop", handled(confirmed(r1), job="stray"))
        answer = handled(handle.body, job=handle.job_id.hex())
        w.result(handle, "stop", answer)
        final = c.ending(rid)
        assert (final.status, final.phase, final.body) == ("final", "handle", answer)
    else:
        out = with_phase(job.body, "resolve", {"text": {"kind": "needsValue"}})
        w.result(job, "stop", out)  # the job's last RESULT: not continue
        final = c.ending(rid)
        assert (final.status, final.phase, final.body) == ("final", "resolve", out)
        # Strays: the phases a worker that ignored the stop would have run.
        w.result(job, "continue", confirmed(resolved(job.body)))
        w.result(job, "stop", handled(confirmed(resolved(job.body)), job="stray"))
    # The strays reached the broker before anything the worker sends later (one connection, in order).
    rid2 = c.request("PyEcho", "lifecycle", body("next"), deadline=10000)
    job2 = next_resolve_job(w, "next", chain)
    w.result(job2, "stop", with_phase(job2.body, "resolve", {"text": {"kind": "needsValue"}}))
    assert c.ending(rid2).phase == "resolve"
    stored = status_of(c, rid)
    assert (stored.status, stored.body) == ("final", final.body)  # the strays changed nothing of the ended request
    c.ping_roundtrip()
    assert broker.proc.alive()


# -- STATS --------------------------------------------------------------------------------------------------------


def test_a_cipw03_stats_query_is_answered_in_cipw03(spawn, broker):
    """5.15: a CIPW03 STATS query (from any peer, 5.14) is answered with F0 CIPW03 and a body of stats.schema.json."""
    from test_worker_v2 import stats_query
    w = worker(spawn, broker)
    answer = stats_query(broker.backend, [CIPW3, b"STATS"])
    assert answer is not None and answer[:2] == [CIPW3, b"STATS"] and len(answer) == 3, answer
    stats = json.loads(answer[2])
    cip.SCHEMA_SET.check("stats.schema.json", stats, "STATS body")
    (me,) = stats["workers"]
    assert (me["name"], me["capacity"], me["jobs"]) == (w.name.decode(), 1, 0)


def test_a_malformed_cipw03_stats_is_answered_in_cipw03(spawn, broker):
    """5.15: every message of version 03 has F0 CIPW03, so the ERROR malformed that answers a CIPW03 STATS with
    frames after F1 (check 3s) has it too, as the answer to a good one does."""
    from test_worker_v2 import stats_query
    bad = stats_query(broker.backend, [CIPW3, b"STATS", b"extra"])
    assert bad is not None and bad[1:3] == [b"ERROR", b"malformed"], bad
    assert bad[0] == CIPW3, bad
    assert b"CIPW03, STATS" in bad[3], bad


# -- the checkers themselves (cip.PyWorker, cip.PyBroker): what the tests above rely on -------------------------------


def v3_job(phase=b"resolve", last=b"confirm", key=b"", attempt=b"1", extra=()):
    return [CIPW3, b"JOB", b"job-0001", b"PyEcho", phase, b"3000", body(), key, attempt, last, *extra]


@pytest.mark.parametrize("frames,ok", [
    (v3_job(), True),
    (v3_job(b"handle", b"handle", key=b"k", attempt=b"2"), True),
    (v3_job(b"resolve", b"handle", key=b"k"), True),         # the key belongs to the job's handle phase (5.15)
    (v3_job(b"resolve", b"confirm", key=b"k"), False),       # no handle phase: no key
    (v3_job(b"confirm", b"resolve"), False),                 # F9 before F4
    (v3_job(last=b"lifecycle"), False),
    (v3_job(last=b""), False),
    (v3_job()[:9], False),                                   # 9 frames
    (v3_job(extra=[b"x"]), False),                           # 11 frames
], ids=["ok", "handle-keyed", "chain-to-handle-keyed", "key-without-handle", "last-before-phase", "last-lifecycle",
        "last-empty", "9-frames", "11-frames"])
def test_pyworker_checks_v3_jobs(spawn, run_dir, frames, ok):
    w = spawn.pyworker(f"ipc://{run_dir}/nobody-{uuid.uuid4().hex[:8]}.sock", version=3, ready=False)
    if ok:
        m = w.check(frames)
        assert (m.version, m.phase, m.last_phase) == (3, frames[4].decode(), frames[9].decode())
    else:
        with pytest.raises(cip.ProtocolViolation):
            w.check(frames)


def test_pybroker_follows_a_chained_job_phase_by_phase(spawn):
    """PyBroker checks each RESULT of a chained job against the outcome rule of the phase it answers, and refuses a
    RESULT after the job's last."""
    b = spawn.pybroker()
    rid = b"w"
    b.check(rid, [CIPW3, b"READY", b"1", rid, b"PyEcho"])
    job_id = b.job(rid, "PyEcho", "resolve", body(), last="handle")
    r1 = resolved(body())
    assert (b.check(rid, [CIPW3, b"RESULT", job_id, b"continue", r1]).phase, b.jobs[job_id].phase) == ("resolve",
                                                                                                         "confirm")
    with pytest.raises(cip.ProtocolViolation, match="outcome rule"):  # confirm `ready` must be continue
        b.check(rid, [CIPW3, b"RESULT", job_id, b"stop", confirmed(r1)])
    m = b.check(rid, [CIPW3, b"RESULT", job_id, b"stop", confirmed(r1, "failure")])
    assert (m.phase, m.last) == ("confirm", True)
    with pytest.raises(cip.ProtocolViolation, match="after its last RESULT"):
        b.check(rid, [CIPW3, b"RESULT", job_id, b"stop", handled(confirmed(r1, "failure"))])
