"""Makes ``import tensor2tensor...`` in a --t2t_usr_dir resolve to this package, so a usr_dir
written for T2T 1.15 registers into this project's registry unchanged.

``install()`` runs before the usr_dir is imported and only when ``tensor2tensor`` is not
importable (a real installation is never shadowed). It puts the modules of ``ALIASES`` in
``sys.modules`` under T2T's names; every other library module of T2T 1.15's wheel imports as
a ``t2t_modules.T2TModule``, whose names fail in one line when used (T2T's problem classes
this project implements are its own); a module of T2T's ``bin``, ``rl``, ``envs`` or
``insights``, or one T2T never had, fails in one line at import (docs/porting.md).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

from t2t_repro.t2t_compat import t2t_modules
from t2t_repro.t2t_compat.refusals import T2TApiError
from t2t_repro.t2t_compat.t2t_modules import ROOT

__all__ = ["ALIASES", "T2TApiError", "install", "installed"]

# T2T's module -> this project's module that provides its names.
ALIASES = {
    "tensor2tensor.utils.registry": "t2t_repro.t2t_compat.registry",
    "tensor2tensor.utils.hparam": "t2t_repro.t2t_compat.hparam",
    "tensor2tensor.utils.metrics": "t2t_repro.t2t_compat.metrics",
    "tensor2tensor.utils.t2t_model": "t2t_repro.t2t_compat.t2t_model",
    "tensor2tensor.data_generators.problem": "t2t_repro.t2t_compat.problem",
    "tensor2tensor.data_generators.text_problems": "t2t_repro.t2t_compat.text_problems",
    "tensor2tensor.data_generators.translate": "t2t_repro.t2t_compat.translate",
    "tensor2tensor.data_generators.cleaner_en_xx": "t2t_repro.t2t_compat.cleaner_en_xx",
    "tensor2tensor.data_generators.text_encoder": "t2t_repro.t2t_compat.text_encoder",
    "tensor2tensor.data_generators.generator_utils": "t2t_repro.t2t_compat.generator_utils",
    "tensor2tensor.data_generators.tokenizer": "t2t_repro.t2t_compat.tokenizer",
    "tensor2tensor.layers.common_hparams": "t2t_repro.t2t_compat.common_hparams",
    "tensor2tensor.layers.modalities": "t2t_repro.t2t_compat.modalities",
    "tensor2tensor.models.transformer": "t2t_repro.t2t_compat.transformer",
    "tensor2tensor.utils.mlperf_log": "t2t_repro.t2t_compat.mlperf_log",
    "tensor2tensor.utils.mlperf_tags": "t2t_repro.t2t_compat.mlperf_tags",
    "tensor2tensor.utils.bleu_hook": "t2t_repro.t2t_compat.bleu_hook",
    # T2T's language-model problems (their classes, for a usr_dir that subclasses them).
    "tensor2tensor.data_generators.ptb": "t2t_repro.t2t_compat.lm_problems",
    "tensor2tensor.data_generators.lm1b": "t2t_repro.t2t_compat.lm_problems",
    "tensor2tensor.data_generators.wikitext103": "t2t_repro.t2t_compat.lm_problems",
    "tensor2tensor.data_generators.wsj_parsing": "t2t_repro.t2t_compat.wsj_parsing",
    "tensor2tensor.data_generators.algorithmic": "t2t_repro.t2t_compat.algorithmic",
    "tensor2tensor.data_generators.cipher": "t2t_repro.t2t_compat.cipher",
    "tensor2tensor.data_generators.lambada": "t2t_repro.t2t_compat.lambada_problems",
    "tensor2tensor.data_generators.enwik8": "t2t_repro.t2t_compat.enwik8_problems",
    "tensor2tensor.data_generators.wiki_lm": "t2t_repro.t2t_compat.wiki_lm",
    "tensor2tensor.data_generators.wiki": "t2t_repro.t2t_compat.wiki_dump_lm",
    "tensor2tensor.data_generators.dialog_abstract": "t2t_repro.t2t_compat.dialog_problems",
    "tensor2tensor.data_generators.dialog_cornell": "t2t_repro.t2t_compat.dialog_corpora",
    "tensor2tensor.data_generators.dialog_dailydialog": "t2t_repro.t2t_compat.dialog_corpora",
    "tensor2tensor.data_generators.dialog_opensubtitles": "t2t_repro.t2t_compat.dialog_corpora",
    "tensor2tensor.data_generators.dialog_personachat": "t2t_repro.t2t_compat.dialog_corpora",
    # T2T's data_generators modules provided whole by a module of the same name here
    **{
        f"tensor2tensor.data_generators.{name}": f"t2t_repro.t2t_compat.{name}"
        for name in (
            "transduction_problems pointer_generator_word subject_verb_agreement "
            "style_transfer paraphrase_ms_coco conll_ner ice_parsing algorithmic_math_deepmind "
            "program_search function_docstring desc2code translate_enzh "
            "algorithmic_math_two_variables"
        ).split()
    },
}


class _T2TModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """T2T's other library modules (``t2t_modules.LIBRARY``) as ``T2TModule`` objects; a
    module of a refused package (``bin``, ``rl``...) or a name T2T 1.15 never had: one line."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != ROOT and not fullname.startswith(ROOT + "."):
            return None
        if fullname in t2t_modules.LIBRARY:
            return importlib.util.spec_from_loader(
                fullname, self, is_package=fullname in t2t_modules.PACKAGES
            )
        # No ``name=``: ``from tensor2tensor.x import y`` would turn an error that names
        # the missing module into a vaguer "cannot import name".
        raise ModuleNotFoundError(
            t2t_modules.refused_import(fullname)
            or f"{fullname} is not a module of tensor2tensor 1.15 (docs/porting.md lists "
            "what this project's tensor2tensor API provides)"
        )

    def create_module(self, spec):
        return t2t_modules.T2TModule(spec.name, f"t2t_repro's stand-in for {spec.name}")

    def exec_module(self, module):
        pass


_FINDER = _T2TModuleFinder()


def installed() -> bool:
    return getattr(sys.modules.get(ROOT), "__t2t_repro_alias__", False)


def _register_t2t_problems() -> None:
    """T2T's own registered problems (``Text2textTmpdir``...), registered again when a test
    restored the registry since their module was imported (registering is idempotent)."""
    from t2t_repro import registry
    from t2t_repro.t2t_compat import (
        algorithmic,
        algorithmic_math_deepmind,
        algorithmic_math_two_variables,
        cipher,
        conll_ner,
        desc2code,
        dialog_corpora,
        enwik8_problems,
        function_docstring,
        glue_problems,
        ice_parsing,
        lambada_problems,
        packed_problems,
        paraphrase_ms_coco,
        pointer_generator_word,
        program_search,
        ptb_parsing,
        sentiment_problems,
        squad_problems,
        style_transfer,
        subject_verb_agreement,
        summarization_problems,
        tmpdir_problems,
        transduction_problems,
        translate_enzh,
        translate_problems,
        translate_wmt_variants,
        wiki_dump_lm,
        wiki_lm,
        wsj_parsing,
    )

    for cls in (
        *algorithmic.T2T_REGISTERED_PROBLEMS,
        *cipher.T2T_REGISTERED_PROBLEMS,
        *lambada_problems.T2T_REGISTERED_PROBLEMS,
        *enwik8_problems.T2T_REGISTERED_PROBLEMS,
        *summarization_problems.T2T_REGISTERED_PROBLEMS,
        *squad_problems.T2T_REGISTERED_PROBLEMS,
        *dialog_corpora.T2T_REGISTERED_PROBLEMS,
        *translate_wmt_variants.T2T_REGISTERED_PROBLEMS,
        *ice_parsing.T2T_REGISTERED_PROBLEMS,
        *ptb_parsing.T2T_REGISTERED_PROBLEMS,
        *algorithmic_math_deepmind.T2T_REGISTERED_PROBLEMS,
        *algorithmic_math_two_variables.T2T_REGISTERED_PROBLEMS,
        *program_search.T2T_REGISTERED_PROBLEMS,
        *function_docstring.T2T_REGISTERED_PROBLEMS,
        *desc2code.T2T_REGISTERED_PROBLEMS,
        *wiki_lm.T2T_REGISTERED_PROBLEMS,
        *transduction_problems.T2T_REGISTERED_PROBLEMS,
        *pointer_generator_word.T2T_REGISTERED_PROBLEMS,
        *subject_verb_agreement.T2T_REGISTERED_PROBLEMS,
        *style_transfer.T2T_REGISTERED_PROBLEMS,
        *paraphrase_ms_coco.T2T_REGISTERED_PROBLEMS,
        *conll_ner.T2T_REGISTERED_PROBLEMS,
        *sentiment_problems.T2T_REGISTERED_PROBLEMS,
        *glue_problems.T2T_REGISTERED_PROBLEMS,
        *tmpdir_problems.T2T_REGISTERED_PROBLEMS,
        *translate_problems.T2T_REGISTERED_PROBLEMS,
        *packed_problems.T2T_REGISTERED_PROBLEMS,
        *translate_enzh.T2T_REGISTERED_PROBLEMS,
        *wiki_dump_lm.T2T_REGISTERED_PROBLEMS,
        wsj_parsing.WsjParsing,
    ):
        registry.register_problem(cls.problem_name)(cls)


def install() -> bool:
    """Install the aliases unless a real tensor2tensor is importable; True when installed."""
    if installed():
        _register_t2t_problems()
        return True
    if ROOT in sys.modules or importlib.util.find_spec(ROOT) is not None:
        return False
    modules = {alias: importlib.import_module(target) for alias, target in ALIASES.items()}
    sys.meta_path.insert(0, _FINDER)
    importlib.import_module(ROOT).__t2t_repro_alias__ = True
    for alias, module in modules.items():
        package, _, leaf = alias.rpartition(".")
        sys.modules[alias] = module
        setattr(importlib.import_module(package), leaf, module)
        _read_t2t_imports(alias, module)
    return True


def _read_t2t_imports(alias: str, module) -> None:
    """A provided module's attribute named like a T2T module is that module, as T2T's modules
    import one another (``t2t_modules.imported_module``); its other names as before."""
    own = getattr(module, "__getattr__", None)
    if getattr(own, "reads_t2t_imports", False):  # one module serves several T2T names
        return

    # T2T's classes of the module (of any T2T module it serves) implemented in another here
    elsewhere = {
        name: where
        for t2t_name, target in ALIASES.items()
        if target == module.__name__
        for name, where in t2t_modules.IMPLEMENTED.get(t2t_name, {}).items()
    }

    def __getattr__(name: str) -> object:
        if name in elsewhere:
            return getattr(importlib.import_module(elsewhere[name]), name)
        if own is not None:
            try:
                return own(name)  # T2T's names refused in one line, or unknown
            except AttributeError:
                pass
        found = t2t_modules.imported_module(alias, name)
        if found is None:
            raise AttributeError(f"module {alias!r} has no attribute {name!r}")
        return found

    __getattr__.reads_t2t_imports = True
    module.__getattr__ = __getattr__
