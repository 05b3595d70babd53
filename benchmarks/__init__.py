"""The product benchmarks, one module each, run from the repository root:

    python -m benchmarks.<name> --help          # e.g. python -m benchmarks.kb_scale --quick

Each compares a component (or the KB, the candidates, ``annotate``, the packaged pipelines) with its peers on the
same data in one run, writes ``benchmarks/results/<name>.json`` (``results_io``; format in
``../shared/RESULTS.md``) and regenerates its docs table from that file (``tables``). ``common`` holds what several
share: default paths, data loading, timing, encoder dtype and peak memory. The concluded studies are frozen under
``studies/``.
"""
# Imports nothing: ``python -m benchmarks.kb_scale`` imports this package first, and kb_scale must set
# OMP_WAIT_POLICY before anything loads libgomp (torch, faiss).
