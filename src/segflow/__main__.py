"""`python -m segflow`: the command line (tour, bench, version); see segflow._cli."""
import sys

from segflow._cli import main

if __name__ == "__main__":
    sys.exit(main())
