"""``python -m cluster.cli``: the ``evalgrid`` command line."""

import sys

from cluster.cli.entry import main

sys.exit(main())
