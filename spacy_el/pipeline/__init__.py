"""spaCy components (one module per factory). Factories register through setup.cfg entry points."""
