"""T2T's decode hook of a translation problem: the BLEU of the decodes against
``--decode_reference``, logged as a line and written as a TensorBoard scalar.

T2T (``data_generators/translate.py``, ``compute_bleu_summaries``, run by ``utils/decoding.py``,
``run_postdecode_hooks``) logs ``<decodes>: BLEU = %6.2f``, uncased (``bleu_hook.bleu_wrapper``'s
default), and writes the scalar ``BLEU`` at the newest checkpoint's step of the model dir to
``<model_dir>/<summaries_log_dir>`` (decode hparam, default ``decode``), suffixed with the
split decoded when one is named (``decode_test`` for ``--eval_use_test_set``, ``decode_eval``
for ``train_eval_and_decode``); with no checkpoint there it writes nothing.
"""

from __future__ import annotations

import os
import time

from t2t_repro.checkpoints.files import complete_checkpoints


def reference_bleu_score(decodes_path: str, reference_path: str) -> float:
    """T2T's uncased BLEU (x100) of the decodes against the reference, line by line."""
    from t2t_repro.data.text_files import DataError, ReadStats, read_lines
    from t2t_repro.metrics.bleu import t2t_bleu

    hyps = list(read_lines(decodes_path, ReadStats(), drop_carriage_returns=False))
    refs = list(read_lines(reference_path, ReadStats(), drop_carriage_returns=False))
    if len(hyps) != len(refs):
        raise DataError(
            f"--decode_reference {reference_path} has {len(refs)} lines but the decodes "
            f"{decodes_path} have {len(hyps)}; give the reference of the decoded input."
        )
    return t2t_bleu(refs, hyps, False)


def write_bleu_event(model_dir: str, log_dir_name: str, split: str | None, bleu: float) -> str:
    """Writes T2T's ``BLEU`` scalar; returns the event directory, or "" when ``model_dir``
    has no checkpoint (T2T: "Skipping decode hooks because no checkpoint yet available")."""
    from t2t_repro.metrics.bleu_per_step import ScalarEventFile

    found = complete_checkpoints(model_dir)
    if not found:
        return ""
    event_dir = os.path.join(model_dir, log_dir_name + (f"_{split}" if split else ""))
    events = ScalarEventFile(event_dir)
    events.write(found[-1][0], time.time(), {"BLEU": bleu})
    events.close()
    return event_dir


def log_reference_bleu(
    decodes_path: str, reference_path: str, model_dir: str, dhp, split: str | None
) -> str:
    """Writes the ``BLEU`` event; returns the BLEU line (T2T's hook does both)."""
    bleu = reference_bleu_score(decodes_path, reference_path)
    write_bleu_event(model_dir, dhp.summaries_log_dir, split, bleu)
    return f"{decodes_path}: BLEU = {bleu:6.2f}"
