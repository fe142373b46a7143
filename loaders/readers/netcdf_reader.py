"""NetCDF datasets (xarray; h5netcdf for NetCDF-4/HDF5, scipy for classic CDF): dims, variables, attrs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from loaders.readers.arrays import numeric_stats, plain
from loaders.readers.registry import Reading, Sample, SniffOrder, register

if TYPE_CHECKING:
    import xarray as xr

MAX_STATS_ELEMENTS = 20_000_000
"""Variables larger than this get no statistics: they would be loaded into memory whole."""

_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_CDF_SIGNATURES = (b"CDF\x01", b"CDF\x02", b"CDF\x05")


def looks_like_netcdf(sample: Sample) -> bool:
    return sample.head.startswith((_HDF5_SIGNATURE, *_CDF_SIGNATURES))


@register(
    "netcdf",
    extensions=(".nc", ".nc4", ".netcdf", ".cdf"),
    sniff=looks_like_netcdf,
    sniff_order=SniffOrder.SIGNATURE,
)
def read_netcdf(path: Path) -> Reading:
    """Summarise a NetCDF file: dims, global attrs and, per variable, dims/shape/dtype/attrs/stats."""
    import xarray as xr  # imported on first use: it takes most of a second to import

    with xr.open_dataset(path, engine=_engine(path)) as dataset:
        summary = {
            "dims": {str(name): int(size) for name, size in dataset.sizes.items()},
            "coords": [str(name) for name in dataset.coords],
            "attrs": {str(key): plain(value) for key, value in dataset.attrs.items()},
            "variables": {str(name): _variable(variable) for name, variable in dataset.variables.items()},
        }
        overview = repr(dataset)
    return Reading(format="netcdf", text=_render(overview, summary["variables"]), structure=summary)


def _engine(path: Path) -> str:
    with path.open("rb") as handle:
        head = handle.read(4)
    return "scipy" if head.startswith(_CDF_SIGNATURES) else "h5netcdf"


def _variable(variable: xr.Variable) -> dict[str, Any]:
    described: dict[str, Any] = {
        "dims": [str(dim) for dim in variable.dims],
        "shape": [int(size) for size in variable.shape],
        "dtype": str(variable.dtype),
        "attrs": {str(key): plain(value) for key, value in variable.attrs.items()},
    }
    if variable.size <= MAX_STATS_ELEMENTS:
        described["stats"] = numeric_stats(variable.values)
    return described


def _render(overview: str, variables: dict[str, dict[str, Any]]) -> str:
    lines = [overview, "", "Statistics:"]
    for name, variable in variables.items():
        stats = variable.get("stats")
        if stats and "min" in stats:
            mean = f", mean {stats['mean']:g}" if "mean" in stats else ""
            lines.append(
                f"  {name}: min {stats['min']}, max {stats['max']}{mean}, {stats['valid_count']} valid"
            )
    return "\n".join(lines)
