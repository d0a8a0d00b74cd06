"""Run as a subprocess: three updates under MultiWorkerMirroredStrategy (from TF_CONFIG, as the
trainer builds it) where worker i feeds half i of the global batch, or (``single``) the same
global batch on one device; once per case argument given, in one process and one cluster. A
case is ``<model>:<hparams overrides>``: model ``encoder_decoder`` (reads the inputs, padded in
one half) or ``decoder`` (the language model of tests/distributed_check.py, a cheaper trace);
overrides "" for none. Saves run i's weights to ``<out_prefix>-<i>.npz`` and prints the losses
as JSON."""

import json
import sys

import numpy as np
import tensorflow as tf

from t2t_repro.training.cluster.distribution import cluster, make_strategy
from tests.distributed_check import dataset, full, halves, run

MODELS = {"encoder_decoder": True, "decoder": False}  # model -> has_input


def main(mode: str, out_prefix: str, *cases: str) -> None:
    # As tests/distributed_check.py: grappler's rewrites keep the results, at a cost.
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    if mode == "single":
        strategy = tf.distribute.OneDeviceStrategy("/cpu:0")

        def batches():
            return iter(strategy.experimental_distribute_dataset(dataset([full])))
    else:
        strategy = make_strategy()
        if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
            sys.exit(f"expected MultiWorkerMirroredStrategy from TF_CONFIG, got {strategy}")
        assert cluster().workers == strategy.num_replicas_in_sync == 2

        def batches():
            return iter(
                strategy.distribute_datasets_from_function(
                    lambda ctx: dataset([halves[ctx.input_pipeline_id]])
                )
            )

    losses = []
    for index, case in enumerate(cases):
        model, _, extra = case.partition(":")
        if model not in MODELS:
            sys.exit(f"case {case!r}: the model before ':' must be one of {sorted(MODELS)}")
        loss, weights = run(strategy, batches, 1, steps=3, overrides=extra, has_input=MODELS[model])
        np.savez(f"{out_prefix}-{index}.npz", *weights)
        losses.append(loss)
    print(json.dumps({"losses": losses}))


if __name__ == "__main__":
    main(*sys.argv[1:])
