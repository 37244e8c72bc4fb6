"""python3 -m ktime: the ktime launcher, as the console script `ktime` runs it."""
import sys

from ktime import main

sys.exit(main())
