"""The package layout pyproject.toml cannot state: the checkout's top-level ``problems/`` and
``hparams/`` folders are installed as ``t2t_repro.builtin.problems`` and
``t2t_repro.builtin.hparams`` (t2t_repro/builtin/__init__.py), never as top-level packages,
so they never shadow a --t2t_usr_dir of those names. Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

BUILTIN = {"t2t_repro.builtin.problems": "problems", "t2t_repro.builtin.hparams": "hparams"}

setup(packages=[*find_packages(include=["t2t_repro*"]), *BUILTIN], package_dir=BUILTIN)
