# SPDX-License-Identifier: MIT
"""shoal.animate and shoal.Animation: a simulation's frames for a notebook (an HTML5 video
through ffmpeg where it is installed, else PNG frames with a small JavaScript player) or for
files (.mp4, .gif, .html, a directory of PNGs)."""
import base64
import html
import json
import operator
import os
import shutil
import subprocess
import tempfile
import uuid

import numpy as np

from ._shoal import FileError, Renderer, UnsupportedError, frame_camera, write_png


def _ffmpeg():
    return shutil.which("ffmpeg")


def _need_ffmpeg(what):
    exe = _ffmpeg()
    if not exe:
        raise UnsupportedError(f"{what} needs ffmpeg, which is not on PATH (Debian's ffmpeg); "
                               "Animation.to_jshtml() and .save(DIR) need nothing")
    return exe


class Animation:
    """Frames drawn from a simulation (shoal.animate): `frames` (T, h, w, 3) uint8, and per
    frame the simulation's `steps` (steps_done) and `times` (simulated seconds); `fps` the
    rate they play at.

    In a notebook the object shows itself (_repr_html_): an HTML5 video when ffmpeg is
    installed, else the PNG frames with a JavaScript player (to_jshtml). save(path) writes
    .mp4 or .gif (ffmpeg), .html (the notebook's view), or a directory of PNG frames
    (frame_NNNNNN.png, NNNNNN the step, as `shoal render --in DIR --out DIR2` names them)."""

    def __init__(self, frames, steps, times, fps):
        self.frames = frames
        self.steps = np.asarray(steps, dtype=np.int64)
        self.times = np.asarray(times, dtype=np.float64)
        self.fps = float(fps)
        self._mp4 = None

    def __len__(self):
        return len(self.frames)

    def __getitem__(self, i):
        return self.frames[i]

    @property
    def size(self):
        """(width, height) in pixels."""
        return (int(self.frames.shape[2]), int(self.frames.shape[1])) if len(self) else (0, 0)

    def __repr__(self):
        w, h = self.size
        span = f", steps {self.steps[0]}..{self.steps[-1]}" if len(self) else ""
        return f"<shoal.Animation {len(self)} frames {w}x{h}{span}, {self.fps:g} fps>"

    # ---- encodings ---------------------------------------------------------------------

    def _encode(self, path, kind):
        """Encode every frame to `path` with ffmpeg: "mp4" (H.264, yuv420p, the program's
        settings: src/app/video.c) or "gif" (a palette of the frames)."""
        exe = _need_ffmpeg(f"Animation ({kind})")
        w, h = self.size
        if kind == "mp4":
            out = ["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-preset",
                   "veryfast", "-crf", "20", "-pix_fmt", "yuv420p", "-movflags", "+faststart",
                   "-f", "mp4"]
        else:
            out = ["-vf", "split[a][b];[a]palettegen[p];[b][p]paletteuse", "-f", "gif"]
        cmd = [exe, "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo",
               "-pixel_format", "rgb24", "-video_size", f"{w}x{h}", "-framerate",
               repr(self.fps), "-i", "-", *out, path]
        # subprocess.run kills ffmpeg on any exception (KeyboardInterrupt included)
        r = subprocess.run(cmd, input=np.ascontiguousarray(self.frames).tobytes(),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode != 0:
            said = [x for x in r.stderr.decode(errors="replace").splitlines() if x.strip()]
            raise FileError(f"{path}: ffmpeg failed (exit {r.returncode})"
                            + (f": {said[-1]}" if said else ""))

    def _encoded(self, kind):
        with tempfile.TemporaryDirectory(prefix="shoal-anim-") as d:
            p = os.path.join(d, "a." + kind)
            self._encode(p, kind)
            with open(p, "rb") as f:
                return f.read()

    def to_mp4(self):
        """The frames as an H.264 MP4 (bytes; ffmpeg)."""
        if self._mp4 is None:
            self._mp4 = self._encoded("mp4")
        return self._mp4

    def to_html5_video(self):
        """An HTML <video> element with the MP4 inside (ffmpeg; UnsupportedError without)."""
        data = base64.b64encode(self.to_mp4()).decode("ascii")
        w, h = self.size
        return (f'<video width="{w}" height="{h}" controls autoplay loop muted playsinline>'
                f'<source type="video/mp4" src="data:video/mp4;base64,{data}"></video>')

    def _pngs(self):
        with tempfile.TemporaryDirectory(prefix="shoal-anim-") as d:
            out = []
            p = os.path.join(d, "f.png")
            for f in self.frames:
                write_png(p, f)
                with open(p, "rb") as fh:
                    out.append(fh.read())
            return out

    def to_jshtml(self):
        """The frames as PNGs in an HTML player (play/pause, a slider, the step and time), in
        JavaScript: needs no ffmpeg and no matplotlib. Larger than the video."""
        uid = "shoal" + uuid.uuid4().hex[:12]
        urls = ["data:image/png;base64," + base64.b64encode(p).decode("ascii")
                for p in self._pngs()]
        labels = [f"step {int(s)}, t = {t:.3f} s" for s, t in zip(self.steps, self.times)]
        w, h = self.size
        first = urls[0] if urls else ""
        return f"""<div id="{uid}" style="display:inline-block">
<img src="{first}" width="{w}" height="{h}" style="display:block;max-width:100%;height:auto"><div>
<button type="button">pause</button>
<input type="range" min="0" max="{max(len(urls) - 1, 0)}" value="0" style="width:50%">
<span style="font-family:monospace">{html.escape(labels[0] if labels else "")}</span></div>
<script>(function () {{
  var root = document.getElementById("{uid}"), frames = {json.dumps(urls)},
      labels = {json.dumps(labels)}, img = root.querySelector("img"),
      button = root.querySelector("button"), slider = root.querySelector("input"),
      label = root.querySelector("span"), i = 0, timer = null;
  function show(k) {{ i = k; img.src = frames[k]; slider.value = k; label.textContent = labels[k]; }}
  function play() {{ timer = setInterval(function () {{ show((i + 1) % frames.length); }},
                                        {1000.0 / self.fps!r}); button.textContent = "pause"; }}
  function pause() {{ clearInterval(timer); timer = null; button.textContent = "play"; }}
  button.onclick = function () {{ if (timer) pause(); else play(); }};
  slider.oninput = function () {{ pause(); show(parseInt(slider.value, 10)); }};
  if (frames.length > 1) play(); else button.disabled = true;
}})();</script></div>"""

    def _repr_html_(self):
        return self.to_html5_video() if _ffmpeg() else self.to_jshtml()

    def save(self, path):
        """Write the animation: path ending in .mp4 or .gif (ffmpeg), .html (what the notebook
        shows), else a directory of PNG frames (made if missing; frames of the same names are
        replaced). Files are written whole or not at all (a temporary file renamed)."""
        path = os.fspath(path)
        ext = os.path.splitext(path)[1].lower()
        if ext not in (".mp4", ".gif", ".html"):
            os.makedirs(path, exist_ok=True)
            for s, f in zip(self.steps, self.frames):
                write_png(os.path.join(path, f"frame_{int(s):06d}.png"), f)
            return
        # a temporary beside it (made as any file is, under the umask), renamed when whole
        tmp = os.path.join(os.path.dirname(os.path.abspath(path)),
                           f".shoal-anim-{uuid.uuid4().hex}{ext}")
        try:
            if ext == ".html":
                text = "<!DOCTYPE html>\n<meta charset=\"utf-8\">\n" + self._repr_html_() + "\n"
                with open(tmp, "x", encoding="utf-8") as f:
                    f.write(text)
            elif ext == ".mp4" and self._mp4 is not None:
                with open(tmp, "xb") as f:
                    f.write(self._mp4)
            else:
                self._encode(tmp, ext[1:])
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def _centre(state):
    """The school's centre as `shoal render --in DIR --follow` takes it: float64 sums in row
    order, divided, rounded to float32."""
    n = len(state)
    return np.array([np.cumsum(state[:, k], dtype=np.float64)[-1] / n if n else 0.0
                     for k in range(3)]).astype(np.float32)


def animate(sim, steps=300, every=4, size=(640, 360), fps=None, eye=None, target=None,
            follow=None, fish_length=None, fov_deg=None, color=None, predators=True,
            radius=None, shade="lit", lod=True, threads=0):
    """Step a Simulation and draw a frame now and after every `every` steps up to `steps` (and
    after the last): a shoal.Animation, which a notebook shows as a video (ffmpeg) or a
    JavaScript player of PNG frames, and which saves as .mp4, .gif, .html or PNG frames.

    The camera: eye and target if given, else the scene file's [camera] (sim.camera), else
    the one framing the first state (shoal.frame_camera); it stays put, or with follow
    (default: the scene's `follow`) moves with the school's centre, keeping its offset, as
    `shoal render --in DIR [--follow]` moves it: a frame is the image that command draws of
    that state (tests/python compares them byte for byte). fish_length and fov_deg: the
    scene's, else 0.6 and 60. fps: default real time, 1 / (every * dt). color: None (by speed,
    as the program), "groups" (each frame's group_labels: the 8 largest groups apart, in
    the simulation's world with `radius`), per-fish colours (an (N,) 0xRRGGBB or (N, 3) RGB
    array), or fn(state) returning such colours. predators: draw the simulation's predators
    (red fish twice as long) as its window does.

    The simulation is held for the whole run (another call on it meanwhile is refused with
    RuntimeError) and keeps the steps done. Ctrl-C stops it (KeyboardInterrupt). Memory:
    frames * width * height * 3 bytes (76 frames of 640x360: 53 MB)."""
    steps = operator.index(steps)
    every = operator.index(every)
    if steps < 0 or every < 1:
        raise ValueError("animate: steps >= 0 and every >= 1")
    try:
        w, h = (operator.index(x) for x in size)
    except (TypeError, ValueError):
        raise TypeError("size: expected (width, height)") from None
    if (eye is None) != (target is None):
        raise ValueError("give both eye and target, or neither")
    cam = sim.camera
    fish_length = cam["fish_length"] if fish_length is None else float(fish_length)
    fov = cam["fov_deg"] if fov_deg is None else float(fov_deg)
    follow = cam["follow"] if follow is None else bool(follow)
    fps = 1.0 / (every * sim.dt) if fps is None else float(fps)
    if not fps > 0:
        raise ValueError("fps: expected a number > 0")
    if eye is None and cam["eye"] is not None:
        eye, target = cam["eye"], cam["target"]
    if isinstance(color, str) and color not in ("groups", "speed"):
        raise ValueError(f"color {color!r} (expected \"groups\", \"speed\", colours or a function)")
    groups = isinstance(color, str) and color == "groups"
    fixed = None if isinstance(color, str) or color is None or callable(color) else color
    renderer = Renderer(size=(w, h), fish_length=fish_length, shade=shade, lod=lod,
                        threads=threads)
    count = steps // every + 1 + (1 if steps % every else 0)
    frames = np.empty((count, h, w, 3), dtype=np.uint8)
    done, times = [], []
    view = {"eye": None if eye is None else np.array(eye, dtype=np.float32),
            "target": None if target is None else np.array(target, dtype=np.float32)}

    def draw(step, t, state, preds, stats, labels):
        if view["eye"] is None:  # the first state framed, as `shoal render --in` frames it
            e, g = frame_camera(state, size=(w, h), fish_length=fish_length, fov_deg=fov)
            view["eye"], view["target"] = np.float32(e), np.float32(g)
        if "offset" not in view:
            view["offset"] = view["eye"] - view["target"]  # float32, as the program's
        if follow:
            view["target"] = _centre(state)
            view["eye"] = view["target"] + view["offset"]
        col = color(state) if callable(color) else fixed
        frames[len(done)] = renderer.frame(
            state, eye=tuple(map(float, view["eye"])), target=tuple(map(float, view["target"])),
            color=col, group=labels if groups else None, fov_deg=fov,
            predators=preds if predators else False)
        done.append(step)
        times.append(t)

    sim._observe(steps, every, draw, labels=groups, radius=radius, threads=operator.index(threads))
    return Animation(frames, done, times, fps)
