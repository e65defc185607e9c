"""Generate the gRPC stubs for cuzk/v1/proving.proto with grpc_tools.protoc.

Used by setup.py's build step and, lazily, by `cuzk.server.proto` when the stubs are missing
(an editable checkout). Depends on nothing from cuzk so setup.py can load it by path.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROTO = "cuzk/v1/proving.proto"
STUBS = ("proving_pb2.py", "proving_pb2_grpc.py")


def stubs_current(out_dir: Path = HERE) -> bool:
    """True when the stubs exist and are not older than the .proto (if it is present)."""
    src = HERE / PROTO
    if not all((out_dir / s).exists() for s in STUBS):
        return False
    if not src.exists():  # an installed package ships the stubs without the .proto
        return True
    return all((out_dir / s).stat().st_mtime >= src.stat().st_mtime for s in STUBS)


def generate(out_dir: Path = HERE) -> None:
    """Write proving_pb2.py and proving_pb2_grpc.py into out_dir (atomically per file)."""
    import grpc_tools
    from grpc_tools import protoc

    include = str(Path(grpc_tools.__file__).parent / "_proto")
    with tempfile.TemporaryDirectory() as tmp:
        rc = protoc.main(
            [
                "grpc_tools.protoc",
                f"-I{HERE}",
                f"-I{include}",
                f"--python_out={tmp}",
                f"--grpc_python_out={tmp}",
                str(HERE / PROTO),
            ]
        )
        if rc != 0:
            raise RuntimeError(f"protoc failed ({rc}) on {HERE / PROTO}")
        gen = Path(tmp) / "cuzk" / "v1"
        out_dir.mkdir(parents=True, exist_ok=True)
        for name in STUBS:
            text = (gen / name).read_text()
            # The stubs live flat in this package, so the grpc module imports its sibling
            # relatively instead of as the top-level `cuzk.v1` (which would clash with cuzk).
            text = re.sub(
                r"^from cuzk\.v1 import proving_pb2 as", "from . import proving_pb2 as", text,
                flags=re.M,
            )
            fd, tmp_path = tempfile.mkstemp(dir=out_dir, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.chmod(tmp_path, 0o644)
            os.replace(tmp_path, out_dir / name)


if __name__ == "__main__":
    generate()
