# SPDX-License-Identifier: MIT
# The Python objects under threads, re-entrant callbacks and Ctrl-C (issue 44, the trial of
# 2026-11-27: N1, N2, N3, N6, N9, N23). A Simulation or Renderer used by two calls at once
# refuses the second with RuntimeError, never tears or crashes; a failed or skipped __init__
# leaves an object that says so; Ctrl-C stops a step, a verify or a sweep member within a
# fraction of a second. Cases that crashed the interpreter before the fix run in a child
# interpreter, so that a crash fails the test instead of the session.
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import shoal


def child(code, timeout=300):
    """Run `code` in a fresh interpreter with this package; (returncode, stdout, stderr)."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=timeout, env=dict(os.environ))
    return r.returncode, r.stdout, r.stderr


def race(n_iter, a, b):
    """Run a() and b() n_iter times, lined up by a Barrier; returns the outcomes of each."""
    bar = threading.Barrier(2)
    out = {"a": [], "b": []}

    def loop(key, fn):
        for _ in range(n_iter):
            bar.wait()
            try:
                out[key].append(fn())
            except RuntimeError as e:
                assert "busy" in str(e), e
                out[key].append("busy")

    ts = [threading.Thread(target=loop, args=("a", a)), threading.Thread(target=loop, args=("b", b))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out["a"], out["b"]


def test_renderer_two_threads_refused_never_torn():
    """N1: one Renderer, two threads drawing at once: the second is refused, no wrong image
    (the trial: segfaults at 200 000 fish, wrong images at 20 000)."""
    rc, out, err = child("""
        import threading, numpy as np, shoal
        st = shoal.Simulation(count=20000, seed=1).state
        ref = shoal.Renderer(size=(320, 180), threads=1).frame(st)
        r = shoal.Renderer(size=(320, 180), threads=1)
        bar = threading.Barrier(2); res = []
        def w():
            for i in range(20):
                bar.wait()
                try:
                    res.append('ok' if np.array_equal(r.frame(st), ref) else 'WRONG IMAGE')
                except RuntimeError as e:
                    assert 'busy' in str(e), e
                    res.append('busy')
        ts = [threading.Thread(target=w) for _ in range(2)]
        [t.start() for t in ts]; [t.join() for t in ts]
        print({k: res.count(k) for k in set(res)})
        """)
    assert rc == 0, err
    counts = eval(out.strip().splitlines()[-1])
    assert "WRONG IMAGE" not in counts, counts
    assert counts.get("ok", 0) >= 20 and counts.get("ok", 0) + counts.get("busy", 0) == 40


def test_set_state_against_step_never_torn():
    """N1: set_state racing a step: one of them is refused, or they run one after the other;
    the state is a, a stepped, or the old state stepped, never a mixture."""
    n = 100_000
    a = shoal.Simulation(model="steer", count=n, seed=2).state
    for _ in range(3):
        s = shoal.Simulation(model="steer", count=n, seed=1)
        s0 = s.state
        want = []
        for start in (a, s0):
            t = shoal.Simulation(model="steer", count=n, seed=1)  # s's walls (scaled to n)
            t.set_state(start)
            t.step(1)
            want.append(t.state.tobytes())
        want.append(a.tobytes())
        ra, rb = race(1, lambda: s.step(1), lambda: s.set_state(a))
        got = s.state.tobytes()
        assert got in want, (ra, rb)


def test_resize_and_reinit_during_frames():
    """N2: Renderer.size = and Renderer.__init__ while another thread draws: refused
    (RuntimeError), never heap corruption."""
    for action in ("r.size = (64 + i % 7, 48)", "r.__init__(size=(640, 360), threads=1)"):
        rc, out, err = child(f"""
            import threading, shoal
            st = shoal.Simulation(count=30000, seed=1).state
            r = shoal.Renderer(size=(1280, 720), threads=1); stop = [False]; refused = [0]
            def a():
                for i in range(6): r.frame(st)
                stop[0] = True
            def b():
                i = 0
                while not stop[0]:
                    try:
                        {action}
                    except RuntimeError as e:
                        assert 'busy' in str(e), e
                        refused[0] += 1
                    i += 1
            ts = [threading.Thread(target=a), threading.Thread(target=b)]
            [t.start() for t in ts]; [t.join() for t in ts]
            print('refused', refused[0], r.size)
            """)
        assert rc == 0, (action, err)
        assert int(out.split()[1]) > 0, out


def test_renderer_without_a_working_init():
    """N3: a subclass whose __init__ does nothing, __new__ alone, a failed re-init; N23: del
    r.size."""
    rc, out, err = child("""
        import shoal
        class R(shoal.Renderer):
            def __init__(self): pass
        for obj in (R(), shoal.Renderer.__new__(shoal.Renderer)):
            for call in (lambda: obj.size, lambda: obj.stats(), lambda: setattr(obj, 'size', (10, 10)),
                         lambda: obj.frame([[0, 0, 0, 1, 0, 0]])):
                try:
                    call(); print('no error')
                except RuntimeError as e:
                    print('RuntimeError', e)
        r = shoal.Renderer(size=(64, 48))
        try:
            r.__init__(fish_length=-1)
        except shoal.InputError as e:
            print('InputError', e)
        print(r.size, r.stats()['isa'] != '')
        try:
            del r.size
        except TypeError as e:
            print('TypeError', e)
        """)
    assert rc == 0, err
    lines = out.strip().splitlines()
    assert lines[:8] == ["RuntimeError the renderer was not initialised"] * 8, lines
    assert lines[8].startswith("InputError render: fish length -1")
    assert lines[9] == "(64, 48) True"  # the failed re-init kept the working renderer
    assert lines[10] == "TypeError size cannot be deleted"


def test_reentrant_callbacks_that_close_the_sim():
    """N9: a value's __float__ or __array__ that closes (or steps) the simulation while it is
    being set: RuntimeError, not a crash."""
    rc, out, err = child("""
        import numpy as np, shoal
        s = shoal.Simulation(count=300, seed=2)
        st = s.state
        class E:
            def __float__(self):
                s.close(); return 2.0
        class S:
            def __float__(self):
                s.step(1); return 2.0
        class A:
            def __array__(self, dtype=None, copy=None):
                s.close(); return st
        cases = [lambda: s.params.__setitem__('sep_weight', E()),
                 lambda: s.params.update(sep_weight=E()),
                 lambda: setattr(s, 'params', {'sep_weight': E()}),
                 lambda: s.params.__setitem__('sep_weight', S()),
                 lambda: s.set_state(A()),
                 lambda: s.stats(radius=E())]
        for c in cases:
            try:
                c(); print('no error')
            except RuntimeError as e:
                print('RuntimeError', 'busy' in str(e))
        s.step(1)  # still usable: nothing was closed under it
        print(s.params['sep_weight'], s.count)
        """)
    assert rc == 0, err
    lines = out.strip().splitlines()
    assert lines[:6] == ["RuntimeError True"] * 6, lines
    assert lines[6] == "3.0 300"


def test_init_twice_and_reentrant_init():
    s = shoal.Simulation(model="steer", count=50, seed=1)
    with pytest.raises(RuntimeError, match="called twice"):
        s.__init__(model="steer", count=50)
    t = shoal.Simulation.__new__(shoal.Simulation)
    with pytest.raises(RuntimeError, match="closed"):
        t.step(1)

    class Reenter:
        def __float__(self):
            t.__init__(count=10)  # the object being initialised: refused
            return 2.0

    with pytest.raises(RuntimeError, match="busy"):
        t.__init__(count=10, params={"sep_weight": Reenter()})
    t.__init__(count=10)  # the refusal left it uninitialised and usable
    t.step(1)


def interrupt(code, ready="ready", wait=1.0, limit=5.0):
    """Start `code` in a child, SIGINT it `wait` s after it prints `ready`; returns (seconds
    from the signal to its exit, returncode, stderr)."""
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        line = p.stdout.readline()
        assert line.strip() == ready, (line, p.stderr.read() if p.poll() is not None else "")
        time.sleep(wait)
        t = time.monotonic()
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            return None, None, ""
        return time.monotonic() - t, p.returncode, p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.parametrize("what", ["step", "step_threads1", "verify", "sweep"])
def test_ctrl_c_stops_long_calls(what):
    """N6: Ctrl-C stops a long step, a verify and a sweep member: KeyboardInterrupt within a
    second or two (the trial: still running 10 s, 107 s and 60 s later)."""
    code = {
        "step": "import shoal; s = shoal.Simulation(count=20000)\n"
                "print('ready', flush=True); s.step(100000)",
        "step_threads1": "import shoal; s = shoal.Simulation(count=20000, threads=1)\n"
                         "print('ready', flush=True); s.step(100000)",
        "verify": "import numpy as np, shoal\n"
                  "s = shoal.Simulation(count=30000, seed=1); st = [s.state]\n"
                  "for _ in range(40):\n    s.step(1); st.append(s.state)\n"
                  "a = np.stack(st).astype(np.float64)\n"
                  "print('ready', flush=True); shoal.verify(a)",
        "sweep": "import shoal; print('ready', flush=True)\n"
                 "shoal.sweep(vary={'sep_weight': [1, 2]}, count=20000, steps=100000, frame=False)",
    }[what]
    # the signal comes well inside the long call (verify converts its input first)
    took, rc, err = interrupt(code, wait=3.0 if what == "verify" else 1.0)
    assert took is not None, f"{what}: still running 5 s after SIGINT"
    assert "KeyboardInterrupt" in err, err
    assert rc != 0


def test_ctrl_c_in_a_thread_leaves_the_handler():
    """A long call on another thread takes no signal handler (Python gives KeyboardInterrupt to
    the main thread only); the main thread's own calls still take it."""
    import signal as sig

    before = sig.getsignal(sig.SIGINT)
    s = shoal.Simulation(count=2000, seed=1)
    t = threading.Thread(target=lambda: s.step(200))
    t.start()
    t.join()
    s.step(5)
    assert sig.getsignal(sig.SIGINT) is before
