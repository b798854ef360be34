"""The chaos test of idempotency keys (retries never run a handle twice): a real broker, about three CIPW02 worker
*processes* (chaos_worker.py, written from the spec) of which a random one is SIGKILLed every 0.5..1 s and replaced,
and a CIPC02 client sending ~200 keyed handle requests (distinct keys), retrying each with the same key and a new
request id on `busy`, `worker-lost` and `timeout` until it gets a final reply.

Every worker appends (O_APPEND, fsync) a "start" line before it runs a handle job and an "end" line after it sent
the RESULT; the test records the time of every kill (after the process is reaped). Then:

(a) no key ever runs on two workers at once: a run lasts from its start line to its end line, or to its worker's
    kill; no two runs of one key overlap;
(b) every key ends with exactly one final reply, and sending each key once more gives a REPLY flagged `replay` whose
    body is the final's, byte for byte;
(c) the attempt numbers of a key's starts are strictly increasing, and the final reply comes from the last one.

To see it fail: CHAOS_WORKER_ARGS="--stall-probability 0.05 --stall-ms 2500" makes some workers block for longer
than the broker's liveness while a handler runs; the broker then (rightly, 6.7) declares them lost, the retry runs
the key again on another worker while the first run goes on, and (a) reports the overlap.

Assumption: a live worker is never declared dead (a handle job on a worker that is only slow would run again after
`worker-lost`, which CIP allows, 6.7 and 7.1). The workers heartbeat from a loop that never blocks, and the broker's
liveness here is 3 x 500 ms.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

import cip
import cluster

HB = 500
KEYS = 200
WORKERS = 3
WINDOW = 16            # requests in flight at once
MAX_ATTEMPTS = 40      # per key
TOTAL_S = 50.0         # the whole load, bounded
RETRY = ("busy", "worker-lost", "timeout")
WORKER_SCRIPT = Path(__file__).with_name("chaos_worker.py")


class Workers:
    """Chaos worker processes, each in its own session; killed by pid."""

    def __init__(self, spawn, broker, log_path: Path):
        self.spawn = spawn
        self.broker = broker
        self.log_path = log_path
        self.live: list[cluster.Proc] = []
        self.kills: dict[int, float] = {}  # pid -> monotonic time after the process was reaped
        self.started = 0
        self.lock = threading.Lock()

    def start(self) -> cluster.Proc:
        self.started += 1
        name = f"chaos-{self.started}-{uuid.uuid4().hex[:6]}"
        args = [sys.executable, str(WORKER_SCRIPT), "--broker", self.broker.backend, "--name", name,
                "--log", str(self.log_path), "--heartbeat-ms", str(HB), "--capacity", "2", "--max-ms", "300",
                *os.environ.get("CHAOS_WORKER_ARGS", "").split()]
        p = cluster.Proc(name, args, self.spawn.run_dir)
        p.stop_timeout = 1.0
        self.spawn.procs.append(p)
        with self.lock:
            self.live.append(p)
        return p

    def kill(self, p: cluster.Proc) -> None:
        os.kill(p.pid, signal.SIGKILL)
        p.popen.wait(10)
        self.kills[p.pid] = time.monotonic()  # its runs ended by now at the latest
        with self.lock:
            self.live.remove(p)

    def kill_all(self) -> None:
        for p in list(self.live):
            self.kill(p)


def chaos(workers: Workers, stop: threading.Event, rng: random.Random) -> None:
    while not stop.wait(rng.uniform(0.5, 1.0)):  # pacing of the chaos, not ordering
        victim = rng.choice(workers.live)
        workers.kill(victim)
        workers.start()


def body(i: int) -> bytes:
    return cip.encode({"intent": {"type": "Chaos", "parameters": {"n": i}}})


@pytest.mark.chaos
def test_keys_survive_killed_workers(spawn, capsys):
    rng = random.Random()
    broker = spawn.broker(heartbeat_ms=HB)
    log_path = spawn.run_dir / f"chaos-{uuid.uuid4().hex[:8]}.log"
    workers = Workers(spawn, broker, log_path)
    for _ in range(WORKERS):
        workers.start()
    c = spawn.client(broker, version=2)

    # Wait until a worker serves Chaos (a resolve job is logged by nobody).
    end = time.monotonic() + 20
    while True:
        assert time.monotonic() < end, "no chaos worker registered"
        m = c.ending(c.request("Chaos", "resolve", body(-1), deadline=2000))
        if m.status == "final":
            break

    keys = [f"chaos-{i}-{uuid.uuid4().hex}".encode() for i in range(KEYS)]
    bodies = {k: body(i) for i, k in enumerate(keys)}
    attempts = {k: 0 for k in keys}
    finals: dict[bytes, cip.Message] = {}
    in_flight: dict[bytes, bytes] = {}       # request id -> key
    retry_at: dict[bytes, float] = {}        # key -> when to send it (again)
    pending = list(keys)
    codes: dict[str, int] = {}

    stop = threading.Event()
    chaos_thread = threading.Thread(target=chaos, args=(workers, stop, rng), daemon=True)
    chaos_thread.start()
    started = time.monotonic()
    try:
        while len(finals) < KEYS:
            now = time.monotonic()
            assert now - started < TOTAL_S, f"only {len(finals)} of {KEYS} keys got a final reply in {TOTAL_S} s"
            for k in [k for k, t in retry_at.items() if t <= now]:
                del retry_at[k]
                pending.insert(0, k)
            while pending and len(in_flight) < WINDOW:
                k = pending.pop(0)
                attempts[k] += 1
                assert attempts[k] <= MAX_ATTEMPTS, f"key {k!r} needed more than {MAX_ATTEMPTS} requests"
                in_flight[c.request("Chaos", "handle", bodies[k], deadline=5000, key=k)] = k
            try:
                m = c.next(lambda m: m.command == "REPLY" and m.status != "progress", timeout=0.05)
            except TimeoutError:
                continue
            c.inbox = [x for x in c.inbox if x.request_id != m.request_id]  # its progress REPLY, if any
            k = in_flight.pop(m.request_id)
            if m.status == "final":
                assert m.flags == b"", f"a first final is no replay: {m}"
                assert k not in finals, f"a second final for {k!r}"
                finals[k] = m
                continue
            codes[m.code] = codes.get(m.code, 0) + 1
            assert m.code in RETRY, f"unexpected ending for {k!r}: {m}"
            retry_at[k] = time.monotonic() + rng.uniform(0.05, 0.2)
    finally:
        stop.set()
        chaos_thread.join(10)

    # (b) once more each: the stored final, byte for byte, flagged replay (no worker involved).
    replays = {c.request("Chaos", "handle", bodies[k], deadline=5000, key=k): k for k in keys}
    for rid, k in replays.items():
        r = c.ending(rid)
        assert (r.status, r.phase, r.body, r.flags) == ("final", "handle", finals[k].body, b"replay"), (k, r)
    workers.kill_all()

    # The log: every line is whole (one write each, O_APPEND).
    lines = [json.loads(line) for line in log_path.read_text().splitlines()]
    ends = {(x["pid"], x["job"]): x["t"] for x in lines if x["event"] == "end"}
    runs: dict[str, list[dict]] = {}
    for x in lines:
        if x["event"] == "start":
            stop_t = ends.get((x["pid"], x["job"]), workers.kills.get(x["pid"], float("inf")))
            runs.setdefault(x["key"], []).append({**x, "until": stop_t})
    assert set(runs) == {k.decode() for k in keys}, "every key ran at least once"

    multi = 0
    for key, starts in runs.items():
        starts.sort(key=lambda x: x["t"])
        multi += len(starts) > 1
        # (a) never on two workers (or twice on one) at once
        for a, b in zip(starts, starts[1:]):
            assert b["t"] >= a["until"], (f"key {key} ran twice at once: attempt {a['attempt']} on {a['worker']} "
                                          f"(pid {a['pid']}) until {a['until']:.3f}, attempt {b['attempt']} on "
                                          f"{b['worker']} (pid {b['pid']}) from {b['t']:.3f}")
        # (c) attempts strictly increasing, starting at 1
        numbers = [x["attempt"] for x in starts]
        assert numbers == sorted(set(numbers)) and numbers[0] >= 1, f"key {key}: attempts {numbers}"
        final = json.loads(finals[key.encode()].body)["handle"]["data"]
        assert (final["attempt"], final["job"]) == (starts[-1]["attempt"], starts[-1]["job"]), \
            f"key {key}: the final reply ({final}) is not from the last run {starts[-1]}"

    with capsys.disabled():
        print(f"\nchaos: {KEYS} keys, {sum(attempts.values())} requests, {multi} keys ran more than once "
              f"(max attempt {max(x['attempt'] for r in runs.values() for x in r)}), {len(workers.kills)} workers "
              f"killed, endings retried: {codes}, {time.monotonic() - started:.1f} s")
    assert len(workers.kills) >= 3, "the chaos killed too few workers to mean anything"
