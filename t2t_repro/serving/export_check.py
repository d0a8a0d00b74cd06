"""The exporter's own check: the SavedModel just written translates as ``t2t-decoder`` does.

Before an export is renamed into place, ``t2t-exporter`` loads it and runs a few probe lines
through both signatures: ``serving_default`` must give the decoder's best hypothesis and
``nbest`` the decoder's ``return_beams=True`` hypotheses (same texts; scores within float
noise). A mismatch is an ``ExportError`` and no export is left behind. Each line is decoded on
its own on both sides, so batch padding cannot make the two differ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import tensorflow as tf

from t2t_repro.data.source_lines import normalize_source_line
from t2t_repro.decoding.line_decoder import Hypothesis, LineDecoder, hypotheses_found
from t2t_repro.decoding.search import Searcher, bucket_length
from t2t_repro.serving import ExportError
from t2t_repro.serving.nbest import NBEST_SIGNATURE, as_text, rows_to_hypotheses

# Lines any model can be asked for: ASCII, punctuation, non-Latin text, one blank.
PROBE_LINES = (
    "A man is riding a bike down the street .",
    "Hello, world!",
    "",
    "Zoë's café costs 3.50 € ; 日本語",
)


def quiet_decoder(
    decoder: LineDecoder, return_beams: bool, bucket: int | None = None
) -> LineDecoder:
    """The same model and search as ``decoder`` with ``return_beams`` set, and no progress
    lines (the probe lines are the exporter's business, not the user's). The search is the
    decoder's own configuration (its seed), ``return_beams`` as asked; ``bucket``: every
    line padded to that one of its length buckets (``probe_bucket``)."""
    dhp = decoder.dhp.copy()
    dhp.set_hparam("return_beams", return_beams)
    quiet = LineDecoder(
        decoder.searcher.model,
        decoder.input_encoder,
        decoder.target_encoder,
        dhp,
        lambda msg: None,
        decoder.constraint,
    )
    if isinstance(decoder.searcher, Searcher):  # not another engine's, nor a label's argmax
        buckets = decoder.searcher.config.length_buckets if bucket is None else (bucket,)
        quiet.searcher = decoder.searcher.with_config(
            return_beams=return_beams, length_buckets=buckets
        )
    return quiet


def probe_bucket(decoder: LineDecoder, ids: Sequence[list[int]]) -> int | None:
    """The decoder's length bucket of the longest probe line: the probes in one traced search
    a decoder, not one a bucket (the export check's 8 searches of the toy model, ~4.7 of the
    exporter's ~11 CPU-s, AMD EPYC Zen 3). Padding is masked and the decode length is each
    line's own (``decoding/search.py``), so a probe decodes as in its own bucket."""
    if not isinstance(decoder.searcher, Searcher) or not ids:
        return None
    return bucket_length(max(map(len, ids)), decoder.searcher.config.length_buckets)


def as_hypotheses(outputs: dict) -> list[Hypothesis]:
    """One source's hypotheses from a signature's outputs: [1] (the best) or [1, k] (every
    beam: ``nbest``, and ``serving_default`` of an export with ``return_beams``)."""
    texts, scores = outputs["translations"].numpy(), outputs["scores"].numpy()
    if texts.ndim == 2:
        return rows_to_hypotheses(texts, scores)[0]
    return [Hypothesis(as_text(texts[0]), float(scores[0]))]


def same_hypotheses(got: Sequence[Hypothesis], want: Sequence[Hypothesis], tol: float) -> bool:
    return [h.text for h in got] == [h.text for h in want] and np.allclose(
        [h.score for h in got], [h.score for h in want], rtol=tol, atol=tol
    )


def check_export(
    saved_model_dir: str,
    decoder: LineDecoder,
    lines: Sequence[str] = PROBE_LINES,
    input_ids: Callable[[str], list[int]] | None = None,
) -> object:
    """Raises ``ExportError`` unless both signatures of the SavedModel give the decoder's
    hypotheses for ``lines``; else returns the loaded SavedModel (a caller that checks more
    reuses it: its signatures' first call, the costly one, is done). ``input_ids``: a line's
    ids as the export makes them (``exporter.export_input_ids``), else the decoder's."""
    loaded = tf.saved_model.load(saved_model_dir)
    best_fn, nbest_fn = loaded.signatures["serving_default"], loaded.signatures[NBEST_SIGNATURE]
    encoded = [
        input_ids(line) if input_ids else decoder.encode(normalize_source_line(line), None)
        for line in lines
    ]
    bucket = probe_bucket(decoder, encoded)
    beams_decoder = quiet_decoder(decoder, True, bucket)
    # With return_beams the decoder's best is the beams search's: traced and run once, not twice
    best_decoder = None if decoder.dhp.return_beams else quiet_decoder(decoder, False, bucket)
    tol = 2e-2 if decoder.dhp.precision else 1e-4  # bf16 rounds more than float32
    # serving_default gives every beam with return_beams (a classifier's label stays one)
    return_beams = decoder.dhp.return_beams and not decoder.labels
    for number, (line, ids) in enumerate(zip(lines, encoded, strict=True), 1):
        sources = tf.constant([line])
        got_best = as_hypotheses(best_fn(sources=sources))
        got_beams = as_hypotheses(nbest_fn(sources=sources))
        # The export's columns stop at the search's placeholders, which the decoder writes
        want_beams = hypotheses_found(beams_decoder.decode_lines([line], (), [ids])[0])
        want_best = (
            want_beams
            if best_decoder is None
            else hypotheses_found(best_decoder.decode_lines([line], (), [ids])[0])
        )
        for name, got, want in (
            ("serving_default", got_best, want_best if return_beams else want_best[:1]),
            (NBEST_SIGNATURE, got_beams, want_beams),
        ):
            if not same_hypotheses(got, want, tol):
                raise ExportError(
                    f"check failed: the export's {name} signature gives "
                    f"{[(h.text, round(h.score, 5)) for h in got]} for probe line {number} "
                    f"({line!r}), t2t-decoder {[(h.text, round(h.score, 5)) for h in want]}; "
                    "nothing was exported (please report this)."
                )
    return loaded
