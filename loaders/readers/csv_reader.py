"""CSV/TSV tables: header, rows and row count; the source text is the rendering."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from loaders.readers.encoding import decode_text
from loaders.readers.registry import Reading, register

_DIALECT_SAMPLE_CHARS = 16 * 1024
_DELIMITERS = ",;\t|"


@register("csv", extensions=(".csv", ".tsv"))
def read_csv(path: Path) -> Reading:
    """Parse a delimited table; the first row is the header, `structure` = {columns, rows}."""
    decoded = decode_text(path.read_bytes())
    dialect = _dialect(path, decoded.text)
    rows = list(csv.reader(io.StringIO(decoded.text, newline=""), dialect))
    header, body = (rows[0], rows[1:]) if rows else ([], [])
    return Reading(
        format="csv",
        text=decoded.text,
        structure={"columns": header, "rows": body},
        metadata={
            **decoded.metadata(),
            "delimiter": dialect.delimiter,
            "column_count": len(header),
            "row_count": len(body),
        },
    )


def _dialect(path: Path, text: str) -> type[csv.Dialect] | csv.Dialect:
    if path.suffix.lower() == ".tsv":
        return csv.excel_tab
    try:
        return csv.Sniffer().sniff(text[:_DIALECT_SAMPLE_CHARS], delimiters=_DELIMITERS)
    except csv.Error:  # the sniffer gives up on one-column or irregular tables
        return csv.excel
