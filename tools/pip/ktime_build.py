"""ktime_build.py - the PEP 517 build backend of `pip install .` and `pip wheel .`.

It builds ktime as `make install` does (configure, make, make install into a staging folder)
and packs what that installed into a wheel: the Python package `ktime` (the console script
`ktime`, which runs the launcher) with the installed tree under ktime/_root (bin/ktime,
lib/libktime.so, lib/pkgconfig/ktime.pc, include/ktime.h, libexec/ktime/ktime-render and
ktime-settings, share/ktime/ktime_tool.py, the man pages). The launcher finds everything
relative to itself, so the tree works wherever pip puts it (a virtual environment, --user, a
moved environment). No extension module: the wheel is py3-none-<platform>, for any Python 3.

Standard library only, so that pip needs nothing from a package index (requires = [] in
pyproject.toml): it builds offline, with or without build isolation.

Settings (pip's --config-settings KEY=VALUE, or the environment):
  configure-args / CONFIGURE_FLAGS   more arguments for configure (--with-cuda=DIR, CC=...)
  jobs / KTIME_BUILD_JOBS            make's -j (default: the number of CPUs)
"""

import base64
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

NAME = "ktime"
HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_SRC = os.path.join(HERE, "ktime")
SUMMARY = "GPU time per CUDA kernel of an unmodified program (an LD_PRELOAD library)"


class BuildError(Exception):
    pass


def _source_dir():
    """The source tree: pip runs the backend in the folder holding pyproject.toml."""
    top = os.path.abspath(os.getcwd())
    if not os.path.isfile(os.path.join(top, "configure.ac")):
        top = os.path.dirname(os.path.dirname(HERE))
    if not os.path.isfile(os.path.join(top, "configure.ac")):
        raise BuildError("ktime_build: no configure.ac in %s: not a ktime source tree" % top)
    return top


def _version(top):
    with open(os.path.join(top, "configure.ac"), encoding="utf-8") as f:
        m = re.search(r"AC_INIT\(\[ktime\],\s*\[([^\]]+)\]", f.read())
    if not m:
        raise BuildError("ktime_build: no version in configure.ac's AC_INIT")
    return m.group(1)


def _tag():
    """py3-none-PLATFORM: a bundled library and scripts, for any Python 3."""
    plat = re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())
    return "py3-none-" + plat


def _setting(config_settings, key, env):
    v = (config_settings or {}).get(key)
    if isinstance(v, list):
        v = " ".join(v)
    return v if v is not None else os.environ.get(env, "")


def _run(cmd, cwd, log):
    """Runs cmd; its output goes to the log (shown in full when it fails)."""
    log.write("$ %s\n" % " ".join(shlex.quote(c) for c in cmd))
    log.flush()
    try:
        rc = subprocess.call(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    except OSError as e:
        raise BuildError("ktime_build: cannot run %s: %s" % (cmd[0], e.strerror or e))
    if rc != 0:
        raise BuildError("ktime_build: '%s' failed (status %d) in %s" % (" ".join(cmd), rc, cwd))


def _build_tree(top, stage, config_settings, log):
    """configure, make and make install DESTDIR=stage; returns the installed prefix in stage."""
    if os.path.exists(os.path.join(top, "config.status")):
        # Configured in place (./configure run there): autoconf builds such a tree nowhere
        # else, so the build is of a clean copy of its sources (make distdir).
        copy = os.path.join(stage, "src")
        _run(["make", "distdir", "distdir=" + copy], top, log)
        top = copy
    elif not os.path.isfile(os.path.join(top, "configure")):
        _run(["autoreconf", "-fi"], top, log)
    build = os.path.join(stage, "build")
    dest = os.path.join(stage, "dest")
    os.makedirs(build)
    prefix = "/usr/local"
    args = shlex.split(_setting(config_settings, "configure-args", "CONFIGURE_FLAGS"))
    _run([os.path.join(top, "configure"), "-q", "--prefix=" + prefix] + args, build, log)
    jobs = _setting(config_settings, "jobs", "KTIME_BUILD_JOBS") or str(os.cpu_count() or 1)
    _run(["make", "-j" + jobs], build, log)
    _run(["make", "install-strip", "DESTDIR=" + dest], build, log)
    root = os.path.join(dest, prefix.lstrip("/"))
    for need in ("bin/ktime", "lib/libktime.so", "include/ktime.h", "libexec/ktime/ktime-render",
                 "libexec/ktime/ktime-settings", "share/ktime/ktime_tool.py"):
        if not os.path.isfile(os.path.join(root, need)):
            raise BuildError("ktime_build: make install put no %s" % need)
    return root


def _metadata(version):
    readme = ""
    top = _source_dir()
    try:
        with open(os.path.join(top, "README.md"), encoding="utf-8") as f:
            readme = f.read()
    except OSError:
        pass
    head = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
            "License: see the source tree\nRequires-Python: >=3.6\n"
            "Classifier: Operating System :: POSIX :: Linux\n"
            "Classifier: Environment :: GPU :: NVIDIA CUDA\n"
            "Description-Content-Type: text/markdown\n" % (NAME, version, SUMMARY))
    return head + "\n" + readme


def _dist_info_files(version, tag):
    return {
        "METADATA": _metadata(version),
        "WHEEL": "Wheel-Version: 1.0\nGenerator: ktime_build\nRoot-Is-Purelib: false\nTag: %s\n" % tag,
        "entry_points.txt": "[console_scripts]\nktime = ktime:main\n",
        "top_level.txt": "ktime\n",
    }


def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


class _Wheel:
    def __init__(self, path):
        self.zf = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.record = []

    def add(self, arcname, data, mode=0o644):
        if isinstance(data, str):
            data = data.encode("utf-8")
        zi = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        zi.external_attr = (0o100000 | mode) << 16
        zi.compress_type = zipfile.ZIP_DEFLATED
        self.zf.writestr(zi, data)
        self.record.append("%s,%s,%d" % (arcname, _digest(data), len(data)))

    def add_file(self, arcname, path):
        with open(path, "rb") as f:
            data = f.read()
        self.add(arcname, data, 0o755 if os.access(path, os.X_OK) else 0o644)

    def close(self, record_name):
        self.record.append("%s,," % record_name)
        self.zf.writestr(zipfile.ZipInfo(record_name, date_time=(2020, 1, 1, 0, 0, 0)),
                         "\n".join(self.record) + "\n")
        self.zf.close()


# ---------------------------------------------------------------- the PEP 517 hooks

def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version(_source_dir())
    name = "%s-%s.dist-info" % (NAME, version)
    d = os.path.join(metadata_directory, name)
    os.makedirs(d, exist_ok=True)
    for fn, text in _dist_info_files(version, _tag()).items():
        with open(os.path.join(d, fn), "w", encoding="utf-8") as f:
            f.write(text)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    top = _source_dir()
    version = _version(top)
    tag = _tag()
    stage = tempfile.mkdtemp(prefix="ktime-wheel-")
    logname = os.path.join(stage, "build.log")
    try:
        with open(logname, "w") as log:
            try:
                root = _build_tree(top, stage, config_settings, log)
            except BuildError:
                log.flush()
                with open(logname, errors="replace") as f:
                    sys.stderr.write("".join(f.readlines()[-60:]))
                raise
        fname = "%s-%s-%s.whl" % (NAME, version, tag)
        out = os.path.join(wheel_directory, fname)
        w = _Wheel(out)
        for fn in sorted(os.listdir(PACKAGE_SRC)):
            if fn.endswith(".py"):
                w.add_file("ktime/" + fn, os.path.join(PACKAGE_SRC, fn))
        for d, dirs, files in os.walk(root):
            dirs.sort()
            for fn in sorted(files):
                p = os.path.join(d, fn)
                rel = os.path.relpath(p, root)
                if rel.startswith("share" + os.sep + "doc" + os.sep):
                    continue  # the docs are the source tree's; the man pages are kept
                if os.path.islink(p):
                    continue
                w.add_file("ktime/_root/" + rel.replace(os.sep, "/"), p)
        info = "%s-%s.dist-info" % (NAME, version)
        for fn, text in _dist_info_files(version, tag).items():
            w.add("%s/%s" % (info, fn), text)
        w.close(info + "/RECORD")
        return fname
    except BuildError as e:
        sys.stderr.write("%s\n" % e)
        raise
    finally:
        shutil.rmtree(stage, ignore_errors=True)
