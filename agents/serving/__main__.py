import sys

from agents.serving.server import main

sys.exit(main())
