"""The command line: the only place that prints or exits. main.py holds the ``main`` group and
the entry point; common.py what the commands share; render.py, changes.py, plan.py, guide.py,
fabric.py and acceptance.py the commands; console.py, findings.py, explain.py and init.py
how findings are shown to people and machines, what a code means, and a starting spec."""
