# SPDX-License-Identifier: MIT
# The Python package against the shoal program: the same bits for the same inputs (any thread
# count), the bytes of `shoal render` and `shoal sweep`, the numbers of `shoal compare`, and
# the checks and errors a user meets. Run by meson test (test_python) with the package built
# in build/src/python and SHOAL_EXE set.
import ast
import json
import os
import threading

import numpy as np
import pytest

import shoal

MODELS = ["steer", "average", "heading", "classic", "fov"]


def test_version_and_abi():
    # importing ran shoal_abi_check; the library and the headers agree
    assert shoal.__version__ == shoal.header_version == "0.2.0"
    assert shoal.models() == MODELS


@pytest.mark.parametrize("model", MODELS)
def test_initial_state_is_shoal_init(cli, tmp_path, model):
    start = tmp_path / "start.npy"
    cli("init", "--model", model, "--count", 1500, "--seed", 9, "--out", start)
    sim = shoal.Simulation(model=model, count=1500, seed=9)
    assert sim.state.dtype == np.float32 and sim.state.shape == (1500, 6)
    assert sim.state.tobytes() == shoal.load(start).tobytes()
    # and .npy files written by the package are the program's, byte for byte
    shoal.save(tmp_path / "again.npy", sim.state)
    assert (tmp_path / "again.npy").read_bytes() == start.read_bytes()


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_same_bits_as_shoal_step(cli, tmp_path, model, threads):
    start, end = tmp_path / "start.npy", tmp_path / "end.npy"
    cli("init", "--model", model, "--count", 2000, "--seed", 4, "--out", start)
    cli("step", "--model", model, "--in", start, "--out", end, "--steps", 25, "--seed", 4,
        "--threads", 2)
    sim = shoal.Simulation(model=model, state=shoal.load(start), seed=4, threads=threads)
    sim.step(10)
    sim.step(15)  # split over calls: the same bits
    assert sim.state.tobytes() == shoal.load(end).tobytes()
    assert sim.time == pytest.approx(25 / 60)


def test_drawn_school_steps_as_the_program(cli, tmp_path):
    """count= scales the walls as `shoal init --count` does; `shoal step` given the
    parameters the package reports (every one, by name) continues with the same bits."""
    sim = shoal.Simulation(model="heading", count=3000, seed=12, params={"target_weight": 1.5})
    start = tmp_path / "start.npy"
    shoal.save(start, sim.state)
    sets = []
    for name, value in sim.params.items():
        sets += ["--set", f"{name}={value!r}"]
    sim.step(40)
    cli("step", "--model", "heading", "--in", start, "--out", tmp_path / "end.npy", "--steps",
        40, "--seed", 12, *sets)
    assert sim.state.tobytes() == shoal.load(tmp_path / "end.npy").tobytes()


def test_positions_velocities_row_order():
    sim = shoal.Simulation(model="steer", count=500, seed=2)
    sim.step(5)
    s = sim.state
    assert np.array_equal(sim.positions, s[:, :3]) and np.array_equal(sim.velocities, s[:, 3:])
    # set_state keeps row i as boid i whatever the engine reorders
    rows = s.copy()
    rows[:, 0] += 1.0
    sim.set_state(rows)
    assert sim.state.tobytes() == rows.tobytes()
    sim.set_state(rows.astype(np.float64))  # float64 is rounded to float32, as .npy '<f8'
    assert sim.state.tobytes() == rows.tobytes()


def test_set_state_checks():
    sim = shoal.Simulation(model="steer", count=100, seed=1)
    with pytest.raises(ValueError, match=r"shape \(100, 5\)"):
        sim.set_state(np.zeros((100, 5), np.float32))
    with pytest.raises(TypeError, match="dtype int64"):
        sim.set_state(np.zeros((100, 6), np.int64))
    with pytest.raises(shoal.InputError, match="99 rows given, the simulation has 100"):
        sim.set_state(np.zeros((99, 6), np.float32))
    bad = np.zeros((100, 6), np.float32)
    bad[7, 4] = np.nan
    with pytest.raises(shoal.InputError, match=r"row 7 column 4 \(vy\) is nan"):
        sim.set_state(bad)
    with pytest.raises(ValueError):
        shoal.Simulation(model="steer", count=10, state=np.zeros((10, 6), np.float32))


def test_params_by_name():
    sim = shoal.Simulation(model="steer", count=200, seed=1, params={"sep_weight": 2},
                           keep_geometry=True)
    assert sim.params["sep_weight"] == 2.0
    assert sim.params["wall_size"] == (32.0, 32.0, 32.0)
    assert "coh_radius" in sim.params and "coh_dist2" not in sim.params
    sim.params["coh_radius"] = 3
    sim.params["wall_size"] = (40, 41, 42)
    assert sim.params["coh_radius"] == 3.0 and sim.params["wall_size_y"] == 41.0
    sim.params.update(ali_weight=0.5, max_speed=4)
    assert sim.params["ali_weight"] == 0.5 and sim.params["max_speed"] == 4.0
    assert sim.params.to_dict() == dict(sim.params.items())
    assert sim.params.info()["sep_weight"]["default"] == 3.0
    with pytest.raises(shoal.InputError, match="unknown parameter 'nope' for model steer"):
        sim.params["nope"] = 1
    with pytest.raises(shoal.InputError, match="out of range"):
        sim.params["max_speed"] = -1
    with pytest.raises(KeyError):
        sim.params["nope"]
    assert sim.params["max_speed"] == 4.0  # a refused value changes nothing
    with pytest.raises(shoal.InputError, match="model fov contradicts|unknown model"):
        shoal.Simulation(model="nope")


def test_errors_carry_the_library_message(tmp_path):
    with pytest.raises(shoal.FileError, match="cannot open") as e:
        shoal.load(tmp_path / "missing.npy")
    assert isinstance(e.value, OSError) and isinstance(e.value, shoal.Error)
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY junk")
    with pytest.raises(shoal.InputError, match="bad.npy"):
        shoal.load(tmp_path / "bad.npy")
    with pytest.raises(shoal.InputError, match="dt must be finite"):
        shoal.Simulation(model="steer", count=10, dt=-1)
    with pytest.raises(shoal.InputError, match="unknown model"):
        shoal.Simulation(model="nope", count=10)
    with pytest.raises(ValueError, match="backend 'opencl'"):
        shoal.Simulation(model="steer", count=10, backend="opencl")


def test_step_releases_the_gil():
    sim = shoal.Simulation(model="steer", count=20000, seed=1, threads=1)
    done = threading.Event()
    ticks = 0

    def run():
        sim.step(60)
        done.set()

    t = threading.Thread(target=run)
    t.start()
    while not done.is_set():
        ticks += 1
        # while it runs, the sim refuses a second user instead of racing it
        try:
            sim.state
        except RuntimeError as e:
            assert "busy" in str(e)
    t.join()
    assert ticks > 5, "the main thread did not run while the step did"
    assert sim.time == pytest.approx(1.0)


def test_checkpoint_resume(cli, tmp_path):
    a = shoal.Simulation(model="steer", count=1000, seed=5, params={"predator_count": 2})
    a.step(20)
    a.checkpoint(tmp_path / "half.ckpt")
    a.step(20)
    b = shoal.Simulation.resume(tmp_path / "half.ckpt")
    assert b.time == pytest.approx(20 / 60) and b.params["predator_count"] == 2
    b.step(20)
    assert a.state.tobytes() == b.state.tobytes()
    cli("step", "--resume", tmp_path / "half.ckpt", "--steps", 20, "--out", tmp_path / "c.npy")
    assert shoal.load(tmp_path / "c.npy").tobytes() == a.state.tobytes()


def test_stats_and_compare_match_the_program(cli, tmp_path):
    a = shoal.Simulation(model="steer", count=3000, seed=1)
    b = shoal.Simulation(model="steer", count=3000, seed=1, params={"sep_weight": 2.5})
    a.step(30)
    b.step(30)
    shoal.save(tmp_path / "a.npy", a.state)
    shoal.save(tmp_path / "b.npy", b.state)
    cli("compare", tmp_path / "a.npy", tmp_path / "b.npy", "--json", tmp_path / "c.json")
    want = json.loads((tmp_path / "c.json").read_text())
    got = shoal.compare(a.state, b.state)
    assert got["count"] == want["count"] and got["identical"] == want["identical"]
    for part in ("position", "velocity"):
        for k, v in want[part].items():
            assert f"{got[part][k]:.9g}" == f"{v:.9g}", (part, k)
    for k in ("polarisation", "milling", "mean_nn_distance", "mean_neighbors", "mean_speed",
              "radius_of_gyration", "largest_group_fraction"):
        assert f"{got['stats_a'][k]:.9g}" == f"{want['stats_a'][k]:.9g}", k
        assert f"{got['stats_b'][k]:.9g}" == f"{want['stats_b'][k]:.9g}", k
    assert got["stats_a"]["group_count"] == want["stats_a"]["group_count"]
    # the module function and the method agree, for any thread count
    assert shoal.stats(a.state, threads=1) == a.stats(threads=2)
    same = shoal.compare(a.state, a.state, stats=False)
    assert same["identical"] == 3000 and same["position"]["max_abs"] == 0


@pytest.mark.parametrize("camera", [None, ((0, 2, 30), (0, 0, 0))])
def test_render_is_shoal_render(cli, tmp_path, camera):
    sim = shoal.Simulation(model="steer", count=3000, seed=3)
    sim.step(20)
    shoal.save(tmp_path / "s.npy", sim.state)
    args = ["render", "--in", tmp_path / "s.npy", "--out", tmp_path / "cli.png", "--size",
            "320x180", "--fish-length", 0.6]
    kw = {}
    if camera:
        args += ["--eye", "%g,%g,%g" % camera[0], "--target", "%g,%g,%g" % camera[1]]
        kw = dict(eye=camera[0], target=camera[1])
    cli(*args)
    img = shoal.render(sim.state, size=(320, 180), fish_length=0.6, **kw)
    assert img.shape == (180, 320, 3) and img.dtype == np.uint8
    shoal.write_png(tmp_path / "py.png", img)
    assert (tmp_path / "py.png").read_bytes() == (tmp_path / "cli.png").read_bytes()
    # a renderer kept for many frames gives the same image, and groups recolour the fish
    r = shoal.Renderer(size=(320, 180), fish_length=0.6, threads=1)
    assert np.array_equal(r.frame(sim.state, **kw), img)
    assert r.stats()["pixels_written"] > 0
    grouped = r.frame(sim.state, group=np.arange(3000) % 4, **kw)
    assert not np.array_equal(grouped, img)
    red = r.frame(sim.state, color=np.tile([255, 0, 0], (3000, 1)).astype(np.uint8), **kw)
    assert not np.array_equal(red, img) and not np.array_equal(red, grouped)
    with pytest.raises(ValueError, match="group: expected 3000"):
        r.frame(sim.state, group=np.zeros(5))


def test_sweep_is_shoal_sweep(cli, tmp_path):
    out = tmp_path / "sw"
    cli("sweep", "--model", "steer", "--vary", "sep_weight=1:2:0.5", "--vary",
        "ali_weight=0.5,1.5", "--seeds", "3..4", "--count", 600, "--steps", 30, "--every", 10,
        "--out", out, "--threads", 2, "--jobs", 2, "--quiet")
    csv = (out / "sweep.csv").read_text()
    header, lines = shoal._shoal._sweep_rows(
        "steer", None, 600, False, None, ["sep_weight=1:2:0.5", "ali_weight=0.5,1.5"], 3, 4, 30,
        10, None, None, 1)
    assert header + "\n" + "".join(l + "\n" for l in lines) == csv
    table = shoal.sweep(model="steer", vary={"sep_weight": "1:2:0.5", "ali_weight": [0.5, 1.5]},
                        seeds=range(3, 5), count=600, steps=30, every=10, frame=False)
    ref = np.genfromtxt(out / "sweep.csv", delimiter=",", names=True)
    assert table.dtype.names == ref.dtype.names
    for name in table.dtype.names:
        assert np.array_equal(table[name].astype(np.float64), ref[name], equal_nan=True), name
    assert table["member"].dtype == np.int64 and len(table) == 3 * 2 * 2 * 4
    pd = pytest.importorskip("pandas")
    frame = shoal.sweep(model="steer", vary={"sep_weight": "1:2:0.5", "ali_weight": [0.5, 1.5]},
                        seeds=(3, 4), count=600, steps=30, every=10, threads=2)
    assert isinstance(frame, pd.DataFrame)
    assert np.array_equal(frame["polarization"].to_numpy(), table["polarization"])
    with pytest.raises(shoal.InputError, match="vary 'sep_weight=3:1:1': empty range"):
        shoal.sweep(model="steer", vary={"sep_weight": "3:1:1"}, steps=1)


def test_help_on_every_function():
    for name in shoal.__all__:
        obj = getattr(shoal, name)
        assert obj.__doc__ and len(obj.__doc__.strip()) > 20, name
    for cls in (shoal.Simulation, shoal.Renderer, shoal.Params):
        for attr, obj in vars(cls).items():
            if not attr.startswith("_"):
                assert obj.__doc__ and obj.__doc__.strip(), f"{cls.__name__}.{attr}"


def test_type_hints_cover_the_package():
    pyi = os.path.join(os.path.dirname(shoal.__file__), "__init__.pyi")
    tree = ast.parse(open(pyi).read())
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    names |= {t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    missing = [n for n in shoal.__all__ if n not in names]
    assert not missing, missing


@pytest.mark.cuda
@pytest.mark.parametrize("model", MODELS)
def test_cuda_same_bits_as_cpu(model):
    ok, why = shoal.gpu_available()
    if not ok:
        pytest.skip(why)
    cpu = shoal.Simulation(model=model, count=20000, seed=7)
    gpu = shoal.Simulation(model=model, count=20000, seed=7, backend="cuda")
    assert gpu.state.tobytes() == cpu.state.tobytes()
    cpu.step(100)
    gpu.step(100)
    c = shoal.compare(cpu.state, gpu.state, stats=False)
    assert c["identical"] == 20000, c
    print(f"{model}: {gpu.device}: 20000 boids, 100 steps, all bit-identical to the CPU")


# ---- names and values the package and the program refuse alike (issue 44: N15, N16, N17,
# N22) ----------------------------------------------------------------------------------------

def test_nul_bytes_in_names_and_values(cli, tmp_path):
    """N15: a NUL inside a name or value no longer cuts it (the rest was ignored)."""
    with pytest.raises(shoal.InputError, match=r"unknown parameter 'sep_weight\\x00anything'"):
        shoal.Simulation(count=10, params={"sep_weight\x00anything": 2.5})
    with pytest.raises(shoal.InputError, match=r"unknown model 'fov\\x00steer'"):
        shoal.Simulation(model="fov\x00steer", count=10)
    s = shoal.Simulation(count=10, seed=1)
    with pytest.raises(shoal.InputError, match=r"unknown parameter 'sep_force\\x00zzz'"):
        s.params["sep_force\x00zzz"] = 0.25
    with pytest.raises(shoal.InputError, match=r"'2\\x00junk' is not a finite number"):
        s.params["sep_weight"] = "2\x00junk"
    assert s.params["sep_weight"] == 3.0


def test_long_value_texts_are_refused_as_the_program_refuses_them(cli, tmp_path):
    """N16: a long text is not cut at 255 (or, per vector item, 63) bytes and accepted."""
    long = "1.5" + " " * 300 + "x"
    r = cli("init", "--model", "steer", "--count", 10, "--set", f"sep_weight={long}", "--out",
            tmp_path / "x.npy", check=False)
    assert r.returncode == 2
    with pytest.raises(shoal.InputError) as e:
        shoal.Simulation(count=10, params={"sep_weight": long})
    assert r.stderr.strip() == f"shoal init: {e.value}"
    with pytest.raises(shoal.InputError, match="is not a finite number"):
        shoal.Simulation(count=10, params={"wall_size": ["25" + " " * 70 + "garbage", 26, 27]})
    # numbers are set by value: no text in between
    s = shoal.Simulation(count=10, params={"wall_size": [25, 26.5, "27"], "sep_weight": 0.1})
    assert s.params["wall_size"] == (25.0, 26.5, 27.0) and s.params["sep_weight"] == np.float32(0.1)
    with pytest.raises(shoal.InputError, match="takes 3 values"):
        s.params["wall_size"] = (1, 2)
    with pytest.raises(shoal.InputError, match="takes one value, not 3"):
        s.params["sep_weight"] = (1, 2, 3)
    with pytest.raises(shoal.InputError) as e:
        s.params["sep_weight"] = 1e39
    r = cli("init", "--model", "steer", "--count", 10, "--set", "sep_weight=1e+39", "--out",
            tmp_path / "x.npy", check=False)
    assert r.stderr.strip() == f"shoal init: {e.value}"


def test_sweep_seeds_in_range(cli, tmp_path):
    """N17: seeds beyond 2^63 - 1 or below 0 are refused before any member runs; floats are a
    TypeError (they were cut)."""
    for seeds in [(2**64 + 1, 2**64 + 1), (-1, -1), 2**63]:
        with pytest.raises(shoal.InputError, match=r"out of range \[0, 9223372036854775807\]"):
            shoal.sweep(vary={"sep_weight": [1, 2]}, count=50, steps=4, seeds=seeds, frame=False)
    with pytest.raises(TypeError):
        shoal.sweep(vary={"sep_weight": [1, 2]}, count=50, steps=4, seeds=(1.7, 2.2), frame=False)
    with pytest.raises(shoal.InputError, match="out of range"):
        shoal.Simulation(count=10, seed=-1)
    table = shoal.sweep(vary={"sep_weight": [1]}, count=50, steps=2, seeds=2**63 - 1, frame=False)
    assert table["seed"][0] == 2**63 - 1


def test_missing_scene_is_a_file_error(tmp_path):
    """N22: a scene that cannot be opened is FileError (an OSError) everywhere, as every other
    missing file."""
    missing = tmp_path / "nonexistent.ini"
    tr = np.stack([shoal.Simulation(count=20, seed=1).state] * 2)
    for call in (lambda: shoal.Simulation(scene=missing),
                 lambda: shoal.sweep(scene=missing, steps=1, frame=False),
                 lambda: shoal.verify(tr, scene=missing)):
        with pytest.raises(shoal.FileError, match="nonexistent.ini: cannot open"):
            call()
    a = shoal.Simulation(count=20, seed=1)
    a.checkpoint(tmp_path / "c.ckpt")
    with pytest.raises(shoal.FileError):
        shoal.Simulation.resume(tmp_path / "c.ckpt", scene=missing)


def test_one_spelling_both_read():
    """Issue 43 item 11: "polarization" everywhere in the package (as sweep.csv), the British
    spelling of the C field and compare --json read too."""
    s = shoal.Simulation(count=300, seed=1)
    st = s.stats()
    assert isinstance(st, shoal.Stats) and "polarization" in st.keys()
    assert st["polarisation"] == st["polarization"] == st.get("polarisation")
    assert "polarisation" in st and "polarisation" not in st.keys()
    c = shoal.compare(s.state, s.state)
    assert c["stats_a"]["polarisation"] == c["stats_b"]["polarization"]
    t = shoal.sweep(vary={"sep_weight": [1]}, count=50, steps=2, frame=False)
    assert np.array_equal(t["polarisation"], t["polarization"])
    assert "polarisation" not in t.dtype.names  # one column


def test_load_and_save_use_the_formats_table(cli, tmp_path):
    s = shoal.Simulation(count=50, seed=1).state
    shoal.save(tmp_path / "a.bin", s)  # by the extension: Unity's buffer
    assert (tmp_path / "a.bin").stat().st_size == 50 * 24
    assert np.array_equal(shoal.load(tmp_path / "a.bin"), s)
    shoal.save(tmp_path / "a.vtp", s)
    assert (tmp_path / "a.vtp").read_bytes().startswith(b"<?xml")
    shoal.save(tmp_path / "b.vtp", s, format="vtp")  # the name before the table's
    with pytest.raises(shoal.InputError, match=r"format 'vtk' \(expected auto, npy or unity\)"):
        shoal.load(tmp_path / "a.vtp", format="vtk")
    r = cli("compare", tmp_path / "a.bin", tmp_path / "a.bin", "--format", "vtk", check=False)
    assert "format 'vtk' (expected auto, npy or unity)" in r.stderr
