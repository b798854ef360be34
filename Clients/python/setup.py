"""Build settings only (the project's metadata is in pyproject.toml): setuptools' scratch files go to a temporary
folder outside the source tree, removed when the build ends, so that `pip install ./Clients/python` leaves no `build/`
and no `src/*.egg-info` behind in the clone (and two builds of one clone share nothing)."""

import atexit
import shutil
import tempfile

from setuptools import setup

scratch = tempfile.mkdtemp(prefix="concierge-client-build-")
atexit.register(shutil.rmtree, scratch, ignore_errors=True)

setup(options={
    "build": {"build_base": f"{scratch}/build"},  # build/lib and build/bdist.<platform> (the wheel's staging)
    "egg_info": {"egg_base": scratch},  # <name>.egg-info, otherwise written next to the package in src/
})
