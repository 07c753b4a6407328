"""`python -m console.cli`: the same entry point as the `memconsole` script."""

import sys

from . import main

sys.exit(main())
