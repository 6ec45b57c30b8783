#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Read a shoal VTK trajectory back with VTK's own reader (python3-vtk9) and compare it with
the .npy states of the same run, value for value.
Usage: vtk_check.py VTKDIR NPYDIR [SINGLE.vtp SINGLE.npy]. Exit 0 equal, 1 different, 77 no VTK."""
import os
import sys
import xml.etree.ElementTree as ET

try:
    import numpy as np
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
except ImportError:
    sys.exit(77)


def read_vtp(path):
    r = vtk.vtkXMLPolyDataReader()
    r.SetFileName(path)
    r.Update()
    if r.GetErrorCode():
        raise SystemExit(f"{path}: VTK reader error {r.GetErrorCode()}")
    pd = r.GetOutput()
    n = pd.GetNumberOfPoints()
    if pd.GetNumberOfVerts() != n:
        raise SystemExit(f"{path}: {pd.GetNumberOfVerts()} vertex cells for {n} points")
    p = vtk_to_numpy(pd.GetPoints().GetData())
    v = vtk_to_numpy(pd.GetPointData().GetArray("velocity"))
    s = vtk_to_numpy(pd.GetPointData().GetArray("speed"))
    fd = pd.GetFieldData().GetArray("TimeValue")
    t = fd.GetValue(0) if fd is not None else None
    return p, v, s, t


def same(path, npy, t=None):
    p, v, s, tv = read_vtp(path)
    ref = np.load(npy)
    if p.dtype != np.float32 or not np.array_equal(p, ref[:, 0:3]):
        raise SystemExit(f"{path}: points differ from {npy}")
    if not np.array_equal(v, ref[:, 3:6]):
        raise SystemExit(f"{path}: velocities differ from {npy}")
    vx, vy, vz = ref[:, 3], ref[:, 4], ref[:, 5]
    speed = np.sqrt((vx * vx + vy * vy) + vz * vz)
    if not np.array_equal(s, speed):
        raise SystemExit(f"{path}: speed differs from |v|")
    if t is not None and tv != t:
        raise SystemExit(f"{path}: TimeValue {tv}, the collection says {t}")


vdir, ndir = sys.argv[1], sys.argv[2]
root = ET.parse(os.path.join(vdir, "trajectory.pvd")).getroot()
sets = root.findall("./Collection/DataSet")
if not sets:
    raise SystemExit("trajectory.pvd lists no data sets")
for ds in sets:
    f = ds.get("file")
    same(os.path.join(vdir, f), os.path.join(ndir, f.replace(".vtp", ".npy")),
         float(ds.get("timestep")))
if len(sys.argv) > 4:
    same(sys.argv[3], sys.argv[4])
print(f"vtk_check: {len(sets)} frames equal")
