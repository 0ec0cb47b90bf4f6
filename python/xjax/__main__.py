"""`python -m xjax --cmake-dir`: where the C++ package is (for find_package(xjax), as pybind11's
--cmakedir), and the other paths a C++ build of a program using include/xjax/xjax.h needs.
`python -m xjax run script.py ARGS...` runs a JAX program unedited on xjax (xjax.install_as_jax())."""
import argparse
import os
import runpy
import sys

import xjax
from xjax._src.blas import find_blas_library

_HERE = os.path.dirname(os.path.abspath(xjax.__file__))


def cmake_dir():
    """The directory holding xjaxConfig.cmake: in the installed package, else the edit loop's build tree."""
    installed = os.path.join(_HERE, "lib", "cmake", "xjax")
    if os.path.isfile(os.path.join(installed, "xjaxConfig.cmake")):
        return installed
    marker = os.path.join(_HERE, "_build_cmake_dir")
    if os.path.isfile(marker):
        with open(marker) as f:
            built = f.read().strip()
        if os.path.isfile(os.path.join(built, "xjaxConfig.cmake")):
            return built
    return None


def run_script(argv):
    """Runs argv[0] as __main__ with argv as sys.argv, `import jax` giving xjax."""
    if not argv:
        print("usage: python -m xjax run script.py [ARGS...]", file=sys.stderr)
        return 2
    xjax.install_as_jax()
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        return run_script(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m xjax", description=__doc__.splitlines()[0])
    parser.add_argument("--cmake-dir", "--cmakedir", action="store_true",
                        help="the directory of xjaxConfig.cmake (pass it as xjax_DIR or in CMAKE_PREFIX_PATH)")
    parser.add_argument("--blas-library", action="store_true",
                        help="the BLAS library xjax loads (give it to xjax::Options::blas_library)")
    parser.add_argument("--version", action="store_true")
    args = parser.parse_args(argv)
    if args.cmake_dir:
        d = cmake_dir()
        if d is None:
            print("xjax: no C++ package found (install xjax with pip, or build with -DXJAX_DEV_INPLACE=ON)",
                  file=sys.stderr)
            return 1
        print(d)
    if args.blas_library:
        lib = find_blas_library()
        if lib is None:
            print("xjax: scipy-openblas32 is not installed", file=sys.stderr)
            return 1
        print(lib)
    if args.version:
        print(xjax.__version__)
    if not (args.cmake_dir or args.blas_library or args.version):
        parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
