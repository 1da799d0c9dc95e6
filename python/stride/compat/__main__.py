"""python -m stride.compat SCRIPT [ARGS...]: see stride.compat."""

import sys

from . import main

sys.exit(main())
