"""``--decode_hparams=precision=bfloat16`` decodes a float32 checkpoint in bf16; the default
stays float32 and the global Keras policy is left as it was."""

import keras
import pytest

from t2t_repro.decoding import runner
from t2t_repro.hparam import HParamsError
from tests.model_utils import toy_checkpoint_dir
from tests.tools import TINY_MODEL


def load(root, overrides: str):
    return runner.load_decoder(
        "translate_toy",
        "transformer_tiny",
        "",
        str(root / "data"),
        str(root / "train"),
        decode_overrides=f"beam_size=2,extra_length=4,{overrides}",
    )


@pytest.mark.slow
def test_bfloat16_decoding_loads_the_float32_checkpoint(tmp_path):
    root = toy_checkpoint_dir(tmp_path, size=TINY_MODEL)  # seed 1: non-empty bf16 decodes
    fp32 = load(root, "precision=float32")
    bf16 = load(root, "precision=bfloat16")
    assert keras.mixed_precision.global_policy().name == "float32"
    assert fp32.model.decoder.compute_dtype == "float32"
    assert bf16.model.decoder.compute_dtype == "bfloat16"
    assert bf16.model.decoder.variables[0].dtype == "float32"  # the checkpoint's weights
    embedding = fp32.model.target_embedding.embeddings.numpy()
    assert (bf16.model.target_embedding.embeddings.numpy() == embedding).all()
    for setup in (fp32, bf16):
        setup.decoder.log = lambda msg: None
    lines = ["the dog sees a cat .", "many cats run ."]
    want = fp32.decoder.decode_lines(lines)
    got = bf16.decoder.decode_lines(lines)
    assert len(got) == 2 and all(h[0].ids for h in got)
    # bf16 rounding may change a search on this untrained model; the ids must stay in range.
    vocab = fp32.model.hparams.target_vocab_size
    assert all(0 <= i < vocab for h in got for i in h[0].ids)
    assert all(h[0].ids for h in want)


def test_unknown_precision_is_refused_before_loading(tmp_path):
    with pytest.raises(HParamsError, match="precision='float16x'"):
        load(tmp_path, "precision=float16x")
