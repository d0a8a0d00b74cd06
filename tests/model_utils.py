"""Small builders shared by model tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.hparams_lib.build import create_hparams
from tests.tools import PLUMBING_MODEL


def shared_toy_data() -> Path:
    """translate_toy's generated data (``t2t-datagen``'s output), made once for the whole test
    run (``tests/shared_build.py``): for the tests that only read it (training runs)."""
    from tests.shared_build import build_once

    def build(path: Path) -> None:
        registry.problem("translate_toy").generate_data(
            str(path / "data"), str(path / "tmp"), progress=False
        )

    return build_once("translate_toy_data", build) / "data"


def shared_toy_checkpoint() -> Path:
    """``toy_checkpoint_dir``'s defaults (seed 1, step 7), made once for the whole test run
    (``tests/shared_build.py``): for the tests that only read it (decoders, exports)."""
    from tests.shared_build import build_once

    return build_once("toy_checkpoint", lambda root: toy_checkpoint_dir(root, step=7))


def traced_op_count(fn) -> int:
    """The ops of ``fn``'s traced graph (a ``tf.function`` with an input signature)."""
    return len(fn.get_concrete_function().graph.get_operations())


def build_model(
    hparams_set: str = "transformer_tiny",
    overrides: str = "",
    vocab_size: int = 50,
    target_vocab_size: int | None = None,
    has_input: bool = True,
):
    """A built Transformer; ``has_input=False``: the decoder alone (T2T's language model)."""
    hp = create_hparams(
        hparams_set,
        overrides,
        input_vocab_size=vocab_size,
        target_vocab_size=target_vocab_size or vocab_size,
    )
    if not has_input:
        hp.add_hparam("has_input", False)
    model = registry.model("transformer")(hp)
    model.build()
    return model


def assert_cached_steps_match_full_pass(model, inputs: tf.Tensor, ids: np.ndarray) -> np.ndarray:
    """Feeds ``ids`` [B, L + 1] (column 0 is GO) step by step through the cache (XLA) and
    checks every step's logits against the teacher-forced pass; returns that pass's logits."""
    length = ids.shape[1] - 1
    full = model({"inputs": inputs, "targets": tf.constant(ids[:, 1:])}).numpy()
    cache = model.init_cache(inputs, length)

    # The steps in one XLA loop, i a loop variable as in the searches: one compile. A step
    # called with i as its argument compiled once per value of i (XLA takes a scalar it can
    # use as a compile-time constant as one). No autograph, as the searches trace the step
    # (decoding/search.py): no tensor control flow.
    @tf.function(jit_compile=True, autograph=False)
    def steps(ids, cache):
        def body(i, cache, logits):
            step_logits, cache = model.decode_step(ids, i, cache)
            return i + 1, cache, logits.write(i, step_logits)

        logits = tf.TensorArray(tf.float32, size=length)
        _, _, logits = tf.while_loop(
            lambda i, *_: i < length, body, (tf.constant(0), cache, logits)
        )
        return logits.stack()

    logits = steps(tf.constant(ids), cache).numpy()
    for i in range(length):
        np.testing.assert_allclose(logits[i], full[:, i], atol=2e-4, rtol=1e-4)
    return full


def assert_cached_search_matches_uncached(model, inputs: tf.Tensor, beam_size: int, use_xla: bool):
    """The cached search gives the ids and scores of rerunning the decoder on every prefix."""
    from t2t_repro.decoding.search import SearchConfig, Searcher

    config = dict(beam_size=beam_size, alpha=0.6, extra_length=4, use_xla=use_xla)
    ids, scores = Searcher(model, SearchConfig(**config))(inputs)
    ids_nc, scores_nc = Searcher(model, SearchConfig(**config, use_cache=False))(inputs)
    np.testing.assert_array_equal(ids_nc.numpy(), ids.numpy())
    np.testing.assert_allclose(scores_nc.numpy(), scores.numpy(), atol=1e-4)


def toy_checkpoint_dir(
    root, overrides: str = "max_length=12", step: int = 7, seed: int = 1, size: str = PLUMBING_MODEL
):
    """translate_toy data in ``root/data`` and an untrained transformer_tiny checkpoint (with
    hparams.json) in ``root/train``, by default of width 32 with one decoder layer and no
    encoder layer (``size``: ``PLUMBING_MODEL``; ``overrides`` come after it; ``size=""``
    keeps transformer_tiny's two layers of 128): what the decoder-side tools need, in seconds.
    The seeded initialisation makes its (nonsense) outputs deterministic, and for seed 1
    non-empty."""
    import keras

    keras.utils.set_random_seed(seed)

    import shutil

    problem = registry.problem("translate_toy")
    # A copy of the run's one translate_toy datagen output (what generate_data writes there;
    # the caller may change its copy).
    shutil.copytree(shared_toy_data(), root / "data")
    model = build_model(
        "transformer_tiny",
        ",".join(part for part in (size, overrides) if part),
        vocab_size=problem.vocab_sizes(str(root / "data"))[0],
    )
    (root / "train").mkdir()
    (root / "train" / "hparams.json").write_text(model.hparams.to_json())
    tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model), str(root / "train"), 3, checkpoint_name="ckpt"
    ).save(checkpoint_number=step)
    return root
