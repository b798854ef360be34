"""The Python client library as a package: `pip install --no-build-isolation` of Clients/python into a fresh
`--target` folder works, leaves the source tree as it was (no `build/`, no `*.egg-info`), the installed copy imports
from there (with its py.typed marker), and `mypy --strict` passes on the package and on a program that uses its
API."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "Clients" / "python"


def run(args: list[str], **kw) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(args, capture_output=True, text=True, timeout=240, **kw)
    assert out.returncode == 0, f"{' '.join(args)}\n{out.stdout}\n{out.stderr}"
    return out


def test_pip_install_into_a_fresh_target_and_import_from_there(tmp_path):
    # A copy: building writes build/ and *.egg-info next to the sources, which a parallel run must not share.
    source = tmp_path / "source"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = tmp_path / "target"
    run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--target", str(target),
         str(source)])
    installed = target / "concierge_client"
    assert (installed / "py.typed").is_file() and (installed / "client.py").is_file()
    probe = textwrap.dedent("""
        import concierge_client, sys
        from concierge_client import Client, AsyncClient, RetryPolicy, ClientError, TraceContext, errors
        print(concierge_client.__file__)
        assert RetryPolicy().base_backoff(1) == 0.1 and RetryPolicy().base_backoff(9) == 2.0
        assert errors.BROKER_RESTARTED == "broker-restarted"
        assert TraceContext("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").sampled
    """)
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = run([sys.executable, "-c", probe], cwd=tmp_path, env=env)
    assert out.stdout.strip().startswith(str(target)), out.stdout
    # The installed package is typed for its users: mypy --strict on a program that uses it.
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent("""
        from concierge_client import Client, Reply, RetryPolicy

        def publish(client: Client) -> str:
            reply: Reply = client.request({"type": "Echo", "parameters": {"text": "hi"}}, "handle",
                                          retry=RetryPolicy(max_attempts=2))
            return reply.status
    """))
    run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(program)], cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(target)})


def _tree(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


def test_pip_install_leaves_the_source_tree_clean(tmp_path):
    """Issue 45: installing from a clone (Scripts/setup, the README) left build/ and src/*.egg-info in it. The build's
    scratch files go to a temporary folder (Clients/python/setup.py), removed when the build ends."""
    source = tmp_path / "source"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    before = _tree(source)
    scratch = tmp_path / "tmp"  # the build's TMPDIR: what is left there after the install
    scratch.mkdir()
    run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--target",
         str(tmp_path / "target"), str(source)], env={**os.environ, "TMPDIR": str(scratch)})
    assert (tmp_path / "target" / "concierge_client" / "py.typed").is_file()
    assert not (source / "build").exists()
    assert not list(source.rglob("*.egg-info")), list(source.rglob("*.egg-info"))
    assert _tree(source) == before, sorted(_tree(source) ^ before)
    assert not list(scratch.glob("concierge-client-build-*")), list(scratch.iterdir())


def test_mypy_strict_on_the_package():
    run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
         str(PACKAGE / "src" / "concierge_client")])
