"""ktime, installed by pip: the `ktime` command and where its files are.

The wheel holds ktime's installed tree under _root (as `make install` lays it out): the
launcher bin/ktime, lib/libktime.so, include/ktime.h, lib/pkgconfig/ktime.pc, the offline
tools. The console script `ktime` (and `python3 -m ktime`) runs the launcher, which finds the
rest relative to itself, wherever this package is.

    ktime ./app                           the report of each kernel's GPU time, at exit
    python3 -m ktime --version            the same launcher
    export PKG_CONFIG_PATH=$(python3 -c 'import ktime; print(ktime.PKG_CONFIG_PATH)')
    cc app.c $(pkg-config --cflags --libs ktime)      a program using include/ktime.h
"""

import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_root")
LAUNCHER = os.path.join(ROOT, "bin", "ktime")
LIBRARY = os.path.join(ROOT, "lib", "libktime.so")
INCLUDE_DIR = os.path.join(ROOT, "include")
PKG_CONFIG_PATH = os.path.join(ROOT, "lib", "pkgconfig")
SUBCOMMANDS = ("report", "merge", "diff", "plot", "ctl")


def main(argv=None):
    """Runs the launcher with argv (default: this process's arguments), in place of this
    process: its exit status and signals are the program's."""
    args = sys.argv[1:] if argv is None else list(argv)
    # The offline tools (ktime report, merge, diff, plot) run with this Python, the one pip
    # installed ktime for, rather than whichever python3 comes first on PATH. Only for them:
    # a program run under ktime gets its environment as it was.
    if args and args[0] in SUBCOMMANDS and sys.executable:
        os.environ.setdefault("KTIME_PYTHON", sys.executable)
    try:
        os.execv(LAUNCHER, [LAUNCHER] + args)
    except OSError as e:
        sys.stderr.write("ktime: cannot run %s: %s\n" % (LAUNCHER, e.strerror or e))
        return 127
