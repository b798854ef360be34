"""Definition upgrades that never fail a request (PROTOCOL.md 5.18, issue 45), with real processes: a broker started
with no upgrade flag, a `concierge pool` of real worker processes (rolling_worker.py, serving `Rollout` under the
version written in a file), and callers using the Python client library.

* A compatible change, rolled one worker at a time under steady load of lifecycles and conversations, while the
  callers of the new version start using its new parameter halfway: no request fails, every job that saw the new
  parameter ran on a version-2 worker, and every conversation started on version 1 finishes `completed`.
* A breaking change (a parameter's type changed), served side by side: each version's requests run only on its own
  workers, and a worker refused for good (another definition under a served version) stops once, is not restarted
  by its pool, and is listed by `concierge intents` and `concierge scale --status`.

The load is bounded (callers stop at the end of the roll, or after 90 s) and every wait is on observable state.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Clients" / "python" / "src"))

import cluster  # noqa: E402
from concierge_client import Client, ClientError  # noqa: E402

HB = 250
WORKER = Path(__file__).with_name("rolling_worker.py")
WAIT = 90.0


def start_pool(spawn, broker, run_dir: Path, name: str, workers: int, version_file: Path, log: Path,
               worker: Path = WORKER) -> cluster.Proc:
    """`concierge pool --executable python3 -- rolling_worker.py ...`: the pool's workers are Python processes."""
    pool = cluster.Proc(name, [
        str(cluster.binary()), "pool", "--broker", broker.backend, "--workers", str(workers), "--name-prefix", name,
        "--control", f"ipc://{run_dir}/{name}.ctl", "--heartbeat-ms", str(HB), "--log-level", "info",
        "--executable", sys.executable, "--", str(worker), "--broker", broker.backend,
        "--version-file", str(version_file), "--log", str(log), "--heartbeat-ms", str(HB)], run_dir)
    spawn.procs.append(pool)
    return pool


def pool_status(run_dir: Path, name: str) -> dict:
    out = subprocess.run([str(cluster.binary()), "scale", "--control", f"ipc://{run_dir}/{name}.ctl", "--status"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout)


def served(broker) -> dict[int, list[str]]:
    """Version -> workers serving it, from `concierge intents --json`."""
    out = subprocess.run([str(cluster.binary()), "intents", "--broker", broker.backend, "--json"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stdout + out.stderr
    return {d["version"]: sorted(d["workers"]) for d in json.loads(out.stdout).get("Rollout", [])}


def wait_until(what: str, condition, timeout: float = WAIT) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.05)


def ending_of(reply, said: str) -> str:
    """`final` for a handled lifecycle that said `said`; otherwise the error code, or what came instead."""
    body = reply.json if reply.status == "final" else None
    handled = body.get("handle", {}).get("data", {}) if isinstance(body, dict) else {}
    if handled.get("said") == said:
        return "final"
    return reply.error_code or f"{reply.status}: {reply.body[:120]!r}"


def log_lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []


def test_a_compatible_change_rolled_one_worker_at_a_time_under_load_fails_no_request(spawn, run_dir, tmp_path):
    broker = spawn.broker(heartbeat_ms=HB, standing_queue_wait_ms=0)
    version_file, log = tmp_path / "version", tmp_path / "jobs.jsonl"
    version_file.write_text("1")
    start_pool(spawn, broker, run_dir, "roll", 2, version_file, log)
    wait_until("two version-1 workers serve Rollout", lambda: served(broker) == {1: ["roll-0", "roll-1"]})

    stop = threading.Event()
    use_new = threading.Event()  # halfway: version 2's callers start using `shout`
    outcomes: list[tuple[str, str, Any]] = []  # (kind, outcome, detail)
    lock = threading.Lock()

    def record(kind: str, outcome: str, detail: Any = None) -> None:
        with lock:
            outcomes.append((kind, outcome, detail))

    def lifecycles(caller: int) -> None:
        with Client(broker.frontend) as client:
            n = 0
            while not stop.is_set():
                n += 1
                text = f"life-{caller}-{n}"
                try:
                    if use_new.is_set() and caller % 2 == 0:
                        # A caller of version 2: names it, and uses what it adds.
                        reply = client.request({"type": "Rollout", "parameters": {"text": text, "shout": True}},
                                               deadline=10.0, definition_version=2, timeout=30)
                        record("new", ending_of(reply, text.upper()), reply.body)
                    else:
                        reply = client.request({"type": "Rollout", "parameters": {"text": text}}, deadline=10.0,
                                               timeout=30)
                        record("old", ending_of(reply, text), reply.body)
                except ClientError as error:
                    record("old", error.code, str(error))
                except Exception as error:  # noqa: BLE001 -- anything else is a failure to count, not a dead thread
                    record("lifecycle", f"exception {error!r}")

    def conversations(caller: int) -> None:
        with Client(broker.frontend) as client:
            n = 0
            while not stop.is_set():
                n += 1
                try:
                    # Turn 1 lacks `text` (needsValue); turn 2 answers it; the conversation ends completed.
                    first = client.start_conversation({"type": "Rollout", "parameters": {}}, deadline=10.0,
                                                      timeout=30)
                    asked = [ask.parameter for ask in first.asking]
                    if asked != ["text"]:
                        record("conversation", f"asked {asked}", first.reply.body)
                        continue
                    time.sleep(0.02)  # a user's think time: the roll goes on between the turns
                    second = client.send_answers(first.conversation_id,
                                                 [{"parameter": "text", "value": f"conv-{caller}-{n}"}], timeout=30)
                    ending = second.state.ending if second.state else None
                    record("conversation", "completed" if ending == "completed" else f"ended {ending}",
                           second.reply.body)
                except ClientError as error:
                    record("conversation", error.code, str(error))
                except Exception as error:  # noqa: BLE001
                    record("conversation", f"exception {error!r}")

    threads = [threading.Thread(target=lifecycles, args=(i,), daemon=True) for i in range(4)]
    threads += [threading.Thread(target=conversations, args=(i,), daemon=True) for i in range(2)]
    for t in threads:
        t.start()
    try:
        wait_until("load under version 1", lambda: len(outcomes) >= 40)
        # The roll: the new build is in place (the version file), then one worker at a time is stopped; it drains,
        # exits, and its pool starts it again on version 2.
        version_file.write_text("2")
        for slot in (0, 1):
            before = {d for d in served(broker).get(2, [])}
            pid = pool_status(run_dir, "roll")["workers"][str(slot)]
            os.kill(pid, signal.SIGTERM)
            wait_until(f"roll-{slot} serves version 2", lambda: f"roll-{slot}" in served(broker).get(2, []))
            assert f"roll-{slot}" not in before
            if slot == 0:
                # Halfway: one worker of each version; version 2's callers start using the new parameter.
                assert served(broker) == {1: ["roll-1"], 2: ["roll-0"]}
                use_new.set()
                count = len(outcomes)
                wait_until("load on both versions", lambda: len(outcomes) >= count + 40)
        assert served(broker) == {2: ["roll-0", "roll-1"]}
        count = len(outcomes)
        wait_until("load after the roll", lambda: len(outcomes) >= count + 40)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)

    failed = [o for o in outcomes if o[1] not in ("final", "completed")]
    kinds = {kind: sum(1 for o in outcomes if o[0] == kind) for kind in ("old", "new", "conversation")}
    tally: dict[str, int] = {}
    for kind, outcome, _ in outcomes:
        tally[f"{kind} {outcome}"] = tally.get(f"{kind} {outcome}", 0) + 1
    print(f"rolling upgrade: {len(outcomes)} outcomes {tally}, {len(failed)} failed")
    assert not failed, failed[:5]
    assert kinds["new"] > 0 and kinds["conversation"] > 0
    jobs = log_lines(log)
    # Every job that saw the new parameter ran on a version-2 worker; version 1 saw none (it would have refused it).
    shouted = [j for j in jobs if "shout" in j["parameters"]]
    assert shouted and all(j["version"] == 2 for j in shouted), json.dumps([j for j in shouted if j["version"] != 2][:3])
    assert not [j for j in jobs if j["outcome"] == "error"]
    # Both versions ran jobs: the roll happened under load.
    assert {j["version"] for j in jobs} == {1, 2}


def test_a_breaking_change_is_served_side_by_side_and_a_refused_worker_stops_once(spawn, run_dir, tmp_path):
    broker = spawn.broker(heartbeat_ms=HB)
    old_file, new_file, log = tmp_path / "old", tmp_path / "new", tmp_path / "jobs.jsonl"
    old_file.write_text("1")
    start_pool(spawn, broker, run_dir, "old", 1, old_file, log)
    wait_until("version 1 served", lambda: served(broker) == {1: ["old-0"]})
    # Version 3 changes `text` from a string to an integer: breaking. Its worker registers beside version 1.
    breaking = tmp_path / "breaking_worker.py"
    source = WORKER.read_text().replace(
        '[{"name": "text", "type": "string",', '[{"name": "text", "type": "integer",')
    assert source != WORKER.read_text()
    breaking.write_text(source)
    new_file.write_text("3")
    start_pool(spawn, broker, run_dir, "brk", 1, new_file, log, worker=breaking)
    wait_until("both versions served", lambda: served(broker) == {1: ["old-0"], 3: ["brk-0"]})
    listing = subprocess.run([str(cluster.binary()), "intents", "--broker", broker.backend],
                             capture_output=True, text=True, timeout=30).stdout
    assert "breaking: parameter text: its type changed from string to integer" in listing, listing
    with Client(broker.frontend) as client:
        for n in range(10):
            old = client.request({"type": "Rollout", "parameters": {"text": f"s{n}"}}, deadline=10.0, timeout=30)
            new = client.request({"type": "Rollout", "parameters": {"text": n}}, deadline=10.0, timeout=30,
                                 definition_version=3)
            assert old.is_final and old.json["handle"]["data"]["version"] == 1, old.body
            assert new.is_final and new.json["handle"]["data"]["version"] == 3, new.body
        missing = client.request({"type": "Rollout", "parameters": {"text": "x"}}, deadline=10.0, timeout=30,
                                 definition_version=7)
        assert missing.error_code == "unknown-intent" and "served: 1, 3" in missing.body.decode(), missing.body

    # A third pool whose build changed version 1's definition without a new version: refused for good.
    wrong = tmp_path / "wrong_worker.py"
    wrong.write_text(WORKER.read_text().replace('"What to say."', '"Changed without a new version."'))
    wrong_file = tmp_path / "wrong"
    wrong_file.write_text("1")
    refused_pool = start_pool(spawn, broker, run_dir, "bad", 1, wrong_file, log, worker=wrong)
    wait_until("the pool shows its refused worker", lambda: pool_status(run_dir, "bad").get("refused") == {"0": "bad-0"})
    listing = subprocess.run([str(cluster.binary()), "intents", "--broker", broker.backend],
                             capture_output=True, text=True, timeout=30).stdout
    assert "refused workers" in listing and "bad-0 Rollout version 1" in listing, listing
    assert "definition-mismatch" in listing, listing
    # Refused once, never restarted: one start, one refusal, no restart loop; the pool itself keeps running.
    text = refused_pool.tail()
    assert text.count("worker started") == 1, text
    assert "worker exited; restarting" not in text, text
    assert refused_pool.alive()
    assert served(broker) == {1: ["old-0"], 3: ["brk-0"]}
