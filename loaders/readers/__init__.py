"""Readers that turn any package file into a `Reading` (text + structure + metadata).

One module per format registers its reader with `registry.register`; `read_file` picks one by
explicit format, content signature or extension (see `dispatch`).
"""

# The format modules are imported for their registrations.
from loaders.readers import (  # noqa: F401
    binary_reader,
    csv_reader,
    geotiff_reader,
    html_reader,
    image_reader,
    json_reader,
    netcdf_reader,
    pdf_reader,
    text_reader,
    xml_reader,
    zip_reader,
)
from loaders.readers.dispatch import MANIFEST_FORMAT_READERS, read_file
from loaders.readers.registry import ReaderError, Reading, SniffOrder, reader_names, register
from loaders.readers.sniff import GENERIC_FORMATS, sniff_format

__all__ = [
    "GENERIC_FORMATS",
    "MANIFEST_FORMAT_READERS",
    "ReaderError",
    "Reading",
    "SniffOrder",
    "read_file",
    "reader_names",
    "register",
    "sniff_format",
]
