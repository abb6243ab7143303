"""``python -m artifact.reproduce``: rerun the study beside the committed runs, or compare."""

from artifact.reproduce.command import main

raise SystemExit(main())
