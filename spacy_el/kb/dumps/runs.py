"""Counting (alias, target title) pairs in bounded memory: sorted run files and a k-way merge.

``PairCounter`` keeps at most ``max_pairs`` distinct pairs in memory; when full, it writes them sorted to
a run file (one ``alias\\ttarget\\tlinks\\tlabels`` line each) and starts again. ``merged()`` merges the runs
with ``heapq.merge`` and sums the counts of equal pairs, yielding every pair once, in sorted order, so
that all targets of an alias arrive together. Memory: the buffer plus one line per run file.

Lines are compared whole: aliases and titles never contain a tab, newline or other control character
(``clean_anchor`` / ``normalize_title`` remove them), and tab sorts below every other character, so the
order of lines is the order of (alias, target) pairs.
"""
import heapq
from collections import Counter
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Tuple

from ..files import write_stream
from .titles import clean_anchor

DEFAULT_MAX_PAIRS = 2_000_000


class PairCounter:
    """Counts of links (anchor -> target) and label flags (Wikidata label/alias -> entity title)."""

    def __init__(self, work_dir: Path, max_pairs: int = DEFAULT_MAX_PAIRS, max_alias_chars: int = 200) -> None:
        self.work_dir = Path(work_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.max_pairs = max(1, int(max_pairs))
        self.max_alias_chars = max_alias_chars
        self.links: Counter = Counter()
        self.labels: Counter = Counter()
        self.runs: List[Path] = []
        self.n_long = 0  # aliases longer than max_alias_chars, not counted

    def add_links(self, links: "Counter[Tuple[str, str]]") -> None:
        for key, n in links.items():
            if len(key[0]) > self.max_alias_chars:
                self.n_long += n
                continue
            self.links[key] += n
        self._maybe_flush()

    def add_labels(self, title: str, names: Iterable[str]) -> None:
        for name in names:
            alias = clean_anchor(name)
            if alias and len(alias) <= self.max_alias_chars:
                self.labels[(alias, title)] = 1
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if len(self.links) + len(self.labels) >= self.max_pairs:
            self.flush()

    def flush(self) -> None:
        """Write the buffered pairs as one sorted run file (written to a temporary name, then renamed)."""
        if not self.links and not self.labels:
            return
        # The counters are emptied as the lines are made, so that the pairs are held about once, not twice.
        lines = []
        links, labels = self.links, self.labels
        while links:
            key, n_links = links.popitem()
            lines.append(f"{key[0]}\t{key[1]}\t{n_links}\t{labels.pop(key, 0)}\n")
        while labels:
            key, flag = labels.popitem()
            lines.append(f"{key[0]}\t{key[1]}\t0\t{flag}\n")
        self.links, self.labels = Counter(), Counter()  # the emptied tables go too
        del links, labels
        lines.sort()
        path = self.work_dir / f"run-{len(self.runs):05d}.tsv"
        write_stream(path, lambda f: f.writelines(lines), text=True)
        self.runs.append(path)

    def merged(self) -> Iterator[Tuple[str, str, int, int]]:
        """(alias, target title, link count, label flag) of every distinct pair, sorted by alias then target."""
        self.flush()
        files = [path.open("r", encoding="utf8", newline="\n") for path in self.runs]
        try:
            key: Optional[str] = None
            links = labels = 0
            for line in heapq.merge(*files):
                alias, target, n_links, n_labels = line.rstrip("\n").split("\t")
                this = f"{alias}\t{target}"
                if this != key:
                    if key is not None:
                        a, t = key.split("\t")
                        yield a, t, links, min(labels, 1)
                    key, links, labels = this, 0, 0
                links += int(n_links)
                labels += int(n_labels)
            if key is not None:
                a, t = key.split("\t")
                yield a, t, links, min(labels, 1)
        finally:
            for f in files:
                f.close()

    def remove_runs(self) -> None:
        for path in self.runs:
            path.unlink(missing_ok=True)
        self.runs = []
