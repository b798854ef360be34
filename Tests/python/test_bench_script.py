"""Scripts/bench with a given build (CONCIERGE_BENCH_BIN), and Scripts/bench-fair: each refuses a
`concierge-worker` beside it that is older than the `concierge` it is given, because the pools would run that older
worker as the build's workers."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _fake(path: Path, mtime: float) -> None:
    path.write_text("#!/bin/sh\necho fake concierge >&2\nexit 3\n")
    path.chmod(0o755)
    os.utime(path, (mtime, mtime))


def test_an_older_worker_beside_the_given_build_is_refused_before_anything_runs(tmp_path: Path) -> None:
    results = ROOT / "bench-results"
    before = set(results.iterdir()) if results.exists() else set()
    _fake(tmp_path / "concierge", 2_000_000_000)
    _fake(tmp_path / "concierge-worker", 2_000_000_000 - 60)
    outcome = subprocess.run(
        [str(ROOT / "Scripts" / "bench")],
        env={**os.environ, "CONCIERGE_BENCH_BIN": str(tmp_path / "concierge"), "QUICK": "1"},
        capture_output=True, text=True, timeout=120)
    assert outcome.returncode == 1, outcome.stderr
    assert f"{tmp_path}/concierge-worker is older than {tmp_path}/concierge" in outcome.stderr, outcome.stderr
    assert "fake concierge" not in outcome.stderr  # nothing of the build was run
    after = set(results.iterdir()) if results.exists() else set()
    assert after == before  # no results directory was started


def test_bench_fair_refuses_an_older_worker_beside_the_given_build(tmp_path: Path) -> None:
    """Scripts/bench-fair, run on its own, makes the same check: its pools would run the older worker too."""
    _fake(tmp_path / "concierge", 2_000_000_000)
    _fake(tmp_path / "concierge-worker", 2_000_000_000 - 60)
    outcome = subprocess.run([str(ROOT / "Scripts" / "bench-fair"), str(tmp_path / "concierge")],
                             capture_output=True, text=True, timeout=120)
    assert outcome.returncode == 1, outcome.stderr
    assert f"{tmp_path}/concierge-worker is older than {tmp_path}/concierge" in outcome.stderr, outcome.stderr
    assert "fake concierge" not in outcome.stderr  # nothing of the build was run
