"""cluster-iac: compile one GPU-cluster spec into every file its operators need."""

__version__ = "0.1.0"
