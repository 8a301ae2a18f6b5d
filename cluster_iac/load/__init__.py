"""Stage 1, load: a spec file read with ruamel.yaml into plain data and a SourceMap (spec
path -> file:line:col), within the limits of loading."""
