"""A tensor2tensor 1.15 usr_dir whose ``generate_data`` downloads its corpus, written only
against T2T's API: a ``TranslateProblem`` whose ``source_data_files`` name a ``.tgz`` (train)
and a ``.tsv`` (dev) by URL, and a ``Text2TextProblem`` reading a file it fetches with
``generator_utils.maybe_download_from_drive`` (Google Drive's confirm step).

The URLs start with ``$TINY_CORPUS_URL``, a loopback server the caller starts
(tests/loopback_http.py). It runs unchanged with the real tensor2tensor
(tools/t2t_reference/make_t2t_download_reference.py makes the reference data with it) and with
this project's tools (tests/test_t2t_usr_dir_download.py).
"""

from . import download_problems  # noqa: F401
