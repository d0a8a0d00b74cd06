"""A T2T problem's hooks mapped onto this project's run: ``hparams(defaults, model_hparams)``
and every field it sets, honoured; the hooks this project cannot honour, refused in one line
when a tool loads the problem to train or decode (never dropped).

T2T asks ``Problem.get_hparams(model_hparams)`` (``data_generators/problem.py``): the defaults
of ``_default_hparams`` go to ``hparams(defaults, model_hparams)``, which changes them in
place; ``model_hparams`` are the run's (``utils/hparams_lib.py``, ``create_hparams``: the set,
a saved hparams.json, ``data_dir``, the overrides). Here the fields T2T's ``transformer``
reads become this project's problem hparams (``hparams_lib.build.PROBLEM_HPARAMS``):

- ``vocab_size`` -> ``input_vocab_size`` / ``target_vocab_size`` (the embedding rows);
- ``loss_multiplier`` -> ``loss_multiplier`` (the training loss's factor, only when not 1);
- ``target_space_id`` -> ``target_space_id``;
- ``batch_size_multiplier`` -> the problem's ``batch_size_multiplier`` (bucket lengths);
- ``modality``: T2T's ``SYMBOL`` inputs and targets are what this project's model is; a
  ``SYMBOL`` ``context`` (``QuestionAndContext2TextProblem``'s) is accepted and, as in T2T's
  ``transformer``, not read; any other modality is refused;
- ``input_space_id``, ``stop_at_eos`` and fields of the problem's own: accepted, and as in
  T2T's ``transformer`` nothing reads them (decodes end at EOS here, as T2T's output does).
"""

from __future__ import annotations

import collections
import inspect
from typing import Any

from t2t_repro.data.input_pipeline import PACKED_FEATURES
from t2t_repro.hparam import HParams
from t2t_repro.metrics import eval_metrics
from t2t_repro.t2t_compat import example_reading
from t2t_repro.t2t_compat.modalities import ModalityType

# T2T's metric names (utils/metrics.py, Metrics) the trainer reports: the loss, accuracy,
# per-sequence accuracy and neg_log_perplexity always; accuracy_top5, approx_bleu_score,
# rouge_2_fscore and rouge_L_fscore when listed (training/loop/evaluation.py); approx_bleu_score
# also turns on the dev decodes scored by BLEU. Any other name is refused.
COMPUTED_METRICS = (*eval_metrics.ALWAYS, *eval_metrics.ON_REQUEST)
# T2T's QuestionAndContext2TextProblem names a SYMBOL ``context`` modality (text_problems.py,
# hparams); T2T's transformer body never reads features["context"] (models/transformer.py;
# utils/t2t_model.py, bottom, embeds it at most, in the inputs' reused scope): accepted, unread.
IGNORED_FEATURE = "context"


class ProblemHParams:
    """T2T's problem hparams object (an ``HParams`` whose values may be dicts): the fields of
    ``_default_hparams`` as attributes, and ``add_hparam``/``set_hparam``/``get``/``values``."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    def add_hparam(self, name: str, value: Any) -> None:
        if name in self.__dict__:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        setattr(self, name, value)

    def set_hparam(self, name: str, value: Any) -> None:
        setattr(self, name, value)

    def del_hparam(self, name: str) -> None:
        self.__dict__.pop(name, None)

    def get(self, name: str, default: Any = None) -> Any:
        return self.__dict__.get(name, default)

    def values(self) -> dict:
        return dict(self.__dict__)


def default_hparams() -> ProblemHParams:
    """T2T's ``problem.py:_default_hparams``."""
    return ProblemHParams(
        loss_multiplier=1.0,
        batch_size_multiplier=1,
        stop_at_eos=False,
        modality={},
        vocab_size={},
        input_space_id=0,
        target_space_id=0,
    )


def default_model_hparams(data_dir: str = "") -> HParams:
    """T2T's ``problem.py:default_model_hparams``, for a problem asked without a run's. T2T's
    ``data_dir`` is None, which this project's hparams cannot hold: "" (T2T reads it only as
    a truth value, ``get_hparams``)."""
    return HParams(
        max_input_seq_length=0,
        max_target_seq_length=0,
        prepend_mode="none",
        split_to_length=0,
        data_dir=data_dir,
    )


class FeatureInfo:
    """T2T's ``FeatureInfo`` (``problem.py``): a feature's encoder, modality, vocabulary size
    and space id, as ``Problem.feature_info`` gives them."""

    def __init__(
        self,
        encoder: Any = None,
        modality: str | None = None,
        vocab_size: int | None = None,
        space_id: int | None = None,
    ) -> None:
        self.encoder = encoder
        self.modality = modality
        self.vocab_size = vocab_size
        self.space_id = space_id


def feature_info(problem: Any, hp: ProblemHParams) -> dict[str, FeatureInfo]:
    """T2T's ``Problem.feature_info`` of the problem hparams ``hp`` that ``get_hparams`` made:
    each modality's feature with its vocab size, each encoder (``vocabulary``), the space ids."""
    features: dict[str, FeatureInfo] = collections.defaultdict(FeatureInfo)
    for name, modality in hp.modality.items():
        features[name].modality = modality
        features[name].vocab_size = hp.vocab_size[name]
    for name, encoder in hp.vocabulary.items():
        features[name].encoder = encoder
    if problem.has_inputs:
        features["inputs"].space_id = hp.input_space_id
    features["targets"].space_id = hp.target_space_id
    return features


def where(problem: Any) -> str:
    """``Class (registered_name) in file``: the start of every line about a usr_dir problem."""
    cls = type(problem)
    try:
        source = inspect.getsourcefile(cls) or cls.__module__
    except TypeError:
        source = cls.__module__
    return f"{cls.__name__} ({eval_metrics.tag_name(problem)}) in {source}"


def reverse_problem_hparams(p: ProblemHParams) -> None:
    """T2T's ``_reverse_problem_hparams`` (``problem.py``), in place: modalities of "input"
    and "target" features renamed to each other; vocab sizes swapped where a "target" feature
    has its "input" one (any other dropped, as T2T drops them); the ``vocabulary`` encoders
    and the space ids swapped (a None space id becomes GENERIC, 0); ``was_reversed`` set."""
    modality = {}
    for name, kind in (p.modality or {}).items():
        if "target" in name:
            name = name.replace("target", "input")
        elif "input" in name:
            name = name.replace("input", "target")
        modality[name] = kind
    p.modality = modality
    sizes = dict(p.vocab_size or {})
    swapped = {}
    for name in sizes:
        other = name.replace("target", "input")
        if "target" in name and other in sizes:
            swapped[name], swapped[other] = sizes[other], sizes[name]
    p.vocab_size = swapped
    vocabulary = p.get("vocabulary")
    if vocabulary is not None:
        inputs, targets = vocabulary.pop("inputs", None), vocabulary.pop("targets", None)
        if inputs is not None:
            vocabulary["targets"] = inputs
        if targets is not None:
            vocabulary["inputs"] = targets
    input_space_id, target_space_id = p.input_space_id, p.target_space_id
    p.target_space_id = input_space_id if input_space_id is not None else 0
    p.input_space_id = target_space_id if target_space_id is not None else 0
    p.set_hparam("was_reversed", True)


def copy_problem_hparams(p: ProblemHParams) -> None:
    """T2T's ``_copy_problem_hparams`` (``problem.py``), in place: the inputs' modality, vocab
    size, vocabulary and space id for the targets; ``was_copy`` set."""
    for field in ("modality", "vocab_size"):
        values = getattr(p, field, None)
        if values and "inputs" in values:
            values["targets"] = values["inputs"]
    vocabulary = p.get("vocabulary")
    if vocabulary is not None and "inputs" in vocabulary:
        vocabulary["targets"] = vocabulary["inputs"]
    p.target_space_id = p.input_space_id if p.input_space_id is not None else 0
    p.set_hparam("was_copy", True)


def refuse_unreversible(problem: Any, p: ProblemHParams, error: type) -> None:
    """One line for a _rev whose base's targets are not symbols (a classifier's labels): T2T's
    reversal makes them the inputs, which this project's transformer cannot read."""
    kind = (p.modality or {}).get("targets", ModalityType.SYMBOL)
    if kind != ModalityType.SYMBOL:
        raise error(
            f"{where(problem)}: T2T's _rev makes the targets' modality ({kind!r}) the inputs'; "
            "this project's transformer reads symbol inputs only (ModalityType.SYMBOL): use "
            f"--problem={problem.name}."
        )


def ask(problem: Any, model_hparams: HParams | None, data_dir: str, error: type) -> ProblemHParams:
    """T2T's ``get_hparams``: the defaults after ``problem.hparams(defaults, model_hparams)``.
    The hook gets a copy of the run's model hparams; changing them is refused (set them in the
    hparams set instead), as is returning something (T2T raises too)."""
    model_hparams = (
        model_hparams.copy() if model_hparams is not None else default_model_hparams(data_dir)
    )
    before = model_hparams.values()
    defaults = default_hparams()
    returned = problem.hparams(defaults, model_hparams)
    if returned is not None:
        raise error(
            f"{where(problem)}: hparams(defaults, model_hparams) returned a value; as in T2T it "
            "must change `defaults` in place and return None."
        )
    after = model_hparams.values()
    missing = object()
    changed = sorted(
        k for k in set(before) | set(after) if before.get(k, missing) != after.get(k, missing)
    )
    if changed:
        raise error(
            f"{where(problem)}: hparams() changed the model hparams {', '.join(changed)}; set "
            "them in your hparams set (or --hparams) instead."
        )
    return defaults


def to_run_hparams(problem: Any, p: ProblemHParams, encoders: dict, error: type) -> dict:
    """The project's problem hparams of T2T's ``p``; a field this project cannot honour is
    refused in one line."""
    modality = dict(p.modality or {})
    vocab_size = dict(p.vocab_size or {})
    for feature, kind in modality.items():
        if feature == "targets" and kind in (ModalityType.CLASS_LABEL, ModalityType.MULTI_LABEL):
            continue  # a text classifier's: transformer_encoder's class_label_top
        if feature == "targets" and "label" in str(kind):
            raise error(
                f"{where(problem)}: hparams() sets modality['targets'] = {kind!r}; of T2T's "
                "class-label targets only ModalityType.CLASS_LABEL (one label an example) and "
                "MULTI_LABEL (label lists) are provided here: use one of them."
            )
        if feature == IGNORED_FEATURE and kind == ModalityType.SYMBOL:
            continue  # QuestionAndContext2TextProblem's: T2T's transformer never reads it
        if feature in PACKED_FEATURES and kind == ModalityType.IDENTITY:
            continue  # a packed problem's segmentations and positions (docs/packing.md)
        if feature not in ("inputs", "targets") or kind != ModalityType.SYMBOL:
            raise error(
                f"{where(problem)}: hparams() sets modality[{feature!r}] = {kind!r}; this "
                "project's transformer has symbol inputs and targets only "
                "(ModalityType.SYMBOL): remove it or use Text2TextProblem's."
            )
    ignored = {IGNORED_FEATURE} if modality.get(IGNORED_FEATURE) == ModalityType.SYMBOL else set()
    ignored |= {name for name in PACKED_FEATURES if vocab_size.get(name, 0) is None}
    extra = sorted(set(vocab_size) - {"inputs", "targets"} - ignored)
    if extra:
        raise error(
            f"{where(problem)}: hparams() sets vocab_size for {', '.join(extra)}; this project's "
            "transformer reads only 'inputs' and 'targets'."
        )
    sizes = {}
    for feature in ("inputs", "targets"):
        # A problem without inputs (a language model): the decoder alone reads the targets'.
        read = "targets" if feature == "inputs" and not problem.has_inputs else feature
        size = vocab_size.get(read) or _encoder_size(problem, encoders[read], read, error)
        if not isinstance(size, int) or isinstance(size, bool) or size < 2:
            raise error(
                f"{where(problem)}: hparams() sets vocab_size[{feature!r}] = {size!r}; it must "
                "be an integer >= 2 (the vocabulary's size)."
            )
        sizes[feature] = size
    multi_label = modality.get("targets") == ModalityType.MULTI_LABEL
    class_label = multi_label or modality.get("targets") == ModalityType.CLASS_LABEL
    multiplier = _number(problem, "loss_multiplier", p.loss_multiplier, float, error)
    # The trainer's length_multiplier, as T2T's input_fn reads it (problem.py, input_fn).
    problem.batch_size_multiplier = _number(
        problem, "batch_size_multiplier", p.batch_size_multiplier, int, error
    )
    return dict(
        input_vocab_size=sizes["inputs"],
        target_vocab_size=sizes["targets"],
        target_space_id=_number(problem, "target_space_id", p.target_space_id, int, error),
        target_slot_ids="",
        loss_multiplier=multiplier if multiplier != 1.0 else None,
        has_input=None if problem.has_inputs else False,
        class_label_target=True if class_label else None,
        multi_label_target=True if multi_label else None,
    )


def _encoder_size(problem: Any, encoder: Any, feature: str, error: type) -> Any:
    """The encoder's ``vocab_size``; T2T's base ``TextEncoder`` (a plain ``Problem``'s default
    encoders) has none, which the model's embedding needs: one line."""
    try:
        return encoder.vocab_size
    except NotImplementedError:
        raise error(
            f"{where(problem)}: the {feature} encoder ({type(encoder).__name__}) has no "
            f"vocab_size, T2T's TextEncoder default; set defaults.vocab_size[{feature!r}] in "
            "hparams() or return encoders with a vocab_size from feature_encoders()."
        ) from None


def _number(problem: Any, name: str, value: Any, kind: type, error: type) -> Any:
    """``value`` as ``kind``: a positive number (an integer for ``kind`` int), or a
    non-negative integer for a space id."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and kind is int:
        ok = float(value).is_integer()
    lowest = 0 if name.endswith("space_id") else 1e-300
    if not ok or value < lowest:
        what = "a non-negative integer" if lowest == 0 else f"a positive {kind.__name__}"
        raise error(f"{where(problem)}: hparams() sets {name} = {value!r}; it must be {what}.")
    return kind(value)


# T2T Problem hooks of its input pipeline, decoding and metrics that nothing here calls, and
# what to do instead (``data_generators/problem.py``). Its example_reading_spec,
# decode_example and preprocess_example are called (t2t_compat/example_reading.py);
# preprocess (a whole dataset's transform) is not a per-example map.
_UNCALLED_HOOKS = (
    ("preprocess", "override preprocess_example, which runs on every example, instead"),
    ("dataset", "the tools read the shards themselves"),
    ("input_fn", "the tools read the shards themselves"),
    ("serving_input_fn", "t2t-exporter builds the serving input"),
    ("eval_metric_fns", "eval_metrics() names the metrics, see docs/porting.md"),
    ("all_metrics_fns", "eval_metrics() names the metrics, see docs/porting.md"),
    ("decode_hooks", "score decodes with t2t-bleu"),
    ("eval_hooks", "the trainer's evaluation takes no Estimator hooks"),
    ("make_estimator_input_fn", "the tools read the shards themselves"),
    ("export_assets", "t2t-exporter writes the vocabularies the export needs"),
)


def defined_by_usr_dir(cls: type, name: str) -> bool:
    """Whether the class that gives ``cls`` its ``name`` is the usr_dir's, not t2t_compat's."""
    for owner in cls.__mro__:
        if name in owner.__dict__:
            return not owner.__module__.startswith("t2t_repro.")
    return False


def refuse_unhonoured_hooks(problem: Any, error: type) -> None:
    """One line for the first hook ``problem`` overrides that this project cannot honour (the
    input pipeline, decoding and metrics are the project's: ``_UNCALLED_HOOKS``), a reading
    spec this project cannot read (``example_reading.checked_spec``), or ``eval_metrics``
    naming what is not computed. ``batch_size_means_tokens`` is not among
    them: T2T's ``data_reader.input_fn`` batches variable-length text by tokens whatever it
    says ("Shapes are not fully defined. Assuming batch_size means tokens."), as here."""
    cls = type(problem)
    for hook, instead in _UNCALLED_HOOKS:
        if defined_by_usr_dir(cls, hook):
            raise error(
                f"{where(problem)}: overrides {hook}, which this project does not call; remove "
                f"it ({instead})."
            )
    if defined_by_usr_dir(cls, "example_reading_spec"):
        example_reading.checked_spec(problem, where(problem), error)
    unknown = [m for m in problem.eval_metrics() if m not in COMPUTED_METRICS]
    if unknown:
        raise error(
            f"{where(problem)}: eval_metrics() names {', '.join(unknown)}, which this project "
            f"does not compute; it reports {', '.join(COMPUTED_METRICS)} (remove the others)."
        )
