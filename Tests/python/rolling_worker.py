"""A CIPW04 worker for the rolling-upgrade test (test_rolling_upgrade.py): a real process, run by `concierge pool
--executable`, that serves the intent type `Rollout` under the definition version written in a file, read once at
start. Rolling the pool to a new version is what an operator does: write the new version (the new build), then stop
one worker at a time (SIGTERM: it drains and exits; the pool starts it again, and the new process reads the file).

Version 1 of `Rollout` has one required string, `text`; version 2 adds an optional boolean, `shout` (a compatible
change, PROTOCOL.md 5.18). As the reference worker runtime does, a worker answers a parameter its definition does not
declare with error `unknown-parameter`, so a job of a request that uses `shout` on a version-1 worker fails.

Each job is logged as one JSON line (O_APPEND) to --log: the worker's name and version, the job's phase and the
parameters it saw, so that the test can check which version ran what.

    rolling_worker.py --broker ENDPOINT --version-file FILE --log FILE [--name NAME] [--heartbeat-ms MS]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

import zmq

SIG = b"CIPW04"
PHASES = ["resolve", "confirm", "handle"]


def definition(version: int) -> dict:
    parameters = [{"name": "text", "type": "string", "list": False, "required": True,
                   "description": "What to say."}]
    if version >= 2:
        parameters.append({"name": "shout", "type": "boolean", "list": False, "required": False,
                           "description": "Say it loud (version 2)."})
    return {"intent": "Rollout", "version": version, "description": "The rolling-upgrade test's intent.",
            "parameters": parameters, "confirmCodes": ["ready", "failure", "failureRequiringAppLaunch"],
            "handleCodes": ["success", "inProgress", "continueInApp", "failure", "failureRequiringAppLaunch"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--broker", default=os.environ.get("CONCIERGE_BROKER"))
    parser.add_argument("--name", default=os.environ.get("CONCIERGE_WORKER_NAME", f"rolling-{os.getpid()}"))
    parser.add_argument("--version-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--heartbeat-ms", type=int, default=250)
    args = parser.parse_args()
    with open(args.version_file) as f:
        version = int(f.read().strip())
    defined = definition(version)
    names = {p["name"] for p in defined["parameters"]}
    interval = args.heartbeat_ms / 1000.0
    name = args.name.encode()
    log_fd = os.open(args.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    draining = False

    def on_term(_signum, _frame) -> None:
        nonlocal draining
        draining = True

    signal.signal(signal.SIGTERM, on_term)

    context = zmq.Context.instance()
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 1000)
    socket.setsockopt(zmq.ROUTING_ID, name)
    socket.connect(args.broker)
    socket.send_multipart([SIG, b"READY", b"1", name, b"Rollout", json.dumps(defined).encode()])
    last_sent = time.monotonic()
    drain_sent = False

    def log(phase: str, parameters: dict, outcome: str) -> None:
        line = {"worker": args.name, "version": version, "phase": phase, "parameters": sorted(parameters),
                "ref": parameters.get("text"), "outcome": outcome, "pid": os.getpid()}
        os.write(log_fd, (json.dumps(line) + "\n").encode())

    def run(phase: str, body: dict) -> tuple[str, dict]:
        """One phase: the outcome word and the body to answer (an error body for `error`)."""
        intent = body.get("intent") or {}
        parameters = intent.get("parameters") or {}
        unknown = [key for key in parameters if key not in names]
        if unknown:
            return "error", {"code": "unknown-parameter", "intent": "Rollout", "parameter": unknown[0],
                             "message": f"Rollout has no parameter {unknown[0]} in version {version}"}
        time.sleep(0.005)  # a little work, so that jobs are in flight when a worker is stopped
        if phase == "resolve":
            resolved = {}
            for key in sorted(names):
                if key in parameters:
                    resolved[key] = {"kind": "success", "value": parameters[key]}
                elif key == "text":
                    resolved[key] = {"kind": "needsValue"}
                else:
                    resolved[key] = {"kind": "notRequired"}
            body["resolve"] = resolved
            done = all(r["kind"] in ("success", "notRequired") for r in resolved.values())
            return ("continue" if done else "stop"), body
        if phase == "confirm":
            body["confirm"] = {"code": "ready"}
            return "continue", body
        shout = parameters.get("shout") is True
        text = str(parameters.get("text", ""))
        body["handle"] = {"code": "success",
                          "userActivity": {"activityType": "Rollout", "userInfo": {}},
                          "data": {"version": version, "worker": args.name,
                                   "said": text.upper() if shout else text}}
        return "stop", body

    while True:
        now = time.monotonic()
        if draining and not drain_sent:
            socket.send_multipart([SIG, b"DRAIN"])  # 8.1: no new jobs; the broker acknowledges
            drain_sent = True
            last_sent = now
        if now - last_sent >= interval:
            socket.send_multipart([SIG, b"HEARTBEAT"])
            last_sent = now
        if not socket.poll(int(interval * 1000)):
            continue
        frames = socket.recv_multipart()
        if len(frames) < 2 or frames[0] != SIG:
            continue
        command = frames[1]
        if command == b"ERROR":
            sys.stderr.write(f"rolling_worker: refused: {frames[2:]}\n")
            sys.exit(78)
        if command == b"DRAIN":  # the acknowledgement: every job booked before it has come; none is running
            socket.send_multipart([SIG, b"DISCONNECT"])
            socket.close(1000)
            sys.exit(0)
        if command == b"DISCONNECT":
            sys.exit(0)
        if command != b"JOB" or len(frames) != 10:
            continue
        job_id, _type, phase, _left, raw, _key, _attempt, last = frames[2:10]
        phase_name, last_name = phase.decode(), last.decode()
        body = json.loads(raw)
        parameters = ((body.get("intent") or {}).get("parameters") or {})
        index = PHASES.index(phase_name)
        while True:
            outcome, answer = run(PHASES[index], body)
            log(PHASES[index], parameters, outcome)
            socket.send_multipart([SIG, b"RESULT", job_id, outcome.encode(),
                                   json.dumps(answer, separators=(",", ":")).encode()])
            last_sent = time.monotonic()
            # A chained job (5.15): after `continue`, the next phase at once, up to F9.
            if outcome != "continue" or PHASES[index] == last_name:
                break
            index += 1
            body = answer


if __name__ == "__main__":
    main()
