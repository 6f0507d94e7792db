# SPDX-License-Identifier: Apache-2.0
"""A script of this folder as a module, for the scripts that share its functions: their names
(bench-cublas.py) are no Python identifiers, so `import` cannot reach them."""
import importlib.util
import os


def load(name):
    """scripts/NAME.py, executed once as a module named after it."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
