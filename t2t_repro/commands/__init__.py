"""The command-line tools, one module each (``t2t-trainer`` -> ``commands/trainer.py``).

Each module has ``main(argv) -> int``, which the installed console scripts and the ``bin/``
shims call; it parses flags and calls library functions through ``commands.cli.run`` (the
one error contract). This is the top layer: it is the only place that imports the built-in
``problems`` and ``hparams`` packages (see ``builtins``).
"""
