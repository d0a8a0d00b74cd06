"""Paths of the T2T checkpoints and T2T 1.15.7's reference outputs used by the import tests.

The reference files under tests/data/t2t_reference were produced by the real tensor2tensor
1.15.7 (tools/t2t_reference/make_t2t_reference.py, README there), not by this project.
"""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

REPO = Path(__file__).resolve().parents[1]
SHARED_T2T = REPO.parent / "shared" / "data" / "t2t"
TEST_CKPT = SHARED_T2T / "transformer_test_ckpt"
VOCAB_8K = SHARED_T2T / "vocab.translate_ende_wmt8k.8192.subwords"
REFERENCE = REPO / "tests" / "data" / "t2t_reference"
POSTNORM_DIR = REFERENCE / "t2t_postnorm_train_dir"

needs_shared = pytest.mark.skipif(
    not (TEST_CKPT / "checkpoint").exists() or not VOCAB_8K.exists(),
    reason="../shared/data/t2t (T2T's transformer_test checkpoint and 8k vocab) is absent",
)


def shared_import(train_dir: Path, vocab: Path | None = None) -> tuple[Path, object]:
    """``t2t-import`` of a T2T train dir (with ``vocab``, if given): its output dir and
    ``import_t2t_dir``'s result, made once for the run (tests/shared_build.py): the test
    modules that only read an import share it (~0.25-0.65 core-s an import, AMD EPYC Zen 3;
    the T2T seq2seq, language-model and relative train dirs are each read by 3-5 modules)."""
    import hashlib
    import pickle

    from t2t_repro.t2t_import import import_t2t_dir
    from tests.shared_build import build_once

    def build(root: Path) -> None:
        vocab_file = str(vocab) if vocab else ""
        out = str(root / "out")
        result = import_t2t_dir(str(train_dir), out, vocab=vocab_file, log=lambda _: None)
        (root / "result.pickle").write_bytes(pickle.dumps(result))

    source = f"{Path(train_dir).resolve()}|{Path(vocab).resolve() if vocab else ''}"
    key = hashlib.sha256(source.encode()).hexdigest()[:12]
    root = build_once(f"t2t_import_{Path(train_dir).name}_{key}", build)
    return root / "out", pickle.loads((root / "result.pickle").read_bytes())


def load_imported(output_dir) -> object:
    """The Transformer of an imported train dir, as t2t-decoder restores it."""
    from t2t_repro import registry
    from t2t_repro.checkpoints.loading import restore_model
    from t2t_repro.training.output_dir import saved_hparams

    model = registry.model("transformer")(saved_hparams(str(output_dir)))
    restore_model(model, str(output_dir))
    return model


def postnorm_import() -> tuple[Path, object]:
    """The post-norm train dir's shared import (read by test_t2t_import and test_warm_start)."""
    return shared_import(POSTNORM_DIR)


def reference(name: str) -> dict:
    with np.load(REFERENCE / name) as data:
        return {k: data[k] for k in data.files}


def rewrite_t2t_checkpoint(src: Path, dst: Path, drop=(), replace=None) -> Path:
    """A copy of a T2T train dir whose name-based checkpoint lacks ``drop`` and has
    ``replace`` {name: array} (new names added); written with SaveV2 as TF1 savers do."""
    shutil.copytree(src, dst)
    reader = tf.train.load_checkpoint(str(src / "model.ckpt-1"))
    tensors = {n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map() if n not in drop}
    tensors.update(replace or {})
    for name in os.listdir(dst):
        if name.startswith("model.ckpt-1."):
            os.remove(dst / name)
    names = sorted(tensors)
    tf.raw_ops.SaveV2(
        prefix=str(dst / "model.ckpt-1"),
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tf.constant(tensors[n]) for n in names],
    )
    return dst


def usr_dir_datagen(root: Path, usr_dir: Path, problems) -> Path:
    """``t2t-datagen`` of a usr_dir's ``problems`` from ``root/tmp`` into ``root/data``, which
    it returns (the usr_dir tests' datagen fixtures)."""
    from t2t_repro.commands import datagen

    argv = [
        f"--problem={','.join(problems)}",
        f"--data_dir={root / 'data'}",
        f"--tmp_dir={root / 'tmp'}",
        f"--t2t_usr_dir={usr_dir}",
        "--noprogress",
    ]
    assert datagen.main(argv) == 0
    return root / "data"
