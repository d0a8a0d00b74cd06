"""``t2t-import`` of T2T train dirs whose optimizer is not (Lazy)Adam.

The dirs are T2T's own Adam train dir (``tests/data/t2t_reference/t2t_postnorm_train_dir``,
written by T2T 1.15.7) rewritten as T2T's other optimizers leave one: MultistepAdam keeps
Adam's slots (``/Adam``, ``/Adam_1``) plus its gradient accumulator (``/Adam_2``) and counter
(``training/iter``), and counts micro-steps in ``global_step``
(``utils/multistep_optimizer.py``); Adafactor keeps ``/Adafactor`` and ``/Adafactor_1`` slots
(``utils/adafactor.py``: ``vr``, ``vc``) and no beta powers.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import tensorflow as tf

from t2t_repro.t2t_import import import_t2t_dir
from tests.t2t_fixtures import POSTNORM_DIR
from tests.test_t2t_import import moments, restore_for_training

KERNEL = "training/transformer/body/encoder/layer_1/ffn/conv1/kernel"


def rewrite(tmp_path, optimizer_hparams: dict, edit) -> str:
    """POSTNORM_DIR with hparams.json updated and its checkpoint's tensors ``edit``ed
    (name -> array), saved as model.ckpt-<global_step>."""
    out = tmp_path / "t2t"
    shutil.copytree(POSTNORM_DIR, out)
    for path in out.glob("model.ckpt-1.*"):
        path.unlink()
    hparams = json.loads((out / "hparams.json").read_text())
    (out / "hparams.json").write_text(json.dumps({**hparams, **optimizer_hparams}))
    reader = tf.train.load_checkpoint(str(POSTNORM_DIR / "model.ckpt-1"))
    tensors = {n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map()}
    tensors = edit(tensors)
    step = int(tensors["global_step"])
    names = sorted(tensors)
    tf.raw_ops.SaveV2(
        prefix=str(out / f"model.ckpt-{step}"),
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tf.constant(tensors[n]) for n in names],
    )
    (out / "checkpoint").write_text(
        f'model_checkpoint_path: "model.ckpt-{step}"\n'
        f'all_model_checkpoint_paths: "model.ckpt-{step}"\n'
    )
    return str(out)


def test_multistep_adam_dir_imports_adams_moments_at_its_update_count(tmp_path):
    def as_multistep(tensors):
        for name in [n for n in tensors if n.endswith("/Adam")]:
            tensors[name[: -len("/Adam")] + "/Adam_2"] = np.ones_like(tensors[name])
        tensors["training/iter"] = np.int32(0)
        # 1 update of 2 micro-steps (the beta powers say 1 update), then 1 micro-step more.
        tensors["global_step"] = np.int64(3)
        return tensors

    t2t_dir = rewrite(
        tmp_path,
        {"optimizer": "multistep_adam", "optimizer_multistep_accumulate_steps": 2},
        as_multistep,
    )
    lines = []
    result = import_t2t_dir(t2t_dir, str(tmp_path / "out"), log=lines.append)
    # Named by T2T's global step at the last whole update (2 batches), as T2T counts steps.
    assert result.step == 2 and result.with_optimizer
    assert (tmp_path / "out" / "ckpt-2.index").exists()
    assert any("accumulated 1 micro-step(s)" in line for line in lines), lines
    model, optimizer = restore_for_training(tmp_path / "out")
    assert int(optimizer.iterations.numpy()) == 1
    m, v = moments(optimizer, model.encoder.layer_1.ffn.sublayer.conv1.kernel)
    t2t = tf.train.load_checkpoint(str(POSTNORM_DIR / "model.ckpt-1"))
    np.testing.assert_array_equal(m, t2t.get_tensor(KERNEL + "/Adam"))
    np.testing.assert_array_equal(v, t2t.get_tensor(KERNEL + "/Adam_1"))


def test_adafactor_dir_imports_the_weights_and_says_the_optimizer_starts_fresh(tmp_path):
    def as_adafactor(tensors):
        for name in [n for n in tensors if n.endswith(("/Adam", "/Adam_1"))]:
            value = tensors.pop(name)
            if name.endswith("/Adam"):
                base = name[: -len("/Adam")]
                if value.ndim >= 2:
                    tensors[base + "/Adafactor"] = np.ones(value.shape[:-1], np.float32)
                    tensors[base + "/Adafactor_1"] = np.ones(value.shape[-1:], np.float32)
                else:
                    tensors[base + "/Adafactor"] = np.ones_like(value)
        del tensors["training/beta1_power"], tensors["training/beta2_power"]
        return tensors

    t2t_dir = rewrite(tmp_path, {"optimizer": "Adafactor"}, as_adafactor)
    lines = []
    result = import_t2t_dir(t2t_dir, str(tmp_path / "out"), log=lines.append)
    assert result.step == 1 and not result.with_optimizer
    note = [line for line in lines if "Adafactor slots are not imported" in line]
    assert len(note) == 1 and "\n" not in note[0], lines
    model, optimizer = restore_for_training(tmp_path / "out")
    assert int(optimizer.iterations.numpy()) == 1
    t2t = tf.train.load_checkpoint(str(POSTNORM_DIR / "model.ckpt-1"))
    kernel = model.encoder.layer_1.ffn.sublayer.conv1.kernel
    np.testing.assert_array_equal(kernel.numpy(), t2t.get_tensor(KERNEL[len("training/") :]))
    index = optimizer._get_variable_index(kernel)
    assert not optimizer._vr[index].numpy().any()  # fresh second moments
