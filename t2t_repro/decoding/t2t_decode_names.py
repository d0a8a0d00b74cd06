"""T2T 1.15.7's decode hparams that this project does not store, in one table.

T2T's ``decode_hparams`` (``tensor2tensor/utils/decoding.py``) defines 41 names; the ones
read here (by the searches, and for the outputs' names and records) are
``line_decoder.DECODE_DEFAULTS``. Every other one is accepted in
``--decode_hparams`` under its name, typed by T2T's default, as T2T's ``HParams.parse``
takes it: one that changes nothing for a text model here takes any value (``NO_EFFECT``,
with why), and one that would change the output where it is read is refused in one line
there unless it is at T2T's default (``NOT_DONE``: what T2T does, and in which of its decode
modes: a split, a file, stdin, an export). The first are
dropped from the decode hparams; the second stay, for :func:`check_mode` where a mode runs.
"""

from __future__ import annotations

from t2t_repro.hparam import HParams, HParamsError

_FLAG = "t2t-decoder sets it from its flag of that name (t2t_decoder.py, create_decode_hparams)"
_IMAGES = "read only for image and video problems"
_UNREAD = "nothing in T2T 1.15.7 reads it"
_RESEARCH = "read only by T2T's research models (transformer_parallel, image_transformer_2d)"

# name: (T2T's default, why no value changes a text model's decodes here)
NO_EFFECT = {
    # t2t-trainer takes these two as its flags of those names (commands/trainer.py)
    "decode_to_file": ("", _FLAG),
    "decode_reference": ("", _FLAG),
    "decode_in_memory": (False, _FLAG),
    # (t2t-trainer's decode schedules refuse shards > 1: training/run_setup.py)
    "shards": (1, _FLAG + " (--decode_shards)"),
    "shard_id": (0, _FLAG + " (--worker_id)"),
    "decode_timeout_mins": (240, "read by T2T's continuous_decode schedules, refused here"),
    "eos_penalty": (0.0, _UNREAD),
    "min_length_ratio": (0.0, _UNREAD),
    "insertion_parallel": (False, _UNREAD),
    "block_size": (0, _RESEARCH),
    "guess_and_check_top_k": (0, _RESEARCH),
    "guess_and_check_epsilon": (-1, _RESEARCH),
    "display_decoded_images": (False, _IMAGES),
    "save_images": (False, _IMAGES),
    "frames_per_second": (10, _IMAGES),
    "border_percent": (2, _IMAGES),
    "max_display_decodes": (5, _IMAGES),
    "max_display_outputs": (10, _IMAGES),
    "vgg_ckpt_path": ("", _IMAGES),
    "mlperf_decode_step": (0.0, "MLPerf compliance logging"),
    "mlperf_threshold": (25.0, "MLPerf compliance logging"),
    "mlperf_success": (False, "MLPerf compliance logging"),
    "force_decode_length": (
        False,
        "greedy search decodes on after EOS, but the output is cut at EOS and its score "
        "stops there (models/transformer.py, fast_decode)",
    ),
}

SPLIT, FILE, STDIN, EXPORT = "split", "file", "stdin", "export"

# name: (T2T's default, what another value does in T2T's decoding.py, the modes reading it).
# The first two write what T2T's search leaves after EOS (ids or "<pad>"s up to its loop's
# last step, which depends on T2T's batches of the split, padded as its input pipeline pads
# them), which no other search reproduces; the last two need T2T's multi-problem models and
# its Estimator's infer outputs.
NOT_DONE = {
    "skip_eos_postprocess": (
        False,
        "keeps what follows EOS in each output",
        {SPLIT, FILE, STDIN},
    ),
    "identity_output": (False, "writes the output ids instead of text", {SPLIT, STDIN}),
    "multiproblem_task_id": (-1, "ends each input with that task id instead of EOS", {FILE}),
    "export_extra_infer_outputs": ("", "adds model outputs to the SavedModel", {EXPORT}),
}


def t2t_decode_defaults() -> dict:
    """T2T's default of every decode hparam name this project does not store."""
    return {name: entry[0] for name, entry in {**NO_EFFECT, **NOT_DONE}.items()}


def settle_t2t_names(hp: HParams) -> None:
    """Drops the ``NO_EFFECT`` names from ``hp``: nothing here reads them."""
    for name in NO_EFFECT:
        if name in hp:
            hp.del_hparam(name)


def check_mode(hp: HParams, mode: str) -> None:
    """Refuses (one line) a ``NOT_DONE`` name off T2T's default that ``mode`` would read."""
    for name, (default, effect, modes) in NOT_DONE.items():
        if mode in modes and name in hp and hp.get(name) != default:
            raise HParamsError(
                f"--decode_hparams: {name}={hp.get(name)!r} is not implemented here (decoding "
                f"a {mode}, T2T {effect}); leave it at T2T's default {default!r}."
            )
