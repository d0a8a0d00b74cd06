"""Text classification (T2T's ``transformer_encoder`` with a class-label target) against T2T 1.15.7.

The train dir under tests/data/t2t_reference was made by T2T 1.15.7 itself: its
``TransformerEncoder`` with a ``Text2ClassProblem``'s problem hparams (SYMBOL inputs, a
CLASS_LABEL target of 3 classes), ``transformer_tiny`` at hidden 16, trained 200 Adam steps, and
T2T's EVAL logits and ``infer`` labels of fixed inputs read back from that checkpoint
(tools/t2t_reference/classifier_reference.py). ``t2t-import`` of it gives logits within 1e-4 and
T2T's labels.
"""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.checkpoints.loading import restore_model
from t2t_repro.hparam import HParams
from t2t_repro.t2t_import import import_t2t_dir
from t2t_repro.training.loop.evaluation import evaluate, make_eval_fn
from t2t_repro.training.loop.train_step import batch_loss_sums
from t2t_repro.training.output_dir import saved_hparams
from tests.t2t_fixtures import REFERENCE, reference

CLASSIFIER_DIR = REFERENCE / "t2t_classifier_train_dir"
REF = "t2t_1.15.7_classifier_logits.npz"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("classifier") / "train"
    result = import_t2t_dir(str(CLASSIFIER_DIR), str(out), log=lambda _: None)
    model = registry.model("transformer_encoder")(saved_hparams(str(out)))
    restore_model(model, str(out))
    return result, model


def test_import_logits_and_labels_equal_t2t(imported):
    result, model = imported
    assert result.step == 200 and result.with_optimizer
    hp = result.imported.hparams
    assert hp.class_label_target is True
    assert (hp.input_vocab_size, hp.target_vocab_size) == (13, 3)
    names = [v.path for v in model.weights]
    assert not [n for n in names if "decoder" in n or "softmax" in n], names
    ref = reference(REF)
    inputs = ref["inputs"]
    # The targets are not read: the logits are the pooled encoder's.
    logits = model({"inputs": inputs, "targets": np.zeros([len(inputs), 1], np.int32)}).numpy()
    assert logits.shape == (len(inputs), 1, 3)
    np.testing.assert_allclose(logits[:, 0], ref["logits"], atol=1e-4, rtol=0)
    np.testing.assert_array_equal(np.argmax(logits[:, 0], -1), ref["labels"])
    assert len(set(ref["labels"].tolist())) > 1  # T2T's labels are not all one class


def _without_dropout(trained):
    """The same weights in a model whose training pass has no dropout."""
    values = dict(trained.hparams.values(), layer_prepostprocess_dropout=0.0)
    values.update(attention_dropout=0.0, relu_dropout=0.0)
    model = registry.model("transformer_encoder")(HParams(**values))
    model.build()
    model.set_weights(trained.get_weights())
    return model


def test_pooling_reads_padding_as_t2t(imported):
    """T2T averages the encoder output over every position of the batch: a row's logits
    change when the batch is padded longer (what T2T computes too)."""
    _, model = imported
    inputs = reference(REF)["inputs"][:1]
    longer = np.concatenate([inputs, np.zeros([1, 3], np.int32)], axis=1)
    targets = np.zeros([1, 1], np.int32)
    short = model({"inputs": inputs, "targets": targets}).numpy()
    padded = model({"inputs": longer, "targets": targets}).numpy()
    assert not np.allclose(short, padded, atol=1e-4)


def test_class_zero_counts_in_loss_and_accuracy(imported):
    """T2T's weights_all for a class label: label 0 is a class, not padding."""
    model = _without_dropout(imported[1])
    ref = reference(REF)
    labels = ref["labels"].reshape([-1, 1]).astype(np.int32)
    batch = {"inputs": tf.constant(ref["inputs"]), "targets": tf.constant(labels)}
    loss, count = batch_loss_sums(model, batch, 0.0)
    assert float(count) == len(labels)
    logits = ref["logits"].astype(np.float64)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -log_probs[np.arange(len(labels)), labels[:, 0]].sum()
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    strategy = tf.distribute.get_strategy()
    dataset = tf.data.Dataset.from_tensors(batch)
    metrics = evaluate(make_eval_fn(strategy, model), dataset)
    assert metrics["accuracy"] == 1.0 and metrics["eval_tokens"] == len(labels)
    np.testing.assert_allclose(metrics["loss"], expected / len(labels), rtol=1e-5)


def test_training_loss_equals_t2ts(imported):
    """T2T's loss of fixed labels (its EVAL pass: no dropout, and no label smoothing, which
    T2T zeroes outside TRAIN: ``utils/t2t_model.py``, ``set_mode``; every label counted, class
    0 too) equals the training loss here of the same weights, dropout and smoothing off."""
    model = _without_dropout(imported[1])
    ref = reference(REF)
    labels = ref["eval_labels"].reshape([-1, 1])
    assert 0 in labels
    batch = {"inputs": tf.constant(ref["inputs"]), "targets": tf.constant(labels)}
    loss, count = batch_loss_sums(model, batch, 0.0)
    assert float(count) == len(labels)
    np.testing.assert_allclose(float(loss) / float(count), float(ref["loss"]), rtol=1e-5)


def test_models_refuse_the_other_target_kind(imported):
    hp = HParams(**imported[1].hparams.values())
    with pytest.raises(ValueError, match="--model=transformer_encoder"):
        registry.model("transformer")(hp)
    hp.set_hparam("class_label_target", False)
    with pytest.raises(ValueError, match="class-label target"):
        registry.model("transformer_encoder")(hp)


def test_avg_all_takes_the_runs_model_from_its_flags(imported, tmp_path):
    """T2T's t2t-avg-all averages tensors by name and has no --model: here the run's own,
    from its flags.txt (transformer_encoder), is built (it was refused as 'not a buildable
    transformer' unless --model was given)."""
    import os

    from t2t_repro.commands import avg_all

    run_dir = os.path.dirname(imported[0].checkpoint)
    argv = [f"--model_dir={run_dir}", f"--output_dir={tmp_path / 'avg'}", "--n=1"]
    assert avg_all.main(argv) == 0
    assert (tmp_path / "avg" / "ckpt-200.index").exists()


def test_weight_noise_skips_the_class_label_top_as_t2ts(imported):
    """T2T's weight_noise adds noise under /body/ only: its class_label_top dense is not there
    (it got noise here)."""
    from t2t_repro.optimizers.regularization import add_weight_noise

    model = registry.model("transformer_encoder")(imported[1].hparams)
    model.build()
    before = [w.numpy().copy() for w in model.class_label.weights]
    encoder = model.encoder.trainable_variables[0]
    encoder_before = encoder.numpy().copy()
    add_weight_noise(model.trainable_variables, 1.0, 1.0, step=3)
    after = [w.numpy() for w in model.class_label.weights]
    assert all(np.array_equal(a, b) for a, b in zip(after, before, strict=True))
    assert not np.array_equal(encoder.numpy(), encoder_before)
