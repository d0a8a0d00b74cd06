"""Checkpoints, all in one place: which ``ckpt-N`` a directory holds (``files``), a training
run's checkpoint of model, optimizer and input position (``training``), loading a trained model
from an output_dir (``loading``), averaging the last n (``averaging``), and the one error
(``errors``)."""
