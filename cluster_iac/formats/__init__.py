"""One writer per output format: CSV, YAML, JSON, XML, shell, Markdown, HTML, SVG and the
ibnetdiscover topology. Serializers, so that no string from a spec can add a line, field or
command to an output."""
