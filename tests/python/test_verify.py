# SPDX-License-Identifier: MIT
# shoal.verify: the Python face of `shoal verify` (issue 32). Trajectories from shoal's own
# step agree; a school stepped with one changed weight is a rule difference that names its
# term and parameter; rows shuffled each step with an id column (or ids=) agree again; the
# float64 reference agrees on shoal's float32 steps; the reports equal the program's JSON.
import json
import os

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
    with pytest.raises(shoal.InputError, match="ids differ from the first state"):
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


# ---- the program and the package refuse the same trajectories with the same words (issue 44:
# N18-N21, N24; one reader, the library's shoal_traj_open, behind both) -------------------------

def refusal(cli, path, *args, **kw):
    """The program's one-line refusal of `verify --trajectory path` and the package's; both
    must say the same thing."""
    r = cli("verify", "--trajectory", path, "--quiet", *args, check=False)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    line = r.stderr.strip()
    assert line.startswith("shoal verify: ") and "\n" not in line, line
    with pytest.raises((shoal.InputError, shoal.FileError)) as e:
        shoal.verify(path, **kw)
    assert str(e.value) == line[len("shoal verify: "):]
    return str(e.value)


def states_dir(tmp_path, name, count=60, steps=3, names=None, model="steer"):
    tr = trajectory(model, count=count, steps=steps)
    d = tmp_path / name
    d.mkdir()
    for k, s in enumerate(tr):
        shoal.save(d / (names[k] if names else f"state_{k}.npy"), s)
    return d, tr


def test_numbered_directory_refusals(cli, tmp_path):
    # N19: two files with one number, a file without a number, float16 states
    d, _ = states_dir(tmp_path, "dup", names=["state_5.npy", "state_000005.npy", "state_6.npy",
                                              "state_7.npy"])
    assert "carry the same number 5" in refusal(cli, d)
    d, _ = states_dir(tmp_path, "minus", names=["f_-1.npy", "f_0.npy", "f_1.npy", "f_2.npy"])
    assert "carry the same number 1" in refusal(cli, d)
    d, _ = states_dir(tmp_path, "noname", names=["a.npy", "f_1.npy", "f_2.npy", "f_3.npy"])
    assert "a.npy: no step number in the name" in refusal(cli, d)
    d = tmp_path / "half"
    d.mkdir()
    for k, s in enumerate(trajectory("steer", count=60, steps=2)):
        np.save(d / f"f_{k}.npy", s.astype(np.float16))
    assert "<f2" in refusal(cli, d)
    # N20: a gap in the numbering is refused, not verified as one step
    d, _ = states_dir(tmp_path, "gap", names=["state_0.npy", "state_1.npy", "state_3.npy",
                                              "state_4.npy"])
    assert "numbered 1 and 3; verify compares consecutive steps" in refusal(cli, d)


def test_hidden_temporaries_are_not_states(cli, tmp_path):
    # N19: a writer's hidden temporary is skipped by both, not verified as a state
    d, tr = states_dir(tmp_path, "tmp", steps=1)
    shoal.save(d / ".state_2.npy.tmp.ABC.npy", tr[0])
    r = cli("verify", "--trajectory", d, "--model", "steer", "--quiet")
    assert "1 steps: 1 agree" in r.stdout
    assert [x["verdict"] for x in shoal.verify(d)] == ["agrees"]


def test_damaged_manifest_fields(cli, tmp_path):
    # N21: a field of the wrong type or out of range is refused by both, not skipped
    cli("init", "--model", "steer", "--count", 60, "--seed", 1, "--out", tmp_path / "s.npy")
    cli("step", "--model", "steer", "--in", tmp_path / "s.npy", "--steps", 2, "--every", 1,
        "--out-dir", tmp_path / "tr", "--quiet")
    man = json.loads((tmp_path / "tr" / "manifest.json").read_text())
    for field, value, words in [("dt", "0.01", "dt: expected a number of seconds > 0"),
                                ("seed", -5, "seed: expected an integer"),
                                ("seed", 1e30, "seed: expected an integer"),
                                ("parameters.sep_weight", "7", "parameter sep_weight: expected "
                                                               "a number"),
                                ("parameters.sep_radius", -7, "sep_radius of model steer: -7 is "
                                                               "out of range"),
                                ("frames.1.step", 1.5, "frame 1 lacks a whole step")]:
        bad = tmp_path / f"bad_{field}_{value}"
        bad.mkdir()
        for f in (tmp_path / "tr").iterdir():
            (bad / f.name).write_bytes(f.read_bytes())
        m = json.loads(json.dumps(man))
        keys = field.split(".")
        obj = m
        for k in keys[:-1]:
            obj = obj[int(k)] if k.isdigit() else obj[k]
        obj[keys[-1]] = value
        (bad / "manifest.json").write_text(json.dumps(m))
        assert words in refusal(cli, bad), field
    # and the manifest's own values are the rules: both read sep_weight from it
    assert [r["verdict"] for r in shoal.verify(tmp_path / "tr")] == ["agrees"] * 2


def test_ids_must_be_integers(cli, tmp_path):
    # N18: non-integer ids, from ids= or a 7th column, as the program refuses them
    tr = trajectory("steer", count=40, steps=2)
    with pytest.raises(shoal.InputError, match="row 0: id 0.5 is not an integer"):
        shoal.verify(tr, ids=np.arange(40) + 0.5)
    with_col = np.concatenate([tr, np.broadcast_to((np.arange(40) + 0.25)[None, :, None],
                                                   (3, 40, 1))], axis=2)
    np.save(tmp_path / "t7.npy", with_col.astype(np.float64))
    assert "row 0: id 0.25 is not an integer" in refusal(cli, tmp_path / "t7.npy")
    with pytest.raises(shoal.InputError, match="row 0: id 0.25 is not an integer"):
        shoal.verify(with_col)


def test_unreadable_states_are_named(cli, tmp_path):
    # N24: a dangling link, a directory and a FIFO among the states: the file is named
    d, _ = states_dir(tmp_path, "dangle", steps=1)
    os.symlink(tmp_path / "nowhere.npy", d / "state_2.npy")
    assert refusal(cli, d).startswith(f"{d}/state_2.npy: No such file")
    d, _ = states_dir(tmp_path, "sub", steps=1)
    (d / "state_2.npy").mkdir()
    assert refusal(cli, d) == f"{d}/state_2.npy: not a regular file"
    d, _ = states_dir(tmp_path, "fifo", steps=1)
    os.mkfifo(d / "state_2.npy")
    assert refusal(cli, d) == f"{d}/state_2.npy: not a regular file"  # not a hang


def test_program_inputs_from_python(cli, tmp_path):
    """What only the program read before: Unity buffer dumps with a layout, a manifest's
    model and parameters, --first/--steps."""
    tr = trajectory("steer", count=80, steps=3, params={"ali_weight": 1.5})
    d = tmp_path / "dumps"
    d.mkdir()
    for k, s in enumerate(tr):
        s[:, [3, 4, 5, 0, 1, 2]].astype("<f4").tofile(d / f"frame_{k}.bin")  # vp: v, then p
    a = shoal.verify(d, model="steer", params={"ali_weight": 1.5}, first=1, steps=1)
    assert len(a) == 1 and a[0]["step"] == 1 and a[0]["verdict"] == "agrees"
    assert "layout '6:0:2'" in refusal(cli, d, "--layout", "6:0:2", layout="6:0:2")
    cli("verify", "--trajectory", d, "--model", "steer", "--set", "ali_weight=1.5", "--first",
        1, "--steps", 1, "--json", tmp_path / "v.json", "--quiet")
    assert json.loads((tmp_path / "v.json").read_text())["steps"] == a
