"""Bounded memory: what a stored result costs the broker, that the memory comes back once results
expire, and the results' byte budget (--results-memory).

The RSS figures are the broker process's (/proc/PID/status), so the bounds are generous: a stored result may cost
1.5x its reply plus 1 KiB (before the fix it cost about 10 KiB for a 1.4 KB reply: the frame kept libzmq's whole
receive buffer), and after expiry the broker must be back within a quarter of what the results took (before the fix
it kept all of it: glibc does not return memory freed in the middle of its heap without malloc_trim)."""

from __future__ import annotations

import json
import subprocess
import time

import cluster
from cip import interaction

RESULTS = 4000
PAYLOAD = 250


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def wait_until_forgotten(client, rid: bytes, timeout: float) -> None:
    """STATUS until the broker no longer knows `rid` (its result expired), within `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        client.status(rid)
        if client.status_answer(rid).code == "unknown-request":
            return
        time.sleep(0.2)
    raise AssertionError(f"the result of {rid!r} was still kept after {timeout} s")


def test_a_stored_result_costs_its_reply_and_comes_back_after_expiry(spawn):
    # Results live 15 s: longer than the load below takes, short enough to wait for.
    broker = spawn.broker(result_ttl=15)
    spawn.worker(broker)
    c = spawn.client(broker)
    body = interaction("Echo", text="x" * PAYLOAD)
    reply = c.run("Echo", "handle", body, deadline=10000)
    assert reply.status == "final"
    reply_bytes = len(reply.body)
    idle = rss_kib(broker.pid)
    # One request at a time: each reply arrives alone in libzmq's receive buffer (the worst case for a kept frame).
    load = subprocess.run(
        [str(cluster.binary()), "load", "--broker", broker.frontend, "--json", "--quiet", "--concurrency", "1",
         "--connections", "1", "--requests", str(RESULTS), "--duration", "60s", "--warmup", "0s",
         "--payload", str(PAYLOAD)], capture_output=True, text=True, timeout=120)
    summary = json.loads(load.stdout)
    assert summary["final_replies"] == RESULTS, load.stderr
    last = c.run("Echo", "handle", body, deadline=10000)
    stored = rss_kib(broker.pid)
    per_result = (stored - idle) * 1024 / RESULTS
    print(f"reply {reply_bytes} B; broker RSS idle {idle} KiB, with {RESULTS} results {stored} KiB "
          f"({per_result:.0f} B per result)")
    assert per_result <= 1.5 * reply_bytes + 1024, f"{per_result:.0f} B per stored result of {reply_bytes} B"

    wait_until_forgotten(c, last.request_id, timeout=40)
    after = rss_kib(broker.pid)
    print(f"after expiry {after} KiB")
    assert after - idle <= max(0.25 * (stored - idle), 2048), f"idle {idle} KiB, stored {stored}, after {after}"


def test_the_results_byte_budget_drops_the_oldest(spawn):
    # Room for two Echo results of about 1.4 KB (each costs its body, its key and ResultStore.entryOverhead), not three.
    broker = spawn.broker(results_memory=4500)
    spawn.worker(broker)
    c = spawn.client(broker)
    body = interaction("Echo", text="x" * PAYLOAD)
    rids = [c.run("Echo", "handle", body, deadline=10000).request_id for _ in range(3)]
    for rid, kept in zip(rids, [False, True, True]):
        c.status(rid)
        answer = c.status_answer(rid)
        assert (answer.status == "final") == kept, (rid, answer)
        if not kept:
            assert answer.code == "unknown-request"


QUEUED = 1500


def test_a_queued_request_costs_about_its_body(spawn):
    # One worker with room for one job, each taking 20 ms: the requests below queue (about 1,400 wait at the end; the
    # queue drains at 50 jobs/s, so the admission pace check admits them all within the 55 s deadline). The queue
    # stands on purpose: the standing-queue limit, on by default, would answer most of them `busy` (OVERLOAD.md).
    broker = spawn.broker(standing_queue_wait_ms=0)
    spawn.worker(broker, capacity=1)
    c = spawn.client(broker)
    body = interaction("Echo", text="x" * PAYLOAD, delayMs=20)
    assert c.run("Echo", "handle", body, deadline=10000).status == "final"
    idle = rss_kib(broker.pid)
    # One at a time, each read by the broker before the next is sent (its STATUS answers): each request arrives
    # alone in libzmq's receive buffer, the worst case for a frame that is kept while the request waits.
    states = []
    for _ in range(QUEUED):
        rid = c.request("Echo", "handle", body, deadline=55000)
        c.status(rid)
        answer = c.status_answer(rid)
        assert answer.status == "progress", answer
        states.append(answer.json.get("state"))
    queued = rss_kib(broker.pid)
    assert states.count("queued") >= QUEUED - 2, states[:5]
    per_request = (queued - idle) * 1024 / QUEUED
    body_bytes = len(json.dumps(body))
    print(f"body {body_bytes} B; broker RSS idle {idle} KiB, with {QUEUED} queued {queued} KiB "
          f"({per_request:.0f} B per queued request)")
    # Before the fix each waiting request kept its receive buffer (more than 8 KiB).
    assert per_request <= 1.5 * body_bytes + 3072, f"{per_request:.0f} B per queued request of {body_bytes} B"
