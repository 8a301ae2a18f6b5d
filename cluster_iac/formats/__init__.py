"""One writer per output format, a module each: csv (its cell rule in csv_cell.py, its columnar
fast path in columnar.py), yaml and json (shapes.py: the column-at-a-time walk they share), xml,
shell, markdown, html, svg and ibnetdiscover; chunks.py holds the pieces a large file is written
in. Serializers, so that no string from a spec can add a line, field or command to an output."""
