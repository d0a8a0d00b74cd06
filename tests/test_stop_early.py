"""T2T decodes with ``stop_early = (top_beams == 1)`` (models/transformer.py, fast_decode).

On a log-prob table where it matters, ``search`` must return what T2T 1.15.7's
``utils/beam_search.py`` returned on the same table (tests/data/t2t_reference): the top
beam search stops early, a search whose beams are all returned (``return_beams``) does not.
"""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.decoding.search import SearchConfig, search
from t2t_repro.hparam import HParams
from tests.t2t_fixtures import reference
from tests.test_beam_search import ToyModel


class TableModel:
    """The table as a "model" with the decode API that ``search`` uses."""

    def __init__(self, table):
        self.toy = ToyModel(table)
        self.hparams = HParams(target_vocab_size=table.shape[-1])

    def init_cache(self, inputs, decode_length):
        return self.toy.init_cache()

    def decode_step(self, ids, i, cache):
        return self.toy(ids, i, cache)


@pytest.mark.parametrize("return_beams, prefix", [(False, "stop_early"), (True, "no_stop_early")])
def test_search_follows_t2t_stop_early(return_beams, prefix):
    ref = reference("t2t_1.15.7_beam_search_table.npz")
    model = TableModel(ref["table"])
    config = SearchConfig(
        beam_size=int(ref["beam_size"]), alpha=float(ref["alpha"]), return_beams=return_beams
    )
    decode_length = int(ref["decode_length"])
    inputs = tf.zeros([ref["table"].shape[0], 1], tf.int32)
    ids, scores = search(model, config, inputs, decode_length)
    want_ids, want_scores = ref[f"{prefix}_ids"], ref[f"{prefix}_scores"]
    assert model.toy.calls == want_ids.shape[2] - 1  # T2T grows one column per step.
    np.testing.assert_array_equal(ids.numpy()[:, :, : want_ids.shape[2]], want_ids)
    assert not ids.numpy()[:, :, want_ids.shape[2] :].any()
    np.testing.assert_allclose(scores.numpy(), want_scores, rtol=1e-6, atol=1e-6)
