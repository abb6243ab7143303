"""Reproducing the study on another machine, and comparing two run sets.

- :mod:`~artifact.reproduce.host`: the hardware fingerprint of a run set or of this machine;
- :mod:`~artifact.reproduce.plan`: what to rerun, where (``experiments/reproductions/``), ETA;
- :mod:`~artifact.reproduce.calibrate`: a short timing of this machine against the committed runs;
- :mod:`~artifact.reproduce.execute`: the resumable rerun, with progress;
- :mod:`~artifact.reproduce.runsets`: two run sets analysed like with like;
- :mod:`~artifact.reproduce.compare`: verdicts by scope (pure);
- :mod:`~artifact.reproduce.document`: ``comparison.json``, read by
  :mod:`artifact.render.comparison` for the side-by-side report;
- :mod:`~artifact.reproduce.command`: the commands (``doit reproduce``, ``doit compare A B``).
"""
