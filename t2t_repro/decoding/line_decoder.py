"""Decodes text lines: encode, sort by word count, batch, search, detokenize, restore order.

As T2T's ``decode_from_file`` (``tensor2tensor/utils/decoding.py``): inputs get EOS appended, are
sorted by descending word count and batched (``batch_size``, default 32, which T2T's 0 means too),
and outputs are cut at the first EOS and returned in the original order. Every input line
yields exactly one output; an empty line is EOS alone, decoded as T2T decodes it (its
``_get_sorted_inputs`` keeps inner blank records, encoded as ``[EOS]``). A line
is cut (with a warning) only to ``max_input_size`` when set, as T2T cuts it (``input_limit``),
or where a CTranslate2 export's position table ends (``decoding/runner.py``).

A model without inputs (a language model, ``has_input`` false) continues each line instead, as
T2T's ``decode_from_file`` does (``_get_language_modeling_inputs``, ``_decode_batch_input_fn``):
a line ending in punctuation gets a space appended, its ids get no EOS and are the prefix of the
targets (``decoding/prompt.py``), an empty line is decoded from nothing, lines are batched in
file order (not sorted), and the output is what follows the prompt. A text classifier (a
class-label target) writes each line's label (``decoding/class_label.py``).
"""

from __future__ import annotations

import dataclasses
import os
import string
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from t2t_repro.data.source_lines import normalize_source_line
from t2t_repro.decoding.class_label import LabelSearcher, predicts_labels
from t2t_repro.decoding.constraints import SearchConstraint
from t2t_repro.decoding.postprocess import decode_text, strip_after_eos
from t2t_repro.decoding.precision import DECODE_PRECISIONS
from t2t_repro.decoding.prompt import PromptConstraint
from t2t_repro.decoding.search import SearchConfig, Searcher
from t2t_repro.decoding.t2t_decode_names import settle_t2t_names, t2t_decode_defaults
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.hparams_lib.sizes import logits_width
from t2t_repro.text_encoding.reserved_tokens import EOS_ID, PAD_ID

FILLER_SCORE = -1e6
PLACEHOLDER_INF = 1e7  # T2T's beam_search.py INF: a placeholder's score is its negative
UNLIMITED = 2**30  # an input is not cut unless max_input_size is set (T2T's decode_from_file)
DECODE_DEFAULTS = dict(
    beam_size=4,
    alpha=0.6,
    extra_length=100,
    batch_size=32,
    return_beams=False,
    write_beam_scores=False,
    max_input_size=-1,
    use_xla=False,
    precision="",  # "bfloat16": compute in bf16 (t2t_repro/decoding/precision.py)
    # T2T's: outputs per input when sampling (its interactive decoding's meaning; -1: one);
    # decoding a split, only its first N examples (split_decoding.split_example_cap; -1: all).
    num_samples=-1,
    delimiter="\n",  # T2T's: what ends each record of --decode_from_file and its output
    # T2T's: a language model's --decode_from_file is read that many times over; a split is
    # decoded that many times into one file, which keeps the last: one decode here, none for 0
    # (runner.py, split_decoding.py; nothing else reads it)
    num_decodes=1,
    log_results=True,  # T2T's: False decodes a split and writes nothing (split_decoding.py)
    shards_start_offset=0,  # T2T's: added to --worker_id in the shard names (shards.py)
    shard_google_format=False,  # T2T's: shard names NAME-NNNNN-of-NNNNN (shards.py)
    summaries_log_dir="decode",  # T2T's: where --decode_reference's BLEU event goes (decode_hooks)
)


def decode_hparams(overrides: str = "", problem_defaults: dict | None = None) -> HParams:
    """T2T's decode hparams: built-in defaults, then the problem's (which may add its own,
    e.g. for its search constraint), then ``overrides``; T2T's other names are settled by
    ``t2t_decode_names`` (accepted, or refused in one line)."""
    hp = HParams(**DECODE_DEFAULTS, **t2t_decode_defaults())
    for name, value in (problem_defaults or {}).items():
        if name in hp:
            hp.set_hparam(name, value)
        else:
            hp.add_hparam(name, value)
    hp = hp.parse(overrides)
    settle_t2t_names(hp)
    if hp.batch_size == 0:  # T2T's default, which decode_from_file reads as 32
        hp.set_hparam("batch_size", DECODE_DEFAULTS["batch_size"])
    # A newline or tab cannot be typed inside --decode_hparams: "\n", "\t" stand for them.
    hp.set_hparam("delimiter", _unescape(hp.delimiter))
    validate_decode_hparams(hp)
    return hp


def _unescape(text: str) -> str:
    escapes = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in escapes:
            out.append(escapes[text[i + 1]])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def validate_decode_hparams(hp: HParams) -> None:
    """Values the search can run with; HParamsError (one line) before any model is loaded."""
    # alpha below 0 is T2T's too: ((5 + len) / 6) ** alpha favours longer outputs less
    for name, low in (("beam_size", 1), ("batch_size", 1), ("extra_length", 0)):
        if hp.get(name) < low:
            raise HParamsError(f"--decode_hparams: {name}={hp.get(name)} must be at least {low}.")
    if not hp.delimiter:
        raise HParamsError("--decode_hparams: delimiter must not be empty (T2T's is \\n).")
    if hp.precision not in DECODE_PRECISIONS:
        raise HParamsError(
            f"--decode_hparams: precision={hp.precision!r} must be one of "
            f"{', '.join(p or '(empty)' for p in DECODE_PRECISIONS)}."
        )


def occurrences(rows: Sequence[Sequence[int]]) -> list[int]:
    """For each id row, how many earlier rows are the same (sampling's ``occurrences``)."""
    seen: dict[tuple[int, ...], int] = {}
    counts = []
    for row in rows:
        key = tuple(row)
        counts.append(seen.get(key, 0))
        seen[key] = counts[-1] + 1
    return counts


@dataclass(frozen=True)
class Hypothesis:
    text: str
    score: float
    ids: tuple[int, ...] = ()


def hypotheses_found(hyps: Sequence[Hypothesis]) -> list[Hypothesis]:
    """``hyps`` less the search's placeholders (``LineDecoder.decode_ids``): what the export's
    nbest signature answers (``serving/nbest.py``)."""
    return [h for k, h in enumerate(hyps) if k == 0 or h.score >= FILLER_SCORE]


def format_hypotheses(hyps: Sequence[Hypothesis], write_scores: bool) -> str:
    """One output line: beams separated by tabs, each optionally followed by its score,
    written ``%.2f`` as T2T writes it (``utils/decoding.py``, ``decode_from_file``)."""
    parts = []
    for h in hyps:
        parts.append(f"{h.text}\t{h.score:.2f}" if write_scores else h.text)
    return "\t".join(parts)


def writes_scores(dhp: HParams, samples: int = 0) -> bool:
    """Whether outputs are followed by their scores. T2T reads ``write_beam_scores`` only
    where it writes several outputs of an input, ``return_beams`` (``utils/decoding.py``,
    ``decode_from_file``: one output alone gets no score); here an input's ``samples`` drawn
    by sampling (``num_samples``) too."""
    return bool(dhp.write_beam_scores) and (bool(dhp.return_beams) or samples > 1)


SCORES_NEED_BEAMS = (
    "note: write_beam_scores=True writes a score after each output only with "
    "return_beams=True (or num_samples>1 when sampling), as T2T's decode_from_file: these "
    "outputs have none."
)


def search_config(
    dhp: HParams, model_hparams: HParams, random_seed: int | None, log: Callable[[str], None]
) -> SearchConfig:
    """The search the decode hparams and the model's sampling hparams (T2T keeps
    ``sampling_method``, ``sampling_temp``, ``sampling_keep_top_k`` in the model's hparams:
    ``--hparams``) ask for; ``num_samples`` above 1 for a search that does not sample gives
    one output, with a note."""
    method = model_hparams.get("sampling_method", "argmax")
    num_samples = max(1, dhp.num_samples)
    if num_samples > 1 and (dhp.beam_size != 1 or method != "random"):
        # T2T's decode_from_file does not read num_samples, and its interactive decoding
        # repeats the input, which a search that does not sample decodes alike each time
        log(
            f"note: num_samples={dhp.num_samples} draws several outputs per input by sampling "
            "(beam_size=1, --hparams=sampling_method=random); this search gives one (the n "
            "best of beam search: return_beams=True)."
        )
        num_samples = 1
    if method == "random" and dhp.beam_size != 1:
        log(
            f"warning: sampling_method=random samples only in greedy decoding; beam_size="
            f"{dhp.beam_size} runs beam search (as T2T). Set beam_size=1 to sample."
        )
    config = SearchConfig(
        dhp.beam_size,
        dhp.alpha,
        dhp.extra_length,
        dhp.use_xla,
        return_beams=dhp.return_beams,
        sampling_method=method,
        sampling_temp=float(model_hparams.get("sampling_temp", 1.0)),
        sampling_keep_top_k=int(model_hparams.get("sampling_keep_top_k", -1)),
        num_samples=num_samples,
    )
    if config.samples or num_samples > 1:
        if random_seed is None:
            random_seed = int.from_bytes(os.urandom(4), "little")
            log(f"sampling with --random_seed={random_seed} (pass it to draw the same samples)")
        config = dataclasses.replace(config, random_seed=random_seed)
    return config


def input_limit(dhp: HParams, split: bool = False) -> int:
    """T2T's decode_from_file cuts a line to ``max_input_size`` only when it is set, and a
    dataset decode (``split``) never reads it. Nothing else bounds an input: past a learned
    position table (``pos=emb``) T2T adds no signal (``layers/positional.py``)."""
    return dhp.max_input_size if dhp.max_input_size > 0 and not split else UNLIMITED


class LineDecoder:
    def __init__(
        self,
        model,
        input_encoder,
        target_encoder,
        dhp: HParams,
        log: Callable[[str], None] | None = None,
        constraint: SearchConstraint | None = None,
        random_seed: int | None = 0,
        searcher=None,
    ) -> None:
        """``constraint``: the problem's (``Problem.search_constraint``), or None.
        ``random_seed`` seeds sampling (``decoding/sampling.py``); None: a fresh one, logged.
        ``searcher``: another engine with ``Searcher``'s interface (``model`` then only
        needs ``hparams``), e.g. ``decoding/ctranslate2_search.py``; it does not sample."""
        self.input_encoder = input_encoder
        self.target_encoder = target_encoder
        self.dhp = dhp
        self.model_hparams = model.hparams
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        # T2T's has_input: without inputs each line is a prompt the output continues.
        self.prompt = not model.hparams.get("has_input", True)
        if self.prompt:
            if isinstance(constraint, PromptConstraint):  # another LineDecoder's
                constraint = None
            engine_ok = searcher is None or getattr(searcher, "continues_prompts", False)
            if constraint is not None or not engine_ok:
                raise ValueError(
                    "a language model's prompt is forced by the searches of a model without "
                    "inputs: decode it without a search constraint, with a prompt engine."
                )
            constraint = PromptConstraint(logits_width(model.hparams))  # T2T's one-hot width
        # T2T's class-label target (a Text2ClassProblem's classifier): each line's label.
        self.labels = predicts_labels(model)
        # MULTI_LABEL: the argmax label too, the prediction T2T's multilabel_accuracy_matchk
        # scores (T2T's infer cannot decode such a model: docs/classification.md)
        self.multi_label = bool(model.hparams.get("multi_label_target", False))
        if self.labels:
            if constraint is not None or searcher is not None:
                raise ValueError(
                    "a text classifier's label is the argmax of its logits: decode it without "
                    "a search constraint or another engine."
                )
            searcher = LabelSearcher(model)
        self.constraint = constraint
        self._set_input_limits(dhp)
        self.random_seed = random_seed
        self.outputs_per_input = 0
        if searcher is None:
            searcher = Searcher(
                model, search_config(dhp, model.hparams, random_seed, self.log), self.constraint
            )
            if searcher.config.num_samples > 1:
                self.outputs_per_input = searcher.config.num_samples
        self.searcher = searcher
        if dhp.write_beam_scores and not writes_scores(dhp, self.outputs_per_input):
            self.log(SCORES_NEED_BEAMS)

    def format(self, hyps: Sequence[Hypothesis]) -> str:
        """The output record of one input's hypotheses (``format_hypotheses``, with a score
        after each where ``writes_scores``)."""
        return format_hypotheses(hyps, writes_scores(self.dhp, self.outputs_per_input))

    def _set_input_limits(self, dhp: HParams) -> None:
        """The longest input a line keeps (ids with EOS), and a split's (``decode_split``)."""
        self.max_input_length = input_limit(dhp)
        self.split_input_length = input_limit(dhp, split=True)

    def set_search(self, dhp: HParams) -> None:
        """The search of ``dhp`` for the lines that follow (t2t-decoder's interactive ``ns=``
        and ``dl=``, as T2T's ``_interactive_input_fn``); this project's own engine only."""
        if isinstance(self.searcher, LabelSearcher):
            raise HParamsError("a text classifier writes each line's label: no length or samples.")
        if type(self.searcher) is not Searcher:
            raise HParamsError(
                "this engine's search is set when it starts: give it --decode_hparams="
                "extra_length=N."
            )
        validate_decode_hparams(dhp)
        model, seed = self.searcher.model, self.random_seed
        if seed is None and (self.searcher.config.samples or self.searcher.config.num_samples > 1):
            seed = self.searcher.config.random_seed  # the session's, already logged
        config = search_config(dhp, model.hparams, seed, self.log)
        if seed is None and (config.samples or config.num_samples > 1):
            self.random_seed = config.random_seed  # drawn and logged once for the session
        self.searcher = Searcher(model, config, self.constraint)
        self.dhp = dhp
        self._set_input_limits(dhp)
        self.outputs_per_input = config.num_samples if config.num_samples > 1 else 0

    def encode(self, line: str, index: int | None) -> list[int]:
        """The line's ids with EOS, truncated to the model's maximum input (with a warning
        naming line ``index``; None: silently). A language model's prompt: no EOS."""
        if self.prompt:
            return self.encode_prompt(line)
        ids = self.input_encoder.encode(line) + [EOS_ID]
        if len(ids) > self.max_input_length:
            if index is not None:
                self.log(
                    f"warning: line {index + 1} has {len(ids)} subword tokens (with EOS); "
                    f"truncated to the maximum input of {self.max_input_length} (max_input_size, "
                    "or a CTranslate2 export's position table)."
                )
            ids = ids[: self.max_input_length - 1] + [EOS_ID]
        return ids

    def encode_prompt(self, line: str) -> list[int]:
        """T2T's prompt ids (``utils/decoding.py``): a space after final punctuation (so the
        subword tokenizer completes its token), no EOS, cut to ``max_input_size - 1`` if set."""
        if line and line[-1] in string.punctuation:
            line += " "
        return self.input_encoder.encode(line)[: self.max_input_length - 1]

    @property
    def samples(self) -> bool:
        """Whether the search draws samples (else its outputs do not depend on repeats)."""
        return bool(getattr(getattr(self.searcher, "config", None), "samples", False))

    def decode_ids(
        self,
        batch: list[list[int]],
        lines: list[str] | None = None,
        occurrences: list[int] | None = None,
    ) -> list[list[Hypothesis]]:
        """Hypotheses for id rows (EOS included); ``lines``, when known, are their source
        lines (a search constraint may read its inputs from them); ``occurrences``, how many
        earlier lines of the file have the same ids (sampling draws anew for each repeat;
        None: counted within ``batch``)."""
        length = max(len(ids) for ids in batch)
        padded = np.zeros([len(batch), length], np.int32)
        for row, ids in enumerate(batch):
            padded[row, : len(ids)] = ids
        extra = (
            () if self.constraint is None else self.constraint.batch_inputs(batch, lines, length)
        )
        ids, scores = self.searcher(padded, *extra, occurrences=occurrences)
        ids, scores = np.asarray(ids), np.asarray(scores)
        beams = ids.shape[1] if self.dhp.return_beams or self.outputs_per_input else 1
        placeholder_length = self.dhp.extra_length if self.prompt else ids.shape[2] - 1
        results = []
        for row in range(len(batch)):
            hyps = []
            for beam in range(beams):
                score = float(scores[row, beam])
                if beam > 0 and score < FILLER_SCORE:
                    # A placeholder: fewer beams finished than asked for, and T2T's beam
                    # search returns the rest as its start, ids 0 scored -INF (beam_search.py);
                    # T2T's decoder writes it as any beam, the decode of those ids, no EOS:
                    # its decode length, or a prompt's extra_length past the batch's prompts.
                    out, score = [PAD_ID] * placeholder_length, -PLACEHOLDER_INF
                else:
                    row_ids = ids[row, beam].tolist()
                    if self.prompt:  # the continuation (column 0 is the initial id)
                        row_ids = row_ids[:1] + row_ids[1 + len(batch[row]) :]
                    # T2T writes a class label as it is (decoding.py: skip_eos_postprocess).
                    out = row_ids[:1] if self.labels else strip_after_eos(row_ids)
                text = decode_text(self.target_encoder, out)
                hyps.append(Hypothesis(text, score, tuple(out)))
            results.append(hyps)
        return results

    def decode_lines(
        self,
        lines: Sequence[str | bytes],
        earlier: Sequence[str | bytes] = (),
        encoded: Sequence[list[int]] | None = None,
    ) -> list[list[Hypothesis]]:
        """Hypotheses for every line, in input order (best first within a line).

        Lines (text or raw bytes) are normalised first, as in every decoding path.
        ``earlier``: the lines of the file before these (another worker's share), whose
        repeats sampling counts as if one process decoded the whole file. ``encoded``: each
        line's ids as the caller made them (a split's, ``split_decoding.py``), else ``encode``'s."""
        lines = [normalize_source_line(line) for line in lines]
        results: list[list[Hypothesis]] = [[] for _ in lines]  # every line is decoded
        ids_of = (lambda line, i: encoded[i]) if encoded is not None else self.encode
        todo = [(i, ids_of(line, i)) for i, line in enumerate(lines)]
        # T2T samples every line on its own: a repeated line is told apart by its count.
        before = []
        if self.samples:
            before = [self.encode(x, None) for x in map(normalize_source_line, earlier) if x]
        counts = occurrences(before + [ids for _, ids in todo])[len(before) :]
        occurrence = dict(zip([i for i, _ in todo], counts, strict=True))
        # T2T's order (decoding.py, _get_sorted_inputs): by whitespace-separated words, most
        # first, ties in file order. It decides which lines share a batch, and so each line's
        # decode length (the batch's longest input + extra_length). A language model's prompts
        # stay in file order (decode_from_file: sorted_keys = range(len(sorted_inputs))).
        if not self.prompt:
            todo.sort(key=lambda item: -len(lines[item[0]].split()))
        start, done, timed_from = time.time(), 0, 0
        batch_size = max(1, self.dhp.batch_size)
        for b in range(0, len(todo), batch_size):
            chunk = todo[b : b + batch_size]
            chunk_lines = [lines[i] for i, _ in chunk]
            hyps_of_chunk = self.decode_ids(
                [ids for _, ids in chunk], chunk_lines, [occurrence[i] for i, _ in chunk]
            )
            for (index, _), hyps in zip(chunk, hyps_of_chunk, strict=True):
                results[index] = hyps
            done += len(chunk)
            if not timed_from:  # The first batch traced the search: time from its end.
                start, timed_from = time.time(), done
                self.log(f"decoded {done}/{len(todo)} sentences (first batch, with tracing)")
                continue
            rate = (done - timed_from) / max(time.time() - start, 1e-9)
            eta = (len(todo) - done) / max(rate, 1e-9)
            self.log(f"decoded {done}/{len(todo)} sentences ({rate:.1f} sent/s, ETA {eta:.0f}s)")
        return results
