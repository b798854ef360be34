#!/usr/bin/env python3
"""Bench section 8: fairness across clients (issue 14, goal 3).

A well-behaved client runs a closed loop (one Echo handle request at a time) and measures its first-reply latency,
alone and while a flood client sends 50,000 requests as fast as it can without reading a reply; rounds alternate on
the same broker and workers, so that the machine's drift hits both alike. Afterwards the flood reads its replies and
both clients' busy counts are printed. Writes fairness.json (or NAME.json) in the output folder and prints one line per round.

    bench_fairness.py FRONTEND OUT_DIR [--rounds 3] [--flood 50000] [--requests 1000] [--name fairness]

--name: the results file's name in OUT_DIR (NAME.json), for runs against brokers with different settings.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
import uuid
from pathlib import Path

import zmq

BODY = json.dumps({"intent": {"type": "Echo", "parameters": {"text": "x" * 200}}}).encode()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


def good_loop(context: zmq.Context, frontend: str, count: int, stop=None) -> dict:
    """Closed loop: REQUEST, wait for its first REPLY (progress or ending), then its ending, then the next."""
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(frontend)
    latencies: list[float] = []
    busy = other = 0
    tag = uuid.uuid4().hex[:6]
    limit = time.monotonic() + 120
    for index in range(count):
        if stop is not None and stop.is_set():
            break
        rid = f"g{tag}-{index}".encode()
        start = time.perf_counter()
        socket.send_multipart([b"CIPC01", b"REQUEST", rid, b"Echo", b"handle", b"30000", BODY])
        first = None
        while True:
            if not socket.poll(max(1, int((limit - time.monotonic()) * 1000))):
                raise SystemExit("bench_fairness: the well-behaved client got no reply within the time bound")
            frames = socket.recv_multipart()
            if frames[1] != b"REPLY" or frames[2] != rid:
                continue
            if first is None:
                first = time.perf_counter() - start
            if frames[3] != b"progress":
                break
        latencies.append(first)
        if frames[3] == b"error":
            if b'"code":"busy"' in frames[5]:
                busy += 1
            else:
                other += 1
    socket.close(0)
    return {"requests": len(latencies), "busy": busy, "other_errors": other, "latencies": latencies}


def flood(frontend: str, count: int, done, results) -> None:
    """Sends count requests as fast as it can without reading, then reads every ending (bounded in time). Runs in a
    process of its own, so that it does not hold the well-behaved client's interpreter lock."""
    context = zmq.Context()
    result: dict = {}
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.SNDHWM, 0)
    socket.setsockopt(zmq.RCVHWM, 0)
    socket.connect(frontend)
    tag = uuid.uuid4().hex[:6]
    start = time.monotonic()
    for index in range(count):
        socket.send_multipart([b"CIPC01", b"REQUEST", f"f{tag}-{index}".encode(), b"Echo", b"handle", b"", BODY])
    result["send_seconds"] = time.monotonic() - start
    busy = final = other = 0
    limit = time.monotonic() + 60
    while busy + final + other < count and socket.poll(max(1, int((limit - time.monotonic()) * 1000))):
        frames = socket.recv_multipart()
        if frames[1] != b"REPLY" or frames[3] == b"progress":
            continue
        if frames[3] == b"final":
            final += 1
        elif b'"code":"busy"' in frames[5]:
            busy += 1
        else:
            other += 1
    result.update(final=final, busy=busy, other=other, unanswered=count - busy - final - other,
                  seconds=time.monotonic() - start)
    socket.close(0)
    context.term()
    results.put(result)
    done.set()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("frontend")
    parser.add_argument("out", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--flood", type=int, default=50_000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--name", default="fairness")
    args = parser.parse_args()
    context = zmq.Context()
    good_loop(context, args.frontend, 200, None)  # warm-up
    rounds = []
    for number in range(1, args.rounds + 1):
        alone = good_loop(context, args.frontend, args.requests, None)
        done = multiprocessing.Event()
        results: multiprocessing.Queue = multiprocessing.Queue()
        process = multiprocessing.Process(target=flood, args=(args.frontend, args.flood, done, results))
        process.start()
        # The well-behaved client runs while the flood sends and until the flood has every ending (at most 20 times
        # the requests of the round alone).
        flooded = good_loop(context, args.frontend, 20 * args.requests, done)
        flood_result = results.get(timeout=180)
        process.join(timeout=30)
        row = {
            "round": number,
            "alone_p50_ms": percentile(alone["latencies"], 0.5) * 1000,
            "alone_p99_ms": percentile(alone["latencies"], 0.99) * 1000,
            "flooded_p50_ms": percentile(flooded["latencies"], 0.5) * 1000,
            "flooded_p99_ms": percentile(flooded["latencies"], 0.99) * 1000,
            "alone_busy": alone["busy"],
            "flooded_busy": flooded["busy"],
            "flooded_requests": flooded["requests"],
            "flood": flood_result,
        }
        row["p99_ratio"] = row["flooded_p99_ms"] / row["alone_p99_ms"] if row["alone_p99_ms"] else 0.0
        rounds.append(row)
        print(
            f"fairness round {number}: well-behaved first-reply p99 alone {row['alone_p99_ms']:.2f} ms, "
            f"flooded {row['flooded_p99_ms']:.2f} ms (x{row['p99_ratio']:.1f}; p50 {row['alone_p50_ms']:.2f} -> "
            f"{row['flooded_p50_ms']:.2f} ms); well-behaved busy {alone['busy']} / {flooded['busy']}; flood of "
            f"{args.flood} sent in {flood_result.get('send_seconds', 0):.2f} s: {flood_result.get('final')} final, "
            f"{flood_result.get('busy')} busy, {flood_result.get('other')} other, "
            f"{flood_result.get('unanswered')} unanswered",
            flush=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(rounds, indent=1))
    context.term()


if __name__ == "__main__":
    main()
