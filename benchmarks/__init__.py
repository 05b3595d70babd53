"""The project's benchmarks and diagnostics, one module each, run from the repository root:

    python -m benchmarks.<name> --help          # e.g. python -m benchmarks.kb_scale --quick

Most are also steps of the studies under ``projects/`` (``python -m spacy project run <step> projects/<study>``,
which runs them as ``python ../../benchmarks <name>``, see ``__main__``). Each benchmark writes
``benchmarks/results/<name>.json`` (``results_io``; format in ``../shared/RESULTS.md``) and regenerates its
README or docs tables from that file (``tables``); the diagnostics only print. ``common`` holds what
several benchmarks share: default paths, data loading, timing, encoder dtype and peak memory.
"""
# Imports nothing: ``python -m benchmarks.kb_scale`` imports this package first, and kb_scale must set
# OMP_WAIT_POLICY before anything loads libgomp (torch, faiss).
