"""Print the catalog snapshot: python -m cluster_iac.catalog > cluster_iac/catalog/builtin.json"""

from cluster_iac.catalog.snapshot import snapshot_text

print(snapshot_text(), end="")
