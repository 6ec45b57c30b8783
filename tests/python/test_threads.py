# SPDX-License-Identifier: MIT
# Threads as a Python user meets them (issue 44, N4 and N5): one bound on every thread count,
# refused with the library's InputError (threads=70000 crashed in libgomp), and a forked
# child stepping after its parent stepped (it waited for ever in libgomp), directly and
# through multiprocessing's default fork start.
import multiprocessing as mp
import os
import time

import numpy as np
import pytest

import shoal


def test_thread_count_bound():
    rows = np.ones((3, 6), np.float32)
    with pytest.raises(shoal.InputError, match="70000"):
        shoal.render(rows, size=(32, 24), threads=70000)
    with pytest.raises(shoal.InputError, match="1024"):
        shoal.Simulation(count=10, threads=1025)
    with pytest.raises(shoal.InputError):
        shoal.stats(rows, threads=5000)
    s = shoal.Simulation(count=100, threads=1024)  # the bound itself is allowed
    s.close()


def _state_after(seed, steps=5, threads=2):
    s = shoal.Simulation(model="steer", count=2000, seed=seed, threads=threads)
    s.step(steps)
    return s.state


def _wait(pid, limit_s):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child did not finish within {limit_s} s (it hung)")


def test_fork_after_a_step(tmp_path):
    want = _state_after(2)  # the parent's team exists now
    out = tmp_path / "child.npy"
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            np.save(out, _state_after(2))
            code = 0
        finally:
            os._exit(code)
    assert _wait(pid, 60) == 0
    assert np.load(out).tobytes() == want.tobytes()
    # and the parent goes on
    assert _state_after(2).tobytes() == want.tobytes()


def _polarisation(seed):
    return _state_after(seed, steps=20).tobytes()


def test_multiprocessing_fork_pool():
    want = [_polarisation(seed) for seed in (1, 2, 3)]
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:
        got = pool.map_async(_polarisation, [1, 2, 3]).get(timeout=120)
    assert got == want
