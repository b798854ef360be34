"""Shedding early under overload (issue 14, goal 2): `--max-queue-wait-ms` and `--standing-queue-wait-ms` refuse at
arrival, with `busy`, the requests that would wait in the queue longer than the operator allows at the intent type's
measured pace; without them a request is admitted when it can start within 80% of its deadline.

One worker with room for one job, each job taking 20 ms (about 50 jobs/s). The pace is measured first (a saturated
queue for a while); then, while a 300 ms job runs and a request has waited behind it for 5 ms or more, a burst of 30
is sent at once: all of them could start within their 10 s deadline."""

from __future__ import annotations

import time

from cip import interaction

BURST = 30


def run_burst(spawn, **flags) -> dict[str, int]:
    broker = spawn.broker(**flags)
    spawn.worker(broker, capacity=1)
    c = spawn.client(broker)
    body = interaction("Echo", text="x", delayMs=20)
    # Measure the pace: 15 requests at once keep the type saturated for about 300 ms.
    warm = [c.request("Echo", "handle", body, deadline=10000) for _ in range(15)]
    assert all(c.ending(rid, timeout=30).status == "final" for rid in warm)
    # A 300 ms job holds the worker, and one request waits behind it until its STATUS says it has waited 5 ms (the
    # queue has not emptied since), then the burst.
    blocker = c.request("Echo", "handle", interaction("Echo", text="blocker", delayMs=300), deadline=10000)
    waiting = c.request("Echo", "handle", body, deadline=10000)
    end = time.monotonic() + 10
    while True:
        c.status(waiting)
        answer = c.status_answer(waiting)
        assert answer.status == "progress" and answer.json["state"] == "queued", answer
        if answer.json["elapsed_ms"] >= 5:
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
    return outcomes


def test_without_a_limit_a_burst_that_can_start_in_time_queues(spawn):
    outcomes = run_burst(spawn)
    assert outcomes == {"final": BURST}, outcomes


def test_max_queue_wait_refuses_what_would_wait_longer_at_once(spawn):
    # At about 50 jobs/s, 50 ms of queue is a few requests: most of the burst is refused at arrival.
    outcomes = run_burst(spawn, max_queue_wait_ms=50)
    print(outcomes)
    assert outcomes.get("busy", 0) >= BURST // 2, outcomes
    assert set(outcomes) <= {"final", "busy"}, outcomes


def test_a_standing_queue_is_held_short(spawn):
    # The burst arrives at a queue that has not emptied for longer than the interval (1 ms): it is held to 20 ms (or
    # one turnover of the worker's single slot, about 20 ms at this pace).
    outcomes = run_burst(spawn, standing_queue_wait_ms=20, standing_queue_interval_ms=1)
    print(outcomes)
    assert outcomes.get("busy", 0) >= BURST // 2, outcomes
    assert set(outcomes) <= {"final", "busy"}, outcomes
