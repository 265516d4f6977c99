"""`python -m react_text.cli`."""

import sys

from react_text.cli.main import main

sys.exit(main())
