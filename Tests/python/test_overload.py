"""Shedding early under overload: `--max-queue-wait-ms` and `--standing-queue-wait-ms` refuse at
arrival, with `busy`, the requests that would wait in the queue longer than the operator allows at the intent type's
measured pace; without them a request is admitted when it can start within 80% of its deadline.

One worker with room for one job, each job taking 20 ms (about 50 jobs/s). The pace is measured first (a saturated
queue for a while); then, while a long job runs and a request has waited behind it (its STATUS says for how long), a
burst of 30 is sent at once: all of them could start within their 10 s deadline."""

from __future__ import annotations

import time

from cip import interaction

BURST = 30


def run_burst(spawn, warm: int = 15, blocker_ms: int = 300, settle_ms: int = 5, refusals: list | None = None,
              **flags) -> dict[str, int]:
    """The burst's outcomes; the bodies of its `busy` refusals are appended to `refusals` when given."""
    broker = spawn.broker(**flags)
    spawn.worker(broker, capacity=1)
    c = spawn.client(broker)
    body = interaction("Echo", text="x", delayMs=20)
    # Measure the pace: `warm` requests at once keep the type saturated for `warm` x 20 ms.
    # (With a limit, the last of them may already be refused once the pace is measured.)
    finals = 0
    for rid in [c.request("Echo", "handle", body, deadline=10000) for _ in range(warm)]:
        ending = c.ending(rid, timeout=30)
        assert ending.status == "final" or ending.code == "busy", ending
        finals += ending.status == "final"
    assert finals >= 3
    # A long job holds the worker, and one request waits behind it until its STATUS says it has waited `settle_ms`
    # (the queue has not emptied since), then the burst.
    blocker = c.request("Echo", "handle", interaction("Echo", text="blocker", delayMs=blocker_ms), deadline=10000)
    waiting = c.request("Echo", "handle", body, deadline=10000)
    end = time.monotonic() + 10
    while True:
        c.status(waiting)
        answer = c.status_answer(waiting)
        assert answer.status == "progress" and answer.json["state"] == "queued", answer
        if answer.json["elapsed_ms"] >= settle_ms:
            break
        assert time.monotonic() < end, answer
    rids = [c.request("Echo", "handle", body, deadline=10000) for _ in range(BURST)]
    assert c.ending(blocker, timeout=30).status == "final"
    assert c.ending(waiting, timeout=30).status == "final"
    outcomes: dict[str, int] = {}
    for rid in rids:
        ending = c.ending(rid, timeout=30)
        key = ending.status if ending.status != "error" else ending.code
        outcomes[key] = outcomes.get(key, 0) + 1
        if ending.status == "error":
            assert ending.code == "busy", ending
            assert "before its deadline" in ending.json["message"], ending
            if refusals is not None:
                refusals.append(ending.json)
    return outcomes


def test_without_a_limit_a_burst_that_can_start_in_time_queues(spawn):
    outcomes = run_burst(spawn)
    assert outcomes == {"final": BURST}, outcomes


def test_max_queue_wait_refuses_what_would_wait_longer_at_once(spawn):
    # At about 50 jobs/s, 100 ms of queue is a few requests: most of the burst is refused at arrival.
    outcomes = run_burst(spawn, max_queue_wait_ms=100)
    print(outcomes)
    assert outcomes.get("busy", 0) >= BURST // 2, outcomes
    assert set(outcomes) <= {"final", "busy"}, outcomes


def test_a_refusal_at_arrival_carries_the_clients_share_of_the_pace(spawn):
    """PROTOCOL.md 6.3, Pushback: once the pace is measured, a refusal at arrival names how many requests per second
    the broker expects from this client (here the only one: its whole pace of about 50 jobs/s, with a tenth more) and
    for how long. The client checks every error body against error.schema.json, which describes both members."""
    refusals: list = []
    outcomes = run_burst(spawn, max_queue_wait_ms=100, refusals=refusals)
    assert outcomes.get("busy", 0) >= BURST // 2, outcomes
    for body in refusals:
        assert body["pushback_ms"] == 1000, body
        # About 55 a second; the measured pace of 20 ms jobs on one slot on a busy machine is lower, never higher.
        assert 5 <= body["pushback_rate"] <= 80, body


def test_a_standing_queue_is_held_short(spawn):
    # The warm-up (8 x 20 ms) is shorter than the interval (250 ms), so it queues; then a request waits behind a 1 s
    # job until the queue has not emptied for 260 ms, and the burst meets a standing queue: it is held to 20 ms, or
    # one turnover of the worker's single slot at the measured pace, when longer.
    outcomes = run_burst(
        spawn, warm=8, blocker_ms=1000, settle_ms=260, standing_queue_wait_ms=20, standing_queue_interval_ms=250)
    print(outcomes)
    assert outcomes.get("busy", 0) >= BURST // 2, outcomes
    assert set(outcomes) <= {"final", "busy"}, outcomes


def test_bad_limit_flags_are_refused_with_the_flag_named():
    import subprocess

    import cluster

    for args, named in (
        (["--max-queue-wait-ms", "0"], "--max-queue-wait-ms"),
        (["--standing-queue-interval-ms", "0"], "--standing-queue-interval-ms"),
        (["--standing-queue-wait-ms=-5"], "--standing-queue-wait-ms"),
        (["--max-queue-wait-ms", "abc"], "--max-queue-wait-ms"),
    ):
        # A broker that accepted the flag would run until the timeout: the test fails either way.
        done = subprocess.run([str(cluster.binary()), "broker", "--frontend", "ipc:///tmp/concierge-badflag-f",
                               "--backend", "ipc:///tmp/concierge-badflag-b", *args],
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 64, (args, done.returncode, done.stderr)
        assert named in done.stderr, (args, done.stderr)
