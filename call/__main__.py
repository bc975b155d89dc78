"""`python -m call ...` runs the `call` command."""
import sys

from call.cli import main

sys.exit(main())
