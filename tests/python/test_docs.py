# SPDX-License-Identifier: MIT
# docs/PYTHON.md's examples run as written (every ```python block, in order, in one
# namespace, in a scratch directory), and make the files they say they make.
import os
import re

import pytest

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "PYTHON.md")


def test_tutorial_runs(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    text = open(DOC).read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    env = {"__name__": "__tutorial__"}
    for code in blocks:
        if "shoal.sweep(" in code:
            pytest.importorskip("pandas")
        exec(compile(code, "docs/PYTHON.md", "exec"), env)
    for f in ("polarisation.png", "frame.png", "side.png", "groups.png", "school.html"):
        assert (tmp_path / f).stat().st_size > 1000, f
    out = capsys.readouterr().out
    assert "refused: parameter max_speed of model steer" in out
    assert "<shoal.Animation 31 frames 480x270" in out and "groups, the largest" in out
    history = env["history"]  # the collector's rows: steps 0, 60, ... 600
    assert list(history["step"]) == list(range(0, 601, 60))
    # what the page says of the plot: weak separation aligns, the default does not
    assert env["polarisation"][1.0][-1] > 0.9 and env["polarisation"][3.0][-1] < 0.3
