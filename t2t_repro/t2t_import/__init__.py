"""Imports tensor2tensor 1.x training directories (TF1 checkpoints) into this project's format.

``import_t2t_dir(t2t_dir, output_dir)`` reads T2T's newest ``model.ckpt-N``, its
``hparams.json`` and ``flags.txt`` and writes a new output_dir that every tool here reads
(``bin/t2t-import`` is the command). Modules: ``source`` (reading the T2T directory),
``hparams_map`` (T2T hparams -> ours), ``variables`` (T2T variable names -> our weights),
``writer`` (the checkpoint and files, written atomically).
"""

from t2t_repro.t2t_import.errors import T2TImportError
from t2t_repro.t2t_import.writer import ImportResult, import_t2t_dir

__all__ = ["ImportResult", "T2TImportError", "import_t2t_dir"]
