"""``python -m tempo_analysis.cli ...``: the same as the ``tempo-analysis`` console script."""

import sys

from tempo_analysis.cli import main

if __name__ == "__main__":
    sys.exit(main())
