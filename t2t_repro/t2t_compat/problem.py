"""``tensor2tensor.data_generators.problem`` for a T2T usr_dir: ``DatasetSplit``, ``SpaceID``
and ``Problem``, T2T's interface (``tensor2tensor/data_generators/problem.py``) on this
project's ``problems.base.Problem``, so the trainer, decoder and datagen run a T2T problem
through the hooks they call on every problem.

Two names meet here. T2T calls the eval split ``"eval"`` (``DatasetSplit.EVAL``) and names its
shards ``-dev-``; this project's tools say ``"dev"``: ``split_file_name`` maps either to the
shard name. T2T's ``generate_data(data_dir, tmp_dir, task_id)`` and the tools'
``generate_data(data_dir, tmp_dir, num_workers, max_cases=, random_seed=, progress=)`` are one
method: a user's own ``generate_data`` is wrapped at registration (``on_t2t_registration``, which
``t2t_compat/registry.py`` calls, knowing nothing of this class).
"""

from __future__ import annotations

import functools
import os
import time
from typing import Any

from t2t_repro import fileio
from t2t_repro.builtin.problems import base
from t2t_repro.data import records, t2t_shards
from t2t_repro.errors import UserError
from t2t_repro.metrics.eval_metrics import on_request
from t2t_repro.t2t_compat import (
    datagen_tasks,
    example_reading,
    problem_hparams,
    refusals,
    rev_variant,
    text_encoder,
)

# T2T's names of problem.py that problem_hparams.py defines here: the model hparams a problem is
# asked with when a run gives none; a feature's encoder, modality, vocab size and space id.
FeatureInfo = problem_hparams.FeatureInfo
default_model_hparams = problem_hparams.default_model_hparams


class DatasetSplit:
    """T2T's split names (``tf.estimator.ModeKeys`` values)."""

    TRAIN = "train"
    EVAL = "eval"
    TEST = "test"


_FILE_SPLITS = {
    DatasetSplit.TRAIN: records.TRAIN,
    DatasetSplit.EVAL: records.DEV,
    records.DEV: records.DEV,
    DatasetSplit.TEST: records.TEST,
}
_T2T_SPLITS = {records.TRAIN: DatasetSplit.TRAIN, records.DEV: DatasetSplit.EVAL}


def split_file_name(split: str) -> str:
    """The shard name of a T2T or project split: ``eval`` and ``dev`` -> ``dev``."""
    if split not in _FILE_SPLITS:
        raise T2TProblemError(f"unknown dataset split {split!r}: use train, eval (dev) or test.")
    return _FILE_SPLITS[split]


def t2t_split(split: str) -> str:
    """The ``DatasetSplit`` value T2T code expects for a project split (``dev`` -> ``eval``)."""
    return _T2T_SPLITS.get(split, split)


class SpaceID:
    """T2T's input/target space ids (``problem.py``, ``SpaceID``)."""

    GENERIC = 0
    IMAGE_LABEL = 1
    EN_CHR = 2
    EN_TOK = 3
    EN_BPE_TOK = 4
    FR_CHR = 5
    FR_TOK = 6
    DE_CHR = 7
    DE_TOK = 8
    DE_BPE_TOK = 9
    DIGIT_0 = 10
    DIGIT_1 = 11
    AUDIO_WAV = 12
    AUDIO_SPECTRAL = 13
    PARSE_CHR = 14
    PARSE_TOK = 15
    ZH_TOK = 16
    ICE_CHAR = 17
    ICE_TOK = 18
    ICE_PARSE_TOK = 19
    MK_TOK = 20
    CS_TOK = 21
    CS_CHR = 22
    DNA = 23
    REAL = 24
    IMAGE = 25
    PEPTIDE = 26
    PY_TOK = 27
    CPP_TOK = 28
    STROKES = 29
    PICKLED_PYTHON = 30


class TaskID:
    """T2T's problem task ids (``problem.py``, ``TaskID``), a ``global_task_id`` returns."""

    EN_CHR, EN_CHR_SENT, EN_PR_HYP, EN_NLI, COLA = 2, 3, 4, 5, 6
    EN_Q_CONT, EN_SIM, EN_SENT_PAIR, THREE_CL_NLI = 7, 8, 9, 10


class T2TProblemError(UserError):
    """A T2T problem that cannot run here, or T2T code asked for something missing."""


# T2T's truncations, which its default preprocess_example calls (t2t_compat/example_reading.py).
preprocess_example_common = example_reading.preprocess_example_common

# T2T's metric names (utils/metrics.py, Metrics) that the problems return from eval_metrics.
APPROX_BLEU = "approx_bleu_score"


class Problem(base.Problem):
    """T2T's ``Problem`` interface on this project's ``Problem``; subclass
    ``text_problems.Text2TextProblem`` (what runs here) rather than this.

    ``Problem(was_reversed=True)`` is T2T's ``<name>_rev``, which the registry makes from the
    registered name (``registry.MAKES_T2T_VARIANTS``, as T2T's ``registry.problem``): it keeps
    T2T's ``name`` (the base's, so ``dataset_filename`` and the vocab files are the base's), and
    every record it reads, its problem hparams, encoders and texts have inputs and targets
    swapped (``problem.py``: ``maybe_reverse_features``, ``_reverse_problem_hparams``)."""

    makes_t2t_variants = True  # t2t_repro/registry.py: "<name>_rev" builds cls(was_reversed=True)

    def __init__(self, was_reversed: bool = False, was_copy: bool = False) -> None:
        self._was_reversed = was_reversed
        self._was_copy = was_copy
        self._encoders = None
        self._hparams = None
        self._feature_info = None
        self._task_id = -1
        if was_reversed or was_copy:  # a variant's datagen: its base's (its own method too)
            self.generate_data = self._generate_base_data

    # -- T2T's interface --------------------------------------------------------------------
    def eval_metrics(self) -> list[str]:
        """T2T's metric names; ``approx_bleu_score`` also makes the trainer score dev BLEU."""
        return ["accuracy", "accuracy_top5", "accuracy_per_sequence", "neg_log_perplexity"]

    def dataset_filename(self) -> str:
        return self.name

    def _data_filepaths(self, split, data_dir, num_shards, shuffled) -> list[str]:
        """T2T's shard names (``generator_utils.py``: ``train_data_filenames``...), which are
        the project's (``data/records.py``, ``data/t2t_shards.py``)."""
        paths = records.shard_paths if shuffled else t2t_shards.unshuffled_paths
        return paths(data_dir, self.dataset_filename(), split_file_name(split), num_shards)

    def training_filepaths(self, data_dir: str, num_shards: int, shuffled: bool) -> list[str]:
        return self._data_filepaths(DatasetSplit.TRAIN, data_dir, num_shards, shuffled)

    def dev_filepaths(self, data_dir: str, num_shards: int, shuffled: bool) -> list[str]:
        return self._data_filepaths(DatasetSplit.EVAL, data_dir, num_shards, shuffled)

    def test_filepaths(self, data_dir: str, num_shards: int, shuffled: bool) -> list[str]:
        return self._data_filepaths(DatasetSplit.TEST, data_dir, num_shards, shuffled)

    def data_filepaths(self, split, output_dir, num_shards, shuffled) -> list[str]:
        """T2T's dispatch to the three methods above (which a usr_dir may override)."""
        by_split = {
            DatasetSplit.TRAIN: self.training_filepaths,
            DatasetSplit.EVAL: self.dev_filepaths,
            DatasetSplit.TEST: self.test_filepaths,
        }
        if split not in by_split:
            split_file_name(split)  # one line for an unknown split
            raise T2TProblemError(f"data_filepaths takes train, eval or test, not {split!r}.")
        return by_split[split](output_dir, num_shards, shuffled)

    def filepattern(self, data_dir: str, mode: str, shard: int | None = None) -> str:
        """T2T's pattern of a split's shards, or of one shard's (T2T's or the project's split
        name; T2T's ``infer`` mode reads dev)."""
        split = split_file_name(DatasetSplit.EVAL if mode == "infer" else mode)
        shard_part = f"-{shard:05d}" if shard is not None else ""
        return os.path.join(data_dir, f"{self.dataset_filename()}-{split}{shard_part}*")

    # T2T's datagen in several tasks (bin/t2t_datagen.py): t2t-datagen calls
    # prepare_to_generate once, then generate_data for each task id, one after another
    # (t2t-trainer --generate_data calls generate_data(data_dir, tmp_dir) once, as T2T's).
    @property
    def multiprocess_generate(self) -> bool:
        return False

    @property
    def num_generate_tasks(self) -> int:
        raise NotImplementedError()

    def prepare_to_generate(self, data_dir: str, tmp_dir: str) -> None:
        raise NotImplementedError()

    @property
    def num_training_examples(self) -> int:
        raise NotImplementedError()

    @property
    def task_id(self) -> int:
        if self._task_id == -1 and hasattr(self, "global_task_id"):
            self._task_id = self.global_task_id()  # T2T's: a subclass's own numbering
        return self._task_id

    def set_task_id(self, new_task_id: int) -> None:
        self._task_id = new_task_id

    @property
    def was_reversed(self) -> bool:
        return self._was_reversed

    def maybe_reverse_features(self, feature_map: dict) -> None:
        """T2T's (``problem.py``, ``maybe_reverse_features``): a _rev's inputs and targets, and
        their segmentations and positions, swapped in place; nothing for any other problem."""
        if self._was_reversed:
            rev_variant.reverse_features(feature_map)

    def maybe_copy_features(self, feature_map: dict) -> None:
        """T2T's: a _copy's inputs as its targets; nothing for any other problem."""
        if self._was_copy:
            rev_variant.copy_features(feature_map)

    def maybe_reverse_and_copy(self, example: dict) -> dict:
        """T2T's map after every record's reading (``problem.py``, ``dataset``)."""
        self.maybe_reverse_features(example)
        self.maybe_copy_features(example)
        return example

    def _tool_encoders(self, encoders: dict) -> dict:
        """The tools' encoders (``get_encoders``): a variant's (``rev_variant.py``)."""
        if not (self._was_reversed or self._was_copy):
            return encoders
        return rev_variant.variant_encoders(self, encoders, T2TProblemError)

    def _generate_base_data(self, data_dir, tmp_dir, *args, **kwargs):
        """A _rev's datagen: its base's (``rev_variant.py``)."""
        return rev_variant.generate_base_data(self, data_dir, tmp_dir, *args, **kwargs)

    def feature_encoders(self, data_dir: str) -> dict:
        """T2T's default: ``TextEncoder`` inputs and targets (ids are the text's integers)."""
        del data_dir
        return {"inputs": text_encoder.TextEncoder(), "targets": text_encoder.TextEncoder()}

    @property
    def has_inputs(self) -> bool:
        """T2T's: whether the problem's encoders have ``inputs``."""
        return "inputs" in self.get_feature_encoders()

    @property
    def batch_size_means_tokens(self) -> bool:
        return False

    def tpu_batch_size_per_shard(self, model_hparams: Any) -> int:
        """T2T's examples a TPU core batches (tokens over ``max_length`` when the batch size
        means tokens); nothing here reads it, as nothing runs on TPUs."""
        if self.batch_size_means_tokens and not model_hparams.get("use_fixed_batch_size"):
            return model_hparams.batch_size // self.max_length(model_hparams)
        return model_hparams.batch_size

    def get_encoders(self, data_dir: str) -> dict:
        """The project's hook, answered by the problem's own ``feature_encoders``: T2T reads no
        vocabulary file for a plain ``Problem``, so neither do the trainer and decoder here.
        Without inputs (a language model) a prompt is encoded with the targets' encoder, as
        T2T's decoding does (``utils/decoding.py``, ``decode_from_file``)."""
        encoders = self.get_feature_encoders(data_dir)
        inputs = encoders["inputs"] if self.has_inputs else encoders["targets"]
        return self._tool_encoders({"inputs": inputs, "targets": encoders["targets"]})

    def get_feature_encoders(self, data_dir: str | None = None) -> dict:
        if self._encoders is None:
            self._encoders = self.feature_encoders(data_dir)
        return self._encoders

    def hparams(self, defaults: Any, model_hparams: Any) -> None:
        """T2T's hook over the problem hparams (``Problem.hparams``: nothing);
        ``t2t_compat/problem_hparams.py`` says what each field it sets does here."""

    def get_hparams(self, model_hparams: Any = None) -> Any:
        """T2T's problem hparams of this problem (``Problem.get_hparams``): made once, with
        T2T's ``vocabulary`` (the encoders), ``was_reversed`` and ``was_copy`` added, and a
        _rev's reversed (``_reverse_problem_hparams``). The ``vocabulary`` is a copy of the
        encoders: T2T's swap also swaps the problem's own encoders, which its ``hparams()``
        would then read the wrong way round if asked again."""
        if self._hparams is not None:
            return self._hparams
        data_dir = model_hparams.get("data_dir") if model_hparams is not None else None
        self._encoders = self.get_feature_encoders(data_dir or None)
        hp = problem_hparams.ask(self, model_hparams, data_dir or "", T2TProblemError)
        hp.add_hparam("vocabulary", dict(self._encoders))
        hp.add_hparam("was_reversed", self._was_reversed)
        hp.add_hparam("was_copy", self._was_copy)
        rev_variant.vary_hparams(self, hp)  # a _rev's and a _copy's, as T2T's get_hparams
        self._hparams = hp
        return hp

    @property
    def feature_info(self) -> dict:
        """T2T's ``{feature: FeatureInfo}`` of the problem hparams, which, as in T2T,
        ``get_hparams`` must have made first."""
        if self._feature_info is None:
            if self._hparams is None:
                raise T2TProblemError(
                    f"{type(self).__name__}: feature_info reads the problem hparams; call "
                    "get_hparams(model_hparams) first, as T2T requires (it asserts)."
                )
            self._feature_info = problem_hparams.feature_info(self, self._hparams)
        return self._feature_info

    def example_reading_spec(self) -> tuple[dict, None]:
        """T2T's default: int64 ``inputs`` and ``targets`` (``t2t_compat/example_reading.py``)."""
        return example_reading.default_reading_spec()

    def decode_example(self, serialized_example) -> dict:
        """T2T's: the fields of ``example_reading_spec`` parsed from one record."""
        fields = example_reading.checked_spec(self, problem_hparams.where(self), T2TProblemError)
        return example_reading.decode_example(fields, serialized_example)

    def preprocess_example(self, example: dict, mode: str, hparams: Any) -> dict:
        """T2T's default: ``preprocess_example_common`` (the ``max_*_seq_length`` truncations)."""
        return example_reading.preprocess_example_common(example, mode, hparams)

    def max_length(self, model_hparams: Any) -> int:
        """T2T's default (``split_to_length`` or ``max_length`` or ``batch_size``: the input
        pipeline's default); the trainer filters by it, an override's too (the buckets come
        from the hparams, as T2T's data_reader.input_fn makes them)."""
        return (
            model_hparams.get("split_to_length")
            or model_hparams.get("max_length")
            or model_hparams.get("batch_size")
        )

    # -- the project's hooks ----------------------------------------------------------------
    def scores_bleu(self) -> bool:
        """Dev decodes scored by BLEU; not for a language model, whose dev examples have no
        input to decode from (its evaluation is the teacher-forced loss and perplexity)."""
        return APPROX_BLEU in self.eval_metrics() and self.has_inputs

    def teacher_forced_metrics(self) -> tuple[str, ...]:
        return on_request(self.eval_metrics())

    def read_example_fn(self, mode: str, hparams: Any):
        """T2T's ``decode_example`` then ``preprocess_example(example, mode, hparams)`` for
        every record, when the usr_dir overrides one of them or ``example_reading_spec``
        (``t2t_compat/example_reading.py``); else None: the input pipeline's own reading,
        which is T2T's defaults. A _rev's reading, either one, is followed by T2T's
        ``maybe_reverse_and_copy`` (``problem.py``, ``dataset``). A packed problem's records
        (``packed_length``) are read with their segmentations and positions."""
        cls = type(self)
        read = None
        packed = bool(getattr(self, "packed_length", None))
        if any(problem_hparams.defined_by_usr_dir(cls, h) for h in example_reading.READING_HOOKS):
            read = example_reading.read_example_fn(self, mode, hparams)
        if not (self._was_reversed or self._was_copy or packed):
            return read
        if read is None:
            from t2t_repro.data.input_pipeline import parse_and_truncate

            read = parse_and_truncate(hparams, packed)
        if not (self._was_reversed or self._was_copy):
            return read
        return example_reading.then_map(read, self.maybe_reverse_and_copy)

    def problem_hparams(self, data_dir: str, model_hparams: Any = None) -> dict:
        """T2T's ``get_hparams(model_hparams)`` as the run's problem hparams: the problem's
        ``hparams(defaults, model_hparams)`` is called with the run's model hparams and every
        field it sets is honoured, or refused in one line, as is an overridden hook this
        project cannot honour (``t2t_compat/problem_hparams.py``)."""
        encoders = self.get_encoders(data_dir)  # checks the problem; T2T's self._encoders
        if self._encoders is None:
            self._encoders = encoders
        problem_hparams.refuse_unhonoured_hooks(self, T2TProblemError)
        found = problem_hparams.ask(self, model_hparams, data_dir, T2TProblemError)
        rev_variant.vary_hparams(self, found, T2TProblemError)  # a _rev's, a _copy's
        return problem_hparams.to_run_hparams(self, found, encoders, T2TProblemError)

    def stop_at_eos(self, data_dir: str, hparams: Any = None) -> bool:
        """The problem's own (T2T's ``hparams()`` may set it; ``Problem``'s is False)."""
        self.get_feature_encoders(data_dir or None)  # as get_hparams, before hparams()
        return bool(problem_hparams.ask(self, hparams, data_dir, T2TProblemError).stop_at_eos)

    @classmethod
    def on_t2t_registration(cls) -> None:
        """What T2T's registry registration means for the tools (``t2t_compat/registry.py``
        calls it): a ``generate_data`` the usr_dir wrote itself gets the tools' entry."""
        entry = cls.generate_data
        if not getattr(entry, "t2t_tool_entry", False):
            cls.generate_data = _tool_entry(entry)


_TRAINER_CALL = object()  # generate_data called without a third argument: by t2t-trainer


def _tool_entry(t2t_generate_data):
    """A user's T2T ``generate_data(data_dir, tmp_dir, task_id)`` as the tools call it: seeded
    as ``t2t-datagen`` seeds; the summary has only the time (the method reports nothing)."""

    @functools.wraps(t2t_generate_data)
    def generate_data(
        self,
        data_dir,
        tmp_dir,
        # t2t-datagen passes its num_workers here (T2T's task_id is not one); t2t-trainer's
        # --generate_data passes nothing, as T2T's trainer calls generate_data(data_dir, tmp_dir)
        task_id=_TRAINER_CALL,
        *,
        max_cases=None,
        random_seed=base.DEFAULT_SEED,
        progress=True,
        t2t_tasks=datagen_tasks.ALL_TASKS,
    ):
        if t2t_shards.in_seeded_run():  # a registered subclass's own generate_data calls it
            # (super()): T2T's method as it is, with the caller's task id (not the tool's again)
            return t2t_generate_data(
                self, data_dir, tmp_dir, *(() if task_id is _TRAINER_CALL else (task_id,))
            )
        if max_cases is not None:
            raise T2TProblemError(
                f"{type(self).__name__} writes its data with its own generate_data, which "
                "--max_cases cannot limit; run without it."
            )
        start = time.monotonic()
        fileio.makedirs(data_dir)  # as bin/t2t_datagen.py does
        if task_id is _TRAINER_CALL:  # bin/t2t_trainer.py, generate_data: drawing from the
            # trainer's --random_seed, which its main set before (training/run_setup.py)
            with t2t_shards.seeded_run():
                t2t_generate_data(self, data_dir, tmp_dir)
        else:  # seeded once, as bin/t2t_datagen.py: not again by Text2TextProblem's, if called
            t2t_shards.seed_like_t2t_datagen(random_seed)
            with t2t_shards.seeded_run():
                datagen_tasks.run_as_t2t_datagen(
                    self, t2t_generate_data, data_dir, tmp_dir, t2t_tasks
                )
        summary = base.DatagenSummary(self.name, data_dir)
        summary.seconds = time.monotonic() - start
        return summary

    generate_data.t2t_tool_entry = True
    generate_data.runs_t2t_tasks = True  # t2t-datagen's --task_id* reach it (datagen_tasks.py)
    return generate_data


# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.problem")
