"""Raster images (Pillow): size, mode, format and per-band min/max/mean."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from loaders.readers.registry import Reading, Sample, SniffOrder, register

_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")


def looks_like_image(sample: Sample) -> bool:
    head = sample.head
    return head.startswith(_SIGNATURES) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")


@register(
    "image",
    extensions=(".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp"),
    sniff=looks_like_image,
    sniff_order=SniffOrder.SIGNATURE,
)
def read_image(path: Path) -> Reading:
    """Decode an image fully (truncated data raises) and summarise it; palettes are expanded first."""
    with Image.open(path) as image:
        image.load()
        summary: dict[str, Any] = {
            "width": image.width,
            "height": image.height,
            "mode": image.mode,
            "image_format": image.format,
            "frames": getattr(image, "n_frames", 1),
            "bands": _band_stats(image),
        }
    return Reading(format="image", text=_render(summary), structure=summary)


def _band_stats(image: Image.Image) -> list[dict[str, Any]]:
    # Palette indices and 1-bit pixels mean nothing numerically; their colours do.
    if image.mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    elif image.mode == "1":
        image = image.convert("L")
    pixels = np.asarray(image)
    planes = pixels.reshape(pixels.shape[0], pixels.shape[1], -1)
    return [
        {
            "band": name,
            "min": float(planes[..., index].min()),
            "max": float(planes[..., index].max()),
            "mean": round(float(planes[..., index].mean()), 4),
        }
        for index, name in enumerate(image.getbands())
    ]


def _render(summary: dict[str, Any]) -> str:
    frames = f", {summary['frames']} frames" if summary["frames"] > 1 else ""
    size = f"{summary['width']} x {summary['height']} px"
    lines = [f"{summary['image_format']} image, {size}, mode {summary['mode']}{frames}"]
    lines += [
        f"band {b['band']}: min {b['min']:g}, max {b['max']:g}, mean {b['mean']:g}" for b in summary["bands"]
    ]
    return "\n".join(lines)
