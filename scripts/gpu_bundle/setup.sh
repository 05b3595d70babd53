#!/bin/bash
# The first call on the lent GPU machine (carry .gpu/a): unpack spaCy's stack and faiss that
# scripts/gpu_bundle/build.py bundled into /tmp/site, then check that spacy_el imports and sees the GPU. Then, while the machine is still warm, the second call: scripts/gpu_bundle/run.sh.
set -euo pipefail
rm -rf /tmp/site
tar -xJf .gpu/a/site.tar.xz -C /tmp
export PYTHONPATH=$PWD:/tmp/site
nvidia-smi -L
python3 - <<'PY'
import faiss, numpy, spacy, thinc, torch, transformers
print("spacy", spacy.__version__, "thinc", thinc.__version__, "faiss", faiss.__version__, "torch", torch.__version__,
      "transformers", transformers.__version__, "numpy", numpy.__version__, "on", torch.cuda.get_device_name(0))
spacy.require_gpu(0)
import spacy_el.pipeline  # noqa: F401
spacy.blank("en").add_pipe("joint_coref_linker")
print("ready")
PY
