"""The last stage, write: the rendered tree written atomically as a whole, or compared with
what is on disk (`render --check`)."""
