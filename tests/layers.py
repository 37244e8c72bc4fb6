#!/usr/bin/env python3
"""layers.py - checks that libktime's layers call one way (src/layers.txt) on the built objects.

usage: layers.py SRC_DIR BUILD_DIR   (TAP on stdout; the last test plants a circle and an
                                     upward call in a scratch tree and expects both found)

A call is an undefined symbol of one object (nm) that another object defines. Each object
belongs to the layer of the folder its source is in (src/LAYER/NAME.c). Checks: every folder
of src/ is a layer, every layer has objects, no object calls an object of a layer above its
own, and no objects call each other in a circle (within a layer too). A "unit" line of
layers.txt names files that are one piece of code split by size (a recursive-descent reader):
they may call each other, and count as one file for the circle check.
"""
import os
import subprocess
import sys
import tempfile


def read_lines(src):
    with open(os.path.join(src, "src", "layers.txt")) as f:
        return [ln.split("#")[0].strip() for ln in f if ln.split("#")[0].strip()]


def read_layers(src):
    return [ln for ln in read_lines(src) if not ln.startswith("unit ")]


def read_units(src):
    """{"src/LAYER/NAME.c": unit name} from the lines "unit LAYER/NAME.c LAYER/NAME2.c ..."."""
    units = {}
    for ln in read_lines(src):
        if ln.startswith("unit "):
            files = ln.split()[1:]
            for f in files:
                units["src/" + f] = "unit " + " ".join(files)
    return units


def objects(build, layers):
    """{object path: layer} for the position-independent objects of every layer's folder."""
    found = {}
    for layer in layers:
        d = os.path.join(build, "src", layer, ".libs")
        if not os.path.isdir(d):
            d = os.path.join(build, "src", layer)
        if os.path.isdir(d):
            for n in sorted(os.listdir(d)):
                if n.endswith(".o"):
                    found[os.path.join(d, n)] = layer
    return found


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 2 and p[0] == "U":
            undefined.add(p[1])
        elif len(p) == 3 and p[1] in "TDBRVWGSCIi":
            defined.add(p[2])
    return defined, undefined


def short(obj):
    """src/LAYER/NAME for libtool's .libs/libx_la-NAME.o."""
    layer = os.path.basename(os.path.dirname(os.path.dirname(obj))) \
        if os.path.basename(os.path.dirname(obj)) == ".libs" else os.path.basename(os.path.dirname(obj))
    name = os.path.basename(obj)[:-2].split("-", 1)[-1]
    return "src/%s/%s.c" % (layer, name)


def edges_of(objs):
    owner, undef = {}, {}
    for o in objs:
        d, u = symbols(o)
        undef[o] = u
        for s in d:
            owner.setdefault(s, o)
    edges = {}
    for o, us in undef.items():
        for s in us:
            t = owner.get(s)
            if t and t != o:
                edges.setdefault(o, {}).setdefault(t, []).append(s)
    return edges


def circles(nodes, edges):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(edges.get(root, {})))]
        index[root] = low[root] = n[0]; n[0] += 1; stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(edges.get(w, {}))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def check(src, build):
    """Returns a list of (ok, description, diagnostic lines)."""
    layers = read_layers(src)
    rank = {l: i for i, l in enumerate(layers)}
    results = []
    folders = sorted(d for d in os.listdir(os.path.join(src, "src"))
                     if os.path.isdir(os.path.join(src, "src", d)))
    extra = [d for d in folders if d not in rank]
    results.append((not extra, "every folder of src/ is a layer in src/layers.txt",
                    ["not a layer: src/%s" % d for d in extra]))
    objs = objects(build, layers)
    empty = [l for l in layers if l not in objs.values()]
    results.append((not empty, "every layer has built objects (%d objects)" % len(objs),
                    ["no objects in src/%s" % l for l in empty]))
    edges = edges_of(objs)
    up = []
    for a, ts in sorted(edges.items()):
        for b, syms in sorted(ts.items()):
            if rank[objs[a]] > rank[objs[b]]:
                up.append("%s (%s) calls up into %s (%s): %s" % (
                    short(a), objs[a], short(b), objs[b], ", ".join(sorted(syms))))
    results.append((not up, "no call up a layer (%d calls between files)" %
                    sum(len(t) for t in edges.values()), up))
    units = read_units(src)
    missing = sorted(f for f in units if f not in {short(o) for o in objs})
    results.append((not missing, "every file of a unit in src/layers.txt is built (%d)" %
                    len(units), ["not built: %s" % f for f in missing]))
    node = {o: units.get(short(o), o) for o in objs}
    merged = {}
    for a, ts in edges.items():
        for b, syms in ts.items():
            if node[a] != node[b]:
                merged.setdefault(node[a], {}).setdefault(node[b], []).extend(syms)
    circ = circles(sorted(set(node.values())), merged)
    diag = []
    for c in circ:
        name = lambda o: o if o.startswith("unit ") else short(o)
        diag.append("circle: " + ", ".join(name(o) for o in c))
        for a in c:
            for b, syms in sorted(merged.get(a, {}).items()):
                if b in c:
                    diag.append("  %s -> %s: %s" % (name(a), name(b), ", ".join(sorted(syms))))
    results.append((not circ, "no files call each other in a circle", diag))
    return results


def tap(results):
    print("1..%d" % len(results))
    bad = 0
    for i, (ok, desc, diag) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, desc))
        if not ok:
            bad += 1
            for d in diag:
                print("# " + d)
    return bad


def selftest():
    """A tree with a circle in one layer and a call up: the check must fail both. Returns one
    result as check() does."""
    with tempfile.TemporaryDirectory() as t:
        src, build = os.path.join(t, "s"), os.path.join(t, "b")
        code = {"top/a.c": "int b(void); int a(void) { return b(); }",
                "low/b.c": "int c(void); int b(void) { return c(); }",
                "low/c.c": "int b(void); int a(void); int c(void) { return b() + a(); }",
                "low/d.c": "int e(void); int d(void) { return e(); }",
                "low/e.c": "int d(void); int e(void) { return d(); }"}
        os.makedirs(os.path.join(src, "src"))
        with open(os.path.join(src, "src", "layers.txt"), "w") as f:
            f.write("top\nlow\nunit low/d.c low/e.c\n")
        for rel, text in code.items():
            os.makedirs(os.path.join(src, "src", os.path.dirname(rel)), exist_ok=True)
            os.makedirs(os.path.join(build, "src", os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(src, "src", rel), "w") as f:
                f.write(text + "\n")
            subprocess.run([os.environ.get("CC", "cc"), "-c", "-o",
                            os.path.join(build, "src", rel[:-2] + ".o"),
                            os.path.join(src, "src", rel)], check=True)
        res = check(src, build)
        got = [ok for ok, _, _ in res]
        circ = [d for d in res[-1][2] if d.startswith("circle")]
        good = got == [True, True, False, True, False] and circ == [
            "circle: src/low/b.c, src/low/c.c, src/top/a.c"]
        return (good, "the check itself finds a planted circle and a planted upward call, "
                "and lets the files of a unit call each other", ["got %s %s" % (got, circ)])


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(1 if tap(check(sys.argv[1], sys.argv[2]) + [selftest()]) else 0)
