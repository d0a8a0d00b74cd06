"""Multi-label text classification (T2T's MULTI_LABEL target on ``transformer_encoder``) against
T2T 1.15.7 (#59).

The train dir under tests/data/t2t_reference was made by T2T 1.15.7 itself: its
``TransformerEncoder`` with a MULTI_LABEL target of 4 classes (0 pads the label lists),
``transformer_tiny`` at hidden 16, trained 200 Adam steps with T2T's ``multi_label_loss``, then
T2T's EVAL logits and loss of fixed inputs and label lists read back from that checkpoint, and
what T2T's ``infer`` does with such a model (tools/t2t_reference/classifier_reference.py,
``--only=multilabel``). The usr_dir ``multi_label_usr`` (tests/data/t2t_usr_dir_patterns) is
written for the tests and shaped like the public Jigsaw toxic-comment usr_dir; T2T 1.15.7's
datagen of it is in tests/data/t2t_usr_dir_patterns_reference.
"""

import re
import shutil

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.checkpoints.loading import restore_model
from t2t_repro.commands import datagen
from t2t_repro.hparam import HParams
from t2t_repro.metrics import multi_label
from t2t_repro.t2t_compat import modalities, text_problems
from t2t_repro.t2t_import import import_t2t_dir
from t2t_repro.training.loop.evaluation import evaluate, make_eval_fn
from t2t_repro.training.loop.train_step import batch_loss_sums
from t2t_repro.training.output_dir import saved_hparams
from tests.t2t_fixtures import REFERENCE, reference
from tests.test_t2t_usr_dir_patterns import REFERENCE as PATTERNS_REFERENCE
from tests.test_t2t_usr_dir_patterns import SUMMARY, USR_DIRS
from tests.usr_dir_registry import restored_registry

MULTI_DIR = REFERENCE / "t2t_multilabel_train_dir"
REF = "t2t_1.15.7_multilabel_logits.npz"
F32_EPS = float(np.finfo(np.float32).eps)


def _register_label_list_problem() -> str:
    """A Text2ClassProblem whose hparams() sets a MULTI_LABEL target, with the reference
    model's sizes (a token vocabulary of 13 ids, 4 classes): t2t-import asks it for its kind."""

    class TinyLabelLists(text_problems.Text2ClassProblem):
        @property
        def vocab_type(self):
            return text_problems.VocabType.TOKEN

        @property
        def num_classes(self):
            return 4

        def hparams(self, defaults, model_hparams):
            super().hparams(defaults, model_hparams)
            defaults.modality["targets"] = modalities.ModalityType.MULTI_LABEL

    registry.register_problem("tiny_label_lists")(TinyLabelLists)
    return "tiny_label_lists"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """T2T's train dir imported with a registered MULTI_LABEL problem and its vocabulary (the
    import reads the target kind from it); dropout off, as in T2T's EVAL pass."""
    restore = restored_registry(set())
    next(restore)
    try:
        name = _register_label_list_problem()
        data = tmp_path_factory.mktemp("multilabel_data")
        vocab = registry.problem(name).vocab_filename
        (data / vocab).write_text("".join(f"t{i}\n" for i in range(13)), encoding="utf-8")
        out = tmp_path_factory.mktemp("multilabel") / "train"
        result = import_t2t_dir(
            str(MULTI_DIR), str(out), data_dir=str(data), problem=name, log=lambda _: None
        )
    finally:
        next(restore, None)
    hp = result.imported.hparams
    assert result.step == 200 and hp.class_label_target is True and hp.multi_label_target is True
    imported = registry.model("transformer_encoder")(saved_hparams(str(out)))
    restore_model(imported, str(out))
    values = dict(imported.hparams.values())
    values.update(layer_prepostprocess_dropout=0.0, attention_dropout=0.0, relu_dropout=0.0)
    built = registry.model("transformer_encoder")(HParams(**values))
    built.build()
    built.set_weights(imported.get_weights())
    assert built.multi_label
    return built


def _batch(ref):
    return {
        "inputs": tf.constant(ref["inputs"]),
        "targets": tf.constant(ref["eval_labels"].astype(np.int32)),
    }


def _t2t_multi_label_loss(logits: np.ndarray, labels: np.ndarray) -> float:
    """T2T's multi_label_loss (layers/modalities.py) in float64, no smoothing: each row's mean
    cross entropy over its non-zero labels; rows without one left out."""
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    xent = -np.take_along_axis(log_probs, labels, axis=1) * (labels != 0)
    counts = (labels != 0).sum(1)
    per_row = xent.sum(1) / (counts + 1e-8)
    return float((per_row * (counts > 0)).sum() / (counts > 0).sum())


def test_import_logits_and_loss_equal_t2t(model):
    """Logits within 1e-4 of T2T's; the loss of T2T's label lists (a row without a label
    among them) equals T2T's within a bound derived from the logits' difference: a log-softmax
    moves at most 2 max|dlogit|, so each mean of them too, plus float32 rounding of the ~10
    operations on each term."""
    ref = reference(REF)
    assert int(ref["num_classes"]) == model.hparams.target_vocab_size == 4
    batch = _batch(ref)
    logits = model(batch, training=False).numpy()[:, 0]
    np.testing.assert_allclose(logits, ref["logits"], atol=1e-4, rtol=0)
    loss, examples = batch_loss_sums(model, batch, 0.0)
    assert float(examples) == 3  # the third row has no label: T2T leaves it out
    bound = 2 * float(np.abs(logits - ref["logits"]).max()) + 16 * F32_EPS * float(ref["loss"])
    assert abs(float(loss) / float(examples) - float(ref["loss"])) <= bound
    # The formula read from T2T's source, on T2T's logits, gives T2T's loss.
    expected = _t2t_multi_label_loss(ref["logits"].astype(np.float64), ref["eval_labels"])
    assert abs(expected - float(ref["loss"])) <= 16 * F32_EPS * float(ref["loss"])


def test_t2t_infer_has_no_multi_label_decode():
    """Why t2t-decoder writes the argmax label here: T2T's infer gives only CLASS_LABEL a
    one-step decode; what it does for MULTI_LABEL is recorded by the reference script."""
    errors = [str(e) for e in reference(REF)["infer_errors"]]
    assert [e.split(":")[0] for e in errors] == ["beam_size=1", "beam_size=4"], errors
    assert not any(e.endswith(": ok") for e in errors), errors


def test_eval_metrics_as_t2t_computes_them(model):
    """T2T's metrics of a MULTI_LABEL target, derived here from metrics.py in numpy: the one
    logits row padded with zero rows to the labels' length (pad_with_zeros) for accuracy,
    top-k and per-sequence accuracy; weights_nonzero; match3 on the argmax; the loss per row."""
    ref = reference(REF)
    labels = ref["eval_labels"]
    batch = _batch(ref)
    logits = model(batch, training=False).numpy()[:, 0]
    argmax = logits.argmax(-1)
    nonzero = labels != 0
    # position 0 holds the logits; later positions all-zero logits: argmax 0, never a label
    right = np.zeros_like(labels, bool)
    right[:, 0] = argmax == labels[:, 0]
    right &= nonzero
    strategy = tf.distribute.get_strategy()
    asked = ("accuracy_top5", multi_label.ACC_MULTILABEL_MATCH3)
    metrics = evaluate(make_eval_fn(strategy, model, asked), tf.data.Dataset.from_tensors(batch))
    assert metrics["eval_tokens"] == nonzero.sum()
    assert metrics["accuracy"] == pytest.approx(right.sum() / nonzero.sum())
    per_seq = ((nonzero & ~right).sum(1) == 0).mean()  # every row weighs 1, label-less too
    assert metrics["accuracy_per_sequence"] == pytest.approx(per_seq)
    assert metrics["accuracy_top5"] == 1.0  # k = min(5, 4 classes): every id is in the top 4
    match3 = np.minimum(((argmax[:, None] == labels) & nonzero).sum(1) / 3, 1).mean()
    assert metrics[multi_label.ACC_MULTILABEL_MATCH3] == pytest.approx(match3)
    loss = _t2t_multi_label_loss(logits.astype(np.float64), labels)
    assert metrics["loss"] == pytest.approx(loss, rel=1e-5)
    padded = np.concatenate([logits[:, None], np.zeros([len(labels), 2, 4])], axis=1)
    log_probs = padded - np.log(np.exp(padded).sum(-1, keepdims=True))
    token_xent = -(np.take_along_axis(log_probs, labels[..., None], -1)[..., 0] * nonzero).sum()
    assert -metrics["neg_log_perplexity"] == pytest.approx(token_xent / nonzero.sum(), rel=1e-5)


@pytest.fixture
def usr_registry():
    yield from restored_registry({*SUMMARY["problems"]})


def test_datagen_writes_what_t2t_1_15_7_writes(usr_registry, tmp_path):
    """The Jigsaw-shaped usr_dir (a zip of Kaggle CSVs in --tmp_dir, label lists as targets):
    the same bytes as T2T 1.15.7's datagen; its list of encoders names the labels."""
    usr_dir = "multi_label_usr"
    tmp, data = tmp_path / "tmp", tmp_path / "data"
    shutil.copytree(PATTERNS_REFERENCE / "tmp" / usr_dir, tmp)
    argv = [
        f"--problem={SUMMARY['problems'][usr_dir]}",
        f"--data_dir={data}",
        f"--tmp_dir={tmp}",
        f"--t2t_usr_dir={USR_DIRS / usr_dir}",
        "--noprogress",
        "--num_workers=1",
    ]
    assert datagen.main(argv) == 0
    expected = SUMMARY["files"][usr_dir]
    for name in expected:
        assert (data / name).read_bytes() == (
            PATTERNS_REFERENCE / "data" / usr_dir / name
        ).read_bytes(), name
    problem = registry.problem("toxic_lines")
    labels = problem.get_encoders(str(data))["targets"]
    assert [labels.decode([i]) for i in (0, 6)] == ["OK", "identity_hate"]


@pytest.mark.slow  # a tiny classifier's training run and decodes
@pytest.mark.usefixtures("without_grappler_here")  # plumbing: tests/grappler.py
def test_multi_label_usr_dir_trains_evaluates_and_decodes(usr_registry, tmp_path, capsys):
    """T2T's datagen of the Jigsaw-shaped usr_dir trains with ``transformer_encoder``:
    evaluation reports T2T's metrics (its eval_metrics are Text2TextProblem's, approximate
    BLEU and ROUGE of the argmax label; no dev decodes of labels), t2t-decoder writes each
    line's label name, and a dev split decode is refused in one line."""
    from t2t_repro.commands import decoder, trainer
    from tests.tools import TINY_PLUMBING

    flags = [
        "--problem=toxic_lines",
        f"--data_dir={PATTERNS_REFERENCE / 'data' / 'multi_label_usr'}",
        f"--t2t_usr_dir={USR_DIRS / 'multi_label_usr'}",
        "--hparams_set=transformer_tiny",
        "--model=transformer_encoder",
    ]
    out = tmp_path / "run"
    train = [f"--hparams={TINY_PLUMBING}", f"--output_dir={out}", "--train_steps=2"]
    # T2T's ValidationMonitor evaluates every --local_eval_frequency steps only: at step 2
    every = "--local_eval_frequency=2"
    assert trainer.main([*flags, *train, every, "--schedule=train_and_evaluate"]) == 0
    log = capsys.readouterr().out
    assert re.search(r"eval at step 2: loss [\d.]+, .*accuracy [01]\.\d{4}", log), log
    assert "rouge_L_fscore" in log and "approx_bleu_score" in log and "BLEU" not in log
    assert saved_hparams(str(out)).multi_label_target is True
    lines = tmp_path / "lines.txt"
    lines.write_text("this book has a tree\n\na cat sees my house\n", encoding="utf-8")
    result = tmp_path / "labels.txt"
    args = [f"--output_dir={out}", f"--decode_from_file={lines}", f"--decode_to_file={result}"]
    assert decoder.main([*flags, *args]) == 0
    rows = result.read_text(encoding="utf-8").split("\n")
    names = ["OK", "toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
    assert rows[0] in names and rows[1] in names and rows[2] in names, rows  # blank: EOS alone
    capsys.readouterr()
    split = [f"--output_dir={out}", f"--tmp_dir={PATTERNS_REFERENCE / 'tmp' / 'multi_label_usr'}"]
    assert decoder.main([*flags, *split]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("t2t-decoder: error: ") and "--decode_from_file" in err[-1], err
    assert len(err) == 2 and err[0].startswith("restored "), err  # no traceback
