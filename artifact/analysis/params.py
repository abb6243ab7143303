"""Parameters that change the analysis's output (light: no numpy, read by the doit task)."""

SCHEMA_VERSION = 1  # of summary.json (docs/summary-schema.md)
N_RESAMPLES = 2000  # percentile-bootstrap resamples per (run, domain)
CONFIDENCE = 0.95  # of every interval
SEED = 20261129  # of the bootstrap's numpy Generator
