"""``python -m perft``: hands the command line to ``perft.cli`` and exits with its status.

Nothing else lives here, so importing the package never runs the tool.
"""

from __future__ import annotations

import sys

from perft.cli import main

if __name__ == "__main__":
    sys.exit(main())
