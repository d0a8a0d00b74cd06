from .toxic_problem import ToxicLines  # noqa: F401
