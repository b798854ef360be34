"""Scripts/check-worker-age (run by Scripts/bench and Scripts/bench-fair): a `concierge-worker` beside `concierge` is
refused only when it is stale, built from older sources than `concierge` (an input of it changed after it was linked
and no later than `concierge` was), not because SwiftPM happened to link it a few seconds before `concierge`.
Fake packages in a temporary folder; no Swift build needed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "Scripts" / "check-worker-age"
T = 2_000_000_000  # when the fake concierge was linked (2033: later than every file of the checkout)


def _touch(path: Path, mtime: float, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))
    return path


def _binary(path: Path, mtime: float) -> Path:
    _touch(path, mtime, "#!/bin/sh\necho fake concierge >&2\nexit 3\n")
    path.chmod(0o755)
    os.utime(path, (mtime, mtime))
    return path


def _package(root: Path, sources_at: float = T - 3600) -> Path:
    """A package as SwiftPM leaves it: sources, and its release binaries in .build/release."""
    _touch(root / "Package.swift", sources_at, "// swift-tools-version:6.2\n")
    _touch(root / "Scripts" / "order-worker.ld", sources_at)
    _touch(root / "Sources" / "concierge-worker" / "ConciergeWorker.swift", sources_at)
    _touch(root / "Sources" / "IntentKit" / "Intent.swift", sources_at)
    _touch(root / "Sources" / "IntentBroker" / "Broker.swift", sources_at)
    return root / ".build" / "release"


def _record(bin_dir: Path, objects_at: float) -> list[Path]:
    """SwiftPM's record of what the worker links: its objects, listed in concierge-worker.product."""
    objects = [_touch(bin_dir / "concierge_worker.build" / "ConciergeWorker.swift.o", objects_at),
               _touch(bin_dir / "IntentKit.build" / "Intent.swift.o", objects_at)]
    _touch(bin_dir / "concierge-worker.product" / "Objects.LinkFileList", objects_at,
           "".join(f"{o}\n" for o in objects))
    return objects


def _check(concierge: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CHECK), str(concierge)], capture_output=True, text=True, timeout=60)


def test_a_worker_linked_seconds_before_concierge_in_the_same_build_is_accepted(tmp_path: Path) -> None:
    """The issue: SwiftPM links the two executables in either order. Both newer than every source: one build."""
    bin_dir = _package(tmp_path / "pkg")
    concierge = _binary(bin_dir / "concierge", T)
    _binary(bin_dir / "concierge-worker", T - 4)
    outcome = _check(concierge)
    assert outcome.returncode == 0, outcome.stderr
    assert outcome.stderr == ""
    # The same with the build's record beside it (objects compiled before both links).
    _record(bin_dir, T - 30)
    outcome = _check(concierge)
    assert outcome.returncode == 0, outcome.stderr


def test_a_worker_older_than_a_source_it_is_built_from_is_refused(tmp_path: Path) -> None:
    """A source of the worker changed after it was linked, then only concierge was rebuilt: a stale worker."""
    bin_dir = _package(tmp_path / "pkg")
    concierge = _binary(bin_dir / "concierge", T)
    worker = _binary(bin_dir / "concierge-worker", T - 60)
    source = _touch(tmp_path / "pkg" / "Sources" / "IntentKit" / "Intent.swift", T - 30)
    outcome = _check(concierge)
    assert outcome.returncode == 1, outcome.stderr
    assert f"{worker} is stale: {source}, which it is built from, changed after it was linked and before " \
           f"{concierge} was" in outcome.stderr, outcome.stderr
    assert "Scripts/build-release --product concierge-worker" in outcome.stderr
    assert "or remove it" in outcome.stderr
    # Package.swift counts too (a changed manifest can change what the worker is linked from).
    os.utime(source, (T - 3600, T - 3600))
    assert _check(concierge).returncode == 0
    _touch(tmp_path / "pkg" / "Package.swift", T - 30)
    outcome = _check(concierge)
    assert outcome.returncode == 1 and "Package.swift" in outcome.stderr, outcome.stderr


def test_with_the_build_record_an_object_relinked_into_concierge_only_is_refused(tmp_path: Path) -> None:
    """`swift build --product concierge` after a change recompiles the shared objects and relinks concierge only."""
    bin_dir = _package(tmp_path / "pkg")
    concierge = _binary(bin_dir / "concierge", T)
    worker = _binary(bin_dir / "concierge-worker", T - 60)
    objects = _record(bin_dir, T - 90)
    assert _check(concierge).returncode == 0
    os.utime(objects[1], (T - 10, T - 10))
    outcome = _check(concierge)
    assert outcome.returncode == 1, outcome.stderr
    assert f"{worker} is stale: {objects[1]}," in outcome.stderr, outcome.stderr


def test_with_the_build_record_a_change_to_a_module_the_worker_does_not_link_is_accepted(tmp_path: Path) -> None:
    """SwiftPM leaves a worker whose inputs did not change with its old time: that worker is current."""
    bin_dir = _package(tmp_path / "pkg")
    concierge = _binary(bin_dir / "concierge", T)
    _binary(bin_dir / "concierge-worker", T - 600)
    _record(bin_dir, T - 900)
    _touch(tmp_path / "pkg" / "Sources" / "IntentBroker" / "Broker.swift", T - 60)
    outcome = _check(concierge)
    assert outcome.returncode == 0, outcome.stderr
    # Without the record every module counts (the check cannot tell which ones the worker links).
    (bin_dir / "concierge-worker.product" / "Objects.LinkFileList").unlink()
    assert _check(concierge).returncode == 1


def test_sources_newer_than_both_binaries_leave_them_one_build(tmp_path: Path) -> None:
    """An older build of both than the working tree: still the same sources for the two, nothing to refuse."""
    bin_dir = _package(tmp_path / "pkg")
    concierge = _binary(bin_dir / "concierge", T)
    _binary(bin_dir / "concierge-worker", T - 60)
    _touch(tmp_path / "pkg" / "Sources" / "concierge-worker" / "ConciergeWorker.swift", T + 60)
    assert _check(concierge).returncode == 0


def test_editor_swap_files_are_not_sources(tmp_path: Path) -> None:
    bin_dir = _package(tmp_path / "pkg")
    concierge = _binary(bin_dir / "concierge", T)
    _binary(bin_dir / "concierge-worker", T - 60)
    _touch(tmp_path / "pkg" / "Sources" / "IntentKit" / ".Intent.swift.swp", T - 30)
    _touch(tmp_path / "pkg" / "Sources" / "IntentKit" / "Intent.swift~", T - 30)
    assert _check(concierge).returncode == 0


def test_copies_outside_a_package_in_either_order_are_accepted(tmp_path: Path) -> None:
    """`cp concierge concierge-worker /work/p7/`: a copy outside any package is taken to be of this checkout."""
    concierge = _binary(tmp_path / "concierge", T)
    _binary(tmp_path / "concierge-worker", T - 0.005)
    outcome = _check(concierge)
    assert outcome.returncode == 0, outcome.stderr


def test_no_worker_beside_concierge_is_fine(tmp_path: Path) -> None:
    assert _check(_binary(tmp_path / "concierge", T)).returncode == 0
