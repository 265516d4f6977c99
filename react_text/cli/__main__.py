"""`python -m react_text.cli`."""

import sys

from react_text.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
