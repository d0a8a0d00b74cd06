"""ROUGE-2 F, ROUGE-L F, approximate BLEU and the eval's token metrics as tensor2tensor 1.15.7
computes them, and
the ``rouge-score`` library's ROUGE on the same pairs (reference data for
tests/test_eval_text_metrics.py).

``--source=t2t`` runs T2T's own code (``utils/rouge.py``: ``rouge_n``,
``rouge_l_sentence_level``; ``utils/metrics.py``: ``METRICS_FNS`` through
``tf.compat.v1.metrics.mean``, as ``create_evaluation_metrics`` wraps each metric) on:

- ``PAIRS``: id sequences of their own lengths, scored one pair at a time;
- three eval batches of fixed labels (0-padded, as T2T's eval batches are) and seeded logits:
  each metric's streaming mean over the batches, T2T's eval value.

It writes ``<out>/t2t_1.15.7_rouge.npz`` (the batches' logits and labels) and
``<out>/t2t_1.15.7_rouge.json``. ``--source=rouge_score`` scores ``PAIRS`` with
``rouge_score.rouge_scorer`` (ROUGE-2 and ROUGE-L F-measure; each id a token) and writes
``<out>/rouge_score_0.1.2.json``.

Each runs in a virtualenv of its own, never the project's (README.md here)::

    /work/venv-t2t/bin/python tools/t2t_reference/make_rouge_reference.py --source=t2t \\
        --shim=../shared/t2t_shim --out=tests/data/rouge_reference
    python3.11 -m venv /tmp/venv-rouge && /tmp/venv-rouge/bin/pip install rouge-score==0.1.2
    /tmp/venv-rouge/bin/python tools/t2t_reference/make_rouge_reference.py \\
        --source=rouge_score --out=tests/data/rouge_reference
"""

import argparse
import json
import os
import sys
from importlib.metadata import version

import numpy as np

# (candidate, reference) id sequences. The first ones repeat no bigram and have equal lengths
# (there T2T's definitions and the library's agree); then a repeated bigram (T2T counts
# distinct n-grams), unequal lengths (T2T's LCS F-measure weighs recall by P/R), an empty
# candidate (T2T's ROUGE-L divides by its length: recorded as None), a one-token pair (no
# bigram) and 0-padded rows as T2T's eval sees them.
PAIRS = [
    ([5, 6, 7, 8, 1], [5, 6, 7, 8, 1]),
    ([5, 6, 9, 8, 1], [5, 6, 7, 8, 1]),
    ([9, 10, 11, 12], [4, 3, 2, 13]),
    ([3, 4, 5, 6, 7, 1], [7, 6, 5, 4, 3, 1]),
    ([12, 4, 9, 3, 8, 11, 1], [4, 9, 3, 12, 8, 11, 1]),
    ([5, 6, 5, 6, 5, 6, 1], [5, 6, 7, 1, 0, 0, 0]),
    ([4, 4, 4, 4, 1], [4, 4, 1]),
    ([5, 6, 7], [5, 6, 7, 8, 9, 10, 1]),
    ([2, 3, 4, 5, 6, 7, 8, 9, 1], [3, 5, 7, 1]),
    ([], [5, 6, 1]),
    ([7], [7]),
    ([8, 9, 1, 0, 0, 0], [8, 9, 1, 0, 0, 0]),
]
VOCAB = 14
SEED = 15
BATCH_LABELS = [
    [[5, 6, 7, 8, 1, 0, 0], [9, 10, 11, 12, 13, 4, 1], [3, 4, 1, 0, 0, 0, 0]],
    [[2, 2, 2, 1], [4, 5, 6, 1], [7, 8, 1, 0], [12, 1, 0, 0]],
    [[6, 7, 8, 9, 10, 11, 12, 13, 2, 1], [3, 1, 0, 0, 0, 0, 0, 0, 0, 0]],
]
METRICS = ("accuracy", "accuracy_top5", "accuracy_per_sequence", "neg_log_perplexity")
ROUGE = ("rouge_2_fscore", "rouge_L_fscore")
# T2T's teacher-forced BLEU of the argmax ids (utils/metrics.py, bleu_score: bleu_hook's
# compute_bleu of each batch, weight 1), streamed as ROUGE is.
APPROX_BLEU = "approx_bleu_score"
# T2T's sequence_edit_distance (its value over the batch's reference tokens, weighted by them).
EDIT_DISTANCE = "edit_distance"


def batch_logits(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Seeded logits whose argmax is the label at about half the positions (padding too)."""
    logits = rng.normal(size=labels.shape + (VOCAB,)).astype(np.float32)
    right = rng.random(labels.shape) < 0.5
    rows, cols = np.nonzero(right)
    logits[rows, cols, labels[rows, cols]] += 3.0
    return logits


def t2t_rouge_l(rouge, candidate: list, reference: list) -> float | None:
    """T2T's ROUGE-L F of one pair; None where T2T raises (an empty sequence divides by 0)."""
    try:
        return float(rouge.rouge_l_sentence_level([np.array(candidate)], [np.array(reference)]))
    except ZeroDivisionError:
        return None


def t2t_reference(shim: str, out: str) -> None:
    sys.path.insert(0, os.path.abspath(shim))
    import t2t_compat

    t2t_compat.install()
    import tensorflow as tf
    from tensor2tensor.layers import common_layers
    from tensor2tensor.utils import bleu_hook, metrics, rouge

    pairs = [
        {
            "rouge_2_fscore": float(rouge.rouge_n([np.array(c)], [np.array(r)])),
            "rouge_L_fscore": t2t_rouge_l(rouge, c, r),
            APPROX_BLEU: float(bleu_hook.compute_bleu([np.array(r)], [np.array(c)])),
        }
        for c, r in PAIRS
    ]
    rng = np.random.default_rng(SEED)
    labels = [np.array(b, np.int32) for b in BATCH_LABELS]
    logits = [batch_logits(b, rng) for b in labels]
    tf.compat.v1.disable_v2_behavior()
    graph = tf.Graph()
    with graph.as_default():
        logits_in = tf.compat.v1.placeholder(tf.float32, [None, None, VOCAB])
        labels_in = tf.compat.v1.placeholder(tf.int32, [None, None])
        # T2T's shapes: logits [B, L, 1, 1, V], labels [B, L, 1, 1].
        predictions = logits_in[:, :, None, None, :]
        targets = labels_in[:, :, None, None]
        updates, values = {}, {}
        for name in (*METRICS, *ROUGE, APPROX_BLEU, EDIT_DISTANCE):
            fn = metrics.METRICS_FNS[name]
            scores, weights = fn(predictions, targets, weights_fn=common_layers.weights_nonzero)
            values[name], updates[name] = tf.compat.v1.metrics.mean(scores, weights)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.local_variables_initializer())
            for lo, la in zip(logits, labels, strict=True):
                sess.run(updates, {logits_in: lo, labels_in: la})
            streamed = {k: float(v) for k, v in sess.run(values).items()}
    arrays = {f"logits_{i}": lo for i, lo in enumerate(logits)}
    arrays.update({f"labels_{i}": la for i, la in enumerate(labels)})
    write_npz(os.path.join(out, "t2t_1.15.7_rouge.npz"), arrays)
    record = {
        "pairs": [
            {"candidate": c, "reference": r, **s} for (c, r), s in zip(PAIRS, pairs, strict=True)
        ],
        "eval": streamed,
        "batches": len(labels),
        "versions": {name: version(name) for name in ("tensor2tensor", "tensorflow", "numpy")},
    }
    write_json(os.path.join(out, "t2t_1.15.7_rouge.json"), record)


def rouge_score_reference(out: str) -> None:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge2", "rougeL"], use_stemmer=False)
    pairs = []
    for candidate, reference in PAIRS:
        # Each id one token: the default tokenizer keeps [a-z0-9]+ words.
        scores = scorer.score(" ".join(map(str, reference)), " ".join(map(str, candidate)))
        pairs.append(
            {
                "candidate": candidate,
                "reference": reference,
                "rouge2_fmeasure": scores["rouge2"].fmeasure,
                "rougeL_fmeasure": scores["rougeL"].fmeasure,
            }
        )
    record = {"pairs": pairs, "versions": {"rouge-score": version("rouge-score")}}
    write_json(os.path.join(out, "rouge_score_0.1.2.json"), record)


def write_json(path: str, record: dict) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print(f"wrote {path}")


def write_npz(path: str, arrays: dict) -> None:
    with open(path + ".tmp", "wb") as f:
        np.savez(f, **arrays)
    os.replace(path + ".tmp", path)
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", choices=("t2t", "rouge_score"), required=True)
    parser.add_argument("--shim", help="the t2t_compat shim's directory (--source=t2t)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.source == "t2t":
        t2t_reference(args.shim, args.out)
    else:
        rouge_score_reference(args.out)


if __name__ == "__main__":
    main()
