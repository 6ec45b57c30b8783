# SPDX-License-Identifier: MIT
# pytest set-up for the Python package's tests (meson test test_python, tools/test.sh): the
# `cuda` marker, and the shoal program the tests compare against (SHOAL_EXE).
import os
import subprocess

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs an NVIDIA GPU (skipped without one)")


@pytest.fixture(scope="session")
def cli():
    exe = os.environ.get("SHOAL_EXE")
    if not exe or not os.access(exe, os.X_OK):
        pytest.skip("SHOAL_EXE (the shoal program) not given")

    def run(*args, check=True):
        r = subprocess.run([exe, *map(str, args)], capture_output=True, text=True)
        if check and r.returncode != 0:
            raise AssertionError(f"shoal {' '.join(map(str, args))}: exit {r.returncode}: {r.stderr}")
        return r

    return run
