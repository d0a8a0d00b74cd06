"""Beam and greedy search in CTranslate2, on a model written by ``t2t-exporter
--export_format=ctranslate2`` (``serving/ctranslate2_export.py``).

``CTranslate2Searcher`` has ``Searcher``'s interface (padded id rows in; ids with the start
id in column 0, and scores, out), so ``LineDecoder`` reads, normalises, sorts, batches,
truncates and detokenises exactly as for the TensorFlow search: one output line per input
line. The maximum output length is T2T's (the batch's longest input, EOS included, plus
``extra_length``). ``ctranslate2`` is imported only when this engine is used.

Length penalty: T2T divides a finished beam's log-probability by ``((5 + len) / 6) ** alpha``
(``tensor2tensor/utils/beam_search.py``, ``_length_penalty``), CTranslate2 by ``len ** alpha``.
``alpha`` is passed to CTranslate2 as its ``length_penalty``; with alpha 0 both rank by the
plain log-probability and give the same ids. For T2T's alpha 0.6 on 20-30 token outputs,
CTranslate2's alpha 0.5 ranks closest (docs/ctranslate2.md). Greedy search (beam 1) never
uses a penalty, as T2T's.
"""

from __future__ import annotations

import json
import os

import numpy as np

from t2t_repro import fileio
from t2t_repro.errors import UserError
from t2t_repro.hparam import HParams
from t2t_repro.text_encoding.reserved_tokens import EOS_ID

METADATA_FILE = "t2t_repro.json"  # written by serving/ctranslate2_export.py
# Beams CTranslate2 did not return: LineDecoder writes them as T2T's placeholders
MISSING_SCORE = -1e9


class CTranslate2Error(UserError, ValueError):
    """The CTranslate2 model directory or the engine cannot be used as asked."""


def read_metadata(model_dir: str) -> dict:
    """The export's ``t2t_repro.json``: problem, vocabulary sizes, position-table length."""
    path = os.path.join(model_dir, METADATA_FILE)
    if not fileio.exists(path):
        raise CTranslate2Error(
            f"--ct2_model_dir={model_dir!r} has no {METADATA_FILE}: it was not written by "
            "t2t-exporter --export_format=ctranslate2."
        )
    with fileio.open(path, encoding="utf-8") as f:
        return json.load(f)


def check_engine_flags(hparams_overrides: str, random_seed: int | None, dhp: HParams) -> None:
    """What t2t-decoder's flags ask that this engine cannot do as the TensorFlow engine does
    it: one line each, before the model is read (no flag is accepted and then ignored)."""
    for name, default in (("use_xla", False), ("precision", "")):
        if dhp.get(name) != default:
            raise CTranslate2Error(
                f"--decode_hparams: {name}={dhp.get(name)!r} is for the TensorFlow engine; "
                "CTranslate2 computes in the type chosen at export (--ct2_quantization)."
            )
    # CTranslate2 samples with its own generator: its draws could not be t2t-decoder's for a
    # --random_seed (decoding/sampling.py), so sampling stays with the TensorFlow engine.
    if hparams_overrides:
        raise CTranslate2Error(
            f"--hparams={hparams_overrides}: --engine=ctranslate2 runs the model as exported, "
            "which model hparams cannot change, and does not sample (sampling_method=random: "
            "--engine=tensorflow); drop --hparams."
        )
    if random_seed is not None:
        raise CTranslate2Error(
            f"--random_seed={random_seed} seeds sampling, which --engine=ctranslate2 does not "
            "do (beam and greedy search only): drop it."
        )


def length_penalty_note(dhp: HParams) -> str:
    """The one line a run prints when its beams are ranked by CTranslate2's length penalty,
    not T2T's ("" when the two rank alike: greedy search, or alpha 0)."""
    if dhp.beam_size == 1 or dhp.alpha == 0:
        return ""
    return (
        f"note: alpha={dhp.alpha:g} is CTranslate2's length_penalty: it divides a beam's "
        f"log-probability by len ** {dhp.alpha:g}, T2T by ((5 + len) / 6) ** {dhp.alpha:g}, "
        "so beams may rank otherwise than with --engine=tensorflow (docs/ctranslate2.md)."
    )


def load_engine(kind: str, model_dir: str, intra_threads: int):
    """``ctranslate2.<kind>`` (``Translator``, or ``Generator`` for a language model) on the
    CPU; a remote ``model_dir`` is read into memory, as CTranslate2 reads only local files."""
    try:
        import ctranslate2
    except ImportError:
        raise CTranslate2Error(
            "--engine=ctranslate2 needs the ctranslate2 package (pip install ctranslate2==4.8.5)."
        ) from None
    files = None
    if fileio.is_url(model_dir):
        files = {}
        for name in fileio.listdir(model_dir):
            with fileio.open(os.path.join(model_dir, name), "rb") as f:
                files[name] = f.read()
    engine = getattr(ctranslate2, kind)
    return engine(model_dir, device="cpu", intra_threads=intra_threads, files=files)


def t2t_beams(hypotheses: list, scores: list) -> list[tuple[list[int], float]]:
    """CTranslate2's hypotheses (best first) as T2T returns beams: the finished ones (ending
    in EOS) when there are any, else those cut at the maximum length
    (``tensor2tensor/utils/beam_search.py``, ``beam_search``: ``finished_seq`` where any
    beam finished, else ``alive_seq``). CTranslate2 counts a hypothesis that reaches the
    length limit as finished and may rank it above one that ended in EOS."""
    beams = [
        ([int(t) for t in tokens], float(s)) for tokens, s in zip(hypotheses, scores, strict=True)
    ]
    finished = [(ids, s) for ids, s in beams if ids and ids[-1] == EOS_ID]
    return finished or beams


class EngineSearcher:
    """What every CTranslate2 searcher keeps: the export's metadata, the search settings, and
    the hparams ``LineDecoder`` reads of a model (the vocabularies; ``model_hparams``: more,
    e.g. a language model's ``has_input=False``; the input bound is the export's table:
    ``runner.load_ctranslate2_decoder``)."""

    def __init__(
        self,
        model_dir: str,
        beam_size: int,
        alpha: float,
        extra_length: int,
        return_beams: bool = False,
        **model_hparams,
    ) -> None:
        self.metadata = read_metadata(model_dir)
        self.beam_size = beam_size
        self.alpha = alpha if beam_size > 1 else 0.0
        self.extra_length = extra_length
        self.num_hypotheses = beam_size if return_beams else 1
        self.hparams = HParams(
            input_vocab_size=self.metadata["input_vocab_size"],
            target_vocab_size=self.metadata["target_vocab_size"],
            vocab_divisor=self.metadata.get("vocab_divisor", 1),  # the logits' width
            **model_hparams,
        )


class CTranslate2Searcher(EngineSearcher):
    """``searcher(inputs [B, L]) -> (ids [B, beams, T + 1], scores [B, beams])`` (numpy)."""

    def __init__(self, model_dir: str, *args, intra_threads: int = 0, **kwargs) -> None:
        super().__init__(model_dir, *args, **kwargs)
        self.translator = load_engine("Translator", model_dir, intra_threads)

    def __call__(self, inputs, occurrences=None) -> tuple[np.ndarray, np.ndarray]:
        """``occurrences``: ``Searcher``'s; unused, as this engine does not sample."""
        inputs = np.asarray(inputs)
        sources = [[str(int(t)) for t in row if t != 0] for row in inputs]
        results = self.translator.translate_batch(
            sources,
            beam_size=self.beam_size,
            num_hypotheses=self.beam_size,  # to prefer finished ones, as T2T (below)
            length_penalty=self.alpha,
            max_input_length=0,  # LineDecoder already cut what the export's table cannot hold
            max_decoding_length=inputs.shape[1] + self.extra_length,
            min_decoding_length=0,  # T2T may emit EOS first (an empty translation)
            return_scores=True,
            return_end_token=True,  # tells finished hypotheses from those cut at the limit
        )
        width = 1 + inputs.shape[1] + self.extra_length
        ids = np.zeros([len(sources), self.num_hypotheses, width], np.int64)
        scores = np.full([len(sources), self.num_hypotheses], MISSING_SCORE, np.float32)
        for row, result in enumerate(results):
            kept = t2t_beams(result.hypotheses, result.scores)[: self.num_hypotheses]
            for beam, (tokens, score) in enumerate(kept):
                ids[row, beam, 1 : 1 + len(tokens)] = tokens
                scores[row, beam] = score
        return ids, scores
