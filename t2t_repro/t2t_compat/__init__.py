"""T2T 1.15's usr_dir API on this project: the ``tensor2tensor`` modules a --t2t_usr_dir
imports (``aliases.py`` installs them), with T2T's names and meanings (docs/porting.md)."""
