"""Build the native CPU backend (cuzk._native) from the shared C++/CUDA headers."""

import glob
import os

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

# The build host is the machine that runs the prover, so tune for it unless told otherwise.
arch = os.environ.get("CUZK_NATIVE_ARCH", "native")
extra = ["-O3", "-fopenmp", "-fno-strict-aliasing"]
if arch:
    extra.append(f"-march={arch}")

ext = Pybind11Extension(
    "cuzk._native",
    sorted(glob.glob("cuzk/native/src/*.cpp")),
    include_dirs=["cuzk/native/include"],
    extra_compile_args=extra,
    extra_link_args=["-fopenmp"],
    cxx_std=17,
    depends=sorted(glob.glob("cuzk/native/include/cuzk/*")),
)

setup(ext_modules=[ext], cmdclass={"build_ext": build_ext})
