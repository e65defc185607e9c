"""Build the native CPU backend (cuzk._native) from the shared C++/CUDA headers."""

import glob
import importlib.util
import os

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup
from setuptools.command.build_py import build_py

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


class build_py_with_grpc(build_py):
    """Generate the gRPC stubs from cuzk/server/proto/cuzk/v1/proving.proto before copying."""

    def run(self) -> None:
        if importlib.util.find_spec("grpc_tools") is None:
            # Offline kernel-only builds (the GPU machine's image) lack grpcio-tools; the stubs
            # are then generated on first import of cuzk.server.proto where it is installed.
            print("cuzk: grpcio-tools not installed; skipping gRPC stub generation")
            super().run()
            return
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "cuzk/server/proto/_generate.py")
        spec = importlib.util.spec_from_file_location("_cuzk_proto_generate", path)
        gen = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gen)
        gen.generate()
        super().run()


setup(ext_modules=[ext], cmdclass={"build_ext": build_ext, "build_py": build_py_with_grpc})
