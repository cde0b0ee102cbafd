"""`python -m benchkit`: the command line."""
import sys

from benchkit.cli.main import main

sys.exit(main())
