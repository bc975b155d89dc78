"""`python -m llac` runs the llac command line."""
import sys

from llac.cli import main

sys.exit(main())
