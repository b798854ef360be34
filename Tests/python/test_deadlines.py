"""Deadlines and progress (section 6.3) on the session cluster: a request that has not ended by its deadline gets one
`progress` REPLY (F4 and the body's phase: the job now queued or running), then its final REPLY; STATUS follows the
request meanwhile. Timing is only used to make a job outlast its deadline; the assertions are about order, statuses,
phases and bodies. (Timeouts, shedding and queued progress are in test_errors.py and test_worker_protocol.py.)"""

from __future__ import annotations

import sys

import pytest

import cip
from cip import interaction

sys.path.insert(0, str(cip.REPO / "Clients" / "python" / "src"))
from concierge_client import Client  # noqa: E402  (the library: these tests are about the broker, not the wire)


@pytest.fixture
def lib(main_cluster):
    with Client(main_cluster.frontend) as c:
        yield c


def slow_echo(phase="handle", delay=1200, **extra):
    return interaction("Echo", text="slow", delayMs=delay, delayPhase=phase, **extra)


def test_progress_then_final_for_a_handle_request(client, main_cluster):
    """Example 12.5: a 300 ms deadline, a handler that takes 1.2 s."""
    rid = client.request("Echo", "handle", slow_echo(), deadline=300)
    progress = client.reply(rid)
    assert (progress.status, progress.phase) == ("progress", "handle")
    assert progress.json["state"] == "running"
    assert progress.json["worker"] in main_cluster.workers
    # 6.3: the broker acts at the deadline less a tenth of it (at most 50 ms): never before 270 ms.
    assert progress.json["elapsed_ms"] >= 270

    client.status(rid)
    during = client.status_answer(rid)
    assert (during.status, during.phase, during.json["state"]) == ("progress", "handle", "running")
    assert during.json["worker"] == progress.json["worker"]
    assert during.json["elapsed_ms"] >= progress.json["elapsed_ms"]

    final = client.reply(rid)
    assert (final.status, final.phase) == ("final", "handle")
    assert final.json["handle"]["data"]["worker"] == progress.json["worker"]
    client.status(rid)
    after = client.status_answer(rid)
    assert (after.status, after.phase, after.body) == ("final", "handle", final.body)
    client.expect_silence(0.2)  # 6.3 rule 3: one progress REPLY at most, and nothing after the final one


@pytest.mark.parametrize("phase", ["resolve", "confirm", "handle"])
def test_progress_names_the_phase_running_at_the_deadline(lib, phase):
    """A lifecycle whose delay is in one phase: progress and its body name that phase (never lifecycle)."""
    replies = list(lib.send(slow_echo(phase, delay=800)["intent"], "lifecycle", deadline=0.2, timeout=15))
    assert [m.status for m in replies] == ["progress", "final"]
    progress, final = replies
    assert progress.phase == progress.json["phase"] == phase
    assert progress.json["state"] == "running"
    assert (final.phase, set(final.json)) == ("handle", {"intent", "resolve", "confirm", "handle"})


def test_progress_then_error(lib):
    """A failure after the deadline still ends the request: progress, then the error REPLY."""
    replies = list(lib.send(slow_echo("resolve", delay=600, failWith="late failure")["intent"], "lifecycle",
                            deadline=0.2, timeout=15))
    assert [m.status for m in replies] == ["progress", "error"]
    assert replies[1].error_code == "handler-failed" and replies[1].phase == "resolve"


def test_progress_then_final_that_stops_early(client):
    """A lifecycle that stops at confirm after its deadline: the final REPLY's F4 is confirm."""
    replies = client.call("Echo", "lifecycle", slow_echo("confirm", delay=600, failWith="declined"), deadline=200)
    assert [m.status for m in replies] == ["progress", "final"]
    assert replies[1].phase == "confirm" and replies[1].json["confirm"]["code"] == "failure"


def test_no_progress_when_the_request_ends_in_time(client):
    """6.3 rule 1: a request that ends before its deadline gets no progress REPLY."""
    for phase in ("resolve", "confirm", "handle", "lifecycle"):
        m = client.run("Echo", phase, slow_echo(delay=50), deadline=5000)
        assert m.status == "final"
    client.expect_silence(0.2)


def test_many_requests_past_their_deadlines(client):
    """Several requests in flight on one connection, each with its own progress and final, in order per request."""
    rids = [client.request("Echo", "handle", slow_echo(delay=500 + 100 * i), deadline=100 + 50 * i)
            for i in range(4)]
    for rid in rids:
        statuses = [m.status for m in client.replies(rid)]
        assert statuses == ["progress", "final"]
