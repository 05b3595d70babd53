"""Copy the old version's test-workflow pipelines into /work/main/training/test/pipelines and edit their configs for
the settings the refactor moved or renamed (no weights touched)."""
import json, re, shutil, sys
from pathlib import Path

SRC = Path("/tmp/old/training/test/pipelines")
DST = Path(__file__).resolve().parents[2] / "training" / "test" / "pipelines"
RENAMES = dict(a.split("=") for a in sys.argv[1:])  # e.g. spacy-el.Ner4elScorer.v1=spacy-el.NerConstrainedLinker.v1
if DST.exists():
    shutil.rmtree(DST)
shutil.copytree(SRC, DST)
for pipeline in DST.iterdir():
    config = pipeline / "config.cfg"
    out, section = [], None
    for line in config.read_text().split("\n"):
        if line.startswith("["):
            section = line
        if section and re.fullmatch(r"\[components\.[a-z_]+\]", section) and re.match(r"^(mode|refinement) = ", line):
            continue
        if re.match(r"^inference_dtype = ", line):
            continue
        for old, new in RENAMES.items():
            line = line.replace(old, new)
        out.append(line)
    config.write_text("\n".join(out))
    for cfg in pipeline.glob("*/cfg"):
        data = json.loads(cfg.read_text())
        if "mode" in data or "refinement" in data:
            data.pop("mode", None); data.pop("refinement", None)
            cfg.write_text(json.dumps(data, indent=2))
print("prepared", sorted(p.name for p in DST.iterdir()))
