"""What tensor2tensor 1.15.7's ``t2t-bleu --translation --reference`` prints (reference data).

Runs T2T's own ``bin/t2t_bleu.py:main`` (through absl, as its console script does) on a few
fixed translation/reference lines, once per ``--bleu_variant`` (T2T's default ``both``, then
``cased`` and ``uncased``), in a new process each (absl parses its flags once per process),
and writes the lines and each run's stdout to ``<out>/t2t_1.15.7_bleu.json``. It also
records T2T's ``utils/bleu_hook.py:bleu_tokenize`` on named strings (its tokens) and on one
probe per code point of ``PROBES`` (every punctuation, symbol and number character below
it, as ``PROBES["template"]``): the sha256 of their tokens, which a test recomputes from
the same spec with this project's tokenizer.

It must run in a virtualenv of its own with T2T 1.15.7, never in the project's (README.md
here). Usage::

    /work/venv-t2t/bin/python tools/t2t_reference/make_t2t_bleu_reference.py \
        --shim=../shared/t2t_shim --out=tests/data/t2t_reference
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from importlib.metadata import version

TRANSLATION = ["the cat sat on the mat .", "A dog runs in the park", "Zwei Hunde spielen !"]
REFERENCE = ["The cat sat on the mat .", "a dog runs in a park", "Zwei Hunde spielen im Schnee !"]
VARIANTS = [None, "cased", "uncased"]  # None: T2T's default (both)
NAMED = ["5 km².", "½.", "a\\b c", "Ⅻ.", "1,000.5 x", "٣,٤", "€5, $6^2", "(a)-[b]"]
PROBES = {
    "below": 0x3100,
    "categories": ["P", "S", "Nd", "Nl", "No"],
    "template": "a{c}b 1{c}2 {c}.",
}

RUN = """
import sys
sys.path.insert(0, {shim!r})
import t2t_compat
t2t_compat.install()
from absl import app
from tensor2tensor.bin import t2t_bleu
sys.argv = ["t2t-bleu"] + {argv!r}
app.run(t2t_bleu.main)
"""

TOKENIZE = """
import hashlib, json, sys, unicodedata
sys.path.insert(0, {shim!r})
import t2t_compat
t2t_compat.install()
from tensor2tensor.utils.bleu_hook import bleu_tokenize
named, spec = {named!r}, {probes!r}
chars = [chr(c) for c in range(spec["below"])
         if any(unicodedata.category(chr(c)).startswith(k) for k in spec["categories"])]
tokens = [bleu_tokenize(spec["template"].format(c=c)) for c in chars]
digest = hashlib.sha256(json.dumps(tokens, ensure_ascii=False).encode()).hexdigest()
print(json.dumps({{"named": {{s: bleu_tokenize(s) for s in named}}, "probes": len(chars),
                  "sha256": digest}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_compat shim's directory")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        hyp, ref = os.path.join(tmp, "hyp"), os.path.join(tmp, "ref")
        for path, lines in ((hyp, TRANSLATION), (ref, REFERENCE)):
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
        for variant in VARIANTS:
            argv = [f"--translation={hyp}", f"--reference={ref}"]
            argv += [f"--bleu_variant={variant}"] if variant else []
            code = RUN.format(shim=os.path.abspath(args.shim), argv=argv)
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            )
            runs.append({"bleu_variant": variant, "stdout": out.stdout})
    code = TOKENIZE.format(shim=os.path.abspath(args.shim), named=NAMED, probes=PROBES)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    tokenized = json.loads(out.stdout.strip().splitlines()[-1])
    record = {
        "translation": TRANSLATION,
        "reference": REFERENCE,
        "runs": runs,
        "bleu_tokenize": {"probe_spec": PROBES, **tokenized},
        "versions": {name: version(name) for name in ("tensor2tensor", "tensorflow")},
    }
    path = os.path.join(args.out, "t2t_1.15.7_bleu.json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
