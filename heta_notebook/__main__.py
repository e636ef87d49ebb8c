"""``python -m heta_notebook``: see ``heta_notebook.cli``."""

import sys

from heta_notebook.cli import main

sys.exit(main())
