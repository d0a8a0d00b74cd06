"""Root conftest: puts the repository root on sys.path so tests import t2t_repro, problems, hparams."""
