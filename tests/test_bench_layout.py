"""bench/, recipes/ and tools/ stay split by kind (issue #28), read from the files (no import).

Measurements are ``bench/bench_<what>.py``; recipes and experiments live in ``recipes/``, checks and
fixture generators in ``tools/``. No script imports another script: what several share is in
t2t_repro or the one helper module ``bench/report.py``; any other module without a ``__main__``
is a companion of exactly one script. Every results file is named in README.md or docs/, and
every ``python -m`` command there names a module that exists.
"""

import ast
import fnmatch
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT_DIRS = ("bench", "recipes", "tools")
SHARED_HELPER = "bench.report"


def _modules() -> dict[str, Path]:
    found = {}
    for top in SCRIPT_DIRS:
        for path in sorted((REPO / top).rglob("*.py")):
            if "results" not in path.parts and path.name != "__init__.py":
                found[".".join(path.relative_to(REPO).with_suffix("").parts)] = path
    return found


def _is_script(path: Path) -> bool:
    return 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_script_imports_another_and_companions_serve_one_script():
    modules = _modules()
    users: dict[str, list[str]] = {name: [] for name in modules}
    for name, path in modules.items():
        for imported in _imports(path) & set(modules):
            users[imported].append(name)
    for name, path in modules.items():
        if _is_script(path):
            assert not users[name], f"{users[name]} import the script {name}; use bench/report.py"
        elif name != SHARED_HELPER:
            assert len(users[name]) == 1, f"helper {name} is used by {users[name]}, not one script"


def test_measurements_are_named_bench_and_other_kinds_are_elsewhere():
    for name, path in _modules().items():
        if name.startswith("bench.") and _is_script(path):
            assert path.name.startswith("bench_"), f"{path}: a measurement is bench/bench_<what>.py"


def _expand_braces(pattern: str) -> list[str]:
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    return [p for alt in match.group(1).split(",") for p in _expand_braces(head + alt + tail)]


def _docs_text() -> str:
    docs = [REPO / "README.md", REPO / "WORKSPACE.md", *sorted((REPO / "docs").glob("*.md"))]
    return "\n".join(path.read_text(encoding="utf-8") for path in docs)


def test_every_results_file_is_named_in_the_docs():
    text = _docs_text()
    named = [  # by path (bench/results/x.json, globs and {a,b} included) or by file name
        p
        for ref in re.findall(r"[\w./*{},-]+\.(?:json|md|\{[\w,]+\})", text)
        for p in _expand_braces(ref.removeprefix("bench/results/"))
    ]
    results = REPO / "bench" / "results"
    for path in sorted(results.rglob("*")):
        if path.is_file():
            rel = path.relative_to(results).as_posix()
            found = any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(path.name, p) for p in named)
            assert found, f"bench/results/{rel} is named in neither README.md nor docs/"


def test_every_python_m_command_in_the_docs_names_a_module():
    text = _docs_text()
    for module in set(re.findall(r"python -m\s+((?:bench|recipes|tools)\.[\w.]+)", text)):
        path = REPO / (module.replace(".", "/") + ".py")
        assert path.is_file(), f"`python -m {module}` in the docs: no {path.relative_to(REPO)}"
