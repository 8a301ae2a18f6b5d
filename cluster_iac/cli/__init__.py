"""The command line: the only place that prints or exits. main.py holds the commands; the
other modules the command groups and how findings are shown to people and machines."""
