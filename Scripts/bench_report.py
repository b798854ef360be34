#!/usr/bin/env python3
"""Prints the benchmark table (with ratios) from one run's results folder, written by Scripts/bench."""
import json
import os
import re
import sys

out, sizes = sys.argv[1], sys.argv[2].split()


def result_line(name):
    """Parses a `RESULT key=value ...` line (zbench, zmq-roundtrip)."""
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return None
    for line in open(path):
        if line.startswith("RESULT"):
            fields = dict(part.split("=", 1) for part in line.split()[1:] if "=" in part)
            return {"rps": float(fields["rps"]), "p50": float(fields["p50_us"]), "p99": float(fields["p99_us"])}
    return None


def load(name):
    path = os.path.join(out, name + ".json")
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


def figures(summary):
    if summary is None:
        return None
    final = summary["final_reply_us"]
    return {"rps": summary["throughput_rps"], "p50": final["p50"], "p99": final["p99"]}


meta = dict(line.rstrip("\n").split(": ", 1) for line in open(os.path.join(out, "meta.txt")) if ": " in line)
c_thr, c_lat = result_line("c_broker_100.txt"), result_line("c_broker_lat.txt")
client_alone = figures(load("client_alone"))
rows = [
    ("load client alone (CIP sink, no broker), 100 in flight", client_alone, None),
    ("raw libzmq, 1 in flight", result_line("raw_lat.txt"), None),
    ("raw libzmq, 100 in flight", result_line("raw_100.txt"), None),
    ("C broker (credit 10), 1 in flight", c_lat, None),
    ("C broker (credit 10), 100 in flight", c_thr, None),
    ("Concierge echo, 1 in flight", figures(load("echo_lat")), c_lat),
    ("Concierge echo, 100 in flight", figures(load("echo_100")), c_thr),
    ("Concierge lifecycle SendPayment, 100 in flight", figures(load("lifecycle_100")), c_thr),
]


def fmt(value, unit=""):
    return "-" if value is None else (f"{value:,.0f}{unit}" if value >= 100 else f"{value:.1f}{unit}")


print(f"Concierge benchmarks — {meta.get('date')} — {meta.get('machine')} — {meta.get('swift')} — libzmq {meta.get('libzmq')}")
print()
print("| measurement (~300-byte requests, loopback) | req/s | p50 µs | p99 µs | req/s vs C broker | p50 vs C broker |")
print("|---|---:|---:|---:|---:|---:|")
for label, value, reference in rows:
    if value is None:
        print(f"| {label} | - | - | - | | |")
        continue
    ratio = f"{value['rps'] / reference['rps']:.2f}×" if reference else ""
    p50ratio = f"{value['p50'] / reference['p50']:.2f}×" if reference else ""
    print(f"| {label} | {fmt(value['rps'])} | {fmt(value['p50'])} | {fmt(value['p99'])} | {ratio} | {p50ratio} |")

print()
print("| workers (capacity 1 each) | 50 ms wait: req/s | vs 1 worker | 1 ms CPU: req/s | vs 1 worker |")
print("|---:|---:|---:|---:|---:|")
base_wait = base_cpu = None
for size in sizes:
    wait, cpu = load(f"scale_wait_{size}"), load(f"scale_cpu_{size}")
    w = wait["throughput_rps"] if wait else None
    c = cpu["throughput_rps"] if cpu else None
    base_wait = base_wait or w
    base_cpu = base_cpu or c
    wr = f"{w / base_wait:.1f}×" if w and base_wait else "-"
    cr = f"{c / base_cpu:.1f}×" if c and base_cpu else "-"
    print(f"| {size} | {fmt(w)} | {wr} | {fmt(c)} | {cr} |")

overload = load("overload")
print()
if overload:
    first = overload["first_reply_us"]
    print(
        f"Overload: offered {fmt(overload.get('offered_rps'))} req/s (target {meta.get('overload_rate')}) for "
        f"{overload.get('duration_s')} s with a 1 s deadline: {fmt(overload['answered_rps'])} answered/s (final {fmt(overload['throughput_rps'])}); "
        f"first reply p99 {fmt(first['p99'])} µs, max {fmt(first['max'])} µs; deadline misses "
        f"{overload['deadline_misses']}; unanswered {overload.get('unanswered')}; outcomes {json.dumps(overload['outcomes'])}; "
        f"broker RSS peak {int(meta.get('overload_broker_peak_rss_kb', 0)) / 1024:.1f} MiB "
        f"(samples, MiB: {' '.join(f'{int(s) / 1024:.0f}' for s in open(os.path.join(out, 'overload_broker_rss_kb.txt')).read().split())}; "
        f"3 s after the load {int(meta.get('overload_broker_after_rss_kb', 0)) / 1024:.1f} MiB)"
    )
print(
    f"Memory: broker idle {int(meta.get('idle_broker_rss_kb', 0)) / 1024:.1f} MiB; broker with 10,000 requests in "
    f"flight {int(meta.get('inflight_10k_broker_rss_kb', 0)) / 1024:.1f} MiB; idle worker "
    f"{int(meta.get('idle_worker_rss_kb', 0)) / 1024:.1f} MiB"
)
stored_path = os.path.join(out, "stored_results.txt")
if os.path.exists(stored_path):
    for line in open(stored_path).read().splitlines():
        print(f"Stored results: {line.split(': ', 1)[-1]}")

plain_rounds = [figures(load(f"echo_plain_r{r}")) for r in (1, 2, 3)]
key_rounds = [figures(load(f"echo_keys_r{r}")) for r in (1, 2, 3)]
if all(plain_rounds) and all(key_rounds):
    print()
    print("Idempotency keys (a fresh key on every echo request, `concierge load --idempotency`), rounds alternating with")
    print("plain echo on the same broker and workers, 100 in flight:")
    print()
    print("| round | plain req/s | keyed req/s | keyed / plain | plain p50 µs | keyed p50 µs |")
    print("|---:|---:|---:|---:|---:|---:|")
    for index, (plain, keyed) in enumerate(zip(plain_rounds, key_rounds), start=1):
        print(
            f"| {index} | {fmt(plain['rps'])} | {fmt(keyed['rps'])} | {keyed['rps'] / plain['rps']:.2f}× | "
            f"{fmt(plain['p50'])} | {fmt(keyed['p50'])} |"
        )
    total_plain = sum(r["rps"] for r in plain_rounds)
    total_keyed = sum(r["rps"] for r in key_rounds)
    print(f"| all | {fmt(total_plain / 3)} | {fmt(total_keyed / 3)} | {total_keyed / total_plain:.2f}× | | |")

def journal_figures(mode, round_):
    """A journal round's load figures, the broker's CPU per request and its commit latency (from its log)."""
    summary = load(f"journal_{mode}_r{round_}")
    found = figures(summary)
    if not found:
        return None
    base = os.path.join(out, f"journal_{mode}_r{round_}")
    try:
        cpu = int(open(base + ".broker_cpu_us").read().strip())
        seconds = float(summary.get("duration_s", 0)) + float(summary.get("warmup_s", 0))
        found["cpu_per_request"] = cpu / max(1.0, found["rps"] * seconds)
    except (OSError, ValueError):
        found["cpu_per_request"] = None
    try:
        log = open(base + ".broker.log").read()
        found["commit"] = {key: int(value) for key, value in re.findall(r"commit-us-(p50|p99|max)=(\d+)", log)}
        commits = re.findall(r"commits=(\d+)", log)
        found["commits"] = int(commits[-1]) if commits else None
    except OSError:
        found["commit"] = {}
        found["commits"] = None
    return found


journal_modes = ("memory", "sqlite", "postgres")
journal_rounds = {mode: [journal_figures(mode, r) for r in (1, 2, 3)] for mode in journal_modes}
if all(all(rounds) for rounds in journal_rounds.values()):
    print()
    print("The journal's cost (`--journal`, fsync per batch), echo, 100 in flight, rounds alternating in one sitting:")
    print()
    print("| round | mode | req/s | / memory | p50 µs | p99 µs | broker CPU µs/req | commits | commit p50 / p99 / max µs |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for index in range(3):
        memory = journal_rounds["memory"][index]
        for mode in journal_modes:
            row = journal_rounds[mode][index]
            commit = row["commit"]
            latency = (
                f"{fmt(commit['p50'])} / {fmt(commit['p99'])} / {fmt(commit['max'])}" if len(commit) == 3 else ""
            )
            print(
                f"| {index + 1} | {mode} | {fmt(row['rps'])} | {row['rps'] / memory['rps']:.2f}× | {fmt(row['p50'])} | "
                f"{fmt(row['p99'])} | {fmt(row['cpu_per_request'])} | {fmt(row['commits']) if row['commits'] else ''} | "
                f"{latency} |"
            )
    memory_total = sum(r["rps"] for r in journal_rounds["memory"])
    for mode in ("sqlite", "postgres"):
        total = sum(r["rps"] for r in journal_rounds[mode])
        print(f"| all | {mode} | {fmt(total / 3)} | {total / memory_total:.2f}× | | | | | |")

echo = figures(load("echo_100"))
echo_lat = figures(load("echo_lat"))
print()
print("Targets (same sitting):")
if echo and c_thr:
    ratio = echo["rps"] / c_thr["rps"]
    print(f"- echo throughput >= 50% of the C broker: {ratio:.0%} -> {'PASS' if ratio >= 0.5 else 'FAIL'}")
if echo_lat and c_lat:
    ratio = echo_lat["p50"] / c_lat["p50"]
    print(f"- one-at-a-time p50 within 1.5x of the C broker: {ratio:.2f}x -> {'PASS' if ratio <= 1.5 else 'FAIL'}")
if overload:
    misses = overload["deadline_misses"]
    print(f"- zero deadline misses under 2x overload: {misses} -> {'PASS' if misses == 0 else 'FAIL'}")
    peak = int(meta.get("overload_broker_peak_rss_kb", 0)) / 1024
    print(f"- broker RSS <= 128 MiB at 2x overload: {peak:.1f} MiB -> {'PASS' if 0 < peak <= 128 else 'FAIL'}")
idle = int(meta.get("idle_worker_rss_kb", 0)) / 1024
if idle > 0:
    print(f"- idle worker under 15 MB resident: {idle:.1f} MiB -> {'PASS' if 0 < idle < 15 else 'FAIL'}")
if all(all(rounds) for rounds in journal_rounds.values()):
    ratio = sum(r["rps"] for r in journal_rounds["sqlite"]) / sum(r["rps"] for r in journal_rounds["memory"])
    print(f"- echo with the SQLite journal >= 0.5x memory-only: {ratio:.2f}x -> {'PASS' if ratio >= 0.5 else 'FAIL'}")
