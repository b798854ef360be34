"""Section 6.5: fairness across clients within an intent type, through a real broker process.

A flood client fills the type's queue (its worker holds every job, so the queue state is known exactly, never
guessed from timing); a well-behaved client then runs requests one at a time. Each of its requests is admitted (the
flood's newest queued request is shed to make room), served within a turn of the flood's, and never refused busy,
while the flood's own surplus is. Asserted on counts and order, never on time."""

from __future__ import annotations

import time

from cip import interaction

BOUND = 20  # --max-queued-per-type
ROUNDS = 10


def test_a_flood_is_shed_and_a_well_behaved_client_never_is(spawn):
    broker = spawn.broker(max_queued_per_type=BOUND)
    w = spawn.pyworker(broker, types=["Hold"], capacity=1)
    w.wait_heartbeat()
    flood = spawn.client(broker)
    good = spawn.client(broker)
    body = interaction("Hold")
    flood_ids = [flood.request("Hold", "resolve", body, deadline=60000)]
    held = w.job()  # the worker holds it: from now on the flood's requests queue, up to the bound, or are refused
    flood_ids += [flood.request("Hold", "resolve", body, deadline=60000) for _ in range(4 * BOUND)]
    flood.ping_roundtrip()  # one connection, in order: the broker has taken every REQUEST before the PONG
    good_jobs_waited = []
    for round_number in range(ROUNDS):
        rid = good.request("Hold", "resolve", interaction("Hold", identifier=f"good-{round_number}"), deadline=60000)
        good.status(rid)
        answer = good.status_answer(rid)
        assert answer.status == "progress" and answer.json["state"] == "queued", f"not admitted: {answer}"
        # The flood goes on meanwhile: a few more of its requests (refused: it holds the most queued).
        flood_ids += [flood.request("Hold", "resolve", body, deadline=60000) for _ in range(5)]
        flood.ping_roundtrip()
        # The worker answers job after job until it gets the well-behaved client's.
        jobs = 0
        while True:
            w.result(held, "stop", {**body, "resolve": {}})
            held = w.job()
            jobs += 1
            identifier = held.json.get("intent", {}).get("identifier")
            if identifier == f"good-{round_number}":
                break
            assert jobs <= 2 * BOUND, "the well-behaved client's job never came"
        good_jobs_waited.append(jobs)
        w.result(held, "stop", {**body, "resolve": {}})
        m = good.ending(rid)
        assert m.status == "final", f"the well-behaved client's request {round_number} ended {m}"
        held = w.job()
    # Round robin: the well-behaved client's job came at most one flood job after it was admitted.
    assert max(good_jobs_waited) <= 2, good_jobs_waited
    # The flood: everything past the bound was refused busy at once, plus one shed for each admitted good request.
    w.result(held, "stop", {**body, "resolve": {}})
    busy = final = 0
    open_ids = set(flood_ids)
    limit = time.monotonic() + 60
    while open_ids:  # every flood request gets its one ending; the worker runs what is still queued
        assert time.monotonic() < limit, f"{len(open_ids)} flood requests never ended"
        try:
            m = flood.next(lambda m: m.command == "REPLY" and m.status != "progress", 0.05, "an ending")
        except TimeoutError:
            try:
                held = w.job(timeout=0.05)
            except TimeoutError:
                continue
            w.result(held, "stop", {**body, "resolve": {}})
            continue
        open_ids.discard(m.request_id)
        if m.code == "busy":
            busy += 1
        else:
            assert m.status == "final", m
            final += 1
    print(f"flood: {final} final, {busy} busy; well-behaved: {ROUNDS} final, 0 busy; jobs waited {good_jobs_waited}")
    assert busy >= 3 * BOUND + ROUNDS, (busy, final)
    assert busy + final == len(flood_ids)
