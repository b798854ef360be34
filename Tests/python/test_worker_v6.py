"""CIPW06 (PROTOCOL.md section 5.17) against the real broker, with Python workers: a worker that registers with a
CIPW06 READY gets every JOB in 4 frames, all its fields but the body packed into one header frame (job id, phase, last
phase, time left, attempt, intent type, idempotency key, and the trace context only when the job has one), while a
CIPW05 worker of the same kind gets the same fields as frames (10, or 12 with a trace context, 5.7). Every other
message of version 06 is the one of version 05: READY announces definitions, RESULT has 5 frames, the broker's
HEARTBEAT and ERROR have F0 CIPW06. cip.PyWorker reads each header and holds it to every rule of 5.17 (lengths that
add up, phases in order, an attempt of at least 1, a well-formed type and trace context), and each worker to the
version of its READY."""

from __future__ import annotations

import json
import uuid

import pytest
import zmq

import cip
from cip import CIPW5, CIPW6
from test_worker_v2 import body, handled, key, stats_query, with_phase

HB = 250  # heartbeat interval (ms)
CIPC04 = b"CIPC04"
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
# 5.16: a CIPW04 to CIPW06 READY announces each type's definition after it.
DEFINITION = {"intent": "PyEcho", "description": "Echo for the version-06 tests.",
              "parameters": [{"name": "text", "type": "string", "list": False, "required": False,
                              "description": "The text."}],
              "enums": {}, "confirmCodes": ["ready", "failure", "failureRequiringAppLaunch"],
              "handleCodes": ["success", "inProgress", "continueInApp", "failure", "failureRequiringAppLaunch"]}


@pytest.fixture
def broker(spawn):
    return spawn.broker(heartbeat_ms=HB)


def worker(spawn, broker, version: int = 6, capacity: int = 1) -> cip.PyWorker:
    """A registered PyWorker announcing PyEcho with its definition (5.16)."""
    return cip.registered_worker(spawn, broker, version=version, types=("PyEcho", json.dumps(DEFINITION)),
                                 capacity=capacity)


def header_length(job: cip.WorkerMessage) -> int:
    """The length of a packed header with the job's fields (5.17): 22 fixed bytes, the type and the key after their
    length bytes, and the trace context after their two-byte lengths when the job has one."""
    length = 22 + 1 + len(job.intent_type.encode()) + 1 + len(job.key)
    if job.traced:
        length += 2 + len(job.traceparent) + 2 + len(job.tracestate)
    return length


def assert_packed(job: cip.WorkerMessage) -> None:
    """A CIPW06 JOB: 4 frames, the job id the header's first 8 bytes, nothing in the header beyond its fields
    (PyWorker has checked every rule of 5.17 already)."""
    assert job.frames[0] == CIPW6 and job.frames[1] == b"JOB" and len(job.frames) == 4, job.frames
    assert job.frames[2][:8] == job.job_id
    assert len(job.frames[2]) == header_length(job)


class Caller:
    """A DEALER speaking CIPC04 (4.2: REQUEST F8 traceparent, F9 tracestate; its answers are CIPC03's with F0
    CIPC04), which cip.Client does not speak."""

    def __init__(self, endpoint: str):
        self.socket = zmq.Context.instance().socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(endpoint)

    def request(self, phase: str, payload: bytes, traceparent: str, tracestate: str = "", key: bytes = b"") -> bytes:
        rid = f"r-{uuid.uuid4().hex[:12]}".encode()
        self.socket.send_multipart([CIPC04, b"REQUEST", rid, b"PyEcho", phase.encode(), b"10000", payload, key,
                                    traceparent.encode(), tracestate.encode()])
        return rid

    def ending(self, rid: bytes, timeout_ms: int = 15000) -> list[bytes]:
        while self.socket.poll(timeout_ms):
            frames = self.socket.recv_multipart()
            assert frames[0] == CIPC04 and len(frames) == 7, frames
            if frames[2] == rid and frames[3] != b"progress":
                return frames
        raise TimeoutError(f"no ending REPLY for {rid!r}")

    def close(self) -> None:
        self.socket.close(0)


@pytest.fixture
def caller(broker):
    c = Caller(broker.frontend)
    yield c
    c.close()


def answer_resolve_and_confirm(w, job, text: str) -> bytes:
    """Answers a chained job's resolve (text resolved to `text`) and confirm (ready) with `continue` RESULTs under its
    job id (5.15); returns the confirm RESULT's body."""
    resolved = with_phase(job.body, "resolve", {"text": {"kind": "success", "value": text}})
    w.result(job, "continue", resolved)
    confirmed = with_phase(resolved, "confirm", {"code": "ready"})
    w.result(job, "continue", confirmed)
    return confirmed


def test_a_v6_worker_is_spoken_to_in_cipw06_and_gets_packed_jobs(spawn, broker):
    """5.17: a keyed handle REQUEST without a trace context reaches a CIPW06 worker as [CIPW06, JOB, header, body]:
    phase and last phase handle, the key and attempt 1, the time left within the deadline, the header ending after the
    key, the body the REQUEST's byte for byte (5.7). The broker's HEARTBEATs have F0 CIPW06 (PyWorker checks every
    message against the version of its READY); the worker's CIPW06 RESULT answers the request."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    k = key()
    payload = body("packed")
    rid = c.request("PyEcho", "handle", payload, deadline=10000, key=k)
    job = w.job()
    assert_packed(job)
    assert (job.intent_type, job.phase, job.last_phase, job.key, job.attempt) == ("PyEcho", "handle", "handle", k, 1)
    assert not job.traced and (job.traceparent, job.tracestate) == (b"", b"")
    assert 0 < job.time_left <= 10000
    assert job.body == payload
    w.result(job, "stop", handled(job))
    final = c.ending(rid)
    assert final.status == "final" and final.json["handle"]["data"]["attempt"] == 1


def test_a_keyed_lifecycle_in_packed_jobs(spawn, broker):
    """5.17 with 5.15 and 5.13: a keyed lifecycle is a resolve job through confirm (last phase byte 1), without the
    key (it has no handle phase), answered with a RESULT per phase under its job id; then a handle job of its own
    with the key and attempt 1, whose body is the confirm RESULT's byte for byte."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    k = key()
    rid = c.request("PyEcho", "lifecycle", body("life"), deadline=10000, key=k)
    first = w.job()
    assert_packed(first)
    assert (first.phase, first.last_phase, first.key, first.attempt) == ("resolve", "confirm", b"", 1)
    confirmed = answer_resolve_and_confirm(w, first, "life")
    handle = w.job()
    assert_packed(handle)
    assert (handle.phase, handle.last_phase, handle.key, handle.attempt) == ("handle", "handle", k, 1)
    assert handle.job_id != first.job_id
    assert handle.body == confirmed
    w.result(handle, "stop", handled(handle))
    assert c.ending(rid).status == "final"


def test_a_whole_lifecycle_in_one_packed_job(spawn):
    """5.17 with 5.15: a broker run with `--chain-lifecycle handle` sends a request without a key as one job through
    handle: the last phase byte is 2."""
    broker = spawn.broker(heartbeat_ms=HB, chain_lifecycle="handle")
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    rid = c.request("PyEcho", "lifecycle", body("whole"), deadline=10000)
    job = w.job()
    assert_packed(job)
    assert (job.phase, job.last_phase, job.key, job.attempt) == ("resolve", "handle", b"", 1)
    confirmed = answer_resolve_and_confirm(w, job, "whole")
    w.result(job, "stop", with_phase(confirmed, "handle", {"code": "success", "userActivity": {
        "activityType": "PyEcho", "userInfo": {}}}))
    assert c.ending(rid).status == "final"


def test_after_a_clean_cancel_the_next_packed_job_is_attempt_2(spawn, broker):
    """5.17 with 4.10.1 and 5.13: a keyed handle job answered `cancelled` after the broker's CANCEL (in CIPW06) runs
    no more; the retry with the key is the next attempt, 2 in the header."""
    w = worker(spawn, broker)
    c = spawn.client(broker, version=2)
    k = key()
    r1 = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    job1 = w.job()
    assert (job1.key, job1.attempt) == (k, 1)
    c.cancel(r1)
    cancel = w.cancel_of(job1)
    assert cancel.frames[0] == CIPW6
    w.cancelled(job1)
    assert c.ending(r1).code == "cancelled"
    r2 = c.request("PyEcho", "handle", body(), deadline=10000, key=k)
    job2 = w.job()
    assert_packed(job2)
    assert (job2.key, job2.attempt) == (k, 2)
    w.result(job2, "stop", handled(job2))
    final = c.ending(r2)
    assert final.status == "final" and final.json["handle"]["data"]["attempt"] == 2


@pytest.mark.parametrize("version", [6, 5], ids=["cipw06", "cipw05"])
@pytest.mark.parametrize("traceparent,tracestate,k", [
    (TRACEPARENT, "vendor=1,other=two", b"trace-key"),
    (TRACEPARENT, "", b""),
    ("", "", b"no-trace-key"),
], ids=["traced-keyed", "traceparent-only", "cipc04-untraced"])
def test_the_callers_trace_context_reaches_the_job(spawn, broker, caller, version, traceparent, tracestate, k):
    """5.7 and 5.17: a broker without `--tracing` passes the REQUEST's trace context (CIPC04 F8/F9, 4.2) to the
    job unchanged: for a CIPW06 worker at the end of the header (traceparent and tracestate, each after its two-byte
    length; an empty tracestate has length 0), for a CIPW05 worker as F10/F11 (12 frames). A CIPC04 REQUEST with an
    empty F8 carries none: the header ends after the key, and a CIPW05 JOB has 10 frames. The key and attempt travel
    alongside."""
    w = worker(spawn, broker, version=version)
    payload = body("traced")
    rid = caller.request("handle", payload, traceparent, tracestate, key=k)
    job = w.job()
    assert (job.phase, job.key, job.attempt, job.body) == ("handle", k, 1, payload)
    assert (job.traceparent, job.tracestate) == (traceparent.encode(), tracestate.encode())
    assert job.traced == bool(traceparent), "a job of a request without a trace context has none (5.7)"
    if version == 6:
        assert_packed(job)
    else:
        assert job.frames[0] == CIPW5 and len(job.frames) == (12 if traceparent else 10), job.frames
    w.result(job, "stop", handled(job))
    ending = caller.ending(rid)
    assert ending[3] == b"final", ending


def test_the_brokers_other_messages_to_a_v6_worker_are_cipw06(spawn, broker):
    """5.17 (every message but JOB as in version 05) and 5.9: the ERROR that answers a registered CIPW06 worker's
    malformed RESULT has F0 CIPW06, and the worker stays registered; a CIPW06 STATS query (5.14) is answered in
    CIPW06 and lists the worker."""
    w = worker(spawn, broker)
    w.send([CIPW6, b"RESULT", b"short", b"stop", b"{}"])
    error = w.next(lambda m: m.command == "ERROR", what="ERROR")
    assert (error.frames[0], error.code) == (CIPW6, "malformed"), error
    w.wait_heartbeat()
    answer = stats_query(broker.backend, [CIPW6, b"STATS"])
    assert answer is not None and answer[:2] == [CIPW6, b"STATS"] and len(answer) == 3, answer
    assert w.name.decode() in {worker["name"] for worker in json.loads(answer[2])["workers"]}
