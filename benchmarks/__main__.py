"""Run a benchmark by name from any folder: ``python PATH/TO/benchmarks NAME [ARGS...]``.

``python -m benchmarks.NAME`` needs the repository root as the working directory; the component projects under
``projects/`` run their commands in their own folder, so they call ``python ${vars.root}/benchmarks NAME``,
which runs ``benchmarks.NAME`` as ``__main__`` with the root importable. Every benchmark finds its files
from the repository root (``results_io.ROOT``), whatever the working directory.
"""
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        names = sorted(p.stem for p in HERE.glob("*.py") if not p.stem.startswith("_"))
        print(f"usage: python {HERE} NAME [ARGS...]\nNAME: {', '.join(names)}")
        return
    name, rest = argv[0], argv[1:]
    # When run as a folder, its own path is sys.path[0]: drop it, so that its modules are imported only
    # as benchmarks.<name>, and put the repository root first.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    sys.path.insert(0, str(HERE.parent))
    sys.argv = [f"benchmarks.{name}", *rest]
    runpy.run_module(f"benchmarks.{name}", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
