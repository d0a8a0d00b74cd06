"""t2t-import on real T2T checkpoints, against numbers computed by tensor2tensor 1.15.7 itself.

``../shared/data/t2t/transformer_test_ckpt`` is T2T's own test checkpoint; the post-norm,
unshared-embedding train dir under tests/data/t2t_reference was made by T2T 1.15.7 (see
bench/t2t_reference/README.md). Logits must agree within 1e-4 and decodes id for id.
"""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.decoding.search import SearchConfig, Searcher
from t2t_repro.model_loading import restore_model
from t2t_repro.learning_rate import make_optimizer
from t2t_repro.t2t_import import import_t2t_dir
from t2t_repro.training.checkpoints import TrainingCheckpoint
from t2t_repro.training.output_dir import saved_hparams
from tests.t2t_fixtures import (POSTNORM_DIR, TEST_CKPT, VOCAB_8K, needs_shared, reference)


def load_imported(output_dir):
    model = registry.model("transformer")(saved_hparams(str(output_dir)))
    restore_model(model, str(output_dir))
    return model


@pytest.fixture(scope="module")
def imported_test_ckpt(tmp_path_factory):
    if not (TEST_CKPT / "checkpoint").exists():
        pytest.skip("../shared/data/t2t is absent")
    out = tmp_path_factory.mktemp("import") / "train"
    result = import_t2t_dir(str(TEST_CKPT), str(out), vocab=str(VOCAB_8K), log=lambda _: None)
    return out, result


@needs_shared
def test_logits_and_encoder_outputs_equal_t2t(imported_test_ckpt):
    out, result = imported_test_ckpt
    assert result.step == 1 and result.with_optimizer
    assert result.imported.hparams_set == "transformer_test"
    assert result.imported.overrides == "optimizer_adam_beta2=0.98"
    ref = reference("t2t_1.15.7_transformer_test.npz")
    model = load_imported(out)
    logits = model({"inputs": ref["inputs"], "targets": ref["targets"]}).numpy()
    np.testing.assert_allclose(logits, ref["logits"], atol=1e-4, rtol=0)
    # PAD positions included: T2T's pad remover zeroes the encoder FFN there.
    encoder_output, _ = model.encode(tf.constant(ref["inputs"]))
    np.testing.assert_allclose(encoder_output.numpy(), ref["encoder_output"], atol=1e-4, rtol=0)


@needs_shared
@pytest.mark.parametrize("name, beam, return_beams", [
    ("greedy", 1, False), ("beam4", 4, False), ("beam4_all", 4, True)])
def test_decodes_equal_t2t(imported_test_ckpt, name, beam, return_beams):
    ref = reference("t2t_1.15.7_transformer_test.npz")
    model = load_imported(imported_test_ckpt[0])
    config = SearchConfig(beam_size=beam, alpha=0.6, extra_length=12, return_beams=return_beams)
    ids, scores = Searcher(model, config)(ref["inputs"])
    ids, scores = ids.numpy()[:, :, 1:], scores.numpy()
    want_ids, want_scores = ref[f"{name}_ids"], ref[f"{name}_scores"]
    if want_ids.ndim == 2:
        want_ids, want_scores, ids, scores = want_ids[:, None], want_scores[:, None], \
            ids[:, :1], scores[:, :1]
    np.testing.assert_array_equal(ids[:, :, :want_ids.shape[2]], want_ids)
    assert not ids[:, :, want_ids.shape[2]:].any()
    np.testing.assert_allclose(scores, want_scores, atol=1e-3, rtol=1e-5)


def test_postnorm_unshared_t2t_dir_equals_t2t(tmp_path):
    result = import_t2t_dir(str(POSTNORM_DIR), str(tmp_path / "out"), log=lambda _: None)
    hp = result.imported.hparams
    assert (hp.layer_preprocess_sequence, hp.layer_postprocess_sequence) == ("none", "dan")
    assert (hp.input_vocab_size, hp.target_vocab_size) == (11, 13)
    assert not hp.shared_embedding_and_softmax_weights
    ref = reference("t2t_1.15.7_postnorm_logits.npz")
    model = load_imported(tmp_path / "out")
    logits = model({"inputs": ref["inputs"], "targets": ref["targets"]}).numpy()
    np.testing.assert_allclose(logits, ref["logits"], atol=1e-4, rtol=0)


def restore_for_training(output_dir):
    """Model and optimizer restored as t2t-trainer does when it resumes."""
    hp = saved_hparams(str(output_dir))
    model = registry.model("transformer")(hp)
    model.build()
    optimizer = make_optimizer(hp)
    optimizer.build(model.trainable_variables)
    TrainingCheckpoint(str(output_dir), model, optimizer).restore_latest()
    return model, optimizer


def moments(optimizer, variable):
    index = optimizer._get_variable_index(variable)
    return optimizer._momentums[index].numpy(), optimizer._velocities[index].numpy()


def test_adam_moments_and_step_are_imported(tmp_path):
    """Resuming reads T2T's slots (embedding shards joined in numeric order) and its step."""
    import_t2t_dir(str(POSTNORM_DIR), str(tmp_path / "out"), log=lambda _: None)
    model, optimizer = restore_for_training(tmp_path / "out")
    t2t = tf.train.load_checkpoint(str(POSTNORM_DIR / "model.ckpt-1"))
    assert int(optimizer.iterations.numpy()) == int(t2t.get_tensor("global_step")) == 1
    kernel = "training/transformer/body/encoder/layer_1/ffn/conv1/kernel"
    m, v = moments(optimizer, model.encoder.layer_1.ffn.sublayer.conv1.kernel)
    np.testing.assert_array_equal(m, t2t.get_tensor(kernel + "/Adam"))
    np.testing.assert_array_equal(v, t2t.get_tensor(kernel + "/Adam_1"))
    assert np.abs(m).max() > 0
    shards = "training/transformer/symbol_modality_13_8/softmax/weights_{}/Adam"
    m, _ = moments(optimizer, model.softmax.embeddings)
    np.testing.assert_array_equal(m, np.concatenate([t2t.get_tensor(shards.format(i))
                                                     for i in range(3)]))
