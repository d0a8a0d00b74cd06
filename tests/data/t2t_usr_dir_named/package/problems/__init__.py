"""A T2T usr_dir package named ``problems``: it imports its own module by the package's name."""

from problems import cr_problems  # noqa: F401
