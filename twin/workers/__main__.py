"""`python -m twin.workers learn|embed`: run one twin worker (started and restarted by the supervisor)."""

import sys

from twin.workers.main import main

sys.exit(main())
