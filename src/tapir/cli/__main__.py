"""``python -m tapir.cli``."""

import sys

from tapir.cli import main

sys.exit(main())
