"""The part of the sandbox that runs beside the code under test.

Everything in this package uses the standard library only: it is executed by
the worker process on the host (local backend) and inside containers whose
image has nothing but ``python3`` (docker backend).  The parent process imports
the same modules for the wire protocol, so both ends always agree.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ast


def compile_plain(source: str | ast.Module, filename: str) -> types.CodeType:
    """Code from outside rewardkit (a solution, a suite's check, definitions or evaluator)
    compiled as plain Python compiles it.  ``compile`` would otherwise pass on the caller's
    ``__future__`` imports, and rewardkit's modules import ``annotations``: an annotation
    naming an undefined name would then load where human-eval, EvalPlus and APPS stop with
    NameError."""
    return compile(source, filename, "exec", dont_inherit=True)


# Where runs see these files: docker mounts them here, and the local backend's filesystem
# view shows them here, apart from the rest of rewardkit (which runs never see).
RUNTIME_MOUNT = "/opt/rewardkit/runtime"


def boot_code(runtime_dir: str, module: str) -> str:
    """Source for ``python -c`` that runs ``runtime.<module>.main()`` from ``runtime_dir``.

    The package is loaded from its own folder under the name ``runtime`` and no
    folder is put on ``sys.path``, so nothing beside it (``sandbox/types.py``,
    say) can shadow a standard-library module in the worker or the child.
    """
    init = f"{runtime_dir}/__init__.py"
    return (
        "import importlib.util as u, sys\n"
        f"s = u.spec_from_file_location('runtime', {init!r}, submodule_search_locations=[{runtime_dir!r}])\n"
        "m = u.module_from_spec(s); sys.modules['runtime'] = m; s.loader.exec_module(m)\n"
        f"from runtime.{module} import main\n"
        "main()\n"
    )
