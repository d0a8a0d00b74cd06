"""T2T 1.15's text problem kinds and iterators a usr_dir builds on (written only against T2T's
API): a ``TextConcat2ClassProblem`` over sentence pairs read with ``text2class_txt_iterator``
(class names), and a ``ChoppedTextProblem`` over whole files. T2T 1.15.7's datagen of both is
the reference (tools/t2t_reference/make_t2t_text_kinds_reference.py)."""

from . import text_kinds  # noqa: F401
