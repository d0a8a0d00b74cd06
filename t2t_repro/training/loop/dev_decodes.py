"""Real decodes of a fixed dev subset during training, scored by the problem's dev metric.

Task-free: the problem hands over a ``DevMetric`` (``Problem.dev_metric``: the examples, the
decode hparams, the scorer; ``metrics/dev_metric.py``) and its search constraint
(``Problem.search_constraint``); this decodes the examples with the live model through the
decoder's own ``LineDecoder``, so what is scored is what ``t2t-decoder`` would write. One
decoder is kept for the whole run, so each input length is traced once.
"""

from __future__ import annotations

from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams, occurrences
from t2t_repro.text_encoding.reserved_tokens import EOS_ID


class DevDecodes:
    """``dev_decodes() -> {metric name: value}``; ``metric.log_text`` describes them."""

    def __init__(
        self,
        model,
        problem,
        metric,
        data_dir: str,
        decode_overrides: str | None = None,
        random_seed: int = 0,
    ) -> None:
        """``random_seed`` seeds sampling (``--hparams=sampling_method=random``): the same
        samples at every eval, so the metric's changes are the model's."""
        self.metric = metric
        overrides = metric.decode_overrides if decode_overrides is None else decode_overrides
        dhp = decode_hparams(overrides, getattr(problem, "decode_defaults", None))
        encoders = problem.get_encoders(data_dir)
        self.decoder = LineDecoder(
            model,
            encoders["inputs"],
            encoders["targets"],
            dhp,
            log=lambda msg: None,
            constraint=problem.search_constraint(data_dir, dhp),
            random_seed=random_seed,
        )

    def __call__(self) -> dict[str, float]:
        return self.metric.score(self.hypotheses())

    def hypotheses(self) -> list[str]:
        """The best decode of every example, in order."""
        if self.metric.lines is not None:
            return [hyps[0].text for hyps in self.decoder.decode_lines(self.metric.lines)]
        limit = self.decoder.max_input_length
        rows = [r[: limit - 1] + [EOS_ID] if len(r) > limit else r for r in self.metric.input_ids]
        # Repeats are counted over the whole dev set, as the decoder counts a file's lines
        # (sampling draws anew for each repeat, as T2T samples each example on its own).
        counts = occurrences(rows)
        batch = max(1, self.decoder.dhp.batch_size)
        return [
            hyps[0].text
            for start in range(0, len(rows), batch)
            for hyps in self.decoder.decode_ids(
                rows[start : start + batch], occurrences=counts[start : start + batch]
            )
        ]


def make_dev_decodes(
    model,
    problem,
    data_dir: str,
    hparams,
    num_examples: int,
    decode_overrides: str | None = None,
    random_seed: int = 0,
) -> DevDecodes | None:
    """The dev decodes of ``problem``'s dev metric, or None when it has none (or
    ``num_examples`` is 0, or the dev split is empty: one line says so)."""
    if num_examples <= 0:
        return None
    if hparams is not None and hparams.get("prepend_mode", "none") != "none":
        print(  # T2T's decodes of it: partial_targets (runner.check_not_prepended)
            f"no dev decodes: with prepend_mode={hparams.prepend_mode!r} T2T decodes a dev "
            "example after forcing its inputs (their EOS included) and a 0, and stops at "
            "that EOS: empty outputs",
            flush=True,
        )
        return None
    if hparams is not None and hparams.get("multi_label_target", False):
        # A multi-label usr_dir (a Text2TextProblem) lists approx_bleu_score, which the
        # teacher-forced evaluation reports as T2T's; a decoded label is no sentence to score.
        return None
    metric = problem.dev_metric(data_dir, hparams, num_examples)
    if metric is None:
        return None
    if not len(metric):  # every dev shard empty (few pairs dealt over many shards, as T2T)
        print(
            f"no dev decodes: {problem.filepattern(data_dir, 'dev')} holds no examples; "
            "generate the dev split with fewer shards or more data",
            flush=True,
        )
        return None
    return DevDecodes(model, problem, metric, data_dir, decode_overrides, random_seed)
