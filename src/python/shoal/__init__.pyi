# SPDX-License-Identifier: MIT
# Type hints of the shoal package (the C extension shoal._shoal and shoal.sweep).
from os import PathLike
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str
header_version: str

StrPath = Union[str, "PathLike[str]"]
State = npt.ArrayLike  # (N, 6) float32 (float64 is rounded to float32)
Vec3 = Sequence[float]
ParamValue = Union[float, int, str, Vec3]

class Error(Exception): ...
class InputError(Error, ValueError): ...
class FileError(Error, OSError): ...
class NoMemoryError(Error, MemoryError): ...
class NonFiniteError(Error, ArithmeticError): ...
class UnsupportedError(Error, RuntimeError): ...

class Stats(Dict[str, Any]):
    """Flock statistics; "polarisation" reads "polarization"."""

class Params(Mapping[str, Any]):
    def __getitem__(self, name: str) -> Union[float, int, Tuple[float, float, float]]: ...
    def __setitem__(self, name: str, value: ParamValue) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def to_dict(self) -> Dict[str, Union[float, int]]: ...
    def info(self) -> Dict[str, Dict[str, Any]]: ...
    def update(self, mapping: Optional[Mapping[str, ParamValue]] = ..., **values: ParamValue) -> None: ...

class Simulation:
    def __init__(
        self,
        model: Optional[str] = ...,
        count: Optional[int] = ...,
        seed: Optional[int] = ...,
        scene: Optional[StrPath] = ...,
        params: Optional[Mapping[str, ParamValue]] = ...,
        threads: int = ...,
        backend: str = ...,
        dt: Optional[float] = ...,
        t0: Optional[float] = ...,
        state: Optional[State] = ...,
        keep_geometry: bool = ...,
        gpu_order: str = ...,
        neighbors: str = ...,
        simd: str = ...,
    ) -> None: ...
    def step(self, n: int = ...) -> None: ...
    def set_state(self, state: State) -> None: ...
    def stats(self, radius: Optional[float] = ..., threads: int = ...) -> Stats: ...
    def checkpoint(self, path: StrPath) -> None: ...
    @classmethod
    def resume(cls, path: StrPath, threads: int = ..., scene: Optional[StrPath] = ...) -> "Simulation": ...
    def close(self) -> None: ...
    def __enter__(self) -> "Simulation": ...
    def __exit__(self, *args: Any) -> None: ...
    @property
    def state(self) -> npt.NDArray[np.float32]: ...
    @property
    def positions(self) -> npt.NDArray[np.float32]: ...
    @property
    def velocities(self) -> npt.NDArray[np.float32]: ...
    @property
    def params(self) -> Params: ...
    @params.setter
    def params(self, values: Mapping[str, ParamValue]) -> None: ...
    @property
    def time(self) -> float: ...
    @property
    def count(self) -> int: ...
    @property
    def model(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def dt(self) -> float: ...
    @property
    def backend(self) -> str: ...
    @property
    def device(self) -> str: ...

class Renderer:
    def __init__(
        self,
        size: Tuple[int, int] = ...,
        fish_length: float = ...,
        shade: str = ...,
        lod: bool = ...,
        threads: int = ...,
        simd: str = ...,
        occlusion: bool = ...,
    ) -> None: ...
    def frame(
        self,
        state: State,
        eye: Optional[Vec3] = ...,
        target: Optional[Vec3] = ...,
        color: Optional[npt.ArrayLike] = ...,
        group: Optional[npt.ArrayLike] = ...,
        fov_deg: float = ...,
    ) -> npt.NDArray[np.uint8]: ...
    def stats(self) -> Dict[str, Any]: ...
    size: Tuple[int, int]

def load(path: StrPath, format: str = ...) -> npt.NDArray[np.float32]: ...
def save(path: StrPath, state: State, format: str = ...) -> None: ...
def stats(state: State, radius: Optional[float] = ..., model: Optional[str] = ..., threads: int = ...) -> Stats: ...
def compare(a: State, b: State, radius: Optional[float] = ..., model: Optional[str] = ..., threads: int = ..., stats: bool = ...) -> Dict[str, Any]: ...
def render(
    state: State,
    size: Tuple[int, int] = ...,
    eye: Optional[Vec3] = ...,
    target: Optional[Vec3] = ...,
    color: Optional[npt.ArrayLike] = ...,
    group: Optional[npt.ArrayLike] = ...,
    fish_length: float = ...,
    fov_deg: float = ...,
    shade: str = ...,
    lod: bool = ...,
    threads: int = ...,
) -> npt.NDArray[np.uint8]: ...
def write_png(path: StrPath, image: npt.ArrayLike) -> None: ...
def gpu_available() -> Tuple[bool, str]: ...
def models() -> List[str]: ...
def scene_path(name: str) -> str: ...
def default_params(model: str) -> Dict[str, Dict[str, Any]]: ...
def sweep(
    model: Optional[str] = ...,
    vary: Optional[Mapping[str, Union[str, Sequence[float]]]] = ...,
    seeds: Union[Tuple[int, int], range, int] = ...,
    steps: int = ...,
    every: Optional[int] = ...,
    count: Optional[int] = ...,
    scene: Optional[StrPath] = ...,
    params: Optional[Mapping[str, ParamValue]] = ...,
    keep_geometry: bool = ...,
    dt: Optional[float] = ...,
    radius: Optional[float] = ...,
    threads: int = ...,
    frame: Optional[bool] = ...,
) -> Any: ...
def verify(
    states: Union[npt.ArrayLike, Sequence[npt.ArrayLike], StrPath],
    model: Optional[str] = ...,
    scene: Optional[StrPath] = ...,
    params: Optional[Mapping[str, ParamValue]] = ...,
    dt: Optional[float] = ...,
    t0: Optional[float] = ...,
    seed: Optional[int] = ...,
    reference: str = ...,
    ids: Optional[npt.ArrayLike] = ...,
    targets: Optional[npt.ArrayLike] = ...,
    worst: int = ...,
    threads: int = ...,
    layout: Optional[str] = ...,
    first: int = ...,
    steps: Optional[int] = ...,
) -> List[Dict[str, Any]]: ...
