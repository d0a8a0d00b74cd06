"""A run's hparams (T2T's ``tensor2tensor/utils/hparams_lib.py``): built from the registered set,
the problem's sizes, a saved ``hparams.json`` and ``--hparams`` (``build``), and checked before
any work starts (``checks``). The ``HParams`` type is ``t2t_repro.hparam``; the registered sets
are the top-level ``hparams`` package."""
