"""`inspect_image(path)`: format, size and per-channel brightness statistics of a package image."""

from __future__ import annotations

import io

from PIL import Image, ImageStat, UnidentifiedImageError
from pydantic import Field

from evaluator.tools.base import Tool, ToolArguments, ToolError, dump_json, repository_path, resolve_file
from loaders.package import EventPackage


class ImageArguments(ToolArguments):
    path: str = Field(description="Package-relative (data/...) or repository-form path of the image.")


class InspectImage(Tool):
    name = "inspect_image"
    description = (
        "Describe an image of the package: format, colour mode, width, height and the mean and standard "
        "deviation of its R, G, B channels (0-255)."
    )
    Arguments = ImageArguments

    def execute(self, package: EventPackage, arguments: ImageArguments) -> str:
        relative, content = resolve_file(package, arguments.path)
        try:
            image = Image.open(io.BytesIO(content))
            image.load()
            # An RGB image is measured as it is: converting would only copy its pixels.
            rgb = image if image.mode == "RGB" else image.convert("RGB")
        except (UnidentifiedImageError, OSError) as error:
            # The recorded harness named its own absolute path here; we name the package path.
            kind = type(error).__name__
            raise ToolError(
                f"image inspection failed: {kind}: cannot identify image file {arguments.path!r}",
                "this file is not an image; list the package to find .jpg/.png files",
            ) from error
        stat = ImageStat.Stat(rgb)
        return dump_json(
            {
                "path": repository_path(package, relative),
                "format": image.format,
                "mode": image.mode,
                "width": image.width,
                "height": image.height,
                "rgb_mean": [round(value, 2) for value in stat.mean],
                "rgb_stddev": [round(value, 2) for value in stat.stddev],
            }
        )
