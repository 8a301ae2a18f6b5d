"""Allow ``python -m cluster_iac``."""

from cluster_iac.cli.main import run

run()
