#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate the fish meshes of the renderer: assets/fish.obj, assets/fish_lod1.obj and
assets/fish_lod2.obj.

Owns the shape only. Each mesh is a union of closed components (body, tail fin, dorsal fin;
fins are thin closed wedges so that every component stays closed), modelled facing +Z with +Y
up, length 1 along Z (z in [-0.5, 0.5]), centred at the origin. Faces are oriented by
propagation across shared edges and then flipped per component so that the signed volume is
positive: counter-clockwise front faces seen from outside. The script checks what the renderer
relies on (every edge used by exactly two triangles in opposite directions, positive volume,
no zero-area triangle) and refuses to write a mesh that fails.

Usage: python3 tools/gen_fish_mesh.py [ASSET_DIR]     (default: assets/ beside tools/)
Pure Python 3, no dependencies; output is deterministic.
"""
import math
import os
import sys


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


class Mesh:
    def __init__(self):
        self.v = []
        self.f = []

    def add_component(self, verts, tris):
        base = len(self.v)
        self.v.extend(verts)
        tris = [tuple(base + i for i in t) for t in tris]
        tris = orient(tris)
        if signed_volume(self.v, tris) < 0:
            tris = [(a, c, b) for (a, b, c) in tris]
        self.f.extend(tris)


def orient(tris):
    """Make the orientation consistent over each connected set of triangles (BFS over edges)."""
    edge_tris = {}
    for i, (a, b, c) in enumerate(tris):
        for e in ((a, b), (b, c), (c, a)):
            edge_tris.setdefault(frozenset(e), []).append(i)
    out = list(tris)
    done = [False] * len(tris)
    for start in range(len(tris)):
        if done[start]:
            continue
        done[start] = True
        queue = [start]
        while queue:
            i = queue.pop()
            a, b, c = out[i]
            for (p, q) in ((a, b), (b, c), (c, a)):
                for j in edge_tris[frozenset((p, q))]:
                    if done[j]:
                        continue
                    x, y, z = out[j]
                    # a neighbour must use the shared edge as q -> p
                    if (p, q) in ((x, y), (y, z), (z, x)):
                        out[j] = (x, z, y)
                    done[j] = True
                    queue.append(j)
    return out


def signed_volume(v, tris):
    vol = 0.0
    for a, b, c in tris:
        vol += dot(v[a], cross(v[b], v[c])) / 6.0
    return vol


def check(mesh, name):
    directed = {}
    for t in mesh.f:
        a, b, c = t
        n = cross(sub(mesh.v[b], mesh.v[a]), sub(mesh.v[c], mesh.v[a]))
        if dot(n, n) == 0.0:
            raise SystemExit("%s: zero-area triangle %s" % (name, t))
        for e in ((a, b), (b, c), (c, a)):
            if e in directed:
                raise SystemExit("%s: directed edge %s used twice" % (name, e))
            directed[e] = True
    for (a, b) in directed:
        if (b, a) not in directed:
            raise SystemExit("%s: edge %s has no opposite (mesh not closed)" % (name, (a, b)))
    vol = signed_volume(mesh.v, mesh.f)
    if vol <= 0:
        raise SystemExit("%s: signed volume %g <= 0" % (name, vol))
    zs = [p[2] for p in mesh.v]
    if abs(min(zs) + 0.5) > 1e-9 or abs(max(zs) - 0.5) > 1e-9:
        raise SystemExit("%s: z range [%g, %g] is not [-0.5, 0.5]" % (name, min(zs), max(zs)))
    return vol


def body(rings, nose_z, tail_z, seg):
    """A lofted body: nose point, elliptical rings (z, half width, half height, y centre),
    a tail point. Triangles between consecutive rings, fans at the ends."""
    verts = [(0.0, rings[0][3], nose_z)]
    for (z, w, h, yc) in rings:
        for k in range(seg):
            a = 2.0 * math.pi * k / seg
            verts.append((w * math.cos(a), yc + h * math.sin(a), z))
    verts.append((0.0, rings[-1][3], tail_z))
    tris = []
    for k in range(seg):
        tris.append((0, 1 + k, 1 + (k + 1) % seg))
    for r in range(len(rings) - 1):
        b0, b1 = 1 + r * seg, 1 + (r + 1) * seg
        for k in range(seg):
            k1 = (k + 1) % seg
            tris.append((b0 + k, b1 + k, b1 + k1))
            tris.append((b0 + k, b1 + k1, b0 + k1))
    last = len(verts) - 1
    b = 1 + (len(rings) - 1) * seg
    for k in range(seg):
        tris.append((last, b + (k + 1) % seg, b + k))
    return verts, tris


def tail_fin(root_z, thick, tip_z, span, notch_z, root_h):
    """Forked tail: outline top root -> upper tip -> notch -> lower tip -> bottom root in the
    x = 0 plane, two root points at x = +-thick make it a closed thin wedge."""
    v = [(-thick, 0.0, root_z), (thick, 0.0, root_z),          # 0 R_l, 1 R_r
         (0.0, root_h, root_z + 0.01), (0.0, span, tip_z),     # 2 T, 3 U
         (0.0, 0.0, notch_z), (0.0, -span, tip_z),             # 4 N, 5 D
         (0.0, -root_h, root_z + 0.01)]                        # 6 B
    outline = [2, 3, 4, 5, 6]
    t = []
    for i in range(len(outline) - 1):
        t.append((0, outline[i], outline[i + 1]))
        t.append((1, outline[i + 1], outline[i]))
    t.append((0, 1, 2))
    t.append((0, 6, 1))
    return v, t


def tetra(a, b, c, d):
    return [a, b, c, d], [(0, 1, 2), (0, 3, 1), (1, 3, 2), (0, 2, 3)]


def fish_full():
    m = Mesh()
    # (z, half width, half height, y centre): a fusiform body, deepest just behind the head
    rings = [(0.40, 0.050, 0.070, 0.000),
             (0.27, 0.095, 0.140, 0.005),
             (0.08, 0.110, 0.165, 0.010),
             (-0.09, 0.075, 0.110, 0.005),
             (-0.20, 0.030, 0.045, 0.000)]
    m.add_component(*body(rings, 0.5, -0.27, 8))
    m.add_component(*tail_fin(-0.22, 0.012, -0.5, 0.19, -0.40, 0.035))
    # dorsal fin: a thin tetrahedron standing on the back, leaning backwards
    m.add_component(*tetra((-0.012, 0.150, 0.14), (0.012, 0.150, 0.14),
                           (0.0, 0.120, -0.07), (0.0, 0.290, -0.09)))
    return m


def fish_lod1():
    m = Mesh()
    rings = [(0.20, 0.100, 0.155, 0.005),
             (-0.12, 0.060, 0.090, 0.004)]
    m.add_component(*body(rings, 0.5, -0.26, 4))
    m.add_component(*tetra((-0.012, 0.0, -0.21), (0.012, 0.0, -0.21),
                           (0.0, 0.19, -0.5), (0.0, -0.19, -0.5)))
    return m


def fish_lod2():
    """A handful of triangles for fish a few pixels long: a diamond body (nose, a ring of 4 at
    the widest point, the tail's root) and the tail as one triangle drawn from both sides (two
    faces with opposite windings: whichever faces the camera is drawn). 9 vertices, 10
    triangles, of which about 5 face the camera."""
    m = Mesh()
    m.add_component(*body([(0.12, 0.100, 0.160, 0.005)], 0.5, -0.25, 4))
    m.add_component([(0.0, 0.0, -0.23), (0.0, 0.19, -0.5), (0.0, -0.19, -0.5)],
                    [(0, 1, 2), (0, 2, 1)])
    return m


def write_obj(mesh, path, title):
    lines = ["# " + title,
             "# generated by tools/gen_fish_mesh.py; do not edit by hand",
             "# %d vertices, %d triangles; facing +Z, +Y up, length 1 along Z, CCW front faces"
             % (len(mesh.v), len(mesh.f))]
    for p in mesh.v:
        lines.append("v %.6f %.6f %.6f" % p)
    for (a, b, c) in mesh.f:
        lines.append("f %d %d %d" % (a + 1, b + 1, c + 1))
    data = "\n".join(lines) + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(data)
    os.replace(tmp, path)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "assets")
    for name, mesh, title in (("fish.obj", fish_full(), "shoal fish, full detail"),
                              ("fish_lod1.obj", fish_lod1(), "shoal fish, reduced (LOD 1)"),
                              ("fish_lod2.obj", fish_lod2(), "shoal fish, coarse (LOD 2)")):
        vol = check(mesh, name)
        write_obj(mesh, os.path.join(out, name), title)
        print("%s: %d vertices, %d triangles, volume %.5f" % (name, len(mesh.v), len(mesh.f), vol))


if __name__ == "__main__":
    main()
