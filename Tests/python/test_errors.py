"""Every error code of section 10.2 that a client can observe, with the frames section 4.8 prescribes (F1, F2, F4),
and the check order of 4.8. Codes that need special broker settings run against extra brokers (`spawn`).

`internal` ("an unexpected failure inside a broker or worker") cannot be provoked from outside in the reference
implementation; test_worker_protocol.py checks that the broker forwards an `internal` RESULT from a Python worker
unchanged, which is what a client would see."""

from __future__ import annotations

import signal
import time

import pytest

import cip
from cip import CIPC, interaction


def echo(**parameters):
    parameters.setdefault("text", "hello")
    return interaction("Echo", **parameters)


def valid_request(rid=b"r-1", intent=b"Echo", phase=b"handle", deadline=b"", body=None):
    return [CIPC, b"REQUEST", rid, intent, phase, deadline, cip.encode(body or echo())]


def raw_error(client, frames, expect="REPLY", rid=b""):
    """Send frames that must be answered with one error; return the answer."""
    client.send_raw(frames, expect=expect, rid=rid)
    if expect == "STATUS":
        m = client.next(lambda m: m.command == "STATUS" and m.request_id == rid, what="STATUS error")
    else:
        m = client.next(lambda m: m.command == "REPLY" and m.request_id == rid, what="REPLY error")
    assert m.status == "error", m
    return m


# -- malformed (4.8 checks 1, 4, 7, 9, and STATUS) ---------------------------------------------------------------


def test_malformed_one_frame(client):
    """Check 1: fewer than 2 frames -> REPLY malformed, F2 empty (no F2 to echo), F4 empty."""
    m = raw_error(client, [CIPC])
    assert (m.code, m.request_id, m.phase) == ("malformed", b"", "")


def test_malformed_one_garbage_frame(client):
    """Check 1 comes before check 2: a single frame that is not a signature is malformed, not a version error."""
    m = raw_error(client, [b"hello"])
    assert (m.code, m.phase) == ("malformed", "")


@pytest.mark.parametrize("count", [3, 6, 8])
def test_malformed_request_frame_count(client, count):
    """Check 4: REQUEST has exactly 7 frames; F2 is echoed, F4 empty."""
    frames = valid_request(rid=b"m-count")[:count] if count < 7 else valid_request(rid=b"m-count") + [b"x"]
    m = raw_error(client, frames, rid=b"m-count")
    assert (m.code, m.request_id, m.phase) == ("malformed", b"m-count", "")


def test_malformed_request_with_two_frames_has_no_f2_to_echo(client):
    m = raw_error(client, [CIPC, b"REQUEST"])
    assert (m.code, m.request_id) == ("malformed", b"")


def test_malformed_long_f2_is_not_echoed(client):
    """Echo F2 only when it is at most 255 bytes."""
    m = raw_error(client, [CIPC, b"REQUEST", b"x" * 256, b"Echo"])
    assert (m.code, m.request_id) == ("malformed", b"")


@pytest.mark.parametrize("intent", [b"", b"T" * 256])
def test_malformed_intent_type_length(client, intent):
    """Check 7: F3 is 1..255 bytes; F4 is the requested phase."""
    m = raw_error(client, valid_request(rid=b"m-type", intent=intent, phase=b"lifecycle"), rid=b"m-type")
    assert (m.code, m.request_id, m.phase) == ("malformed", b"m-type", "lifecycle")


@pytest.mark.parametrize("intent", [b"Ech\xff", b"\xc0\xafEcho", b"\xed\xa0\x80", b"Echo\xe2\x82"],
                         ids=["invalid-byte", "overlong", "surrogate", "truncated"])
def test_malformed_intent_type_not_utf8(client, intent):
    """Check 7: F3 is well-formed UTF-8 (RFC 3629)."""
    m = raw_error(client, valid_request(rid=b"m-utf8", intent=intent, phase=b"resolve"), rid=b"m-utf8")
    assert (m.code, m.request_id, m.phase) == ("malformed", b"m-utf8", "resolve")


def test_frame_limit(client):
    """Check 1: at most the frame limit, which is at least 64 (the reference broker's): a 64-frame PING is
    answered (frames after F1 are ignored), a 65-frame one is malformed with the reference broker."""
    client.send_raw([CIPC, b"PING"] + [b"x"] * 62, expect="PONG")
    client.pong()
    m = raw_error(client, [CIPC, b"PING", b"f-1"] + [b"x"] * 62, rid=b"f-1")
    assert (m.code, m.request_id, m.phase) == ("malformed", b"f-1", "")


def test_a_frame_above_the_transport_limit_gets_no_answer(spawn):
    """4.8: libzmq disconnects a client that sends a frame above the transport limit; the message gets no answer,
    the DEALER reconnects by itself and the broker serves it again."""
    broker = spawn.broker(max_body=1024, max_message=4096)
    c = spawn.client(broker)
    c.ping_roundtrip()
    c.socket.send_multipart(valid_request(rid=b"huge", body=padded(8192)))  # nothing is owed for it
    c.expect_silence(0.5)
    end = time.monotonic() + 10
    while True:  # the reconnection takes a moment; PINGs sent meanwhile may be lost with the old connection
        c.ping()
        try:
            c.pong(timeout=0.5)
            break
        except TimeoutError:
            assert time.monotonic() < end, "the client never got through again"
    m = raw_error(c, valid_request(rid=b"big-3", body=padded(2000)), rid=b"big-3")
    assert m.code == "too-large"  # above the maximum body size but below the transport limit


def test_malformed_empty_body(client):
    """Check 9: the body is not empty."""
    frames = valid_request(rid=b"m-body", phase=b"resolve")
    frames[6] = b""
    m = raw_error(client, frames, rid=b"m-body")
    assert (m.code, m.phase) == ("malformed", "resolve")


@pytest.mark.parametrize("frames,f2", [
    ([CIPC, b"STATUS"], b""),
    ([CIPC, b"STATUS", b"s-1", b"extra"], b"s-1"),
    ([CIPC, b"STATUS", b""], b""),
    ([CIPC, b"STATUS", b"s" * 256], b""),
], ids=["2-frames", "4-frames", "empty-id", "long-id"])
def test_malformed_status(client, frames, f2):
    """STATUS: exactly 3 frames and F2 of 1..255 bytes, else a STATUS answer malformed, echo F2, F4 empty."""
    m = raw_error(client, frames, expect="STATUS", rid=f2)
    assert (m.command, m.code, m.request_id, m.phase) == ("STATUS", "malformed", f2, "")


# -- unsupported-version, unknown-command (checks 2, 3) ----------------------------------------------------------


@pytest.mark.parametrize("frames", [
    [b"CIPC09", b"PING"],
    [b"CIPW01", b"READY", b"1", b"w", b"Echo"],
    [b"cipc01", b"PING"],
    [b"CIPC0", b"REQUEST", b"v-1", b"Echo", b"handle", b"", b"{}"],
], ids=["CIPC09", "worker-signature", "lower-case", "short"])
def test_unsupported_version(client, frames):
    """Example 12.6: REPLY with signature CIPC01, empty F2 and F4 (9, 4.8 check 2)."""
    m = raw_error(client, frames)
    assert (m.command, m.code, m.request_id, m.phase) == ("REPLY", "unsupported-version", b"", "")
    assert m.frames[0] == CIPC


@pytest.mark.parametrize("frames,f2", [
    ([CIPC, b"READY", b"1", b"w", b"Echo"], b"1"),
    ([CIPC, b"request", b"u-1", b"Echo", b"handle", b"", b"{}"], b"u-1"),
    ([CIPC, b"PONG"], b""),
    ([CIPC, b"REPLY", b"u-2", b"final", b"handle", b"{}"], b"u-2"),
    ([CIPC, b""], b""),
], ids=["worker-command", "lower-case", "PONG", "REPLY", "empty"])
def test_unknown_command(client, frames, f2):
    """Check 3: REPLY unknown-command, echo F2, F4 empty."""
    m = raw_error(client, frames, rid=f2)
    assert (m.code, m.request_id, m.phase) == ("unknown-command", f2, "")


# -- bad-request-id, bad-phase, bad-deadline (checks 5, 6, 8) ---------------------------------------------------


@pytest.mark.parametrize("rid", [b"", b"i" * 256])
def test_bad_request_id(client, rid):
    m = raw_error(client, valid_request(rid=rid))
    assert (m.code, m.request_id, m.phase) == ("bad-request-id", b"", "")


@pytest.mark.parametrize("phase", [b"Handle", b"", b"lifecycle ", b"all", b"handle\x00"])
def test_bad_phase(client, phase):
    m = raw_error(client, valid_request(rid=b"p-1", phase=phase), rid=b"p-1")
    assert (m.code, m.request_id, m.phase) == ("bad-phase", b"p-1", "")


@pytest.mark.parametrize("deadline", [b"5", b"9", b"0", b"60001", b"-100", b"+100", b"1.5", b" 100", b"100 ",
                                      b"abc", b"1e3", b"0000000100", b"999999999", b"\xd9\xa1\xd9\xa0\xd9\xa0"])
def test_bad_deadline(client, deadline):
    """Check 8 and example 12.6: F5 is empty or a decimal (1..9 ASCII digits) from 10 to 60000."""
    m = raw_error(client, valid_request(rid=b"d-1", phase=b"lifecycle", deadline=deadline), rid=b"d-1")
    assert (m.code, m.request_id, m.phase) == ("bad-deadline", b"d-1", "lifecycle")


@pytest.mark.parametrize("deadline", [b"10", b"60000", b"000000010"])
def test_deadline_bounds_are_accepted(client, deadline):
    replies = client.call("Echo", "handle", echo(), deadline=deadline)
    assert replies[-1].status == "final"


def test_deadline_above_the_hard_limit(spawn):
    """Check 8: the upper bound is min(60000, hard limit)."""
    broker = spawn.broker(hard_limit_ms=1000, deadline_ms=1000, startup_grace_ms=0)
    c = spawn.client(broker)
    m = raw_error(c, valid_request(rid=b"d-2", deadline=b"1001"), rid=b"d-2")
    assert (m.code, m.phase) == ("bad-deadline", "handle")
    # 1000 passes check 8 and reaches check 13 (no worker serves Echo on this broker).
    m = raw_error(c, valid_request(rid=b"d-3", deadline=b"1000"), rid=b"d-3")
    assert m.code == "unknown-intent"


# -- too-large (check 10) ----------------------------------------------------------------------------------------


def padded(size: int) -> bytes:
    """An Echo body of exactly `size` bytes (JSON whitespace as padding)."""
    body = cip.encode(echo())
    assert len(body) <= size
    return body[:-1] + b" " * (size - len(body)) + b"}"


def test_too_large_at_the_default_maximum(client):
    """Section 14: the maximum body size defaults to 1 048 576 bytes."""
    m = raw_error(client, valid_request(rid=b"big-1", body=padded(1_048_577)), rid=b"big-1")
    assert (m.code, m.request_id, m.phase) == ("too-large", b"big-1", "handle")


def test_too_large_boundary(spawn):
    broker = spawn.broker(max_body=1024)
    spawn.worker(broker)
    c = spawn.client(broker)
    assert c.run("Echo", "handle", padded(1024)).status == "final"  # exactly the maximum is fine
    m = raw_error(c, valid_request(rid=b"big-2", phase=b"confirm", body=padded(1025)), rid=b"big-2")
    assert (m.code, m.request_id, m.phase) == ("too-large", b"big-2", "confirm")


# -- duplicate-request (check 12) -------------------------------------------------------------------------------


def test_duplicate_request(client):
    """4.8: the duplicate is rejected; the request in flight is not affected and gets its own answer."""
    rid = client.request("Echo", "handle", echo(text="original", delayMs=500), deadline=5000)
    client.request("Echo", "lifecycle", echo(text="duplicate"), rid=rid)
    dup = client.reply(rid)
    assert (dup.status, dup.code, dup.request_id, dup.phase) == ("error", "duplicate-request", rid, "lifecycle")
    final = client.replies(rid)[-1]
    assert final.status == "final"
    assert final.json["handle"]["data"]["text"] == "original"


def test_same_request_id_on_two_connections_is_not_a_duplicate(main_cluster):
    """3.2: requests are keyed by (client routing id, request id)."""
    with main_cluster.broker.client() as a, main_cluster.broker.client() as b:
        a.request("Echo", "handle", echo(text="a", delayMs=200), rid=b"shared-id")
        b.request("Echo", "handle", echo(text="b"), rid=b"shared-id")
        assert b.replies(b"shared-id")[-1].json["handle"]["data"]["text"] == "b"
        assert a.replies(b"shared-id")[-1].json["handle"]["data"]["text"] == "a"


# -- unknown-intent (check 13; 6.6) -----------------------------------------------------------------------------


@pytest.mark.parametrize("phase", ["resolve", "lifecycle"])
def test_unknown_intent(client, phase):
    m = client.run("NoSuchIntent", phase, interaction("NoSuchIntent"))
    assert (m.code, m.phase) == ("unknown-intent", phase)


# -- check order (4.8; decision 16.1) ---------------------------------------------------------------------------


@pytest.mark.parametrize("frames,code,f2", [
    ([b"CIPC09", b"REQUEST", b"", b"", b"bad", b"x", b""], "unsupported-version", b""),
    ([CIPC, b"NOPE", b"o-1", b"", b"bad", b"x", b""], "unknown-command", b"o-1"),
    ([CIPC, b"REQUEST", b"", b"", b"bad", b"x"], "malformed", b""),
    ([CIPC, b"REQUEST", b"", b"", b"bad", b"x", b""], "bad-request-id", b""),
    ([CIPC, b"REQUEST", b"o-2", b"", b"bad", b"x", b""], "bad-phase", b"o-2"),
    ([CIPC, b"REQUEST", b"o-3", b"", b"handle", b"x", b""], "malformed", b"o-3"),
    ([CIPC, b"REQUEST", b"o-4", b"Nope", b"handle", b"x", b""], "bad-deadline", b"o-4"),
    ([CIPC, b"REQUEST", b"o-5", b"Nope", b"handle", b"", b""], "malformed", b"o-5"),
    ([CIPC, b"REQUEST", b"o-6", b"Nope", b"handle", b"", b"{}"], "unknown-intent", b"o-6"),
], ids=["version", "command", "count", "request-id", "phase", "type", "deadline", "body", "intent"])
def test_check_order(client, frames, code, f2):
    """When several checks fail, the first in 4.8's order wins."""
    m = raw_error(client, frames, rid=f2)
    assert (m.code, m.request_id) == (code, f2)


def test_errors_do_not_disturb_requests_in_flight(client):
    """10.3: the broker MUST NOT end, change or forget an accepted request because of another message's error."""
    rid = client.request("Echo", "handle", echo(text="survivor", delayMs=300), deadline=5000)
    for frames in ([CIPC], [b"CIPX01", b"PING"], [CIPC, b"BOGUS", b"other"], [CIPC, b"REQUEST", b"other"]):
        raw_error(client, frames, rid=b"other" if len(frames) > 2 else b"")
    final = client.replies(rid)[-1]
    assert final.json["handle"]["data"]["text"] == "survivor"


# -- busy (check 14; 6.3 rule 2) --------------------------------------------------------------------------------


def test_busy_when_the_queue_is_full(spawn):
    """6.5: a new REQUEST is rejected with busy when no worker has room and the queues hold the maximum."""
    broker = spawn.broker(max_queued=1, heartbeat_ms=250)
    w = spawn.pyworker(broker, types=["Hold"], capacity=1)
    w.wait_heartbeat()
    c = spawn.client(broker)
    body = interaction("Hold")
    running = c.request("Hold", "resolve", body, deadline=20000)
    job = w.job()
    queued = c.request("Hold", "resolve", body, deadline=20000)
    c.status(queued)
    s = c.status_answer(queued)
    assert (s.status, s.json["state"]) == ("progress", "queued")
    rejected = c.request("Hold", "lifecycle", body, deadline=20000)
    m = c.reply(rejected)
    assert (m.code, m.phase) == ("busy", "lifecycle")
    c.status(rejected)
    assert c.status_answer(rejected).code == "unknown-request"  # a rejected request is not stored
    # The two accepted requests still end normally.
    w.result(job, "stop", {**body, "resolve": {}})
    assert c.replies(running)[-1].status == "final"
    job2 = w.job()
    w.result(job2, "stop", {**body, "resolve": {}})
    assert c.replies(queued)[-1].status == "final"


def test_busy_per_type_queue_limit(spawn):
    """6.5: a new REQUEST is also rejected with busy when its own type's queue holds the per-type maximum; other
    types still queue."""
    broker = spawn.broker(max_queued_per_type=1, heartbeat_ms=250)
    w = spawn.pyworker(broker, types=["HoldA", "HoldB"], capacity=1)
    w.wait_heartbeat()
    c = spawn.client(broker)
    c.request("HoldA", "resolve", interaction("HoldA"), deadline=20000)
    w.job()
    c.request("HoldA", "resolve", interaction("HoldA"), deadline=20000)  # queued: HoldA's queue is full now
    m = c.run("HoldA", "handle", interaction("HoldA"), deadline=20000)
    assert (m.code, m.phase) == ("busy", "handle")
    other = c.request("HoldB", "resolve", interaction("HoldB"), deadline=20000)
    c.status(other)
    assert c.status_answer(other).json["state"] == "queued"


def test_busy_when_the_deadline_passes_before_any_worker_took_it(spawn):
    """6.3 rule 2: a request that never reached a worker by its deadline is shed with busy. It was accepted: F4 is
    its queued job's phase and STATUS answers the stored error. (No pace has been measured yet, so the broker does
    not shed it at arrival, check 15.)"""
    broker = spawn.broker(heartbeat_ms=250)
    w = spawn.pyworker(broker, types=["Hold"], capacity=1)
    w.wait_heartbeat()
    c = spawn.client(broker)
    body = interaction("Hold")
    running = c.request("Hold", "handle", body, deadline=20000)
    job = w.job()
    shed = c.request("Hold", "lifecycle", body, deadline=200)
    m = c.replies(shed, timeout=5)
    assert len(m) == 1, "a shed request gets no progress REPLY"
    assert (m[0].code, m[0].phase) == ("busy", "resolve")
    c.status(shed)
    s = c.status_answer(shed)
    assert (s.status, s.phase, s.body) == ("error", "resolve", m[0].body)
    w.expect_nothing(0.3)  # the shed job never reaches the worker
    w.result(job, "stop", {**body, "handle": {"code": "success", "userActivity": {"activityType": "Hold",
                                                                                 "userInfo": {}}}})
    assert c.replies(running)[-1].status == "final"


def test_busy_at_arrival_when_the_queue_moves_too_slowly(spawn):
    """6.3 rule 2 and check 15 (SHOULD; the reference broker does it): once the pace of a type's jobs is known, a
    request that its queue would not start within 80% of its deadline is refused at once: F4 as requested, not
    stored. The worker answers about 10 jobs/s; 5 are queued; a 100 ms deadline cannot be met."""
    broker = spawn.broker(heartbeat_ms=250)
    w = spawn.pyworker(broker, types=["Hold"], capacity=1)
    w.wait_heartbeat()
    c = spawn.client(broker)
    body = interaction("Hold")
    for _ in range(6):
        rid = c.request("Hold", "resolve", body, deadline=5000)
        job = w.job()
        # Not an ordering sleep: holding each job 100 ms is what sets the pace (about 10 jobs/s) under test.
        time.sleep(0.1)
        w.result(job, "stop", {**body, "resolve": {}})
        assert c.reply(rid).status == "final"
    c.request("Hold", "handle", body, deadline=30000)
    w.job()
    for _ in range(5):
        c.request("Hold", "resolve", body, deadline=30000)
    shed = c.request("Hold", "lifecycle", body, deadline=100)
    m = c.replies(shed)
    assert len(m) == 1 and (m[0].code, m[0].phase) == ("busy", "lifecycle")
    c.status(shed)
    assert c.status_answer(shed).code == "unknown-request"


# -- timeout (6.3 rule 5) ---------------------------------------------------------------------------------------


def test_timeout_after_the_hard_limit(spawn):
    broker = spawn.broker(hard_limit_ms=800, deadline_ms=300, heartbeat_ms=250)
    spawn.worker(broker, capacity=4)
    c = spawn.client(broker)
    rid = c.request("Echo", "handle", echo(delayMs=1500), deadline=300)
    progress, error = c.replies(rid, timeout=10)
    assert (progress.status, progress.phase, progress.json["state"]) == ("progress", "handle", "running")
    assert (error.code, error.phase) == ("timeout", "handle")
    c.status(rid)
    s = c.status_answer(rid)
    assert (s.status, s.phase, s.body) == ("error", "handle", error.body)


def test_timeout_when_deadline_and_hard_limit_coincide(spawn):
    """6.3 rule 5: the progress REPLY comes first and the timeout error immediately after it."""
    broker = spawn.broker(hard_limit_ms=600, deadline_ms=600, heartbeat_ms=250)
    spawn.worker(broker, capacity=4)
    c = spawn.client(broker)
    rid = c.request("Echo", "lifecycle", echo(delayMs=1500, delayPhase="confirm"), deadline=600)
    progress, error = c.replies(rid, timeout=10)
    assert (progress.status, progress.phase) == ("progress", "confirm")
    assert (error.code, error.phase) == ("timeout", "confirm")


# -- worker-lost (6.7) ------------------------------------------------------------------------------------------


def test_worker_lost_when_the_worker_running_a_handle_job_is_killed(spawn):
    """A standalone `concierge worker` killed with SIGKILL (by pid) while it runs a handle job: the request ends with
    worker-lost (F4 handle) and the job is not run again, even though another worker could run it."""
    broker = spawn.broker(heartbeat_ms=250)
    victim = spawn.worker(broker, name="victim", capacity=4)
    c = spawn.client(broker)
    rid = c.request("Echo", "handle", echo(text="doomed", delayMs=20000), deadline=300)
    progress = c.reply(rid)
    assert (progress.status, progress.json["state"], progress.json["worker"]) == ("progress", "running", "victim")
    spawn.worker(broker, name="survivor", capacity=4)  # a worker that could run it again (it must not)
    victim.signal(signal.SIGKILL)
    error = c.reply(rid, timeout=10)
    assert (error.code, error.phase) == ("worker-lost", "handle")
    c.status(rid)
    assert c.status_answer(rid).code == "worker-lost"
    assert c.run("Echo", "handle", echo(text="after")).json["handle"]["data"]["worker"] == "survivor"


def test_resolve_job_of_a_killed_worker_is_run_again(spawn):
    """6.7: resolve and confirm jobs of a lost worker are sent again to another worker (and the lifecycle goes on)."""
    broker = spawn.broker(heartbeat_ms=250)
    victim = spawn.worker(broker, name="victim", capacity=4)
    c = spawn.client(broker)
    rid = c.request("Echo", "lifecycle", echo(text="again", delayMs=1500, delayPhase="resolve"), deadline=300)
    progress = c.reply(rid)
    assert (progress.phase, progress.json["state"], progress.json["worker"]) == ("resolve", "running", "victim")
    victim.signal(signal.SIGKILL)
    spawn.worker(broker, name="rescuer", capacity=4, wait=False)
    seen_on_rescuer = False
    end = time.monotonic() + 15
    while time.monotonic() < end:
        c.status(rid)
        s = c.status_answer(rid)
        if s.status != "progress":
            break
        if s.json["state"] == "running" and s.json["worker"] == "rescuer" and s.phase == "resolve":
            seen_on_rescuer = True
        time.sleep(0.05)
    assert seen_on_rescuer, "the resolve job was not dispatched again to the other worker"
    final = c.reply(rid)
    assert (final.status, final.phase) == ("final", "handle")
    assert final.json["handle"]["data"]["worker"] == "rescuer"


# -- unknown-request --------------------------------------------------------------------------------------------


def test_unknown_request(client):
    client.status(b"no-such-request")
    m = client.status_answer(b"no-such-request")
    assert (m.command, m.status, m.phase, m.code) == ("STATUS", "error", "", "unknown-request")


# -- handler-failed, bad-body (errors returned by a worker, 5.11) -----------------------------------------------


def test_handler_failed(client):
    m = client.run("Echo", "lifecycle", echo(delayPhase="resolve", failWith="resolver crashed"))
    assert (m.code, m.phase) == ("handler-failed", "resolve")


@pytest.mark.parametrize("body", [
    b'{"intent": {"type": "Echo", "parameters": {}}',          # not JSON
    b"[1, 2]",                                                # not an object
    b'"Echo"',
    b'{"text": "no intent"}',                                 # no "intent"
    b'{"intent": "Echo"}',                                    # "intent" is not an object
    b'{"intent": {"type": "SendMessage", "parameters": {}}}',  # intent type differs from F3
    b'{"intent": {"type": "Echo", "parameters": {}, "extra": 1}}',  # a key other than type/identifier/parameters
    b'\xff\xfe{"intent": {"type": "Echo"}}',                  # not UTF-8
], ids=["truncated", "array", "string", "no-intent", "intent-string", "type-mismatch", "extra-key", "not-utf8"])
@pytest.mark.parametrize("phase", ["lifecycle", "handle"])
def test_bad_body(client, body, phase):
    """5.11 step 3; the broker never parses bodies, so these reach a worker, which answers bad-body (F4: the job)."""
    m = client.run("Echo", phase, body)
    assert (m.code, m.phase) == ("bad-body", "resolve" if phase == "lifecycle" else phase)


# -- shutting-down (8.2) ----------------------------------------------------------------------------------------


def test_shutting_down(spawn):
    """SIGTERM to a broker with a request in flight: new REQUESTs get shutting-down at once (F4 as requested);
    STATUS and PING are still answered; the request still in flight after the grace period ends with
    shutting-down (F4 its job's phase); every worker gets DISCONNECT; the broker exits. The grace period is 1.5 s
    instead of the default 5 s: it only has to outlast the few round trips made between the refusal and STATUS."""
    broker = spawn.broker(heartbeat_ms=250, shutdown_grace_ms=1500)
    w = spawn.pyworker(broker, types=["Hold"], capacity=2)
    w.wait_heartbeat()
    c = spawn.client(broker)
    body = interaction("Hold")
    in_flight = c.request("Hold", "handle", body, deadline=60000)
    w.job()
    broker.proc.signal(signal.SIGTERM)
    # The broker refuses new requests once it has seen the signal. A request that slipped in before is accepted
    # (and waits: the worker does not answer); send another until one is refused. A STATUS right after each REQUEST
    # tells which (answers come in order): an accepted one is in progress, a refused one got its error REPLY first.
    accepted = []
    end = time.monotonic() + 10
    while True:
        assert time.monotonic() < end, "the broker never refused a new request"
        rid = c.request("Hold", "lifecycle", body, deadline=60000)
        c.status(rid)
        if c.status_answer(rid).status == "progress":
            accepted.append(rid)
            time.sleep(0.01)
            continue
        m = c.reply(rid)
        break
    assert (m.code, m.phase) == ("shutting-down", "lifecycle")
    c.ping_roundtrip()
    c.status(in_flight)
    assert c.status_answer(in_flight).status == "progress"
    error = c.replies(in_flight, timeout=15)[-1]
    assert (error.code, error.phase) == ("shutting-down", "handle")
    for rid in accepted:
        assert c.replies(rid)[-1].code == "shutting-down"
    assert w.next(lambda m: m.command == "DISCONNECT", timeout=5).command == "DISCONNECT"
    assert broker.proc.wait(10) == 0


def test_shutdown_lets_requests_in_flight_finish(spawn):
    """8.2 step 2: accepted requests go on during the grace period."""
    broker = spawn.broker(heartbeat_ms=250)
    spawn.worker(broker, capacity=4)
    c = spawn.client(broker)
    rid = c.request("Echo", "lifecycle", echo(text="finish me", delayMs=700), deadline=5000)
    # Accepted and started (its handle job is on the worker) before the broker hears SIGTERM.
    end = time.monotonic() + 15
    while True:
        c.status(rid)
        s = c.status_answer(rid)
        if s.status == "progress" and s.phase == "handle" and s.json["state"] == "running":
            break
        assert time.monotonic() < end, f"the request never reached its handle job: {s}"
        time.sleep(0.01)
    broker.proc.signal(signal.SIGTERM)
    final = c.replies(rid)[-1]
    assert (final.status, final.phase) == ("final", "handle")
    assert broker.proc.wait(10) == 0
