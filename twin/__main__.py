"""`python -m twin …`: the same as the `twin` command."""

import sys

from twin.cli import main

sys.exit(main())
