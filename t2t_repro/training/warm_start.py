"""``--warm_start_from``: a new run starts from another run's model weights (fine-tuning).

As T2T (``tensor2tensor/utils/t2t_model.py``, ``initialize_from_ckpt``): only the model's
weights are loaded; the step starts at 0 and the optimizer is new (fresh Adam moments, the
learning-rate schedule from step 0); and the warm start applies only when ``output_dir`` has
no checkpoint yet (a rerun resumes from its own checkpoints instead). Unlike T2T, which loads
the variables it finds and silently skips the others, every model variable must come from the
source with its shape: a vocabulary or size mismatch is refused in one line, before the
trainer writes anything.

The source is a checkpoint prefix or a directory (its newest ``ckpt-N``) of this project:
a t2t-trainer output_dir, a t2t-avg-all output or a t2t-import output. The model's dropout
random-number states are not taken from the source (T2T restores trainable variables only).
"""

from __future__ import annotations

import hashlib
import os

from t2t_repro import fileio, registry
from t2t_repro.checkpoints.errors import CheckpointError
from t2t_repro.checkpoints.loading import resolve_checkpoint, restore_model, saved_hparams
from t2t_repro.hparam import HParams
from t2t_repro.hparams_lib.sizes import attention_channels, layer_counts, padded_vocab_size
from t2t_repro.registry import RegistryError
from t2t_repro.training.output_dir import read_flags

FLAG = "--warm_start_from"


def source_prefix(path: str) -> str:
    """The checkpoint prefix ``path`` names (its newest ``ckpt-N`` for a directory)."""
    base = os.path.basename(path.rstrip("/"))
    t2t_dir = fileio.isdir(path) and any(
        n.startswith("model.ckpt-") and n.endswith(".index") for n in fileio.listdir(path)
    )
    if t2t_dir or base.startswith("model.ckpt-"):
        raise CheckpointError(
            f"{FLAG}={path} is a tensor2tensor checkpoint (model.ckpt-N): convert it first with "
            f"t2t-import --t2t_dir={path} --output_dir=IMPORTED, then pass {FLAG}=IMPORTED."
        )
    try:
        return resolve_checkpoint(path)
    except CheckpointError as e:
        raise CheckpointError(f"{FLAG}: {e}") from None


def model_sizes(hp: HParams) -> dict:
    """The hparams that set the model's variable shapes, with T2T's 0 = "as hidden_size /
    num_hidden_layers" resolved (``transformer.py``'s defaults)."""
    (encoder_layers, decoder_layers), (key, value) = layer_counts(hp), attention_channels(hp)
    return {
        "input_vocab_size": hp.get("input_vocab_size"),
        "target_vocab_size": hp.get("target_vocab_size"),
        # the embeddings' rows (T2T names its modality scopes by them)
        "input_vocab_size rounded up by vocab_divisor": padded_vocab_size(
            hp.get("input_vocab_size"), hp
        ),
        "target_vocab_size rounded up by vocab_divisor": padded_vocab_size(
            hp.get("target_vocab_size"), hp
        ),
        "hidden_size": hp.get("hidden_size"),
        "filter_size": hp.get("filter_size"),
        "num_encoder_layers": encoder_layers,
        "num_decoder_layers": decoder_layers,
        "attention_key_channels": key,
        "attention_value_channels": value,
        # T2T's 2-D or 3-D attention variables: the same shapes here, another meaning
        "attention_variables_3d": bool(hp.get("attention_variables_3d", False)),
    }


def check_compatible(prefix: str, hparams: HParams, problem, data_dir: str) -> None:
    """Refuses a source whose saved hparams give other variable shapes than ``hparams``, or
    whose vocabulary file (found through its ``flags.txt``) differs from this run's."""
    source_dir = os.path.dirname(prefix)
    saved = saved_hparams(source_dir)
    if saved is not None:
        ours = model_sizes(hparams)
        for name, theirs in model_sizes(saved).items():
            if theirs != ours[name]:
                raise CheckpointError(
                    f"{FLAG}={prefix}: its model has {name}={theirs}, this run's has "
                    f"{name}={ours[name]}; a warm start needs the same vocabulary and model "
                    "sizes (use the source's hparams set and its vocabulary)."
                )
    theirs, ours = _source_vocab(source_dir), _vocab(problem, data_dir)
    if theirs and ours and _read_bytes(theirs) != _read_bytes(ours):
        raise CheckpointError(
            f"{FLAG}={prefix}: its vocabulary {theirs} differs from this run's {ours}: the same "
            "ids would mean other subwords. Copy the source's vocabulary into --data_dir (as "
            f"{os.path.basename(ours)}) and rerun t2t-datagen, or train from scratch."
        )


def warm_start(model, prefix: str) -> str:
    """Loads ``model``'s weights from ``prefix`` (every variable, same shapes), keeping the
    model's own dropout random-number states; says so and returns ``prefix``."""
    rng_states = [(v, v.numpy()) for v in model.variables if "seed_generator" in v.path]
    try:
        restore_model(model, prefix)
    except CheckpointError as e:
        raise CheckpointError(f"{FLAG}: {e}") from None
    for variable, value in rng_states:
        variable.assign(value)
    print(f"warm start from {prefix}: its model weights, step 0, a new optimizer", flush=True)
    return prefix


def loaded(prefix: str, model) -> dict[str, str]:
    """What a worker warm-started from, for the start-up handshake: the checkpoint and a
    digest of the weights it loaded (a stale listing of the source directory, or another
    source, gives other weights: the workers would train different models)."""
    digest = hashlib.sha256()
    for variable in sorted(model.variables, key=lambda v: v.path):
        if "seed_generator" not in variable.path:  # the model's own dropout states
            digest.update(variable.path.encode() + variable.numpy().tobytes())
    return {"source": prefix, "weights": digest.hexdigest()[:12]}


def ignored(source: str, restored: str) -> str:
    """A rerun resumes from its own checkpoint (T2T: the warm start is for a new run only)."""
    print(
        f"{FLAG}={source} is ignored: the run resumes from {restored} (a warm start "
        "applies only to a run with no checkpoint yet, as in T2T)",
        flush=True,
    )
    return source


def start_from(
    source: str, restored: str | None, model, hparams: HParams, problem, data_dir: str
) -> str:
    """T2T's --warm_start_from: on a new run, ``source``'s model weights into ``model`` (after
    ``check_compatible``); on a resume (``restored``), nothing. Returns the exact checkpoint
    prefix, for flags.txt."""
    if restored:
        return ignored(source, restored)
    prefix = source_prefix(source)
    check_compatible(prefix, hparams, problem, data_dir)
    return warm_start(model, prefix)


def _source_vocab(source_dir: str) -> str:
    """The vocabulary file of the run that wrote ``source_dir`` (its flags.txt's --problem
    and --data_dir), when that problem is registered here and the file exists; else ""."""
    flags = read_flags(source_dir)
    if not flags.get("problem") or not flags.get("data_dir"):
        return ""
    try:
        problem = registry.problem(flags["problem"])
    except RegistryError:
        return ""
    return _vocab(problem, flags["data_dir"])


def _vocab(problem, data_dir: str) -> str:
    path = problem.vocab_path(data_dir) if hasattr(problem, "vocab_path") else ""
    return path if path and fileio.isfile(path) else ""


def _read_bytes(path: str) -> bytes:
    with fileio.open(path, "rb") as f:
        return f.read()
