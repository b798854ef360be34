"""Durable requests across restarts: 10 SIGKILLs of a broker with a SQLite journal, at
random moments under load, must leave 0 accepted requests without an ending, 0 handle jobs run twice unless a keyed
retry asked for it, and a STATUS store that knows every request.

Set-up: a broker on a fresh journal (`concierge journal init`) and private ipc:// endpoints; three CIPW02 worker
processes (durable_worker.py: chaos_worker.py whose log lines also carry the "ref" parameter of the job's intent),
which log every handle job they start (O_APPEND, fsync) before running it, and re-register by themselves when the
broker is gone (silence, or DISCONNECT from a new broker); two CIPC02 clients with fixed routing ids, so that the
restarted broker sees the same clients.

Load: a few hundred requests of intent type "Chaos" (unkeyed `handle`, keyed `handle` or `lifecycle`, unkeyed
`lifecycle` and `resolve`),
some tens in flight, with deadlines of 0.5, 1 or 3 s (so that some get `progress` or are shed `busy` across a
restart); a fifth of the keyed requests are sent twice at once (the second, with the same deadline, is attached to
the first). The intent's parameter "ref" names the request (`r:<request id>`) or, for a keyed request, its
key (`k:<key>`, the same body for every retry, as a key requires), so the workers' logs say which request or key every
handle job belonged to. A keyed request is sent again (same key and body, new request id) after an ending that
leaves its outcome unknown (`outcome-unknown`, `worker-lost`, `timeout`), after `busy`, and after the broker
answered STATUS `unknown-request` (the REQUEST was lost with the killed broker's connection).

Chaos: a thread SIGKILLs the broker by pid 10 times, each 0.3..1.0 s after the previous incarnation answered PING,
waits until the process is reaped, and starts a new one on the same endpoints and journal. After every restart the
clients ask STATUS about each request they have in flight (the sweep of PROTOCOL 7.2): `progress` means keep
waiting, a stored ending is the ending, `unknown-request` means the broker never accepted it. Requests without an
ending are also asked again every few seconds.

Then every request id is asked STATUS once more, the workers are stopped, and:

(a) every accepted request (one that got `progress`, STATUS `progress`, or an ending other than a refusal a broker
    gives before accepting) has exactly one ending REPLY or a stored ending (never two different endings, never two
    ending REPLYs), and no request that got a reply is `unknown-request` later;
(b) the final STATUS of every accepted request answers its ending (status, phase and body byte for byte);
(c) an unkeyed handle job never ran twice (log starts per ref), never ran for a request the broker refused or never
    accepted, and a final reply comes from the one logged run;
(d) a key's runs carry strictly increasing attempts (the sharp check: a broker that ran an attempt again, say a
    recovered handle job, repeats its number), number at most 1 + the endings of that key whose outcome was unknown
    (a loose bound: a duplicate attached to a request shares its ending and counts too), and every final reply of
    the key (first, attached duplicate or replay) comes from its last run;
(f) every key with a final reply, sent once more at the end, gets that final byte for byte flagged `replay`, and
    runs no job (the idempotency records came through the restarts);
(e) the clients saw no protocol violation (at most one progress REPLY, no REPLY or STATUS nobody was owed).

Every wait is bounded; processes are stopped by pid; files live in the session's temporary directory.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sys
import threading
import time
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import zmq

import cip
import cluster


HB = 500
WORKERS = 3
CAPACITY = 4
KILLS = int(os.environ.get("DURABLE_KILLS", "10"))  # more, to hunt for rarer losses
# To hunt: DURABLE_GAP_S=0,0.3 DURABLE_EARLY=1 kills a new broker without waiting for it to answer PING (possibly
# while it is still reading its journal back).
GAP_S = tuple(float(x) for x in os.environ.get("DURABLE_GAP_S", "0.3,1.0").split(","))
EARLY = os.environ.get("DURABLE_EARLY") == "1"
MIN_REQUESTS = 30 * KILLS  # keep the load going until the kills are over and at least this many were sent ...
MAX_REQUESTS = 60 * KILLS  # ... but never more than this (keyed retries included)
WINDOW = int(os.environ.get("DURABLE_WINDOW", "32"))  # requests in flight at once (both clients)
DEADLINES_MS = (500, 1000, 3000, 3000)  # short ones get progress and busy across restarts
DUPLICATES = 0.2        # chance that a keyed request is sent twice at once (the second is attached to the first)
# An attached duplicate gets its first request's deadline by default; DURABLE_DUP_DEADLINES=1 gives duplicates
# deadlines of their own (shed ones must end once: the journal detaches them; one that had its progress keeps it
# across a restart: the journal records each duplicate's own deadline, test_attached_duplicate_gets_one_progress_...).
DUP_OWN_DEADLINES = os.environ.get("DURABLE_DUP_DEADLINES") == "1"
LOAD_S = 120.0          # bound of the load phase
DRAIN_S = 90.0          # after the load: every request ends by the hard limit (60 s)
SWEEP_AFTER_S = 4.0     # ask STATUS about a request without an ending this long after the last question
KEY_REQUESTS = 12       # requests per key at most
WORKER_SCRIPT = Path(__file__).with_name("durable_worker.py")

UNKNOWN_OUTCOME = {"outcome-unknown", "worker-lost", "timeout", "shutting-down", "cancelled"}
RETRY_KEYED = UNKNOWN_OUTCOME | {"busy"}
# Errors a broker may answer before it accepts a REQUEST (4.8, 6.5, 6.6); busy and unknown-intent also end accepted
# requests (shed at the deadline, no worker after the grace period), and are then kept for STATUS.
REFUSALS = {"malformed", "unsupported-version", "unknown-command", "bad-request-id", "bad-phase", "bad-deadline",
            "too-large", "duplicate-request", "unknown-intent", "busy", "shutting-down", "idempotency-conflict"}


class RecordingClient(cip.Client):
    """cip.Client that records accounting violations (4.1: a message nobody is owed, a second progress) instead of
    raising them, so that one run reports all of them; format violations still raise."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.violations: list[str] = []

    def _account(self, m: cip.Message) -> None:
        try:
            super()._account(m)
        except cip.ProtocolViolation as e:
            self.violations.append(str(e).splitlines()[0])


class RestartingBroker:
    """One broker on fixed endpoints and one journal, killed and started again; each incarnation logs to its own
    file."""

    def __init__(self, spawn, journal: Path):
        self.spawn = spawn
        self.journal = journal
        self.tag = f"dur{uuid.uuid4().hex[:6]}"
        self.frontend = f"ipc://{spawn.run_dir}/{self.tag}-fe.sock"
        self.backend = f"ipc://{spawn.run_dir}/{self.tag}-be.sock"
        self.incarnations: list[cluster.Proc] = []
        self.kills = 0
        self.generation = 0       # bumped once a restarted broker answers PING
        self.kill_times: list[float] = []
        self.proc: cluster.Proc | None = None

    def start(self) -> None:
        # DURABLE_JOURNAL=none runs the same test on a memory-only broker, to see it fail.
        # DURABLE_FSYNC=100 commits with fsync at most every 100 ms (a SIGKILL must lose nothing either way).
        journal = os.environ.get("DURABLE_JOURNAL", str(self.journal))
        args = [str(cluster.binary()), "broker", "--frontend", self.frontend, "--backend", self.backend,
                "--heartbeat-ms", str(HB), "--journal", journal, "--result-ttl", "3600",
                "--journal-fsync", os.environ.get("DURABLE_FSYNC", "batch"),
                # The protocol's plain admission rule (80% of the deadline): the load keeps a window of requests
                # larger than the workers' slots, and the standing-queue limit (on by default) would answer most of
                # them `busy` at once, so that the load would end before the kills (OVERLOAD.md).
                "--standing-queue-wait-ms", "0",
                "--log-level", "info"]
        p = cluster.Proc(f"{self.tag}-{len(self.incarnations)}", args, self.spawn.run_dir)
        p.stop_timeout = 1.0
        self.spawn.procs.append(p)
        self.incarnations.append(p)
        self.proc = p

    def wait_ready(self, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        with cip.Client(self.frontend) as c:
            while time.monotonic() < end:
                if not self.proc.alive():
                    raise RuntimeError(f"broker {self.proc.name} exited:\n{self.proc.tail()}")
                c.ping()
                try:
                    c.pong(timeout=0.3)
                    return
                except TimeoutError:
                    continue
        raise RuntimeError(f"broker {self.proc.name} did not answer PING within {timeout} s:\n{self.proc.tail()}")

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        assert self.proc.wait(10) is not None, f"broker pid {self.proc.pid} still alive 10 s after SIGKILL"
        self.kills += 1
        self.kill_times.append(time.monotonic())

    def recovered(self) -> list[dict[str, int]]:
        """What each incarnation's "journal opened" line says it recovered."""
        out = []
        for p in self.incarnations:
            text = p.log_path.read_text("utf-8", "replace") if p.log_path.exists() else ""
            m = re.search(r"idempotency-records=(\d+) .*requests-recovered=(\d+) results=(\d+) .*journal opened", text)
            if m:
                out.append({"requests": int(m.group(2)), "results": int(m.group(3)), "keys": int(m.group(1))})
        return out


def chaos(broker: RestartingBroker, stop: threading.Event, rng: random.Random, errors: list) -> None:
    try:
        for i in range(KILLS):
            if stop.wait(rng.uniform(*GAP_S)):  # pacing of the chaos, not ordering
                return
            broker.kill()
            broker.start()
            if not EARLY or i == KILLS - 1:
                broker.wait_ready()
            broker.generation += 1
    except BaseException as e:  # reported by the test
        errors.append(e)


@dataclass
class Req:
    rid: bytes
    client: int
    kind: str                   # handle | keyed | dup (a keyed request sent again at once) | lifecycle | resolve
    ref: str
    key: bytes | None
    sent_at: float
    deadline: int = 0
    progress: int = 0           # progress REPLYs
    status_progress: int = 0    # STATUS answers `progress`
    reply_endings: list = field(default_factory=list)
    ending: cip.Message | None = None
    ending_via: str = ""        # reply | status
    ended_at: float = 0.0
    unknown: bool = False       # STATUS said unknown-request before any ending: never accepted
    asked_gen: int = -1
    asked_at: float = 0.0
    final_status: cip.Message | None = None

    @property
    def accepted(self) -> bool:
        if self.progress or self.status_progress:
            return True
        if self.ending is None:
            return False
        if self.ending.status == "final" or self.ending.code not in REFUSALS:
            return True
        # busy / unknown-intent / shutting-down: a refusal, or the ending of an accepted request; STATUS tells.
        return self.final_status is not None and self.final_status.json.get("code") != "unknown-request"


@dataclass
class KeyOp:
    key: bytes
    ref: str
    body: bytes
    client: int
    phase: str = "handle"       # handle or lifecycle: a key matters for both
    rids: list = field(default_factory=list)
    unknown_outcomes: int = 0
    finals: list = field(default_factory=list)
    done: bool = False
    retry_at: float | None = None
    endings: list = field(default_factory=list)


def chaos_body(ref: str) -> bytes:
    return cip.encode({"intent": {"type": "Chaos", "parameters": {"ref": ref}}})


@pytest.mark.chaos
def same(a: cip.Message, b: cip.Message) -> bool:
    """Two answers with the same status, phase and body, byte for byte."""
    return (a.status, a.phase, a.body) == (b.status, b.phase, b.body)


def check_runs(reqs: dict, keyops: dict, log_path: Path, clients: list) -> tuple[list[str], list[dict], int, int]:
    """Checks (a)-(e) of the module's docstring against the workers' logs (the workers must be gone, so that their
    logs are complete). Returns the problems found, the log lines, how many requests were accepted and how many keys
    ran more than once. Shared with test_failover.py."""
    problems: list[str] = []
    lines = [json.loads(line) for line in log_path.read_text().splitlines()] if log_path.exists() else []
    starts: dict[str, list[dict]] = {}
    for x in lines:
        if x["event"] == "start":
            starts.setdefault(x["ref"], []).append(x)

    accepted = 0
    for r in reqs.values():
        st = r.final_status
        if r.accepted:
            accepted += 1
        # (a), (b)
        if r.ending is not None:
            if st.json.get("code") == "unknown-request" or st.status == "progress":
                if r.accepted:
                    problems.append(f"{r.rid!r} ({r.kind}): ended {r.ending} ({r.ending_via}), final STATUS {st}")
            elif not same(st, r.ending):
                problems.append(f"{r.rid!r} ({r.kind}): final STATUS {st} differs from its ending {r.ending}")
        elif r.unknown and st.json.get("code") != "unknown-request":
            problems.append(f"{r.rid!r} ({r.kind}): STATUS said unknown-request, later {st}")
        # (c) unkeyed handle jobs
        if r.kind in ("handle", "lifecycle"):
            runs = starts.get(r.ref, [])
            if len(runs) > 1:
                problems.append(f"{r.rid!r} ({r.kind}): its handle job ran {len(runs)} times: {runs}")
            if runs and not r.accepted:
                problems.append(f"{r.rid!r} ({r.kind}): ran {runs} but was never accepted "
                                f"(ending {r.ending}, unknown-request {r.unknown})")
            if r.ending is not None and r.ending.status == "final":
                data = r.ending.json["handle"]["data"]
                if len(runs) != 1 or data["job"] != runs[0]["job"]:
                    problems.append(f"{r.rid!r}: final from job {data['job']}, logged runs {runs}")
            if r.ending is not None and r.ending.status == "error" and r.ending.code in ("busy", "unknown-intent") \
                    and runs:
                problems.append(f"{r.rid!r}: ended {r.ending.code} (no handle job given out) but ran {runs}")
        elif r.kind == "resolve" and starts.get(r.ref):
            problems.append(f"{r.rid!r}: a resolve request ran a handle job {starts[r.ref]}")
    # (d) keys
    multi = 0
    for op in keyops.values():
        runs = sorted(starts.get(op.ref, []), key=lambda x: x["t"])
        attempts = [x["attempt"] for x in runs]
        multi += len(runs) > 1
        if attempts != sorted(set(attempts)):
            problems.append(f"key {op.key!r}: attempts {attempts} not strictly increasing")
        if len(runs) > 1 + op.unknown_outcomes:
            problems.append(f"key {op.key!r}: ran {len(runs)} times ({attempts}) after {op.unknown_outcomes} "
                            f"unknown outcomes (endings {op.endings})")
        for final in op.finals:  # the first and its duplicates or replays: all from the key's last run
            data = final.json["handle"]["data"]
            if not runs or (data["attempt"], data["job"]) != (runs[-1]["attempt"], runs[-1]["job"]):
                problems.append(f"key {op.key!r}: final {data} is not from the last run {runs[-1:]}")
    # (e)
    for i, c in enumerate(clients):
        problems += [f"client {i}: {v}" for v in c.violations]
    return problems, lines, accepted, multi


def tally_endings(reqs: dict) -> tuple[dict[str, int], dict[str, int]]:
    """How the requests ended (final, or the error code), and which of those endings were learnt from STATUS."""
    codes: dict[str, int] = {}
    for r in reqs.values():
        if r.ending is not None:
            k = "final" if r.ending.status == "final" else r.ending.code
            codes[k] = codes.get(k, 0) + 1
        elif r.unknown:
            codes["(unknown-request: never accepted)"] = codes.get("(unknown-request: never accepted)", 0) + 1
        else:
            codes["(no answer)"] = codes.get("(no answer)", 0) + 1
    via_status: dict[str, int] = {}
    for r in reqs.values():
        if r.ending_via == "status":
            k = "final" if r.ending.status == "final" else r.ending.code
            via_status[k] = via_status.get(k, 0) + 1
    return codes, via_status


def test_sigkilled_broker_keeps_every_request(spawn, capsys):
    rng = random.Random()
    journal = spawn.run_dir / f"journal-{uuid.uuid4().hex[:8]}.db"
    init = subprocess.run([str(cluster.binary()), "journal", "init", str(journal)], capture_output=True,
                                  text=True, timeout=30)
    assert init.returncode == 0, init.stderr
    broker = RestartingBroker(spawn, journal)
    broker.start()
    broker.wait_ready()

    log_path = spawn.run_dir / f"durable-{uuid.uuid4().hex[:8]}.log"
    workers = []
    for i in range(WORKERS):
        name = f"{broker.tag}-w{i}"
        args = [sys.executable, str(WORKER_SCRIPT), "--broker", broker.backend, "--name", name, "--log", str(log_path),
                "--heartbeat-ms", str(HB), "--capacity", str(CAPACITY), "--max-ms", "300"]
        p = cluster.Proc(name, args, spawn.run_dir)
        p.stop_timeout = 1.0
        spawn.procs.append(p)
        workers.append(p)

    clients = []
    for i in range(2):
        c = RecordingClient(broker.frontend, routing_id=f"{broker.tag}-client{i}".encode(), version=2)
        spawn.closables.append(c)
        clients.append(c)

    # Until a worker serves Chaos (a resolve job: logged by nobody).
    end = time.monotonic() + 20
    while True:
        assert time.monotonic() < end, "no durable worker registered"
        m = clients[0].ending(clients[0].request("Chaos", "resolve", chaos_body("probe"), deadline=2000), timeout=5)
        if m.status == "final":
            break
        time.sleep(0.1)

    reqs: dict[bytes, Req] = {}
    keyops: dict[bytes, KeyOp] = {}
    problems: list[str] = []
    given_up: list[bytes] = []
    open_rids: set[bytes] = set()
    sent = 0
    counter = 0

    def send(kind: str, ci: int, op: KeyOp | None = None, deadline: int | None = None) -> None:
        nonlocal sent, counter
        counter += 1
        rid = f"c{ci}-{counter}-{uuid.uuid4().hex[:6]}".encode()
        c = clients[ci]
        if deadline is None or DUP_OWN_DEADLINES:
            deadline = rng.choice(DEADLINES_MS)
        if kind in ("keyed", "dup"):
            c.request("Chaos", op.phase, op.body, deadline=deadline, rid=rid, key=op.key)
            op.rids.append(rid)
            if kind == "keyed":
                op.retry_at = None
            r = Req(rid, ci, kind, op.ref, op.key, time.monotonic(), deadline)
        else:
            ref = f"r:{rid.decode()}"
            phase = {"handle": "handle", "lifecycle": "lifecycle", "resolve": "resolve"}[kind]
            c.request("Chaos", phase, chaos_body(ref), deadline=deadline, rid=rid)
            r = Req(rid, ci, kind, ref, None, time.monotonic(), deadline)
        reqs[rid] = r
        open_rids.add(rid)
        sent += 1
        if kind == "keyed" and rng.random() < DUPLICATES:
            send("dup", ci, op, deadline)

    def ask(r: Req) -> None:
        clients[r.client].status(r.rid)
        r.asked_gen = broker.generation
        r.asked_at = time.monotonic()

    def keyed_ended(r: Req, code: str | None, m: cip.Message | None) -> None:
        op = keyops[r.key]
        op.endings.append(code or "final")
        if code is None:
            op.finals.append(m)
        if code in UNKNOWN_OUTCOME:
            op.unknown_outcomes += 1
        if r.kind == "dup":
            return  # the retries follow the first request only
        if code is None:
            op.done = True
            return
        if code in RETRY_KEYED or code == "broker-restarted":
            if len(op.rids) >= KEY_REQUESTS:
                op.done = True  # given up (an overloaded run sheds it again and again): not a broker fault
                given_up.append(op.key)
            else:
                op.retry_at = time.monotonic() + rng.uniform(0.05, 0.3)
        else:
            op.done = True
            problems.append(f"key {op.key!r}: unexpected ending {m}")

    def ended(r: Req, m: cip.Message, via: str) -> None:
        r.ending, r.ending_via, r.ended_at = m, via, time.monotonic()
        open_rids.discard(r.rid)
        if r.kind in ("keyed", "dup"):
            keyed_ended(r, m.code if m.status == "error" else None, m)

    def handle(m: cip.Message) -> None:
        r = reqs.get(m.request_id)
        if r is None:
            if m.command != "PONG":
                problems.append(f"message for an unknown request id: {m}")
            return
        if m.command == "REPLY":
            if m.status == "progress":
                r.progress += 1
                return
            r.reply_endings.append(m)
            if len(r.reply_endings) > 1:
                problems.append(f"{r.rid!r}: a second ending REPLY {m} after {r.reply_endings[0]}")
            if r.unknown:
                problems.append(f"{r.rid!r}: an ending REPLY {m} after STATUS said unknown-request")
            if r.ending is None:
                ended(r, m, "reply")
            elif not same(r.ending, m):
                problems.append(f"{r.rid!r}: REPLY {m} differs from the ending {r.ending} ({r.ending_via})")
            return
        # STATUS answer
        if m.status == "progress":
            r.status_progress += 1
            if r.ending is not None:
                problems.append(f"{r.rid!r}: STATUS progress after its ending {r.ending}")
            return
        if m.code == "unknown-request":
            if r.ending is not None and r.ending.status == "error" and r.ending.code in REFUSALS and not (
                    r.progress or r.status_progress):
                return  # refused before it was accepted (busy at once, say): nothing to keep
            if r.ending is not None:
                problems.append(f"{r.rid!r}: STATUS unknown-request after its ending {r.ending} ({r.ending_via})")
            elif r.progress or r.status_progress:
                problems.append(f"{r.rid!r} ({r.kind}): accepted (progress {r.progress}, STATUS progress "
                                f"{r.status_progress}), then STATUS unknown-request: the broker lost it")
                r.unknown = True
                open_rids.discard(r.rid)
            elif not r.unknown:
                r.unknown = True  # never accepted: the REQUEST was lost with a killed broker's connection
                open_rids.discard(r.rid)
                if r.kind in ("keyed", "dup"):
                    keyed_ended(r, "broker-restarted", None)
            return
        if r.unknown:
            problems.append(f"{r.rid!r}: STATUS {m} after STATUS said unknown-request")
        if r.ending is None:
            ended(r, m, "status")
        elif not same(r.ending, m):
            problems.append(f"{r.rid!r}: STATUS {m} differs from the ending {r.ending} ({r.ending_via})")

    poller = zmq.Poller()
    for c in clients:
        poller.register(c.socket, zmq.POLLIN)

    def pump(timeout_ms: int) -> None:
        events = dict(poller.poll(timeout_ms))
        for c in clients:
            if c.socket in events:
                while (m := c._receive_one(0)) is not None:
                    handle(m)

    def sweep() -> None:
        now = time.monotonic()
        for rid in list(open_rids):
            r = reqs[rid]
            if r.asked_gen != broker.generation or now - max(r.asked_at, r.sent_at) > SWEEP_AFTER_S:
                ask(r)

    kinds = ["handle"] * 40 + ["keyed"] * 25 + ["lifecycle"] * 20 + ["resolve"] * 15
    stop = threading.Event()
    chaos_errors: list = []
    chaos_thread = threading.Thread(target=chaos, args=(broker, stop, rng, chaos_errors), daemon=True)
    started = time.monotonic()
    chaos_thread.start()
    generation_seen = 0
    next_sweep = time.monotonic() + 1.0
    try:
        # Load, under the kills.
        while True:
            now = time.monotonic()
            assert not chaos_errors, f"the chaos thread failed: {chaos_errors[0]!r}"
            kills_done = not chaos_thread.is_alive()
            if (kills_done and sent >= MIN_REQUESTS) or sent >= MAX_REQUESTS or now - started > LOAD_S:
                break
            for op in keyops.values():
                if op.retry_at is not None and op.retry_at <= now and sent < MAX_REQUESTS:
                    send("keyed", op.client, op)
            while len(open_rids) < WINDOW and sent < MAX_REQUESTS:
                kind = rng.choice(kinds)
                ci = rng.randrange(len(clients))
                op = None
                if kind == "keyed":
                    key = f"key-{len(keyops)}-{uuid.uuid4().hex}".encode()
                    op = KeyOp(key, f"k:{key.decode()}", chaos_body(f"k:{key.decode()}"), ci,
                               rng.choice(("handle", "handle", "lifecycle")))
                    keyops[key] = op
                send(kind, ci, op)
            if broker.generation != generation_seen or now >= next_sweep:
                generation_seen = broker.generation
                next_sweep = now + 1.0
                sweep()
            pump(20)
        load_s = time.monotonic() - started
        stop.set()
        chaos_thread.join(60)
        assert not chaos_thread.is_alive(), "the chaos thread did not finish"
        assert not chaos_errors, f"the chaos thread failed: {chaos_errors[0]!r}"

        # Drain: keyed retries go on; every request ends by the hard limit.
        drain_end = time.monotonic() + DRAIN_S
        while open_rids or any(op.retry_at is not None for op in keyops.values()):
            now = time.monotonic()
            if now > drain_end:
                break
            for op in keyops.values():
                if op.retry_at is not None and op.retry_at <= now:
                    send("keyed", op.client, op)
            if broker.generation != generation_seen or now >= next_sweep:
                generation_seen = broker.generation
                next_sweep = now + 1.0
                sweep()
            pump(20)
    finally:
        stop.set()
        chaos_thread.join(60)

    for rid in open_rids:
        r = reqs[rid]
        if r.progress or r.status_progress:
            problems.append(f"{rid!r} ({r.kind}): accepted (progress {r.progress}, STATUS progress "
                            f"{r.status_progress}) and no ending within {DRAIN_S} s")
        else:
            problems.append(f"{rid!r} ({r.kind}): no answer at all, not even to STATUS, within {DRAIN_S} s")

    # (b) STATUS of every request id, once more (after the answers to earlier questions have come in).
    quiet_end = time.monotonic() + 1.0
    while time.monotonic() < quiet_end:
        pump(50)
    for r in reqs.values():
        clients[r.client].status(r.rid)
    waiting = set(reqs)
    end = time.monotonic() + 30
    while waiting and time.monotonic() < end:
        events = dict(poller.poll(50))
        for c in clients:
            if c.socket in events:
                while (m := c._receive_one(0)) is not None:
                    if m.command == "STATUS" and m.request_id in waiting and not (
                            m.status == "progress" and reqs[m.request_id].ending is not None):
                        reqs[m.request_id].final_status = m
                        waiting.discard(m.request_id)
                    else:
                        handle(m)
    assert not waiting, f"{len(waiting)} STATUS questions unanswered within 30 s"

    # (f) every key with a final reply is sent once more: its stored final, byte for byte, flagged replay (the
    # idempotency records came through every restart), and no worker runs it again (checked with the log below).
    replays: dict[bytes, KeyOp] = {}
    for op in keyops.values():
        if op.finals:
            rid = f"replay-{len(replays)}-{uuid.uuid4().hex[:6]}".encode()
            clients[op.client].request("Chaos", op.phase, op.body, deadline=3000, rid=rid, key=op.key)
            replays[rid] = op
    for rid, op in replays.items():
        r = clients[op.client].ending(rid, timeout=10)
        first = op.finals[0]
        if (r.status, r.phase, r.body, r.flags) != ("final", first.phase, first.body, b"replay"):
            problems.append(f"key {op.key!r}: sent again after the restarts, answered {r}, not the replay of {first}")

    for p in workers:  # by pid; their logs are complete once they are gone
        p.signal(signal.SIGKILL)
        p.wait(10)
    found, lines, accepted, multi = check_runs(reqs, keyops, log_path, clients)
    problems += found

    codes, via_status = tally_endings(reqs)
    progress = sum(1 for r in reqs.values() if r.progress)
    status_progress = sum(1 for r in reqs.values() if r.status_progress)
    recovered = broker.recovered()
    refused = sorted((round((r.ended_at - r.sent_at) * 1000), r.deadline, r.ending_via) for r in reqs.values()
                     if r.ending is not None and not r.accepted)
    with capsys.disabled():
        print(f"\ndurable: {len(reqs)} requests ({sum(1 for r in reqs.values() if r.kind == 'keyed')} keyed on "
              f"{len(keyops)} keys, {sum(1 for r in reqs.values() if r.kind == 'dup')} sent twice at once, {multi} keys ran more than once, {len(given_up)} given up after {KEY_REQUESTS} requests, {len(replays)} replayed at the end), {accepted} accepted, endings {codes}, "
              f"endings learnt from STATUS {via_status}, {progress} with a progress REPLY, {status_progress} with STATUS progress, {broker.kills} kills, {len(lines)} log lines, "
              f"recovered per restart (requests/results/keys): "
              f"{[(x['requests'], x['results'], x['keys']) for x in recovered[1:]]}, load {load_s:.1f} s, "
              f"total {time.monotonic() - started:.1f} s, {len(problems)} problems")
        if refused:
            print(f"  refused before acceptance (STATUS unknown-request): {len(refused)}, answered "
                  f"{refused[0][0]}..{refused[-1][0]} ms after sending")
        for p in problems[:40]:
            print("  problem:", p)
    if os.environ.get("DURABLE_KEEP"):  # a directory to keep the logs, the journal and the workers' log in
        keep = Path(os.environ["DURABLE_KEEP"]) / broker.tag
        keep.mkdir(parents=True, exist_ok=True)
        for f in spawn.run_dir.iterdir():
            if f.is_file() and not f.name.endswith(".sock"):
                shutil.copy2(f, keep / f.name)
        (keep / "problems.txt").write_text("\n".join(problems))
    assert broker.kills == KILLS, f"only {broker.kills} kills"
    assert not problems, f"{len(problems)} problems, first: {problems[:10]}"


def test_shed_duplicate_ends_once_across_a_restart(spawn):
    """The smallest reproduction of what test_sigkilled_broker_keeps_every_request finds with
    DURABLE_DUP_DEADLINES=1 DURABLE_WINDOW=120: request P (key K, deadline 3 s) and its duplicate D (same key and
    body, deadline 500 ms) wait for a worker; D is shed `busy` at its deadline and leaves the operation (4.10.1); the
    broker is SIGKILLed and started again on its journal, a worker registers, P ends `final`. D must get nothing
    more, and STATUS of D must still answer its `busy`. Without the restart it does (checked first)."""
    for restart in (False, True):
        journal = spawn.run_dir / f"journal-{uuid.uuid4().hex[:8]}.db"
        subprocess.run([str(cluster.binary()), "journal", "init", str(journal)], check=True, capture_output=True,
                       timeout=30)
        broker = RestartingBroker(spawn, journal)
        broker.start()
        broker.wait_ready()
        c = RecordingClient(broker.frontend, routing_id=f"{broker.tag}-client".encode(), version=2)
        spawn.closables.append(c)
        body = chaos_body("shed-duplicate")
        c.request("Chaos", "handle", body, deadline=3000, rid=b"P", key=b"K")
        c.request("Chaos", "handle", body, deadline=500, rid=b"D", key=b"K")
        shed = c.ending(b"D", timeout=5)
        assert (shed.status, shed.code) == ("error", "busy"), shed
        if restart:
            broker.kill()
            broker.start()
            broker.wait_ready()
            c.status(b"P")  # the sweep (7.2): P is still in flight
        worker = cluster.Proc(f"{broker.tag}-w", [sys.executable, str(WORKER_SCRIPT), "--broker", broker.backend,
                                                  "--name", f"{broker.tag}-w", "--log", str(spawn.run_dir / "shed.log"),
                                                  "--heartbeat-ms", str(HB), "--capacity", "2", "--max-ms", "100"],
                              spawn.run_dir)
        worker.stop_timeout = 1.0
        spawn.procs.append(worker)
        final = c.ending(b"P", timeout=10)
        assert final.status == "final", final
        end = time.monotonic() + 1.5
        while time.monotonic() < end:  # anything more for D arrives within this
            try:
                c.next(lambda m: m.request_id == b"D", timeout=0.1)
                break
            except TimeoutError:
                pass
        c.status(b"D")
        status = c.next(lambda m: m.command == "STATUS" and m.request_id == b"D", timeout=10)
        assert not c.violations, f"restart={restart}: {c.violations}"
        assert (status.status, status.body) == ("error", shed.body), f"restart={restart}: STATUS of D is {status}"
        worker.stop(2)
        broker.proc.stop(2)


def test_attached_duplicate_gets_one_progress_across_a_restart(spawn):
    """At most one progress REPLY per request (6.3), a restart in between included: lifecycle P (key K, deadline
    3 s) and its duplicate D (deadline 500 ms) are attached; P's resolve job is running at D's deadline, so D gets
    its progress REPLY then. The broker is SIGKILLed and started again while no worker is registered (P is
    re-queued from its first phase, 6.1), so the operation is still in flight at P's deadline: P gets its progress
    REPLY (its first); D must not get a second one. Then a worker finishes the lifecycle for both."""
    journal = spawn.run_dir / f"journal-{uuid.uuid4().hex[:8]}.db"
    subprocess.run([str(cluster.binary()), "journal", "init", str(journal)], check=True, capture_output=True,
                   timeout=30)
    broker = RestartingBroker(spawn, journal)
    broker.start()
    broker.wait_ready()
    c = RecordingClient(broker.frontend, routing_id=f"{broker.tag}-client".encode(), version=2)
    spawn.closables.append(c)
    w = spawn.pyworker(broker.backend, types=("Chaos",), capacity=1, heartbeat_ms=HB, version=2)
    w.wait_heartbeat()
    body = chaos_body("progress-duplicate")
    started = time.monotonic()
    c.request("Chaos", "lifecycle", body, deadline=3000, rid=b"P", key=b"K")
    c.request("Chaos", "lifecycle", body, deadline=500, rid=b"D", key=b"K")
    job = w.next(lambda m: m.command == "JOB", timeout=5)
    assert job.phase == "resolve", job
    first = c.reply(b"D", timeout=5)
    assert first.status == "progress", first
    w.close()  # gone without a word: the restarted broker has no worker for Chaos
    broker.kill()
    broker.start()
    broker.wait_ready()
    c.status(b"P")
    c.status(b"D")
    for rid in (b"P", b"D"):
        m = c.status_answer(rid, timeout=10)
        assert m.status == "progress", m
    p_progress = c.reply(b"P", timeout=5)  # at P's deadline, 3 s after it was accepted
    assert p_progress.status == "progress", p_progress
    while time.monotonic() < started + 3.5:
        time.sleep(0.05)
    worker = cluster.Proc(f"{broker.tag}-w", [sys.executable, str(WORKER_SCRIPT), "--broker", broker.backend,
                                              "--name", f"{broker.tag}-w", "--log", str(spawn.run_dir / "pd.log"),
                                              "--heartbeat-ms", str(HB), "--capacity", "2", "--max-ms", "100"],
                          spawn.run_dir)
    worker.stop_timeout = 1.0
    spawn.procs.append(worker)
    endings = {rid: c.ending(rid, timeout=10) for rid in (b"P", b"D")}
    assert endings[b"P"].status == "final" and endings[b"P"].body == endings[b"D"].body, endings
    assert not c.violations, c.violations
