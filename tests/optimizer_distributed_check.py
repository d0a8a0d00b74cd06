"""Run as a subprocess (logical CPUs must be configured before TF starts): T2T's Adafactor
and multistep_adam (t2t_repro/optimizers/), with T2T's weight decay, weight and gradient noise
and clipping, update the same weights on 1 device and on 2 mirrored devices (also
loss-scaled). Prints JSON: per optimizer, the max weight difference
from the 1-device update over the update itself. Reuses ``distributed_check``'s model,
batches and ``run``."""

import json
import sys

import tensorflow as tf

from t2t_repro.training.cluster.distribution import split_cpu
from tests.distributed_check import dataset, diff, full, halves, initial_weights, run


def main():
    devices = split_cpu(2)
    single = tf.distribute.OneDeviceStrategy(devices[0])
    mirrored = tf.distribute.MirroredStrategy(devices)
    single_batches = lambda: iter(single.experimental_distribute_dataset(dataset([full])))  # noqa: E731
    # Replica 0 gets the first half, replica 1 the second: one micro-step is the full batch.
    mirrored_batches = lambda: iter(  # noqa: E731
        mirrored.distribute_datasets_from_function(lambda ctx: dataset(halves))
    )
    ratios = {}
    for name, accumulate in (("Adafactor", 1), ("multistep_adam", 2)):
        extra = f",optimizer={name},weight_decay=0.01,clip_grad_norm=0.05,weight_noise=1.0"
        if accumulate == 1:  # (2 micro-steps draw 2 gradient noises: not the 1-step update)
            extra += ",grad_noise_scale=0.001"
        _, one = run(
            single, single_batches, 1, overrides=f"{extra},optimizer_multistep_accumulate_steps=1"
        )
        update = diff(one, initial_weights(one))
        # multistep_adam: two micro-steps of the same global batch, each reduced on its own,
        # average to the one-step update.
        extra += f",optimizer_multistep_accumulate_steps={accumulate}"
        _, two = run(mirrored, mirrored_batches, accumulate, overrides=extra)
        _, scaled = run(mirrored, mirrored_batches, accumulate, loss_scale=True, overrides=extra)
        ratios[name] = [diff(one, two) / update, diff(one, scaled) / update]
    print(json.dumps(ratios))


if __name__ == "__main__":
    main()
    sys.exit(0)
