"""Real decoded parse F1 on the dev sentences during training (the parsing twin of dev BLEU).

The dev sentences and gold trees are the files datagen writes for parsing problems
(``<problem>.dev.words`` / ``.trees``). The first ``num_examples`` sentences are decoded with
the live model through the decoder's own ``LineDecoder`` (the problem's decode defaults, so
tree-constrained; greedy unless ``decode_overrides`` says otherwise, because beam 21 would
take a good part of a CPU hour at every evaluation) and scored with EVALB's rules (COLLINS.prm),
strictly, as ``t2t-evalb --linearized`` does.
"""

from __future__ import annotations

import os

from t2t_repro.data.text_files import DataError, read_lines
from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
from t2t_repro.parsing.scoring import score_outputs
from t2t_repro.parsing.tree_files import read_trees


class DevF1:
    def __init__(
        self,
        model,
        problem,
        data_dir: str,
        num_examples: int,
        decode_overrides: str = "beam_size=1,batch_size=64",
    ) -> None:
        words_path = problem.gold_file(data_dir, "dev", "words")
        trees_path = problem.gold_file(data_dir, "dev", "trees")
        for path in (words_path, trees_path):
            if not os.path.isfile(path):
                raise DataError(
                    f"dev F1 needs {path}; rerun t2t-datagen --problem={problem.name} "
                    f"--data_dir={data_dir} (or pass --eval_bleu_examples=0)."
                )
        encoders = problem.get_encoders(data_dir)
        dhp = decode_hparams(decode_overrides, getattr(problem, "decode_defaults", None))
        self.decoder = LineDecoder(
            model, encoders["inputs"], encoders["targets"], dhp, log=lambda msg: None
        )
        self.sentences = list(read_lines(words_path))[:num_examples]
        self.gold = read_trees(trees_path)[: len(self.sentences)]

    def __call__(self) -> dict:
        """Strict EVALB figures of the decodes: f1, precision, recall, complete match, tagging
        accuracy, and how many sentences were EVALB errors or needed repairs."""
        outputs = [hyps[0].text for hyps in self.decoder.decode_lines(self.sentences)]
        report, repairs = score_outputs(self.gold, outputs)
        corpus = report.all
        return {
            "f1": corpus.f1,
            "precision": corpus.precision,
            "recall": corpus.recall,
            "complete_match": corpus.complete_match,
            "tagging_accuracy": corpus.tag_accuracy,
            "valid_sentences": corpus.valid,
            "error_sentences": corpus.errors,
            "repaired_outputs": repairs.sentences_repaired,
        }
