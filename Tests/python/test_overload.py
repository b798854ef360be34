"""Shedding early under overload (issue 14, goal 2): `--max-queue-wait-ms` and `--standing-queue-wait-ms` refuse at
arrival, with `busy`, the requests that would wait in the queue longer than the operator allows at the intent type's
measured pace; without them a request is admitted when it can start within 80% of its deadline.

One worker with room for one job, each job taking 20 ms (about 50 jobs/s). The pace is measured first (a saturated
queue for a while), then a burst of 30 is sent at once behind a queue that has not emptied for 20 ms or more: all of
them could start within their 10 s deadline."""

from __future__ import annotations

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
    # Saturate again: five requests, and once the first has ended the queue has held the others for 20 ms or more.
    # Then the burst, while the queue still holds requests.
    first = [c.request("Echo", "handle", body, deadline=10000) for _ in range(5)]
    assert c.ending(first[0], timeout=30).status == "final"
    rids = [c.request("Echo", "handle", body, deadline=10000) for _ in range(BURST)]
    for rid in first[1:]:
        ending = c.ending(rid, timeout=30)
        assert ending.status == "final" or ending.code == "busy", ending
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
    # The burst arrives at a queue that has not emptied for longer than the interval: it is held to 20 ms (or one
    # turnover of the worker's single slot, 20 ms at this pace).
    outcomes = run_burst(spawn, standing_queue_wait_ms=20, standing_queue_interval_ms=1)
    print(outcomes)
    assert outcomes.get("busy", 0) >= BURST // 2, outcomes
    assert set(outcomes) <= {"final", "busy"}, outcomes
