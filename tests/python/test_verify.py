# SPDX-License-Identifier: MIT
# shoal.verify: the Python face of `shoal verify` (issue 32). Trajectories from shoal's own
# step agree; a school stepped with one changed weight is a rule difference that names its
# term and parameter; rows shuffled each step with an id column (or ids=) agree again; the
# float64 reference agrees on shoal's float32 steps; the reports equal the program's JSON.
import json

import numpy as np
import pytest

import shoal


def trajectory(model="steer", count=600, steps=4, params=None, seed=3):
    sim = shoal.Simulation(model=model, count=count, seed=seed, params=params or {},
                           keep_geometry=True)
    states = [sim.state.copy()]
    for _ in range(steps):
        sim.step(1)
        states.append(sim.state.copy())
    return np.stack(states)


@pytest.mark.parametrize("model", shoal.models())
def test_shoal_agrees_with_itself(model):
    tr = trajectory(model, count=500, steps=3)
    for ref in ("f32", "f64"):
        reports = shoal.verify(tr, model=model, reference=ref, seed=3)  # heading: targets
        assert len(reports) == 3
        for r in reports:
            assert r["verdict"] == "agrees", (ref, r["detail"])
            assert r["count"] == 500 and r["beyond"] == 0
            if ref == "f32":
                assert r["pos_max"] == 0.0 and r["vel_max"] == 0.0  # the same float32 step


def test_planted_weight_is_named():
    tr = trajectory("steer", count=800, steps=3, params={"ali_weight": 1.5})
    reports = shoal.verify(tr, model="steer")
    assert [r["verdict"] for r in reports] == ["rule differs"] * 3
    assert {r["term"] for r in reports} == {"alignment"}
    assert {r["param"] for r in reports} == {"ali_weight"}
    r = reports[0]
    # the fitted values hold the planted one (to the float32 rounding of the fit)
    lo, hi = r["fitted"]
    assert lo - 1e-6 <= 1.5 <= hi + 1e-6 and r["contract"] == 1.0, (lo, hi, r["contract"])
    assert r["beyond"] > 0 and len(r["worst"]) == 8 and r["worst"][0]["ratio"] > 1


def test_rows_in_another_order():
    tr = trajectory("heading", count=400, steps=3)
    rng = np.random.default_rng(5)
    ids = np.arange(400)
    shuffled, id_rows = [], []
    for k in range(len(tr)):
        perm = rng.permutation(400)
        shuffled.append(tr[k][perm])
        id_rows.append(ids[perm])
    with_col = [np.hstack([s, i[:, None].astype(np.float32)]) for s, i in zip(shuffled, id_rows)]
    a = shoal.verify(with_col, model="heading", seed=3)
    b = shoal.verify(shuffled, model="heading", seed=3, ids=np.stack(id_rows))
    for r in a + b:
        assert r["verdict"] == "agrees", r["detail"]
    # without the ids the same rows are not the same boids: far beyond any bound
    assert shoal.verify(shuffled, model="heading", seed=3)[0]["verdict"] == "rule differs"


def test_files_and_the_program(cli, tmp_path):
    tr = trajectory("fov", count=300, steps=3, params={"coh_force": 1.25})
    np.save(tmp_path / "traj.npy", tr)
    d = tmp_path / "states"
    d.mkdir()
    for k, s in enumerate(tr):
        shoal.save(d / f"s_{k:03d}.npy", s)
    from_file = shoal.verify(tmp_path / "traj.npy", model="fov")
    from_dir = shoal.verify(str(d), model="fov")
    cli("verify", "--model", "fov", "--trajectory", tmp_path / "traj.npy", "--json",
        tmp_path / "v.json", "--quiet", check=False)
    prog = json.load(open(tmp_path / "v.json"))["steps"]
    assert len(prog) == len(from_file) == len(from_dir) == 3
    for p, f, g in zip(prog, from_file, from_dir):
        assert f == g
        assert p["verdict"] == f["verdict"] == "rule differs"
        assert p["term"] == f["term"] == "cohesion" and p["param"] == f["param"] == "coh_force"
        assert p == f  # the program's JSON, key for key and number for number


def test_bad_input(tmp_path):
    tr = trajectory("steer", count=50, steps=1)
    with pytest.raises(shoal.InputError, match="at least two"):
        shoal.verify(tr[:1])
    with pytest.raises(shoal.InputError, match="expected"):
        shoal.verify([tr[0], tr[1][:40]])
    with pytest.raises(shoal.InputError, match="reference"):
        shoal.verify(tr, reference="f16")
    bad = tr.copy()
    bad[1, 7, 2] = np.nan
    with pytest.raises(shoal.InputError, match="nan"):
        shoal.verify(bad)
    with pytest.raises(shoal.InputError, match="other ids"):
        shoal.verify(tr, ids=np.stack([np.arange(50), np.arange(1, 51)]))
    with pytest.raises(shoal.InputError):
        shoal.verify(tr, params={"no_such_parameter": 1})
    with pytest.raises(shoal.FileError, match="nowhere.npy"):
        shoal.verify("/nonexistent/nowhere.npy")
    (tmp_path / "junk.npy").write_bytes(b"\x93NUMPY not really")
    with pytest.raises(shoal.InputError, match="junk.npy"):
        shoal.verify(tmp_path / "junk.npy")
    # every boid at one point, standing still: a state like any other, not a crash
    still = np.zeros((3, 100, 6), np.float32)
    assert [r["verdict"] for r in shoal.verify(still, model="steer")] == ["agrees"] * 2
