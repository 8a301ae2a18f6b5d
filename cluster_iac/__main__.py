"""Allow ``python -m cluster_iac``."""

from cluster_iac.cli import main

main()
