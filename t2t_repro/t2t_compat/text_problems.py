"""``tensor2tensor.data_generators.text_problems`` for a T2T usr_dir: T2T 1.15's names of that
module (``text_problems.py``), each from the module that holds it here:

- ``Text2TextProblem`` and ``VocabType``: ``text2text_problem.py``;
- the text iterators (``txt_line_iterator``, ``text2text_txt_iterator``,
  ``text2class_txt_iterator``...): ``text_iterators.py``;
- T2T's registered ``Text2textTmpdir``, ``Text2textTmpdirTokens`` and ``Text2TextRemotedir``:
  ``tmpdir_problems.py``;
- the problem kinds on ``Text2TextProblem`` (``Text2SelfProblem``, ``Text2ClassProblem``,
  ``TextConcat2ClassProblem``, and the two this project's Transformer cannot train):
  ``text_kinds.py``; ``ChoppedTextProblem``: ``chopped_text_problem.py``.
"""

from __future__ import annotations

from t2t_repro.t2t_compat import refusals
from t2t_repro.t2t_compat.chopped_text_problem import ChoppedTextProblem
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem, VocabType
from t2t_repro.t2t_compat.text_iterators import (
    text2class_txt_iterator,
    text2real_txt_iterator,
    text2self_txt_iterator,
    text2text_distill_iterator,
    text2text_generate_encoded,
    text2text_txt_iterator,
    text2text_txt_iterator_with_index,
    text2text_txt_iterator_with_label,
    text2text_txt_tab_iterator,
    txt_and_label_iterator,
    txt_line_iterator,
)
from t2t_repro.t2t_compat.text_kinds import (
    QuestionAndContext2TextProblem,
    Text2ClassProblem,
    Text2RealProblem,
    Text2SelfProblem,
    TextConcat2ClassProblem,
)
from t2t_repro.t2t_compat.tmpdir_problems import (
    Text2TextRemotedir,
    Text2textTmpdir,
    Text2textTmpdirTokens,
)

__all__ = [
    "ChoppedTextProblem",
    "QuestionAndContext2TextProblem",
    "Text2ClassProblem",
    "Text2RealProblem",
    "Text2SelfProblem",
    "Text2TextProblem",
    "Text2TextRemotedir",
    "Text2textTmpdir",
    "Text2textTmpdirTokens",
    "TextConcat2ClassProblem",
    "VocabType",
    "text2class_txt_iterator",
    "text2real_txt_iterator",
    "text2self_txt_iterator",
    "text2text_distill_iterator",
    "text2text_generate_encoded",
    "text2text_txt_iterator",
    "text2text_txt_iterator_with_index",
    "text2text_txt_iterator_with_label",
    "text2text_txt_tab_iterator",
    "txt_and_label_iterator",
    "txt_line_iterator",
]

# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.text_problems")
