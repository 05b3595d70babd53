"""The product benchmarks, one module each, run from the repository root (``python -m benchmarks.<name> --help``).

Each writes ``benchmarks/results/<name>.json`` (``results_io``) and regenerates its docs table (``tables``);
``common`` holds what several share. The concluded studies are frozen under ``studies/``.
"""
# Imports nothing: ``python -m benchmarks.kb_scale`` imports this package first, and kb_scale must set
# OMP_WAIT_POLICY before anything loads libgomp (torch, faiss).
