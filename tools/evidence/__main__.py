"""``python3 -m tools.evidence``: :func:`.cli.main`."""

import sys

from .cli import main

sys.exit(main())
