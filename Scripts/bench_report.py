#!/usr/bin/env python3
"""Prints the benchmark table (with ratios) from one run's results folder, written by Scripts/bench."""
import json
import os
import re
import statistics
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


def cpu_per_request(name, requests):
    """µs of CPU per request of the broker, the workers together and the load client (from NAME.cpu)."""
    path = os.path.join(out, name)
    if not os.path.exists(path) or not requests:
        return None
    parts = open(path).read().split()
    return {parts[k]: int(parts[k + 1]) / requests for k in range(0, len(parts) - 1, 2)}


# Echo and the lifecycle at 100 in flight ran in rounds alternating with the C broker's echo (Scripts/bench); each
# target takes the median of the rounds' ratios, and the tables quote the round of the median rate.
rounds, round_secs = int(meta.get("rounds", 1)), float(meta.get("round_secs", meta.get("secs", 10)))
per_round = []
for r in range(1, rounds + 1):
    c, echo_summary = result_line(f"c_broker_100_r{r}.txt"), load(f"echo_100_r{r}")
    per_round.append({
        "c": c, "echo": figures(echo_summary), "lifecycle": figures(load(f"lifecycle_100_r{r}")),
        "c_cpu": cpu_per_request(f"c_broker_100_r{r}.cpu", c["rps"] * round_secs if c else 0),
        # The echo run's CPU includes its 1 s warm-up, at about the same rate.
        "cpu": cpu_per_request(
            f"echo_100_r{r}.cpu", echo_summary["throughput_rps"] * (echo_summary["duration_s"] + 1) if echo_summary else 0),
    })


def median(values):
    values = sorted(v for v in values if v is not None)
    return statistics.median(values) if values else None


def median_round(key):
    """The figures of the round whose `key` rate is the median (the lower middle one of an even count)."""
    runs = sorted((r[key] for r in per_round if r[key]), key=lambda f: f["rps"])
    return runs[(len(runs) - 1) // 2] if runs else None


def ratio(a, b):
    return a / b if a is not None and b else None


c_thr, c_lat = median_round("c"), result_line("c_broker_lat.txt")
echo_ratio = median(ratio(r["echo"]["rps"], r["c"]["rps"]) for r in per_round if r["echo"] and r["c"])
lifecycle_ratio = median(ratio(r["lifecycle"]["rps"], r["c"]["rps"]) for r in per_round if r["lifecycle"] and r["c"])
client_alone = figures(load("client_alone"))
rows = [
    ("load client alone (CIP sink, no broker), 100 in flight", client_alone, None),
    ("raw libzmq, 1 in flight", result_line("raw_lat.txt"), None),
    ("raw libzmq, 100 in flight", result_line("raw_100.txt"), None),
    ("C broker (credit 10), 1 in flight", c_lat, None),
    ("C broker (credit 10), 100 in flight", c_thr, None),
    ("Concierge echo, 1 in flight", figures(load("echo_lat")), c_lat),
    ("Concierge echo, 100 in flight", median_round("echo"), c_thr, echo_ratio),
    ("Concierge lifecycle SendPayment, 100 in flight", median_round("lifecycle"), c_thr, lifecycle_ratio),
    ("  the same, `--chain-lifecycle off` (a job per phase)", figures(load("lifecycle_chain_off_100")), c_thr),
    ("  the same, `--chain-lifecycle handle` (one job)", figures(load("lifecycle_chain_handle_100")), c_thr),
]


def fmt(value, unit=""):
    return "-" if value is None else (f"{value:,.0f}{unit}" if value >= 100 else f"{value:.1f}{unit}")


print(f"Concierge benchmarks — {meta.get('date')} — {meta.get('machine')} — {meta.get('swift')} — libzmq {meta.get('libzmq')}")
print()
print("| measurement (~300-byte requests, loopback) | req/s | p50 µs | p99 µs | req/s vs C broker | p50 vs C broker |")
print("|---|---:|---:|---:|---:|---:|")
for label, value, reference, *given in rows:
    if value is None:
        print(f"| {label} | - | - | - | | |")
        continue
    rps_ratio = given[0] if given and given[0] is not None else ratio(value["rps"], reference["rps"]) if reference else None
    p50ratio = f"{value['p50'] / reference['p50']:.2f}×" if reference else ""
    print(f"| {label} | {fmt(value['rps'])} | {fmt(value['p50'])} | {fmt(value['p99'])} | "
          f"{'' if rps_ratio is None else f'{rps_ratio:.2f}×'} | {p50ratio} |")
if rounds > 1:
    print()
    print(f"(Echo and lifecycle at 100 in flight: the round of the median rate of {rounds} rounds of {round_secs:.0f} s "
          "alternating with the C broker's; their ratios are the medians of the rounds' ratios.)")

parts = ("broker", "workers", "client")
cpu_ratio = {part: median(ratio(r["cpu"][part], r["c_cpu"][part]) for r in per_round if r["cpu"] and r["c_cpu"])
             for part in parts}
if any(r["cpu"] and r["c_cpu"] for r in per_round):
    print()
    print("| round | C broker req/s | echo req/s | echo / C | lifecycle req/s | lifecycle / C | CPU µs per echo request, "
          "C / Concierge: broker | workers (both) | client |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for number, r in enumerate(per_round, 1):
        cpu = " | ".join(f"{fmt(r['c_cpu'][part])} / {fmt(r['cpu'][part])}" if r["cpu"] and r["c_cpu"] else "-"
                         for part in parts)
        echo_c = ratio(r["echo"]["rps"], r["c"]["rps"]) if r["echo"] and r["c"] else None
        life_c = ratio(r["lifecycle"]["rps"], r["c"]["rps"]) if r["lifecycle"] and r["c"] else None
        print(f"| {number} | {fmt(r['c']['rps']) if r['c'] else '-'} | {fmt(r['echo']['rps']) if r['echo'] else '-'} | "
              f"{'-' if echo_c is None else f'{echo_c:.2f}×'} | {fmt(r['lifecycle']['rps']) if r['lifecycle'] else '-'} | "
              f"{'-' if life_c is None else f'{life_c:.2f}×'} | {cpu} |")
    print("| median | | | " + (f"{echo_ratio:.2f}×" if echo_ratio else "-") + " | | "
          + (f"{lifecycle_ratio:.2f}×" if lifecycle_ratio else "-") + " | "
          + " | ".join(f"{cpu_ratio[part]:.2f}×" if cpu_ratio[part] else "-" for part in parts) + " |")
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
capacity = median(r["echo"]["rps"] for r in per_round if r["echo"])
capacity8_runs = [load(f"echo_100_c8_r{r}") for r in range(1, 4)]
capacity8 = median(run["throughput_rps"] for run in capacity8_runs if run) if any(capacity8_runs) else None
OVERLOAD_ROWS = (("overload", "default: the client heeds the broker's pushback"),
                 ("overload_capped", "`--standing-queue-wait-ms 20`"),
                 ("overload_unheeded", "client `--ignore-pushback` (the broker's own shedding)"),
                 ("overload_throttled", "client `--ignore-pushback --client-throttle 1.1`"))


def rss_pair(name):
    path = os.path.join(out, f"{name}_broker_rss.txt")
    if not os.path.exists(path):
        return None, None
    parts = open(path).read().split()
    return int(parts[1]) / 1024, int(parts[3]) / 1024


print()
if overload and capacity:
    print(f"Overload: open loop over 8 connections at 2× the echo capacity measured above over one connection "
          f"({fmt(capacity)} req/s), 1 s deadline, {overload.get('duration_s', 0):.0f} s; goodput is final replies "
          f"per second. Capacity over the overload's 8 connections (closed loop, 100 in flight, median of the rounds): "
          f"{fmt(capacity8)} req/s.")
    print()
    print("| settings | offered req/s | goodput req/s | goodput / capacity (1 connection) | goodput / capacity "
          "(8 connections) | busy | throttled (unsent) | progress | "
          "deadline misses | first reply p50 / p99 µs | broker RSS peak / 3 s after, MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, label in OVERLOAD_ROWS:
        run = load(name)
        if run is None:
            continue
        peak, after = rss_pair(name)
        first = run["first_reply_us"]
        ratio8 = f"{run['throughput_rps'] / capacity8:.2f}×" if capacity8 else "-"
        print(f"| {label} | {fmt(run['offered_rps'])} | {fmt(run['throughput_rps'])} | "
              f"{run['throughput_rps'] / capacity:.2f}× | {ratio8} | {run['outcomes'].get('error.busy', 0):,} | "
              f"{run['outcomes'].get('throttled', 0):,} | "
              f"{run['outcomes'].get('progress', 0):,} | {run['deadline_misses']} | "
              f"{fmt(first['p50'])} / {fmt(first['p99'])} | "
              f"{'-' if peak is None else f'{peak:.0f} / {after:.0f}'} |")
    print()
print(
    f"Memory: broker idle {int(meta.get('idle_broker_rss_kb', 0)) / 1024:.1f} MiB; broker with 10,000 requests in "
    f"flight {int(meta.get('inflight_10k_broker_rss_kb', 0)) / 1024:.1f} MiB; idle worker "
    f"{int(meta.get('idle_worker_rss_kb', 0)) / 1024:.1f} MiB resident, of which its own (USS) "
    f"{int(meta.get('idle_worker_uss_kb', 0)) / 1024:.1f} MiB; PSS with 2 workers "
    f"{int(meta.get('idle_worker_pss_kb', 0)) / 1024:.1f} MiB (the rest: the binary's and libraries' pages, shared)"
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

echo_lat = figures(load("echo_lat"))
print()
print("Targets (issue 14, same sitting; rates at 100 in flight: the medians of the rounds' ratios):")
if echo_ratio is not None:
    print(f"- echo throughput >= 0.7x the C broker: {echo_ratio:.3f}x -> {'PASS' if echo_ratio >= 0.7 else 'FAIL'}")
for part, goal in (("broker", 1.25), ("workers", 2.0)):
    if cpu_ratio.get(part) is not None:
        value = cpu_ratio[part]
        print(f"- {part} CPU per request <= {goal}x the C reference's: {value:.3f}x -> {'PASS' if value <= goal else 'FAIL'}")
if echo_lat and c_lat:
    value = echo_lat["p50"] / c_lat["p50"]
    print(f"- one-at-a-time p50 <= 1.3x the C broker's: {value:.3f}x -> {'PASS' if value <= 1.3 else 'FAIL'}")
if lifecycle_ratio is not None:
    print(f"- lifecycle >= 0.25x the C broker's echo: {lifecycle_ratio:.3f}x -> "
          f"{'PASS' if lifecycle_ratio >= 0.25 else 'FAIL'}")
    whole = figures(load("lifecycle_chain_handle_100"))
    if whole and c_thr:
        value = whole["rps"] / c_thr["rps"]
        print(f"- lifecycle with --chain-lifecycle handle >= 0.25x the C broker's echo (median round): {value:.3f}x -> "
              f"{'PASS' if value >= 0.25 else 'FAIL'}")
if overload and capacity:
    for name, label in OVERLOAD_ROWS:
        run = load(name)
        if run is None:
            continue
        ratio, misses = run["throughput_rps"] / capacity, run["deadline_misses"]
        ratio8 = f", {run['throughput_rps'] / capacity8:.3f}x of the capacity over 8 connections" if capacity8 else ""
        print(f"- goodput at 2x overload >= 0.9x capacity with 0 misses ({label.replace('`', '')}): {ratio:.3f}x"
              f"{ratio8}, {misses} misses -> {'PASS' if ratio >= 0.9 and misses == 0 else 'FAIL'}")
    peak = int(meta.get("overload_broker_peak_rss_kb", 0)) / 1024
    print(f"- broker RSS <= 128 MiB at 2x overload, default settings: {peak:.1f} MiB -> "
          f"{'PASS' if 0 < peak <= 128 else 'FAIL'}")
idle = int(meta.get("idle_worker_rss_kb", 0)) / 1024
if idle > 0:
    uss = int(meta.get("idle_worker_uss_kb", 0)) / 1024
    print(f"- idle worker <= 12 MiB: resident {idle:.1f} MiB -> {'PASS' if idle <= 12 else 'FAIL'}; "
          f"its own memory (USS) {uss:.1f} MiB -> {'PASS' if 0 < uss <= 12 else 'FAIL'}")
if all(all(rounds) for rounds in journal_rounds.values()):
    ratio = sum(r["rps"] for r in journal_rounds["sqlite"]) / sum(r["rps"] for r in journal_rounds["memory"])
    print(f"- echo with the SQLite journal >= 0.5x memory-only: {ratio:.3f}x -> {'PASS' if ratio >= 0.5 else 'FAIL'}")
for name, label in (("fairness", "default"), ("fairness_uncapped", "--standing-queue-wait-ms 0")):
    fairness_path = os.path.join(out, f"{name}.json")
    if not os.path.exists(fairness_path):
        continue
    rounds = json.load(open(fairness_path))
    worst = max(r["p99_ratio"] for r in rounds)
    print(f"- a flood of 50,000 raises another client's p99 <= 3x ({label}): worst round {worst:.1f}x -> "
          f"{'PASS' if worst <= 3 else 'FAIL'}; the well-behaved client got busy "
          f"{sum(r['flooded_busy'] for r in rounds)} times, the flood {sum(r['flood'].get('busy', 0) for r in rounds)}")
