"""Scripts/bench with a given build (CONCIERGE_BENCH_BIN), and Scripts/bench-fair: each refuses a stale
`concierge-worker` beside the `concierge` it is given (built from older sources than it: Scripts/check-worker-age,
tested on its own in test_check_worker_age.py), because the pools would run that older worker as the build's
workers."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _fake(path: Path, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho fake concierge >&2\nexit 3\n")
    path.chmod(0o755)
    os.utime(path, (mtime, mtime))


def _stale_build(tmp_path: Path) -> Path:
    """A package whose worker source changed after the worker was linked and before concierge was: the bin folder."""
    package = tmp_path / "pkg"
    bin_dir = package / ".build" / "release"
    _fake(bin_dir / "concierge", 2_000_000_000)
    _fake(bin_dir / "concierge-worker", 2_000_000_000 - 60)
    for path, mtime in [(package / "Package.swift", 2_000_000_000 - 3600),
                        (package / "Sources" / "concierge-worker" / "ConciergeWorker.swift", 2_000_000_000 - 30)]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        os.utime(path, (mtime, mtime))
    return bin_dir


def test_a_stale_worker_beside_the_given_build_is_refused_before_anything_runs(tmp_path: Path) -> None:
    results = ROOT / "bench-results"
    before = set(results.iterdir()) if results.exists() else set()
    bin_dir = _stale_build(tmp_path)
    outcome = subprocess.run(
        [str(ROOT / "Scripts" / "bench")],
        env={**os.environ, "CONCIERGE_BENCH_BIN": str(bin_dir / "concierge"), "QUICK": "1"},
        capture_output=True, text=True, timeout=120)
    assert outcome.returncode == 1, outcome.stderr
    assert f"{bin_dir}/concierge-worker is stale:" in outcome.stderr, outcome.stderr
    assert "fake concierge" not in outcome.stderr  # nothing of the build was run
    after = set(results.iterdir()) if results.exists() else set()
    assert after == before  # no results directory was started


def test_bench_fair_refuses_a_stale_worker_beside_the_given_build(tmp_path: Path) -> None:
    """Scripts/bench-fair, run on its own, makes the same check: its pools would run the older worker too."""
    bin_dir = _stale_build(tmp_path)
    outcome = subprocess.run([str(ROOT / "Scripts" / "bench-fair"), str(bin_dir / "concierge")],
                             capture_output=True, text=True, timeout=120)
    assert outcome.returncode == 1, outcome.stderr
    assert f"{bin_dir}/concierge-worker is stale:" in outcome.stderr, outcome.stderr
    assert "fake concierge" not in outcome.stderr  # nothing of the build was run
