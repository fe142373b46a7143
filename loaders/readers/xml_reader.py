"""XML documents: the element tree as nested dicts, rendered as an indented outline of tags and text."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from loaders.readers.registry import Reading, Sample, register

MAX_NODES = 20_000
"""Elements converted into `structure`; larger documents are cut (metadata `truncated`)."""

_ROOT_START = re.compile(r"<(\?xml|!--|!doctype|[a-z_])")


def looks_like_xml(sample: Sample) -> bool:
    lead = sample.lead
    if lead.startswith("<?xml"):
        return True
    return _ROOT_START.match(lead) is not None and ("</" in lead or "/>" in lead)


@register("xml", extensions=(".xml", ".rss", ".atom", ".kml", ".gml"), sniff=looks_like_xml)
def read_xml(path: Path) -> Reading:
    """Parse an XML file (encoding from its declaration); tags and attributes lose their namespaces."""
    # Python's bundled expat (>= 2.4.1) refuses entity-expansion bombs and never fetches external entities.
    root = ET.fromstring(path.read_bytes())
    converter = _TreeConverter(MAX_NODES)
    structure = converter.element(root)
    return Reading(
        format="xml",
        text="\n".join(_outline(structure, depth=0)),
        structure=structure,
        metadata={"root": _local(root.tag), "truncated": converter.truncated},
    )


class _TreeConverter:
    """Turns elements into {tag, attributes, text, children} dicts, converting at most `limit` of them."""

    def __init__(self, limit: int) -> None:
        self.remaining = limit
        self.truncated = False

    def element(self, element: ET.Element) -> dict[str, Any]:
        self.remaining -= 1
        children: list[dict[str, Any]] = []
        for child in element:
            if self.remaining <= 0:
                self.truncated = True
                break
            children.append(self.element(child))
        return {
            "tag": _local(element.tag),
            "attributes": {_local(key): value for key, value in element.attrib.items()},
            "text": (element.text or "").strip(),
            "children": children,
        }


def _outline(node: dict[str, Any], depth: int) -> list[str]:
    """One line per element, indented by depth: `tag [key=value ...]: text`."""
    attributes = " ".join(f"{key}={value}" for key, value in node["attributes"].items())
    line = "  " * depth + node["tag"] + (f" [{attributes}]" if attributes else "")
    lines = [f"{line}: {node['text']}" if node["text"] else line]
    for child in node["children"]:
        lines.extend(_outline(child, depth + 1))
    return lines


def _local(name: str) -> str:
    """`{namespace}local` -> `local`."""
    return name.rsplit("}", 1)[-1]
