"""GeoTIFF rasters (rioxarray): shape, CRS, bounds, resolution, nodata and per-band statistics.

Pixel data is read block-row by block-row, so a truncated file still yields its header and the
statistics of the rows that can be read; the unreadable rows are named in the reading.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from loaders.readers.arrays import plain
from loaders.readers.registry import ReaderError, Reading, Sample, SniffOrder, register

if TYPE_CHECKING:
    import xarray as xr

STRIP_ELEMENTS = 4_000_000
"""Upper bound on the pixels (all bands) held in memory at once while computing statistics."""

_DEFAULT_BLOCK_ROWS = 256
_TIFF_SIGNATURES = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")


def looks_like_tiff(sample: Sample) -> bool:
    return sample.head.startswith(_TIFF_SIGNATURES)


@register(
    "geotiff",
    extensions=(".tif", ".tiff", ".geotiff"),
    sniff=looks_like_tiff,
    sniff_order=SniffOrder.SIGNATURE,
)
def read_geotiff(path: Path) -> Reading:
    """Summarise a (Geo)TIFF; plain TIFFs read too, with `crs` None."""
    # Imported on first use: xarray and rioxarray take most of a second to import.
    import rioxarray
    import xarray as xr
    from rasterio.errors import NotGeoreferencedWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotGeoreferencedWarning)
        raster = rioxarray.open_rasterio(path, masked=True)
        if not isinstance(raster, xr.DataArray):
            raise ReaderError(path, "geotiff", "file holds several subdatasets, not one raster")
        with raster:
            summary = _summary(raster)
    return Reading(format="geotiff", text=_render(summary), structure=summary)


def _summary(raster: xr.DataArray) -> dict[str, Any]:
    crs = raster.rio.crs
    bands, unreadable = _band_stats(raster)
    return {
        "band_count": int(raster.sizes["band"]),
        "height": int(raster.sizes["y"]),
        "width": int(raster.sizes["x"]),
        "dtype": str(raster.encoding.get("rasterio_dtype", raster.dtype)),
        "crs": crs.to_string() if crs else None,
        "bounds": [float(value) for value in raster.rio.bounds()],
        "resolution": [float(value) for value in raster.rio.resolution()],
        "nodata": plain(raster.rio.encoded_nodata),
        "attrs": {str(key): plain(value) for key, value in raster.attrs.items()},
        "bands": bands,
        "unreadable_rows": unreadable,
    }


def _band_stats(raster: xr.DataArray) -> tuple[list[dict[str, Any]], list[list[int]]]:
    """Per-band min/max/mean/valid count over the readable rows, and the [start, stop) rows that failed."""
    from rasterio.errors import RasterioIOError

    band_count, height, width = (int(raster.sizes[dim]) for dim in ("band", "y", "x"))
    block_rows = int(raster.encoding.get("preferred_chunks", {}).get("y") or _DEFAULT_BLOCK_ROWS)
    rows = max(1, min(block_rows, STRIP_ELEMENTS // max(1, width * band_count)))
    totals = [_BandTotals() for _ in range(band_count)]
    unreadable: list[list[int]] = []
    for start in range(0, height, rows):
        stop = min(height, start + rows)
        try:
            strip = np.asarray(raster.isel(y=slice(start, stop)).values, dtype="float64")
        except RasterioIOError:
            unreadable.append([start, stop])
            continue
        for band, plane in zip(totals, strip, strict=True):
            band.add(plane)
    return [band.result(index) for index, band in enumerate(totals, start=1)], _merge(unreadable)


class _BandTotals:
    def __init__(self) -> None:
        self.minimum = np.inf
        self.maximum = -np.inf
        self.total = 0.0
        self.count = 0
        self.pixels = 0

    def add(self, plane: np.ndarray) -> None:
        self.pixels += plane.size
        valid = plane[np.isfinite(plane)]
        if valid.size == 0:
            return
        self.minimum = min(self.minimum, float(valid.min()))
        self.maximum = max(self.maximum, float(valid.max()))
        self.total += float(valid.sum())
        self.count += int(valid.size)

    def result(self, band: int) -> dict[str, Any]:
        stats: dict[str, Any] = {"band": band, "valid_count": self.count, "pixels_read": self.pixels}
        if self.count:
            stats.update(min=self.minimum, max=self.maximum, mean=self.total / self.count)
        return stats


def _merge(ranges: list[list[int]]) -> list[list[int]]:
    merged: list[list[int]] = []
    for start, stop in ranges:
        if merged and merged[-1][1] == start:
            merged[-1][1] = stop
        else:
            merged.append([start, stop])
    return merged


def _render(summary: dict[str, Any]) -> str:
    shape = f"{summary['band_count']} band(s), {summary['height']} rows x {summary['width']} columns"
    lines = [
        f"GeoTIFF raster: {shape}, {summary['dtype']}",
        f"CRS: {summary['crs'] or 'none (not georeferenced)'}",
        "Bounds (left, bottom, right, top): " + ", ".join(f"{value:g}" for value in summary["bounds"]),
        "Resolution (x, y): " + ", ".join(f"{value:g}" for value in summary["resolution"]),
        f"Nodata: {summary['nodata']}",
    ]
    for band in summary["bands"]:
        values = (
            f"min {band['min']:g}, max {band['max']:g}, mean {band['mean']:g}"
            if band["valid_count"]
            else "no valid pixels"
        )
        lines.append(
            f"band {band['band']}: {values} ({band['valid_count']} valid of {band['pixels_read']} read)"
        )
    for start, stop in summary["unreadable_rows"]:
        lines.append(
            f"WARNING: rows {start}-{stop - 1} unreadable (truncated or corrupt); stats exclude them"
        )
    return "\n".join(lines)
