#!/usr/bin/env python3
"""Check every <base>.xmf in DIR (or one .xmf file): an XDMF 3 temporal collection with one grid
per frame, Time = that frame's generation (as the index lists them), a 1 x (H+1) x (W+1) node
mesh (a 2-D image of W x H cells, one per Life cell) whose origin is y = H with y spacing -1, so
row 0 is at the top, and one cell-centred attribute naming an existing 2-D dataset
"<chunk>:/frames_2d/<f>" of shape [H, W] that holds frame f of that chunk's /frames, the frame
whose generation is the Time. Every chunk name is relative (the run directory can move) and the
XML parses, so any &, <, > or quote in a name was escaped.

With --vtk (a Python that has the vtk package; h5py is not needed) it reads the runs that
test_io_roundtrip left in DIR through VTK's XDMF readers, the legacy one and Xdmf3 (ParaView's
default), and compares every cell of every time step with the known pattern.

Exits 1 when something is wrong or nothing was checked, and 77 (ctest: skipped) when this Python
lacks a module the mode needs (numpy and h5py, or numpy and vtk).

usage: check_xdmf.py DIR|FILE.xmf
       check_xdmf.py --vtk DIR"""
import glob
import os
import sys
import xml.etree.ElementTree as ET

# Without the modules a mode needs, it exits 77: ctest reports it skipped, never absent.
try:
    import numpy as np
except Exception as e:
    np, no_numpy = None, e
try:
    import h5py
except Exception as e:  # only --vtk runs without it (a vtk venv may carry an incompatible numpy)
    h5py, no_h5py = None, e

SKIP = 77
failures = []


def skip(why):
    print("SKIP: %s %s" % (sys.executable, why))
    sys.exit(SKIP)


def expect(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAILED:", msg, file=sys.stderr)


def ints(s):
    return [int(v) for v in s.split()]


def check_grid(xdir, grid, index_attrs, files):
    h, w = int(index_attrs["height"]), int(index_attrs["width"])
    packed = index_attrs["encoding"] in (b"packed-lsb", "packed-lsb")
    rb = (w + 7) // 8 if packed else w
    name = grid.get("Name")
    time = grid.find("Time")
    t = int(time.get("Value")) if time is not None else None
    topo = grid.find("Topology")
    expect(topo is not None and topo.get("TopologyType") == "3DCoRectMesh"
           and ints(topo.get("Dimensions")) == [1, h + 1, rb + 1],
           "%s: topology %s" % (name, topo.attrib if topo is not None else None))
    geo = grid.find("Geometry")
    items = geo.findall("DataItem") if geo is not None else []
    expect(geo is not None and geo.get("GeometryType") == "ORIGIN_DXDYDZ" and len(items) == 2
           and [float(v) for v in items[0].text.split()] == [0, h, 0]
           and [float(v) for v in items[1].text.split()] == [1, -1, 1],
           "%s: geometry (origin z y x = 0 H 0, spacing 1 -1 1)" % name)
    attrs = grid.findall("Attribute")
    expect(len(attrs) == 1, "%s: %d attributes" % (name, len(attrs)))
    if not attrs:
        return t
    a = attrs[0]
    expect(a.get("Center") == "Cell" and a.get("Name") == ("alive_packed_lsb" if packed else "alive"),
           "%s: attribute %s" % (name, a.attrib))
    srcs = a.findall("DataItem")
    expect(len(srcs) == 1, "%s: %d data items" % (name, len(srcs)))
    if len(srcs) != 1:
        return t
    src = srcs[0]
    expect(src.get("Format") == "HDF" and src.get("NumberType") == "UChar"
           and src.get("Precision") == "1" and src.get("ItemType") in (None, "Uniform")
           and ints(src.get("Dimensions")) == [h, rb], "%s: source %s" % (name, src.attrib))
    fname, _, dset = src.text.strip().partition(":")
    expect("/" not in fname and dset.startswith("/frames_2d/"),
           "%s: source %s" % (name, src.text))
    path = os.path.join(xdir, fname)
    expect(os.path.exists(path), "%s: %s does not exist" % (name, path))
    if not os.path.exists(path) or not dset.startswith("/frames_2d/"):
        return t
    if path not in files:
        files[path] = h5py.File(path, "r")
    f = files[path]
    expect(dset in f, "%s: %s has no %s" % (name, fname, dset))
    if dset not in f:
        return t
    view, frames = f[dset], f["frames"]
    expect(list(view.shape) == [h, rb] and view.dtype == np.uint8,
           "%s: %s%s is %s %s, the XMF says %s" % (name, fname, dset, view.shape, view.dtype,
                                                   src.get("Dimensions")))
    k = int(dset.rsplit("/", 1)[1])
    expect(0 <= k < frames.shape[0] and int(f["generations"][k]) == t,
           "%s: frame %d of %s is not generation %s" % (name, k, fname, t))
    if 0 <= k < frames.shape[0]:
        expect(np.array_equal(view[()], frames[k]),
               "%s: %s%s differs from /frames[%d]" % (name, fname, dset, k))
    return t


def check_xmf(xmf):
    xdir = os.path.dirname(os.path.abspath(xmf))
    index = xmf[:-4] + ".h5"
    root = ET.parse(xmf).getroot()
    expect(root.tag == "Xdmf" and root.get("Version", "").startswith("3"), "%s: root" % xmf)
    coll = root.find("Domain/Grid")
    expect(coll is not None and coll.get("GridType") == "Collection"
           and coll.get("CollectionType") == "Temporal", "%s: no temporal collection" % xmf)
    with h5py.File(index, "r") as f:
        gens = f["generations"][()].tolist()
        index_attrs = dict(f.attrs)
    files = {}
    try:
        times = [check_grid(xdir, g, index_attrs, files) for g in coll.findall("Grid")]
    finally:
        for f in files.values():
            f.close()
    expect(times == gens, "%s: times %s, generations %s" % (xmf, times, gens))
    return len(times)


def check_vtk(d):
    """What ParaView shows: its default XDMF reader (Xdmf3, what File > Open picks for .xmf) must
    give, at each time step, a flat W x H image, row 0 at the top, of the pattern at that
    generation. (The legacy XDMF reader reads the mesh but not the cell data of a one-layer grid.)"""
    import json
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
    n = 0
    for mpath in sorted(glob.glob(os.path.join(d, "*.manifest.json"))):
        with open(mpath) as fp:
            m = json.load(fp)
        w, h, packed = m["width"], m["height"], m["encoding"] == "packed-lsb"
        reader = vtk.vtkXdmf3Reader()
        # a path with a directory: Xdmf3 glues a bare "x.xmf" to the chunk names (see io/xdmf.c)
        reader.SetFileName(os.path.abspath(os.path.join(d, m["base"] + ".xmf")))
        reader.UpdateInformation()
        times = reader.GetOutputInformation(0).Get(vtk.vtkStreamingDemandDrivenPipeline.TIME_STEPS())
        expect(times is not None and len(times) > 0, "%s: VTK sees no time steps" % m["base"])
        for t in times or ():
            reader.UpdateTimeStep(t)
            img = reader.GetOutputDataObject(0)
            rb = (w + 7) // 8 if packed else w
            expect(img.GetDimensions() == (rb + 1, h + 1, 1) and img.GetOrigin() == (0, h, 0)
                   and img.GetSpacing() == (1, -1, 1), "%s: VTK image %s origin %s spacing %s"
                   % (m["base"], img.GetDimensions(), img.GetOrigin(), img.GetSpacing()))
            arr = img.GetCellData().GetArray("alive_packed_lsb" if packed else "alive")
            expect(arr is not None, "%s: no cell array at time %g" % (m["base"], t))
            if arr is None:
                continue
            y, x = np.mgrid[0:h, 0:w]
            want = ((7 * x + 13 * y + 31 * int(t)) % 101 < 30).astype(np.uint8)
            if packed:
                want = np.packbits(want, axis=1, bitorder="little")
            got = vtk_to_numpy(arr)
            expect(got.size == want.size and np.array_equal(got, want.ravel()),
                   "%s: VTK shows another frame at time %g" % (m["base"], t))
            n += 1
    return n


def main():
    if np is None:
        skip("cannot import numpy (%s)" % no_numpy)
    if sys.argv[1] == "--vtk":
        try:
            import vtk  # noqa: F401
        except Exception as e:
            skip("cannot import vtk (%s)" % e)
        n = check_vtk(sys.argv[2])
        # a folder without runs must not pass: nothing was shown to be right
        expect(n > 0, "no time step checked in %s (no <base>.manifest.json runs there?)"
               % sys.argv[2])
        if failures:
            print("check_xdmf --vtk: %d failures" % len(failures))
            return 1
        print("check_xdmf --vtk: %d time steps ok" % n)
        return 0
    if h5py is None:
        skip("cannot import h5py (%s)" % no_h5py)
    arg = sys.argv[1]
    xmfs = [arg] if arg.endswith(".xmf") else sorted(glob.glob(os.path.join(arg, "*.xmf")))
    expect(len(xmfs) > 0, "no .xmf in %s" % arg)
    n = sum(check_xmf(x) for x in xmfs)
    expect(not xmfs or n > 0, "no frame checked in %s" % arg)
    if failures:
        print("check_xdmf: %d failures" % len(failures))
        return 1
    print("check_xdmf: %d files, %d frames ok" % (len(xmfs), n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
