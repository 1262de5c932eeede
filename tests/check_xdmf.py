#!/usr/bin/env python3
"""Check every <base>.xmf in DIR (or one .xmf file): an XDMF 3 temporal collection with one grid
per frame, Time = that frame's generation (as the index lists them), a (H+1) x (W+1) node mesh so
there is one cell per Life cell, and a cell-centred attribute whose HyperSlab picks one frame of
an existing chunk file's /frames of the declared shape, a frame whose generation is the Time.

usage: check_xdmf.py DIR|FILE.xmf"""
import glob
import os
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

failures = []


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
    expect(topo is not None and topo.get("TopologyType") == "2DCoRectMesh"
           and ints(topo.get("Dimensions")) == [h + 1, rb + 1],
           "%s: topology %s" % (name, topo.attrib if topo is not None else None))
    geo = grid.find("Geometry")
    expect(geo is not None and geo.get("GeometryType") == "ORIGIN_DXDY"
           and len(geo.findall("DataItem")) == 2, "%s: geometry" % name)
    attrs = grid.findall("Attribute")
    expect(len(attrs) == 1, "%s: %d attributes" % (name, len(attrs)))
    if not attrs:
        return t
    a = attrs[0]
    expect(a.get("Center") == "Cell" and a.get("Name") == ("alive_packed_lsb" if packed else "alive"),
           "%s: attribute %s" % (name, a.attrib))
    slab = a.find("DataItem")
    expect(slab is not None and slab.get("ItemType") == "HyperSlab"
           and ints(slab.get("Dimensions")) == [1, h, rb], "%s: hyperslab %s" % (name, slab.attrib))
    sel, src = slab.findall("DataItem")
    s = ints(sel.text)
    expect(ints(sel.get("Dimensions")) == [3, 3] and len(s) == 9 and s[1:3] == [0, 0]
           and s[3:6] == [1, 1, 1] and s[6:9] == [1, h, rb], "%s: selection %s" % (name, s))
    expect(src.get("Format") == "HDF" and src.get("NumberType") == "UChar"
           and src.get("Precision") == "1", "%s: source %s" % (name, src.attrib))
    fname, _, dset = src.text.strip().partition(":")
    expect("/" not in fname and dset == "/frames", "%s: source %s" % (name, src.text))
    path = os.path.join(xdir, fname)
    expect(os.path.exists(path), "%s: %s does not exist" % (name, path))
    if not os.path.exists(path):
        return t
    f = files.setdefault(path, h5py.File(path, "r"))
    fr = f[dset]
    expect(list(fr.shape) == ints(src.get("Dimensions")) and fr.dtype == np.uint8,
           "%s: %s%s is %s %s, the XMF says %s" % (name, fname, dset, fr.shape, fr.dtype,
                                                   src.get("Dimensions")))
    expect(0 <= s[0] < fr.shape[0] and int(f["generations"][s[0]]) == t,
           "%s: frame %d of %s is not generation %s" % (name, s[0], fname, t))
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


def main():
    arg = sys.argv[1]
    xmfs = [arg] if arg.endswith(".xmf") else sorted(glob.glob(os.path.join(arg, "*.xmf")))
    expect(len(xmfs) > 0, "no .xmf in %s" % arg)
    n = sum(check_xmf(x) for x in xmfs)
    if failures:
        print("check_xdmf: %d failures" % len(failures))
        return 1
    print("check_xdmf: %d files, %d frames ok" % (len(xmfs), n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
