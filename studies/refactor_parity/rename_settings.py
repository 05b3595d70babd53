"""Rename the settings of issue 69's "one meaning per name" in prepared old pipelines (config.cfg and each
component's cfg), so that pipelines saved before the renames load with the code after them; weights untouched.

    python studies/refactor_parity/rename_settings.py training/test/pipelines/*
"""
import json
import re
import sys
from pathlib import Path

RENAMES = {
    "ner_constrained_linker": {"spans_key": "mentions_key", "top_k": "candidates_per_mention",
                               "compat_threshold": "min_type_prob", "threshold": "min_link_prob"},
    "ner_stack_lstm": {"nil_threshold": "min_nil_prob"},
    "joint_coref_linker": {"singleton_threshold": "min_singleton_prob"},
    "entity_retriever": {"top_k": "entities_per_passage"},
    "entqa_reader": {"top_k": "entities_per_passage", "top_p": "spans_per_entity", "threshold": "min_span_score"},
}

for pipeline in map(Path, sys.argv[1:]):
    config = pipeline / "config.cfg"
    lines, section, factories = config.read_text().split("\n"), None, {}
    for i, line in enumerate(lines):
        if line.startswith("["):
            match = re.fullmatch(r"\[components\.([a-z_]+)\]", line)
            section = match.group(1) if match else None
        elif section and line.startswith("factory = "):
            factories[section] = json.loads(line.split(" = ", 1)[1])
        elif section in RENAMES and (key := re.match(r"^([a-z_]+) = ", line)) and key.group(1) in RENAMES[section]:
            lines[i] = RENAMES[section][key.group(1)] + line[len(key.group(1)):]
    config.write_text("\n".join(lines))
    for name, factory in factories.items():
        cfg = pipeline / name / "cfg"
        if factory in RENAMES and cfg.exists():
            data = json.loads(cfg.read_text())
            data = {RENAMES[factory].get(k, k): v for k, v in data.items()}
            cfg.write_text(json.dumps(data, indent=2))
    print("renamed", pipeline)
