"""T2T 1.15.7's decode hparams that this project does not store, in one table.

T2T's ``decode_hparams`` (``tensor2tensor/utils/decoding.py``) defines 41 names; the ones
the searches here read are ``line_decoder.DECODE_DEFAULTS``. Every other one is accepted in
``--decode_hparams`` under its name, typed by T2T's default, as T2T's ``HParams.parse``
takes it: one that changes nothing for a text model here takes any value (``NO_EFFECT``,
with why), and one that would change the output is refused in one line unless it is at
T2T's default (``NOT_DONE``, with what T2T does). Neither is kept on the decode hparams.
"""

from __future__ import annotations

from t2t_repro.hparam import HParams, HParamsError

_FLAG = "t2t-decoder sets it from its flag of that name (t2t_decoder.py, create_decode_hparams)"
_IMAGES = "read only for image and video problems"
_UNREAD = "nothing in T2T 1.15.7 reads it"
_RESEARCH = "read only by T2T's research models (transformer_parallel, image_transformer_2d)"

# name: (T2T's default, why no value changes a text model's decodes here)
NO_EFFECT = {
    "decode_to_file": ("", _FLAG),
    "decode_reference": ("", _FLAG),
    "decode_in_memory": (False, _FLAG),
    "shards": (1, _FLAG + " (--decode_shards)"),
    "shard_id": (0, _FLAG + " (--worker_id)"),
    "decode_timeout_mins": (240, "read by T2T's continuous_decode schedules, refused here"),
    "summaries_log_dir": ("decode", "where T2T's decode hooks write image summaries"),
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
}

# name: (T2T's default, what another value does in T2T's decoding.py or transformer.py)
NOT_DONE = {
    "log_results": (True, "writes no decode file for a split (its decodes are only returned)"),
    "skip_eos_postprocess": (False, "keeps what follows EOS in each output"),
    "identity_output": (False, "writes the output ids instead of text"),
    "force_decode_length": (False, "greedy search decodes on after EOS to the full length"),
    "num_decodes": (1, "decodes a split that many times, or repeats each input line"),
    "shards_start_offset": (0, "adds an offset to the shard number in output file names"),
    "shard_google_format": (False, "names output shards name-NNNNN-of-NNNNN"),
    "multiproblem_task_id": (-1, "prepends a task id to each input (multi-problem models)"),
    "export_extra_infer_outputs": ("", "adds model outputs to an exported SavedModel"),
}


def t2t_decode_defaults() -> dict:
    """T2T's default of every decode hparam name this project does not store."""
    return {name: entry[0] for name, entry in {**NO_EFFECT, **NOT_DONE}.items()}


def settle_t2t_names(hp: HParams) -> None:
    """Refuses a ``NOT_DONE`` name set to another value than T2T's default (one line), then
    removes every name of this table from ``hp``: nothing here reads them."""
    for name, (default, effect) in NOT_DONE.items():
        if name in hp and hp.get(name) != default:
            raise HParamsError(
                f"--decode_hparams: {name}={hp.get(name)!r} is not implemented here (in T2T it "
                f"{effect}); leave it at T2T's default {default!r}."
            )
    for name in t2t_decode_defaults():
        if name in hp:
            hp.del_hparam(name)
