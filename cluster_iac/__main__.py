"""Allow ``python -m cluster_iac``."""

from cluster_iac.cli import run

run()
