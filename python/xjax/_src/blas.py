"""Locates the BLAS library that the C++ core loads at import: scipy-openblas32's shared library."""
import importlib.util
import os


def find_blas_library():
    """Returns the path of scipy-openblas32's shared library, or None when it is not installed.

    The package is found without importing it (its import loads the library through ctypes).
    """
    try:
        spec = importlib.util.find_spec("scipy_openblas32")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for package_dir in spec.submodule_search_locations:
        lib_dir = os.path.join(package_dir, "lib")
        try:
            names = sorted(os.listdir(lib_dir))
        except OSError:
            continue
        for name in names:
            if name.startswith(("libscipy_openblas", "scipy_openblas")) and (
                    name.endswith((".so", ".dylib", ".dll")) or ".so." in name):
                return os.path.join(lib_dir, name)
    return None
