"""Real decoded BLEU of a fixed dev subset during training (not a teacher-forced proxy).

The first ``num_examples`` dev examples (from the dev shards, so no raw data is needed; the
references are their target ids decoded back to text, which the invertible subword encoder
makes exact) are beam-searched with the live model through the decoder's own ``LineDecoder``
and scored with sacreBLEU (13a, cased). One decoder is kept for the whole run, so each input
length is traced once.
"""

from __future__ import annotations

from t2t_repro.data.input_pipeline import EVAL, make_dataset
from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
from t2t_repro.metrics.bleu import sacrebleu_score
from t2t_repro.text_encoding.reserved_tokens import EOS_ID


class DevBleu:
    def __init__(
        self,
        model,
        problem,
        data_dir: str,
        hparams,
        num_examples: int,
        decode_overrides: str = "extra_length=50,batch_size=32",
    ) -> None:
        encoders = problem.get_encoders(data_dir)
        dhp = decode_hparams(decode_overrides, getattr(problem, "decode_defaults", None))
        self.decoder = LineDecoder(
            model, encoders["inputs"], encoders["targets"], dhp, log=lambda msg: None
        )
        pattern = problem.filepattern(data_dir, "dev")
        examples = make_dataset(pattern, EVAL, hparams).unbatch().take(num_examples)
        self.inputs, self.references = [], []
        for example in examples:
            inputs = [int(i) for i in example["inputs"].numpy() if i]
            targets = [int(i) for i in example["targets"].numpy() if i and i != EOS_ID]
            self.inputs.append(
                inputs[: self.decoder.max_input_length - 1] + [EOS_ID]
                if len(inputs) > self.decoder.max_input_length
                else inputs
            )
            self.references.append(encoders["targets"].decode(targets))

    def __call__(self) -> float:
        """sacreBLEU (13a, cased) of the subset's beam-search decodes."""
        hypotheses = []
        batch = max(1, self.decoder.dhp.batch_size)
        for start in range(0, len(self.inputs), batch):
            hyps = self.decoder.decode_ids(self.inputs[start : start + batch])
            hypotheses.extend(h[0].text for h in hyps)
        return sacrebleu_score(self.references, hypotheses)
