"""CIP/Worker from the spec: Python workers (cip.PyWorker) register with READY, receive JOBs, answer RESULTs,
heartbeat, drain and disconnect against a real broker, while a Python client drives requests through them. Every
message the broker sends a Python worker is checked (frame counts, 8-byte job ids, phases, decimal time left, error
codes), and everything the client receives is checked as everywhere else."""

from __future__ import annotations

import time

import pytest

import cip
from cip import CIPW, interaction

HB = 250  # heartbeat interval of the brokers of this module (ms): a silent worker is dead after 750 ms


@pytest.fixture
def broker(spawn):
    return spawn.broker(heartbeat_ms=HB)


def registered(spawn, broker, **kw):
    w = spawn.pyworker(broker, **kw)
    w.wait_heartbeat()
    return w


def activity(intent_type):
    return {"activityType": intent_type, "userInfo": {}}


def with_phase(body: bytes, key: str, value) -> bytes:
    """A worker's output: the input object with the phase's key set (5.11 step 5), keeping the input's bytes."""
    obj = cip.json.loads(body)
    obj[key] = value
    return cip.encode(obj)


def wait_for_status(c, rid, predicate, timeout: float = 15.0):
    """STATUS for rid until its answer satisfies predicate (observable state instead of a fixed sleep)."""
    end = time.monotonic() + timeout
    while True:
        c.status(rid)
        s = c.status_answer(rid)
        if predicate(s):
            return s
        assert time.monotonic() < end, f"STATUS of {rid!r} never got there: {s}"
        time.sleep(0.01)


# -- READY, JOB, RESULT: a whole lifecycle through a Python worker ----------------------------------------------


def test_python_worker_runs_a_lifecycle_and_bodies_pass_byte_for_byte(spawn, broker):
    w = registered(spawn, broker, types=["PyEcho"], capacity=1)
    c = spawn.client(broker)
    # Unusual but valid JSON formatting: the broker must pass bodies on byte for byte (5.7, 6.1).
    request_body = b'{ "intent" : {"type":"PyEcho",\n "parameters": {"text": "caf\\u00e9"}}, "z-extra": [1, 2.50] }'
    rid = c.request("PyEcho", "lifecycle", request_body, deadline=10000)

    resolve = w.job()
    assert (resolve.intent_type, resolve.phase) == ("PyEcho", "resolve")
    assert resolve.body == request_body
    assert 0 < resolve.time_left <= 10000
    resolved = request_body[:-1] + b', "resolve": {"text": {"kind": "success", "value": "caf\\u00e9"}}  }'
    w.result(resolve, "continue", resolved)

    confirm = w.job()
    assert (confirm.phase, confirm.body) == ("confirm", resolved)
    assert confirm.job_id != resolve.job_id  # 5.7: a new job id for every JOB
    assert confirm.time_left <= resolve.time_left
    confirmed = resolved[:-1] + b',"confirm":{"code":"ready"}}'
    w.result(confirm, "continue", confirmed)

    handle = w.job()
    assert (handle.phase, handle.body) == ("handle", confirmed)
    assert len({resolve.job_id, confirm.job_id, handle.job_id}) == 3
    handled = confirmed[:-1] + b',"handle":{"code":"success","userActivity":{"activityType":"PyEcho","userInfo":{}}}}'
    w.result(handle, "stop", handled)

    final = c.reply(rid)
    assert (final.status, final.phase, final.body) == ("final", "handle", handled)


@pytest.mark.parametrize("outcome", ["stop", "continue"])
def test_single_phase_request_ends_with_its_job_whatever_the_outcome(spawn, broker, outcome):
    """6.1: for resolve, confirm and handle requests the broker ignores the difference between continue and stop."""
    w = registered(spawn, broker, types=["PyEcho"])
    c = spawn.client(broker)
    rid = c.request("PyEcho", "confirm", interaction("PyEcho"))
    job = w.job()
    assert job.phase == "confirm"
    out = with_phase(job.body, "confirm", {"code": "ready"})
    w.result(job, outcome, out)
    final = c.reply(rid)
    assert (final.status, final.phase, final.body) == ("final", "confirm", out)
    w.expect_nothing(0.2)


def test_stop_ends_a_lifecycle_at_resolve(spawn, broker):
    w = registered(spawn, broker, types=["PyEcho"])
    c = spawn.client(broker)
    rid = c.request("PyEcho", "lifecycle", interaction("PyEcho"))
    job = w.job()
    out = with_phase(job.body, "resolve", {"text": {"kind": "needsValue"}})
    w.result(job, "stop", out)
    final = c.reply(rid)
    assert (final.phase, final.body) == ("resolve", out)
    w.expect_nothing(0.2)


def test_unknown_outcome_is_treated_as_stop(spawn, broker):
    """5.3: a broker SHOULD treat any other F3 value as stop."""
    w = registered(spawn, broker, types=["PyEcho"])
    c = spawn.client(broker)
    rid = c.request("PyEcho", "lifecycle", interaction("PyEcho"))
    job = w.job()
    out = with_phase(job.body, "resolve", {})
    w.result(job, "perhaps", out)
    final = c.reply(rid)
    assert (final.status, final.phase, final.body) == ("final", "resolve", out)
    w.expect_nothing(0.2)


@pytest.mark.parametrize("code", ["unknown-intent", "internal", "bad-body", "handler-failed", "malformed"])
def test_error_result_is_forwarded_unchanged_and_not_run_again(spawn, broker, code):
    """6.1, 10.3: an error RESULT ends the request with its body byte for byte (F4: the job's phase); the job is not
    dispatched again. `internal` is how a client sees an unexpected failure in a worker."""
    w = registered(spawn, broker, types=["PyEcho"])
    c = spawn.client(broker)
    rid = c.request("PyEcho", "lifecycle", interaction("PyEcho"))
    job = w.job()
    body = cip.encode({"code": code, "message": f"the Python worker says {code} \u2713"})
    w.result(job, "error", body)
    error = c.reply(rid)
    assert (error.status, error.phase, error.code, error.body) == ("error", "resolve", code, body)
    w.expect_nothing(0.3)


def test_job_time_left_is_zero_after_the_deadline(spawn, broker):
    """5.7: F5 is the time left until the deadline, 0 once it has passed; 6.3: progress at the deadline."""
    w = registered(spawn, broker, types=["PyEcho"])
    c = spawn.client(broker)
    rid = c.request("PyEcho", "lifecycle", interaction("PyEcho"), deadline=200)
    job = w.job()
    assert job.time_left <= 200
    progress = c.reply(rid)
    assert (progress.status, progress.json["state"], progress.json["worker"]) == (
        "progress", "running", w.name.decode())
    # The broker acts a reply margin early (6.3): wait until its own clock says the deadline itself has passed.
    wait_for_status(c, rid, lambda s: s.json["elapsed_ms"] >= 200)
    w.result(job, "continue", with_phase(job.body, "resolve", {}))
    confirm = w.job()
    assert confirm.time_left == 0
    assert confirm.frames[5] == b"0"
    w.result(confirm, "stop", with_phase(confirm.body, "confirm", {"code": "failure"}))
    assert c.reply(rid).phase == "confirm"


# -- rogue and malformed RESULTs (5.12) -------------------------------------------------------------------------


def test_rogue_result_for_a_job_never_given_is_dropped(spawn, broker):
    """5.12: a RESULT whose job id is not assigned to the worker is dropped silently; the worker stays registered
    and the request it is really running is not affected."""
    w = registered(spawn, broker, types=["PyEcho"])
    c = spawn.client(broker)
    w.result(b"\xde\xad\xbe\xef\x00\x00\x00\x01", "stop", interaction("PyEcho"))  # nothing in flight at all
    rid = c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=10000)
    job = w.job()
    rogue = bytes(b ^ 0xFF for b in job.job_id)
    w.result(rogue, "stop", with_phase(job.body, "resolve", {"rogue": {"kind": "notRequired"}}))
    w.result(rogue, "error", {"code": "internal", "message": "rogue"})
    w.expect_nothing(0.3)
    c.expect_silence(0.1)
    c.status(rid)
    assert c.status_answer(rid).json["state"] == "running"
    out = with_phase(job.body, "resolve", {})
    w.result(job, "stop", out)
    assert c.reply(rid).body == out
    w.result(job, "stop", out)  # the same job answered twice: the second RESULT is dropped too
    w.expect_nothing(0.3)
    c.expect_silence(0.1)


def test_result_for_another_workers_job_is_dropped(spawn, broker):
    a = registered(spawn, broker, types=["PyEcho"])
    b = registered(spawn, broker, types=["PyEcho"])
    c = spawn.client(broker)
    r1 = c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=10000)
    r2 = c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=10000)
    ja, jb = a.job(), b.job()  # 6.5: least load first, so one job each
    a.result(jb, "stop", with_phase(jb.body, "resolve", {"stolen": {"kind": "notRequired"}}))
    c.expect_silence(0.3)
    b.result(jb, "stop", with_phase(jb.body, "resolve", {}))
    a.result(ja, "stop", with_phase(ja.body, "resolve", {}))
    assert {c.reply(r1).status, c.reply(r2).status} == {"final"}


@pytest.mark.parametrize("frames", [
    [CIPW, b"RESULT", b"1234567", b"stop", b"{}"],
    [CIPW, b"RESULT", b"123456789", b"stop", b"{}"],
    [CIPW, b"RESULT", b"12345678", b"stop"],
    [CIPW, b"RESULT", b"12345678", b"stop", b"{}", b"extra"],
    [CIPW, b"RESULT", b"12345678", b"stop", b""],
], ids=["short-id", "long-id", "4-frames", "6-frames", "empty-body"])
def test_malformed_result_gets_error_and_the_job_stays_assigned(spawn, broker, frames):
    w = registered(spawn, broker, types=["PyEcho"])
    c = spawn.client(broker)
    rid = c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=10000)
    job = w.job()
    w.send(frames)
    error = w.next(lambda m: m.command == "ERROR")
    assert error.code == "malformed"
    c.status(rid)
    assert c.status_answer(rid).json["state"] == "running"
    out = with_phase(job.body, "resolve", {})
    w.result(job, "stop", out)
    assert c.reply(rid).body == out


# -- backend message checks (5.12) ------------------------------------------------------------------------------


@pytest.mark.parametrize("frames", [
    [CIPW, b"READY", b"many", b"rogue", b"Echo"],  # example 12.6
    [CIPW, b"READY", b"0", b"rogue", b"Echo"],
    [CIPW, b"READY", b"1001", b"rogue", b"Echo"],
    [CIPW, b"READY", b"-1", b"rogue", b"Echo"],
    [CIPW, b"READY", b"16 ", b"rogue", b"Echo"],
    [CIPW, b"READY", b"1234567890", b"rogue", b"Echo"],
    [CIPW, b"READY", b"16", b"rogue"],
    [CIPW, b"READY", b"16", b"", b"Echo"],
    [CIPW, b"READY", b"16", b"rogue", b""],
    [CIPW, b"READY", b"16", b"rogue", b"Echo", b"T" * 256],
    [CIPW, b"READY", b"16", b"\x00rogue", b"Echo"],
    [CIPW, b"READY", b"16", b"rog\xffue", b"Echo"],
    [CIPW, b"READY", b"16", b"rogue", b"Ec\xc3ho"],
    [CIPW, b"READY", b"16", b"r" * 256, b"Echo"],
    [CIPW, b"READY", b"16", b"rogue"] + [b"T%d" % i for i in range(61)],
], ids=["many", "zero", "1001", "negative", "space", "ten-digits", "no-types", "empty-name", "empty-type",
        "long-type", "name-zero-byte", "name-not-utf8", "type-not-utf8", "long-name", "above-frame-limit"])
def test_malformed_ready_is_refused(spawn, broker, frames):
    """5.12 check 3: ERROR malformed; the worker is not registered (a HEARTBEAT then gets DISCONNECT)."""
    w = spawn.pyworker(broker, ready=False)
    w.send(frames)
    error = w.next(lambda m: m.command == "ERROR")
    assert error.code == "malformed" and error.text
    w.heartbeat()
    assert w.next(lambda m: m.command == "DISCONNECT").frames == [CIPW, b"DISCONNECT"]


def test_ready_with_sixty_intent_types(spawn, broker):
    """5.12: the frame limit (at least 64) bounds a READY to 60 intent types; 60 are accepted."""
    types = [f"PyT{i}" for i in range(60)]
    w = registered(spawn, broker, types=types, capacity=1)
    c = spawn.client(broker)
    rid = c.request("PyT59", "resolve", interaction("PyT59"))
    job = w.job()
    assert job.intent_type == "PyT59"
    w.result(job, "stop", with_phase(job.body, "resolve", {}))
    assert c.reply(rid).status == "final"


def test_worker_name_is_f3_of_ready(spawn, broker):
    """5.2: the broker keys a worker by routing id and names it by READY's F3 (in progress bodies, for example)."""
    w = spawn.pyworker(broker, name=b"routing-id-1", ready=False)
    w.send([CIPW, b"READY", b"1", b"the-name", b"PyEcho"])
    w.heartbeating = True
    w.wait_heartbeat()
    c = spawn.client(broker)
    rid = c.request("PyEcho", "handle", interaction("PyEcho"), deadline=10000)
    job = w.job()
    c.status(rid)
    assert c.status_answer(rid).json["worker"] == "the-name"
    w.result(job, "stop", with_phase(job.body, "handle", {"code": "success", "userActivity": activity("PyEcho")}))
    assert c.reply(rid).status == "final"


def test_ready_with_leading_zeros_and_repeated_types(spawn, broker):
    """3.3: leading zeros are allowed in decimals; 5.2: repeated intent types are ignored."""
    w = spawn.pyworker(broker, ready=False, types=["PyEcho"])
    w.send([CIPW, b"READY", b"0002", w.name, b"PyEcho", b"PyEcho"])
    w.heartbeating = True
    w.wait_heartbeat()
    c = spawn.client(broker)
    rids = [c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=10000) for _ in range(3)]
    jobs = [w.job(), w.job()]
    w.expect_nothing(0.3)  # capacity 2
    for j in jobs:
        w.result(j, "stop", with_phase(j.body, "resolve", {}))
    w.result(w.job(), "stop", with_phase(jobs[0].body, "resolve", {}))
    for rid in rids:
        assert c.reply(rid).status == "final"


@pytest.mark.parametrize("frames,code", [
    ([CIPW], "malformed"),
    ([b"CIPW09", b"READY", b"1", b"w", b"Echo"], "unsupported-version"),
    ([b"CIPC01", b"PING"], "unsupported-version"),
], ids=["one-frame", "CIPW09", "client-signature"])
def test_backend_errors_for_any_sender(spawn, broker, frames, code):
    w = spawn.pyworker(broker, ready=False)
    w.send(frames)
    assert w.next(lambda m: m.command == "ERROR").code == code


def test_unknown_command_from_a_registered_worker(spawn, broker):
    """5.12 check 5: ERROR unknown-command; the message still proves the worker alive, and it stays registered."""
    w = registered(spawn, broker, types=["PyEcho"])
    for frames in ([CIPW, b"JOB"], [CIPW, b"PING"], [CIPW, b"ready", b"1", w.name, b"PyEcho"]):
        w.send(frames)
        assert w.next(lambda m: m.command == "ERROR").code == "unknown-command"
    c = spawn.client(broker)
    rid = c.request("PyEcho", "resolve", interaction("PyEcho"))
    job = w.job()
    w.result(job, "stop", with_phase(job.body, "resolve", {}))
    assert c.reply(rid).status == "final"


def test_messages_from_an_unregistered_worker(spawn, broker):
    """5.12 check 4 and example 12.6: DISCONNECT in answer to anything but READY; nothing for DISCONNECT."""
    w = spawn.pyworker(broker, ready=False)
    for frames in ([CIPW, b"HEARTBEAT"], [CIPW, b"RESULT", b"12345678", b"stop", b"{}"], [CIPW, b"DRAIN"],
                   [CIPW, b"NONSENSE"]):
        w.send(frames)
        assert w.next(lambda m: m.command == "DISCONNECT").command == "DISCONNECT"
    w.send([CIPW, b"DISCONNECT"])
    w.expect_nothing(0.3)


def test_broker_heartbeats_registered_workers(spawn, broker):
    """7.1: the broker sends HEARTBEAT once per interval, busy or not."""
    w = registered(spawn, broker, types=["PyEcho"])
    start = w.heartbeats_received
    w.pump(6 * HB / 1000)
    assert w.heartbeats_received - start >= 3


# -- capacity and load balancing (6.5) --------------------------------------------------------------------------


def test_broker_never_exceeds_capacity(spawn, broker):
    w = registered(spawn, broker, types=["PyEcho"], capacity=2)
    c = spawn.client(broker)
    rids = [c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=10000) for _ in range(4)]
    jobs = [w.job(), w.job()]
    w.expect_nothing(0.3)
    w.result(jobs[0], "stop", with_phase(jobs[0].body, "resolve", {}))
    jobs.append(w.job())
    w.expect_nothing(0.2)
    for j in jobs[1:]:
        w.result(j, "stop", with_phase(j.body, "resolve", {}))
    last = w.job()
    w.result(last, "stop", with_phase(last.body, "resolve", {}))
    for rid in rids:
        assert c.reply(rid).status == "final"


def test_least_loaded_worker_gets_the_job(spawn, broker):
    a = registered(spawn, broker, types=["PyEcho"], capacity=10)
    b = registered(spawn, broker, types=["PyEcho"], capacity=10)
    c = spawn.client(broker)
    for _ in range(6):
        c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=10000)
    # All six are dispatched at once (both workers have room); wait for them, however slow the machine is.
    end = time.monotonic() + 15
    while True:
        a.pump(0.05)
        b.pump(0.05)
        ja = [m for m in a.inbox if m.command == "JOB"]
        jb = [m for m in b.inbox if m.command == "JOB"]
        if len(ja) + len(jb) >= 6 or time.monotonic() > end:
            break
    assert (len(ja), len(jb)) == (3, 3)
    for worker, jobs in ((a, ja), (b, jb)):
        for j in jobs:
            worker.result(j, "stop", with_phase(j.body, "resolve", {}))
    for _ in range(6):
        assert c.next(lambda m: m.command == "REPLY").status == "final"


def test_freed_worker_takes_the_oldest_request_of_its_types(spawn, broker):
    """6.5: queues are FIFO; a freed worker takes the job of the oldest request among the queues of its types."""
    w = registered(spawn, broker, types=["PyA", "PyB"], capacity=1)
    c = spawn.client(broker)
    first = c.request("PyA", "resolve", interaction("PyA"), deadline=10000)
    job = w.job()
    order = [c.request(t, "resolve", interaction(t), deadline=10000) for t in ("PyB", "PyA", "PyB")]
    # STATUS is answered in order after the REQUESTs of the same connection: all three are queued now.
    wait_for_status(c, order[-1], lambda s: s.json["state"] == "queued")
    w.result(job, "stop", with_phase(job.body, "resolve", {}))
    assert c.reply(first).status == "final"
    for rid, t in zip(order, ("PyB", "PyA", "PyB")):
        j = w.job()
        assert j.intent_type == t
        w.result(j, "stop", with_phase(j.body, "resolve", {}))
        assert c.reply(rid).status == "final"


def test_late_result_after_timeout_frees_the_slot(spawn):
    """6.3: after a timeout the job keeps its worker's slot until the worker answers; the late RESULT is dropped."""
    broker = spawn.broker(heartbeat_ms=HB, hard_limit_ms=500, deadline_ms=300)
    w = registered(spawn, broker, types=["PyEcho"], capacity=1)
    c = spawn.client(broker)
    rid = c.request("PyEcho", "handle", interaction("PyEcho"), deadline=300)
    job = w.job()
    progress, error = c.replies(rid)
    assert (progress.status, error.code, error.phase) == ("progress", "timeout", "handle")
    nxt = c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=b"")
    w.expect_nothing(0.2)  # the slot is still taken
    w.result(job, "stop", with_phase(job.body, "handle", {"code": "success", "userActivity": activity("PyEcho")}))
    j2 = w.job()
    assert j2.phase == "resolve"
    w.result(j2, "stop", with_phase(j2.body, "resolve", {}))
    assert c.replies(nxt)[-1].status == "final"
    c.status(rid)
    assert c.status_answer(rid).code == "timeout"  # the late RESULT changed nothing


# -- lost workers (6.7), re-registration (5.10), drain (8.1) ----------------------------------------------------


def test_disconnect_during_handle_is_worker_lost(spawn, broker):
    w = registered(spawn, broker, types=["PyEcho"])
    other = registered(spawn, broker, types=["PyEcho"])
    c = spawn.client(broker)
    rid = c.request("PyEcho", "handle", interaction("PyEcho"), deadline=10000)
    # Whichever worker got the job leaves; the other one must not get it (handle jobs never run twice).
    got = None
    end = time.monotonic() + 5
    while got is None and time.monotonic() < end:
        for candidate in (w, other):
            try:
                candidate.job(timeout=0.05)
                got = candidate
                break
            except TimeoutError:
                pass
    assert got is not None
    bystander = other if got is w else w
    got.disconnect()
    error = c.reply(rid)
    assert (error.code, error.phase) == ("worker-lost", "handle")
    bystander.expect_nothing(0.3)


def test_disconnect_during_resolve_dispatches_the_job_again_and_progress_can_be_queued(spawn, broker):
    """6.7: the resolve job goes out again with a new job id and the same body; 6.3: a started request whose job
    waits for a worker at the deadline gets a progress REPLY with state queued (no worker)."""
    w1 = registered(spawn, broker, types=["PyEcho"])
    c = spawn.client(broker)
    rid = c.request("PyEcho", "lifecycle", interaction("PyEcho", text="again"), deadline=300)
    job1 = w1.job()
    w1.disconnect()
    progress = c.reply(rid)
    assert (progress.status, progress.phase, progress.json["state"]) == ("progress", "resolve", "queued")
    assert "worker" not in progress.json
    w2 = registered(spawn, broker, types=["PyEcho"])
    job2 = w2.job()
    assert (job2.phase, job2.body) == ("resolve", job1.body)
    assert job2.job_id != job1.job_id
    out = with_phase(job2.body, "resolve", {"text": {"kind": "needsValue"}})
    w2.result(job2, "stop", out)
    final = c.reply(rid)
    assert (final.phase, final.body) == ("resolve", out)


def test_silent_worker_with_a_handle_job_is_worker_lost(spawn, broker):
    """7.1: a worker silent for liveness x interval is dead; its handle job ends with worker-lost; when it speaks
    again it gets DISCONNECT."""
    w = registered(spawn, broker, types=["PyEcho"])
    c = spawn.client(broker)
    rid = c.request("PyEcho", "handle", interaction("PyEcho"), deadline=10000)
    job = w.job()
    w.silent = True
    error = c.reply(rid, timeout=10)
    assert (error.code, error.phase) == ("worker-lost", "handle")
    w.silent = False
    w.result(job, "stop", with_phase(job.body, "handle", {"code": "success", "userActivity": activity("PyEcho")}))
    assert w.next(lambda m: m.command == "DISCONNECT").command == "DISCONNECT"


def test_silent_last_worker_with_a_resolve_job_then_a_new_worker(spawn, broker):
    """7.1 and 6.7: the only worker of a type goes silent while it runs a resolve job; the job is queued again and
    runs on a worker that registers within the grace period (6.6). (The reference broker crashed here: an
    arithmetic overflow in its grace-period check.)"""
    w1 = registered(spawn, broker, types=["PyLonely"])
    c = spawn.client(broker)
    rid = c.request("PyLonely", "resolve", interaction("PyLonely"), deadline=10000)
    job1 = w1.job()
    w1.silent = True
    # Declared dead after 3 intervals: its job goes back to the queue (running -> queued), with no worker left.
    s = wait_for_status(c, rid, lambda s: s.status != "progress" or s.json["state"] != "running")
    assert (s.status, s.json["state"]) == ("progress", "queued")
    w2 = registered(spawn, broker, types=["PyLonely"])
    job2 = w2.job()
    assert job2.body == job1.body and job2.job_id != job1.job_id
    w2.result(job2, "stop", with_phase(job2.body, "resolve", {}))
    assert c.reply(rid).status == "final"


def test_silent_worker_with_a_resolve_job_goes_to_another_worker(spawn, broker):
    w1 = registered(spawn, broker, types=["PyEcho"])
    c = spawn.client(broker)
    rid = c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=10000)
    job1 = w1.job()
    w2 = registered(spawn, broker, types=["PyEcho"])
    w1.silent = True
    job2 = w2.job(timeout=10)
    assert job2.body == job1.body and job2.job_id != job1.job_id
    w2.result(job2, "stop", with_phase(job2.body, "resolve", {}))
    assert c.reply(rid).status == "final"


def test_ready_again_starts_a_new_registration(spawn, broker):
    """5.10: a READY from a registered routing id loses the previous registration's jobs (resolve: sent again,
    with a new job id, possibly to the same name); a RESULT for the old job id is then dropped."""
    w = registered(spawn, broker, types=["PyEcho"], capacity=1)
    c = spawn.client(broker)
    rid = c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=10000)
    old = w.job()
    w.ready()
    new = w.job()
    assert new.job_id != old.job_id and new.body == old.body
    w.result(old, "stop", with_phase(old.body, "resolve", {"old": {"kind": "notRequired"}}))
    c.expect_silence(0.3)
    out = with_phase(new.body, "resolve", {})
    w.result(new, "stop", out)
    assert c.reply(rid).body == out


def test_reconnect_with_the_same_name_takes_over(spawn, broker):
    """3.2 ROUTER_HANDOVER and 5.10: a new socket with the same routing id that sends READY is the worker now."""
    w = registered(spawn, broker, types=["PyEcho"])
    w.open()  # a new socket, same name (the old one is closed)
    w.ready()
    w.wait_heartbeat()
    c = spawn.client(broker)
    rid = c.request("PyEcho", "resolve", interaction("PyEcho"))
    job = w.job()
    w.result(job, "stop", with_phase(job.body, "resolve", {}))
    assert c.reply(rid).status == "final"


def test_drain(spawn, broker):
    """8.1 and example 12.7: DRAIN is acknowledged with DRAIN; no JOB after it; running jobs finish normally; new
    requests for the type queue (a draining worker still serves it) and go to the next worker."""
    w = registered(spawn, broker, types=["PyEcho"], capacity=4)
    c = spawn.client(broker)
    running = c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=10000)
    job = w.job()
    w.drain()
    ack = w.next(lambda m: m.command == "DRAIN")
    assert ack.frames == [CIPW, b"DRAIN"]
    waiting = c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=10000)
    w.expect_nothing(0.3, commands=("JOB",))
    c.status(waiting)
    assert c.status_answer(waiting).json["state"] == "queued"
    out = with_phase(job.body, "resolve", {})
    w.result(job, "stop", out)
    assert c.reply(running).body == out
    w.disconnect()
    w.close()
    successor = registered(spawn, broker, types=["PyEcho"])
    j = successor.job()
    successor.result(j, "stop", with_phase(j.body, "resolve", {}))
    assert c.reply(waiting).status == "final"


def test_no_job_after_the_drain_acknowledgement(spawn, broker):
    """5.5: the acknowledgement is sent after the broker stopped giving the worker jobs, so every JOB sent before it
    arrives before it, and none after it; 8.1: JOBs that arrive before the acknowledgement are run like any other."""
    w = registered(spawn, broker, types=["PyEcho"], capacity=50)
    c = spawn.client(broker)
    rids = [c.request("PyEcho", "resolve", interaction("PyEcho"), deadline=20000) for _ in range(20)]
    w.pump(0.01)
    w.drain()  # while JOBs are still coming
    w.next(lambda m: m.command == "DRAIN")
    before = [m for m in w.inbox if m.command == "JOB"]  # everything that came before the acknowledgement
    w.inbox = [m for m in w.inbox if m.command != "JOB"]
    w.expect_nothing(0.3, commands=("JOB",))
    for j in before:
        w.result(j, "stop", with_phase(j.body, "resolve", {}))
    late = registered(spawn, broker, types=["PyEcho"], capacity=50)  # takes what was queued after the DRAIN
    for _ in range(len(rids) - len(before)):
        j = late.job()
        late.result(j, "stop", with_phase(j.body, "resolve", {}))
    for rid in rids:
        assert c.reply(rid).status == "final"


def test_queued_jobs_end_with_unknown_intent_after_the_grace_period(spawn):
    """6.6: the last worker of a type leaves; jobs still queued when the grace period ends without a new worker end
    with unknown-intent (F4: the queued job's phase); new REQUESTs are refused at once after it. A 1.5 s grace
    period instead of the default 5 s: the REQUEST sent "within" it goes out right after the DISCONNECT."""
    broker = spawn.broker(heartbeat_ms=HB, worker_grace_ms=1500)
    w = registered(spawn, broker, types=["PyGone"], capacity=1)
    c = spawn.client(broker)
    running = c.request("PyGone", "lifecycle", interaction("PyGone"), deadline=60000)
    w.job()
    queued = c.request("PyGone", "confirm", interaction("PyGone"), deadline=60000)
    w.disconnect()
    w.close()
    inside = c.request("PyGone", "handle", interaction("PyGone"), deadline=60000)  # within the grace period
    for rid, phase in ((running, "resolve"), (queued, "confirm"), (inside, "handle")):
        error = c.replies(rid, timeout=15)[-1]
        assert (error.code, error.phase) == ("unknown-intent", phase)
        c.status(rid)
        assert c.status_answer(rid).body == error.body  # accepted, so stored (6.4)
    m = c.run("PyGone", "lifecycle", interaction("PyGone"))
    assert (m.code, m.phase) == ("unknown-intent", "lifecycle")
