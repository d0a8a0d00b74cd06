"""What ``t2t-translate-all`` does: translate one source file with every checkpoint of a model
dir, one file per checkpoint, for ``t2t-bleu --translations_dir`` to score
(``tensor2tensor/bin/t2t_translate_all.py``).

T2T runs ``t2t-decoder`` once per checkpoint (``--decoder_command``, e.g. a ``qsub``
wrapper). Here the model is loaded once and each checkpoint's weights are restored into it,
so the search is traced once for the whole run; ``decoder_command`` keeps T2T's way for
clusters. Outputs are ``<translations_dir>/<problem>-<step>`` (T2T's names), written
atomically and dated like their checkpoint (T2T's ``--keep_timestamp``); one that exists is
skipped, so a rerun continues. ``<problem>-flags.txt`` is the training run's flags.txt,
copied with its date, which ``t2t-bleu``'s ``report_zero`` takes as the start time.
"""

from __future__ import annotations

import collections
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

from t2t_repro import fileio
from t2t_repro.checkpoints.errors import CheckpointError
from t2t_repro.checkpoints.files import checkpoint_step_files, is_complete
from t2t_repro.checkpoints.loading import restore_model
from t2t_repro.data.text_files import iter_raw_lines
from t2t_repro.decoding import runner
from t2t_repro.errors import UsageError
from t2t_repro.step_files import StepFile, follow_steps


@dataclass
class TranslateAllConfig:
    model_dir: str
    source: str
    translations_dir: str
    problem: str
    data_dir: str
    hparams_set: str = ""
    hparams: str = ""
    model: str = "transformer"
    decode_hparams: str = ""  # beam_size and alpha included
    min_steps: int = 0
    wait_minutes: float = 0
    decoder_command: str = ""  # T2T's: "t2t-decoder {params}" run per checkpoint
    t2t_usr_dir: str = ""


def translation_path(translations_dir: str, problem: str, step: int) -> str:
    """T2T's name of a checkpoint's translation: ``<translations_dir>/<problem>-<step>``."""
    return os.path.join(translations_dir, f"{problem}-{step}")


# T2T's bleu_hook.StepFile, what {model.filename} or {model[0]} reads in --decoder_command
T2TStepFile = collections.namedtuple("T2TStepFile", "filename mtime ctime steps")


def command_fields(
    config: TranslateAllConfig, checkpoint: StepFile, out_file: str, params: str
) -> dict:
    """What T2T's ``t2t_translate_all.py`` main fills ``--decoder_command`` from (its
    ``locals()``): ``{params}``, the paths, and ``{model.filename}``, ``{model.steps}``,
    ``{model.mtime}``, ``{model.ctime}`` of the checkpoint (its ``bleu_hook.StepFile``: the
    .index file's times; ctime is the mtime on a remote file system)."""
    base = os.path.join(config.translations_dir, config.problem)
    ctime = checkpoint.mtime if checkpoint.ctime is None else checkpoint.ctime
    return {
        "params": params,
        "model_dir": config.model_dir,
        "translations_dir": config.translations_dir,
        "source": config.source,
        "translated_base_file": base,
        "flags_path": base + "-flags.txt",
        "out_file": out_file,
        "model": T2TStepFile(checkpoint.path, checkpoint.mtime, ctime, checkpoint.step),
    }


def check_decoder_command(config: TranslateAllConfig) -> None:
    """Before any checkpoint: the command's ``{...}`` fields are T2T's (:func:`command_fields`)."""
    command = config.decoder_command
    try:
        command.format(**command_fields(config, StepFile("ckpt-0", 0.0, 0), "out", ""))
    except (KeyError, AttributeError) as e:
        raise UsageError(
            f"--decoder_command={command!r}: {e} is not a field T2T fills (params, "
            "model_dir, translations_dir, source, translated_base_file, flags_path, out_file, "
            "model.filename, model.steps, model.mtime, model.ctime); write other braces as "
            "{{ and }}."
        ) from None
    except (IndexError, ValueError, TypeError) as e:
        raise UsageError(
            f"--decoder_command={command!r} is not a format string T2T can fill: {e} (write "
            "a literal brace as {{ or }})."
        ) from None


def translate_all(
    config: TranslateAllConfig, log: Callable[[str], None] | None = None
) -> list[str]:
    """Translates ``config.source`` with every checkpoint (following a running job with
    ``wait_minutes``); returns the translation files written (not those already there)."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    if not fileio.isfile(config.source):
        raise FileNotFoundError(f"--source: {config.source!r} does not exist.")
    if not fileio.isdir(config.model_dir) and not config.wait_minutes:
        raise CheckpointError(f"--model_dir {config.model_dir!r} is not a directory.")
    if config.decoder_command:
        check_decoder_command(config)
    fileio.makedirs(config.translations_dir)
    lines = list(iter_raw_lines(config.source))
    setup, written, seen = None, [], 0
    follow = follow_steps(
        lambda: checkpoint_step_files(config.model_dir),
        config.wait_minutes,
        config.min_steps,
        describe=f"checkpoint in {config.model_dir}",
        log=log,
    )
    for checkpoint in follow:
        seen += 1
        if seen == 1:  # the run exists now, even when followed from before its start
            _copy_flags_file(config)
        out = translation_path(config.translations_dir, config.problem, checkpoint.step)
        if fileio.exists(out):
            log(f"{out} exists; skipped")
            continue
        if config.decoder_command:
            _run_decoder_command(config, checkpoint, out, log)
            continue
        try:
            if setup is None:
                setup = runner.load_decoder(
                    config.problem,
                    config.hparams_set,
                    config.hparams,
                    config.data_dir,
                    "",  # hparams.json: the checkpoint's dir or its parent (TRAIN/avg)
                    checkpoint.path,
                    config.decode_hparams,
                    config.model,
                )
            else:
                restore_model(setup.model, checkpoint.path)
        except CheckpointError:
            if is_complete(checkpoint.path):
                raise
            log(f"warning: {checkpoint.path} was removed before it was read; skipped")
            continue
        log(f"translating with {checkpoint.path}")
        runner.decode_lines_to_file(setup, lines, out)
        fileio.set_mtime(out, checkpoint.mtime)  # T2T: t2t-decoder --keep_timestamp
        written.append(out)
        log(f"wrote {out}")
    if not seen and not config.wait_minutes:
        raise CheckpointError(
            f"No checkpoints at step >= {config.min_steps} in {config.model_dir!r}."
        )
    return written


def _copy_flags_file(config: TranslateAllConfig) -> None:
    """T2T copies the run's flags.txt with its date (``shutil.copy2``) so that t2t-bleu can
    date step 0; found in the model dir or, for ``TRAIN/avg``, its parent."""
    target = os.path.join(config.translations_dir, f"{config.problem}-flags.txt")
    run_dir = runner.run_dir_of(config.model_dir) or config.model_dir
    source = os.path.join(run_dir, "flags.txt")
    if fileio.exists(target) or not fileio.isfile(source):
        return
    fileio.copy_dated(source, target)


def _run_decoder_command(
    config: TranslateAllConfig, checkpoint: StepFile, out: str, log: Callable[[str], None]
) -> None:
    """T2T's way: ``--decoder_command`` with ``{params}`` replaced by t2t-decoder's flags for
    this checkpoint, run by the shell (it may only queue the job, as qsub does)."""
    flags = {
        "t2t_usr_dir": config.t2t_usr_dir,
        "data_dir": config.data_dir,
        "problem": config.problem,
        "decode_hparams": config.decode_hparams,
        "model": config.model,
        "hparams_set": config.hparams_set,
        "hparams": config.hparams,
        "checkpoint_path": checkpoint.path,
        "decode_from_file": config.source,
        "decode_to_file": out,
    }
    params = " ".join(f"--{k}={shlex.quote(v)}" for k, v in flags.items() if v)
    fields = command_fields(config, checkpoint, out, params + " --keep_timestamp")
    command = config.decoder_command.format(**fields)
    log(f"running: {command}")
    status = subprocess.run(command, shell=True, check=False).returncode
    if status:
        log(f"warning: the decoder command exited with status {status} for {checkpoint.path}")
