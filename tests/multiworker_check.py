"""Run as a subprocess: three updates under MultiWorkerMirroredStrategy (from TF_CONFIG, as the
trainer builds it) where worker i feeds half i of the global batch, or (``single``) the same
global batch on one device; an optional third argument adds hparams overrides (another
optimizer). Saves the weights to the .npz given and prints the loss as JSON."""

import json
import sys

import numpy as np
import tensorflow as tf

from t2t_repro.training.cluster.distribution import cluster, make_strategy
from tests.distributed_check import dataset, full, halves, run


def main(mode: str, out_path: str, overrides: str = "") -> None:
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

    loss, weights = run(strategy, batches, 1, steps=3, overrides=overrides)
    np.savez(out_path, *weights)
    print(json.dumps({"loss": loss}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
