"""The cluster spec: pydantic models of the YAML document."""

from cluster_iac.spec.cluster import ClusterSpec

__all__ = ["ClusterSpec"]
