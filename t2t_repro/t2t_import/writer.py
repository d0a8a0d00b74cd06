"""Writes a T2T training directory's model and Adam state as this project's output_dir.

The result is what ``t2t-trainer`` would have left: a ``ckpt-<global_step>`` TF2 checkpoint
(model, optimizer with its moments and step counter, input position 0), ``hparams.json`` and
``flags.txt``; so the decoder, the trainer (resuming at T2T's step with T2T's moments),
averaging, export and attention plots all read it. Everything is written into a hidden temp
directory beside ``output_dir`` and renamed at the end: an interrupted or failed import
leaves nothing; the T2T directory is only read.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np
import tensorflow as tf

from t2t_repro import fileio, registry
from t2t_repro.checkpoints.loading import checkpoint_reader
from t2t_repro.checkpoints.training import TrainingCheckpoint
from t2t_repro.hparam import HParams
from t2t_repro.hparams_lib.sizes import padded_vocab_size
from t2t_repro.learning_rate import t2t_steps_per_update
from t2t_repro.optimizer_names import registry_key
from t2t_repro.optimizers import make_optimizer
from t2t_repro.t2t_import.errors import T2TImportError
from t2t_repro.t2t_import.hparams_map import ImportedHParams, map_hparams
from t2t_repro.t2t_import.source import T2TTrainDir, read_t2t_dir
from t2t_repro.t2t_import.variables import (
    CheckpointValues,
    has_input,
    model_entries,
    vocab_sizes,
)
from t2t_repro.training.output_dir import FLAGS_FILE, HPARAMS_FILE


@dataclass(frozen=True)
class ImportResult:
    checkpoint: str
    step: int
    imported: ImportedHParams
    problem: str
    with_optimizer: bool


def _problem_values(
    problem_name: str,
    sizes: dict,
    data_dir: str,
    vocab: str,
    log: Callable[[str], None],
    divisor: int = 1,
) -> dict:
    """Vocabulary sizes (checked against the problem's vocabulary) and the target space id.
    ``divisor``: T2T's ``vocab_divisor``, which rounded the checkpoint's sizes up: the
    problem's own sizes are its vocabulary's, when given."""
    values = dict(sizes, target_space_id=0)
    problem = None
    if registry.is_problem(problem_name):  # a usr_dir problem's T2T _rev too
        problem = registry.problem(problem_name)
        values["target_space_id"] = problem.target_space_id
    else:
        log(
            f"note: problem {problem_name!r} is not registered here; target space id 0 and the "
            "checkpoint's vocabulary sizes are used."
        )
    if problem is not None and not data_dir and _sets_its_own_hparams(problem):
        log(
            f"note: {problem_name!r} is a T2T problem whose hparams() may set target_space_id "
            f"(it reads the vocabulary): give --data_dir so it is read; "
            f"{values['target_space_id']} is used."
        )
    if vocab:
        from t2t_repro.data import datagen_lib

        size = datagen_lib.load_vocab(vocab).vocab_size
        found = {"--vocab": (size, size)}
    elif data_dir and problem is not None:
        found = {f"--data_dir ({problem.vocab_filename})": problem.vocab_sizes(data_dir)}
    else:
        if divisor > 1:
            log(
                f"note: vocab_divisor={divisor} rounded T2T's vocabularies up: the checkpoint's "
                f"{sizes['input_vocab_size']} / {sizes['target_vocab_size']} rows are taken as "
                "the problem's sizes (give --vocab or --data_dir for its own)."
            )
        return values
    rounded = HParams(vocab_divisor=divisor)
    for source, (inputs, targets) in found.items():
        rows = (padded_vocab_size(inputs, rounded), padded_vocab_size(targets, rounded))
        if rows != (sizes["input_vocab_size"], sizes["target_vocab_size"]):
            padding = f" ({rows[0]} / {rows[1]} with vocab_divisor={divisor})" * (divisor > 1)
            raise T2TImportError(
                f"the vocabulary from {source} has {inputs} (inputs) / {targets} (targets) "
                f"entries{padding} but the checkpoint's embeddings have "
                f"{sizes['input_vocab_size']} / {sizes['target_vocab_size']} rows: it is not "
                "the vocabulary this model was trained with."
            )
        values.update(input_vocab_size=inputs, target_vocab_size=targets)
    if data_dir and problem is not None:
        # A T2T usr_dir's problem sets its space id in hparams() (T2T's Problem.hparams), which
        # reads the vocabulary: the trainer's problem hparams say it, as for the run itself.
        values["target_space_id"] = problem.problem_hparams(data_dir)["target_space_id"]
    return values


def _multi_label(problem_name: str, data_dir: str) -> bool | None:
    """True when the registered problem's target is T2T's MULTI_LABEL (its hparams read the
    vocabulary in ``data_dir``); None when it cannot be asked (then CLASS_LABEL)."""
    if not data_dir or not registry.is_problem(problem_name):
        return None
    problem = registry.problem(problem_name)
    if not hasattr(problem, "problem_hparams"):
        return None
    return problem.problem_hparams(data_dir).get("multi_label_target")


# T2T's optimizer slot variables (``<variable>/<optimizer name>[_k]``) and MultistepAdam's
# non-slot step counter (``utils/multistep_optimizer.py``, ``iter``).
T2T_SLOT = re.compile(r"/(Adam|AdamW|Adafactor|Momentum|Adagrad|RMSProp|Ftrl)(_\d+)?$")
T2T_NON_SLOT = re.compile(r"^(training/)?iter$")


def _optimizer_only(name: str, key: str, with_optimizer: bool) -> bool:
    """A T2T optimizer variable that is not imported: every slot when the optimizer starts
    fresh; MultistepAdam's gradient accumulator (``<variable>/Adam_2``) and counter always."""
    if key == "multistep_adam" and (name.endswith("/Adam_2") or T2T_NON_SLOT.search(name)):
        return True
    return not with_optimizer and bool(T2T_SLOT.search(name) or T2T_NON_SLOT.search(name))


def _restore_values(
    values: CheckpointValues, model, optimizer, step: int, weights_only: bool, scope: str
) -> bool:
    """Assigns weights (and Adam moments when present); returns whether moments were loaded."""
    entries = model_entries(model, scope)
    for entry in entries:
        entry.variable.assign(values.value(entry))
    if weights_only:
        return False
    prefix = next(
        (p for p in ("training/", "") if values.has(p + (entries[-1].t2t_name + "/Adam"))), None
    )
    if prefix is None:
        return False
    for entry in entries:
        slot = replace(entry, t2t_name=prefix + entry.t2t_name)  # its t2t_shape too
        index = optimizer._get_variable_index(entry.variable)
        optimizer._momentums[index].assign(values.value(slot, "/Adam", "Adam slot"))
        optimizer._velocities[index].assign(values.value(slot, "/Adam_1", "Adam slot"))
    for k, beta in ((1, optimizer.beta_1), (2, optimizer.beta_2)):
        power = float(values.get(f"{prefix}beta{k}_power", "Adam variable"))
        expected = beta ** (step + 1)
        if not np.isclose(power, expected, rtol=1e-4):
            raise T2TImportError(
                f"{prefix}beta{k}_power is {power:.6g} but global_step {step} with beta{k}="
                f"{beta} gives {expected:.6g}: the Adam step count differs from global_step "
                "(multistep or restarted optimizer). Use --weights_only to start Adam afresh."
            )
    return True


def _write(
    output_dir: str,
    model,
    optimizer,
    steps_per_update: int,
    imported: ImportedHParams,
    flags: dict,
    vocab: str,
    vocab_name: str,
) -> str:
    parent = os.path.dirname(fileio.expand(output_dir))
    fileio.makedirs(parent)
    local_parent = None if fileio.is_url(parent) else parent  # gs://...: staged locally, copied
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(output_dir)}.importing-", dir=local_parent)
    try:
        checkpoint = TrainingCheckpoint(tmp, model, optimizer)
        checkpoint.steps_per_update.assign(steps_per_update)
        step = int(optimizer.iterations.numpy()) * steps_per_update  # T2T's step
        checkpoint.save(step)
        with open(os.path.join(tmp, HPARAMS_FILE), "w", encoding="utf-8") as f:
            f.write(imported.hparams.to_json() + "\n")
        with open(os.path.join(tmp, FLAGS_FILE), "w", encoding="utf-8") as f:
            f.write("".join(f"--{k}={v}\n" for k, v in sorted(flags.items())))
        if vocab:
            fileio.copy(vocab, os.path.join(tmp, vocab_name))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp made it private; make it a normal directory.
        fileio.replace_dir(tmp, output_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return os.path.join(output_dir, f"ckpt-{step}")


def _sets_its_own_hparams(problem) -> bool:
    """A T2T usr_dir's problem that defines T2T's ``Problem.hparams`` hook itself (the
    compatibility layer's own come from t2t_repro; the project's problems have none)."""
    hook = getattr(type(problem), "hparams", None)
    return callable(hook) and not getattr(hook, "__module__", "").startswith("t2t_repro.")


def import_t2t_dir(
    t2t_dir: str,
    output_dir: str,
    *,
    data_dir: str = "",
    vocab: str = "",
    problem: str = "",
    hparams_set: str = "",
    ignore_hparams: Iterable[str] = (),
    weights_only: bool = False,
    log: Callable[[str], None] = print,
) -> ImportResult:
    """Imports the newest checkpoint of ``t2t_dir`` into the new directory ``output_dir``."""
    if fileio.exists(output_dir):
        raise T2TImportError(
            f"--output_dir {output_dir} already exists; the import writes a new "
            "directory (pick another name, or remove it first)."
        )
    if vocab and not fileio.isfile(vocab):
        raise T2TImportError(f"--vocab {vocab} does not exist.")
    source: T2TTrainDir = read_t2t_dir(t2t_dir)
    model_name = source.flags.get("model", "transformer")
    if model_name not in ("transformer", "transformer_encoder"):
        raise T2TImportError(
            f"flags.txt says --model={model_name}; only T2T's 'transformer' and "
            "'transformer_encoder' (a text classifier) are importable."
        )
    problem = problem or source.flags.get("problem", "")
    if not problem:
        raise T2TImportError("flags.txt names no --problem; pass --problem=<name>.")
    try:
        reader = checkpoint_reader(source.prefix)
    except (tf.errors.OpError, ValueError) as e:
        raise T2TImportError(f"{source.prefix} is unreadable or corrupt: {str(e)[:300]}") from e
    values = CheckpointValues(reader)
    sizes = vocab_sizes(values.shapes, model_name)
    divisor = int(source.hparams.get("vocab_divisor", 1))
    problem_values = _problem_values(problem, sizes, data_dir, vocab, log, divisor)
    tse = f"{model_name}/body/target_space_embedding/kernel"
    if values.has(tse):
        problem_values["target_space_vocab_size"] = values.shapes[tse][0]
    if model_name == "transformer_encoder":  # T2T's text classifier: a class-label target
        problem_values["class_label_target"] = True
        # MULTI_LABEL or CLASS_LABEL is the problem's (the checkpoint has the same variables).
        problem_values["multi_label_target"] = _multi_label(problem, data_dir)
    elif not has_input(values.shapes, model_name):
        problem_values["has_input"] = False
    imported = map_hparams(
        source.hparams,
        source.flags.get("hparams_set", ""),
        problem_values,
        hparams_set,
        ignore_hparams,
    )
    step = int(reader.get_tensor("global_step")) if values.has("global_step") else 0
    key = registry_key(imported.hparams.optimizer)
    # T2T's global_step counts batches; the optimizer here counts updates, and the checkpoint
    # is named by T2T's step at the last whole update (training/loop/step_count.py).
    steps_per_update = t2t_steps_per_update(
        imported.hparams.optimizer, imported.hparams.optimizer_multistep_accumulate_steps
    )
    step, pending = divmod(step, steps_per_update)
    model = registry.model(model_name)(imported.hparams)
    model.build()
    try:
        optimizer = make_optimizer(imported.hparams)
    except ValueError as e:
        raise T2TImportError(f"hparams.json: {e}") from e
    optimizer.build(model.trainable_variables)
    optimizer.iterations.assign(step)
    # Only T2T's Adam slots (LazyAdam's, AdamOptimizer's, MultistepAdam's moments) are
    # mapped; any other optimizer starts fresh here.
    adam_slots = key in ("adam", "true_adam", "multistep_adam")
    with_optimizer = _restore_values(
        values, model, optimizer, step, weights_only or not adam_slots, model_name
    )
    leftover = [n for n in values.unused() if not _optimizer_only(n, key, with_optimizer)]
    if leftover:
        raise T2TImportError(
            f"T2T variable {leftover[0]} maps to nothing in this model"
            f"{f' (and {len(leftover) - 1} more)' if len(leftover) > 1 else ''}"
            "; the checkpoint holds a model these hparams do not describe."
        )
    vocab_name = (
        registry.problem(problem).vocab_filename
        if registry.is_problem(problem)
        else os.path.basename(vocab)
    )
    flags = {
        "problem": problem,
        "model": model_name,
        "hparams_set": imported.hparams_set,
        "hparams": imported.overrides,
        "t2t_dir": fileio.expand(source.path),
        "t2t_checkpoint": os.path.basename(source.prefix),
        "output_dir": output_dir,
    }
    checkpoint = _write(
        output_dir, model, optimizer, steps_per_update, imported, flags, vocab, vocab_name
    )
    if not with_optimizer and not adam_slots and not weights_only:
        log(
            f"note: T2T's {imported.hparams.optimizer} slots are not imported (only Adam's "
            "are mapped): resumed training starts the optimizer fresh."
        )
    elif not with_optimizer:
        log("note: no Adam slots imported; resumed training starts Adam's moments at zero.")
    if pending and with_optimizer:
        log(
            f"note: T2T had accumulated {pending} micro-step(s) of the next multistep_adam "
            "update; they are not carried over (resumed training starts that update afresh)."
        )
    return ImportResult(checkpoint, step * steps_per_update, imported, problem, with_optimizer)
