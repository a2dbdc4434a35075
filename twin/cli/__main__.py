"""`python -m twin.cli …`: the same as the `twin` command (and `python -m twin`). Guarded, so importing every module
of the tree (tests/test_embedder.py) does not run the command line."""

import sys

from twin.cli import main

if __name__ == "__main__":
    sys.exit(main())
