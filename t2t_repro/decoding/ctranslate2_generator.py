"""``t2t-decoder --engine=ctranslate2`` for a language model: ``ctranslate2.Generator`` continues
each prompt, with ``Searcher``'s interface for a model without inputs (``LineDecoder`` in its
prompt mode, ``decoding/prompt.py``).

The export (``serving/ctranslate2_export.py``, ``build_decoder_only_spec``) starts the decoder
from PAD's zero row, T2T's shifted-in first position; the generator is given that start token
and the prompt, forwarded at once (``include_prompt_in_result=False``), so only the
continuation is scored, as T2T scores it (its forced steps add 0). Prompts of one length are
generated together: CTranslate2 forwards only a batch's shortest prompt at once and decodes the
rest of the longer ones. As for translation, CTranslate2's length penalty divides by
``len ** alpha`` (T2T's by ``((5 + len) / 6) ** alpha``, ``len`` counting the prompt), so beams may
rank otherwise; greedy search ranks alike.
"""

from __future__ import annotations

import numpy as np

from t2t_repro.decoding.ctranslate2_search import (
    MISSING_SCORE,
    EngineSearcher,
    load_engine,
    t2t_beams,
)

START = "0"  # the export's start token: PAD's zero row


class CTranslate2PromptSearcher(EngineSearcher):
    """``searcher(inputs [B, L], prompts [B, L], lengths [B]) -> (ids [B, beams, 1 + L + extra],
    scores [B, beams])`` (numpy): column 0 the start id, then each row's prompt and its
    continuation, as the TensorFlow searches return them."""

    continues_prompts = True  # LineDecoder: a language model's prompts

    def __init__(self, model_dir: str, *args, intra_threads: int = 0, **kwargs) -> None:
        super().__init__(model_dir, *args, has_input=False, **kwargs)
        self.generator = load_engine("Generator", model_dir, intra_threads)

    def __call__(self, inputs, prompts, lengths, occurrences=None):
        """``occurrences``: ``Searcher``'s; unused, as this engine does not sample."""
        prompts, lengths = np.asarray(prompts), np.asarray(lengths)
        longest = np.asarray(inputs).shape[1]
        width = 1 + longest + self.extra_length
        ids = np.zeros([len(lengths), self.num_hypotheses, width], np.int64)
        scores = np.full([len(lengths), self.num_hypotheses], MISSING_SCORE, np.float32)
        for length in sorted(set(lengths.tolist())):
            rows = [r for r in range(len(lengths)) if lengths[r] == length]
            starts = [[START, *(str(int(t)) for t in prompts[r, :length])] for r in rows]
            results = self.generator.generate_batch(
                starts,
                beam_size=self.beam_size,
                num_hypotheses=self.beam_size,  # to prefer finished ones, as T2T (t2t_beams)
                length_penalty=self.alpha,
                max_length=longest + self.extra_length - length,  # the TF searches' limit
                include_prompt_in_result=False,
                return_scores=True,
                return_end_token=True,
            )
            for row, result in zip(rows, results, strict=True):
                kept = t2t_beams(result.sequences, result.scores)[: self.num_hypotheses]
                for beam, (tokens, score) in enumerate(kept):
                    ids[row, beam, 1 : 1 + length] = prompts[row, :length]
                    ids[row, beam, 1 + length : 1 + length + len(tokens)] = tokens
                    scores[row, beam] = score
        return ids, scores
