"""T2T's eval text metrics (#55): ROUGE-2 F and ROUGE-L F (metrics/rouge.py) equal to T2T 1.15.7's
``utils/rouge.py`` and to the ``rouge-score`` library where the two define them alike, and the
teacher-forced evaluation's top-5 accuracy, ROUGE and approximate BLEU equal to T2T's
``utils/metrics.py`` over eval batches. The references were made by T2T and by rouge-score
themselves (tools/t2t_reference/make_rouge_reference.py)."""

import json
from pathlib import Path

import numpy as np
import pytest

from t2t_repro.metrics import bleu, rouge
from t2t_repro.metrics.eval_metrics import ON_REQUEST

REFERENCE = Path(__file__).resolve().parent / "data" / "rouge_reference"
T2T = json.loads((REFERENCE / "t2t_1.15.7_rouge.json").read_text(encoding="utf-8"))
LIBRARY = json.loads((REFERENCE / "rouge_score_0.1.2.json").read_text(encoding="utf-8"))


def _rouge_2(candidate, reference) -> float:
    c, r = np.array([candidate], np.int64), np.array([reference], np.int64)
    return float(rouge.rouge_2_fscore(c, r))


def _rouge_l(candidate, reference) -> float | None:
    try:
        return rouge.rouge_of_pair(candidate, reference)["rouge_L_fscore"]
    except ZeroDivisionError:  # an empty sequence: T2T's _f_lcs divides by its length
        return None


@pytest.mark.parametrize("index", range(len(T2T["pairs"])))
def test_rouge_of_a_pair_is_t2ts_to_the_bit(index):
    pair = T2T["pairs"][index]
    assert _rouge_2(pair["candidate"], pair["reference"]) == pair["rouge_2_fscore"]
    assert _rouge_l(pair["candidate"], pair["reference"]) == pair["rouge_L_fscore"]
    c, r = np.array([pair["candidate"]], np.int64), np.array([pair["reference"]], np.int64)
    assert float(bleu.approx_bleu(c, r)) == pair["approx_bleu_score"]


def _repeats_a_bigram(ids) -> bool:
    bigrams = list(zip(ids, ids[1:], strict=False))
    return len(set(bigrams)) < len(bigrams)


def test_rouge_is_the_librarys_where_t2t_defines_it_alike_and_differs_only_where_not():
    """T2T counts distinct bigrams (rouge-score clips repeated ones) and weighs its LCS
    F-measure by P/R (rouge-score: the harmonic mean): the same where no bigram repeats, and
    for ROUGE-L where the lengths are equal, as the eval's rows always are. Within T2T's own
    1e-8 and 1e-12 guards and its float32 mean."""
    same_2 = same_l = 0
    for ours, lib in zip(T2T["pairs"], LIBRARY["pairs"], strict=True):
        c, r = ours["candidate"], ours["reference"]
        assert (c, r) == (lib["candidate"], lib["reference"])
        if not (_repeats_a_bigram(c) or _repeats_a_bigram(r)):
            assert _rouge_2(c, r) == pytest.approx(lib["rouge2_fmeasure"], rel=1e-7, abs=1e-7)
            same_2 += 1
        elif c != r:
            assert _rouge_2(c, r) != pytest.approx(lib["rouge2_fmeasure"], abs=1e-3)
        if len(c) == len(r) and c:
            assert _rouge_l(c, r) == pytest.approx(lib["rougeL_fmeasure"], rel=1e-7, abs=1e-7)
            same_l += 1
        elif c and len(set(c)) == len(c):  # unequal lengths, an LCS > 0 where P != R
            assert _rouge_l(c, r) != pytest.approx(lib["rougeL_fmeasure"], abs=1e-3)
    assert same_2 >= 8 and same_l >= 6


def test_the_lcs_table_is_the_textbook_one_on_random_rows():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 4, size=(20, 9)), rng.integers(0, 4, size=(20, 6))
    for row_a, row_b, found in zip(a, b, rouge.lcs_lengths(a, b), strict=True):
        table = np.zeros((10, 7), int)
        for i in range(1, 10):
            for j in range(1, 7):
                same = row_a[i - 1] == row_b[j - 1]
                table[i, j] = (
                    table[i - 1, j - 1] + 1 if same else max(table[i - 1, j], table[i, j - 1])
                )
        assert found == table[9, 6]


class _FixedLogits:
    """A model whose logits are T2T's reference batch for the targets it is given."""

    def __init__(self, batches):
        self.batches = batches

    def target_weights(self, targets):  # the Transformer's: T2T's weights_nonzero
        import tensorflow as tf

        return tf.cast(tf.not_equal(targets, 0), tf.float32)

    def __call__(self, batch, training=False):
        import tensorflow as tf

        key = tf.strings.reduce_join(
            tf.strings.as_string(tf.reshape(batch["targets"], [-1])), separator=","
        )
        table = {",".join(map(str, la.ravel())): lo for la, lo in self.batches}
        logits = tf.numpy_function(lambda k: table[k.decode()], [key], tf.float32)
        return tf.ensure_shape(logits, [None, None, self.batches[0][1].shape[-1]])


def test_the_evaluation_reports_t2ts_top5_rouge_and_bleu_over_eval_batches():
    """T2T's metrics.py over three eval batches (tf.metrics.mean of each metric): ROUGE and
    approximate BLEU the mean of the batches' values, to the bit; the token metrics as T2T's
    ratios; the usr_dir API's bleu_hook.bleu_score gives the batches' values."""
    import tensorflow as tf

    from t2t_repro.training.loop import evaluation

    arrays = np.load(REFERENCE / "t2t_1.15.7_rouge.npz")
    batches = [(arrays[f"labels_{i}"], arrays[f"logits_{i}"]) for i in range(T2T["batches"])]
    strategy = tf.distribute.get_strategy()
    eval_fn = evaluation.make_eval_fn(strategy, _FixedLogits(batches), ON_REQUEST)

    def gen():
        for labels, _ in batches:
            yield {"inputs": np.ones((len(labels), 2), np.int32), "targets": labels}

    spec = {k: tf.TensorSpec([None, None], tf.int32) for k in ("inputs", "targets")}
    results = evaluation.evaluate(
        eval_fn, tf.data.Dataset.from_generator(gen, output_signature=spec)
    )
    expected = T2T["eval"]
    assert results["rouge_2_fscore"] == expected["rouge_2_fscore"]
    assert results["rouge_L_fscore"] == expected["rouge_L_fscore"]
    assert results["approx_bleu_score"] == expected["approx_bleu_score"]
    from t2t_repro.t2t_compat import bleu_hook

    per_batch = [  # T2T's shapes: logits [B, L, 1, 1, V], labels [B, L, 1, 1]
        bleu_hook.bleu_score(lo[:, :, None, None, :], la[:, :, None, None]) for la, lo in batches
    ]
    assert all(float(weight) == 1.0 for _, weight in per_batch)
    mean = np.float32(0.0)
    for value, _ in per_batch:  # tf.metrics.mean's float32 total
        mean = np.float32(mean + np.float32(value))
    assert float(mean / np.float32(len(batches))) == expected["approx_bleu_score"]
    # T2T's edit distance: its float32 mean of each batch's distance / reference tokens weighted
    # by those tokens; here the integer sums' ratio, the same to float32 rounding (a few ulps)
    assert results["edit_distance"] == pytest.approx(expected["edit_distance"], rel=1e-6)
    for name in ("accuracy_top5", "accuracy", "accuracy_per_sequence"):  # small-integer ratios
        assert np.float32(results[name]) == np.float32(expected[name]), name
    # float32 log-softmax sums in another order than T2T's
    assert results["neg_log_perplexity"] == pytest.approx(expected["neg_log_perplexity"], rel=1e-6)
    plain = evaluation.evaluate(
        evaluation.make_eval_fn(strategy, _FixedLogits(batches)),
        tf.data.Dataset.from_generator(gen, output_signature=spec),
    )
    assert not set(ON_REQUEST) & set(plain)  # computed only when the problem lists them
    assert {k: v for k, v in results.items() if k not in ON_REQUEST} == plain
