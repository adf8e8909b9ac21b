# Type stub of the Rust extension module built from native/ (keep in step with native/src/lib.rs).
import numpy as np
import numpy.typing as npt

def layer_forwarding(
    nr: int,
    edge_u: npt.NDArray[np.int32],
    edge_v: npt.NDArray[np.int32],
    seed: int,
    rank: npt.NDArray[np.int32] | None = None,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int32]]: ...
