"""``python -m tapir``: the ``tapir`` command."""

from tapir.cli import main

raise SystemExit(main())
